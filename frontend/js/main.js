// The app shell: the chat list, the open chat with its live stream, the folders panel, settings.

import { EventStream, del, desktop, download, get, patch, post, put } from "./api.js";
import { el } from "./cards.js";
import { ChatView, costFigure, PAGE } from "./chat.js";
import { ChatOptions } from "./chat_options.js";
import { Composer } from "./composer.js";
import { askConfirm, askText } from "./dialogs.js";
import { InstructionsChip, personalOffer } from "./instructions.js";
import { rewoundNotice, showRewind } from "./rewind.js";
import { reportPageErrors, showCrashNotice } from "./diagnostics.js";
import { routeDrops } from "./drops.js";
import { FindBar } from "./find.js";
import { MemberBar } from "./members.js";
import { Follower } from "./follow.js";
import { firstRunPanel, memoryOffer } from "./first_run.js";
import { reconcileRemembered } from "./remembered.js";
import { openSettings, showSection } from "./settings.js";
import { saveAs } from "./settings_common.js";
import { setLanguage, t } from "./strings.js";

const $ = (selector) => document.querySelector(selector);

const state = {
  current: null, view: null, stream: null, preferences: null, navigation: 0, workspace: null, choosingFolder: null,
};
const follower = new Follower($("#scroll"), $("#waiting-pill"));
let find = null; // the find bar (Ctrl/Cmd+F), also opened by a search result

// A short message; `action` ({ label, run }) adds a button, e.g. Undo after a delete. Errors by
// default; `inform` for news that is not a problem.
function toast(message, action, tone = "") {
  const node = el("div", `toast ${tone}`.trim(), message);
  node.setAttribute("role", tone === "info" ? "status" : "alert");
  if (action) {
    const button = el("button", "small", action.label);
    button.type = "button";
    button.addEventListener("click", guarded(async () => { node.remove(); await action.run(); }));
    node.append(" ", button);
  }
  toastRegion().append(node);
  setTimeout(() => node.remove(), action ? 10000 : 6000);
}

// Over an open modal dialog (Settings, a question) a toast in the page sat under it, all but hidden: it goes into
// the top-most open dialog, where the person is looking.
function toastRegion() {
  const dialog = [...document.querySelectorAll("dialog[open]")].pop();
  if (!dialog) return $("#toasts");
  let region = dialog.querySelector(":scope > .dialog-toasts");
  if (!region) {
    region = el("div", "dialog-toasts");
    dialog.append(region);
  }
  return region;
}

const inform = (message) => toast(message, undefined, "info");

function applyPreferences(preferences) {
  const before = state.preferences?.language;
  state.preferences = preferences;
  document.documentElement.dataset.theme = preferences.theme ?? "system";
  setLanguage(preferences.language);
  if (before !== undefined && before !== preferences.language) relabelAll(); // at once, everywhere
}

// The page's own words: text (data-t), accessible names (data-t-label), tooltips and placeholders.
function translatePage() {
  for (const node of document.querySelectorAll("[data-t]")) node.textContent = t(node.dataset.t);
  for (const node of document.querySelectorAll("[data-t-label]")) node.setAttribute("aria-label", t(node.dataset.tLabel));
  for (const node of document.querySelectorAll("[data-t-title]")) node.title = t(node.dataset.tTitle);
  for (const node of document.querySelectorAll("[data-t-placeholder]")) node.placeholder = t(node.dataset.tPlaceholder);
}

// A language change redraws every word on screen: the page, the composer, the list, the open chat.
function relabelAll() {
  translatePage();
  composer.relabel();
  options.relabel();
  find?.relabel();
  refreshList().catch((error) => toast(error.message));
  if (state.current) openChat(state.current.id).catch((error) => toast(error.message));
  else if (document.body.dataset.ready) relabelBlankPage();
}

// A new chat's blank page in the new language: what was picked on it (members, a folder, a model) stays, and
// the first message still makes the chat with it (drawn afresh, the page forgot them all).
function relabelBlankPage() {
  $("#title").textContent = t("newChat");
  const messages = $("#messages");
  const offered = messages.querySelector(".empty, .first-run, .offer");
  if (offered) {
    offered.replaceWith(el("p", "empty", t("emptyChat")));
    offerFirstRun();
  }
  const folder = messages.querySelector(".chat-folder");
  if (folder) folder.textContent = t("chatFolder", { folder: state.workspace });
  members.showDraft().catch((error) => toast(error.message));
}

