// Settings → Schedules: each conversation's scheduled prompts with their next and last runs, switched off or removed;
// a new one for a chosen chat ("every weekday at 8:00", "in 2 hours", or a cron line); and whether anything fires
// them now — this window, another Orkas, or nothing (then said plainly, with what would).

import { del, get, patch, post } from "./api.js";
import { el } from "./cards.js";
import { currentLanguage, t } from "./strings.js";
import { actionButton } from "./settings_common.js";

function when(seconds) {
  return seconds ? new Date(seconds * 1000).toLocaleString(currentLanguage(), { dateStyle: "medium", timeStyle: "short" }) : "";
}

export async function schedulesSection(guard, refresh) {
  const section = el("section", "schedules");
  section.append(el("h3", "", t("schedules")), el("p", "hint", t("schedulesHint")));
  const listed = await get("/api/schedules").catch(() => null);
  if (!listed) return section;
  section.append(el("p", `firing firing-${listed.firing}`, t(`schedulesFiring_${listed.firing}`, { pid: listed.runner })));
  const list = el("ul", "schedule-list");
  for (const schedule of listed.schedules) {
    const item = el("li", "schedule");
    item.dataset.schedule = schedule.id;
    const state = schedule.enabled && schedule.next ? t("scheduleNext", { when: when(schedule.next) })
      : schedule.next ? t("scheduleOff") : t("scheduleDone");
    item.append(el("strong", "", schedule.when), " ", el("span", "hint", `(${schedule.timezone}) · ${state}`),
      el("p", "prompt", schedule.prompt), el("p", "hint", schedule.title || schedule.conversation));
    if (schedule.last?.at) {
      item.append(el("p", "hint last", t("scheduleLast", { when: when(schedule.last.at), outcome: schedule.last.outcome })));
    }
    if (schedule.next) {
      const toggle = el("label", "check");
      const box = el("input");
      box.type = "checkbox";
      box.checked = schedule.enabled;
      box.addEventListener("change", guard(async () => {
        await patch(`/api/schedules/${schedule.id}`, { enabled: box.checked });
        refresh();
      }));
      toggle.append(box, " ", t("scheduleOn"));
      item.append(toggle);
    }
    item.append(actionButton("small danger", t("scheduleRemove"), guard(async () => {
      await del(`/api/schedules/${schedule.id}`);
      refresh();
    })));
    list.append(item);
  }
  if (!listed.schedules.length) list.append(el("li", "hint", t("schedulesNone")));
  section.append(list, await newSchedule(listed.timezone, guard, refresh));
  return section;
}

async function newSchedule(timezone, guard, refresh) {
  const form = el("form", "new-schedule");
  form.append(el("h4", "", t("scheduleNew")));
  const chats = await get("/api/conversations").catch(() => []);
  const chat = el("select");
  chat.name = "conversation";
  for (const c of chats) chat.append(new Option(c.title || t("untitled"), c.id));
  const prompt = el("textarea");
  prompt.name = "prompt";
  prompt.rows = 2;
  const time = el("input");
  time.name = "when";
  time.placeholder = t("scheduleWhenExample");
  const field = (label, input) => { const wrap = el("label", "field"); wrap.append(el("span", "", label), input); return wrap; };
  const said = el("p", "schedule-problem");
  said.setAttribute("role", "alert");
  const add = el("button", "primary", t("scheduleAdd"));
  add.type = "submit";
  form.append(field(t("scheduleChat"), chat), field(t("schedulePrompt"), prompt),
    field(t("scheduleWhen", { timezone }), time), said, add);
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    said.textContent = "";
    try {
      await post("/api/schedules", { conversation: chat.value, prompt: prompt.value, when: time.value });
    } catch (error) {
      said.textContent = error.message ?? String(error); // what `when` may be, in a sentence: the typed text stays
      return;
    }
    refresh();
  }));
  return form;
}
