// Tool cards and permission cards. A card is found again by its id, so a replayed event updates the
// card it belongs to instead of drawing a second one.

import { post } from "./api.js";
import { t } from "./strings.js";

export function el(tag, className, text) {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text !== undefined) node.textContent = text;
  return node;
}

export function shorten(text, limit) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > limit ? flat.slice(0, limit - 1) + "…" : flat;
}

function resultText(content) {
  return (content ?? []).map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
}

// `summary`: the call in one line, as the tool itself wrote it on its tool_start (never guessed here).
export function toolCard(id, name, input, summary) {
  const card = el("details", "tool-card running");
  card.dataset.toolId = id;
  const head = el("summary", "tool-head");
  const status = el("span", "tool-status", "");
  status.setAttribute("aria-label", t("running"));
  const row = el("div", "tool-row");
  row.append(status, el("span", "tool-name", name), el("span", "tool-arg", summary ?? ""),
    el("span", "tool-time", ""));
  head.append(row);
  const body = el("div", "tool-body");
  body.append(el("div", "tool-progress", ""), el("div", "label", t("input")),
    el("pre", "tool-input", JSON.stringify(input ?? {}, null, 2)));
  card.append(head, body);
  return card;
}

export function toolProgress(card, message) {
  card.querySelector(".tool-progress").textContent = message;
}

export function toolFinished(card, { content, isError, duration }) {
  toolEnded(card, isError, duration);
  const text = resultText(content);
  card.querySelector(".tool-progress").textContent = "";
  if (!card.querySelector(".tool-result")) {
    const body = card.querySelector(".tool-body");
    body.append(el("div", "label", t("result")), el("pre", "tool-result", ""));
  }
  card.querySelector(".tool-result").textContent = text.length > 20000 ? text.slice(0, 20000) + "\n…" : text;
  const preview = card.querySelector(".tool-preview") ?? el("div", "tool-preview");
  preview.textContent = shorten(text, 160);
  card.querySelector("summary").append(preview); // visible while the card is closed
}

function toolEnded(card, isError, duration) {
  card.classList.remove("running");
  card.classList.add(isError ? "failed" : "ok");
  card.querySelector(".tool-status").setAttribute("aria-label", isError ? t("failed") : t("done"));
  if (duration !== undefined && duration !== null) {
    card.querySelector(".tool-time").textContent = duration < 1 ? `${Math.round(duration * 1000)} ms`
      : `${duration.toFixed(1)} s`;
  }
}

// A group bubble's tool call as its bus record keeps it (name, outcome, time): its input and result are in that
// member's own transcript, not the group's, so the card is a row that does not open.
export function toolRecorded(id, step) {
  const card = el("div", "tool-card recorded");
  card.dataset.toolId = id;
  const row = el("div", "tool-row");
  row.append(el("span", "tool-status", ""), el("span", "tool-name", step.tool), el("span", "tool-arg", step.summary ?? ""),
    el("span", "tool-time", ""));
  card.append(row);
  toolEnded(card, !step.ok, typeof step.ms === "number" ? step.ms / 1000 : null);
  return card;
}

// A question from the agent. The buttons answer it; one answer closes the card.
//
// The card never takes the focus: a person typing a steering message who presses Enter sends the
// message, not an approval. Approving needs a click, or a key shown on the card while the card itself
// has the focus; Deny comes first and is what Enter and Escape mean there.
const KEYS = { deny: "D", allow_once: "O", allow_run: "R", always: "A" };
const ORDER = ["deny", "allow_once", "allow_run", "always"];

