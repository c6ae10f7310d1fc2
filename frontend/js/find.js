// Find in the open chat (Ctrl/Cmd+F): every place the words occur, marked where they are, counted ("2 of 5"),
// with next and previous; Esc closes it, and Ctrl/Cmd+F again goes on from the person's place. It searches what
// the chat shows, so a reply still streaming is found as it grows. The marks are CSS highlights over ranges of
// the page's own text (the `find` and `find-current` highlights, styled in app.css): nothing is written into the
// messages, which chat.js redraws as it likes.

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
  // `home`: where the focus goes on closing when what had it before is gone (the message box).
  constructor(root, messages, view, home) {
    this.root = root;
    this.messages = messages;
    this.view = view; // what scrolls the messages: where the person is reading
    this.home = home;
    this.from = null; // what had the focus when the bar opened: it gets it back on closing
    this.left = null; // the place when it was closed (see place())
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
    this.show();
    const target = messageId ? this.matches.findIndex(({ message }) => message.dataset.messageId === messageId
      || (message.dataset.messageIds ?? "").split(" ").includes(messageId)) : -1;
    this.at = Math.max(0, target) - 1;
    this.step(1);
  }

  // Ctrl/Cmd+F, the words still in the box from last time: the person's place is kept (a search over from the
  // first match threw them back to the top of a long chat).
  open() {
    const place = this.matches.length ? this.place() : this.left;
    this.show();
    this.keep(place);
  }

  show() {
    const before = document.activeElement;
    if (before && before !== document.body && !this.root.contains(before)) this.from = before;
    this.root.hidden = false;
    this.input.focus();
    this.input.select();
    this.find();
  }

  // Hidden with the focus in it, the bar dropped it to the page: the next Tab started at the top of the window.
  close() {
    this.left = this.place();
    const had = this.root.contains(document.activeElement);
    this.root.hidden = true;
    this.clear();
    this.count.textContent = "";
    if (!had) return;
    const back = this.from?.isConnected && !this.from.disabled ? this.from : this.home?.();
    back?.focus({ preventScroll: true });
    this.from = null;
  }

  // The match the person is on: its words, its message, and which of that message's matches it is.
  place() {
    if (this.at < 0) return null;
    const { message } = this.matches[this.at];
    const nth = this.matches.slice(0, this.at).filter((match) => match.message === message).length;
    return { words: this.input.value.trim().toLowerCase(), message, nth };
  }

  // After a search with the same words: that match again if it is still in sight; else the first match at or
  // after where the person reads (the first of all when every one is above: Next wraps the same way).
  keep(place) {
    if (!this.matches.length) { this.step(0); return; } // says "Not found" for words in the box
    const words = this.input.value.trim().toLowerCase();
    const same = place?.words === words
      ? this.matches.filter(({ message }) => message === place.message)[place.nth] : null;
    let at = same && this.inSight(same) ? this.matches.indexOf(same) : -1;
    if (at < 0) at = Math.max(0, this.matches.findIndex((match) => this.notAbove(match)));
    this.at = at - 1;
    this.step(1, !this.inSight(this.matches[at]));
  }

  // A message's own box first: the text of one far out of sight is not laid out (content-visibility in app.css).
  inSight({ range, message }) {
    const view = this.view.getBoundingClientRect();
    const box = message.getBoundingClientRect();
    if (box.bottom <= view.top || box.top >= view.bottom) return false;
    const words = range.getBoundingClientRect();
    return words.top >= view.top && words.bottom <= view.bottom;
  }

  notAbove({ range, message }) {
    const top = this.view.getBoundingClientRect().top;
    const box = message.getBoundingClientRect();
    return box.top >= top || (box.bottom > top && range.getBoundingClientRect().top >= top);
  }

  clear() {
    for (const node of this.messages.querySelectorAll(".msg.found-current")) node.classList.remove("found-current");
    globalThis.CSS?.highlights?.delete("find");
    globalThis.CSS?.highlights?.delete("find-current");
    this.matches = [];
    this.at = -1;
  }

  // The words typed: every match, from the first.
  search() {
    this.find();
    this.step(1);
  }

  find() {
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
  }

  // `reveal`: scroll the match into sight (not for one the person already sees, where they are reading).
  step(direction, reveal = true) {
    if (!this.matches.length) { this.count.textContent = this.input.value.trim() ? t("findNone") : ""; return; }
    this.at = (this.at + direction + this.matches.length) % this.matches.length;
    const { range, message } = this.matches[this.at];
    for (const node of this.messages.querySelectorAll(".msg.found-current")) node.classList.remove("found-current");
    message.classList.add("found-current"); // which message holds it, for the eye a hint only (app.css)
    if (globalThis.Highlight) CSS.highlights.set("find-current", new Highlight(range));
    if (reveal) revealInChat(range.startContainer.parentElement ?? message);
    this.count.textContent = t("findCount", { at: this.at + 1, of: this.matches.length });
  }
}
