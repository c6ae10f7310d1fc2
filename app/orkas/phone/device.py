"""The name a phone pairs under, read from its browser: what the person recognises in the computer's list of
paired devices ("iPhone (Safari)", "Android phone (Chrome)"), never just "Phone" when the browser says more.

The user agent is all a web page is told (a phone's model is hidden by modern browsers), so the name is the kind
of device and the browser; the person may still type their own before pairing.
"""

from __future__ import annotations

from orkas.phone.strings import Words

# The first marker found names the kind of device (an iPad asking for the desktop site says "Macintosh": a Mac).
KINDS = (
    ("iPhone", "device_iphone"),
    ("iPad", "device_ipad"),
    ("CrOS", "device_chromebook"),
    ("Android", "device_android"),
    ("Windows", "device_windows"),
    ("Macintosh", "device_mac"),
    ("Linux", "device_linux"),
)
# Browsers that carry another's marker too (Edge and Samsung Internet say "Chrome", Chrome says "Safari") first.
BROWSERS = (
    (("EdgA/", "EdgiOS/", "Edg/"), "Edge"),
    (("SamsungBrowser/",), "Samsung Internet"),
    (("OPR/", "OPiOS/", "OPT/"), "Opera"),
    (("FxiOS/", "Firefox/"), "Firefox"),
    (("CriOS/", "Chrome/"), "Chrome"),
    (("Safari/",), "Safari"),
)


def device_name(agent: str, t: Words) -> str:
    """ "Android phone (Chrome)", "iPhone (Safari)", "Windows PC (Edge)"; the kind alone when the browser is not
    known; else "Phone"."""
    kind = next((key for marker, key in KINDS if marker in agent), "")
    if kind == "device_android":  # Android tablets leave "Mobile" out of their agent
        kind = "device_android_phone" if "Mobile" in agent else "device_android_tablet"
    browser = next((name for markers, name in BROWSERS if any(m in agent for m in markers)), "")
    if not kind:
        return t("device_phone")
    return t("device", kind=t(kind), browser=browser) if browser else t(kind)
