// One conversation's messages: the history from the transcript, then live events on top of it.
// Every bubble and card is keyed by its id (message id, tool call id, question id), so an event seen
// again after a reconnect or a replay updates what is there and never draws a second copy.

import { el, permissionAnswered, permissionCard, shorten, toolCard, toolFinished, toolProgress, toolRecorded } from "./cards.js";
import { download } from "./api.js";
import { revealInChat } from "./follow.js";
import { renderMarkdown } from "./markdown.js";
import { rememberedLine } from "./remembered.js";
import { t } from "./strings.js";

// The commander's tools for asking a member: each ask is drawn once, as the dispatch card its group_message
// brings (a hand-off's tool card showed the raw <worker-result> envelope beside it).
const ASKS = new Set(["dispatch_to", "hand_off_to"]);
const ENVELOPE = /<\/?worker-(?:error|result)\b[^>]*>/g;

export class ChatView {
  constructor(container, conversationId, hooks = {}) {
    this.container = container;
    this.conversationId = conversationId;
    this.hooks = hooks; // onRunning(bool), onQueuedDropped(text), onEdit, onRegenerate, onVersion, onContinue…
    // One agent: messages can be edited and answered again (a group's history is its bus: not yet).
    this.single = !hooks.group;
    this.lastUser = null; // the person's latest message: what "Another answer" and "Retry" answer again
    this.bubbles = new Map();
    this.cards = new Map();
    this.memoryCalls = new Map(); // a history's memory writes (tool_use id → what was kept), for "Remembered: …"
    this.questions = new Map();
    this.turn = null;
    this.running = false;
    this.writingUp = false; // the turn ended (done or error shown) but the run is not idle yet
    this.afterIdle = null; // an action pressed meanwhile, done once the run is idle
    // A group conversation: each actor (commander, an agent, a worker) streams into its own bubble.
    this.actor = null;
    this.actorTurns = new Map();
    this.workers = new Map();
    this.asked = 0; // the person's messages and the answers so far: a button names the one it acts on
    this.answers = 0;
    container.replaceChildren();
  }

  // ---- history ----
  // `older`: the cursor of the page before these messages (a long chat opens on its newest page only).
  renderHistory(messages, unsent = [], versions = [], older = "") {
    if (!messages.length && !unsent.length) this.container.append(el("p", "empty", t("emptyChat")));
    this.offerOlder(older);
    this.drawing = [];
    for (const message of messages) {
      if (message.role === "user") this.historyUser(message);
      else if (message.role === "assistant") this.historyAssistant(message);
      else if (message.role === "app") this.historyNotice(message);
    }
    const last = messages.at(-1);
    if (last?.role === "assistant" && last.stop_reason === "max_tokens") this.cutOff();
    if (last?.role === "app" && last.kind === "stopped") this.offerContinue(this.container.querySelector(".marker.stopped:last-of-type"));
    for (const message of unsent) this.on_message_not_sent({ ...message, kind: "no_provider" });
    this.showVersions(versions);
    this.forked = versions.length > 0;
    this.turn = null;
    this.finishHistory();
  }

  // A long history opens fast: the newest answers are drawn at once; older ones show their text plain
  // and are drawn as Markdown when they come near the screen (drawing 1,000 answers took seconds).
  finishHistory() {
    const segments = this.drawing ?? [];
    this.drawing = null;
    const now = segments.splice(Math.max(0, segments.length - EAGER), EAGER);
    for (const segment of now) this.drawAll(segment);
    this.lazy?.disconnect();
    this.lazy = null;
    this.drawLater(segments);
    this.scroll(true);
  }

  // ---- older messages, a page at a time (a 20,000-message chat drew for seconds) ----
  // Above the first message drawn: a button (keyboard and screen reader) that also loads by itself when
  // scrolled near, so scrolling up simply goes on into the older messages.
  offerOlder(cursor) {
    this.older = cursor;
    this.olderButton?.remove();
    this.olderButton = null;
    if (!cursor || !this.hooks.onOlder) return;
    const button = el("button", "older small link", t("olderMessages"));
    button.type = "button";
    button.addEventListener("click", () => this.loadOlder().catch((error) => this.hooks.onError?.(error.message)));
    this.container.prepend(button);
    this.olderButton = button;
    this.olderWatch ??= new IntersectionObserver((entries) => {
      if (entries.some((entry) => entry.isIntersecting)) this.loadOlder().catch((error) => this.hooks.onError?.(error.message));
    }, { root: this.container.parentElement, rootMargin: "600px 0px" });
    this.olderWatch.disconnect();
    this.olderWatch.observe(button);
  }

  // The page before the oldest message drawn, drawn above it with the reader's place kept. `size`: messages
  // asked for (more when looking for one message far back).
  async loadOlder(size) {
    if (!this.older) return;
    this.loadingOlder ??= (async () => {
      try {
        const page = await this.hooks.onOlder(this.older, size);
        if (this.container.isConnected) this.prependHistory(page.messages, page.versions ?? [], page.older);
      } finally {
        this.loadingOlder = null;
      }
    })();
    await this.loadingOlder;
  }

  // Drawn into a holder of their own with the view's place in the live history put aside, then moved in.
  prependHistory(messages, versions, older) {
    const box = this.container.parentElement;
    const anchor = this.olderButton?.nextElementSibling ?? this.container.firstElementChild;
    const before = anchor?.getBoundingClientRect().top ?? 0;
    const [container, turn, lastUser, drawing] = [this.container, this.turn, this.lastUser, this.drawing];
    this.container = document.createElement("div");
    this.turn = null;
    this.drawing = [];
    try {
      for (const message of messages) {
        if (message.role === "user") this.historyUser(message);
        else if (message.role === "assistant") this.historyAssistant(message);
        else if (message.role === "app") this.historyNotice(message);
      }
      if (anchor) anchor.before(...this.container.childNodes);
      else container.append(...this.container.childNodes);
    } finally {
      const segments = this.drawing;
      [this.container, this.turn, this.lastUser, this.drawing] = [container, turn, lastUser, drawing];
      this.drawLater(segments);
    }
    for (const version of versions) this.versionArrows(version);
    this.offerOlder(older);
    if (anchor && box) box.scrollTop += anchor.getBoundingClientRect().top - before; // the reader's place kept
  }

