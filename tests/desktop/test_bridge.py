"""The page↔Python bridge without a window: what it accepts and what it refuses."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from orkas.desktop.bridge import Bridge


def test_only_web_and_mail_links_leave_the_app() -> None:
    opened: list[str] = []
    bridge = Bridge(lambda conversation, path: {}, open_url=opened.append)
    assert bridge.open_external("https://example.org/x")
    assert bridge.open_external("mailto:someone@example.org")
    for bad in ("javascript:alert(1)", "file:///etc/passwd", "data:text/html,hi", 42):
        assert not bridge.open_external(bad)  # type: ignore[arg-type]
    assert opened == ["https://example.org/x", "mailto:someone@example.org"]


def test_each_dropped_path_gets_a_record_or_its_own_error(tmp_path: Path) -> None:
    def attach(conversation: str, path: Path) -> dict[str, Any]:
        if path.name == "bad.txt":
            raise ValueError("is not allowed")
        return {"name": path.name, "conversation": conversation}

    bridge = Bridge(attach)
    results = bridge.attach_paths("c1", [str(tmp_path / "good.txt"), str(tmp_path / "bad.txt")])
    assert results == [{"name": "good.txt", "conversation": "c1"}, {"error": "bad.txt: is not allowed"}]
    assert bridge.ping()["ok"] is True
    assert [name for name in dir(bridge) if not name.startswith("_")] == [
        "attach_paths",
        "open_external",
        "open_folder",
        "pick_folder",
        "ping",
    ]  # all the page can reach


def test_open_folder_opens_folders_only(tmp_path: Path) -> None:
    opened: list[str] = []
    bridge = Bridge(lambda conversation, path: {}, open_url=opened.append)
    skill = tmp_path / "skill"
    skill.mkdir()
    (skill / "run.sh").write_text("echo hi")
    (tmp_path / "link").symlink_to(skill)
    assert bridge.open_folder(str(skill))
    for bad in (str(skill / "run.sh"), str(tmp_path / "link"), "relative/path", str(tmp_path / "missing"), "a\0b", 7):
        assert not bridge.open_folder(bad)  # type: ignore[arg-type]
    assert opened == [skill.as_uri()]


def test_the_folder_picker_answers_the_chosen_folder_or_none(tmp_path: Path) -> None:
    import webview

    class Window:  # pywebview's window, as far as the picker uses it
        def __init__(self, answer: tuple[str, ...] | None) -> None:
            self.answer = answer
            self.asked: list[object] = []

        def create_file_dialog(self, kind: object) -> tuple[str, ...] | None:
            self.asked.append(kind)
            return self.answer

    bridge = Bridge(lambda conversation, path: {})
    assert bridge.pick_folder() is None  # no window yet
    chosen = Window((str(tmp_path),))
    bridge._window = chosen
    assert bridge.pick_folder() == str(tmp_path)
    assert chosen.asked == [webview.FileDialog.FOLDER]  # a folder dialog, not a file one
    bridge._window = Window(None)  # closed without a choice
    assert bridge.pick_folder() is None
