"""Hook files and hook answers: Claude Code's shape read as Claude Code reads it, and each way a hook can answer."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from orkas.adapter.hooks.commands import CommandHooks, HookSet, answer, scripts_of
from orkas.adapter.hooks.config import HookCommand, read_hooks
from orkas.engine.sandbox.executor import ExecResult


def written(path: Path, data: object) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data) if not isinstance(data, str) else data)
    return path


def command(event: str = "PreToolUse", matcher: str = "") -> HookCommand:
    pattern = re.compile(matcher) if matcher not in ("", "*") else None
    return HookCommand(event, pattern, "check", 60.0, "person", Path("hooks.json"))  # type: ignore[arg-type]


def result(code: int | None, output: str = "", truncated: bool = False) -> ExecResult:
    return ExecResult(exit_code=code, output=output, truncated=truncated, spill_path=None, timed_out=code is None,
                      duration=0.1, confined="bubblewrap")  # fmt: skip


def test_a_claude_code_settings_file_is_read_as_is_and_what_orkas_does_not_do_is_skipped(tmp_path: Path) -> None:
    file = written(tmp_path / "settings.json", {
        "permissions": {"allow": ["Bash(npm test)"]},
        "hooks": {
            "PreToolUse": [{"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "lint", "timeout": 5}]}],
            "SessionStart": [{"hooks": [{"type": "command", "command": "hello"}]}],
            "Stop": [{"hooks": [{"type": "prompt", "prompt": "is it done?"}, {"type": "command", "command": "done"}]}],
        },
    })  # fmt: skip
    read = read_hooks(file, "person")
    assert read.problem is None
    assert [(c.event, c.command, c.timeout) for c in read.commands] == [
        ("PreToolUse", "lint", 5.0),
        ("Stop", "done", 60.0),
    ]
    lint = read.commands[0]
    assert lint.matches("edit_file") and lint.matches("Write") and not lint.matches("bash")
    assert read.notes == (f"{file}: SessionStart hooks are not run by Orkas (it runs PreToolUse, PostToolUse, "
                          "UserPromptSubmit, Stop)",)  # fmt: skip
    assert not lint.matches("edit_file_later")  # matched whole
    assert command(matcher="*").matches("anything") and command().matches("bash")
    bash = command(matcher="Bash")
    assert bash.matches("bash") and bash.matches("process_start")  # a background command is Bash too


@pytest.mark.parametrize(
    "content, problem",
    [
        ("{not json", "cannot be read (JSONDecodeError: Expecting property name enclosed in double quotes: line 1"),
        ({"hooks": {"PreToolUse": {"matcher": "x"}}}, "PreToolUse must be a list"),
        ({"hooks": {"PreToolUse": [{"matcher": "(", "hooks": []}]}}, "missing )"),
        ({"hooks": {"Stop": [{"hooks": [{"command": "  "}]}]}}, "has no command"),
        ({"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": 0}]}]}}, "timeout must be 1 to 600"),
        ({"hooks": {"Stop": [{"hooks": [{"command": "x", "timeout": True}]}]}}, "timeout must be"),
        ({"hooks": {"Stop": [{"nohooks": []}]}}, "'hooks'"),
        ([1, 2], "expected"),
    ],
)
def test_a_bad_file_is_one_clear_problem_and_none_of_its_hooks_run(
    tmp_path: Path, content: object, problem: str
) -> None:
    read = read_hooks(written(tmp_path / "hooks.json", content), "workspace")
    assert read.commands == () and read.problem is not None and problem in read.problem
    assert "its hooks do not run" in read.problem


def test_each_way_a_hook_answers() -> None:
    pre = command("PreToolUse")
    assert answer(pre, result(0)).block is None
    assert answer(pre, result(2, "no rm here\n")).block == "no rm here"
    assert answer(pre, result(2)).block is not None  # exit 2 with nothing said still blocks
    deny = {"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "not on main"}}
    assert answer(pre, result(0, json.dumps(deny))).block == "not on main"
    assert answer(pre, result(0, "warming up\n" + json.dumps({"decision": "block", "reason": "r"}))).block == "r"
    allow = {"hookSpecificOutput": {"permissionDecision": "allow"}}
    assert answer(pre, result(0, json.dumps(allow))).block is None  # never approves: just no objection
    failed = answer(pre, result(1, "Traceback: boom"))
    assert failed.block is None and "failed (exit 1): Traceback: boom" in failed.notes[0]
    slow = answer(pre, result(None))
    assert slow.block is None and "did not finish in 60 s" in slow.notes[0]
    said = answer(
        pre, result(0, json.dumps({"systemMessage": "checked", "hookSpecificOutput": {"additionalContext": "c"}}))
    )
    assert said.notes == ("The PreToolUse hook `check`: checked",) and said.context == "c"
    prompt = command("UserPromptSubmit")
    assert answer(prompt, result(0, "Today is Sunday.")).context == "Today is Sunday."
    assert answer(command("PostToolUse"), result(0, "plain words")).context == ""
    stop = command("Stop")
    assert answer(stop, result(0, json.dumps({"continue": False}))).block is None  # Stop: continue false is a stop


def test_a_persons_hook_may_read_the_scripts_it_names_and_nothing_else(tmp_path: Path) -> None:
    script = written(tmp_path / "hooks" / "check.sh", "#!/bin/sh\n")
    hook = HookCommand("PreToolUse", None, f"bash {script} --strict '{tmp_path / 'missing.sh'}' ~/nothing", 5.0,
                       "person", tmp_path / "hooks.json")  # fmt: skip
    assert scripts_of(hook) == (tmp_path / "hooks",)
    broken = HookCommand("Stop", None, "echo 'unclosed", 5.0, "person", tmp_path / "hooks.json")
    assert scripts_of(broken) == ()


def test_a_projects_hooks_are_read_only_when_it_is_trusted_and_each_asks_by_its_own_key(tmp_path: Path) -> None:
    data, project = tmp_path / "data", tmp_path / "project"
    written(data / "hooks.json", {"hooks": {"Stop": [{"hooks": [{"command": "mine"}]}]}})
    written(project / ".orkas" / "hooks.json", {"hooks": {"PreToolUse": [{"hooks": [{"command": "theirs"}]}]}})
    untrusted = HookSet.load(data, project, "c1", project, trusted=False)
    assert [c.command for c in untrusted.commands] == ["mine"]
    hooks = CommandHooks(HookSet.load(data, project, "c1", project, trusted=True), executor=lambda: None)  # type: ignore[arg-type, return-value]
    [ask] = hooks.approvals("PreToolUse", "bash")
    assert ask.key is not None and ask.key.startswith("hook:") and "theirs" in ask.preview
    assert hooks.approvals("Stop") == []  # the person's own never ask
    members = CommandHooks(hooks.hooks, executor=lambda: None, events=frozenset({"PreToolUse"}))  # type: ignore[arg-type, return-value]
    assert not members.wants("Stop") and members.wants("PreToolUse", "bash")
    edited = HookCommand("PreToolUse", None, "theirs --now", 60.0, "workspace", project)
    assert edited.key != ask.key


def test_what_a_hook_says_is_always_text_that_can_be_kept() -> None:
    lone = json.dumps({"decision": "block", "reason": "bad \ud800 byte", "systemMessage": "\udfff",
                       "hookSpecificOutput": {"additionalContext": "x\ud83d"}})  # fmt: skip
    said = answer(command("PostToolUse"), result(0, lone))
    for text in (said.block, said.context, *said.notes):
        assert text is not None
        text.encode("utf-8")  # no lone surrogate left: it would fail here, and in the transcript
    assert said.block == "bad ? byte"


def test_an_edited_script_of_the_project_asks_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    check = written(project / ".orkas" / "check.py", "print('ok')")
    hooks = written(project / ".orkas" / "hooks.json",
                    {"hooks": {"Stop": [{"hooks": [{"command": "python3 .orkas/check.py"}]}]}})  # fmt: skip
    [before] = read_hooks(hooks, "workspace").commands
    [same] = read_hooks(hooks, "workspace").commands
    check.write_text("import os; os.system('curl evil')")
    [after] = read_hooks(hooks, "workspace").commands
    assert before.key == same.key != after.key


def test_an_answer_too_long_to_read_whole_does_not_pass_a_check() -> None:
    cut = result(0, '{"hookSpecificOutput": {"permissionDecision": "deny", "permissionDecisionReason": "RRRR…', True)
    refused = answer(command("PreToolUse"), cut)
    assert refused.block is not None and "its answer was not read, so this is refused" in refused.block
    assert answer(command("UserPromptSubmit"), cut).block is not None
    after = answer(command("PostToolUse"), cut)
    assert after.block is None and "its answer was not read" in after.notes[0]


def test_an_edit_anywhere_in_the_projects_orkas_folder_asks_again(tmp_path: Path) -> None:
    project = tmp_path / "project"
    written(project / ".orkas" / "check.sh", "source .orkas/lib.sh\n")
    lib = written(project / ".orkas" / "lib.sh", "echo ok\n")
    hooks = written(project / ".orkas" / "hooks.json", {"hooks": {"Stop": [{"hooks": [
        {"command": "bash -c 'bash .orkas/check.sh'"}]}]}})  # fmt: skip
    [before] = read_hooks(hooks, "workspace").commands
    lib.write_text("curl evil\n")  # reached only through what the command runs
    [after] = read_hooks(hooks, "workspace").commands
    assert before.key != after.key
