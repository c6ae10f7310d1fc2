// Settings → Connectors: the person's MCP servers — each with its measured status, tool count and last
// error; check now, on/off, remove; a form to add a remote (URL + headers) or a local (command + env) server,
// where a local command is shown whole and confirmed before it is saved; a Claude-Desktop file read into
// entries that are confirmed one by one. Secret values go in and never come back: only their names show.
// A hosted server that signs in with OAuth: "Sign in" opens its page in the system browser (the window's
// bridge; a browser tab opens a tab), the row says it waits, and says so again when the sign-in runs out.

import { del, desktop, get, post } from "./api.js";
import { el } from "./cards.js";
import { askConfirm, askConfirmWith } from "./dialogs.js";
import { t } from "./strings.js";
import { actionButton } from "./settings_common.js";

function field(label, name, { multiline = false, placeholder = "", type = "text" } = {}) {
  const wrap = el("label", "field");
  const input = el(multiline ? "textarea" : "input");
  input.name = name;
  if (!multiline) input.type = type;
  if (multiline) input.rows = 3;
  input.placeholder = placeholder;
  wrap.append(el("span", "", label), input);
  return wrap;
}

// "K=V" lines → {K: V}; a line without "=" is said, not dropped.
function pairs(text, what) {
  const found = {};
  for (const line of text.split("\n").map((l) => l.trim()).filter(Boolean)) {
    const at = line.indexOf("=");
    if (at < 1) throw new Error(t("connectorPairBad", { what, line }));
    found[line.slice(0, at).trim()] = line.slice(at + 1);
  }
  return found;
}

function shellJoin(argv) {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replaceAll("'", "'\\''")}'`)).join(" ");
}

// A local server runs a program: the person sees the exact command, and what it will see (confined: its network,
// a private home, the folders named), and says yes — or ticks "unconfined" on purpose. Null: nothing is saved.
async function confirmCommand(name, command, folders = []) {
  const sees = t("connectorConfinedSees", { folders: folders.length ? folders.join(", ") : t("connectorNoFolders") });
  const answer = await askConfirmWith({
    title: t("connectorConfirmTitle", { name }),
    message: `${t("connectorConfirm", { command })}\n\n${sees}`,
    option: t("connectorUnconfinedChoice"),
    action: t("connectorConfirmAction"),
  });
  return answer && { unconfined: answer.option };
}

// What calling a tool does: only one that changes nothing and stays on this computer runs without a question.
function toolNote(tool) {
  if (!tool.closed_world) return t("connectorLeaves");
  return tool.read_only ? t("connectorReadOnly") : t("connectorChanges");
}

function row(connector, guard, refresh) {
  const item = el("li", `connector status-${connector.status}`);
  item.dataset.connector = connector.id;
  const where = connector.url ?? shellJoin(connector.command);
  const tools = connector.tools == null ? "" : ` · ${t("connectorTools", { count: connector.tools })}`;
  item.append(
    el("strong", "", connector.name),
    el("span", "badge", connector.oauth && connector.signed_in && connector.status === "disconnected"
      ? t("connectorSignedIn") : t(`connector_${connector.status}`)), // idle, signed in: not a problem
    el("span", "hint", ` ${connector.kind === "remote" ? t("connectorRemote") : t("connectorLocal")}${tools} `),
    el("code", "where", where),
  );
  if (connector.kind === "local") { // how it runs, said: one from before confinement keeps running unconfined
    const how = connector.confined ? t("connectorConfined") : t("connectorUnconfined");
    const seen = connector.confined && connector.folders?.length ? ` · ${connector.folders.join(", ")}` : "";
    item.append(el("div", connector.confined ? "hint confinement" : "hint confinement unconfined", how + seen));
  }
  const secrets = [...connector.headers.map((h) => `${h}: ••••`), ...connector.env.map((e) => `${e}=••••`)];
  if (secrets.length) item.append(el("div", "hint secrets", secrets.join("  ")));
  if (connector.status === "signin" && connector.last_error) item.append(el("div", "error-text", connector.last_error));
  if (connector.last_error && ["degraded", "error"].includes(connector.status)) {
    const retry = connector.retry_in ? ` ${t("connectorRetryIn", { seconds: connector.retry_in })}` : "";
    item.append(el("div", "error-text", `${t("connectorLastError")}: ${connector.last_error}${retry}`));
  }
  const toolList = el("ul", "connector-tools");
  const signIn = signInButton(connector, guard, refresh);
  if (signIn) item.append(signIn);
  const note = waitingNote(connector.id);
  if (note) item.append(note);
  if (connector.oauth && connector.signed_in) {
    item.append(actionButton("small", t("connectorSignOut"), guard(async () => {
      await post(`/api/connectors/${connector.id}/logout`);
      refresh();
    })));
  }
  item.append(
    actionButton("small", t("connectorCheck"), guard(async () => {
      const found = await post(`/api/connectors/${connector.id}/check`);
      if (found.status === "signin") refresh(); // its sign-in ran out: the row offers "Sign in again"
      if (found.error) throw new Error(found.error);
      // It answered with its tools: connected, said at once (it still read "not connected" until a redraw).
      item.className = "connector status-connected";
      item.querySelector(".badge").textContent = t("connector_connected");
      toolList.replaceChildren(...found.tools.map((tool) => el("li", "", `${tool.name} (${toolNote(tool)}) — ${tool.description}`)));
      if (!found.tools.length) toolList.replaceChildren(el("li", "hint", t("connectorNoTools")));
    })),
    actionButton("small", connector.enabled ? t("connectorTurnOff") : t("connectorTurnOn"), guard(async () => {
      await post(`/api/connectors/${connector.id}/enabled`, { enabled: !connector.enabled });
      refresh();
    })),
    actionButton("small danger", t("remove"), guard(async () => {
      if (!await askConfirm({ title: t("connectorRemoveTitle", { name: connector.name }), message: t("connectorRemove"), action: t("remove") })) return;
      await del(`/api/connectors/${connector.id}`);
      refresh();
    })),
    toolList,
  );
  return item;
}

