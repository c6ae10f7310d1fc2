// Settings → Instructions: the person's own standing instructions (typed here, or read live from the file they keep
// for Claude Code, Codex or Gemini CLI), and the folders whose instruction files (AGENTS.md, CLAUDE.md…) they trust —
// each revocable: that folder's files are then read as outside data again, and asked about once more.

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton, select } from "./settings_common.js";

export async function instructionsSection(prefs, save, guard, refresh) {
  const [own, trust] = await Promise.all([get("/api/personal-instructions"), get("/api/trust")]);
  const section = el("section", "instructions");
  section.append(el("h3", "", t("instructionsSection")), el("p", "hint", t("instructionsSectionHint")));
  const text = el("textarea");
  text.name = "personal_instructions";
  text.rows = 5;
  text.value = own.personal_instructions ?? "";
  const field = el("label", "field", t("yourInstructions"));
  field.append(text);
  text.addEventListener("change", guard(async () => { await save({ personal_instructions: text.value }); }));
  section.append(field);
  const files = [["", t("liveNone")], ...own.found.map((f) => [f.key, `${f.tool} (${f.path})`])];
  if (own.personal_file && !own.found.some((f) => f.key === own.personal_file)) {
    files.push([own.personal_file, t("liveMissing", { key: own.personal_file })]);
  }
  section.append(select(t("liveFrom"), "personal_file", files, own.personal_file ?? "",
    guard(async (value) => { await save({ personal_file: value, instructions_offered: true }); refresh(); })));
  section.append(el("h4", "", t("trustedFolders")), el("p", "hint", t("trustedFoldersHint")));
  if (trust.problem) section.append(el("p", "error", trust.problem));
  if (!trust.folders.length) section.append(el("p", "hint", t("noTrustedFolders")));
  const list = el("ul", "trusted-folders");
  for (const folder of trust.folders) {
    const item = el("li", "trusted-folder");
    item.dataset.folder = folder.folder;
    item.append(el("code", "path", folder.folder), " ", actionButton("small danger", t("revoke"), guard(async () => {
      await post("/api/trust/remove", { folder: folder.folder });
      refresh();
    })));
    list.append(item);
  }
  section.append(list);
  return section;
}