  // Looking for one message (a search result opens the chat at it): older pages until it is drawn.
  async reveal(messageId) {
    const drawn = () => [...this.container.querySelectorAll("[data-message-id], [data-message-ids]")].some((node) =>
      node.dataset.messageId === messageId || (node.dataset.messageIds ?? "").split(" ").includes(messageId));
    while (messageId && this.older && !drawn()) await this.loadOlder(MAX_PAGE);
  }

  // Answers not on screen show their text plain, drawn as Markdown when they come near.
  drawLater(segments) {
    if (!segments.length) return;
    this.lazy ??= new IntersectionObserver((entries) => {
      for (const entry of entries) {
        if (!entry.isIntersecting) continue;
        this.lazy.unobserve(entry.target);
        this.queueDraw(entry.target.segment);
      }
    }, { root: this.container.parentElement, rootMargin: "1500px 0px" });
    for (const segment of segments) {
      segment.tail.textContent = segment.raw; // findable, and about the right height, until drawn
      segment.node.segment = segment;
      this.lazy.observe(segment.node);
    }
  }

  // A fast scroll brings many answers near at once: draw them a few milliseconds per frame, so
  // scrolling never stalls (one frame drawing fifty answers took over 50 ms).
  queueDraw(segment) {
    this.toDraw ??= new Set();
    this.toDraw.add(segment);
    if (this.drawScheduled) return;
    this.drawScheduled = true;
    requestAnimationFrame(() => this.drainDraws());
  }

  drainDraws() {
    this.drawScheduled = false;
    const started = performance.now();
    for (const segment of this.toDraw) {
      this.toDraw.delete(segment);
      this.drawAll(segment);
      if (performance.now() - started > DRAW_BUDGET_MS) break;
    }
    if (this.toDraw.size) {
      this.drawScheduled = true;
      requestAnimationFrame(() => this.drainDraws());
    }
  }

  drawAll(segment) {
    const raw = segment.agent ? segment.raw.replace(HANDBACK, "") : segment.raw;
    segment.settled.replaceChildren(renderMarkdown(raw));
    segment.tail.replaceChildren();
    segment.done = raw.length;
  }

  historyUser(message) {
    const texts = [];
    const files = [];
    for (const block of message.content) {
      if (block.type === "tool_result") {
        const card = this.cards.get(block.tool_use_id);
        if (card) toolFinished(card, { content: block.content, isError: block.is_error });
        const kept = this.memoryCalls.get(block.tool_use_id);
        if (card && kept && !block.is_error) card.after(rememberedLine(kept, this.hooks.onError));
      } else if (block.type === "attachment") {
        files.push({ name: block.name, size: block.size, media_type: block.media_type, id: block.id });
      }
      else if (block.type === "text") texts.push(block.text); // exactly as typed, whatever it starts with
    }
    if (texts.join("") === this.hooks.continueNote) { // "Continue" after a cut-off answer: a marker, not a bubble
      this.marker("continued", t("continued"));
      this.lastUser = message.id;
      this.turn = null;
    } else if (texts.join("").trim() || files.length) {
      this.userBubble(message.id, texts.join(""), files);
      this.lastUser = message.id;
      this.turn = null;
    }
  }

  historyAssistant(message) {
    const turn = this.turn ?? this.newTurn();
    turn.el.dataset.messageIds = `${turn.el.dataset.messageIds ?? ""} ${message.id}`.trim(); // search opens here
    for (const block of message.content) {
      if (block.type === "text" && block.text) this.segment(turn).raw += block.text, this.paint(turn.segment);
      else if (block.type === "thinking" && block.text) this.thinking(turn).append(block.text);
      else if (block.type === "tool_use") this.addTool(turn, block.id, block.name, block.input, block.summary);
      if (block.type === "tool_use") turn.segment = null;
    }
    if (message.partial) turn.el.classList.add("partial");
    turn.partial ||= Boolean(message.partial); // stopped or cut: what it cost is what the provider had counted
    const usage = message.usage ?? {};
    turn.input += usage.input_tokens ?? 0;
    turn.output += usage.output_tokens ?? 0;
    if (message.cost !== null && message.cost !== undefined) turn.cost = (turn.cost ?? 0) + message.cost;
    this.footer(turn);
    this.turnActions(turn);
    turn.segment = null;
  }

  historyNotice(message) {
    if (message.kind === "approval") { this.historyApproval(message); return; }
    let node = null;
    if (message.kind === "stopped") node = this.marker("stopped", t("stopped"));
    else if (message.kind === "error") node = this.errorMarker(message.text, message.detail ?? {});
    if (node) node.dataset.messageIds = message.id; // a version of an answer may begin with it: its arrows go here
    this.turn = null;
  }

  // A question the run asked, as it was answered: the same card, closed, above the tool call it was about.
  historyApproval(message) {
    const facts = message.detail ?? {};
    const card = permissionCard(this.conversationId, {
      id: facts.question, tool: facts.tool, preview: message.text, level: facts.level, effect: facts.effect,
      categories: facts.categories ? String(facts.categories).split(" ") : [], options: [facts.decision],
    });
    card.dataset.history = "1"; // which window gave an answer is not kept
    const closed = facts.closed ?? "";
    permissionAnswered(card, facts.decision, facts.by ?? "", closed === "expired", closed === "unattended", closed === "stopped");
    this.questions.set(facts.question, card);
    this.placeQuestion(card, facts.tool_use_id);
  }

  // Right above the tool card it asks about, live and after a reload alike: the question and its answer are read
  // first, then what the tool did, then the text that follows (under it, the finished row came before the card that
  // allowed it; appended, a replayed question landed wherever the turn had got to).
  placeQuestion(card, toolUseId) {
    const tool = this.cards.get(toolUseId);
    if (tool?.isConnected) tool.before(card);
    else (this.turn ?? this.newTurn()).body.append(card);
  }

