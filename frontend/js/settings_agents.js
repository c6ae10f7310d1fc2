// Settings → Agents: the group chat's agents — create, edit, duplicate, delete — and any AGENT.md
// that cannot be used, with why.

import { del, get, post, put } from "./api.js";
import { el } from "./cards.js";
import { askText } from "./dialogs.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";
import { paintLooks } from "./members.js";

function field(label, name, value = "", multiline = false) {
  const wrap = el("label", "field");
  const input = el(multiline ? "textarea" : "input");
  input.name = name;
  input.value = value ?? "";
  if (multiline) input.rows = 4;
  wrap.append(el("span", "", label), input);
  return wrap;
}

// Its model: the configured models (/api/models, as the composer's switcher offers them), or the default
// (the chat's own model). One written by hand that is not configured stays offered, as it is.
function modelField(models) {
  const wrap = el("label", "field");
  const select = el("select");
  select.name = "model";
  select.append(new Option(t("agentModelDefault"), ""));
  for (const model of models) select.append(new Option(model, model));
  wrap.append(el("span", "", t("agentModel")), select);
  return wrap;
}

// Its colour: derived from its name until the person chooses one (kept in its AGENT.md).
function colorField() {
  const wrap = el("div", "field agent-color");
  const own = el("input");
  own.type = "checkbox";
  own.name = "own_color";
  const picker = el("input");
  picker.type = "color";
  picker.name = "color";
  picker.setAttribute("aria-label", t("agentColor"));
  own.addEventListener("change", () => { picker.disabled = !own.checked; });
  const choose = el("label", "check");
  choose.append(own, " ", t("agentColorOwn"));
  wrap.append(el("span", "", t("agentColor")), choose, picker);
  return wrap;
}

export async function agentsSection(guard, refresh) {
  const [{ agents, problems }, { models }] = await Promise.all([
    get("/api/agents"), get("/api/models").catch(() => ({ models: [] })),
  ]);
  paintLooks(agents);
  const section = el("section", "agents");
  section.append(el("h3", "", t("agents")));
  const list = el("ul", "agent-list");
  const form = el("form", "agent-form");
  let editing = null;

  const fill = (agent) => {
    editing = agent?.name ?? null;
    form.elements.name.value = agent?.name ?? "";
    form.elements.name.readOnly = Boolean(agent);
    form.elements.description.value = agent?.description ?? "";
    form.elements.prompt.value = agent?.prompt ?? "";
    const model = form.elements.model;
    if (agent?.model && ![...model.options].some((o) => o.value === agent.model)) model.append(new Option(agent.model, agent.model));
    model.value = agent?.model ?? "";
    form.elements.own_color.checked = Boolean(agent?.color);
    form.elements.color.disabled = !agent?.color;
    form.elements.color.value = agent?.look?.color ?? "#2563eb";
    form.elements.interactive.checked = Boolean(agent?.interactive);
    form.elements.backend.value = agent?.backend ?? "";
    form.elements.cli.value = agent?.cli ?? "";
    form.querySelector("button[type=submit]").textContent = agent ? t("agentSave") : t("agentCreate");
  };

  for (const agent of agents) {
    const item = el("li", "agent");
    item.dataset.agent = agent.name;
    const look = el("span", "look");
    look.dataset.member = agent.name;
    item.append(look, el("strong", "", agent.name), el("span", "hint", ` ${agent.description}`));
    if (agent.backend) { // an external agent CLI: which, and whether it is there (a missing one is said)
      item.append(el("span", "tag external", t("agentExternal", { backend: agent.backend })));
      if (agent.cli_found === false) item.append(el("span", "error-text", ` ${t("agentCliMissing", { cli: agent.cli || agent.backend })}`));
    }
    item.append(
      actionButton("small", t("agentEdit"), () => { fill(agent); form.elements.description.focus(); }),
      actionButton("small", t("agentDuplicate"), guard(async () => {
        const name = await askText({ title: t("duplicateTitle"), label: t("agentName"), value: `${agent.name}-copy` });
        if (!name) return;
        await post(`/api/agents/${agent.name}/duplicate`, { name });
        refresh();
      })),
      actionButton("small danger", t("remove"), guard(async () => {
        await del(`/api/agents/${agent.name}`);
        refresh();
      })),
    );
    list.append(item);
  }
  for (const problem of problems) list.append(el("li", "agent broken", t("agentBroken", problem)));
  if (!agents.length && !problems.length) list.append(el("li", "hint", t("noAgents")));

  const interactive = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.name = "interactive";
  interactive.append(box, " ", t("agentInteractive"));
  const submit = el("button", "", t("agentCreate"));
  submit.type = "submit";
  const backendField = el("label", "field");
  const backend = el("select");
  backend.name = "backend";
  for (const [value, label] of [["", t("agentBackendNone")], ["claude", "Claude Code"], ["codex", "Codex"], ["opencode", "opencode"]]) {
    const option = el("option", "", label);
    option.value = value;
    backend.append(option);
  }
  backendField.append(el("span", "", t("agentBackend")), backend);
  form.append(
    field(t("agentName"), "name"),
    field(t("agentDescription"), "description"),
    field(t("agentPrompt"), "prompt", "", true),
    modelField(models),
    colorField(),
    interactive,
    backendField,
    field(t("agentCli"), "cli"),
    submit,
  );
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const body = {
      name: form.elements.name.value.trim(),
      description: form.elements.description.value.trim(),
      prompt: form.elements.prompt.value,
      model: form.elements.model.value || null,
      color: form.elements.own_color.checked ? form.elements.color.value : null,
      interactive: form.elements.interactive.checked,
      backend: form.elements.backend.value || null,
      cli: form.elements.cli.value.trim() || null,
    };
    if (editing) await put(`/api/agents/${editing}`, body);
    else await post("/api/agents", body);
    refresh();
  }));
  section.append(list, form);
  fill(null);
  return section;
}
