// Part of Settings → Permissions and rules: what confines commands, and the longest a command may run.

import { el } from "./cards.js";
import { t } from "./strings.js";

// What confines commands on this machine, said plainly — and how long one may run.
export function safetyBlock(sandbox, prefs, save) {
  const section = el("div", "safety");
  section.append(el("h4", "", t("safety")));
  const kind = sandbox.kind === "bubblewrap" ? "bubblewrap" : "none";
  const facts = el("ul", `sandbox ${kind}`);
  for (const key of ["sandbox", "sandboxFiles", "sandboxSecrets", "sandboxNetwork", "sandboxHome", "sandboxSockets"]) {
    facts.append(el("li", key, t(`${key}_${kind}`)));
  }
  facts.append(el("li", "processes", sandbox.pids ? t("sandboxProcesses", { count: sandbox.pids })
    : t("sandboxProcessesNone")));
  const gb = (bytes) => `${Math.round((bytes / 2 ** 30) * 10) / 10} GB`;
  facts.append(el("li", "memory", sandbox.memory_bytes ? t("sandboxMemory", { size: gb(sandbox.memory_bytes) })
    : t("sandboxMemoryNone")));
  if (sandbox.memory_total_bytes) {
    facts.append(el("li", "memory-total", t("sandboxMemoryTotal", { size: gb(sandbox.memory_total_bytes) })));
  }
  if (sandbox.scratch_bytes) facts.append(el("li", "scratch", t("sandboxScratch", { size: gb(sandbox.scratch_bytes) })));
  section.append(facts);
  const wrap = el("label", "field");
  const input = el("input");
  input.type = "number";
  input.name = "command_timeout";
  input.min = "10";
  input.max = "86400";
  input.value = String(prefs.command_timeout ?? 600);
  input.addEventListener("change", () => save({ command_timeout: Number(input.value) }));
  wrap.append(el("span", "", t("commandTimeout")), input);
  section.append(wrap);
  return section;
}
