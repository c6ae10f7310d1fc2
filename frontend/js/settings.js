// The settings dialog: providers and keys (shown masked, never returned by the API), testing a
// provider, the pool order, local servers, default model, permission mode, appearance, language.

import { del, download, get, listen, post, put } from "./api.js";
import { el } from "./cards.js";
import { LANGUAGES, t } from "./strings.js";

export async function openSettings(dialog, { onPreferences, onError }, redraw = false) {
  const data = await get("/api/settings");
  const body = el("div", "settings-body");
  const close = actionButton("close", t("close"), () => dialog.close());
  const head = el("header", "settings-head");
  head.append(el("h2", "", t("settings")), close);
  dialog.replaceChildren(head, body);

  // A redraw after an action: never reopens a dialog the person closed meanwhile.
  const refresh = () => (dialog.open ? openSettings(dialog, { onPreferences, onError }, true) : undefined);
  const guard = (action) => async (...args) => {
    try { await action(...args); } catch (error) { onError(error.message); }
  };

  // Providers
  const providers = el("section", "providers");
  providers.append(el("h3", "", t("providers")));
  if (!data.providers.length) providers.append(el("p", "hint", t("noProviders")));
  for (const provider of data.providers) {
    const row = el("div", "provider");
    row.dataset.provider = provider.name;
    const where = provider.base_url ? ` · ${provider.base_url}` : "";
    row.append(el("strong", "", provider.name), el("span", "hint", ` ${provider.kind}${where}`));
    row.append(el("div", "models", provider.models.join(", ")));
    for (const key of provider.keys) row.append(el("code", "key", `${key.credential} ${key.masked ?? "—"}`));
    const result = el("div", "test-result");
    const test = actionButton("", t("test"), guard(async () => {
      result.textContent = t("testing");
      const { results } = await post(`/api/providers/${provider.name}/test`);
      result.textContent = results.map((r) => `${r.credential}: ${r.message}`).join(" · ");
      result.className = `test-result ${results.every((r) => r.ok) ? "ok" : "failed"}`;
    }));
    const remove = actionButton("danger", t("remove"), guard(async () => { await del(`/api/providers/${provider.name}`); refresh(); }));
    row.append(test, remove, result);
    providers.append(row);
  }
  if (data.vault_key) providers.append(vaultBlock(data.vault_key, guard, refresh));
  providers.append(addProviderForm(guard, refresh));
  body.append(providers);

  // Order of the pools
  if (data.pools.length > 1) {
    const order = el("section", "order");
    order.append(el("h3", "", t("order")));
    const list = el("ol", "pools");
    data.pools.forEach((pool, index) => {
      const item = el("li", "", pool);
      for (const [label, delta] of [[t("up"), -1], [t("down"), 1]]) {
        const move = actionButton("small", label, guard(async () => {
          const next = [...data.pools];
          [next[index], next[index + delta]] = [next[index + delta], next[index]];
          await put("/api/providers/order", { order: next });
          refresh();
        }));
        move.disabled = index + delta < 0 || index + delta >= data.pools.length;
        item.append(move);
      }
      list.append(item);
    });
    order.append(list);
    body.append(order);
  }

  // Local servers
  const local = el("section", "local");
  local.append(el("h3", "", t("localServers")));
  const found = el("div", "found");
  const detect = actionButton("", t("detect"), guard(async () => {
    found.textContent = t("testing");
    const servers = await get("/api/local-servers");
    found.replaceChildren();
    if (!servers.length) found.textContent = t("noneFound");
    for (const server of servers) {
      const row = el("div", "server", `${server.name} · ${server.base_url} · ${server.models.join(", ")}`);
      const use = actionButton("small", t("useServer"), guard(async () => {
        await post("/api/providers", { name: server.name, kind: "openai-compatible", base_url: server.base_url,
          models: server.models });
        refresh();
      }));
      row.append(use);
      found.append(row);
    }
  }));
  local.append(detect, found);
  body.append(local);

  body.append(await memorySection(guard, refresh));
  body.append(await knowledgeSection(data, guard, refresh, onError));

  // Preferences
  const prefs = data.preferences;
  // One change at a time: two quick changes must not race, or the older answer (with the older
  // language or theme in it) could arrive last and be applied over the newer one.
  let saving = Promise.resolve();
  const save = (change) => {
    saving = saving.then(guard(async () => {
      const saved = await put("/api/settings/preferences", change);
      onPreferences(saved);
    }));
    return saving;
  };
  const choices = el("section", "preferences");
  choices.append(select(t("defaultModel"), "default_model",
    [["", t("firstInOrder")], ...data.pools.map((p) => [p, p])], prefs.default_model ?? "",
    (value) => save(value ? { default_model: value } : { clear_default_model: true })));
  choices.append(select(t("mode"), "mode", ["ask", "auto", "plan"].map((m) => [m, t(`mode_${m}`)]), prefs.mode,
    (value) => save({ mode: value })));
  choices.append(select(t("appearance"), "theme", ["system", "light", "dark"].map((m) => [m, t(`theme_${m}`)]),
    prefs.theme, (value) => save({ theme: value })));
  const names = { auto: t("language_auto"), en: "English", zh: "中文", pt: "Português" };
  choices.append(select(t("language"), "language", LANGUAGES.map((l) => [l, names[l] ?? l]), prefs.language,
    (value) => save({ language: value })));
  body.append(choices, safetySection(data.sandbox ?? { kind: "none" }, prefs, save));
  if (!dialog.open && !redraw) dialog.showModal();
}