// ---- the chat list ----
// Chats another process makes or changes (a terminal's `orkas run`) appear without a reload: the list is asked
// for again every few seconds while the window is seen, and redrawn only when it differs.
const LIST_EVERY_MS = 3000;
let listDrawn = "";
setInterval(() => {
  if (!document.hidden && document.body.dataset.ready && !$("#search").value.trim()) refreshList().catch(() => {});
}, LIST_EVERY_MS);
document.addEventListener("visibilitychange", () => {
  if (!document.hidden && document.body.dataset.ready) refreshList().catch(() => {});
});

async function refreshList(query = $("#search").value.trim()) {
  const list = $("#chats");
  const items = query
    ? (await get(`/api/search?q=${encodeURIComponent(query)}`))
      .map((hit) => ({ ...hit.conversation, snippet: hit.snippet, message: hit.message_id }))
    : await get("/api/conversations");
  const drawn = JSON.stringify([query, state.current?.id ?? null, state.preferences?.language, new Date().toDateString(), items]);
  if (drawn === listDrawn && list.childElementCount) return; // unchanged: an open item menu stays open
  listDrawn = drawn;
  list.replaceChildren();
  if (!items.length) list.append(el("li", "hint", t(query ? "noChatsMatch" : "noChats"))); // not "no chats" for a search
  let heading = null;
  for (const chat of items) {
    const group = query ? null : dateGroup(chat);
    if (group && group !== heading) { // pinned first, then by day: Today, Yesterday, this week, earlier
      heading = group;
      list.append(el("li", "chat-group", t(group)));
    }
    const item = el("li", "chat");
    item.dataset.id = chat.id;
    item.classList.toggle("pinned", Boolean(chat.pinned));
    const open = el("button", "chat-open", chat.title || t("untitled"));
    open.type = "button";
    open.addEventListener("click", guarded(async () => {
      await openChat(chat.id);
      if (query && state.current?.id === chat.id) { // at the matching message, older pages drawn until it is
        await state.view.reveal(chat.message);
        await find.openAt(query, chat.message);
      }
    }));
    // The pin holds no text (its icon is CSS): an entry's text is only its title.
    const pin = el("button", "pin small");
    pin.type = "button";
    pin.setAttribute("aria-label", t(chat.pinned ? "unpin" : "pin"));
    pin.title = t(chat.pinned ? "unpin" : "pin");
    pin.addEventListener("click", guarded(async () => {
      await patch(`/api/conversations/${chat.id}`, { pinned: !chat.pinned });
      await refreshList();
    }));
    item.append(open, pin, itemMenu(chat));
    markOpen(item, state.current?.id);
    if (chat.snippet && chat.snippet !== chat.title) { // the words that matched open the chat as its title does
      const snippet = el("div", "snippet", chat.snippet); // (the keyboard has the title's button: one stop, not two)
      snippet.addEventListener("click", () => open.click());
      item.append(snippet);
    }
    // Its state beside the title, never inside it (a long title's "…" cut the running dot off), and in the name
    // a screen reader says: waiting for the person's approval is not the same as running.
    const doing = chat.waiting ? "waiting" : chat.running ? "running" : "";
    if (doing) {
      item.classList.add(doing);
      const mark = el("span", "chat-state", doing === "waiting" ? "?" : "●");
      mark.title = t(doing === "waiting" ? "chatWaiting" : "chatRunning");
      mark.setAttribute("aria-hidden", "true");
      open.after(mark);
      open.setAttribute("aria-label", `${chat.title || t("untitled")} (${mark.title})`);
    }
    list.append(item);
  }
}

// The open chat, marked in the list: seen (.active) and told to a screen reader (aria-current).
function markOpen(item, openId) {
  const open = item.dataset.id === openId;
  item.classList.toggle("active", open);
  if (open) item.querySelector(".chat-open")?.setAttribute("aria-current", "page");
  else item.querySelector(".chat-open")?.removeAttribute("aria-current");
}

// Each chat's own menu: rename or delete it without opening it first.
function itemMenu(chat) {
  const menu = el("details", "menu item-menu");
  const summary = el("summary", "small");
  summary.setAttribute("aria-label", t("chatActions", { title: chat.title || t("untitled") }));
  summary.title = t("chatActions", { title: chat.title || t("untitled") });
  const items = el("div", "menu-items");
  const entry = (label, action) => {
    const button = el("button", "", label);
    button.type = "button";
    button.addEventListener("click", guarded(async () => { menu.open = false; await action(chat); }));
    return button;
  };
  // Built when opened: a closed menu adds no words to the entry (its text is only the chat's title).
  menu.addEventListener("toggle", () => {
    items.replaceChildren(...(menu.open ? [entry(t("rename"), renameChat), entry(t("delete"), deleteChat)] : []));
    if (menu.open) items.firstChild.focus();
  });
  menu.append(summary, items);
  return menu;
}