  // ---- live events ----
  apply(event) {
    if (event.conversation && event.conversation !== this.conversationId) return; // never another chat's
    const actor = event.actor && event.actor !== "group" ? event.actor : null;
    if (actor?.startsWith("worker-")) { this.workerEvent(actor, event); this.scroll(); return; }
    if (actor) { this.actor = actor; this.turn = this.actorTurns.get(actor) ?? null; }
    const handler = this[`on_${event.type}`];
    if (handler) handler.call(this, event);
    if (actor) {
      if (event.type === "done" || event.type === "error") this.turn = null; // that actor's bubble is complete
      if (this.turn) this.actorTurns.set(actor, this.turn);
      else this.actorTurns.delete(actor);
      this.actor = null;
      this.turn = this.actorTurns.get("commander") ?? null;
    }
    this.scroll();
  }

  // ---- the group's own events ----
  on_group_message(event) {
    const message = event.message;
    if (!message.dispatch) return; // bubbles stream in live; the person's own is drawn by user_message
    // The commander's words before a dispatch end its segment: what it says next comes after the agents.
    // Every ask of that step goes in that segment's bubble, as a reload draws them from the bus (the second
    // of two parallel asks landed after the first agent's answer). Its cost line goes with the commander's
    // last segment, which the bus gives the whole run's usage.
    const commander = this.actorTurns.get("commander");
    if (commander) {
      this.asking = commander;
      commander.foot.textContent = "";
    }
    this.dispatchCard(message, this.asking?.body ?? this.container);
    this.actorTurns.delete("commander");
    if (this.turn === commander) this.turn = null;
  }

  on_group_start(event) {
    // A group turn begins (from this window, the phone or `orkas run`): who holds the floor as it starts.
    this.hooks.onFloor?.(event.floor);
  }

  on_state_changed(event) {
    this.hooks.onFloor?.(event.floor);
  }

  on_unknown_mentions(event) {
    this.marker("warning", t("unknownMentions", { names: event.names.map((n) => `@${n}`).join(", "), to: event.delivered_to }));
  }

  on_turn_end(event) {
    // Stopped while its asks were out: the commander's run so far is said on the bubble holding them (the bus keeps
    // it with the run's empty Stop segment, drawn there after a reload).
    const asking = this.asking;
    if (event.aborted && asking && !this.actorTurns.get("commander") && (asking.input || asking.output)) this.footer(asking);
    this.asking = null;
    if (event.aborted) this.marker("stopped", t("stopped"));
    for (const turn of this.actorTurns.values()) turn.el.classList.add("finished");
    for (const card of this.workers.values()) card.classList.add(event.aborted ? "failed" : "finished");
    this.actorTurns.clear();
    this.workers.clear();
    this.closeOpenCards();
    this.turn = null;
    this.hooks.onFloor?.(event.floor);
  }

  // An anonymous worker: a collapsed progress card in the commander's bubble, never a bubble of its own.
  workerEvent(worker, event) {
    let card = this.workers.get(worker);
    if (!card) {
      const host = this.actorTurns.get("commander")?.body ?? this.container;
      card = el("details", "worker-card running");
      card.dataset.worker = worker;
      card.append(el("summary", "", t("workerRunning")));
      host.append(card);
      this.workers.set(worker, card);
    }
    if (event.type === "tool_end") card.append(el("div", "worker-step", event.name));
    if (event.type === "done" || event.type === "error") {
      card.classList.remove("running");
      card.classList.add(event.type === "done" ? "finished" : "failed");
      card.querySelector("summary").textContent = event.type === "done" ? t("workerDone") : t("workerFailed");
    }
  }

  dispatchCard(message, host) {
    if (this.cards.has(message.id)) return;
    const card = el("details", "dispatch-card");
    card.dataset.messageId = message.id;
    card.append(el("summary", "", t("dispatched", { to: message.to.join(", ") })), el("div", "dispatch-text", message.dispatch));
    // To the agent's answer: its first bubble after this card.
    const show = el("button", "small link", t("showAnswer"));
    show.type = "button";
    show.addEventListener("click", () => {
      const answers = [...this.container.querySelectorAll(`.msg.agent[data-actor="${CSS.escape(message.to[0])}"]`)];
      const answer = answers.find((node) => card.compareDocumentPosition(node) & Node.DOCUMENT_POSITION_FOLLOWING);
      if (answer) { revealInChat(answer); answer.classList.add("highlight"); }
    });
    card.append(show);
    host.append(card);
    this.cards.set(message.id, card);
  }

  // ---- a group's history: the bus ----
  renderGroupHistory(records, unsent = []) {
    if (!records.length && !unsent.length) this.container.append(el("p", "empty", t("emptyChat")));
    this.drawing = [];
    let commander = null;
    let stopped = false;
    const endTurn = () => {
      if (stopped) this.marker("stopped", t("stopped"));
      stopped = false;
    };
    for (const record of records) {
      if (record.from === "user") {
        endTurn();
        this.userBubble(record.id, record.text, record.attachments ?? []);
        commander = null;
      } else if (record.dispatch) {
        if (!commander) { // asked with no words first: live, the commander's bubble opened all the same
          this.actor = "commander";
          commander = this.newTurn();
          this.actor = null;
          commander.el.classList.add("finished");
        }
        this.dispatchCard(record, commander.body);
      } else if (record.from === "commander" && !record.text && !record.process?.length && !record.failure) {
        stopped ||= Boolean(record.stopped); // a Stop's empty segment: nothing said, no bubble
        // Its run's cost, on its newest bubble (as live).
        if (commander && (record.usage || record.counted_so_far)) this.spentAsRecorded(commander, record);
      } else {
        this.actor = record.from;
        const turn = this.newTurn();
        this.actor = null;
        turn.el.dataset.messageId = record.id;
        this.historyBubble(turn, record);
        // As live: the failure in the views' words when the record says what failed (a limit reached, with its button).
        if (record.failure && record.extra?.error) this.errorMarker(record.failure, { error: record.extra.error, cause: record.extra.cause });
        else if (record.failure) turn.body.append(el("div", "notice error", record.failure));
        stopped ||= Boolean(record.stopped); // the person's Stop, not a failure: said once, after the turn
        this.spentAsRecorded(turn, record);
        turn.el.classList.add("finished");
        commander = record.from === "commander" ? turn : commander;
      }
    }
    endTurn();
    for (const message of unsent) this.on_message_not_sent({ ...message, kind: "no_provider" });
    this.turn = null;
    this.finishHistory();
  }