// Where the keys' master key is, said plainly; without an OS keyring, a passphrase for it.
function vaultBlock(key, guard, refresh) {
  const block = el("div", `vault ${key.kind}${key.protected ? " protected" : ""}${key.locked ? " locked" : ""}`);
  if (key.kind === "keyring") {
    block.append(el("p", "hint", t("keyStored", { where: key.description })));
    return block;
  }
  const secret = (name, label) => {
    const wrap = el("label", "field");
    const input = el("input");
    input.type = "password";
    input.name = name;
    input.autocomplete = "off";
    wrap.append(el("span", "", label), input);
    return [wrap, input];
  };
  const form = el("form", "vault-form");
  const problem = el("p", "error");
  const submit = (action) => async (event) => {
    event?.preventDefault();
    problem.textContent = "";
    try { await action(); refresh(); } catch (error) { problem.textContent = error.message; }
  };
  if (key.locked) {
    block.append(el("p", "warning", t("vaultLocked", { path: key.path })));
    const [field, input] = secret("passphrase", t("passphrase"));
    const unlock = el("button", "", t("unlock"));
    unlock.type = "submit";
    form.append(field, unlock);
    form.addEventListener("submit", submit(() => post("/api/vault/unlock", { passphrase: input.value })));
  } else if (key.protected) {
    block.append(el("p", "hint", t("vaultProtected", { path: key.path })));
    const [currentField, current] = secret("current", t("passphraseCurrent"));
    const [nextField, next] = secret("passphrase", t("passphraseNew"));
    const change = el("button", "", t("passphraseChange"));
    change.type = "submit";
    const remove = actionButton("danger", t("passphraseRemove"), submit(() =>
      post("/api/vault/passphrase", { passphrase: null, current: current.value })));
    form.append(currentField, nextField, change, remove);
    form.addEventListener("submit", submit(() =>
      post("/api/vault/passphrase", { passphrase: next.value, current: current.value })));
  } else {
    block.append(el("p", "warning", t("vaultFile", { path: key.path })));
    const [field, input] = secret("passphrase", t("passphraseNew"));
    const protect = el("button", "", t("passphraseProtect"));
    protect.type = "submit";
    form.append(field, protect);
    form.addEventListener("submit", submit(() => post("/api/vault/passphrase", { passphrase: input.value })));
  }
  block.append(form, problem);
  return block;
}

// What confines commands on this machine, said plainly — and how long one may run.
function safetySection(sandbox, prefs, save) {
  const section = el("section", "safety");
  section.append(el("h3", "", t("safety")));
  const kind = sandbox.kind === "bubblewrap" ? "bubblewrap" : "none";
  const facts = el("ul", `sandbox ${kind}`);
  for (const key of ["sandbox", "sandboxNetwork", "sandboxHome", "sandboxSockets"]) {
    facts.append(el("li", key, t(`${key}_${kind}`)));
  }
  facts.append(el("li", "processes", sandbox.pids ? t("sandboxProcesses", { count: sandbox.pids })
    : t("sandboxProcessesNone")));
  section.append(facts);
  const wrap = el("label", "field");
  const input = el("input");
  input.type = "number";
  input.name = "command_timeout";
  input.min = "10";
  input.max = "86400";
  input.value = String(prefs.command_timeout ?? 600);
  input.addEventListener("change", () => save({ command_timeout: Number(input.value) }));
  wrap.append(el("span", "", t("commandTimeout")), input);
  section.append(wrap);
  return section;
}

