// The composer's model switcher and the chat's own settings (who answers it — Orkas or a named agent, which then
// learns from it when learning is on —, instructions, temperature, reasoning): per conversation and remembered
// with it. A new chat has no id until its first message, so what is
// picked there waits (`pending`) and is saved when the chat is created, before that message is sent.

import { get, patch } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

const REASONING = ["off", "low", "medium", "high"];

export class ChatOptions {
  constructor(root, { onError }) {
    this.onError = onError;
    this.chat = null; // the open conversation, or null for a new chat
    this.pending = {};
    this.bar = el("div", "chat-options");
    this.select = el("select", "model-switcher");
    this.select.addEventListener("change", () => this.change({ model: this.select.value }));
    this.button = el("button", "small chat-settings");
    this.button.type = "button";
    this.button.addEventListener("click", () => this.openDialog());
    this.bar.append(this.select, this.button);
    root.append(this.bar);
    this.models = { models: [], default: null };
    this.relabel();
  }

  relabel() {
    this.select.setAttribute("aria-label", t("model"));
    this.button.textContent = t("chatSettings");
    this.draw();
  }

  async refreshModels() {
    this.models = await get("/api/models");
    this.draw();
  }

  show(chat) {
    this.chat = chat;
    this.pending = {};
    this.draw();
  }

  current() {
    return { model: "", instructions: "", temperature: null, reasoning: "off", agent: "", ...(this.chat ?? {}), ...this.pending };
  }

  draw() {
    const { model } = this.current();
    const label = this.models.default ? t("defaultModelIs", { model: this.models.default }) : t("defaultModelNone");
    const options = [new Option(label, "")];
    for (const choice of this.models.models) options.push(new Option(choice, choice));
    if (model && !this.models.models.includes(model)) options.push(new Option(model, model)); // removed since
    this.select.replaceChildren(...options);
    this.select.value = model;
    const tuned = this.current();
    this.button.classList.toggle("tuned", Boolean(tuned.instructions || tuned.temperature !== null || tuned.reasoning !== "off" || tuned.agent));
    this.button.textContent = tuned.agent ? `${t("chatSettings")} · ${tuned.agent}` : t("chatSettings");
  }

  async change(changes) {
    if (!this.chat) {
      this.pending = { ...this.pending, ...changes };
      this.draw();
      return;
    }
    try {
      this.chat = await patch(`/api/conversations/${this.chat.id}`, changes);
    } catch (error) {
      this.onError(error.message);
    }
    this.draw();
  }

  // A chat just created by its first message: what was picked on the blank page is saved now.
  async created(id) {
    const changes = this.pending;
    this.pending = {};
    if (Object.keys(changes).length) this.chat = await patch(`/api/conversations/${id}`, changes);
  }

  async openDialog() {
    const now = this.current();
    const agents = await get("/api/agents").catch(() => ({ agents: [] }));
    const answeredBy = el("select");
    answeredBy.name = "agent";
    answeredBy.append(new Option(t("answeredByOrkas"), ""));
    for (const agent of agents.agents ?? []) {
      if (!agent.backend) answeredBy.append(new Option(agent.name, agent.name));
    }
    answeredBy.value = now.agent ?? "";
    const dialog = el("dialog", "ask chat-options-dialog");
    dialog.setAttribute("aria-label", t("chatSettings"));
    const form = el("form", "ask-form");
    const instructions = el("textarea");
    instructions.name = "instructions";
    instructions.rows = 5;
    instructions.value = now.instructions;
    const temperature = el("input");
    temperature.name = "temperature";
    temperature.type = "number";
    temperature.min = "0";
    temperature.max = "2";
    temperature.step = "0.1";
    temperature.placeholder = t("modelDefault");
    temperature.value = now.temperature ?? "";
    const reasoning = el("select");
    reasoning.name = "reasoning";
    for (const level of REASONING) reasoning.append(new Option(t(`reasoning_${level}`), level));
    reasoning.value = now.reasoning;
    const field = (label, input, hint) => {
      const node = el("label", "ask-field", label);
      node.append(input);
      if (hint) node.append(el("span", "hint", hint));
      return node;
    };
    const cancel = el("button", "", t("cancel"));
    cancel.type = "button";
    cancel.addEventListener("click", () => dialog.close());
    const save = el("button", "primary", t("save"));
    save.type = "submit";
    const buttons = el("div", "ask-buttons");
    buttons.append(cancel, save);
    form.append(
      el("h2", "", t("chatSettings")),
      field(t("answeredBy"), answeredBy, t("answeredByHint")),
      field(t("instructions"), instructions, t("instructionsHint")),
      field(t("temperature"), temperature, t("temperatureHint")),
      field(t("reasoning"), reasoning, t("reasoningHint")),
      buttons,
    );
    form.addEventListener("submit", async (event) => {
      event.preventDefault();
      const value = temperature.value.trim();
      const number = value === "" ? null : Number(value);
      if (number !== null && !(number >= 0 && number <= 2)) {
        temperature.setCustomValidity(t("temperatureHint"));
        temperature.reportValidity();
        return;
      }
      dialog.close();
      await this.change({
        instructions: instructions.value, temperature: number, reasoning: reasoning.value, agent: answeredBy.value,
      });
    });
    temperature.addEventListener("input", () => temperature.setCustomValidity(""));
    dialog.append(form);
    dialog.addEventListener("close", () => dialog.remove());
    document.body.append(dialog);
    dialog.showModal();
    instructions.focus();
  }
}