  // A group bubble's words and its trail, interleaved where each step came (`at`: how much of its text preceded it),
  // as live: words, the card, the words after it (a reload drew all the words, then every card). A record kept
  // before `at` was: its words, then its steps.
  historyBubble(turn, record) {
    const text = record.text ?? "";
    let from = 0;
    const say = (upTo) => {
      const part = text.slice(from, upTo).trim();
      from = Math.max(from, upTo);
      if (!part) return;
      turn.segment = null;
      this.segment(turn).raw = part;
      this.paint(turn.segment);
    };
    const steps = record.process ?? [];
    if (!steps.some((step) => typeof step.at === "number")) say(text.length);
    steps.forEach((step, i) => {
      if (typeof step.at === "number") say(Math.min(step.at, text.length));
      this.historyStep(turn, `${record.id}:${i}`, step);
    });
    say(text.length);
  }

  // One step of a group bubble's trail: a worker's task, or a tool call with the question it asked, answered.
  historyStep(turn, id, step) {
    if (step.worker) {
      turn.body.append(el("div", `worker-card ${step.ok ? "finished" : "failed"}`, t(step.ok ? "workerDone" : "workerFailed")));
      return;
    }
    if (!step.tool) return;
    if (ASKS.has(step.tool)) { // an ask that failed, as it was said live
      if (!step.ok) turn.body.append(askFailed(step.failed ?? ""));
      return;
    }
    const card = toolRecorded(id, step);
    this.cards.set(id, card);
    turn.body.append(card);
    if (step.approval) this.historyApproval({ text: step.approval.preview ?? "", detail: { ...step.approval, tool_use_id: id } });
  }

  // A bus record's usage and cost on a bubble's line (`counted_so_far`: stopped mid-call, what was counted by then,
  // as live).
  spentAsRecorded(turn, record) {
    turn.input = record.usage?.input ?? 0;
    turn.output = record.usage?.output ?? 0;
    turn.cost = record.cost ?? null;
    turn.partial = Boolean(record.counted_so_far);
    this.footer(turn);
  }

  on_title_changed(event) {
    this.hooks.onTitle?.(event.title); // named by a short model call after the first answer
  }

  on_instructions(event) {
    this.hooks.onInstructions?.(event); // the header says which instruction files this run reads
  }

  on_history_changed() {
    this.hooks.onHistoryChanged?.(); // an edit or another version elsewhere (another window, the phone)
  }

  on_user_message(event) {
    this.lastUser = event.message_id;
    for (const old of this.container.querySelectorAll(".marker .continue")) old.remove(); // a new turn began
    if (event.text === this.hooks.continueNote) {
      this.container.querySelector(".marker.cut-off")?.remove();
      this.marker("continued", t("continued"));
      this.turn = null;
      this.setRunning(true);
      return;
    }
    if (event.from_queued?.length) {
      for (const id of event.from_queued) this.markQueued(id, "applied");
      this.turn = null;
      return;
    }
    const resent = this.bubbles.get(event.message_id);
    if (resent) { // a message once not sent, sent now: the same bubble, now part of the conversation
      resent.classList.remove("not-sent");
      resent.querySelector(".not-sent-actions")?.remove();
      resent.querySelector(".badge")?.remove();
      this.container.append(resent);
    } else this.userBubble(event.message_id, event.text, event.attachments ?? []);
    this.turn = null;
    this.setRunning(true);
    this.scroll(true); // a new turn: whatever was being read, its answer is what comes next
  }

  // Nothing could answer (no provider yet): the message stays, marked, with what to do about it.
  on_message_not_sent(event) {
    const bubble = this.bubbles.get(event.message_id) ?? this.userBubble(event.message_id, event.text, event.attachments ?? []);
    bubble.classList.add("not-sent");
    bubble.querySelector(".not-sent-actions")?.remove();
    const badge = bubble.querySelector(".badge") ?? bubble.appendChild(el("span", "badge"));
    badge.textContent = t("notSentYet");
    const actions = el("div", "not-sent-actions");
    const reason = event.kind === "no_provider" ? t("noProviderYet") : event.reason;
    actions.append(el("p", "hint", reason));
    const button = (label, className, action) => {
      const node = el("button", `small ${className}`, label);
      node.type = "button";
      node.addEventListener("click", () => action(event.message_id));
      return node;
    };
    if (event.kind === "no_provider") actions.append(button(t("openProviders"), "providers", () => this.hooks.onOpenProviders?.()));
    actions.append(
      button(t("resend"), "resend", (id) => this.hooks.onResend?.(id)),
      button(t("discard"), "discard", (id) => this.hooks.onDiscard?.(id)),
    );
    bubble.append(actions);
  }

  on_unsent_discarded(event) {
    this.bubbles.get(event.message_id)?.remove();
    this.bubbles.delete(event.message_id);
  }

  on_message_queued(event) {
    if (this.bubbles.has(event.message_id)) return;
    const bubble = this.userBubble(event.message_id, event.text, event.attachments ?? []);
    bubble.classList.add("queued");
    bubble.append(el("span", "badge", t("queued")));
  }

  on_steer_applied(event) {
    this.markQueued(event.message_id, "applied");
    const bubble = this.bubbles.get(event.message_id);
    if (bubble) this.container.append(bubble); // it joined here: what follows answers it
    this.turn = null;
  }

  on_queued_applied(event) {
    // the queued bubbles become the next turn's message (its user_message follows with from_queued)
    for (const id of event.message_ids) this.markQueued(id, "applied");
    this.turn = null;
  }

  on_queued_dropped(event) {
    const texts = [];
    for (const id of event.message_ids) {
      this.markQueued(id, "notSent");
      const bubble = this.bubbles.get(id);
      if (bubble) texts.push(bubble.querySelector(".text")?.textContent ?? "");
    }
    this.hooks.onQueuedDropped?.(texts.join("\n"));
  }

  on_run_start(event) {
    this.setRunning(true);
    this.afterIdle = null; // another turn began (a queued message): an action pressed on the last one is not done
    const turn = this.turn ?? this.newTurn();
    turn.el.dataset.model = event.model;
  }

