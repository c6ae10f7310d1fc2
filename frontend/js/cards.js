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

// The one argument that says what a call is about, shortened.
export function summarize(name, input) {
  const keys = ["path", "command", "pattern", "query", "url", "file", "name"];
  for (const key of keys) {
    if (typeof input?.[key] === "string") return shorten(input[key], 90);
  }
  const first = Object.values(input ?? {}).find((v) => typeof v === "string");
  return first ? shorten(first, 90) : "";
}

export function shorten(text, limit) {
  const flat = String(text).replace(/\s+/g, " ").trim();
  return flat.length > limit ? flat.slice(0, limit - 1) + "…" : flat;
}

function resultText(content) {
  return (content ?? []).map((b) => (b.type === "text" ? b.text : `[${b.type}]`)).join("\n");
}

export function toolCard(id, name, input) {
  const card = el("details", "tool-card running");
  card.dataset.toolId = id;
  const head = el("summary", "tool-head");
  const status = el("span", "tool-status", "");
  status.setAttribute("aria-label", t("running"));
  const row = el("div", "tool-row");
  row.append(status, el("span", "tool-name", name), el("span", "tool-arg", summarize(name, input)),
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
  card.classList.remove("running");
  card.classList.add(isError ? "failed" : "ok");
  card.querySelector(".tool-status").setAttribute("aria-label", isError ? t("failed") : t("done"));
  if (duration !== undefined && duration !== null) {
    card.querySelector(".tool-time").textContent = duration < 1 ? `${Math.round(duration * 1000)} ms`
      : `${duration.toFixed(1)} s`;
  }
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

// A question from the agent. The buttons answer it; one answer closes the card.
export function permissionCard(conversationId, event) {
  const card = el("section", "permission-card");
  card.dataset.questionId = event.id;
  card.setAttribute("role", "group");
  card.setAttribute("aria-label", t("permissionTitle"));
  card.append(el("h3", "", `${t("permissionTitle")}: ${event.tool}`));
  if (event.categories?.length) {
    const tags = el("div", "categories");
    for (const category of event.categories) tags.append(el("span", "tag", category));
    card.append(tags);
  }
  card.append(el("pre", "preview", event.preview));
  const choices = el("div", "choices");
  for (const option of event.options ?? ["allow_once", "allow_run", "always", "deny"]) {
    const button = el("button", `choice ${option}`, t(option));
    button.type = "button";
    button.dataset.decision = option;
    button.addEventListener("click", async () => {
      for (const b of choices.querySelectorAll("button")) b.disabled = true;
      try {
        await post(`/api/conversations/${conversationId}/answers`, { question_id: event.id, decision: option });
        permissionAnswered(card, option);
      } catch (error) {
        card.append(el("div", "error", error.message));
      }
    });
    choices.append(button);
  }
  card.append(choices);
  queueMicrotask(() => choices.querySelector("button")?.focus({ preventScroll: true }));
  return card;
}

export function permissionAnswered(card, decision) {
  card.classList.add("answered", decision === "deny" ? "denied" : "allowed");
  for (const b of card.querySelectorAll("button")) {
    b.disabled = true;
    if (b.dataset.decision === decision) b.classList.add("chosen");
  }
  const shown = card.querySelector(".answer") ?? el("div", "answer");
  shown.textContent = `${t("answered")}: ${t(decision)}`;
  card.append(shown);
}
