// The first run: with no model configured, an empty chat says what is needed and offers the two ways
// people start — a provider's key, or a model server already running on this computer.

import { get, post } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";

export function firstRunPanel({ openProviders, onDone, onMessage }) {
  const panel = el("div", "first-run");
  panel.append(el("h2", "", t("firstRunTitle")), el("p", "hint", t("firstRunText")));
  const add = el("button", "primary", t("addModel"));
  add.type = "button";
  add.addEventListener("click", openProviders);
  const local = el("button", "", t("useLocalModel"));
  local.type = "button";
  const found = el("p", "hint found");
  found.setAttribute("role", "status");
  local.addEventListener("click", async () => {
    found.textContent = t("testing");
    try {
      const servers = (await get("/api/local-servers")).filter((s) => s.models.length);
      if (!servers.length) { found.textContent = t("noLocalServer"); return; }
      const server = servers[0];
      await post("/api/providers", { name: server.name, kind: "openai-compatible", base_url: server.base_url,
        models: server.models });
      found.textContent = t("usingLocal", { name: server.name, count: server.models.length });
      onDone();
    } catch (error) {
      found.textContent = "";
      onMessage(error.message);
    }
  });
  panel.append(add, " ", local, found);
  return panel;
}

// Once a model is there: memory and learning are off until the person turns them on — asked once, one
// sentence each on what they do. Either answer is remembered (`offered`); Settings changes it later.
export function memoryOffer({ save, onDone }) {
  const panel = el("div", "first-run offer");
  panel.append(el("h2", "", t("offerTitle")));
  const choices = { memory: false, learning: false };
  for (const [name, words] of [["memory", "offerMemory"], ["learning", "offerLearning"]]) {
    const row = el("label", "check offer-choice");
    const box = el("input");
    box.type = "checkbox";
    box.name = name;
    box.addEventListener("change", () => { choices[name] = box.checked; });
    row.append(box, " ", t(words));
    panel.append(row);
  }
  const done = el("button", "primary", t("turnOn"));
  done.type = "button";
  done.addEventListener("click", async () => { await save({ ...choices, offered: true }); onDone(); });
  const later = el("button", "", t("notNow"));
  later.type = "button";
  later.addEventListener("click", async () => { await save({ memory: false, learning: false, offered: true }); onDone(); });
  panel.append(done, " ", later);
  return panel;
}
