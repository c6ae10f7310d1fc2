// Settings → Memory: the profile and notes pinned into every turn.

import { del, download, get, post, put } from "./api.js";
import { el } from "./cards.js";
import { askText } from "./dialogs.js";
import { t } from "./strings.js";
import { actionButton, saveAs } from "./settings_common.js";

// What the agent remembers across sessions: the person can read, edit, delete, add and export it — and turn
// it on or off (off until they turn it on).
export async function memorySection(prefs, save, guard, refresh) {
  const memory = await get("/api/memory");
  const section = el("section", "memory");
  section.append(el("h3", "", t("memory")), el("p", "hint", t("memoryHint")));
  const toggle = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.name = "memory";
  box.checked = prefs.memory === true;
  box.addEventListener("change", async () => { await save({ memory: box.checked, offered: true }); refresh(); });
  toggle.append(box, " ", t("memoryOn"));
  section.append(toggle);
  if (!box.checked) section.append(el("p", "hint memory-off", t("memoryOffHint")));
  for (const target of ["profile", "notes"]) {
    const store = memory[target];
    const box = el("div", "memory-store");
    box.dataset.target = target;
    box.append(el("h4", "", `${t(`memory_${target}`)} · ${store.size}/${store.max_chars}`));
    const list = el("ul", "entries");
    for (const entry of store.entries) {
      const item = el("li", "");
      item.append(el("span", "entry", entry));
      const edit = actionButton("small", t("edit"), guard(async () => {
        const text = await askText({ title: t("editMemory"), label: t("edit"), value: entry });
        if (text === null || text === entry) return;
        await post(`/api/memory/${target}/replace`, { old: entry, text });
        refresh();
      }));
      const remove = actionButton("small danger", t("remove"), guard(async () => {
        await post(`/api/memory/${target}/remove`, { old: entry });
        refresh();
      }));
      item.append(edit, remove);
      list.append(item);
    }
    if (!store.entries.length) list.append(el("li", "hint", t("memoryEmpty")));
    const form = el("form", "memory-add");
    const input = el("input");
    input.name = "text";
    input.placeholder = t("memoryAdd");
    input.setAttribute("aria-label", `${t(`memory_${target}`)}: ${t("memoryAdd")}`);
    const add = el("button", "", t("add"));
    add.type = "submit";
    form.append(input, add);
    form.addEventListener("submit", guard(async (event) => {
      event.preventDefault();
      await post(`/api/memory/${target}`, { text: input.value });
      refresh();
    }));
    box.append(list, form);
    section.append(box);
  }
  const exporter = actionButton("", t("memoryExport"), guard(async () => {
    saveAs(await download("/api/memory/export"), "orkas-memory.md", "text/markdown");
  }));
  section.append(exporter);
  return section;
}

// The knowledge base: documents and folders the agent can search, with indexing progress.