function select(label, name, options, value, onChange) {
  const wrap = el("label", "field");
  wrap.append(el("span", "", label));
  const input = el("select");
  input.name = name;
  for (const [v, text] of options) {
    const option = el("option", "", text);
    option.value = v;
    option.selected = v === value;
    input.append(option);
  }
  input.addEventListener("change", () => onChange(input.value));
  wrap.append(input);
  return wrap;
}

function addProviderForm(guard, refresh) {
  const form = el("form", "add-provider");
  form.append(el("h4", "", t("addProvider")));
  const field = (label, name, type = "text") => {
    const wrap = el("label", "field");
    const input = el("input");
    input.name = name;
    input.type = type;
    input.autocomplete = "off";
    wrap.append(el("span", "", label), input);
    form.append(wrap);
    return input;
  };
  const name = field(t("providerName"), "name");
  const kindWrap = el("label", "field");
  const kind = el("select");
  kind.name = "kind";
  for (const k of ["anthropic", "openai-compatible"]) {
    const option = el("option", "", k);
    option.value = k;
    kind.append(option);
  }
  kindWrap.append(el("span", "", t("providerKind")), kind);
  form.append(kindWrap);
  const key = field(t("apiKey"), "key", "password");
  const baseUrl = field(t("baseUrl"), "base_url");
  const models = field(t("models"), "models");
  const submit = el("button", "primary", t("add"));
  submit.type = "submit";
  form.append(submit);
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    await post("/api/providers", {
      name: name.value.trim(),
      kind: kind.value,
      key: key.value || null,
      base_url: baseUrl.value.trim() || null,
      models: models.value.split(",").map((m) => m.trim()).filter(Boolean),
    });
    key.value = ""; // the key leaves the page as soon as it is stored
    refresh();
  }));
  return form;
}

// What the agent remembers across sessions: the person can read, edit, delete, add and export it.
async function memorySection(guard, refresh) {
  const memory = await get("/api/memory");
  const section = el("section", "memory");
  section.append(el("h3", "", t("memory")), el("p", "hint", t("memoryHint")));
  for (const target of ["profile", "notes"]) {
    const store = memory[target];
    const box = el("div", "memory-store");
    box.dataset.target = target;
    box.append(el("h4", "", `${t(`memory_${target}`)} · ${store.size}/${store.max_chars}`));
    const list = el("ul", "entries");
    for (const entry of store.entries) {
      const item = el("li", "");
      item.append(el("span", "entry", entry));
      const edit = actionButton("small", t("edit"), guard(async () => {
        const text = prompt(t("edit"), entry);
        if (text === null || text.trim() === entry) return;
        await post(`/api/memory/${target}/replace`, { old: entry, text });
        refresh();
      }));
      const remove = actionButton("small danger", t("remove"), guard(async () => {
        await post(`/api/memory/${target}/remove`, { old: entry });
        refresh();
      }));
      item.append(edit, remove);
      list.append(item);
    }
    if (!store.entries.length) list.append(el("li", "hint", t("memoryEmpty")));
    const form = el("form", "memory-add");
    const input = el("input");
    input.name = "text";
    input.placeholder = t("memoryAdd");
    input.setAttribute("aria-label", `${t(`memory_${target}`)}: ${t("memoryAdd")}`);
    const add = el("button", "", t("add"));
    add.type = "submit";
    form.append(input, add);
    form.addEventListener("submit", guard(async (event) => {
      event.preventDefault();
      await post(`/api/memory/${target}`, { text: input.value });
      refresh();
    }));
    box.append(list, form);
    section.append(box);
  }
  const exporter = actionButton("", t("export"), guard(async () => {
    saveAs(await download("/api/memory/export"), "orkas-memory.md", "text/markdown");
  }));
  section.append(exporter);
  return section;
}

// The knowledge base: documents and folders the agent can search, with indexing progress.
let stopListening = null; // the knowledge section's progress socket, closed when the section is redrawn

