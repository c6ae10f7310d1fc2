// The group's member bar: who is in the chat, adding and removing them, and who holds the floor ("Talking to:
// tutor · hand back"). On a new chat's blank page it offers the agents too, and `@` names them at once.
// Each agent's look (a colour and an initial, chosen in Settings → Agents or derived from its name by the
// server: team/agents.py `look`) is painted by one stylesheet for its bubbles, its chip and its `@` name.

import { get, post, put } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

const HEX = /^#[0-9a-f]{6}$/i;

// One rule per agent, on whatever names it: a bubble (data-actor), a chip or an `@` name (data-member).
// app.css draws the initial and the colour from these properties; drawn before the looks arrive, it shows them
// as soon as they do. A constructed sheet: the page's policy (style-src 'self') refuses a <style> element.
const looks = new CSSStyleSheet();
document.adoptedStyleSheets = [...document.adoptedStyleSheets, looks];

export function paintLooks(agents) {
  const rules = agents.filter((a) => HEX.test(a.look?.color ?? "") && HEX.test(a.look?.ink ?? "")).map((a) => {
    const name = CSS.escape(a.name);
    return `[data-actor="${name}"], [data-member="${name}"] { --agent-color: ${a.look.color}; `
      + `--agent-ink: ${a.look.ink}; --agent-initial: ${JSON.stringify(a.look.initial)}; }`;
  });
  looks.replaceSync(rules.join("\n"));
}

export class MemberBar {
  constructor(bar, { composer, onError, onChanged }) {
    this.bar = bar;
    this.composer = composer;
    this.onError = onError;
    this.onChanged = onChanged; // (id, members): the open chat's members changed (it may have become a group)
    this.chat = null; // the open chat's id; null on a new chat's blank page
    this.draft = []; // members chosen on the blank page
  }

  // A new chat does not exist on the server until its first message (no empty "Untitled chat" is left behind
  // by someone who looks and walks away), so the members chosen here are kept on the page and `apply` gives
  // them to the chat when that message makes it, before the message is sent: its first turn is the group's.
  async showDraft() {
    this.chat = null;
    const { agents } = await get("/api/agents");
    if (this.chat !== null) return; // a chat was opened meanwhile
    this.draft = this.draft.filter((name) => agents.some((a) => a.name === name)); // one deleted since
    this.draw({ members: this.draft, agents, floor: null }, (members) => () => {
      this.draft = members;
      this.showDraft().catch((error) => this.onError(error.message));
    });
  }

  clearDraft() {
    this.draft = [];
  }

  // The chat just made by its first message: the members picked on its blank page join it now.
  async apply(id) {
    const members = this.draft;
    if (!members.length) return;
    this.draft = [];
    await put(`/api/conversations/${id}/members`, { members });
  }

  async show(id) {
    this.chat = id;
    const info = await get(`/api/conversations/${id}/members`);
    if (this.chat !== id) return;
    this.draw(info, (members) => async () => {
      try {
        await put(`/api/conversations/${id}/members`, { members });
        await this.onChanged(id, members);
      } catch (error) { this.onError(error.message); }
    });
  }

  draw(info, change) {
    paintLooks(info.agents);
    const bar = this.bar;
    bar.replaceChildren();
    this.composer.setMembers(info.members);
    bar.hidden = !info.members.length && !info.agents.length;
    bar.append(el("span", "label", t("members")));
    for (const name of info.members) {
      const chip = el("span", "member", name);
      chip.dataset.member = name;
      const remove = el("button", "small", "×");
      remove.type = "button";
      remove.setAttribute("aria-label", t("removeMember", { name }));
      remove.addEventListener("click", change(info.members.filter((m) => m !== name)));
      chip.append(remove);
      bar.append(chip);
    }
    const others = info.agents.filter((a) => !info.members.includes(a.name));
    if (others.length) {
      const pick = el("select", "add-member");
      pick.setAttribute("aria-label", t("addMember"));
      pick.append(new Option(t("addMember"), ""));
      for (const agent of others) pick.append(new Option(agent.name, agent.name));
      pick.addEventListener("change", () => { if (pick.value) change([...info.members, pick.value])(); });
      bar.append(pick);
    }
    const floor = el("span", "floor");
    floor.id = "floor";
    bar.append(floor);
    this.floor(info.floor);
  }

  // Who holds the floor: nothing while the commander does; else the member, and a way to give it back.
  floor(holder) {
    const node = this.bar.querySelector("#floor");
    if (!node) return;
    node.replaceChildren();
    if (!holder || holder === "commander" || this.chat === null) return;
    const id = this.chat;
    const back = el("button", "small link", t("backToCommander"));
    back.type = "button";
    back.title = t("handBackTitle", { name: holder });
    back.addEventListener("click", async () => {
      try {
        const info = await post(`/api/conversations/${id}/hand-back`, {});
        if (this.chat === id) this.floor(info.floor);
      } catch (error) { this.onError(error.message); }
    });
    node.append(t("talkingTo", { name: holder }), " · ", back);
  }
}
