// Settings → Learning: what each agent learned from use — on this computer only — with the switch (off until
// the person turns it on), the model reflections use, a reflection on demand, what waits for the person's OK
// (proposals: accept or reject), each agent's memo and learned skills with their health, and every change
// (when, what, from which conversations) with a one-click undo.

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString() : t("learningNever");
}

const SVG = "http://www.w3.org/2000/svg";
const LINES = [["invocation_rate", "read"], ["edit_after_rate", "corrected"], ["ineffective_rate", "failed"]];

// A skill's rates over the last two weeks as three small lines (0–100%), with a text equivalent.
function trendChart(trend) {
  const width = 140, height = 36;
  const chart = document.createElementNS(SVG, "svg");
  chart.setAttribute("viewBox", `0 0 ${width} ${height}`);
  chart.setAttribute("class", "trend");
  chart.setAttribute("role", "img");
  const last = trend[trend.length - 1] ?? {};
  chart.setAttribute("aria-label", t("trendLabel", {
    read: percent(last.invocation_rate ?? 0), corrected: percent(last.edit_after_rate ?? 0), failed: percent(last.ineffective_rate ?? 0),
  }));
  const step = trend.length > 1 ? width / (trend.length - 1) : width;
  for (const [key, kind] of LINES) {
    const line = document.createElementNS(SVG, "polyline");
    line.setAttribute("class", `trend-line ${kind}`);
    line.setAttribute("points", trend.map((p, i) => `${(i * step).toFixed(1)},${(height - 2 - p[key] * (height - 4)).toFixed(1)}`).join(" "));
    chart.append(line);
  }
  return chart;
}

function percent(value) {
  return `${Math.round(value * 100)}%`;
}

// What a reflection wanted to keep but may not without the person: each change, why it waits, Accept / Reject.
function proposalBlock(proposal, guard, refresh) {
  const block = el("div", "proposal");
  block.dataset.proposal = proposal.id;
  block.append(el("p", "", t("proposalFrom", { agent: proposal.agent })));
  const list = el("ul", "proposal-changes");
  for (const change of proposal.changes) {
    const item = el("li", "");
    item.append(el("strong", "", `${change.kind} ${change.name}`), el("p", "hint", t("proposalWhy", { why: change.why })));
    item.append(el("pre", "after", change.after ?? t("changeRemoved")));
    list.append(item);
  }
  const decide = (accept) => guard(async () => {
    await post(`/api/learning/proposals/${encodeURIComponent(proposal.agent)}/${proposal.id}`, { accept });
    refresh();
  });
  block.append(list, actionButton("small primary", t("accept"), decide(true)), " ",
    actionButton("small", t("reject"), decide(false)));
  return block;
}

