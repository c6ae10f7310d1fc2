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
// sentence each on what they do, each with its own button (nothing turns on without a click on it). Any answer
// is remembered (`offered`); Settings changes it later.
export function memoryOffer({ save, onDone }) {
  const panel = el("div", "first-run offer");
  panel.append(el("h2", "", t("offerTitle")));
  for (const [name, words, done] of [["memory", "offerMemory", "offerMemoryOn"], ["learning", "offerLearning", "offerLearningOn"]]) {
    const row = el("p", `offer-choice ${name}`);
    const on = el("button", "small", t("turnOn"));
    on.type = "button";
    on.name = name;
    on.addEventListener("click", async () => {
      on.disabled = true;
      await save({ [name]: true, offered: true });
      on.replaceWith(el("strong", "offer-done", t(done)));
    });
    row.append(el("span", "", t(words)), " ", on);
    panel.append(row);
  }
  const close = el("button", "", t("offerClose"));
  close.type = "button";
  close.addEventListener("click", async () => { await save({ offered: true }); onDone(); });
  panel.append(close);
  return panel;
}
