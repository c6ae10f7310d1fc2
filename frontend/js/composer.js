// The message box: send (or steer while the agent runs), stop, and attachments from the file picker,
// paste, or a drop anywhere on the window. In a browser the file's bytes are uploaded; in the desktop
// window the real path comes from Python (pywebview hands it to `window.orkasDropped`).

import { desktop, post, upload } from "./api.js";
import { el } from "./cards.js";
import { attachMenu, fillPrompt, offeredPrompts } from "./connector_offers.js";
import { t } from "./strings.js";

const MAX_UPLOAD = 50 * 1024 * 1024;
const DRAFT = "orkas-draft:"; // + a conversation's id in sessionStorage ("" for a new chat)

export class Composer {
  constructor(root, { conversation, onError, onEditLast }) {
    this.conversation = conversation; // () => current conversation id (creates one if needed)
    this.onError = onError;
    this.onEditLast = onEditLast; // ↑ in an empty box: edit the last message sent
    this.files = [];
    this.running = false;
    this.form = el("form", "composer");
    this.chips = el("div", "chips pending");
    this.input = el("textarea", "input");
    this.input.rows = 2;
    this.picker = el("input");
    this.picker.type = "file";
    this.picker.multiple = true;
    this.picker.hidden = true;
    const attach = el("button", "attach", "+");
    attach.type = "button";
    this.attachButton = attach;
    this.sendButton = el("button", "send");
    this.sendButton.type = "submit";
    this.stopButton = el("button", "stop");
    this.stopButton.type = "button";
    this.stopButton.hidden = true;
    const row = el("div", "composer-row");
    row.append(attach, this.input, this.stopButton, this.sendButton);
    this.form.append(this.chips, row, this.picker);
    root.append(this.form);

    attachMenu(this, attach); // the file picker, or Files… and the connectors' resources
    this.picker.addEventListener("change", () => { this.uploadAll([...this.picker.files]); this.picker.value = ""; });
    this.form.addEventListener("submit", (event) => { event.preventDefault(); this.send(); });
    this.input.addEventListener("keydown", (event) => {
      if (this.mentionKey(event)) return; // the @ list is open: its keys first (Enter picks, never sends)
      if (event.key === "Enter" && !event.shiftKey && !event.isComposing) { event.preventDefault(); this.send(); }
      if (event.key === "Escape" && this.running) this.stop();
      if (event.key === "ArrowUp" && !this.input.value && !event.isComposing) { event.preventDefault(); this.onEditLast?.(); }
    });
    this.input.addEventListener("paste", (event) => {
      const files = [...(event.clipboardData?.files ?? [])];
      if (files.length) { event.preventDefault(); this.uploadAll(files); }
    });
    this.stopButton.addEventListener("click", () => this.stop());
    this.watchDrops();
    // @-mentions: the conversation's members (and the commander), offered as the person types.
    this.members = [];
    // A listbox the box points into (aria-activedescendant): the focus stays in the box while ↑/↓ move.
    this.suggestions = el("div", "mentions");
    this.suggestions.id = "mentions";
    this.suggestions.setAttribute("role", "listbox");
    this.suggestions.hidden = true;
    this.form.prepend(this.suggestions);
    this.input.setAttribute("aria-autocomplete", "list");
    this.input.setAttribute("aria-controls", "mentions");
    this.input.addEventListener("input", () => this.suggest());
    // It grows with what is typed, up to half the window; then it scrolls.
    this.input.addEventListener("input", () => this.fit());
    // What was typed and not sent, per conversation ("" for a new chat), kept in this tab's sessionStorage
    // so a reload (or Orkas restarting under the page) does not lose it.
    this.chatId = "";
    this.input.value = sessionStorage.getItem(DRAFT + this.chatId) ?? "";
    this.input.addEventListener("input", () => this.keep());
    this.relabel();
  }

  // Every word it shows, in the current language (again after a language change).
  relabel() {
    this.input.placeholder = this.running ? t("placeholderRunning") : t("placeholder");
    this.input.setAttribute("aria-label", t("placeholder"));
    this.suggestions.setAttribute("aria-label", t("mentionsLabel"));
    this.attachButton.title = t("attach");
    this.attachButton.setAttribute("aria-label", t("attach"));
    this.sendButton.textContent = t("send");
    this.stopButton.textContent = t("stop");
    if (this.overlay) this.overlay.textContent = t("dropHere");
  }

  fit() {
    this.input.style.height = "auto";
    this.input.style.height = `${Math.min(this.input.scrollHeight + 2, window.innerHeight / 2)}px`;
  }

