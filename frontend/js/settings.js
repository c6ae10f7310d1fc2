// The settings dialog: one section per subject, in the side menu's order — Providers, Models, Agents,
// Skills, Connectors, Knowledge, Memory, Instructions, Learning, Permissions and rules, Appearance, Language, Usage, Schedules, Phone, About — each a module of its own
// (settings_<subject>.js; settings_common.js holds the pieces they share).

import { get, put } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";
import { aboutSection } from "./settings_about.js";
import { agentsSection } from "./settings_agents.js";
import { appearanceSection, languageSection } from "./settings_appearance.js";
import { instructionsSection } from "./settings_instructions.js";
import { knowledgeSection } from "./settings_knowledge.js";
import { connectorsSection } from "./settings_connectors.js";
import { learningSection } from "./settings_learning.js";
import { memorySection } from "./settings_memory.js";
import { modelsSection } from "./settings_models.js";
import { phoneSection } from "./settings_phone.js";
import { schedulesSection } from "./settings_schedules.js";
import { providersSection } from "./settings_providers.js";
import { rulesSection } from "./settings_rules.js";
import { skillsSection } from "./settings_skills.js";
import { usageSection } from "./settings_usage.js";

// A side menu of the dialog's sections: each entry brings its section into view, and the section shown is marked
// (aria-current). A section chosen (from the menu, or a button that opens Settings at it) stays marked until the
// person scrolls: a short one (Language) or one the end of the dialog keeps low (Phone) never reaches the top, and
// judged by where it landed the one above it was marked.
function sectionMenu(dialog, body) {
  const nav = el("nav", "settings-menu");
  nav.setAttribute("aria-label", t("settings"));
  const links = new Map();
  let chosen = null;
  const current = (section) => {
    for (const [s, link] of links) {
      if (s === section) link.setAttribute("aria-current", "true"); else link.removeAttribute("aria-current");
    }
  };
  const go = (section) => {
    section.scrollIntoView({ block: "start" });
    chosen = section;
    current(section);
  };
  for (const section of body.querySelectorAll(":scope > section")) {
    const heading = section.querySelector("h3");
    if (!heading) continue;
    const link = el("button", "menu-link", heading.textContent);
    link.type = "button";
    heading.tabIndex = -1; // the menu takes focus to the section's title, not into its first field
    link.addEventListener("click", () => {
      go(section);
      heading.focus({ preventScroll: true });
    });
    links.set(section, link);
    nav.append(link);
  }
  const inView = () => { // the last section whose title has reached the top of what shows (below the menu if above)
    const head = dialog.querySelector(".settings-head")?.getBoundingClientRect().bottom ?? 0;
    const above = getComputedStyle(nav).flexDirection !== "column";
    const top = (above ? nav.getBoundingClientRect().bottom : head) + 24; // a section brought into view sits 12 below
    let seen = [...links.keys()][0];
    for (const section of links.keys()) if (section.getBoundingClientRect().top <= top) seen = section;
    return seen;
  };
  // The person scrolling, not a section chosen: what shows decides again.
  const scrolled = () => { chosen = null; };
  dialog.addEventListener("wheel", scrolled, { passive: true });
  dialog.addEventListener("touchmove", scrolled, { passive: true });
  dialog.addEventListener("pointerdown", (event) => { if (event.target === dialog || event.target === body) scrolled(); });
  dialog.addEventListener("keydown", (event) => {
    if (SCROLL_KEYS.has(event.key) && !event.target.closest("input, textarea, select")) scrolled();
  });
  // Tab (or a click) into another section's field: that section is where the person is (a chosen one stayed marked).
  dialog.addEventListener("focusin", (event) => {
    const section = event.target.closest?.("section");
    if (section && links.has(section) && section !== chosen) { chosen = section; current(section); }
  });
  // Whichever part scrolls (the dialog, or its body beside the menu): scroll events do not bubble, so caught.
  dialog.addEventListener("scroll", () => current(chosen ?? inView()), { passive: true, capture: true });
  nav.shown = () => chosen ?? inView();
  nav.go = go;
  nav.mark = () => current(chosen ?? inView()); // once shown: a dialog not open yet has no layout to judge
  return nav;
}

const SCROLL_KEYS = new Set(["PageUp", "PageDown", "Home", "End", "ArrowUp", "ArrowDown", " "]);

export async function openSettings(dialog, { onPreferences, onError, onInfo = onError, onOpenChat }, redraw = false) {
  const data = await get("/api/settings");
  const body = el("div", "settings-body");
  const close = actionButton("close", t("close"), () => dialog.close());
  const head = el("header", "settings-head");
  head.append(el("h2", "", t("settings")), close);
  dialog.replaceChildren(head, body);
  // The head stays on top as the dialog scrolls: a section brought into view, and the side menu, start below it
  // (a section's title went under it; the menu covered the dialog's own title). app.css reads --settings-head.
  new ResizeObserver(() => {
    if (head.offsetHeight) dialog.style.setProperty("--settings-head", `${head.offsetHeight}px`);
  }).observe(head); // measured once the dialog shows it (closed, it has no height)

  // A redraw after an action: never reopens a dialog the person closed meanwhile.
  // It stays on the section the person was in (a redraw jumped back to Providers).
  const refresh = async () => {
    if (!dialog.open) return;
    const was = dialog.querySelector(".settings-menu")?.shown?.()?.className;
    await openSettings(dialog, { onPreferences, onError, onInfo, onOpenChat }, true);
    const section = was && dialog.querySelector(`.settings-body > section.${was.split(" ")[0]}`);
    if (section) showSection(dialog, section);
  };
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
        const language = dialog.querySelector("section.language");
        if (language) showSection(dialog, language);
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
    instructionsSection(prefs, save, guard, refresh),
    learningSection(prefs, save, guard, refresh, onInfo, onOpenChat),
    rulesSection(data, prefs, save, guard, refresh),
    appearanceSection(prefs, save),
    languageSection(prefs, save),
    usageSection(),
    schedulesSection(guard, refresh),
    phoneSection(guard, refresh),
  ]));
  if (data.about) body.append(await aboutSection(data.about, prefs, save, guard, onInfo));
  if (body.parentNode !== dialog) return; // a redraw replaced it meanwhile
  const menu = sectionMenu(dialog, body);
  dialog.insertBefore(menu, body);
  if (!dialog.open && !redraw) dialog.showModal();
  menu.mark();
}

// Settings at one section (the menu's choice, the section a redraw was on, or a button elsewhere that opens Settings
// there): brought into view and marked in the menu.
export function showSection(dialog, section) {
  const menu = dialog.querySelector(".settings-menu");
  if (menu?.go) menu.go(section);
  else section.scrollIntoView({ block: "start" });
}
