"""`orkas agents …` and `orkas run --agents …` end to end: real subprocesses, the real Anthropic SDK, and
the wire fake answering each actor by the system prompt it was sent."""

from __future__ import annotations

import json
import subprocess
import sys
from collections import defaultdict
from pathlib import Path
from typing import Any

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes.routing import ByActor
from tests.fakes.server import FakeServer, Reply

ORKAS = str(Path(sys.executable).parent / "orkas")


def orkas(*args: str, env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORKAS, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=90)


def texts_of(messages: list[dict[str, Any]]) -> str:
    """Every text the model was sent, as plain text."""
    found = []
    for message in messages:
        content = message["content"]
        blocks = [{"type": "text", "text": content}] if isinstance(content, str) else content
        for block in blocks:
            if block.get("type") == "text":
                found.append(block["text"])
            elif block.get("type") == "tool_result":
                inner = block.get("content")
                found += [inner] if isinstance(inner, str) else [b.get("text", "") for b in inner or ()]
    return "\n".join(found)


def test_agents_are_added_listed_and_a_broken_file_is_named(tmp_path: Path) -> None:
    env = subprocess_env()
    home = Path(env["ORKAS_HOME"])
    added = orkas(
        "agents",
        "add",
        "coder",
        "--description",
        "writes code",
        "--prompt",
        "You write code.",
        "--tools",
        "read_file,write_file",
        env=env,
        cwd=tmp_path,
    )
    assert added.returncode == 0, added.stderr
    assert (home / "agents" / "coder" / "AGENT.md").read_text().startswith("---\nname: coder\n")
    twice = orkas("agents", "add", "coder", "--description", "x", "--prompt", "y", env=env, cwd=tmp_path)
    assert twice.returncode == 2 and "already exists" in twice.stderr
    bad_name = orkas("agents", "add", "Bad Name", "--description", "x", "--prompt", "y", env=env, cwd=tmp_path)
    assert bad_name.returncode == 2 and "lowercase" in bad_name.stderr
    (home / "agents" / "broken").mkdir()
    (home / "agents" / "broken" / "AGENT.md").write_text("no frontmatter here")
    listed = orkas("agents", "list", "--json", env=env, cwd=tmp_path)
    data = json.loads(listed.stdout)
    assert [a["name"] for a in data["agents"]] == ["coder"] and data["agents"][0]["tools"] == [
        "read_file",
        "write_file",
    ]
    assert data["problems"] == [{"name": "broken", "problem": "AGENT.md must start with a --- frontmatter block"}]
    text = orkas("agents", "list", env=env, cwd=tmp_path)
    assert text.returncode == 1 and "broken: cannot be used" in text.stderr and "coder: writes code" in text.stdout
    assert orkas("agents", "remove", "coder", env=env, cwd=tmp_path).returncode == 0
    assert not (home / "agents" / "coder").exists()


