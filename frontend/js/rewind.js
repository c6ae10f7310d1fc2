// Rewind from one of the person's messages: "conversation and files", "conversation only" or "files only". The
// dialog previews what will happen — files restored, created, deleted; what a rewind cannot undo (network calls,
// other folders) — and asks before doing it. The files' rewind can be undone from the notice that follows; the
// conversation's tail stays a version of that message (its arrows).

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

const SHOWN = 40; // paths listed per kind; the rest counted

export async function showRewind({ conversation, message, group, onDone, onError }) {
  const modes = group ? ["files"] : ["both", "conversation", "files"];
  const dialog = el("dialog", "ask rewind-dialog");
  dialog.setAttribute("aria-label", t("rewindTitle"));
  const form = el("form", "ask-form");
  const choices = el("fieldset", "rewind-modes");
  choices.append(el("legend", "", t("rewindWhat")));
  for (const mode of modes) {
    const label = el("label", "check");
    const radio = el("input");
    radio.type = "radio";
    radio.name = "mode";
    radio.value = mode;
    radio.checked = mode === modes[0];
    label.append(radio, " ", t(`rewind_${mode}`));
    choices.append(label);
  }
  const preview = el("div", "rewind-preview");
  preview.setAttribute("aria-live", "polite");
  const cancel = el("button", "", t("cancel"));
  cancel.type = "button";
  const confirm = el("button", "danger", t("rewindConfirm"));
  confirm.type = "submit";
  const buttons = el("div", "ask-buttons");
  buttons.append(cancel, confirm);
  form.append(el("h2", "", t("rewindTitle")), choices);
  if (group) form.append(el("p", "hint rewind-group", t("rewindGroupFiles")));
  form.append(preview, buttons);
  dialog.append(form);
  document.body.append(dialog);
  const mode = () => form.querySelector("input[name=mode]:checked").value;
  let ticket = 0;
  const show = async () => {
    const mine = ++ticket;
    preview.replaceChildren(el("p", "hint", t("rewindLooking")));
    confirm.disabled = true;
    try {
      const said = await get(`/api/conversations/${conversation}/rewind?to=${encodeURIComponent(message)}&mode=${mode()}`);
      if (mine !== ticket) return;
      preview.replaceChildren(...describe(said));
      confirm.disabled = false;
    } catch (error) {
      if (mine !== ticket) return;
      preview.replaceChildren(el("p", "error", error.message));
    }
  };
  choices.addEventListener("change", show);
  cancel.addEventListener("click", () => dialog.close());
  form.addEventListener("submit", async (event) => {
    event.preventDefault();
    confirm.disabled = true;
    try {
      const done = await post(`/api/conversations/${conversation}/rewind`, { to: message, mode: mode() });
      dialog.close();
      onDone(done);
    } catch (error) {
      preview.prepend(el("p", "error", error.message));
      confirm.disabled = false;
    }
  });
  dialog.addEventListener("close", () => dialog.remove());
  dialog.showModal();
  await show().catch((error) => onError(error.message));
}

function describe(said) {
  const out = [];
  const files = said.files;
  if (files) {
    const changes = files.restore.length + files.create.length + files.delete.length;
    if (!changes) out.push(el("p", "hint rewind-same", t("rewindFilesSame")));
    for (const kind of ["restore", "create", "delete"]) {
      const paths = files[kind];
      if (!paths.length) continue;
      const list = el("details", `rewind-files ${kind}`);
      list.open = paths.length <= 8;
      list.append(el("summary", "", t(`rewindFiles_${kind}`, { count: paths.length })));
      const items = el("ul", "");
      for (const path of paths.slice(0, SHOWN)) items.append(el("li", "path", path));
      if (paths.length > SHOWN) items.append(el("li", "hint", t("andMore", { count: paths.length - SHOWN })));
      list.append(items);
      out.push(list);
    }
    if (files.cannot.length) out.push(el("p", "hint rewind-cannot", t("rewindCannot", { files: files.cannot.slice(0, 5).join(", ") })));
  }
  if (said.warnings?.length) {
    const warn = el("div", "rewind-warnings");
    warn.setAttribute("role", "alert");
    warn.append(el("p", "", t("rewindOutside")));
    const items = el("ul", "");
    for (const warning of said.warnings) items.append(el("li", "", warning));
    warn.append(items);
    out.push(warn);
  }
  if (said.conversation) out.push(el("p", "hint rewind-talk", t("rewindTalk")));
  return out;
}

// After a rewind: what was done, and the files' undo.
export function rewoundNotice(done, { conversation, onError }) {
  const notice = el("div", "notice rewound");
  notice.setAttribute("role", "status");
  const files = done.files;
  const count = files ? files.restore.length + files.create.length + files.delete.length : 0;
  notice.append(files ? t("rewoundFiles", { count }) : t("rewoundTalk"));
  notice.dataset.conversation = conversation; // said in its own chat only (main.js clears it on a switch)
  if (files || done.conversation) {
    const undo = el("button", "small", t("undo"));
    undo.type = "button";
    undo.addEventListener("click", async () => {
      try {
        await post(`/api/conversations/${conversation}/rewind/undo`, { // this rewind, not whichever came last
          before: done.files?.before ?? null, after: done.conversation?.after ?? null, index: done.conversation?.index ?? null,
        });
        notice.replaceChildren(t("rewindUndone"));
      } catch (error) { onError(error.message); }
    });
    notice.append(" ", undo);
  }
  const close = el("button", "small", t("close"));
  close.type = "button";
  close.addEventListener("click", () => notice.remove());
  notice.append(" ", close);
  return notice;
}