function dateGroup(chat) {
  if (chat.pinned) return "pinned";
  const day = (time) => new Date(time).setHours(0, 0, 0, 0);
  const days = Math.round((day(Date.now()) - day(chat.updated * 1000)) / 86_400_000);
  if (days <= 0) return "today";
  if (days === 1) return "yesterday";
  return days < 7 ? "thisWeek" : "earlier";
}

// The header's Granted folders, Rename, Delete and Export act on a chat that exists: a new chat's blank page is made
// into one by its first message, and until then offers none of them.
function offerChatActions(chat) {
  $("#actions").hidden = !chat;
  $("#actions-button").hidden = !chat;
  if (!chat) setActionsMenu(false);
}

// A new chat is a blank page until its first message: no empty "Untitled" entries in the list.
function newChat() {
  ++state.navigation; // a chat still loading must not draw over the blank page
  if (state.current) composer.switchTo(state.current.id, null);
  state.stream?.close();
  state.stream = null;
  state.current = null;
  state.workspace = null; // "In a folder…" sets it after this
  $("#notices .rewound")?.remove(); // a rewind's notice (and its Undo) belongs to its own chat
  state.group = false;
  state.view = null;
  sessionStorage.removeItem("orkas-open");
  $("#title").textContent = t("newChat");
  $("#total").textContent = "";
  members.clearDraft();
  members.showDraft().catch((error) => toast(error.message)); // agents can join before the first message
  instructions.clear();
  $("#folders").hidden = true;
  offerChatActions(null);
  $("#messages").replaceChildren(el("p", "empty", t("emptyChat")));
  follower.reset();
  for (const item of document.querySelectorAll("#chats .chat")) markOpen(item, null);
  options.show(null);
  composer.setRunning(false);
  offerFirstRun();
  composer.input.focus();
}

// The first message of a new chat creates it (then the list shows it, titled by that message).
async function createChat() {
  state.creating = true;
  const chat = await post("/api/conversations", state.workspace ? { workspace: state.workspace } : {});
  state.workspace = null;
  await options.created(chat.id).catch((error) => toast(error.message)); // what was picked on the blank page
  try {
    await members.apply(chat.id); // before the first message: its first turn is the group's
  } catch (error) { // not sent to a chat without the members asked for: the text stays in the box, the chat opens
    await openChat(chat.id);
    await refreshList();
    throw error;
  }
  await openChat(chat.id);
  await refreshList();
  return chat.id;
}

// A chat that works in a folder the person picks (the native picker in the window, a typed path in a browser).
// The server checks the folder first, and the chat is then made by its first message like any new chat: a
// cancelled pick or a refused folder leaves no empty "Untitled chat" behind, and a refused path stays typed.
async function newChatInFolder() {
  // A message sent while the chosen folder is still being checked waits for it: sent at once, it made a chat in the
  // app's own folder instead (ensureChat).
  let chosen;
  state.choosingFolder = new Promise((resolve) => { chosen = resolve; });
  try {
    await chooseFolder();
  } finally {
    state.choosingFolder = null;
    chosen();
  }
}

async function chooseFolder() {
  const bridge = desktop();
  let typed = "";
  let problem = "";
  for (;;) {
    const folder = bridge
      ? await bridge.pick_folder()
      : await askText({ title: t("folderTitle"), label: t("workspacePrompt"), action: t("open"), value: typed, problem });
    if (!folder?.trim()) return;
    try {
      const { workspace } = await post("/api/conversations/workspace", { workspace: folder.trim() });
      newChat();
      state.workspace = workspace;
      $("#title").title = workspace;
      $("#messages").append(el("p", "hint chat-folder", t("chatFolder", { folder: workspace })));
      instructions.show({ workspace }).catch((error) => toast(error.message)); // asked before the first message
      return;
    } catch (error) {
      if (bridge || error.status !== 400) throw error; // the window's picker: said, and picked again at will
      [typed, problem] = [folder, error.message];
    }
  }
}

async function ensureChat() {
  if (state.choosingFolder) await state.choosingFolder;
  return state.current?.id ?? (await createChat());
}