  on_text_delta(event) {
    const turn = this.turn ?? this.newTurn();
    this.segment(turn).raw += event.text;
    this.paint(turn.segment);
  }

  on_thinking_delta(event) {
    this.thinking(this.turn ?? this.newTurn()).append(event.text);
  }

  on_tool_start(event) {
    const turn = this.turn ?? this.newTurn();
    if (!ASKS.has(event.name)) this.addTool(turn, event.id, event.name, event.input, event.summary);
    turn.segment = null;
    turn.thinking = null;
  }

  on_tool_progress(event) {
    const card = this.cards.get(event.id);
    if (card) toolProgress(card, event.message);
  }

  on_tool_end(event) {
    if (ASKS.has(event.name)) {
      const said = event.content.filter((b) => b.type === "text").map((b) => b.text).join(" ");
      // An ask the person's Stop cut short did not fail: the turn's one "Stopped" says it.
      if (event.is_error && !event.stopped) (this.turn ?? this.newTurn()).body.append(askFailed(said));
      return;
    }
    const card = this.cards.get(event.id);
    if (card) toolFinished(card, { content: event.content, isError: event.is_error, duration: event.duration });
    const change = event.details ?? {};
    const kept = change.entry && ["add", "replace"].includes(change.action);
    if (card && event.name === "memory" && !event.is_error && (kept || (change.action === "remove" && change.removed))) {
      card.after(rememberedLine(change, this.hooks.onError));
    }
  }

  on_permission_request(event) {
    if (this.questions.has(event.id)) return;
    const card = permissionCard(this.conversationId, event);
    this.questions.set(event.id, card);
    this.placeQuestion(card, event.tool_use_id);
    if (this.turn) this.turn.segment = null;
    this.hooks.follower?.approval(card);
    if (!ANNOUNCED.has(event.id)) { // once: a reconnect or a chat opened again replays the question
      ANNOUNCED.add(event.id);
      this.hooks.onAnnounce?.(t("approvalNeeded", { tool: event.tool, preview: shorten(event.preview ?? "", 80) }));
    }
  }

  on_permission_answered(event) {
    const card = this.questions.get(event.question_id);
    if (card) permissionAnswered(card, event.decision, event.by, event.expired, event.unattended, event.stopped);
    if (card) this.hooks.follower?.answered(card);
  }

  on_retry(event) {
    this.notice("retry", t("retrying", { attempt: event.attempt, wait: Math.round(event.wait), reason: event.reason }));
  }

  on_compaction(event) {
    this.notice("compaction", t("compacted", { method: event.method, before: event.tokens_before, after: event.tokens_after }));
  }

  on_provider_fallback(event) { this.notice("fallback", t("fallback", { message: event.message })); }
  on_loop_warning(event) { this.notice("warning", t("loopWarning", event)); }
  on_warning(event) { this.notice("warning", event.message); }

  on_usage(event) {
    // A Stop cut a group commander's call while its asks were out: what it had spent goes on its newest bubble, the
    // one holding the asks (the bus keeps it with the run's empty Stop segment, drawn there after a reload).
    const turn = this.turn ?? (this.actor === "commander" && event.partial ? this.asking : null);
    if (!turn) return;
    turn.input = event.total.input_tokens ?? 0;
    turn.output = event.total.output_tokens ?? 0;
    turn.cost = event.total_cost;
    turn.partial ||= Boolean(event.partial); // a call stopped or cut before the provider's final count
    this.footer(turn);
  }

  on_done(event) {
    const turn = this.turn;
    if (turn) {
      if (event.cost !== null && event.cost !== undefined) turn.cost = event.cost;
      turn.input = event.usage.input_tokens ?? turn.input;
      turn.output = event.usage.output_tokens ?? turn.output;
      this.footer(turn);
      this.turnActions(turn);
      turn.el.classList.add("finished");
    }
    if (!this.actor) this.writingUp = true; // its buttons are out: the run only writes up until idle
    if (event.stop_reason === "max_tokens") this.cutOff();
    this.closeOpenCards();
    if (event.text) this.hooks.onAnnounce?.(event.text); // the finished turn, once
  }

  on_error(event) {
    if (this.turn) this.turn.el.classList.add("finished");
    if (!this.actor) this.writingUp = true;
    this.closeOpenCards();
    if (event.kind === "aborted") {
      // A group's Stop ends every actor's run: its one marker comes with the turn's end (on_turn_end).
      // In a one-agent chat, what was written so far can be continued or answered again at once (they showed
      // only after a reload).
      if (!this.actor) {
        if (this.turn) this.turnActions(this.turn);
        this.offerContinue(this.marker("stopped", t("stopped")));
      }
    } else this.errorMarker(event.message, { error: event.kind, cause: event.cause, attempts: event.attempts });
    this.turn = null;
  }

  on_idle() {
    this.setRunning(false);
    this.turn = null;
    const pressed = this.afterIdle;
    this.afterIdle = null;
    if (pressed) this.once(pressed);
  }

  // ---- building blocks ----
  setRunning(running) {
    this.running = running;
    this.writingUp = false;
    this.hooks.onRunning?.(running);
  }

  // A blank chat's placeholder goes with its first message. Not looked for while a history is drawn (its container
  // started empty): a search of the whole chat for each of 2,000 messages made opening a long chat quadratic.
  dropEmpty() {
    if (!this.drawing) this.container.querySelector(".empty")?.remove();
  }

  userBubble(id, text, files) {
    this.dropEmpty();
    const bubble = el("div", "msg user");
    bubble.dataset.messageId = id;
    bubble.dataset.number = ++this.asked;
    bubble.setAttribute("role", "article");
    bubble.setAttribute("aria-label", t("youSaid"));
    if (text) bubble.append(el("div", "text", text), copyButton(() => text, t("copyYourMessage", { n: this.asked })));
    if (text && this.single) bubble.append(this.editButton(bubble, id, text));
    if (text && this.hooks.onRewind) bubble.append(this.rewindButton(bubble, id, text));
    if (files.length) {
      const chips = el("div", "chips");
      for (const file of files) chips.append(el("span", "chip", file.name));
      bubble.append(chips);
      for (const file of files) if (file.id && IMAGE_TYPES.has(file.media_type)) bubble.append(this.inlineImage(file));
    }
    this.container.append(bubble);
    this.bubbles.set(id, bubble);
    return bubble;
  }

