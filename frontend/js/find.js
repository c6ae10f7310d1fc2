// Find in the open chat (Ctrl/Cmd+F): the messages that contain the words, with next and previous;
// Esc closes it. It searches what the chat shows, so a reply still streaming is found as it grows.

import { t } from "./strings.js";

export class FindBar {
  constructor(root, messages) {
    this.root = root;
    this.messages = messages;
    this.input = root.querySelector("#find-input");
    this.count = root.querySelector("#find-count");
    this.matches = [];
    this.at = -1;
    this.relabel();
    this.input.addEventListener("input", () => this.search());
    this.input.addEventListener("keydown", (event) => {
      if (event.key === "Enter") { event.preventDefault(); this.step(event.shiftKey ? -1 : 1); }
      if (event.key === "Escape") { event.preventDefault(); this.close(); }
    });
    root.querySelector("#find-next").addEventListener("click", () => this.step(1));
    root.querySelector("#find-previous").addEventListener("click", () => this.step(-1));
    root.querySelector("#find-close").addEventListener("click", () => this.close());
  }

  relabel() {
    this.input.placeholder = t("findInChat");
    this.input.setAttribute("aria-label", t("findInChat"));
    if (this.matches.length || this.input.value.trim()) this.step(0);
  }

  // Opened from a search result: the chat's matches for the same words, starting at that message.
  async openAt(words, messageId) {
    // The history's text is drawn on the next frames (chat.js paints per frame): search after them.
    for (let frame = 0; frame < 2; frame++) await new Promise((done) => requestAnimationFrame(done));
    this.input.value = words;
    this.open();
    const target = messageId && this.matches.findIndex((node) => node.dataset.messageId === messageId
      || (node.dataset.messageIds ?? "").split(" ").includes(messageId));
    if (target > 0) { this.at = target - 1; this.step(1); }
  }

  open() {
    this.root.hidden = false;
    this.input.focus();
    this.input.select();
    this.search();
  }

  close() {
    this.root.hidden = true;
    this.clear();
    this.count.textContent = "";
  }

  clear() {
    for (const node of this.matches) node.classList.remove("found", "found-current");
    this.matches = [];
    this.at = -1;
  }

  search() {
    this.clear();
    const words = this.input.value.trim().toLowerCase();
    if (!words) { this.count.textContent = ""; return; }
    this.matches = [...this.messages.querySelectorAll(".msg")].filter((node) =>
      node.textContent.toLowerCase().includes(words));
    for (const node of this.matches) node.classList.add("found");
    this.step(1);
  }

  step(direction) {
    if (!this.matches.length) { this.count.textContent = this.input.value.trim() ? t("findNone") : ""; return; }
    for (const node of this.matches) node.classList.remove("found-current");
    this.at = (this.at + direction + this.matches.length) % this.matches.length;
    const current = this.matches[this.at];
    current.classList.add("found-current");
    current.scrollIntoView({ block: "center" });
    this.count.textContent = t("findCount", { at: this.at + 1, of: this.matches.length });
  }
}
