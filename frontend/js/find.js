// Find in the open chat (Ctrl/Cmd+F): every place the words occur, marked where they are, counted ("2 of 5"),
// with next and previous; Esc closes it. It searches what the chat shows, so a reply still streaming is found
// as it grows. The marks are CSS highlights over ranges of the page's own text (the `find` and `find-current`
// highlights, styled in app.css): nothing is written into the messages, which chat.js redraws as it likes.

import { revealInChat } from "./follow.js";
import { t } from "./strings.js";

const SKIPPED = "button, svg, summary, .error-actions"; // the page's controls, not what was said

// The messages' text as one string per message, with where each piece of it lives.
function textOf(message) {
  const pieces = [];
  let text = "";
  const walker = document.createTreeWalker(message, NodeFilter.SHOW_TEXT, {
    acceptNode: (node) => (node.parentElement?.closest(SKIPPED) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
  });
  for (let node = walker.nextNode(); node; node = walker.nextNode()) {
    pieces.push({ node, at: text.length });
    text += node.data;
  }
  return { text, pieces };
}

// The text node and the offset in it of a position in the message's string.
function locate(pieces, position, end) {
  for (let index = pieces.length - 1; index >= 0; index--) {
    const { node, at } = pieces[index];
    if (position > at || (position === at && !end)) return [node, position - at];
  }
  return [pieces[0].node, 0];
}

export class FindBar {
  constructor(root, messages) {
    this.root = root;
    this.messages = messages;
    this.input = root.querySelector("#find-input");
    this.count = root.querySelector("#find-count");
    this.matches = []; // [{ range, message }] in the order the chat shows them
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
    const target = messageId && this.matches.findIndex(({ message }) => message.dataset.messageId === messageId
      || (message.dataset.messageIds ?? "").split(" ").includes(messageId));
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
    for (const node of this.messages.querySelectorAll(".msg.found-current")) node.classList.remove("found-current");
    globalThis.CSS?.highlights?.delete("find");
    globalThis.CSS?.highlights?.delete("find-current");
    this.matches = [];
    this.at = -1;
  }

  search() {
    this.clear();
    const words = this.input.value.trim().toLowerCase();
    if (!words) { this.count.textContent = ""; return; }
    for (const message of this.messages.querySelectorAll(".msg")) {
      const { text, pieces } = textOf(message);
      const lower = text.toLowerCase(); // the same length as the text for the scripts people type here
      for (let found = lower.indexOf(words); found !== -1; found = lower.indexOf(words, found + words.length)) {
        const range = document.createRange();
        range.setStart(...locate(pieces, found, false));
        range.setEnd(...locate(pieces, found + words.length, true));
        this.matches.push({ range, message });
      }
    }
    if (globalThis.Highlight) CSS.highlights.set("find", new Highlight(...this.matches.map(({ range }) => range)));
    this.step(1);
  }

  step(direction) {
    if (!this.matches.length) { this.count.textContent = this.input.value.trim() ? t("findNone") : ""; return; }
    this.at = (this.at + direction + this.matches.length) % this.matches.length;
    const { range, message } = this.matches[this.at];
    for (const node of this.messages.querySelectorAll(".msg.found-current")) node.classList.remove("found-current");
    message.classList.add("found-current"); // which message holds it, for the eye a hint only (app.css)
    if (globalThis.Highlight) CSS.highlights.set("find-current", new Highlight(range));
    const holder = range.startContainer.parentElement ?? message;
    revealInChat(holder);
    this.count.textContent = t("findCount", { at: this.at + 1, of: this.matches.length });
  }
}
