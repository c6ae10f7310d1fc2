// The phone view's two jobs outside Flutter (the Flet session runs on the computer, so it cannot reach
// the phone's own APIs): tell the session the phone's languages, and notify — a system notification
// and a vibration when an approval waits, a run finishes or fails — from the mirror's alerts socket,
// authenticated with the same device token the view stored (Flutter keeps it in localStorage).
(() => {
  "use strict";
  const PREFIX = "flutter."; // shared_preferences on the web: localStorage keys, JSON values
  const read = (key) => {
    try { return JSON.parse(localStorage.getItem(PREFIX + key) ?? "null"); } catch { return null; }
  };
  // Flet's client, reconnecting on its own after the socket dropped (the phone slept, the mirror
  // restarted), keeps drawing its stale tree and ignores the patches made meanwhile; a fresh page joins
  // the same session (kept on the computer) and gets all of it. So: reload once the socket is back.
  // When the computer no longer holds that session (Orkas restarted, or it expired) it closes the socket
  // with STALE: the page forgets the session and reloads, and a new one starts where the person was.
  // The page's own words, in the phone's language (words.js, from strings.py, loaded before this script).
  const all = window.orkasWords ?? {};
  const tags = navigator.languages ?? [navigator.language];
  const lang = tags.map((tag) => tag.replace("_", "-").split("-")[0].toLowerCase()).find((l) => all[l]) ?? "en";
  const words = all[lang] ?? all.en ?? {};
  const NativeSocket = window.WebSocket;
  const STALE = 4001;
  let viewLost = false;
  window.WebSocket = class extends NativeSocket {
    constructor(url, protocols) {
      super(url, protocols);
      if (!String(url).includes("/m/ws")) return;
      let opened = false;
      this.addEventListener("open", () => {
        opened = true;
        away.end();
        if (viewLost) location.reload();
      });
      this.addEventListener("close", (event) => {
        if (event.code === STALE) {
          sessionStorage.removeItem("_flet_session_id"); // Flet's client keeps its session's id there
          location.reload();
        } else if (opened) {
          viewLost = true;
          away.begin();
        }
      });
    }
  };

  // While the view's socket is down (Orkas quit, the Wi-Fi went), Flet's client shows only "Working…": say
  // what happens, in the phone's language, and if it lasts, that Orkas may have been closed. Not at once: a
  // phone waking from sleep reconnects within a moment and should not flash it.
  const away = (() => {
    const SHOWN_AFTER = 2000, LONG_AFTER = 12000; // ms
    let notice = null, timers = [];
    const line = (text, size, weight) => {
      const p = document.createElement("p");
      p.textContent = text ?? "";
      p.style.cssText = `margin: 0 0 12px; font-size: ${size}px; font-weight: ${weight}; line-height: 1.4`;
      return p;
    };
    function show() {
      notice = document.createElement("div");
      notice.setAttribute("role", "alert");
      notice.lang = lang;
      const dark = matchMedia("(prefers-color-scheme: dark)").matches;
      notice.style.cssText = "position: fixed; inset: 0; z-index: 2147483647; display: flex; flex-direction: column;"
        + " justify-content: center; padding: 32px; box-sizing: border-box; font-family: system-ui, sans-serif;"
        + ` text-align: center; background: ${dark ? "#1c1b1f" : "#fff"}; color: ${dark ? "#e6e1e5" : "#1c1b1f"}`;
      notice.append(line(words.unreachable, 22, 600), line(words.unreachable_trying, 16, 400));
      document.body.append(notice);
      timers.push(setTimeout(() => notice?.append(line(words.unreachable_closed, 16, 400)), LONG_AFTER - SHOWN_AFTER));
    }
    return {
      begin() { if (!timers.length) timers.push(setTimeout(show, SHOWN_AFTER)); },
      end() { timers.forEach(clearTimeout); timers = []; notice?.remove(); notice = null; },
    };
  })();

  localStorage.setItem(PREFIX + "orkas.lang", JSON.stringify(tags.join(",")));

  const seen = new Set(); // a reconnect replays the questions still waiting: each is announced once

  function announce(event) {
    let title = null, body = "", buzz = [120];
    if (event.type === "permission_request") {
      if (seen.has(event.id)) return;
      seen.add(event.id);
      title = words.alert_approval || "Orkas"; body = `${event.tool}: ${String(event.preview ?? "").slice(0, 140)}`; buzz = [200, 100, 200];
    } else if (event.type === "error" && event.kind !== "aborted") {
      title = words.alert_failed || "Orkas"; body = String(event.message ?? "");
    } else if ((event.type === "done" && !event.actor) || (event.type === "turn_end" && event.ok)) {
      title = words.alert_finished || "Orkas"; body = String(event.text ?? "").slice(0, 140);
    }
    if (!title) return;
    window.orkasAlerts = (window.orkasAlerts ?? 0) + 1; // what the tests look for
    if (navigator.vibrate) navigator.vibrate(buzz);
    if (document.visibilityState === "visible" || !("Notification" in window)) return; // the view shows it
    if (Notification.permission !== "granted") return;
    const options = { body, tag: event.id ?? event.conversation, icon: "icons/icon-192.png" };
    navigator.serviceWorker?.getRegistration().then((registration) => {
      if (registration) registration.showNotification(title, options);
      else new Notification(title, options);
    }).catch(() => { try { new Notification(title, options); } catch { /* not allowed here */ } });
  }

  // Asked on the first tap after pairing: browsers only ask from a gesture.
  document.addEventListener("pointerup", () => {
    if (read("orkas.device_token") && "Notification" in window && Notification.permission === "default") {
      Notification.requestPermission().catch(() => {});
    }
  });

  let wait = 500;
  function listen() {
    const token = read("orkas.device_token");
    if (!token) { setTimeout(listen, 2000); return; } // not paired yet
    const socket = new WebSocket(`wss://${location.host}/mirror/api/v1/alerts?token=${encodeURIComponent(token)}`);
    socket.onopen = () => { wait = 500; };
    socket.onmessage = (message) => {
      try { announce(JSON.parse(message.data)); } catch { /* not an alert */ }
    };
    socket.onclose = () => { // revoked, asleep, or the mirror restarted: try again (a new token after re-pairing)
      setTimeout(listen, wait);
      wait = Math.min(wait * 2, 10000);
    };
  }
  listen();
})();