  // The draft belongs to its conversation: leaving a chat keeps what was typed there for the return.
  switchTo(fromId, toId) {
    this.chatId = fromId ?? "";
    this.keep();
    this.chatId = toId ?? "";
    this.input.value = sessionStorage.getItem(DRAFT + this.chatId) ?? "";
    this.fit();
  }

  // A new chat got its id with its first message: what is typed from now on is that chat's draft.
  becomes(id) {
    sessionStorage.removeItem(DRAFT + this.chatId);
    this.chatId = id;
    this.keep();
  }

  keep() {
    if (this.input.value) sessionStorage.setItem(DRAFT + this.chatId, this.input.value);
    else sessionStorage.removeItem(DRAFT + this.chatId);
  }

  setMembers(names) {
    this.members = names;
    this.suggest();
  }

  insert(text) {
    this.input.value = `${text}${this.input.value}`;
    this.keep();
    this.input.focus();
  }

  suggest() {
    const before = this.input.value.slice(0, this.input.selectionStart ?? this.input.value.length);
    const slash = /^\/(\S*)$/.exec(before);
    if (slash) { this.suggestPrompts(slash[1]).catch((error) => this.onError(error.message)); return; }
    const typed = /(?:^|\s)@([a-z0-9_-]*)$/.exec(before);
    const names = typed && this.members.length ? [...this.members, "commander"].filter((n) => n.startsWith(typed[1])) : [];
    this.suggestions.replaceChildren();
    names.forEach((name, index) => {
      const option = el("button", "mention", `@${name}`);
      option.type = "button";
      option.dataset.member = name; // its look (members.js)
      option.id = `mention-${index}`;
      option.tabIndex = -1; // reached with ↑/↓ from the box, not by Tab
      option.setAttribute("role", "option");
      option.addEventListener("click", () => {
        const start = before.length - typed[1].length;
        this.input.value = `${this.input.value.slice(0, start)}${name} ${this.input.value.slice(before.length)}`;
        this.keep();
        this.closeMentions();
        this.input.focus();
      });
      this.suggestions.append(option);
    });
    if (names.length) this.pickMention(0);
    else this.closeMentions();
  }

  // "/" at the start of the box: the connectors' prompts, narrowed by what follows it (asked for once per "/").
  async suggestPrompts(typed) {
    if (!typed || !this.prompts) this.prompts = await offeredPrompts();
    if (!/^\/\S*$/.test(this.input.value)) return; // typed on meanwhile
    const wanted = typed.toLowerCase();
    const found = this.prompts.filter((p) => `${p.server}:${p.name} ${p.title}`.toLowerCase().includes(wanted));
    this.suggestions.replaceChildren();
    this.suggestions.setAttribute("aria-label", t("promptsLabel"));
    found.forEach((prompt, index) => {
      const option = el("button", "mention prompt-option", `/${prompt.name}`);
      option.append(el("span", "hint", ` ${prompt.server} · ${prompt.description || prompt.title}`));
      option.type = "button";
      option.id = `mention-${index}`;
      option.tabIndex = -1;
      option.setAttribute("role", "option");
      option.addEventListener("click", async () => {
        this.closeMentions();
        try {
          const text = await fillPrompt(prompt);
          if (text == null) { this.input.focus(); return; }
          this.input.value = text; // in the box, read before it is sent
          this.keep();
          this.fit();
          this.input.focus();
        } catch (error) { this.onError(error.message); }
      });
      this.suggestions.append(option);
    });
    if (found.length) this.pickMention(0);
    else this.closeMentions();
  }

  // A connector's resource, attached as a file is (its chip, then the message carries it).
  async attachResource(resource) {
    const chip = this.addChip({ name: resource.title, uploading: true });
    try {
      const id = await this.conversation();
      const record = await post(`/api/conversations/${id}/attachments/resource`, { server: resource.server, uri: resource.uri });
      chip.remove();
      this.addChip(record);
    } catch (error) {
      chip.remove();
      this.onError(`${resource.title}: ${error.message}`);
    }
  }

  // The @ list's keys, while it is open: ↑/↓ move, Enter or Tab take the marked name, Escape closes it.
  mentionKey(event) {
    const options = [...this.suggestions.children];
    if (this.suggestions.hidden || !options.length || event.isComposing) return false;
    const at = options.findIndex((o) => o.getAttribute("aria-selected") === "true");
    if (event.key === "ArrowDown" || event.key === "ArrowUp") {
      this.pickMention((at + (event.key === "ArrowDown" ? 1 : -1) + options.length) % options.length);
    } else if ((event.key === "Enter" || event.key === "Tab") && !event.shiftKey) {
      options[Math.max(at, 0)].click();
    } else if (event.key === "Escape") this.closeMentions();
    else return false;
    event.preventDefault(); // Escape here closes the list: it does not stop the turn too (main.js)
    return true;
  }

