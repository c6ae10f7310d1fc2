// The chat follows its newest content while the person is at the bottom, and lets them read in peace when
// they have scrolled up. "At the bottom" is what the person last did, not where the content is now: a tall
// card (an approval) or an image that loads late grows the chat after it was drawn, and a rule judged after
// the growth ("near the bottom?") stopped following just when something new needed seeing.
// An approval waiting out of sight is never silent: a pill says how many wait and takes the person there. With none
// waiting, the same pill says new text arrived below while the person read above, and takes them back to following.

import { t } from "./strings.js";

let active = null; // the chat's one Follower

// Scroll the chat to `node` at the person's request: the chat stops following the newest content.
export function revealInChat(node, block = "center") {
  active?.release();
  node.scrollIntoView({ block });
}

const SLACK = 48; // px from the bottom that still count as "at the bottom" (a wheel notch is ~100)

export class Follower {
  constructor(box, pill) {
    this.box = box;
    this.pill = pill;
    this.following = true;
    this.touchY = 0;
    this.dragging = false; // the scrollbar, held
    this.waiting = new Set(); // approval cards not answered yet
    this.below = false; // content grew under the person's place since they left the bottom
    this.rest = 0; // how much of the chat lay from the top of what shows to its end, when last seen
    active = this;
    // Only the person leaves the bottom: a wheel or a finger moving up, a key that scrolls up, a drag of the
    // scrollbar. A scroll's own event cannot say whose it was: our own scroll's event comes a frame late (after
    // an image grew the chat), the browser's scroll anchoring nudges it, and a chat swapped for another clamps
    // it to the top — each read as the person leaving, and the chat stopped following. Reaching the bottom,
    // however it happens, starts following again.
    const away = () => { this.following = false; this.update(); };
    box.addEventListener("wheel", (event) => { if (event.deltaY < 0) away(); }, { passive: true });
    box.addEventListener("touchstart", (event) => { this.touchY = event.touches[0]?.clientY ?? 0; }, { passive: true });
    box.addEventListener("touchmove", (event) => {
      if ((event.touches[0]?.clientY ?? 0) > this.touchY) away(); // the finger goes down: the chat goes up
    }, { passive: true });
    document.addEventListener("keydown", (event) => {
      const typing = event.target instanceof HTMLTextAreaElement || event.target instanceof HTMLInputElement;
      if (!typing && ["PageUp", "ArrowUp", "Home"].includes(event.key)) away();
    });
    box.addEventListener("pointerdown", (event) => { if (event.target === box) this.dragging = true; });
    document.addEventListener("pointerup", () => { this.dragging = false; });
    box.addEventListener("scroll", () => {
      this.rest = this.box.scrollHeight - this.box.scrollTop; // the person's own place: nothing new below it
      if (this.atBottom()) this.following = true;
      else if (this.dragging) this.following = false;
      this.update();
    }, { passive: true });
    // The box shrinks (a file chip above the message box): still at the bottom. What grows the chat calls
    // grew() itself (chat.js, as it draws, and as a picture loads): a ResizeObserver on the chat pinned it
    // after layout, and every streamed frame became two (17 → 33 ms).
    new ResizeObserver(() => this.grew()).observe(box);
    // A message drawn while the chat opens is laid out at a guessed height first (content-visibility: its real
    // one comes a frame later, when the browser renders it): pinned before that, a chat opening on a waiting
    // approval landed at the top. After layout, only a chat that is not at the bottom any more is moved: one
    // already pinned before the frame (grew) costs a read of a clean layout, no second layout.
    new ResizeObserver(() => {
      if (this.following && this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight > 1) this.grew();
    }).observe(box.firstElementChild);
    pill.addEventListener("click", () => this.showWaiting());
  }

  atBottom() {
    return this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight <= SLACK;
  }

  toBottom() {
    this.box.scrollTop = this.box.scrollHeight;
  }

  // The person asked to see something (a found match, a search result, "Show the answer"): they are reading
  // there now, and what streams in meanwhile must not pull them away before their scroll event comes.
  release() {
    this.following = false;
  }

  // A chat opened, or the person sent something: whatever they were reading, they are at the newest now.
  follow() {
    this.following = true;
    this.toBottom();
    this.update();
  }

  // A chat opened: the approvals of the chat left behind are not this one's.
  reset() {
    this.waiting.clear();
    this.below = false;
    this.follow();
  }

  // Grown: stay at the newest if the person was there. `news` (a stream, a card, a notice): else it is news below
  // them (measured from their place: older answers drawn above as they scroll move the place with them). Not news:
  // a picture loading, an older answer drawn as it comes near, the box resized — opening a search result said
  // "New messages" with nothing new.
  grew(news = false) {
    if (this.following && this.box.scrollHeight - this.box.scrollTop - this.box.clientHeight > 1) this.toBottom();
    const rest = this.box.scrollHeight - this.box.scrollTop;
    if (!this.following && news && rest > this.rest + 1) this.below = true;
    this.rest = rest;
    this.update();
  }

  approval(card) {
    this.waiting.add(card);
    if (this.following) {
      this.toBottom();
      // Placed under its tool card, with a later one below it: the bottom alone might not show it.
      if (!this.inView(card)) card.scrollIntoView({ block: "nearest" });
    }
    this.update();
  }

  answered(card) {
    this.waiting.delete(card);
    this.update();
  }

  inView(card) {
    const seen = this.box.getBoundingClientRect();
    const at = card.getBoundingClientRect();
    return at.bottom > seen.top && at.top < seen.bottom;
  }

  unseen() {
    return [...this.waiting].filter((card) => card.isConnected && !this.inView(card));
  }

  // Called on every scroll and growth: with no approval waiting and nothing new below it touches nothing (no layout,
  // no style). An approval waiting is what the pill says first: it holds the run up.
  update() {
    if (!this.waiting.size && !this.below && this.pill.hidden) return;
    if (this.following) this.below = false;
    for (const card of this.waiting) if (!card.isConnected) this.waiting.delete(card);
    const unseen = this.unseen();
    const said = unseen.length ? t(unseen.length === 1 ? "approvalWaiting" : "approvalsWaiting", { count: unseen.length })
      : this.below ? t("newMessagesBelow") : "";
    if (this.pill.hidden !== !said) this.pill.hidden = !said;
    if (said && this.pill.textContent !== said) this.pill.textContent = said;
  }

  showWaiting() {
    const card = this.unseen()[0];
    if (!card) { if (this.below) this.follow(); return; } // the newest, and following it again
    card.scrollIntoView({ block: "center" });
    card.focus({ preventScroll: true }); // its keys answer it (Deny first)
    this.update();
  }
}
