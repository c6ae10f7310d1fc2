// Crash reports and diagnostics, kept on this machine: the page's own unhandled errors become crash
// reports on the server, the next start says so, and "Save diagnostics" writes a bundle (and offers it
// as a download where the browser can; the window shows where it was saved).

import { ApiError, download, get, post } from "./api.js";
import { el } from "./cards.js";
import { saveAs } from "./settings_common.js";
import { t } from "./strings.js";

// A failed report must not raise another error (which would be reported again, and so on).
function send(report) {
  post("/api/crashes", report).catch(() => {});
}

export function reportPageErrors() {
  window.addEventListener("error", (event) => {
    if (!event.error && !event.message) return; // a resource that failed to load, not our code
    send({ kind: "error", message: String(event.message || event.error), stack: event.error?.stack ?? "",
      source: event.filename ?? "", line: event.lineno ?? null, column: event.colno ?? null });
  });
  window.addEventListener("unhandledrejection", (event) => {
    const reason = event.reason;
    if (reason instanceof ApiError) return; // the server's answer, shown to the person already
    send({ kind: "rejection", message: String(reason?.message ?? reason), stack: reason?.stack ?? "" });
  });
}

export async function saveDiagnostics(onSaved) {
  const saved = await post("/api/diagnostics", {});
  onSaved(t("diagnosticsSaved", { path: saved.path }));
  const blob = await download(`/api/diagnostics/${encodeURIComponent(saved.name)}`, "blob");
  saveAs(blob, saved.name, "application/zip");
  return saved;
}

// After a start: if something crashed since the person last looked, say so once, with what to do.
export async function showCrashNotice(region, onMessage) {
  const { unseen } = await get("/api/crashes");
  if (!unseen.length) return;
  const notice = el("div", "crash-notice", t("crashNotice", { count: unseen.length }));
  notice.setAttribute("role", "status");
  const dismiss = async () => { notice.remove(); await post("/api/crashes/seen", {}); };
  const save = el("button", "small", t("saveDiagnostics"));
  save.type = "button";
  save.addEventListener("click", async () => {
    try { await saveDiagnostics(onMessage); await dismiss(); } catch (error) { onMessage(error.message); }
  });
  const close = el("button", "small", t("dismiss"));
  close.type = "button";
  close.addEventListener("click", () => dismiss().catch((error) => onMessage(error.message)));
  notice.append(" ", save, " ", close);
  region.prepend(notice);
}