// Wanted: a server that signs in and has no sign-in that works (never signed in, signed out, expired or revoked),
// or a remote one that refused Orkas with "401" (it turned out to want one).
function signInButton(connector, guard, refresh) {
  const refused = connector.kind === "remote" && /\b401\b|unauthori[sz]ed/i.test(connector.last_error ?? "");
  if (!(connector.oauth && (!connector.signed_in || connector.status === "signin")) && !refused) return null;
  const again = connector.signed_in && connector.status === "signin";
  return actionButton("small primary", again ? t("connectorSignInAgain") : t("connectorSignIn"),
    guard(() => startSignIn(connector, refresh)));
}

function openPage(url) {
  if (!/^https?:\/\//i.test(url)) return; // a web page only (the server checked it too)
  const bridge = desktop();
  if (bridge) bridge.open_external(url); // the system browser, where the person's sessions and passwords are
  else window.open(url, "_blank", "noopener");
}

// The server answers with the provider's page once it knows it; the row then says it waits for the browser to
// come back (asked every second: the sign-in ends on another page, in another program), through redraws.
const waiting = new Map(); // connector id → the page being signed in on

function waitingNote(id) {
  const url = waiting.get(id);
  if (!url) return null;
  const note = el("div", "signin-wait");
  note.setAttribute("role", "status");
  const again = el("a", "", t("connectorOpenAgain"));
  again.href = url;
  again.addEventListener("click", (event) => { event.preventDefault(); openPage(url); });
  note.append(t("connectorWaitingSignIn"), " ", again);
  return note;
}

async function startSignIn(connector, refresh) {
  const { url } = await post(`/api/connectors/${connector.id}/login`);
  openPage(url);
  waiting.set(connector.id, url);
  await refresh();
  try {
    for (;;) {
      await new Promise((resolve) => setTimeout(resolve, 1000));
      if (waiting.get(connector.id) !== url) return; // started again: that one's loop reports
      const state = await get(`/api/connectors/${connector.id}/login`);
      if (state.state === "waiting") continue;
      if (state.state === "failed") throw new Error(state.error);
      return;
    }
  } finally {
    if (waiting.get(connector.id) === url) {
      waiting.delete(connector.id);
      await refresh();
    }
  }
}

async function addOne(entry, refresh) {
  let how = {};
  if (entry.command) {
    await post("/api/connectors", { ...entry, check_only: true }); // a wrong folder or name is said before asking
    const command = Array.isArray(entry.command) ? shellJoin(entry.command) : entry.command;
    how = await confirmCommand(entry.name, command, entry.folders ?? []);
    if (!how) return false;
  }
  // Unconfined, it sees everything the person can: the folders named for the sandbox mean nothing then.
  const folders = how.unconfined ? [] : entry.folders;
  const { connector } = await post("/api/connectors", { ...entry, ...how, ...(folders ? { folders } : {}), confirmed: Boolean(entry.command) });
  refresh();
  return connector;
}

// Well-known servers, their commands filled in: a pick fills the form, the person fills in what is theirs (a
// folder, a token) and adds it — confirmed like any local command (the exact command shown first).
const DIRECTORY = [
  { name: "filesystem", kind: "local", command: "npx -y @modelcontextprotocol/server-filesystem /path/to/folder" },
  { name: "git", kind: "local", command: "uvx mcp-server-git --repository /path/to/repository" },
  { name: "fetch", kind: "local", command: "uvx mcp-server-fetch" },
  { name: "memory", kind: "local", command: "npx -y @modelcontextprotocol/server-memory" },
  { name: "sqlite", kind: "local", command: "uvx mcp-server-sqlite --db-path /path/to/data.db" },
  { name: "postgres", kind: "local", command: "npx -y @modelcontextprotocol/server-postgres postgresql://localhost/mydb" },
  { name: "github", kind: "remote", url: "https://api.githubcopilot.com/mcp/", headers: "Authorization=Bearer <your token>" },
];

function directory(form) {
  const list = el("div", "connector-directory");
  list.append(el("span", "hint", t("connectorDirectory")));
  for (const known of DIRECTORY) {
    const pick = el("button", "small", known.name);
    pick.type = "button";
    pick.addEventListener("click", () => {
      const f = form.elements;
      f.name.value = known.name;
      f.kind.value = known.kind;
      f.kind.dispatchEvent(new Event("change"));
      if (known.kind === "remote") { f.url.value = known.url; f.headers.value = known.headers ?? ""; }
      else f.command.value = known.command;
      (known.kind === "remote" ? f.headers : f.command).focus();
    });
    list.append(pick);
  }
  return list;
}

function addForm(guard, refresh) {
  const form = el("form", "connector-form");
  const kind = el("select");
  kind.name = "kind";
  for (const [value, label] of [["remote", t("connectorRemote")], ["local", t("connectorLocal")]]) {
    const option = el("option", "", label);
    option.value = value;
    kind.append(option);
  }
  const kindField = el("label", "field");
  kindField.append(el("span", "", t("connectorKind")), kind);
  const remote = el("div", "remote-fields");
  const oauth = el("label", "field check");
  const oauthBox = el("input");
  oauthBox.type = "checkbox";
  oauthBox.name = "oauth";
  oauth.append(oauthBox, el("span", "", t("connectorOAuth")));
  remote.append(field(t("connectorUrl"), "url", { placeholder: "https://…/mcp" }), oauth,
    field(t("connectorHeaders"), "headers", { multiline: true, placeholder: "Authorization=Bearer …" }));
  const local = el("div", "local-fields");
  local.append(field(t("connectorCommand"), "command", { placeholder: "npx -y @modelcontextprotocol/server-memory" }),
    field(t("connectorEnv"), "env", { multiline: true, placeholder: "API_TOKEN=…" }),
    field(t("connectorFolders"), "folders", { multiline: true, placeholder: "/home/you/notes" }),
    field(t("connectorCwd"), "cwd"));
  const show = () => { remote.hidden = kind.value !== "remote"; local.hidden = kind.value !== "local"; };
  kind.addEventListener("change", show);
  show();
  const submit = el("button", "", t("connectorAdd"));
  submit.type = "submit";
  form.append(field(t("connectorName"), "name"), kindField, remote, local, submit);
  form.prepend(directory(form));
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const f = form.elements;
    const entry = { name: f.name.value.trim() };
    if (kind.value === "remote") Object.assign(entry, { url: f.url.value.trim(), oauth: f.oauth.checked, headers: pairs(f.headers.value, t("connectorHeaders")) });
    else Object.assign(entry, { command: f.command.value.trim(), env: pairs(f.env.value, t("connectorEnv")), cwd: f.cwd.value.trim() || null,
      folders: f.folders.value.split("\n").map((line) => line.trim()).filter(Boolean) });
    const added = await addOne(entry, refresh);
    if (!added) return;
    form.reset();
    if (added.oauth) await startSignIn(added, refresh); // signed in at once, as `orkas mcp add --oauth` does
  }));
  return form;
}

