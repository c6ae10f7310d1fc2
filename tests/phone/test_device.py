"""The name a phone pairs under, from its browser's user agent: what the person recognises in the computer's list."""

from __future__ import annotations

import pytest

from orkas.phone.device import device_name
from orkas.phone.strings import Words

IOS = "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko)"
AGENTS = {
    "iPhone (Safari)": f"{IOS} Version/17.5 Mobile/15E148 Safari/604.1",
    "iPhone (Chrome)": f"{IOS} CriOS/126.0.6478.54 Mobile/15E148 Safari/604.1",
    "Android phone (Chrome)": "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0.0.0 Mobile Safari/537.36",
    "Android tablet (Samsung Internet)": "Mozilla/5.0 (Linux; Android 13; SM-X700) AppleWebKit/537.36 (KHTML, like "
    "Gecko) SamsungBrowser/24.0 Chrome/117.0.0.0 Safari/537.36",
    "Android phone (Firefox)": "Mozilla/5.0 (Android 14; Mobile; rv:127.0) Gecko/127.0 Firefox/127.0",
    "Windows PC (Edge)": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) "
    "Chrome/126.0.0.0 Safari/537.36 Edg/126.0.0.0",
    "Phone": "",
}


@pytest.mark.parametrize(("name", "agent"), AGENTS.items())
def test_a_phone_is_named_by_its_kind_and_its_browser(name: str, agent: str) -> None:
    assert device_name(agent, Words("en")) == name


def test_the_name_is_in_the_phone_s_language() -> None:
    assert device_name(AGENTS["Android phone (Chrome)"], Words("zh")) == "安卓手机（Chrome）"
    assert device_name("curl/8.5", Words("pt")) == "Telemóvel"
