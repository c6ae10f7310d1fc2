// Small pieces every settings panel uses: a labelled select, a button, saving a download.

import { el } from "./cards.js";
import { t } from "./strings.js";

export function select(label, name, options, value, onChange) {
  const wrap = el("label", "field");
  wrap.append(el("span", "", label));
  const input = el("select");
  input.name = name;
  for (const [v, text] of options) {
    const option = el("option", "", text);
    option.value = v;
    option.selected = v === value;
    input.append(option);
  }
  input.addEventListener("change", () => onChange(input.value));
  wrap.append(input);
  return wrap;
}

// A button that does something here (never submits a form).
export function actionButton(className, label, onClick) {
  const node = el("button", className, label);
  node.type = "button";
  node.addEventListener("click", onClick);
  return node;
}

// Hand text to the browser as a file download.
export function saveAs(content, name, type) {
  const link = el("a");
  link.href = URL.createObjectURL(content instanceof Blob ? content : new Blob([content], { type }));
  link.download = name;
  link.click();
  URL.revokeObjectURL(link.href);
}
