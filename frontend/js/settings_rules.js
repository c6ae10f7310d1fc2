// Settings → Permissions and rules: how much the agent may do without asking, what confines its
// commands, and every "always allow" answer, by workspace, each one removable (the next such action
// asks again).

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton, select } from "./settings_common.js";
import { safetyBlock } from "./settings_safety.js";

export async function rulesSection(data, prefs, save, guard, refresh) {
  const rules = await get("/api/rules");
  const section = el("section", "rules");
  section.append(el("h3", "", t("rules")));
  section.append(select(t("mode"), "mode", ["ask", "auto", "plan"].map((m) => [m, t(`mode_${m}`)]), prefs.mode,
    (value) => save({ mode: value })));
  section.append(safetyBlock(data.sandbox ?? { kind: "none" }, prefs, save));
  section.append(el("h4", "", t("alwaysAllowed")), el("p", "hint", t("rulesHint")));
  if (!rules.length) section.append(el("p", "hint", t("noRules")));
  const byWorkspace = new Map();
  for (const rule of rules) byWorkspace.set(rule.workspace, [...(byWorkspace.get(rule.workspace) ?? []), rule]);
  for (const [workspace, list] of byWorkspace) {
    section.append(el("h5", "path", workspace));
    const items = el("ul", "rule-list");
    for (const rule of list) {
      const item = el("li", "rule");
      item.dataset.key = rule.key;
      item.append(el("code", "", rule.key), " ", actionButton("small danger", t("remove"), guard(async () => {
        await post("/api/rules/remove", rule);
        refresh();
      })));
      items.append(item);
    }
    section.append(items);
  }
  return section;
}