// ---- the open chat ----
async function openChat(id) {
  // Clicking through chats quickly starts several of these at once: only the newest may draw, and the
  // stream of any chat left behind is closed, so one chat's reply never lands in another's view.
  const ticket = ++state.navigation;
  state.stream?.close();
  state.stream = null;
  const [chat, history] = await Promise.all([get(`/api/conversations/${id}`), get(`/api/conversations/${id}/messages?limit=${PAGE}`)]);
  if (ticket !== state.navigation) return; // superseded while loading
  state.stream?.close();
  // The draft belongs to its chat; a new chat's first message is its own text, not a draft to keep.
  if (state.creating) {
    state.creating = false;
    composer.becomes(chat.id);
  } else if (state.current?.id !== chat.id) composer.switchTo(state.current?.id, chat.id);
  state.current = chat;
  for (const notice of document.querySelectorAll("#notices .rewound")) if (notice.dataset.conversation !== chat.id) notice.remove();
  options.show(chat);
  offerChatActions(chat);
  sessionStorage.setItem("orkas-open", id);
  $("#title").textContent = chat.title || t("untitled");
  $("#title").title = chat.workspace;
  for (const item of document.querySelectorAll("#chats .chat")) markOpen(item, id);
  follower.reset();
  const held = state.view?.conversationId === id ? state.view.heldArrow() : null; // a version switch redraws
  const view = new ChatView($("#messages"), id, {
    follower,
    onRunning: (running) => composer.setRunning(running),
    onQueuedDropped: (text) => composer.giveBack(text),
    onOpenProviders: () => showSettings("providers"),
    onOpenUsage: () => showSettings("usage"),
    onError: toast,
    onAnnounce: (text) => { $("#announcer").textContent = text; },
    onResend: guarded((message) => post(`/api/conversations/${id}/unsent/${message}/resend`, {})),
    onDiscard: guarded((message) => post(`/api/conversations/${id}/unsent/${message}/discard`, {})),
    onFloor: (floor) => members.floor(floor),
    onInstructions: (event) => instructions.fromEvent(event),
    onRewind: (message, text) => showRewind({
      conversation: id, message, group: Boolean(history.group), onError: toast,
      onDone: (done) => {
        if (done.conversation) composer.giveBack(text); // as Claude Code does: the message is back in the box
        $("#notices .rewound")?.remove();
        $("#notices").append(rewoundNotice(done, { conversation: id, onError: toast }));
      },
    }).catch((error) => toast(error.message)),
    group: Boolean(history.group),
    continueNote: history.continue_note,
    onEdit: guarded((message, text) => {
      composer.input.focus(); // the editor's box is gone: the person types on in the composer, not on the page
      return post(`/api/conversations/${id}/messages/${message}/edit`, { text });
    }),
    onRegenerate: guarded((message) => {
      composer.input.focus(); // the answer and its buttons are drawn again: the person goes on in the composer
      return post(`/api/conversations/${id}/messages/${message}/regenerate`, {});
    }),
    onContinue: guarded(() => post(`/api/conversations/${id}/continue`, {})),
    onOlder: (before, size = PAGE) => get(`/api/conversations/${id}/messages?limit=${size}&before=${encodeURIComponent(before)}`),
    onVersion: guarded(async (after, index) => {
      await post(`/api/conversations/${id}/versions`, { after, index });
    }),
    onTitle: () => { // named by a model call: the chat's total counts that call too
      refreshTitle(id).then(() => refreshList()).catch(() => {});
      showTotal(id).catch(() => {});
    },
    onHistoryChanged: () => {
      if (state.view !== view) return;
      state.forked = id; // the turn that follows it shows its arrows when it ends
      openChat(id).catch((error) => toast(error.message));
    },
  });
  state.view = view;
  state.group = Boolean(history.group);
  if (history.group) view.renderGroupHistory(history.group, history.unsent ?? []);
  else view.renderHistory(history.messages, history.unsent ?? [], history.versions ?? [], history.older ?? "");
  const shown = held && view.focusVersion(held);
  if (shown) $("#announcer").textContent = shown; // the version now shown, said: the arrows alone said nothing
  reconcileRemembered($("#messages")).catch(() => {}); // an entry already taken back offers no Undo
  members.show(id).catch((error) => toast(error.message));
  showTotal(id).catch(() => {});
  instructions.show({ conversation: id }).catch((error) => toast(error.message));
  composer.setRunning(history.running);
  state.stream = new EventStream(id, history.after, (event) => {
    if (state.view !== view) return; // a stream left behind: its chat is not on screen
    view.apply(event);
    // Never an unhandled rejection: if the server went away meanwhile, the offline banner says so.
    if (event.type === "user_message") refreshTitle(id).then(() => refreshList()).catch(() => {}); // titled at once
    if (event.type === "permission_request" || event.type === "permission_answered") refreshList().catch(() => {});
    if (event.type === "idle") {
      refreshTitle(id).then(() => refreshList()).catch(() => {});
      showTotal(id).catch(() => {});
      instructions.refresh(id).catch(() => {}); // a subfolder's file joined during the run: counted now
      if (view.single && (view.forked || state.forked === id)) {
        get(`/api/conversations/${id}/versions`).then((versions) => {
          if (state.view === view) view.showVersions(versions);
        }).catch(() => {});
      }
    }
  }, (connected) => { if (!state.expired) $("#offline").hidden = connected; });
  $("#folders").hidden = true;
}

