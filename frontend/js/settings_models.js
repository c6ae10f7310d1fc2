// Settings → Models: the model a new chat uses, and the order in which the pools are tried.

import { put } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton, select } from "./settings_common.js";

export function modelsSection(data, save, guard, refresh) {
  const section = el("section", "models");
  section.append(el("h3", "", t("modelsTitle")));
  section.append(select(t("defaultModel"), "default_model",
    [["", t("firstInOrder")], ...data.pools.map((p) => [p, p])], data.preferences.default_model ?? "",
    (value) => save(value ? { default_model: value } : { clear_default_model: true })));
  const naming = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.name = "auto_title";
  box.checked = data.preferences.auto_title !== false;
  box.addEventListener("change", () => save({ auto_title: box.checked }));
  naming.append(box, " ", t("autoTitle"));
  section.append(naming, el("p", "hint", t("autoTitleHint")));
  if (data.pools.length > 1) {
    const order = el("div", "order");
    order.append(el("h4", "", t("order")));
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
    section.append(order);
  }

  return section;
}