export function permissionCard(conversationId, event) {
  const card = el("section", `permission-card level-${event.level ?? "workspace_write"}`);
  card.dataset.questionId = event.id;
  card.tabIndex = 0;
  card.setAttribute("role", "group");
  card.setAttribute("aria-label", t("permissionTitle"));
  card.append(el("h3", "", `${t("permissionTitle")}: ${event.tool}`));
  if (event.categories?.length) {
    const tags = el("div", "categories");
    for (const category of event.categories) tags.append(el("span", `tag ${category}`, t(`category_${category}`)));
    card.append(tags);
  }
  if (event.effect) card.append(el("p", `effect ${event.effect}`, t(`effect_${event.effect}`)));
  card.append(el("pre", "preview", event.preview));
  const options = ORDER.filter((o) => (event.options ?? ORDER).includes(o));
  const choices = el("div", "choices");
  const answer = async (option) => {
    if (card.classList.contains("answered") || choices.dataset.busy) return;
    choices.dataset.busy = "1";
    card.dataset.asking = option; // this window's own answer: the event that closes the card may come before the reply
    holdFocus(card);
    for (const b of choices.querySelectorAll("button")) b.disabled = true;
    try {
      await post(`/api/conversations/${conversationId}/answers`, { question_id: event.id, decision: option });
      permissionAnswered(card, option);
    } catch (error) {
      const given = error.status === 409 ? error.data?.answered : null;
      if (given) { // another window, a phone or the terminal answered first: that answer stands, and is said
        permissionAnswered(card, given.decision, given.by, given.expired, given.unattended, given.stopped);
        card.append(tooLate(option, given));
        return;
      }
      card.append(el("div", "error", error.message));
      delete choices.dataset.busy;
      delete card.dataset.asking;
      for (const b of choices.querySelectorAll("button")) b.disabled = false;
    }
  };
  for (const option of options) {
    const button = el("button", `choice ${option}`, `${t(option)} (${KEYS[option]})`);
    button.type = "button";
    button.dataset.decision = option;
    button.addEventListener("click", () => answer(option));
    choices.append(button);
  }
  // The keys this card answers to: only its own choices (a question that cannot be remembered has two).
  card.append(choices, el("p", "keys", options.length === ORDER.length ? t("permissionKeys") : t("permissionKeysOnce")));
  card.addEventListener("keydown", (e) => {
    if (e.altKey || e.ctrlKey || e.metaKey || e.isComposing) return;
    const onCard = e.target === card;
    const key = e.key.length === 1 ? e.key.toUpperCase() : e.key;
    const chosen = Object.keys(KEYS).find((o) => KEYS[o] === key && options.includes(o));
    if (chosen) answer(chosen);
    else if (e.key === "Escape" || (e.key === "Enter" && onCard)) answer("deny");
    else return;
    e.preventDefault();
  });
  return card;
}

// Answered, the card reads as a reload draws it: the answer given (the other choices and the keys hint gone), or no
// choice at all when nobody gave the no (it expired, nobody could be asked, the run was stopped: not a Deny pressed).
export function permissionAnswered(card, decision, by = "", expired = false, unattended = false, stopped = false) {
  card.classList.add("answered", decision === "deny" ? "denied" : "allowed");
  holdFocus(card);
  const nobody = expired || unattended || stopped;
  for (const b of card.querySelectorAll(".choices button")) {
    if (b.dataset.decision === decision && !nobody) {
      b.disabled = true;
      b.classList.add("chosen");
    } else b.remove();
  }
  card.querySelector(".keys")?.remove();
  const shown = card.querySelector(".answer") ?? el("div", "answer");
  shown.textContent = `${t("answered")}: ${t(decision)}`;
  if (by) shown.textContent += ` · ${t("answeredOn", { device: by })}`; // from a paired phone
  // Live, a window that did not give this answer says so (after a reload nobody knows which window it was).
  else if (!card.dataset.history && card.dataset.asking !== decision) shown.textContent += ` · ${t("answeredElsewhere")}`;
  if (expired) shown.textContent = t("expiredUnanswered"); // nobody answered in time: a no
  if (unattended) shown.textContent = t("unattendedDeclined"); // nobody could be asked: a no
  if (stopped) shown.textContent = t("stoppedDeclined"); // the run was stopped while it waited
  card.append(shown);
}

// A button about to be disabled drops the focus to the page, and the next Tab starts at the top of the window:
// the card itself (focusable, it says what was answered) keeps it.
function holdFocus(card) {
  if (card.contains(document.activeElement) && document.activeElement !== card) card.focus({ preventScroll: true });
}

// This view's answer came after the question was closed: what it chose was not taken, and what was decided, by whom.
// `given` is the answer that closed it, as the server kept it (by "": a window of this computer, not this one).
function tooLate(option, given) {
  const closed = given.expired ? "expiredUnanswered" : given.unattended ? "unattendedDeclined"
    : given.stopped ? "stoppedDeclined" : "";
  const where = given.by ? t("answeredOn", { device: given.by }) : t("answeredElsewhere");
  const said = closed ? t("answerTooLateClosed", { yours: t(option), closed: t(closed) })
    : t("answerTooLate", { yours: t(option), answer: `${t(given.decision)}, ${where}` });
  const note = el("p", "late", said);
  note.setAttribute("role", "status");
  return note;
}
