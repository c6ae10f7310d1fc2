// Settings → Permissions and rules: every "always allow" answer, by workspace, each one removable
// (the next such action asks again).

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";

export async function rulesSection(guard, refresh) {
  const rules = await get("/api/rules");
  const section = el("section", "rules");
  section.append(el("h3", "", t("rules")), el("p", "hint", t("rulesHint")));
  if (!rules.length) section.append(el("p", "hint", t("noRules")));
  const byWorkspace = new Map();
  for (const rule of rules) byWorkspace.set(rule.workspace, [...(byWorkspace.get(rule.workspace) ?? []), rule]);
  for (const [workspace, list] of byWorkspace) {
    section.append(el("h4", "path", workspace));
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