export async function learningSection(prefs, save, guard, refresh, onInfo, onOpenChat) {
  const { agents, proposals = [] } = await get("/api/learning");
  const section = el("section", "learning");
  section.append(el("h3", "", t("learning")), el("p", "hint", t("learningHint")));
  if (prefs.learning !== true) section.append(el("p", "hint learning-off", t("learningOffDefault")));
  const toggle = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.name = "learning";
  box.checked = prefs.learning === true;
  box.addEventListener("change", async () => { await save({ learning: box.checked, offered: true }); refresh(); });
  toggle.append(box, " ", t("learningOn"));
  const model = el("label", "field");
  const choice = el("select");
  choice.name = "reflection_model";
  choice.append(new Option(t("reflectionSmall"), "small"), new Option(t("reflectionAgent"), "agent"));
  const models = await get("/api/models").catch(() => ({ models: [] }));
  for (const name of models.models ?? []) choice.append(new Option(name, name));
  choice.value = prefs.reflection_model ?? "small";
  choice.addEventListener("change", () => save({ reflection_model: choice.value }));
  model.append(el("span", "", t("reflectionModel")), choice);
  if (proposals.length) {
    const waiting = el("div", "proposals");
    waiting.append(el("h4", "", t("proposals")), el("p", "hint", t("proposalsHint")));
    for (const proposal of proposals) waiting.append(proposalBlock(proposal, guard, refresh));
    section.append(waiting);
  }
  const threshold = el("label", "field");
  const level = el("input");
  level.type = "number";
  level.name = "learning_threshold";
  level.min = "0.1";
  level.max = "5";
  level.step = "0.05";
  level.value = String(prefs.learning_threshold ?? 0.7);
  level.addEventListener("change", () => {
    const value = Number(level.value);
    if (value >= 0.1 && value <= 5) save({ learning_threshold: value });
  });
  threshold.append(el("span", "", t("learningThreshold")), level);
  section.append(
    toggle,
    model,
    threshold,
    actionButton("small", t("learningRun"), guard(async () => {
      const { outcomes } = await post("/api/learning/run", {});
      const done = outcomes.filter((o) => o.reflected).map((o) => o.agent);
      onInfo(done.length ? t("learningRan", { agents: done.join(", ") }) : t("learningNothing"));
      refresh();
    })),
  );

  // "user_correction (“instead”)" as a person would say it: "you corrected it: “instead”".
  const said = (reason) => {
    const [, kind, detail] = reason.match(/^(\w+) \((.*)\)$/s) ?? [null, "", reason];
    const words = kind && t(`why_${kind}`, { detail });
    return words && words !== `why_${kind}` ? words : reason;
  };
  for (const agent of agents) {
    const block = el("div", "learning-agent");
    block.dataset.agent = agent.agent;
    block.append(el("h4", "", agent.agent));
    const trigger = agent.trigger;
    block.append(el("p", "hint", t("learningState", {
      last: when(agent.last_reflection),
      state: agent.dirty ? t("learningDirty") : t("learningIdle"),
      ready: t(trigger.fires ? "learningReady" : "learningNotReady"),
    })));
    block.title = `trigger ${trigger.score.toFixed(2)}`; // the figure, for who wants it; the words say what it means
    if (trigger.why.length) block.append(el("p", "hint why", trigger.why.map(said).join("; ")));
    for (const part of ["competence", "strategies"]) {
      if (!agent.memo[part]) continue;
      block.append(el("h5", "", t(`memo_${part}`)), el("pre", `memo ${part}`, agent.memo[part]));
    }
    if (agent.learned_skills.length) {
      const skills = el("ul", "learned-skills");
      for (const skill of agent.learned_skills) {
        const item = el("li", `learned-skill ${skill.health}`);
        item.dataset.skill = skill.name;
        item.append(
          el("strong", "", skill.name),
          el("span", `tag health ${skill.health}`, t(`health_${skill.health}`)),
          el("span", "hint", ` ${t("skillRates", {
            invoked: percent(skill.invocation_rate),
            edited: percent(skill.edit_after_rate),
            failed: percent(skill.ineffective_rate),
          })}`),
        );
        if (skill.trend?.length) item.append(trendChart(skill.trend));
        skills.append(item);
      }
      block.append(skills);
    }
    const history = el("ul", "learning-history");
    for (const entry of agent.history) {
      const item = el("li", "change");
      item.dataset.id = entry.id;
      const what = t(`change_${entry.action}`, { name: entry.name });
      item.append(el("span", "", `${when(entry.at)} — ${what}`));
      if (entry.conversations?.length) {  // where it came from: each conversation opens from here
        const from = el("span", "from hint", ` ${t("changeFrom", { count: entry.conversations.length })}:`);
        entry.conversations.forEach((id, n) => {
          const link = actionButton("small link", String(n + 1), () => onOpenChat?.(id));
          link.dataset.conversation = id;
          link.setAttribute("aria-label", t("changeOpen", { n: n + 1 }));
          from.append(" ", link);
        });
        item.append(from);
      }
      const details = el("details", "");
      details.append(el("summary", "", t("changeShow")), el("pre", "after", entry.after ?? t("changeRemoved")));
      item.append(details, actionButton("small", t("undo"), guard(async () => {
        await post("/api/learning/undo", { agent: agent.agent, id: entry.id });
        refresh();
      })));
      history.append(item);
    }
    if (!agent.history.length) history.append(el("li", "hint", t("learningNoChanges")));
    block.append(history);
    section.append(block);
  }
  return section;
}
