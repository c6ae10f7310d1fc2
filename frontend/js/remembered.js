// "Remembered: …" with Undo: every memory write shows in the chat as it happens (and in a chat's history),
// and can be taken back from there — the same line the phone shows.

import { post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

// `change`: the memory tool's details (target, entry, replaced: the entry a replace overwrote).
export function rememberedLine(change, onError) {
  const line = el("div", "remembered");
  line.setAttribute("role", "status");
  line.append(el("span", "", t("remembered", { entry: change.entry })));
  const undo = el("button", "small", t("undo"));
  undo.type = "button";
  undo.addEventListener("click", async () => {
    undo.disabled = true;
    try {
      await post("/api/memory/undo", { target: change.target ?? "notes", entry: change.entry, replaced: change.replaced ?? null });
      undo.replaceWith(el("span", "hint", t("rememberedUndone")));
    } catch (error) {
      undo.disabled = false;
      onError?.(error.message);
    }
  });
  line.append(" ", undo);
  return line;
}
