// Talking to the in-process server: JSON over fetch with the launch token, and one WebSocket of
// numbered events per open conversation that resumes after the last sequence number it saw.

const TOKEN_KEY = "orkas-token";

export function takeToken() {
  const fromUrl = new URLSearchParams(location.search).get("token");
  if (fromUrl) {
    sessionStorage.setItem(TOKEN_KEY, fromUrl);
    history.replaceState(null, "", "/"); // the token never stays in the address bar or history
  }
  return sessionStorage.getItem(TOKEN_KEY) || "";
}

const token = takeToken();

export class ApiError extends Error {
  constructor(status, message, data = {}) {
    super(message);
    this.status = status;
    this.data = data; // the whole answer: some refusals say which field they are about
  }
}

export async function call(method, path, body) {
  const options = { method, headers: { "X-Orkas-Token": token } };
  if (body !== undefined) {
    options.headers["Content-Type"] = "application/json";
    options.body = JSON.stringify(body);
  }
  return answer(await fetch(path, options));
}

// A file's bytes as the request body: the browser streams it, the server writes it to disk as it arrives.
export async function upload(path, file) {
  const headers = { "X-Orkas-Token": token, "Content-Type": "application/octet-stream" };
  return answer(await fetch(path, { method: "POST", headers, body: file }));
}

// The server turns this page's token away: Orkas was restarted (each launch has its own token). Said once,
// by the page (main.js shows it), instead of a "reconnecting…" that never ends.
const expired = () => window.dispatchEvent(new Event("orkas:expired"));

async function answer(response) {
  if (response.status === 401) expired();
  if (response.status === 204) return null;
  const data = await response.json().catch(() => ({}));
  if (!response.ok) {
    const detail = data.detail ?? data.error ?? response.statusText;
    const message = Array.isArray(detail) ? detail.map((d) => d.msg).join("; ") : String(detail);
    throw new ApiError(response.status, message, data);
  }
  return data;
}

export const get = (path) => call("GET", path);

// An export (text, or a Blob for an archive): fetched with the token, which a plain link could not carry.
export async function download(path, as = "text") {
  const response = await fetch(path, { headers: { "X-Orkas-Token": token } });
  if (!response.ok) throw new ApiError(response.status, response.statusText);
  return as === "blob" ? response.blob() : response.text();
}
export const post = (path, body = {}) => call("POST", path, body);
export const put = (path, body = {}) => call("PUT", path, body);
export const patch = (path, body = {}) => call("PATCH", path, body);
export const del = (path) => call("DELETE", path, {});

// A socket of server-pushed events that reconnects after a drop until the returned function is
// called. `path` is a string or a function giving it at each connection (to resume where it left off);
// `onState(true|false)` hears the connection come and go.
export function listen(path, onEvent, onState) {
  let socket = null;
  let closed = false;
  let retry = 250;
  const open = () => {
    const where = typeof path === "function" ? path() : path;
    const joiner = where.includes("?") ? "&" : "?";
    socket = new WebSocket(`ws://${location.host}${where}${joiner}token=${encodeURIComponent(token)}`);
    let opened = false;
    socket.onopen = () => { opened = true; retry = 250; onState?.(true); };
    socket.onmessage = (message) => onEvent(JSON.parse(message.data));
    socket.onclose = () => {
      if (closed) return;
      // A socket refused at once: the server is down, or it no longer takes this token (a browser hides
      // which). One request with the token tells them apart; a 401 stops the retries for good.
      if (!opened) {
        fetch("/api/status", { headers: { "X-Orkas-Token": token } }).then((response) => {
          if (response.status === 401) { closed = true; expired(); }
        }).catch(() => {});
      }
      onState?.(false);
      setTimeout(() => closed || open(), retry);
      retry = Math.min(retry * 2, 4000);
    };
  };
  open();
  return () => { closed = true; socket?.close(); };
}

// The event format this page understands (adapter/product_events.py WIRE_VERSION). A server that
// speaks a newer one was updated under the page: reload rather than misread its events.
export const WIRE_VERSION = 2;

// One conversation's live events. `onEvent` gets every event once, in order; after a drop the socket
// reconnects and asks for everything after the last sequence number delivered.
export class EventStream {
  constructor(conversationId, after, onEvent, onState) {
    this.after = after;
    this.close = listen(() => `/api/events?conversation=${conversationId}&after=${this.after}`, (event) => {
      if (event.type === "hello") {
        if ((event.v ?? WIRE_VERSION) > WIRE_VERSION) location.reload();
        return;
      }
      if (event.seq <= this.after) return; // already shown: never twice
      this.after = event.seq;
      onEvent(event);
    }, onState);
  }
}

// The desktop window's bridge to Python (pywebview), when there is one.
export function desktop() {
  return window.pywebview?.api ?? null;
}