  // An attached image, shown in the bubble: fetched with the token (a plain <img src> could not carry
  // it) and drawn from a blob: URL, the only kind the page's policy lets an image come from.
  inlineImage(file) {
    const image = el("img", "inline-image");
    image.alt = file.name;
    image.loading = "lazy";
    image.addEventListener("load", () => this.hooks.follower?.grew()); // grown after it was drawn: still at the newest
    download(`/api/conversations/${this.conversationId}/attachments/${encodeURIComponent(file.id)}`, "blob")
      .then((blob) => { image.src = URL.createObjectURL(blob); })
      .catch(() => image.remove()); // gone since (the file was removed): the chip still names it
    return image;
  }

  markQueued(id, state) {
    const bubble = this.bubbles.get(id);
    if (!bubble) return;
    bubble.classList.remove("queued");
    bubble.classList.toggle("not-sent", state === "notSent");
    const badge = bubble.querySelector(".badge") ?? bubble.appendChild(el("span", "badge"));
    badge.textContent = t(state);
  }

  newTurn() {
    this.dropEmpty();
    const node = el("div", "msg assistant");
    node.dataset.number = ++this.answers;
    node.setAttribute("role", "article");
    const speaker = this.actor && this.actor !== "commander" ? this.actor : null;
    node.setAttribute("aria-label", speaker ? t("agentAnswered", { name: speaker }) : t("orkasAnswered"));
    const body = el("div", "body");
    const foot = el("div", "turn-foot");
    if (this.actor && this.actor !== "commander") { // an agent's own bubble, with its name
      node.classList.add("agent");
      node.dataset.actor = this.actor;
      node.append(el("div", "actor", this.actor));
    } else if (this.actor) node.dataset.actor = "commander";
    node.append(body, foot);
    this.container.append(node);
    const turn = { el: node, body, foot, segment: null, thinking: null, input: 0, output: 0, cost: null, partial: false,
      segments: [], question: this.lastUser };
    // Shown with the answer's first text: an answer that is only an error or a tool call has nothing to copy.
    turn.copy = copyButton(() => turn.segments.map((s) => s.raw).join("\n\n").trim(), t("copyAnswer", { n: this.answers }));
    turn.copy.hidden = true;
    node.append(turn.copy);
    this.turn = turn;
    return turn;
  }

  segment(turn) {
    if (!turn.segment) {
      const node = el("div", "markdown");
      const settled = el("div", "settled");
      const tail = el("div", "tail");
      node.append(settled, tail);
      turn.body.append(node);
      // An agent's live text loses its hand-back marker as the bus does (after a reload the bus's own
      // text is shown, where a marker inside code stays as written).
      turn.segment = { node, settled, tail, raw: "", done: 0, pending: false, agent: turn.el.classList.contains("agent") };
      turn.segments?.push(turn.segment);
      if (turn.copy) turn.copy.hidden = false;
      turn.thinking = null;
    }
    return turn.segment;
  }

  // Incremental: the blocks that can no longer change (everything before the last blank line outside
  // a code fence) are drawn once and kept; only the open block at the end is drawn again each frame.
  // Redrawing the whole reply every frame was quadratic in its length.
  paint(segment) {
    if (this.drawing) { // history being drawn: once, at the end (finishHistory)
      if (!this.drawing.includes(segment)) this.drawing.push(segment);
      return;
    }
    if (segment.pending) return;
    segment.pending = true;
    requestAnimationFrame(() => {
      segment.pending = false;
      const raw = segment.agent ? segment.raw.replace(HANDBACK, "") : segment.raw;
      const boundary = settledUpTo(raw);
      if (boundary > segment.done) {
        segment.settled.append(renderMarkdown(raw.slice(segment.done, boundary)));
        segment.done = boundary;
      }
      segment.tail.replaceChildren(renderMarkdown(raw.slice(segment.done)));
      this.scroll();
    });
  }

  thinking(turn) {
    if (!turn.thinking) {
      const box = el("details", "thinking");
      box.append(el("summary", "", t("thinking")));
      const text = el("div", "thinking-text");
      box.append(text);
      turn.body.append(box);
      turn.thinking = text;
      turn.segment = null;
    }
    return turn.thinking;
  }

  addTool(turn, id, name, input, summary) {
    if (this.cards.has(id)) return;
    if (name === "memory" && input?.action === "add") this.memoryCalls.set(id, { target: input.target ?? "notes", entry: input.text });
    const card = toolCard(id, name, input, summary);
    this.cards.set(id, card);
    turn.body.append(card);
  }

  // What a run's end leaves running was cut short. In a group only the ending actor's own cards: the coder's
  // answer ending must not mark the commander's call still waiting for it as failed.
  closeOpenCards() {
    const scope = this.actor ? this.turn?.el : this.container;
    for (const card of this.cards.values()) {
      if (card.classList.contains("running") && scope?.contains(card)) {
        card.classList.remove("running");
        card.classList.add("failed");
      }
    }
  }

  // What the answer used and cost. A partial answer (stopped, or its stream cut) is counted only as far as the
  // provider had counted: "at least" that, and never a $0.0000 read as free when it had counted nothing.
  footer(turn) {
    const parts = [];
    const counted = turn.input || turn.output;
    // Stopped or cut, the provider had counted the input as the answer began, and the output only as one token
    // (Anthropic's count at the start): "1 out" under a long answer read as a wrong count.
    if (counted && turn.partial) parts.push(t("tokensInOnly", { input: turn.input }));
    else if (counted) parts.push(t("tokens", { input: turn.input, output: turn.output }));
    if (turn.partial && !counted) parts.push(t("costNotKnown"));
    else if (turn.cost !== null && turn.cost !== undefined) {
      parts.push(t(turn.partial ? "costAtLeast" : "cost", { cost: costFigure(turn.cost) }));
    }
    turn.foot.textContent = parts.join(" · ");
  }

