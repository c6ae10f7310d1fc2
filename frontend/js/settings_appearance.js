// Settings → Appearance and Language: the theme, and the language of every string (applied at once).

import { el } from "./cards.js";
import { LANGUAGES, t } from "./strings.js";
import { select } from "./settings_common.js";

export function appearanceSection(prefs, save) {
  const section = el("section", "appearance");
  section.append(el("h3", "", t("appearance")));
  section.append(select(t("theme"), "theme", ["system", "light", "dark"].map((m) => [m, t(`theme_${m}`)]),
    prefs.theme, (value) => save({ theme: value })));
  return section;
}

// Each language is named in its own words, so a person can find theirs whatever is showing now.
const NAMES = { en: "English", zh: "中文", pt: "Português" };

export function languageSection(prefs, save) {
  const section = el("section", "language");
  section.append(el("h3", "", t("language")));
  section.append(select(t("language"), "language", LANGUAGES.map((l) => [l, NAMES[l] ?? t("language_auto")]),
    prefs.language, (value) => save({ language: value })));
  return section;
}