function importForm(guard, refresh) {
  const form = el("form", "connector-import");
  const entries = el("ul", "import-entries");
  const read = el("button", "", t("connectorImportRead"));
  read.type = "submit";
  form.append(field(t("connectorImport"), "text", { multiline: true, placeholder: '{"mcpServers": {…}}' }), read, entries);
  form.addEventListener("submit", guard(async (event) => {
    event.preventDefault();
    const found = await post("/api/connectors/import", { text: form.elements.text.value });
    entries.replaceChildren(...found.entries.map((entry) => {
      const item = el("li", "import-entry");
      item.append(el("strong", "", entry.name), " ");
      if (entry.error) { item.append(el("span", "error-text", entry.error)); return item; }
      item.append(el("code", "", entry.url ?? shellJoin(entry.command)),
        actionButton("small", t("connectorAdd"), guard(async () => { await addOne(entry, refresh); })));
      return item;
    }));
  }));
  return form;
}

export async function connectorsSection(guard, refresh) {
  const { connectors } = await get("/api/connectors");
  const section = el("section", "connectors");
  section.append(el("h3", "", t("connectors")), el("p", "hint", t("connectorsHint")));
  const list = el("ul", "connector-list");
  for (const connector of connectors) list.append(row(connector, guard, refresh));
  if (!connectors.length) list.append(el("li", "hint", t("noConnectors")));
  section.append(list, addForm(guard, refresh), importForm(guard, refresh));
  return section;
}
