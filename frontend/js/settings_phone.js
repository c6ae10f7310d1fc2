// Settings → Phone: let paired phones on this network watch and steer the conversations. Off by default;
// pairing shows a QR code (the phone view's address, a one-time code, the certificate's fingerprint);
// each paired phone is listed with Revoke, which asks first (the phone is signed out) and then cuts it off at once.

import { del, get, post } from "./api.js";
import { el } from "./cards.js";
import { askConfirm } from "./dialogs.js";
import { currentLanguage, t } from "./strings.js";
import { actionButton } from "./settings_common.js";

export async function phoneSection(guard, refresh) {
  const mirror = await get("/api/mirror").catch(() => null);
  const section = el("section", "phone");
  section.append(el("h3", "", t("phone")), el("p", "hint", t("phoneHint")));
  if (!mirror) return section;
  const toggle = el("label", "check");
  const box = el("input");
  box.type = "checkbox";
  box.name = "mirror";
  box.checked = mirror.enabled;
  box.addEventListener("change", guard(async () => {
    await post("/api/mirror", { enabled: box.checked });
    refresh();
  }));
  toggle.append(box, " ", t("phoneEnable"));
  section.append(toggle);
  if (mirror.enabled) {
    const where = el("p", "hint", t("phoneAddress"));
    where.append(" ", el("code", "path", mirror.url), " · ", el("code", "fingerprint", mirror.fingerprint));
    section.append(where);
    const pairing = el("div", "pairing");
    section.append(actionButton("primary", t("phonePair"), guard(async () => {
      const made = await post("/api/mirror/pairings", {});
      const image = el("img", "qr");
      image.src = made.qr;
      image.alt = t("phoneQr");
      const minutes = Math.max(1, Math.round((made.expires_at * 1000 - Date.now()) / 60000));
      pairing.replaceChildren(image, el("p", "", t("phoneCode", { minutes })), el("code", "pair-code", made.code),
        el("p", "hint", t("phoneFingerprint", { fingerprint: made.fingerprint })));
      awaitPairing(pairing, mirror.devices, made.expires_at * 1000, refresh);
    })), pairing);
  }
  const list = el("ul", "devices");
  for (const device of mirror.devices) {
    const item = el("li", "device");
    item.dataset.device = device.id;
    const seen = new Date(device.last_seen * 1000).toLocaleString(currentLanguage()); // the app's language, not the browser's
    item.append(el("strong", "", device.name), " ", el("span", "hint", t("phoneSeen", { when: seen })), " ",
      actionButton("small danger", t("phoneRevoke"), guard(async () => {
        const sure = await askConfirm({ title: t("phoneRevokeTitle"), message: t("phoneRevokeConfirm", { name: device.name }),
          action: t("phoneRevoke") });
        if (!sure) return;
        await del(`/api/mirror/devices/${device.id}`);
        refresh();
      })));
    list.append(item);
  }
  if (!mirror.devices.length) list.append(el("li", "hint", t("phoneNone")));
  section.append(el("h4", "", t("phoneDevices")), list);
  return section;
}

// While a code is shown, the phone that uses it appears in the list (the used code and "No phone is paired" stayed
// until Settings was opened again). Looked for until the code expires or the section is gone.
function awaitPairing(pairing, known, until, refresh) {
  const before = new Set(known.map((d) => d.id));
  const look = async () => {
    if (!pairing.isConnected || Date.now() > until) return;
    const now = await get("/api/mirror").catch(() => null);
    if (now?.devices.some((d) => !before.has(d.id))) { refresh(); return; }
    setTimeout(look, 1500);
  };
  setTimeout(look, 1500);
}