  pickMention(index) {
    [...this.suggestions.children].forEach((option, i) => option.setAttribute("aria-selected", String(i === index)));
    this.suggestions.hidden = false;
    this.input.setAttribute("aria-activedescendant", `mention-${index}`);
  }

  closeMentions() {
    this.suggestions.hidden = true;
    this.suggestions.setAttribute("aria-label", t("mentionsLabel"));
    this.input.removeAttribute("aria-activedescendant");
  }

  setRunning(running) {
    this.running = running;
    this.stopButton.hidden = !running;
    this.input.placeholder = running ? t("placeholderRunning") : t("placeholder");
  }

  watchDrops() {
    const overlay = el("div", "drop-overlay", t("dropHere"));
    this.overlay = overlay;
    overlay.hidden = true;
    document.body.append(overlay);
    let depth = 0;
    const hasFiles = (event) => [...(event.dataTransfer?.types ?? [])].includes("Files");
    window.addEventListener("dragenter", (event) => {
      if (!hasFiles(event)) return;
      event.preventDefault();
      depth++;
      overlay.hidden = false;
    });
    window.addEventListener("dragover", (event) => { if (hasFiles(event)) event.preventDefault(); });
    window.addEventListener("dragleave", () => { depth = Math.max(0, depth - 1); if (!depth) overlay.hidden = true; });
    window.addEventListener("drop", (event) => {
      depth = 0;
      overlay.hidden = true;
      if (!hasFiles(event)) return;
      event.preventDefault();
      if (desktop()) return; // the desktop shell sends the real paths to orkasDropped
      this.uploadAll([...event.dataTransfer.files]);
    });
    window.orkasDropped = (paths) => this.attachPaths(paths);
  }

  async attachPaths(paths) {
    const bridge = desktop();
    if (!bridge || !paths.length) return;
    const id = await this.conversation();
    const results = await bridge.attach_paths(id, paths);
    for (const result of results) {
      if (result.error) this.onError(result.error);
      else this.addChip(result);
    }
  }

  async uploadAll(files) {
    for (const file of files) {
      if (file.size > MAX_UPLOAD) {
        this.onError(`${file.name}: ${Math.round(file.size / 1048576)} MB — the limit is 50 MB`);
        continue;
      }
      const chip = this.addChip({ name: file.name, uploading: true });
      try {
        const id = await this.conversation();
        const name = encodeURIComponent(file.name);
        const record = await upload(`/api/conversations/${id}/attachments?name=${name}`, file);
        chip.remove();
        this.addChip(record);
      } catch (error) {
        chip.remove();
        this.onError(`${file.name}: ${error.message}`);
      }
    }
  }

  addChip(record) {
    const chip = el("span", "chip", record.name);
    if (record.uploading) {
      chip.classList.add("uploading");
      chip.title = t("uploading");
    } else {
      this.files.push(record);
      chip.dataset.attachmentId = record.id;
      const remove = el("button", "chip-remove", "×");
      remove.type = "button";
      remove.setAttribute("aria-label", `${t("removeAttachment")} ${record.name}`);
      remove.addEventListener("click", () => {
        this.files = this.files.filter((f) => f.id !== record.id);
        chip.remove();
      });
      chip.append(remove);
    }
    this.chips.append(chip);
    return chip;
  }

  // One message at a time: a second Enter or click before the first has reached the server sent the same text
  // twice (the second joined the run as a steer: a second model call).
  async send() {
    if (this.sending) return;
    const text = this.input.value.trim();
    if (!text && !this.files.length) return;
    if (this.chips.querySelector(".uploading")) return; // wait for uploads to land
    this.sending = true;
    try {
      const id = await this.conversation();
      const attachments = this.files.map((f) => f.id);
      await post(`/api/conversations/${id}/messages`, { text, attachments });
      if (this.input.value.trim() === text) this.input.value = ""; // what was typed meanwhile stays
      this.keep();
      this.fit();
      this.files = [];
      this.chips.replaceChildren();
    } catch (error) {
      this.onError(error.message); // the text stays in the box: nothing typed is lost
    } finally {
      this.sending = false;
    }
  }

  async stop() {
    const id = await this.conversation();
    await post(`/api/conversations/${id}/stop`);
  }

  giveBack(text) {
    if (text && !this.input.value.trim()) this.input.value = text;
    this.keep();
  }
}