// The conversation's total so far (every call, every actor), beside its title.
async function showTotal(id) {
  const usage = await get(`/api/conversations/${id}/usage`);
  if (state.current?.id !== id) return;
  const tokens = usage.input_tokens + usage.output_tokens;
  const said = usage.partial_calls ? "conversationTotalAtLeast" : "conversationTotal"; // a stopped call: so far
  const total = $("#total");
  total.textContent = usage.calls ? t(said, { cost: costFigure(usage.cost), tokens }) : "";
  // The title's call (and a search's reranking) is in the total but on no answer: said, or the sums do not add up.
  if (usage.side_calls && usage.side_cost > 0) total.textContent += ` · ${t("conversationTotalSide", { cost: costFigure(usage.side_cost) })}`;
  if (usage.side_calls) total.title = t("conversationTotalSideWhy");
  else total.removeAttribute("title");
  $("#actions-total").textContent = total.textContent; // narrow, the header has no room: the ⋯ menu says it
}

async function refreshTitle(id) {
  if (state.current?.id !== id) return;
  const chat = await get(`/api/conversations/${id}`);
  // The person may have left while it loaded (New chat, another chat): the answer is no longer the open chat's.
  if (state.current?.id !== id) return;
  state.current = chat;
  $("#title").textContent = chat.title || t("untitled");
}

// Rename and delete, from the header or from a chat's own menu in the list (any chat, not only the open one).
async function renameChat(chat = state.current) {
  if (!chat) return;
  const title = await askText({ title: t("renameTitle"), label: t("renamePrompt"), value: chat.title });
  if (!title) return;
  const renamed = await patch(`/api/conversations/${chat.id}`, { title });
  if (state.current?.id === chat.id) {
    state.current = renamed;
    $("#title").textContent = renamed.title;
  }
  await refreshList();
}

// The shortcuts sheet (Ctrl/Cmd+/): every key the app answers to, in the person's language. A browser tab
// never sees Ctrl+N (Chromium opens a window; a page cannot take it): there it offers Ctrl+Shift+O, as
// ChatGPT does, which a page may take. The window keeps Ctrl+N; both work in it.
function showShortcuts() {
  const sheet = $("#shortcuts");
  const mod = /Mac|iPhone|iPad/.test(navigator.platform) ? "⌘" : "Ctrl";
  const newChatKey = desktop() ? "N" : "Shift+O";
  const rows = [["F", "shortcutFind"], [newChatKey, "newChat"], ["K", "search"], [",", "settings"], ["/", "shortcuts"]];
  const list = el("dl", "shortcut-list");
  for (const [key, label] of rows) list.append(el("dt", "", `${mod}+${key}`), el("dd", "", t(label)));
  list.append(el("dt", "", "Esc"), el("dd", "", t("shortcutStop")), el("dt", "", "Enter"), el("dd", "", t("send")),
    el("dt", "", "Shift+Enter"), el("dd", "", t("shortcutNewLine")), el("dt", "", "↑"), el("dd", "", t("shortcutEditLast")));
  const close = el("button", "", t("close"));
  close.type = "button";
  close.addEventListener("click", () => sheet.close());
  sheet.replaceChildren(el("h2", "", t("shortcuts")), list, close);
  if (!sheet.open) sheet.showModal();
}

