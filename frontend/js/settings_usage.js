// Settings → Usage: what the model calls used and cost over the last 30 days — a bar per day and a bar
// per model — from the usage ledger. Drawn as SVG with createElementNS (no chart library); each chart
// has a table beside it with the same figures, which is also what a screen reader reads.

import { get, put } from "./api.js";
import { el } from "./cards.js";
import { actionButton } from "./settings_common.js";
import { t } from "./strings.js";

const SVG = "http://www.w3.org/2000/svg";

function svg(name, attributes = {}) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, String(value));
  return node;
}

const money = (value) => `$${value.toFixed(value >= 1 ? 2 : 4)}`;
const tokens = (row) => row.input_tokens + row.output_tokens;

export async function usageSection() {
  const usage = await get("/api/usage?days=30");
  const section = el("section", "usage");
  section.append(el("h3", "", t("usage")));
  section.append(await limitsForm());
  const total = usage.total;
  if (!total.calls) {
    section.append(el("p", "hint", t("usageNone")));
    return section;
  }
  section.append(el("p", "usage-total", t("usageTotal", { cost: money(total.cost), tokens: tokens(total), calls: total.calls })));
  // Cost when the models have prices; tokens when none has (a local model costs nothing).
  const byCost = usage.days.some((day) => day.cost > 0);
  const measure = byCost ? (row) => row.cost : tokens;
  const label = byCost ? (row) => money(row.cost) : (row) => t("tokensCount", { tokens: tokens(row) });

  section.append(el("h4", "", t(byCost ? "usagePerDayCost" : "usagePerDayTokens")));
  section.append(dayChart(usage.days, measure, label));
  section.append(el("h4", "", t("usagePerModel")));
  const table = el("table", "usage-models");
  const head = el("tr");
  for (const name of ["model", "usageCalls", "usageTokens", "usageCost"]) head.append(el("th", "", t(name)));
  table.append(head);
  const most = Math.max(...usage.models.map(measure), 1e-9);
  for (const row of usage.models) {
    const line = el("tr");
    line.dataset.model = row.model;
    const name = el("td", "");
    const bar = el("span", "usage-bar");
    bar.style.width = `${Math.max(2, (measure(row) / most) * 100)}%`;
    name.append(el("span", "", row.model), bar);
    line.append(name, el("td", "", String(row.calls)), el("td", "", String(tokens(row))),
      el("td", "", row.unpriced_calls === row.calls ? "—" : money(row.cost)));
    table.append(line);
  }
  section.append(table);
  return section;
}

// The spending limits every run keeps to — in this window, on the phone and in `orkas run` — and what was spent.
// The same three `orkas budget` sets. What the person typed goes to the server as typed (text, not a number
// input, which reads "1e" or "1,5" as empty — no limit — without a word): the one rule for amounts is the
// server's, and a refusal marks the field it is about and keeps everything typed.
const LIMITS = [["per_day", "limitPerDay"], ["per_month", "limitPerMonth"], ["per_conversation", "limitPerConversation"]];

async function limitsForm() {
  const budget = await get("/api/budget");
  const form = el("div", "usage-limits");
  form.append(el("h4", "", t("usageLimits")), el("p", "hint", t("limitsHint")));
  const inputs = {};
  for (const [name, label] of LIMITS) {
    const wrap = el("label", "field");
    const input = el("input");
    input.name = name;
    input.inputMode = "decimal";
    input.autocomplete = "off";
    input.value = budget[name] ?? "";
    input.placeholder = t("limitNone");
    wrap.append(el("span", "", t(label)), input);
    form.append(wrap);
    inputs[name] = input;
  }
  const today = money(budget.spent_today ?? 0); // "at least" when a stopped call was counted only so far
  const spent = el("p", "hint limits-status", t("spentToday", { cost: budget.spent_today_at_least ? t("atLeast", { cost: today }) : today }));
  // What saving said, on a line of its own: it took the place of "Spent today".
  const said = el("p", "hint limits-result");
  said.setAttribute("role", "status");
  said.textContent = reachedWords(budget).join(" "); // a limit reached already (set elsewhere, or spent up to)
  const monthly = money(budget.spent_month ?? 0); // "at least" as today's, when a call this month was cut
  const month = el("p", "hint limits-month", t("spentMonth", { cost: budget.spent_month_at_least ? t("atLeast", { cost: monthly }) : monthly }));
  const save = actionButton("save-limits", t("save"), async () => {
    for (const input of Object.values(inputs)) input.removeAttribute("aria-invalid");
    const typed = Object.fromEntries(Object.entries(inputs).map(([name, input]) => [name, input.value.trim() || null]));
    try {
      const saved = await put("/api/budget", typed);
      for (const [name, input] of Object.entries(inputs)) input.value = saved[name] ?? "";
      said.textContent = [t("limitsSaved"), ...reachedWords(saved)].join(" ");
      said.classList.remove("error");
    } catch (error) {
      said.textContent = error.message;
      said.classList.add("error");
      const wrong = inputs[error.data?.limit];
      if (wrong) {
        wrong.setAttribute("aria-invalid", "true");
        wrong.focus();
      }
    }
  });
  form.append(save, said, spent, month);
  return form;
}

// A limit at or below what was already spent, said as it is saved (it was saved silently, and found out at the next
// message): the server's `reached`, by the rule that refuses every run's next model call (LedgerBudget).
const REACHED = [["per_day", "limitReachedDay"], ["per_month", "limitReachedMonth"]];

function reachedWords(budget) {
  const reached = budget.reached ?? {};
  const words = REACHED.filter(([name]) => name in reached)
    .map(([name, key]) => t(key, { spent: money(reached[name]), limit: money(budget[name]) }));
  const over = budget.chats_over ?? []; // a per-conversation limit below what some chats already spent
  if (over.length) {
    const named = over.slice(0, 3).map((c) => `“${c.title || t("untitled")}” (${money(c.spent)})`).join(", ");
    words.push(t(over.length === 1 ? "limitReachedChat" : "limitReachedChats",
      { count: over.length, chats: named + (over.length > 3 ? ", …" : ""), limit: money(budget.per_conversation) }));
  }
  return words;
}

function dayChart(days, measure, label) {
  const width = 600;
  const height = 140;
  const gap = 2;
  const most = Math.max(...days.map(measure), 1e-9);
  const step = width / days.length;
  const chart = svg("svg", { viewBox: `0 0 ${width} ${height + 18}`, class: "usage-chart", role: "img" });
  const busiest = days.reduce((best, day) => (measure(day) > measure(best) ? day : best), days[0]);
  chart.setAttribute("aria-label", t("usageChartLabel", { days: days.length, day: busiest.day, value: label(busiest) }));
  days.forEach((day, index) => {
    const value = measure(day);
    const tall = value ? Math.max(2, (value / most) * height) : 0;
    const bar = svg("rect", { x: index * step + gap / 2, y: height - tall, width: step - gap, height: tall, class: "usage-day" });
    bar.dataset.day = day.day;
    const tip = svg("title");
    tip.textContent = `${day.day}: ${label(day)}`;
    bar.append(tip);
    chart.append(bar);
  });
  for (const [index, anchor] of [[0, "start"], [days.length - 1, "end"]]) {
    const text = svg("text", { x: anchor === "start" ? 0 : width, y: height + 14, "text-anchor": anchor, class: "usage-axis" });
    text.textContent = days[index].day.slice(5);
    chart.append(text);
  }
  return chart;
}
