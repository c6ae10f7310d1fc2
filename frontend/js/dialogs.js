// In-app dialogs instead of the browser's prompt() and confirm(): they match the app, speak its
// language, work in the desktop window (where browser prompts look foreign or are missing) and stack
// above an open Settings dialog. Each resolves once: the answer, or null / false when dismissed.

import { el } from "./cards.js";
import { t } from "./strings.js";

function open({ title, body, action, danger = false, focusAction = false }, read) {
  return new Promise((resolve) => {
    const dialog = el("dialog", "ask");
    dialog.setAttribute("aria-label", title);
    const form = el("form", "ask-form");
    const cancel = el("button", "", t("cancel"));
    cancel.type = "button";
    const confirm = el("button", danger ? "danger" : "primary", action);
    confirm.type = "submit";
    const buttons = el("div", "ask-buttons");
    buttons.append(cancel, confirm);
    form.append(el("h2", "", title), ...body, buttons);
    dialog.append(form);
    document.body.append(dialog);
    let answer = read ? null : false;
    form.addEventListener("submit", (event) => {
      event.preventDefault(); // never a navigation: the page's policy allows no form actions
      answer = read ? read() : true;
      dialog.close();
    });
    cancel.addEventListener("click", () => dialog.close());
    dialog.addEventListener("close", () => { dialog.remove(); resolve(answer); });
    dialog.showModal();
    const input = focusAction ? null : dialog.querySelector("input, textarea");
    if (input) { input.focus(); input.select(); } else confirm.focus();
  });
}

// A line of text (a title, a name, a folder). Resolves to the trimmed text, or null. `problem`: why the text
// given last time was refused, said above it (asked again with `value`, nothing typed is lost).
export function askText({ title, label, value = "", action = t("save"), problem = "" }) {
  const input = el("input");
  input.name = "answer";
  input.value = value;
  input.required = true;
  const field = el("label", "ask-field", label);
  field.append(input);
  const said = problem ? [el("p", "error", problem)] : [];
  if (problem) {
    said[0].setAttribute("role", "alert");
    input.setAttribute("aria-invalid", "true");
  }
  return open({ title, body: [...said, field], action }, () => input.value.trim() || null);
}

// A few named values at once (a connector prompt's arguments): resolves to { name: value } (empty ones left out)
// or null when dismissed. A required field must be filled before the answer is taken.
export function askFields({ title, message = "", fields, action }) {
  const inputs = fields.map((field) => {
    const input = el("input");
    input.name = field.name;
    input.required = Boolean(field.required);
    return input;
  });
  const body = [
    ...(message ? [el("p", "", message)] : []),
    ...fields.map((field, index) => {
      const label = el("label", "ask-field", field.hint ? `${field.label} ${field.hint}` : field.label);
      label.append(inputs[index]);
      return label;
    }),
  ];
  return open({ title, body, action }, () => Object.fromEntries(
    inputs.filter((input) => input.value.trim()).map((input) => [input.name, input.value]),
  ));
}

// A yes/no question with one more choice, unticked by default (run a server unconfined): resolves to null when
// dismissed, else { option: whether it was ticked }. Focus goes to the answer, not to the option.
export function askConfirmWith({ title, message, option, action }) {
  const box = el("input");
  box.type = "checkbox";
  box.name = "option";
  const label = el("label", "ask-option");
  label.append(box, " ", option);
  const paragraphs = message.split("\n\n").map((text) => el("p", "", text));
  return open({ title, body: [...paragraphs, label], action, danger: true, focusAction: true }, () => ({ option: box.checked }));
}

// A yes/no question about something that cannot be taken back lightly (a delete).
export function askConfirm({ title, message, action, danger = true }) {
  return open({ title, body: [el("p", "", message)], action, danger });
}
