// The settings dialog: one section per subject, in the side menu's order — Providers, Models, Agents,
// Skills, Connectors, Knowledge, Memory, Learning, Permissions and rules, Appearance, Language, Usage, Phone, About — each a module of its own
// (settings_<subject>.js; settings_common.js holds the pieces they share).

import { get, put } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";
import { aboutSection } from "./settings_about.js";
import { agentsSection } from "./settings_agents.js";
import { appearanceSection, languageSection } from "./settings_appearance.js";
import { knowledgeSection } from "./settings_knowledge.js";
import { connectorsSection } from "./settings_connectors.js";
import { learningSection } from "./settings_learning.js";
import { memorySection } from "./settings_memory.js";
import { modelsSection } from "./settings_models.js";
import { phoneSection } from "./settings_phone.js";
import { providersSection } from "./settings_providers.js";
import { rulesSection } from "./settings_rules.js";
import { skillsSection } from "./settings_skills.js";
import { usageSection } from "./settings_usage.js";

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

export async function openSettings(dialog, { onPreferences, onError, onInfo = onError, onOpenChat }, redraw = false) {
  const data = await get("/api/settings");
  const body = el("div", "settings-body");
  const close = actionButton("close", t("close"), () => dialog.close());
  const head = el("header", "settings-head");
  head.append(el("h2", "", t("settings")), close);
  dialog.replaceChildren(head, body);

  // A redraw after an action: never reopens a dialog the person closed meanwhile.
  const refresh = () => (dialog.open ? openSettings(dialog, { onPreferences, onError, onInfo, onOpenChat }, true) : undefined);
  const guard = (action) => async (...args) => {
    try { await action(...args); } catch (error) { onError(error.message); }
  };

  // One change at a time: two quick changes must not race, or the older answer (with the older
  // language or theme in it) could arrive last and be applied over the newer one.
  const prefs = data.preferences;
  let saving = Promise.resolve();
  const save = (change) => {
    saving = saving.then(guard(async () => {
      const saved = await put("/api/settings/preferences", change);
      onPreferences(saved);
      if ("language" in change) { // every string of this dialog too, at once, staying where the person was
        await refresh();
        dialog.querySelector("section.language")?.scrollIntoView({ block: "start" });
      }
    }));
    return saving;
  };
  // Fetched together, drawn in the menu's order.
  body.append(...await Promise.all([
    providersSection(data, guard, refresh),
    modelsSection(data, save, guard, refresh),
    agentsSection(guard, refresh),
    skillsSection(guard, refresh, onInfo),
    connectorsSection(guard, refresh),
    knowledgeSection(data, guard, refresh, onError),
    memorySection(prefs, save, guard, refresh),
    learningSection(prefs, save, guard, refresh, onInfo, onOpenChat),
    rulesSection(data, prefs, save, guard, refresh),
    appearanceSection(prefs, save),
    languageSection(prefs, save),
    usageSection(),
    phoneSection(guard, refresh),
  ]));
  if (data.about) body.append(aboutSection(data.about, prefs, save, guard, onInfo));
  if (body.parentNode === dialog) dialog.insertBefore(sectionMenu(body), body); // not if a redraw replaced it
  if (!dialog.open && !redraw) dialog.showModal();
}
