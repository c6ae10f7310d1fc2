// What the person's connectors offer the composer: their prompts, in the "/" menu (a prompt with arguments asks
// for them in a small form; the filled-in text lands in the box, to read before sending), and their resources, in
// the attach menu beside "Files…" (attached like a file: the model reads it as outside data). Lists are asked
// for when a menu opens: a server's list that changed is current the next time.

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { askFields } from "./dialogs.js";
import { t } from "./strings.js";

export async function offeredPrompts() {
  try {
    return (await get("/api/connectors/prompts")).prompts;
  } catch {
    return []; // no connectors here (or none answered): the box works as before
  }
}

// The prompt's text, its arguments asked for first; null when the person cancelled.
export async function fillPrompt(prompt) {
  let values = {};
  if (prompt.arguments.length) {
    values = await askFields({
      title: `${prompt.title} — ${prompt.server}`, // several servers may offer a prompt of the same name
      message: prompt.description,
      fields: prompt.arguments.map((a) => ({
        name: a.name, required: a.required,
        label: a.description ? `${a.name} — ${a.description}` : a.name,
        hint: a.required ? "" : t("optional"),
      })),
      action: t("promptUse"),
    });
    if (!values) return null;
  }
  const { text } = await post("/api/connectors/prompts/get", { server: prompt.server, name: prompt.name, arguments: values });
  return text;
}

// "+": the file picker at once when no connector offers anything; else a menu: Files…, then each resource.
export function attachMenu(composer, button) {
  const menu = el("div", "attach-menu");
  menu.setAttribute("role", "menu");
  menu.hidden = true;
  button.after(menu);
  const close = () => { menu.hidden = true; button.setAttribute("aria-expanded", "false"); };
  document.addEventListener("click", (event) => { if (!menu.contains(event.target) && event.target !== button) close(); });
  menu.addEventListener("keydown", (event) => { if (event.key === "Escape") { close(); button.focus(); } });
  button.setAttribute("aria-haspopup", "menu");
  button.addEventListener("click", async () => {
    if (!menu.hidden) { close(); return; }
    let resources = [];
    try { resources = (await get("/api/connectors/resources")).resources; } catch { resources = []; }
    if (!resources.length) { composer.picker.click(); return; }
    const files = el("button", "menu-item", t("attachFiles"));
    files.type = "button";
    files.setAttribute("role", "menuitem");
    files.addEventListener("click", () => { close(); composer.picker.click(); });
    const items = resources.map((resource) => {
      const item = el("button", "menu-item", `${resource.server}: ${resource.title}`);
      item.type = "button";
      item.setAttribute("role", "menuitem");
      item.title = resource.description || resource.uri;
      item.addEventListener("click", () => { close(); composer.attachResource(resource); });
      return item;
    });
    menu.replaceChildren(files, el("div", "menu-heading", t("attachFromConnectors")), ...items);
    menu.hidden = false;
    button.setAttribute("aria-expanded", "true");
    files.focus();
  });
}
