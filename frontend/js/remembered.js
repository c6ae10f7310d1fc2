// "Remembered: …" (and "Forgot: …") with Undo: every memory change shows in the chat as it happens (and in a
// chat's history), and can be taken back from there — the same line the phone shows. A line drawn from history
// is checked against what memory holds now: an entry already gone says so instead of offering Undo.

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

// `change`: the memory tool's details (target; action; entry and replaced, or removed for a remove).
export function rememberedLine(change, onError) {
  const line = el("div", "remembered");
  line.setAttribute("role", "status");
  const target = change.target ?? "notes";
  const forgot = change.action === "remove";
  line.dataset.target = target;
  line.dataset.entry = forgot ? "" : change.entry;
  const words = forgot ? t("forgot", { entry: change.removed })
    : change.replaced ? t("rememberedInstead", { entry: change.entry, replaced: change.replaced })
      : t("remembered", { entry: change.entry });
  line.append(el("span", "", words));
  const undo = el("button", "small", t("undo"));
  undo.type = "button";
  undo.addEventListener("click", async () => {
    undo.disabled = true;
    try {
      const entry = forgot ? change.removed : change.entry;
      await post("/api/memory/undo", { target, entry, replaced: change.replaced ?? null, removed: forgot });
      undo.replaceWith(el("span", "hint", t("rememberedUndone")));
    } catch (error) {
      undo.replaceWith(el("span", "hint", t("rememberedGone")));
      onError?.(error.message);
    }
  });
  line.append(" ", undo);
  return line;
}

// After a history is drawn: lines whose entry memory no longer holds lose their Undo (it would find nothing).
export async function reconcileRemembered(container) {
  const lines = [...container.querySelectorAll(".remembered[data-entry]")].filter((line) => line.dataset.entry);
  if (!lines.length) return;
  const memory = await get("/api/memory").catch(() => null);
  if (!memory) return;
  for (const line of lines) {
    const kept = memory[line.dataset.target]?.entries ?? [];
    if (!kept.includes(line.dataset.entry)) line.querySelector("button")?.replaceWith(el("span", "hint", t("rememberedGone")));
  }
}
