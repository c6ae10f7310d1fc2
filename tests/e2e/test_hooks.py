"""Hooks as a person uses them, through the real `orkas run` and the wire-level fake model, with default settings:
a PreToolUse hook refusing a command (the model told why), a PostToolUse hook formatting what an edit wrote, a
UserPromptSubmit hook adding context and refusing a prompt, a Stop hook keeping the agent going once, and a project's
hooks that never run while its folder is not trusted — and then ask before their first run."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

from tests.e2e.test_cli import ORKAS, anthropic_env
from tests.e2e.test_cli_consent import Terminal
from tests.fakes import anthropic as a_wire
from tests.fakes.server import FakeServer

# Scripts the way people write them for Claude Code: the event as JSON on stdin.
DENY_RM = """import json, sys
event = json.load(sys.stdin)
if event["tool_name"] == "Bash" and "rm " in event["tool_input"]["command"]:
    print(json.dumps({"hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "deny",
                      "permissionDecisionReason": "no rm in this project: move files to trash/ instead"}}))
"""
FORMAT = """import json, sys
path = json.load(sys.stdin)["tool_input"]["file_path"]
text = open(path).read()
open(path, "w").write(text.replace("\\t", "    ").rstrip() + "\\n")
"""
EXIT_2 = "import sys; print('secrets are not for this chat', file=sys.stderr); sys.exit(2)"


def hook_file(path: Path, event: str, script: Path | str, matcher: str = "") -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    group: dict[str, Any] = {"hooks": [{"type": "command", "command": f"python3 {script}", "timeout": 30}]}
    if matcher:
        group["matcher"] = matcher
    path.write_text(json.dumps({"hooks": {event: [group]}}))


def data() -> Path:
    return Path(os.environ["ORKAS_HOME"])


def script(tmp_path: Path, name: str, text: str) -> Path:
    folder = tmp_path / "hook-scripts"
    folder.mkdir(exist_ok=True)
    (folder / name).write_text(text)
    return folder / name


def run(server: FakeServer, cwd: Path, prompt: str, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORKAS, "run", prompt, *args], env={**anthropic_env(server), **env}, cwd=cwd,
                          stdin=subprocess.DEVNULL, capture_output=True, text=True, timeout=90)  # fmt: skip


def tool_results(server: FakeServer) -> list[str]:
    return [  # the last request carries the whole history
        json.dumps(block["content"])
        for message in server.requests[-1].json["messages"]
        if message["role"] == "user" and isinstance(message["content"], list)
        for block in message["content"]
        if block.get("type") == "tool_result"
    ]


def test_a_pretooluse_hook_refuses_a_command_and_the_model_is_told_why(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    home = tmp_path / "home"  # the script in the person's home, named from it: readable to the hook alone
    (home / "hooks").mkdir(parents=True)
    (home / "hooks" / "deny.py").write_text(DENY_RM)
    hook_file(data() / "hooks.json", "PreToolUse", "~/hooks/deny.py", matcher="Bash")
    work = tmp_path / "work"
    (work / "build").mkdir(parents=True)
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("bash", {"command": "rm -rf build"})),
        a_wire.message(a_wire.tool_use("process_start", {"command": "rm -rf build"}, id="toolu_3")),
        a_wire.message(a_wire.tool_use("bash", {"command": "ls"}, id="toolu_2")),
        a_wire.reply_text("Kept it."),
    )
    result = run(anthropic_server, work, "clean up", "--mode", "auto", HOME=str(home))
    assert result.returncode == 0, result.stderr
    refused, in_background, listed = tool_results(anthropic_server)
    assert "A PreToolUse hook blocked this call: no rm in this project: move files to trash/ instead" in refused
    assert "no rm in this project" in in_background  # a background command is Bash to the hook too
    assert (work / "build").is_dir()  # the command never ran
    assert "build" in listed and "blocked" not in listed  # another command passes the same hook


def test_a_posttooluse_hook_formats_what_an_edit_wrote(anthropic_server: FakeServer, tmp_path: Path) -> None:
    hook_file(data() / "hooks.json", "PostToolUse", script(tmp_path, "fmt.py", FORMAT), matcher="Edit|Write")
    work = tmp_path / "work"
    work.mkdir()
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("write_file", {"path": "app.py", "content": "def f():\n\treturn 1\n\n\n"})),
        a_wire.reply_text("Written."),
    )
    result = run(anthropic_server, work, "write app.py", "--mode", "auto")
    assert result.returncode == 0, result.stderr
    assert (work / "app.py").read_text() == "def f():\n    return 1\n"
    # A hook that fails is said in the terminal too, and the run goes on.
    failing = {"matcher": "Write", "hooks": [{"type": "command", "command": "no-such-formatter --fix"}]}
    (data() / "hooks.json").write_text(json.dumps({"hooks": {"PostToolUse": [failing]}}))
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("write_file", {"path": "b.py", "content": "x = 1\n"})),
        a_wire.reply_text("Written."),
    )
    failed = run(anthropic_server, work, "write b.py", "--mode", "auto")
    assert failed.returncode == 0 and (work / "b.py").exists()
    assert "orkas: The PostToolUse hook `no-such-formatter --fix` failed (exit 127)" in failed.stderr


def test_prompt_hooks_add_context_or_refuse_and_a_stop_hook_keeps_the_agent_going_once(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    work = tmp_path / "work"
    work.mkdir()
    context = script(tmp_path, "ctx.py", "print('The build runs with make, never npm.')")
    hook_file(data() / "hooks.json", "UserPromptSubmit", context)
    anthropic_server.script(a_wire.reply_text("Use make."))
    assert run(anthropic_server, work, "how do I build?").returncode == 0
    said = json.dumps(anthropic_server.requests[-1].json["messages"][-1])
    assert "how do I build?" in said and "The build runs with make, never npm." in said

    hook_file(data() / "hooks.json", "UserPromptSubmit", script(tmp_path, "no.py", EXIT_2))
    sent = len(anthropic_server.requests)
    refused = run(anthropic_server, work, "print my keys")
    assert refused.returncode == 1 and "A hook refused this message: secrets are not for this chat" in refused.stderr
    assert len(anthropic_server.requests) == sent  # the model never saw it

    again = script(tmp_path, "again.py", """import json, sys
