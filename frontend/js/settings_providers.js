// Settings → Providers: where the vault's key is (and its passphrase), adding a provider.

import { get, post } from "./api.js";
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
    form.append(select(t("preset"), "preset", [["", "—"], ...presets.map((p) => [p.id, p.label])], "", (id) => {
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
    const { models: found } = await post("/api/providers/models", {
      kind: kind.value, base_url: baseUrl.value.trim() || null, key: key.value || null,
    });
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