async function knowledgeSection(data, guard, refresh, onError) {
  const status = await get("/api/kb");
  const section = el("section", "knowledge");
  section.append(el("h3", "", t("knowledge")), el("p", "hint", t("knowledgeHint")));
  const progress = el("div", "kb-progress");
  const bar = el("progress");
  const label = el("span", "hint");
  progress.append(bar, label);
  section.append(progress);
  // Files first (done of total), then passages to embed; pushed by the server as they happen.
  const showFiles = ({ done, total, path: folder }) => {
    progress.hidden = false;
    bar.max = total || 1;
    bar.value = done;
    label.textContent = t("indexingFiles", { done, total: total ?? "…", folder: folder.split(/[\\/]/).pop() });
  };
  const showPassages = ({ pending, embedded }) => {
    progress.hidden = !pending;
    bar.max = pending + embedded || 1;
    bar.value = embedded;
    label.textContent = t("indexing", { pending });
  };
  if (status.indexing) showFiles(status.indexing); else showPassages(status);
  stopListening?.();
  // the server sends its state first on every connection, so a dropped socket misses nothing for long
  stopListening = listen("/api/kb/events", (event) => {
    if (!section.isConnected) return stopListening();
    if (event.type === "kb.status") {
      if (event.indexing) showFiles(event.indexing); else showPassages(event);
    } else if (event.phase === "indexing") showFiles(event);
    else if (event.phase === "embedding" || event.phase === "idle") showPassages(event);
    else if (event.phase === "indexed") {
      const failed = event.report.failed ?? [];
      if (failed.length) onError(t("notIndexed", { files: failed.map(([file, why]) => `${file}: ${why}`).join("; ") }));
      refresh();
    } else if (event.phase === "failed") onError(`${event.path}: ${event.error}`);
  });
  section.append(embeddingsChoice(data, guard, refresh));
  if (status.embedder_problem) section.append(el("p", "warning", t("embedderProblem", { problem: status.embedder_problem })));
  const list = el("ul", "kb-docs");
  for (const doc of status.documents) {
    const item = el("li", "");
    const isNote = doc.id.startsWith("note/");
    item.append(el("span", "entry", isNote ? doc.id.slice(5) : doc.id), el("span", "hint", ` · ${t(doc.chunks === 1 ? "passage" : "passages", { n: doc.chunks })}`));
    const textOf = () => download(`/api/kb/export?doc_id=${encodeURIComponent(doc.id)}`);
    // View shows the indexed text under the entry; a pasted note can be edited there too (files are
    // edited where they live: a watched folder picks the change up).
    const viewer = el("div", "kb-view");
    viewer.hidden = true;
    const view = actionButton("small", t("view"), guard(async () => {
      viewer.hidden = !viewer.hidden;
      if (viewer.hidden) return;
      viewer.replaceChildren(el("pre", "kb-text", await textOf()));
      if (!isNote) return;
      const edit = actionButton("small", t("edit"), guard(async () => {
        const form = el("form", "kb-edit");
        const text = el("textarea");
        text.name = "text";
        text.rows = 6;
        text.value = await textOf();
        const save = el("button", "small", t("save"));
        save.type = "submit";
        form.append(text, save);
        form.addEventListener("submit", guard(async (event) => {
          event.preventDefault();
          await post("/api/kb/text", { title: doc.id.slice(5), text: text.value });
          refresh();
        }));
        viewer.replaceChildren(form);
      }));
      viewer.append(edit);
    }));
    const exporter = actionButton("small", t("exportOne"), guard(async () => {
      const text = await download(`/api/kb/export?doc_id=${encodeURIComponent(doc.id)}`);
      saveAs(text, `${doc.id.split("/").pop() || "document"}.txt`, "text/plain");
    }));
    const remove = actionButton("small danger", t("remove"), guard(async () => {
      await post("/api/kb/remove", { doc_id: doc.id });
      refresh();
    }));
    item.append(view, exporter, remove, viewer);
    list.append(item);
  }
  if (!status.documents.length) list.append(el("li", "hint", t("memoryEmpty")));
  section.append(list);
  if (status.documents.length) {
    const exportAll = actionButton("small", t("exportAll"), guard(async () => {
      saveAs(await download("/api/kb/export/all", "blob"), "orkas-knowledge.zip", "application/zip");
    }));
    section.append(exportAll);
  }

  if (status.watched?.length) {
    // folders kept in sync: each can stop being followed (what was indexed from it stays)
    const watched = el("ul", "kb-watched");
    watched.setAttribute("aria-label", t("kbWatched"));
    for (const folder of status.watched) {
      const item = el("li", "");
      const stop = actionButton("small", t("kbUnwatch"), guard(async () => {
        await post("/api/kb/unwatch", { path: folder });
        refresh();
      }));
      item.append(el("span", "entry", folder), el("span", "hint", ` · ${t("kbWatchedHint")}`), stop);
      watched.append(item);
    }
    section.append(el("h4", "", t("kbWatched")), watched);
  }

  const addPath = el("form", "kb-add-path");
  const path = el("input");
  path.name = "path";
  path.placeholder = t("kbPath");
  path.setAttribute("aria-label", t("kbPath"));
  const watchLabel = el("label", "hint");
  const watch = el("input");
  watch.type = "checkbox";
  watch.name = "watch";
  watch.checked = true;
  watchLabel.append(watch, ` ${t("kbWatch")}`);
  const addButton = el("button", "", t("add"));
  addButton.type = "submit";
  addPath.append(path, watchLabel, addButton);
  addPath.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const added = await post("/api/kb/paths", { path: path.value.trim(), watch: watch.checked });
    if (added.indexing) showFiles({ done: 0, total: null, path: added.indexing }); // a folder: progress follows
    else refresh();
  }));
  const addText = el("form", "kb-add-text");
  const title = el("input");
  title.name = "title";
  title.placeholder = t("kbTitle");
  const text = el("textarea");
  text.name = "text";
  text.rows = 3;
  text.placeholder = t("kbText");
  const save = el("button", "", t("add"));
  save.type = "submit";
  addText.append(title, text, save);
  addText.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    await post("/api/kb/text", { title: title.value.trim(), text: text.value });
    refresh();
  }));
  const search = el("form", "kb-search");
  const query = el("input");
  query.name = "q";
  query.type = "search";
  query.placeholder = t("kbSearch");
  const results = el("ol", "kb-results");
  search.append(query);
  search.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const hits = await get(`/api/kb/search?q=${encodeURIComponent(query.value)}`);
    results.replaceChildren();
    for (const hit of hits) {
      const item = el("li", "");
      item.append(el("code", "citation", hit.citation), el("div", "snippet", hit.text.slice(0, 300)));
      results.append(item);
    }
    if (!hits.length) results.append(el("li", "hint", t("noneFound")));
  }));
  section.append(addPath, addText, search, results);
  return section;
}