def test_a_group_run_dispatches_in_parallel_and_continues_with_its_members(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = subprocess_env(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    for name, marker in (("coder", "CODER-BOT"), ("critic", "CRITIC-BOT")):
        made = orkas(
            "agents",
            "add",
            name,
            "--description",
            f"the {name}",
            "--prompt",
            f"You are {marker}.",
            env=env,
            cwd=tmp_path,
        )
        assert made.returncode == 0, made.stderr
    router = ByActor({"coder": "CODER-BOT", "critic": "CRITIC-BOT", "commander": "commander of a team"})
    router.add(
        "commander",
        a_wire.message(
            a_wire.text("Asking both."),
            a_wire.tool_use("dispatch_to", {"to": "coder", "message": "write add()"}, id="toolu_a"),
            a_wire.tool_use("dispatch_to", {"to": "critic", "message": "list risks"}, id="toolu_b"),
        ),
        a_wire.reply_text("Both are done."),
        a_wire.reply_text("You are welcome."),
    )
    router.add("coder", a_wire.reply_text("def add(a, b): return a + b"))
    router.add("critic", a_wire.reply_text("No risks."))
    anthropic_server.script(*[router] * router.total)
    ran = orkas(
        "run",
        "build add and review it",
        "--agents",
        "coder,critic",
        "--json",
        "--model",
        "anthropic/claude-test",
        env=env,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr
    lines = [json.loads(line) for line in ran.stdout.splitlines()]
    assert lines[0]["type"] == "user_message" and lines[-1]["type"] == "idle"  # the window's own wire
    assert all(line["actor"] for line in lines)  # each event says whose it is (the group's own: "group")
    start = lines[1]
    assert start["type"] == "group_start" and start["members"] == ["coder", "critic"] and start["actor"] == "group"
    deltas: dict[str, str] = defaultdict(str)
    for line in lines:
        if line["type"] == "text_delta":
            deltas[line["actor"]] += line["text"]
    assert deltas == {
        "commander": "Asking both.Both are done.",
        "coder": "def add(a, b): return a + b",
        "critic": "No risks.",
    }
    posted = [(line["message"]["from"], line["message"]["text"]) for line in lines if line["type"] == "group_message"]
    assert posted[0] == ("user", "build add and review it") and posted[-1] == ("commander", "Both are done.")
    assert lines[-2]["type"] == "turn_end" and lines[-2]["ok"] is True
    coder_saw = json.dumps(router.seen["coder"][0]["messages"])
    assert "write add()" in coder_saw and "build add and review it" not in coder_saw  # only its slice

    again = orkas(
        "run",
        "thanks",
        "--session",
        start["conversation"],
        "--json",
        "--model",
        "anthropic/claude-test",
        env=env,
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    resumed = [json.loads(line) for line in again.stdout.splitlines()]
    assert resumed[1]["members"] == ["coder", "critic"]
    commander_saw = json.dumps(router.seen["commander"][-1]["messages"])
    assert "Asking both." in commander_saw and "thanks" in commander_saw  # its transcript continues
    anthropic_server.verify()


def test_text_mode_says_each_ask_once_in_words_and_a_failed_one_with_its_reason(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = subprocess_env(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    made = orkas(
        "agents", "add", "coder", "--description", "codes", "--prompt", "You are CODER-BOT.", env=env, cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    router = ByActor({"coder": "CODER-BOT", "commander": "commander of a team"})
    router.add(
        "commander",
        a_wire.message(
            a_wire.text("Asking the coder."),
            a_wire.tool_use("dispatch_to", {"to": "coder", "message": "write add()"}, id="toolu_a"),
            a_wire.tool_use("dispatch_to", {"to": "nobody", "message": "help"}, id="toolu_b"),
        ),
        a_wire.reply_text("Done."),
    )
    router.add("coder", a_wire.reply_text("def add(a, b): return a + b"))
    anthropic_server.script(*[router] * router.total)
    ran = subprocess.run(
        [ORKAS, "run", "please write add", "--agents", "coder"],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL,
    )  # fmt: skip
    assert ran.returncode == 0, ran.stderr
    said = ran.stderr.splitlines()[1:]  # after "orkas: session …"
    assert said[0] == "• commander asked coder: write add()"
    assert len(said) == 2 and said[1].startswith("• commander could not ask nobody: ") and "worker-" not in said[1]
    assert "worker-result" not in ran.stdout + ran.stderr  # the model's envelope never reaches the person
    assert ran.stdout == "commander: Asking the coder.\n\ncoder: def add(a, b): return a + b\n\ncommander: Done.\n\n"


def test_killed_mid_dispatch_the_conversation_loads_and_continues(anthropic_server: FakeServer, tmp_path: Path) -> None:
    import signal
    import time

    env = subprocess_env(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    home = Path(env["ORKAS_HOME"])
    made = orkas(
        "agents", "add", "coder", "--description", "codes", "--prompt", "You are CODER-BOT.", env=env, cwd=tmp_path
    )
    assert made.returncode == 0, made.stderr
    router = ByActor({"coder": "CODER-BOT", "commander": "commander of a team"})
    router.add("commander", a_wire.message(a_wire.tool_use("dispatch_to", {"to": "coder", "message": "slow job"})))
    router.add("coder", Reply(events=a_wire.events([a_wire.text("never finished")]), stall=60))
    router.add("commander", a_wire.reply_text("Picking up where we were."))
    anthropic_server.script(*[router] * router.total)
    process = subprocess.Popen(
        [ORKAS, "run", "start the slow job", "--agents", "coder", "--json", "--model", "anthropic/claude-test"],
        env=env,
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        session_id = json.loads(process.stdout.readline())["conversation"]
        bus = home / "conversations" / session_id / "messages.jsonl"
        deadline = time.monotonic() + 30
        while not (bus.exists() and '"dispatch"' in bus.read_text()) and time.monotonic() < deadline:
            time.sleep(0.02)
        while len(router.seen["coder"]) < 1 and time.monotonic() < deadline:  # the coder's call is in flight
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait(10)
    finally:
        if process.poll() is None:
            process.kill()
    state = json.loads((home / "conversations" / session_id / "state.json").read_text())
    assert state["running"] is True and state["tasks"][0]["status"] == "open"  # as the kill left it

    again = orkas(
        "run",
        "are you there?",
        "--session",
        session_id,
        "--json",
        "--model",
        "anthropic/claude-test",
        env=env,
        cwd=tmp_path,
    )
    assert again.returncode == 0, again.stderr
    state = json.loads((home / "conversations" / session_id / "state.json").read_text())
    assert state["tasks"][0]["status"] == "interrupted" and state["running"] is False
    records = [json.loads(line) for line in bus.read_text().splitlines() if line.strip()]
    ids = [r["id"] for r in records]
    assert len(ids) == len(set(ids))  # nothing duplicated
    texts = [(r["from"], r["text"]) for r in records if "dispatch" not in r]
    assert texts == [
        ("user", "start the slow job"),
        ("user", "are you there?"),
        ("commander", "Picking up where we were."),
    ]
    told = texts_of(router.seen["commander"][-1]["messages"])
    assert "are you there?" in told and "slow job" in told  # its own transcript, repaired, carries on
    assert '<interrupted owner="coder">slow job</interrupted>' in told  # and it hears what the crash cut


def test_an_agent_with_a_worktree_writes_there_and_the_commander_sees_the_diff(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    env = subprocess_env(ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    repo = tmp_path / "repo"
    repo.mkdir()
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.com", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    (repo / "README.md").write_text("project\n")
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-qm", "start"], check=True)
    made = orkas(
        "agents",
        "add",
        "writer",
        "--description",
        "writes",
        "--prompt",
        "You are WRITER-BOT.",
        "--worktree",
        env=env,
        cwd=tmp_path,
    )
    assert made.returncode == 0, made.stderr
    router = ByActor({"writer": "WRITER-BOT", "commander": "commander of a team"})
    router.add("commander", a_wire.message(a_wire.tool_use("dispatch_to", {"to": "writer", "message": "add notes"})))
    router.add(
        "writer",
        a_wire.message(a_wire.tool_use("write_file", {"path": "notes.md", "content": "hello from the worktree\n"})),
        a_wire.reply_text("written"),
    )
    router.add("commander", a_wire.reply_text("The writer added notes.md on its branch."))
    anthropic_server.script(*[router] * router.total)
    ran = orkas(
        "run",
        "add notes",
        "--agents",
        "writer",
        "--mode",
        "auto",
        "--workspace",
        str(repo),
        "--json",
        "--model",
        "anthropic/claude-test",
        env=env,
        cwd=tmp_path,
    )
    assert ran.returncode == 0, ran.stderr + ran.stdout[-2000:]
    assert (repo / ".orkas" / "worktrees" / "writer" / "notes.md").read_text() == "hello from the worktree\n"
    assert not (repo / "notes.md").exists()  # the main checkout is untouched
    status = subprocess.run([*git, "status", "--porcelain"], capture_output=True, text=True, check=True).stdout
    assert status == ""  # the worktrees folder is excluded, not an untracked mess
    told = texts_of(router.seen["commander"][-1]["messages"])
    assert '<diff from="writer"' in told and "+hello from the worktree" in told
    anthropic_server.verify()