// The open chat as Markdown, or as a zip with its records and attachments, saved where the person says.
async function exportChat(format) {
  $("#export").open = false;
  if (!state.current) return;
  const id = state.current.id;
  const blob = await download(`/api/conversations/${id}/export?format=${format}`, "blob");
  // The title as written, in any script ("Migração" was saved as "Migra_o"): only what no file name may hold goes.
  const name = (state.current.title || t("untitled")).replace(/[\\/:*?"<>|\x00-\x1f]+/g, "_").trim() || "conversation";
  saveAs(blob, `${name}.${format}`, format === "md" ? "text/markdown" : "application/zip");
}

async function deleteChat(chat = state.current) {
  if (!chat) return;
  const sure = await askConfirm({ title: t("deleteTitle"), message: t("deleteConfirm"), action: t("moveToRecycle") });
  if (!sure) return;
  const id = chat.id;
  await del(`/api/conversations/${id}`);
  if (state.current?.id === id) {
    state.stream?.close();
    state.current = null;
    await refreshList();
    const next = document.querySelector("#chats .chat")?.dataset.id; // the next chat opens, as in any list
    if (next) await openChat(next);
    else newChat();
  } else await refreshList();
  toast(t("chatDeleted"), { label: t("undo"), run: async () => { // news, not an error: the neutral toast
    await post(`/api/recycle/${id}/restore`, {});
    await refreshList();
    await openChat(id);
  } }, "info");
}

// ---- folders: the workspace and granted folders ----
function showFolders() {
  const panel = $("#folders");
  if (!state.current) return;
  panel.hidden = !panel.hidden;
  if (panel.hidden) return;
  const chat = state.current;
  panel.replaceChildren(el("h3", "", t("workspace")), el("code", "path", chat.workspace), el("h3", "", t("folders")));
  const list = el("ul", "granted");
  for (const folder of chat.granted) {
    const item = el("li", "", "");
    item.append(el("code", "path", folder));
    const remove = el("button", "small", t("remove"));
    remove.type = "button";
    remove.addEventListener("click", guarded(async () => {
      const changed = await post(`/api/conversations/${chat.id}/grants/remove`, { path: folder });
      if (state.current?.id !== chat.id) return; // the person moved on meanwhile
      state.current = changed;
      panel.hidden = true;
      showFolders();
    }));
    item.append(remove);
    list.append(item);
  }
  panel.append(list);
  const form = el("form", "grant");
  const input = el("input");
  input.placeholder = t("folderPath");
  input.setAttribute("aria-label", t("folderPath"));
  const add = el("button", "", t("addFolder"));
  add.type = "submit";
  form.append(input, add);
  const bridge = desktop();
  if (bridge) { // the desktop window has a native folder picker
    const pick = el("button", "", "…");
    pick.type = "button";
    pick.addEventListener("click", async () => { input.value = (await bridge.pick_folder()) ?? input.value; });
    form.append(pick);
  }
  form.addEventListener("submit", guarded(async (event) => {
    event.preventDefault();
    const changed = await post(`/api/conversations/${chat.id}/grants`, { path: input.value.trim() });
    if (state.current?.id !== chat.id) return; // the person moved on meanwhile
    state.current = changed;
    panel.hidden = true;
    showFolders();
  }));
  panel.append(form);
  showProcesses(panel, chat.id);
}

// The conversation's background processes (dev servers, watchers): they outlive a turn, so the person
// can see them and stop them all.
async function showProcesses(panel, id) {
  const processes = await get(`/api/conversations/${id}/processes`);
  const running = processes.filter((p) => p.running);
  if (!processes.length) return;
  const list = el("ul", "processes");
  for (const process of processes) {
    const label = process.running ? t("processRunning") : t("processExited", { code: process.exit_code });
    const item = el("li", "", `${process.id} · ${label} · `);
    item.append(el("code", "path", process.command));
    list.append(item);
  }
  panel.append(el("h3", "", t("processes")), list);
  if (!running.length) return;
  const stop = el("button", "small danger", t("stopAll"));
  stop.type = "button";
  stop.addEventListener("click", guarded(async () => {
    await post(`/api/conversations/${id}/processes/stop`, {});
    panel.hidden = true;
    showFolders();
  }));
  panel.append(stop);
}

// Settings, opened at a section when asked (the not-sent bubble's "Add a provider" opens Providers).
async function showSettings(section) {
  const onOpenChat = guarded(async (id) => {
    $("#settings").close();
    await openChat(id);
  });
  await openSettings($("#settings"), { onPreferences: applyPreferences, onError: toast, onInfo: inform, onOpenChat });
  const target = section && $(`#settings section.${section}`);
  if (target) {
    showSection($("#settings"), target);
    target.querySelector("input, select, button")?.focus();
  }
}

// ---- narrow windows: the chat list as a drawer, the header's actions as a menu ----
const narrow = window.matchMedia("(max-width: 799px)");

function setDrawer(open) {
  const opening = open && narrow.matches;
  document.body.classList.toggle("drawer-open", opening);
  $("#drawer-backdrop").hidden = !opening;
  $("#menu-button").setAttribute("aria-expanded", String(opening));
  if (opening) $("#new-chat").focus();
  else if (open === false && document.activeElement?.closest("#sidebar") && narrow.matches) $("#menu-button").focus();
}

function setActionsMenu(open) {
  $("#chat-head").classList.toggle("actions-open", open && narrow.matches);
  $("#actions-button").setAttribute("aria-expanded", String(open && narrow.matches));
  if (open && narrow.matches) $("#actions button")?.focus();
}

function watchNarrow() {
  $("#menu-button").addEventListener("click", () => setDrawer(!document.body.classList.contains("drawer-open")));
  $("#drawer-backdrop").addEventListener("click", () => setDrawer(false));
  // Anything chosen in the drawer (a chat, New chat, Settings) closes it; so does a wide window.
  $("#sidebar").addEventListener("click", (event) => {
    if (event.target.closest(".chat-open, #new-chat, #settings-button, #new-in-folder")) setDrawer(false);
  });
  $("#actions-button").addEventListener("click", (event) => {
    event.stopPropagation();
    setActionsMenu(!$("#chat-head").classList.contains("actions-open"));
  });
  $("#actions").addEventListener("click", (event) => {
    if (event.target.closest("button:not(summary)") && !event.target.closest("#export summary")) setActionsMenu(false);
  });
  document.addEventListener("click", (event) => { if (!event.target.closest("#chat-head")) setActionsMenu(false); });
  narrow.addEventListener("change", () => { setDrawer(false); setActionsMenu(false); });
}

function guarded(action) {
  return async (...args) => {
    try { await action(...args); } catch (error) { toast(error.message); }
  };
}

// ---- start ----
const composer = new Composer($("#composer"), {
  conversation: ensureChat,
  onError: toast,
  onEditLast: () => state.view?.editLast(),
});
const options = new ChatOptions(composer.form, { onError: toast });
const instructions = new InstructionsChip($("#instructions"), { onError: toast }); // the header's "Instructions: …"
const members = new MemberBar($("#members"), {
  composer,
  onError: toast,
  onChanged: async (id, names) => {
    if (!state.group && names.length) await openChat(id); // it became a group: its history is now the bus
    else await members.show(id);
  },
});
routeDrops(); // a drop on Settings → Knowledge adds the folder; any other, an attachment (drops.js)

// With no model configured, an empty chat offers the first steps instead of an empty page; once there is one,
// it asks once whether to turn memory and learning on (both off until the person says so).
async function offerFirstRun() {
  const status = await get("/api/status").catch(() => null);
  if (status && status.providers.length) { await offerMemory(); await offerPersonal(); return; }
  if (!status) return;
  const empty = $("#messages .empty");
  if (!empty || $("#messages .first-run")) return;
  empty.replaceWith(firstRunPanel({
    openProviders: guarded(() => showSettings("providers")),
    onDone: () => setTimeout(() => $("#messages .first-run")?.remove(), 1500),
    onMessage: toast,
  }));
}

async function offerMemory() {
  const preferences = await get("/api/settings/preferences").catch(() => null);
  const empty = $("#messages .empty");
  if (!preferences || preferences.offered || !empty || $("#messages .first-run")) return;
  empty.replaceWith(memoryOffer({
    save: guarded((change) => put("/api/settings/preferences", change).then(applyPreferences)),
    onDone: () => $("#messages .offer")?.replaceWith(el("p", "empty", t("emptyChat"))),
  }));
}

// Once, on a blank page: the instructions the person keeps for the terminal agents they use (instructions.js).
async function offerPersonal() {
  const preferences = await get("/api/settings/preferences").catch(() => null);
  if (!preferences || preferences.instructions_offered || !$("#messages .empty, #messages .offer")) return;
  const own = await get("/api/personal-instructions").catch(() => null);
  if (!own?.found.length || $("#messages .personal-offer") || state.current) return;
  const panel = personalOffer(own.found, {
    onDone: (how) => panel.replaceWith(el("p", "hint personal-done", t(`personalDone_${how}`))),
    onError: toast,
  });
  $("#messages").append(panel);
}

// What agents learned that waits for the person's OK: said once per start, with a way to it.
async function noticeProposals() {
  const waiting = await get("/api/learning/waiting").catch(() => ({ count: 0 }));
  if (!waiting.count) return;
  const notice = el("div", "notice proposals-waiting");
  notice.setAttribute("role", "status");
  const open = el("button", "small", t("review"));
  open.type = "button";
  open.addEventListener("click", guarded(async () => { notice.remove(); await showSettings("learning"); }));
  notice.append(t("proposalsWaiting", { count: waiting.count }), " ", open);
  $("#notices").append(notice);
}

async function start() {
  // Only the preferences: the whole of /api/settings says where the vault's key is, which wakes the OS keyring
  // (~10 MB and ~80 ms); that waits until Settings is opened.
  const preferences = await get("/api/settings/preferences").catch(() => null);
  applyPreferences(preferences ?? { theme: "system", language: "auto" });
  translatePage();
  $("#skip-link").addEventListener("click", (event) => { event.preventDefault(); composer.input.focus(); });
  $("#new-chat").addEventListener("click", newChat);
  $("#new-in-folder").addEventListener("click", guarded(newChatInFolder));
  $("#rename").addEventListener("click", guarded(() => renameChat()));
  $("#delete").addEventListener("click", guarded(() => deleteChat()));
  find = new FindBar($("#find"), $("#messages"), $("#scroll"), () => composer.input);
  const shortcuts = {
    f: () => find.open(),
    n: () => newChat(),
    "shift+o": () => newChat(), // in a browser tab, where Ctrl+N is the browser's
    k: () => $("#search").focus(),
    ",": guarded(() => showSettings()),
    "/": () => showShortcuts(),
  };
  watchNarrow();
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && (document.body.classList.contains("drawer-open") || $("#chat-head.actions-open"))) {
      setDrawer(false);
      setActionsMenu(false);
      return;
    }
    // Esc stops the turn from anywhere, unless it is closing something (a dialog, an editor, a menu).
    if (event.key === "Escape" && composer.running && !document.querySelector("dialog[open]") && !event.defaultPrevented
        && !event.target.closest?.(".editor, #find")) composer.stop().catch((error) => toast(error.message));
    const key = `${event.shiftKey && /^[a-z]$/i.test(event.key) ? "shift+" : ""}${event.key.toLowerCase()}`;
    const action = (event.ctrlKey || event.metaKey) && !event.altKey ? shortcuts[key] : null;
    if (action) { event.preventDefault(); action(); }
  });
  for (const button of document.querySelectorAll("#export button")) {
    button.addEventListener("click", guarded(() => exportChat(button.dataset.format)));
  }
  $("#folders-button").addEventListener("click", showFolders);
  $("#settings-button").addEventListener("click", guarded(() => showSettings()));
  let timer;
  // The server reads every chat once for the first search: on the focus, before the first word is typed.
  $("#search").addEventListener("focus", () => { get("/api/search?q=").catch(() => {}); }, { once: true });
  $("#search").addEventListener("input", () => { clearTimeout(timer); timer = setTimeout(() => refreshList(), 200); });
  $("#settings").addEventListener("close", () => { // providers changed, or an agent's colour, or a folder's trust
    options.refreshModels().catch(() => {});
    if (state.current) instructions.refresh(state.current.id).catch(() => {});
    (state.current ? members.show(state.current.id) : members.showDraft()).catch(() => {});
  });
  await options.refreshModels().catch(() => {});
  await refreshList();
  const last = sessionStorage.getItem("orkas-open");
  const first = document.querySelector("#chats .chat")?.dataset.id;
  const target = [...document.querySelectorAll("#chats .chat")].some((c) => c.dataset.id === last) ? last : first;
  if (target) await openChat(target);
  else {
    $("#messages").replaceChildren(el("p", "empty", t("emptyChat")));
    await members.showDraft().catch((error) => toast(error.message));
  }
  await offerFirstRun();
  await noticeProposals();
  document.body.dataset.ready = "true";
  await showCrashNotice($("#notices"), inform);
}

reportPageErrors(); // kept on this machine as crash reports; the next start offers "Save diagnostics"
// Orkas restarted under this tab: its token is from the last launch. Say so, for good (the new link is the one
// `orkas serve` printed, or the Orkas window), instead of "reconnecting…" forever.
window.addEventListener("orkas:expired", () => {
  state.expired = true;
  const banner = $("#offline");
  banner.dataset.t = "restartedReopen";
  banner.textContent = t("restartedReopen");
  banner.hidden = false;
});
window.addEventListener("unhandledrejection", (event) => toast(event.reason?.message ?? String(event.reason)));
start().catch((error) => toast(error.message));
