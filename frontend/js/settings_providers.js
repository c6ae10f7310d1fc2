// Settings → Providers: the providers, where the vault's key is (and its passphrase), local servers,
// adding a provider.

import { del, get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton, select } from "./settings_common.js";

// Where the keys' master key is, said plainly; without an OS keyring, a passphrase for it.
export function vaultBlock(key, guard, refresh) {
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

// Adding a provider: a preset fills in its kind and endpoint; "Fetch models" asks the provider (with the
// key typed here) for its models, to pick from instead of typing names.
export async function addProviderForm(guard, refresh) {
  const presets = await get("/api/providers/presets").catch(() => []);
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
  if (presets.length) {
    form.append(select(t("preset"), "preset", [["", "—"], ...presets.map((p) => [p.id, presetLabel(p)])], "", (id) => {
      const preset = presets.find((p) => p.id === id);
      if (!preset) return;
      if (preset.id !== "custom") name.value = preset.id;
      kind.value = preset.kind;
      baseUrl.value = preset.base_url ?? "";
      key.closest("label").hidden = !preset.needs_key;
      choices.replaceChildren();
    }));
  }
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
  const choices = el("fieldset", "model-choices");
  const fetchModels = actionButton("", t("fetchModels"), guard(async () => {
    choices.replaceChildren(el("legend", "", t("testing")));
    let found;
    try {
      ({ models: found } = await post("/api/providers/models", {
        kind: kind.value, base_url: baseUrl.value.trim() || null, key: key.value || null,
      }));
    } catch (error) { // said here, in the form, not left on "Testing…" with the reason in a toast behind the dialog
      choices.replaceChildren(el("legend", "", t("fetchModels")), el("p", "test-result failed", error.message));
      return;
    }
    choices.replaceChildren(el("legend", "", t("pickModels")));
    const picked = new Set(models.value.split(",").map((m) => m.trim()).filter(Boolean));
    for (const model of found) {
      const option = el("label", "check");
      const box = el("input");
      box.type = "checkbox";
      box.value = model;
      box.checked = picked.has(model);
      box.addEventListener("change", () => {
        if (box.checked) picked.add(model); else picked.delete(model);
        models.value = [...picked].join(", ");
      });
      option.append(box, " ", model);
      choices.append(option);
    }
  }));
  const submit = el("button", "primary", t("add"));
  submit.type = "submit";
  form.append(fetchModels, choices, submit);
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

// Settings → Providers: each provider with its keys (masked), Test and Remove; where the keys' master key
// is; local servers found on this machine; adding a provider.
export async function providersSection(data, guard, refresh) {
  const providers = el("section", "providers");
  providers.append(el("h3", "", t("providers")));
  const fromEnvironment = data.environment_providers ?? [];
  if (!data.providers.length && !fromEnvironment.length) providers.append(el("p", "hint", t("noProviders")));
  // Set by environment variables when Orkas started: they answer, so they are listed (nothing to remove here).
  for (const provider of fromEnvironment) {
    const row = el("div", "provider environment");
    row.dataset.provider = provider.name;
    const where = provider.base_url ? ` · ${provider.base_url}` : "";
    row.append(el("strong", "", provider.name), el("span", "hint", where));
    const how = provider.variable ? t("fromEnvironmentKey", { variable: provider.variable }) : t("fromEnvironment");
    row.append(el("div", "hint", how));
    providers.append(row);
  }
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
  providers.append(await addProviderForm(guard, refresh));

  // Local model servers (Ollama, LM Studio) found on this machine: one click to use one.
  const local = el("div", "local");
  local.append(el("h4", "", t("localServers")));
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
  providers.append(local);

  return providers;
}

// A preset's name in the person's language where it says something of its own ("this computer"); else the server's.
function presetLabel(preset) {
  const key = `preset_${preset.id}`;
  const said = t(key);
  return said === key ? preset.label : said;
}
