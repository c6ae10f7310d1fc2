// Settings → Knowledge base: documents, folders kept in sync, meaning search.

import { del, desktop, download, get, listen, post, put } from "./api.js";
import { el } from "./cards.js";
import { folderDropZone } from "./drops.js";
import { t } from "./strings.js";
import { actionButton, saveAs, select } from "./settings_common.js";

let stopListening = null; // the knowledge section's progress socket, closed when the section is redrawn

export async function knowledgeSection(data, guard, refresh, onError) {
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
  // Meaning search's coverage, and the time left from the rate the server measured; then its refinement.
  const showPassages = ({ pending, embedded, refining, eta_seconds: eta }) => {
    progress.hidden = !pending && !refining;
    bar.max = pending + embedded || 1;
    bar.value = pending ? embedded : bar.max;
    const percent = Math.floor((100 * embedded) / (pending + embedded || 1));
    if (pending && eta != null) label.textContent = t("meaningProgress", { percent, minutes: Math.max(1, Math.round(eta / 60)) });
    else if (pending) label.textContent = t("meaningProgressNoEta", { percent });
    else label.textContent = t("meaningRefining", { refining });
  };
  if (status.indexing) showFiles(status.indexing); else showPassages(status);
  stopListening?.();
  // the server sends its state first on every connection, so a dropped socket misses nothing for long
  let shown = false; // the section is drawn with the others: events may come before it is on the page
  stopListening = listen("/api/kb/events", (event) => {
    if (section.isConnected) shown = true;
    else if (shown) return stopListening(); // a redraw replaced it (or the dialog closed)
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
  section.append(embeddingsChoice(data, guard, refresh), rerankChoice(data, guard, refresh));
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

  const addPath = pathForm(section, guard, (folder) => showFiles({ done: 0, total: null, path: folder }), refresh);
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
      item.append(el("code", "citation", hit.citation), snippet(hit.text, hit.marks ?? []));
      results.append(item);
    }
    if (!hits.length) results.append(el("li", "hint", t("noneFound")));
    (results.querySelector("mark") ?? results).scrollIntoView({ block: "nearest" });
  }));
  section.append(addPath, addText, search, results);
  return section;
}

// A passage around its first match, the words the server found (`marks`: [start, end) in code points) in <mark>.
const SNIPPET = 300;
function snippet(text, marks) {
  const chars = [...text]; // code points, as the server counts
  const from = Math.max(0, (marks[0]?.[0] ?? 0) - 60);
  const to = Math.min(chars.length, from + SNIPPET);
  const node = el("div", "snippet");
  let at = from;
  if (from > 0) node.append("…");
  for (const [start, end] of marks) {
    if (end <= at || start >= to) continue;
    node.append(chars.slice(at, Math.max(at, start)).join(""), el("mark", "", chars.slice(Math.max(at, start), Math.min(end, to)).join("")));
    at = Math.min(end, to);
  }
  node.append(chars.slice(at, to).join(""));
  if (to < chars.length) node.append("…");
  return node;
}

// A file or folder to add: typed, picked with the window's native folder picker, or dropped anywhere on the section
// (`zone`). A browser tab can neither pick nor learn a dropped folder's path: there the path is typed.
function pathForm(zone, guard, onIndexing, refresh) {
  const form = el("form", "kb-add-path");
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
  const said = el("p", "hint kb-drop-status", t(desktop() ? "kbDropHint" : "kbDropHintBrowser"));
  said.setAttribute("role", "status");
  const add = async (chosen) => {
    const added = await post("/api/kb/paths", { path: chosen, watch: watch.checked });
    if (added.indexing) onIndexing(added.indexing); // a folder: progress follows
    else refresh();
  };
  form.append(path);
  const bridge = desktop();
  if (bridge?.pick_folder) {
    form.append(actionButton("kb-pick", t("kbPickFolder"), guard(async () => {
      const chosen = await bridge.pick_folder();
      if (chosen) { path.value = chosen; await add(chosen); }
    })));
  }
  form.append(watchLabel, addButton, said);
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    await add(path.value.trim());
  }));
  folderDropZone(zone, {
    onPaths: guard(async (paths) => {
      if (!paths.length) { said.textContent = t("kbDropNoPath"); path.focus(); return; }
      for (const dropped of paths) { path.value = dropped; await add(dropped); }
    }),
    onNames: (names) => {
      said.textContent = t("kbDropNeedsPath", { name: names.join(", ") });
      path.focus();
    },
  });
  return form;
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

// A second stage for search, off by default: a model the person already uses reorders the best 30
// passages of each search (one more model call per search; engine/memory/rerank.py).
function rerankChoice(data, guard, refresh) {
  const current = data.preferences.rerank ?? "off";
  const options = [["off", t("rerankOff")], ["chat", t("rerankChat")], ...data.pools.map((pool) => [pool, pool])];
  if (!options.some(([value]) => value === current)) options.push([current, current]);
  const wrap = el("div", "kb-rerank");
  wrap.append(select(t("rerank"), "rerank", options, current, guard(async (rerank) => {
    await put("/api/settings/preferences", { rerank });
    refresh();
  })), el("p", "hint", t("rerankHint")));
  return wrap;
}
