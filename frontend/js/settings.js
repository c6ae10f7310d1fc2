// The settings dialog: providers and keys (shown masked, never returned by the API), testing a
// provider, the pool order, local servers, default model, permission mode, appearance, language.
// Each panel is a module of its own: settings_providers, _agents, _safety, _rules, _memory, _knowledge, _about, _common.

import { del, download, get, listen, post, put } from "./api.js";
import { el } from "./cards.js";
import { LANGUAGES, t } from "./strings.js";
import { actionButton, saveAs, select } from "./settings_common.js";
import { aboutSection } from "./settings_about.js";
import { agentsSection } from "./settings_agents.js";
import { knowledgeSection } from "./settings_knowledge.js";
import { memorySection } from "./settings_memory.js";
import { addProviderForm, vaultBlock } from "./settings_providers.js";
import { rulesSection } from "./settings_rules.js";
import { safetySection } from "./settings_safety.js";

// A side menu of the dialog's sections: each entry brings its section into view.
function sectionMenu(body) {
  const nav = el("nav", "settings-menu");
  nav.setAttribute("aria-label", t("settings"));
  for (const section of body.querySelectorAll(":scope > section")) {
    const heading = section.querySelector("h3");
    if (!heading) continue;
    const link = el("button", "menu-link", heading.textContent);
    link.type = "button";
    link.addEventListener("click", () => {
      section.scrollIntoView({ block: "start" });
      section.querySelector("input, select, textarea, button")?.focus({ preventScroll: true });
    });
    nav.append(link);
  }
  return nav;
}

export async function openSettings(dialog, { onPreferences, onError, onInfo = onError }, redraw = false) {
  const data = await get("/api/settings");
  const body = el("div", "settings-body");
  const close = actionButton("close", t("close"), () => dialog.close());
  const head = el("header", "settings-head");
  head.append(el("h2", "", t("settings")), close);
  dialog.replaceChildren(head, body);

  // A redraw after an action: never reopens a dialog the person closed meanwhile.
  const refresh = () => (dialog.open ? openSettings(dialog, { onPreferences, onError, onInfo }, true) : undefined);
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
  providers.append(await addProviderForm(guard, refresh));
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

  body.append(await agentsSection(guard, refresh));
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
  body.append(await rulesSection(guard, refresh));
  if (data.about) body.append(aboutSection(data.about, prefs, save, guard, onInfo));
  if (body.parentNode === dialog) dialog.insertBefore(sectionMenu(body), body); // not if a redraw replaced it
  if (!dialog.open && !redraw) dialog.showModal();
}