  notice(kind, text) {
    const target = this.turn ? this.turn.body : this.container;
    target.append(el("div", `notice ${kind}`, text));
    if (this.turn) this.turn.segment = null;
  }

  marker(kind, text) {
    const node = el("div", `marker ${kind}`, text);
    this.container.append(node);
    return node;
  }

  // ---- per-message actions: edit and resend, another answer, retry, continue, versions ----
  action(label, className, run) {
    const button = el("button", `small ${className}`);
    button.type = "button";
    button.title = label;
    button.setAttribute("aria-label", label);
    button.addEventListener("click", run);
    return button;
  }

  editButton(bubble, id, text) {
    return this.action(t("editYourMessage", { n: bubble.dataset.number }), "edit-message", () => this.startEdit(bubble, id, text));
  }

  // Back to before this message: the conversation, its files, or both (rewind.js previews and asks).
  rewindButton(bubble, id, text) {
    // Offered while a reply is written too: the preview then says to wait for it or stop it (a silent button was not).
    return this.action(t("rewindYourMessage", { n: bubble.dataset.number }), "rewind-message", () => this.hooks.onRewind(id, text));
  }

  // The last message the person wrote, in edit mode (↑ in an empty composer).
  editLast() {
    const bubbles = [...this.container.querySelectorAll(".msg.user:not(.queued):not(.not-sent)")];
    bubbles.at(-1)?.querySelector(".edit-message")?.click();
  }

  startEdit(bubble, id, text) {
    if (bubble.querySelector(".editor") || this.running) return;
    const editor = el("form", "editor");
    const box = el("textarea", "");
    box.value = text;
    box.setAttribute("aria-label", t("editMessage"));
    box.rows = Math.min(12, text.split("\n").length + 1);
    const cancel = el("button", "small", t("cancel"));
    cancel.type = "button";
    const send = el("button", "small primary", t("sendEdit"));
    send.type = "submit";
    const buttons = el("div", "editor-buttons");
    buttons.append(cancel, send);
    editor.append(box, buttons);
    const close = () => { editor.remove(); bubble.classList.remove("editing"); };
    // Given up: back on the button that opened it, not on the page (the box the focus was in is gone).
    const giveUp = () => { close(); bubble.querySelector(".edit-message")?.focus(); };
    cancel.addEventListener("click", giveUp);
    box.addEventListener("keydown", (event) => {
      if (event.key === "Escape") { event.stopPropagation(); giveUp(); }
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) {
        event.preventDefault();
        // A repeat is the Enter that opened the editor from its button, still held: the person has not seen the
        // editor yet. Only an Enter pressed in it sends (as after a click).
        if (!event.repeat) editor.requestSubmit();
      }
    });
    editor.addEventListener("submit", (event) => {
      event.preventDefault();
      if (!box.value.trim()) return;
      close();
      this.hooks.onEdit?.(id, box.value);
    });
    bubble.classList.add("editing");
    bubble.append(editor);
    // Opened by ↑ on a message scrolled out of sight, the box was typed into unseen, and the chat kept following
    // the bottom: brought into view, and the chat stays there while the person edits.
    revealInChat(editor, "nearest");
    box.focus({ preventScroll: true });
    box.setSelectionRange(box.value.length, box.value.length);
  }

  // "Another answer" on a finished reply: answers the person's message before it again.
  turnActions(turn) {
    if (!this.single || !turn.question || turn.el.querySelector(".regenerate")) return;
    const question = turn.question;
    const label = t("regenerateAnswer", { n: turn.el.dataset.number });
    turn.el.append(this.action(label, "regenerate", () => this.once(() => this.hooks.onRegenerate?.(question))));
  }

  cutOff() {
    if (!this.single) return;
    this.offerContinue(this.marker("cut-off", t("cutOff")));
  }

  // Continue, on the marker of an answer that ended early (cut off, or stopped): the newest only.
  offerContinue(node) {
    if (!this.single || !node) return;
    for (const old of this.container.querySelectorAll(".marker .continue")) old.remove();
    const label = this.answers ? t("continueAnswerN", { n: this.answers }) : t("continueAnswer"); // which one, said
    node.append(" ", this.action(label, "continue", () => this.once(() => this.hooks.onContinue?.())));
    node.querySelector(".continue").textContent = t("continueAnswer");
  }

  // An error in words a person understands, what to do about it, and the technical detail one click away.
  errorMarker(message, detail) {
    const node = this.marker("error", "");
    node.setAttribute("role", "alert");
    const known = `err_${detail.cause || ""}`;
    const wording = t(known) !== known ? known : `err_${detail.error || "provider"}`;
    const words = t(wording) !== wording ? t(wording, { attempts: detail.attempts || 1 }) : message;
    node.append(el("p", "error-words", words));
    const row = el("div", "error-actions");
    if (this.single && this.lastUser) {
      const question = this.lastUser;
      const asked = this.bubbles.get(question)?.dataset.number;
      const label = asked ? t("retryYourMessage", { n: asked }) : t("retry");
      const retry = this.action(label, "retry", () => this.once(() => this.hooks.onRegenerate?.(question)));
      retry.textContent = t("retry");
      row.append(retry);
    }
    if (["auth", "billing", "not_found", "budget"].includes(detail.cause) || ["auth", "budget"].includes(detail.error)) {
      const budget = detail.cause === "budget" || detail.error === "budget"; // the limits live in Settings → Usage
      const open = budget ? () => this.hooks.onOpenUsage?.() : () => this.hooks.onOpenProviders?.();
      const settings = this.action(t("openSettings"), "open-settings", open);
      settings.textContent = t("openSettings");
      row.append(settings);
    }
    const more = el("details", "error-details");
    more.append(el("summary", "", t("errorDetails")), el("code", "", message));
    row.append(more);
    node.append(row);
    return node;
  }

  showVersions(versions) {
    const held = this.heldArrow();
    for (const node of this.container.querySelectorAll(".versions")) node.remove();
    for (const version of versions) this.versionArrows(version);
    if (held) this.focusVersion(held);
  }

  // The version arrow that has the focus, as what finds it again once the chat is drawn anew (a switch redraws
  // it: the focus fell to the page, and the next Tab started at the top of the window).
  heldArrow() {
    const button = document.activeElement?.closest?.(".versions button");
    if (!button || !this.container.contains(button)) return null;
    return { after: button.parentElement.dataset.after, arrow: button.classList.contains("version-next") ? "version-next" : "version-previous" };
  }

  // On the message the versions differ from: the person's (edits: versions of the prompt) or the answer's
  // first part (another answer, a retry: versions of the answer), never one mixing both.
  versionArrows(version) {
    const bubble = this.bubbles.get(version.message_id)
      ?? this.container.querySelector(`[data-message-ids~="${CSS.escape(version.message_id)}"]`)
      ?? this.answerTo(version.after);
    if (!bubble) return;
    const nav = el("div", "versions");
    nav.setAttribute("role", "group"); // a screen reader says whose versions the arrows move between
    const mine = bubble.classList.contains("user");
    const number = bubble.dataset.number ?? this.answerTo(version.after)?.dataset.number ?? "";
    if (number) nav.setAttribute("aria-label", t(mine ? "versionsOfMessage" : "versionsOfAnswer", { n: number }));
    nav.dataset.after = version.after;
    nav.dataset.shown = t("versionShown", { at: version.index + 1, of: version.count });
    const go = (index) => () => this.hooks.onVersion?.(version.after, index);
    const back = this.action(t("previousVersion"), "version-previous", go(version.index - 1));
    const next = this.action(t("nextVersion"), "version-next", go(version.index + 1));
    back.disabled = version.index === 0;
    next.disabled = version.index === version.count - 1;
    nav.append(back, el("span", "version-count", t("versionOf", { at: version.index + 1, of: version.count })), next);
    bubble.append(nav);
  }

  // After a switch the chat is drawn anew: the arrow pressed, on the redrawn message, has the focus again (the
  // other one when it cannot be pressed any more, at the first or last version). Returns what version shows, to
  // be said aloud, or "" when those arrows are not drawn (yet).
  focusVersion({ after, arrow }) {
    const nav = [...this.container.querySelectorAll(".versions")].find((node) => node.dataset.after === after);
    const button = [nav?.querySelector(`.${arrow}`), ...(nav?.querySelectorAll("button") ?? [])].find((b) => b && !b.disabled);
    if (!button) return "";
    revealInChat(button, "nearest");
    button.focus({ preventScroll: true });
    return nav.dataset.shown;
  }

  // The answer drawn live after the person's message `id` (a live bubble does not know its message's id yet).
  answerTo(id) {
    let node = this.bubbles.get(id)?.nextElementSibling;
    while (node && !node.matches(".msg.assistant, .marker.error, .marker.stopped")) node = node.nextElementSibling;
    return node ?? null;
  }

  // One at a time: a click while the last one is on its way, or while a reply is being written, does nothing
  // (five quick clicks on "Another answer" made a phantom version and a pile of error toasts).
  once(run) {
    if (this.sending) return;
    if (this.running) {
      // Another answer, Retry or an edit pressed as soon as the answer (or its error) shows: the run is only writing
      // it up, so it is done once the run is idle rather than dropped. Mid-run, a press is ignored as ever.
      if (this.writingUp) this.afterIdle = run;
      return;
    }
    this.sending = true;
    Promise.resolve(run()).finally(() => { this.sending = false; });
  }

  // Follow the newest content while the person is at the bottom (follow.js); `force`: they are now.
  // Called as anything is drawn (a streamed piece, a card, a picture loaded): pinned to the bottom here, before
  // the frame's layout, when the person is following (follow.js).
  scroll(force = false) {
    const follower = this.hooks.follower;
    if (follower) force ? follower.follow() : follower.grew(true); // what the run said: news below a reader
    else if (force) this.container.parentElement?.scrollTo(0, 1e9);
  }
}

