// A chat's project instructions (AGENTS.md, CLAUDE.md…): the header says which are in force ("Instructions:
// AGENTS.md (2 files)") and opens them; the first time a folder with such files is opened, the person is asked once
// whether to use them — until they say yes, agents read them only as information (a downloaded repository can carry
// hostile instructions). And, once, the person's own instructions from the terminal agents they use are offered.

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

export class InstructionsChip {
  constructor(button, { onError }) {
    this.button = button;
    this.onError = onError;
    this.status = null;
    this.asked = new Set(); // roots asked about in this window (a dismissed question is not put again at once)
    this.ticket = 0;
    button.addEventListener("click", () => { if (this.status) this.open(this.status).catch((e) => onError(e.message)); });
  }

  clear() {
    ++this.ticket;
    this.query = null;
    this.status = null;
    this.button.hidden = true;
  }

  // A chat opened (`conversation`) or a new chat's folder picked (`workspace`): shown, and asked about once.
  async show({ conversation = null, workspace = null }, ask = true) {
    const ticket = ++this.ticket;
    const query = conversation ? `conversation=${encodeURIComponent(conversation)}` : `workspace=${encodeURIComponent(workspace)}`;
    const status = await get(`/api/instructions?${query}`);
    if (ticket !== this.ticket) return; // another chat opened meanwhile
    this.query = query;
    this.draw(status);
    if (ask && status.files.length && status.trust === "unanswered" && !this.asked.has(status.root)) {
      this.asked.add(status.root);
      await this.open(status, true);
    }
  }

  // Settings closed (a trust revoked there), or a run ended: the chip says it again, without asking.
  refresh(conversation) {
    return this.show({ conversation }, false);
  }

  // A run started and said what it reads.
  fromEvent(event) {
    const files = event.files.map((path) => ({ path }));
    this.draw({ ...(this.status ?? {}), root: event.root, files, trust: event.trusted ? "trusted" : (this.status?.trust ?? "unanswered"), shadowed: event.shadowed });
  }

  draw(status) {
    this.status = status;
    const files = status.files ?? [];
    this.button.hidden = !files.length;
    if (!files.length) return;
    const first = files[0].path.split("/").pop();
    const named = files.length > 1 ? t("instructionsFiles", { name: first, count: files.length }) : first;
    const trusted = status.trust === "trusted";
    this.button.textContent = t("instructionsChip", { files: named }) + (trusted ? "" : ` · ${t("instructionsUntrusted")}`);
    this.button.classList.toggle("untrusted", !trusted);
    this.button.title = status.root;
  }

  // The files and their text, and what the person may say about the folder. `asking`: the first time.
  async open(shown, asking = false) {
    // A run's event names the files, not their text: read them (the chat's query) when it is not at hand.
    const known = shown.files.every((f) => f.text !== undefined) || !this.query;
    const status = known ? shown : await get(`/api/instructions?${this.query}`);
    const dialog = el("dialog", "ask instructions-dialog");
    dialog.setAttribute("aria-label", asking ? t("trustTitle") : t("instructionsTitle"));
    const form = el("form", "ask-form");
    form.append(el("h2", "", asking ? t("trustTitle") : t("instructionsTitle")));
    form.append(el("p", "hint", t(status.trust === "trusted" ? "trustedText" : "trustText", { root: status.root })));
    for (const file of status.files) {
      const item = el("details", "instruction-file");
      item.append(el("summary", "", file.path), el("pre", "", file.text ?? ""));
      form.append(item);
    }
    if (status.shadowed?.length) form.append(el("p", "hint", t("instructionsShadowed", { files: status.shadowed.join(", ") })));
    const buttons = el("div", "ask-buttons");
    const answer = async (value) => {
      try {
        if (value === "revoke") await post("/api/trust/remove", { folder: status.root });
        else await post("/api/trust", { folder: status.root, answer: value });
        this.draw({ ...status, trust: value === "revoke" ? "unanswered" : value });
      } catch (error) { this.onError(error.message); }
      dialog.close();
    };
    const button = (label, className, value) => {
      const b = el("button", className, label);
      b.type = "button";
      b.name = value;
      b.addEventListener("click", () => answer(value));
      return b;
    };
    const close = el("button", "", t("close"));
    close.type = "button";
    close.addEventListener("click", () => dialog.close());
    if (status.trust === "trusted") buttons.append(close, button(t("trustRevoke"), "danger", "revoke"));
    else buttons.append(status.trust === "unanswered" ? button(t("trustDecline"), "", "declined") : close,
      button(t("trustUse"), "primary", "trusted"));
    form.append(buttons);
    form.addEventListener("submit", (event) => event.preventDefault());
    dialog.append(form);
    document.body.append(dialog);
    await new Promise((resolve) => {
      dialog.addEventListener("close", () => { dialog.remove(); resolve(); });
      dialog.showModal();
      buttons.firstChild.focus(); // the safe choice: a stray Enter never trusts a folder
    });
  }
}

// Once, in an empty chat: the instructions the person keeps for Claude Code, Codex or Gemini CLI, offered — read
// live, imported as a copy, or not used. Nothing is read before they choose.
export function personalOffer(found, { onDone, onError }) {
  const panel = el("div", "first-run offer personal-offer");
  panel.append(el("h2", "", t("personalTitle")), el("p", "hint", t("personalText")));
  const choose = async (key, how) => {
    try {
      await post("/api/personal-instructions", { key, how });
      onDone(how);
    } catch (error) { onError(error.message); }
  };
  for (const file of found) {
    const row = el("p", "offer-choice");
    row.dataset.key = file.key;
    const live = el("button", "small", t("personalLive"));
    const copy = el("button", "small", t("personalImport"));
    for (const [button, how] of [[live, "live"], [copy, "import"]]) {
      button.type = "button";
      button.name = how;
      button.addEventListener("click", () => choose(file.key, how));
    }
    row.append(el("span", "", `${file.tool}: ${file.path}`), " ", live, " ", copy);
    panel.append(row);
  }
  const no = el("button", "", t("personalNo"));
  no.type = "button";
  no.name = "no";
  no.addEventListener("click", () => choose("", "no"));
  panel.append(no);
  return panel;
}