// What meaning search runs on: the bundled model, nothing, or an OpenAI-compatible provider's
// embeddings endpoint (Ollama, LM Studio, OpenAI…) with a model name.
function embeddingsChoice(data, guard, refresh) {
  const current = data.preferences.embeddings;
  const [chosen, ...rest] = current.split("/");
  const form = el("form", "kb-embeddings");
  const select = el("select");
  select.name = "embeddings";
  select.setAttribute("aria-label", t("meaningSearch"));
  const options = [["bundled", t("embeddingsBundled")], ["none", t("embeddingsNone")]];
  for (const provider of data.providers.filter((p) => p.kind === "openai-compatible")) {
    options.push([provider.name, t("embeddingsEndpoint", { provider: provider.name })]);
  }
  for (const [value, label] of options) {
    const option = el("option", "", label);
    option.value = value;
    option.selected = value === chosen;
    select.append(option);
  }
  const model = el("input");
  model.name = "embeddings-model";
  model.placeholder = t("embeddingsModel");
  model.setAttribute("aria-label", t("embeddingsModel"));
  model.value = rest.join("/");
  const endpointChosen = () => !["bundled", "none"].includes(select.value);
  model.hidden = !endpointChosen();
  select.addEventListener("change", () => { model.hidden = !endpointChosen(); });
  const apply = el("button", "small", t("apply"));
  apply.type = "submit";
  form.append(el("label", "hint", `${t("meaningSearch")} `), select, model, apply);
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const embeddings = endpointChosen() ? `${select.value}/${model.value.trim()}` : select.value;
    await put("/api/settings/preferences", { embeddings });
    refresh();
  }));
  return form;
}

// A button that does something here (never submits a form).
function actionButton(className, label, onClick) {
  const node = el("button", className, label);
  node.type = "button";
  node.addEventListener("click", onClick);
  return node;
}

// Hand text to the browser as a file download.
function saveAs(content, name, type) {
  const link = el("a");
  link.href = URL.createObjectURL(content instanceof Blob ? content : new Blob([content], { type }));
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}