// Copy on every message: the Markdown as written (an answer) or the text as typed (the person's).
// The button holds no text of its own (its icon is CSS), so a bubble's text is only the message.
// `label` says which message ("Copy answer 3"): a screen reader lists every button of the chat alike.
function copyButton(text, label) {
  const button = el("button", "small copy-message");
  button.type = "button";
  button.title = label;
  button.setAttribute("aria-label", label);
  button.addEventListener("click", async () => {
    await navigator.clipboard.writeText(text());
    button.dataset.copied = "true";
    button.setAttribute("aria-label", t("copied"));
    setTimeout(() => { delete button.dataset.copied; button.setAttribute("aria-label", label); }, 1500);
  });
  return button;
}

// Approvals already said aloud on this page, by question id.
const ANNOUNCED = new Set();

export const PAGE = 120; // messages drawn on opening a chat, and per page further up (pages.py)
const MAX_PAGE = 1000; // the most messages one page of history holds (the server's limit)
const EAGER = 30; // answers drawn at once when a history opens; older ones when scrolled near
const DRAW_BUDGET_MS = 8; // of each frame, for drawing answers scrolled near

const IMAGE_TYPES = new Set(["image/png", "image/jpeg", "image/gif", "image/webp"]);

const HANDBACK = /<handback\b[^>]*>(?:\s*<\/handback\s*>)?|<\/handback\s*>/gi;

// "Could not ask: …", live and from the bus: the envelope the commander is handed is never shown.
function askFailed(said) {
  return el("div", "notice error", t("dispatchFailed", { reason: said.replace(ENVELOPE, "").trim() }));
}

// Dollars to four places; a smaller amount with two significant digits (ten tokens read "$0.0000", as if free).
export function costFigure(value) {
  return value > 0 && value < 0.0001 ? value.toFixed(Math.min(10, 1 - Math.floor(Math.log10(value)))) : value.toFixed(4);
}

// Where the finished blocks of a streaming reply end: just after the last blank line that is not
// inside a code fence (a blank line closes every other block this renderer knows).
export function settledUpTo(raw) {
  let fenced = false;
  let boundary = 0;
  let at = 0;
  for (const line of raw.split("\n")) {
    const end = at + line.length + 1;
    if (/^\s*(```|~~~)/.test(line)) fenced = !fenced;
    else if (!fenced && !line.trim() && end <= raw.length) boundary = end;
    at = end;
  }
  return boundary;
}
