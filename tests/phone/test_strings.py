"""The phone view speaks English, 中文 and Português: every key everywhere, the same placeholders."""

from __future__ import annotations

import string

from orkas.phone.strings import STRINGS, Words, language


def placeholders(text: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(text) if name}


def test_every_language_has_every_key_with_the_same_placeholders() -> None:
    english = STRINGS["en"]
    for lang, table in STRINGS.items():
        assert table.keys() == english.keys(), lang
        for key, text in table.items():
            assert placeholders(text) == placeholders(english[key]), (lang, key)


def test_the_phone_language_is_picked_from_its_preferences() -> None:
    assert language(["zh-Hans-CN", "en"]) == "zh"
    assert language(["de-DE", "pt-BR"]) == "pt"
    assert language(["de"]) == "en"
    assert Words("zh")("unread", count=3) == "3 条新消息"
    assert Words("xx")("send") == "Send"