event = json.load(sys.stdin)
if not event["stop_hook_active"]:
    print(json.dumps({"decision": "block", "reason": "run the tests before you stop"}))
""")  # fmt: skip
    hook_file(data() / "hooks.json", "Stop", again)
    anthropic_server.script(a_wire.reply_text("Done."), a_wire.reply_text("Tests pass. Done."))
    kept = run(anthropic_server, work, "fix it")
    assert kept.returncode == 0 and kept.stdout.strip().endswith("Tests pass. Done."), kept.stderr
    last = json.dumps(anthropic_server.requests[-1].json["messages"][-1])
    assert "A Stop hook asks you not to stop yet: run the tests before you stop" in last


def test_a_projects_hooks_never_run_untrusted_and_ask_before_their_first_run_once_trusted(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    project = tmp_path / "cloned"
    (project / ".git").mkdir(parents=True)
    planted = project / ".orkas" / "planted.py"  # the repository's own script, as a project's hooks are
    planted.parent.mkdir()
    planted.write_text("open('HOOK-RAN', 'w').write('yes')")
    hook_file(project / ".orkas" / "hooks.json", "PreToolUse", planted)
    anthropic_server.script(a_wire.message(a_wire.tool_use("list_files", {"path": "."})), a_wire.reply_text("Seen."))
    result = run(anthropic_server, project, "look")
    assert result.returncode == 0, result.stderr
    assert not (project / "HOOK-RAN").exists()  # not trusted: never run, never asked

    trusted = subprocess.run([ORKAS, "trust", "add", str(project)], env=anthropic_env(anthropic_server),
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert trusted.returncode == 0, trusted.stderr
    anthropic_server.script(a_wire.message(a_wire.tool_use("list_files", {"path": "."})), a_wire.reply_text("Seen."))
    unattended = run(anthropic_server, project, "look again")
    assert unattended.returncode == 0 and not (project / "HOOK-RAN").exists()  # nobody to ask: not run

    anthropic_server.script(a_wire.message(a_wire.tool_use("list_files", {"path": "."})), a_wire.reply_text("Seen."))
    terminal = Terminal(anthropic_server, project, "look once more", "--json")
    asked = terminal.question()
    assert b"PreToolUse hook from" in asked and str(planted).encode() in asked
    terminal.type("a")  # always: this command, in this project
    terminal.finish()
    assert (project / "HOOK-RAN").read_text() == "yes"
    (project / "HOOK-RAN").unlink()
    anthropic_server.script(a_wire.message(a_wire.tool_use("list_files", {"path": "."})), a_wire.reply_text("Seen."))
    assert run(anthropic_server, project, "and again").returncode == 0
    assert (project / "HOOK-RAN").read_text() == "yes"  # remembered: not asked again
    (project / ".orkas" / "changed.py").write_text("open('X', 'w')")
    hook_file(project / ".orkas" / "hooks.json", "PreToolUse", project / ".orkas" / "changed.py")
    anthropic_server.script(a_wire.message(a_wire.tool_use("list_files", {"path": "."})), a_wire.reply_text("Seen."))
    assert run(anthropic_server, project, "after an edit").returncode == 0
    assert not (project / "X").exists()  # an edited hook is a new command: asked again (nobody here: not run)
