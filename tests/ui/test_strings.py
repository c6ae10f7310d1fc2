"""Every language the settings offer says everything the English UI says (a missing key would fall
back to English in the middle of a translated screen), and keeps the same placeholders."""

from __future__ import annotations

import re
from pathlib import Path

STRINGS = Path(__file__).parents[2] / "frontend" / "js" / "strings.js"


def tables() -> dict[str, dict[str, str]]:
    source = STRINGS.read_text(encoding="utf-8")
    found: dict[str, dict[str, str]] = {}
    for language, body in re.findall(r"^  (\w+): \{\n(.*?)^  \},", source, re.M | re.S):
        found[language] = dict(re.findall(r'^    (\w+): "((?:[^"\\]|\\.)*)",$', body, re.M))
    return found


def test_every_language_has_every_string_with_the_same_placeholders() -> None:
    languages = tables()
    english = languages.pop("en")
    assert len(english) > 100 and set(languages) == {"zh", "pt"}
    for language, table in languages.items():
        assert set(table) == set(english), (language, set(english) ^ set(table))
        for key, text in english.items():
            assert set(re.findall(r"\{(\w+)\}", table[key])) == set(re.findall(r"\{(\w+)\}", text)), (language, key)


def test_every_approval_category_the_server_can_send_is_said_in_words() -> None:
    # The engine's command categories, and every category spelled where a tool builds its question.
    import typing

    from orkas.engine.sandbox.verdict import Category

    app = Path(__file__).parents[2] / "app" / "orkas"
    spelled = {
        name
        for path in app.rglob("*.py")
        for group in re.findall(r"categories=\(([^)]*)\)", path.read_text(encoding="utf-8"))
        for name in re.findall(r'"([a-z_]+)"', group)
    }
    categories = set(typing.get_args(Category)) | spelled | {"unconfined"}
    english = tables()["en"]
    missing = sorted(c for c in categories if f"category_{c}" not in english)
    assert not missing, f"approval cards would show raw names: {missing}"
    assert "creates_agent" in spelled and "untrusted_content" in spelled  # the scan found the tools' own


def test_no_key_is_spelled_twice_in_a_language() -> None:
    """A second spelling silently wins over the first (the memory's "Export as Markdown" was lost that way)."""
    source = STRINGS.read_text(encoding="utf-8")
    for language, body in re.findall(r"^  (\w+): \{\n(.*?)^  \},", source, re.M | re.S):
        keys = re.findall(r"^    (\w+): ", body, re.M)
        assert len(keys) == len(set(keys)), (language, sorted({k for k in keys if keys.count(k) > 1}))
