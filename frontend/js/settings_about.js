// Settings → About: the version and its updates, how much goes into the log, and "Save diagnostics".

import { el } from "./cards.js";
import { saveDiagnostics } from "./diagnostics.js";
import { t } from "./strings.js";
import { actionButton, select } from "./settings_common.js";
import { updatesPart } from "./settings_updates.js";

export async function aboutSection(about, prefs, save, guard, onInfo) {
  const section = el("section", "about");
  section.append(el("h3", "", t("about")));
  section.append(el("p", "version", t("version", { version: about.version })));
  section.append(await updatesPart(prefs, save, guard));
  section.append(select(t("logLevel"), "log_level",
    ["debug", "info", "warning", "error"].map((level) => [level, t(`log_${level}`)]), prefs.log_level ?? "info",
    (value) => save({ log_level: value })));
  const where = el("p", "hint", t("logsKept"));
  where.append(" ", el("code", "path", about.logs));
  section.append(where);
  const result = el("div", "diagnostics-result");
  result.setAttribute("role", "status");
  section.append(actionButton("", t("saveDiagnostics"), guard(async () => {
    result.textContent = t("savingDiagnostics");
    const saved = await saveDiagnostics(onInfo);
    result.textContent = t("diagnosticsSaved", { path: saved.path });
  })), result);
  return section;
}
