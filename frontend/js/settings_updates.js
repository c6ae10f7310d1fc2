// Settings → About's updates: the installed and the available version with its notes, "Check now", the daily
// check's switch and the feed's address, a download's progress, and "Install and restart" once the person says so.

import { call } from "./api.js";
import { el } from "./cards.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";

const POLL_MS = 500; // while a check, download or preparation runs

export async function updatesPart(prefs, save, guard) {
  const part = el("div", "updates");
  part.append(el("h4", "", t("updates")));
  const state = el("div", "update-state");
  state.setAttribute("role", "status");
  const actions = el("div", "update-actions");
  const toggle = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.name = "update_check";
  box.checked = prefs.update_check !== false;
  box.addEventListener("change", () => save({ update_check: box.checked }));
  toggle.append(box, " ", t("updateDaily"));
  const feed = el("label", "field");
  const address = el("input");
  address.name = "update_feed";
  address.value = prefs.update_feed ?? "";
  address.spellcheck = false;
  address.addEventListener("change", () => save({ update_feed: address.value.trim() }));
  feed.append(el("span", "", t("updateFeed")), address);
  part.append(state, actions, toggle, feed, el("p", "hint", t("updateNothingSent")));

  let polling = null;
  const draw = (status) => {
    state.replaceChildren();
    actions.replaceChildren();
    const offer = status.available;
    if (offer) {
      state.append(el("p", "available", t("updateAvailable", { version: offer.version })));
      if (offer.notes) state.append(el("pre", "release-notes", offer.notes));
      if (status.migrates) state.append(el("p", "hint warn", t("updateMigrates")));
    } else if (status.checked) {
      state.append(el("p", "up-to-date", t("updateUpToDate")));
    }
    if (status.busy === "downloading" && status.total) {
      const bar = el("progress");
      bar.max = status.total;
      bar.value = status.done;
      state.append(el("p", "", t("updateDownloading", { percent: Math.floor((100 * status.done) / status.total) })), bar);
    } else if (status.busy) {
      state.append(el("p", "", t(status.busy === "checking" ? "updateChecking" : "updatePreparing")));
    }
    if (status.error) state.append(el("p", "error", status.error));
    const prepared = status.prepared;
    if (prepared?.command) {
      state.append(el("p", "", t("updateRunCommand")), el("code", "command", prepared.command));
      actions.append(actionButton("", t("updateOpenPackage"), guard(async () => { await call("POST", "/api/updates/open"); })));
    }
    actions.append(actionButton("", t("updateCheckNow"), guard(async () => {
      state.append(el("p", "", t("updateChecking")));
      draw(await call("POST", "/api/updates/check"));
    })));
    if (offer && status.kind === "source") state.append(el("p", "hint", t("updateFromSource")));
    else if (offer && !prepared?.command) {
      actions.append(actionButton("primary", t("updateInstall"), guard(async () => {
        state.append(el("p", "", t("updatePreparing")));
        const answer = await call("POST", "/api/updates/install");
        draw(answer);
        if (answer.restarting) state.append(el("p", "", t("updateRestarting")));
      })));
    }
    clearTimeout(polling);
    if (status.busy && part.isConnected) polling = setTimeout(refresh, POLL_MS);
  };
  const refresh = async () => draw(await call("GET", "/api/updates"));
  await refresh().catch((error) => state.append(el("p", "error", String(error.message ?? error))));
  return part;
}
