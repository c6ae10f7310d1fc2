"""`orkas run` end to end: a real subprocess, the real SDKs, the fake servers on 127.0.0.1."""

from __future__ import annotations

import json
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import subprocess_env
from tests.fakes import anthropic as a_wire
from tests.fakes import openai as o_wire
from tests.fakes.server import FakeServer, Reply

ORKAS = str(Path(sys.executable).parent / "orkas")


def orkas(*args: str, env: dict[str, str], cwd: Path, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run([ORKAS, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=timeout)


def anthropic_env(server: FakeServer, key: str = "sk-ant-test") -> dict[str, str]:
    return subprocess_env(ANTHROPIC_API_KEY=key, ANTHROPIC_BASE_URL=server.url)


def test_streams_text_and_exits_zero(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(a_wire.reply_text("Hello from Orkas."))
    result = orkas(
        "run",
        "say hello",
        "--model",
        "anthropic/claude-test",
        env=anthropic_env(anthropic_server),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from Orkas.\n"
    assert "NETWORK-GUARD" not in result.stderr
    assert anthropic_server.requests[0].json["messages"][0]["content"][0]["text"] == "say hello"


def test_one_line_per_tool_call(anthropic_server: FakeServer, tmp_path: Path) -> None:
    (tmp_path / "todo.txt").write_text("buy milk\n")
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("read_file", {"path": "todo.txt"}, id="toolu_1")),
        a_wire.message(a_wire.tool_use("list_files", {}, id="toolu_2")),
        a_wire.reply_text("You need to buy milk."),
    )
    result = orkas(
        "run",
        "what is on my list?",
        "--workspace",
        str(tmp_path),
        env=anthropic_env(anthropic_server),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "You need to buy milk.\n"
    lines = result.stderr.strip().splitlines()
    assert lines[0].startswith("orkas: session ")
    lines = lines[1:]
    assert len(lines) == 2
    assert lines[0].startswith("• read_file todo.txt → ok in ") and lines[0].endswith("1\tbuy milk")  # its summary
    assert lines[1].startswith("• list_files → ok")


def test_json_prints_one_event_per_line(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("list_files", {}, id="toolu_1")), a_wire.reply_text("Empty.")
    )
    result = orkas("run", "list", "--json", env=anthropic_env(anthropic_server), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    kinds = [e["type"] for e in events]
    collapsed = [k for i, k in enumerate(kinds) if k != "text_delta" or kinds[i - 1] != "text_delta"]
    assert collapsed == [
        "user_message", "run_start", "usage", "tool_start", "tool_end", "text_delta", "usage", "done", "idle"
    ]  # fmt: skip
    assert "".join(e["text"] for e in events if e["type"] == "text_delta") == "Empty."
    # The wire the window's socket carries: its version, a number per event, the conversation on every line.
    conversation = events[0]["conversation"]
    assert len(conversation) == 32 and {e["conversation"] for e in events} == {conversation}
    assert {e["v"] for e in events} == {2} and [e["seq"] for e in events] == list(range(1, len(events) + 1))
    assert events[0]["text"] == "list"
    assert events[1]["session_id"] == conversation and events[1]["model"] == "anthropic/claude-sonnet-4-5"
    assert events[4]["content"][0]["type"] == "text" and events[4]["is_error"] is False
    done = events[-2]
    assert done["text"] == "Empty." and done["tool_loops"] == 1
    assert done["usage"]["input_tokens"] == 20


def test_bad_key_is_one_clear_line_and_exit_1(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(a_wire.error(401, "authentication_error", "invalid x-api-key"))
    result = orkas("run", "hi", env=anthropic_env(anthropic_server, key="wrong"), cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1] == (
        "orkas: error: anthropic: invalid x-api-key (HTTP 401). Check the API key for this provider."
    )
    assert "wrong" not in result.stderr


def test_unknown_provider_is_a_usage_error(tmp_path: Path) -> None:
    env = subprocess_env(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    result = orkas("run", "hi", "--model", "nosuch/model-x", env=env, cwd=tmp_path)
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1] == (
        "orkas: unknown provider 'nosuch' in 'nosuch/model-x'; configured: anthropic "
        "(write provider/model, e.g. openrouter/nosuch/model-x)"
    )


def test_no_provider_configured(tmp_path: Path) -> None:
    result = orkas("run", "hi", env=subprocess_env(), cwd=tmp_path)
    assert result.returncode == 2 and "no model provider is configured" in result.stderr


def test_network_failure_is_one_clear_line(tmp_path: Path) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    env = subprocess_env(OPENAI_BASE_URL=f"http://127.0.0.1:{port}/v1", OPENAI_API_KEY="k")
    result = orkas("run", "hi", "--model", "openai/gpt-test", "--retries", "0", env=env, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip().splitlines()[-1].startswith("orkas: error: openai: could not reach http://127.0.0.1:")
    assert "Check the network connection" in result.stderr


def test_openai_compatible_server(openai_server: FakeServer, tmp_path: Path) -> None:
    openai_server.script(o_wire.reply_text("local model says hi"))
    env = subprocess_env(OPENAI_BASE_URL=openai_server.url + "/v1")
    result = orkas("run", "hi", "--model", "openai/qwen3", env=env, cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "local model says hi\n"
    assert openai_server.requests[0].json["model"] == "qwen3"


def test_ctrl_c_stops_the_run(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(Reply(events=a_wire.events([a_wire.text("too late")]), stall=30.0))
    proc = subprocess.Popen(
        [ORKAS, "run", "hi", "--json"],
        env=anthropic_env(anthropic_server),
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert proc.stdout is not None
    assert json.loads(proc.stdout.readline())["type"] == "user_message"
    assert json.loads(proc.stdout.readline())["type"] == "run_start"
    deadline = time.monotonic() + 10
    while not anthropic_server.requests and time.monotonic() < deadline:
        time.sleep(0.02)
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=10)  # a deadline, not a timing claim
    assert proc.returncode == 130, err
    *_, last, idle = (json.loads(line) for line in out.strip().splitlines())
    assert last["type"] == "error" and last["kind"] == "aborted" and idle["type"] == "idle"


def test_unknown_model_is_one_clear_line(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(a_wire.error(404, "not_found_error", "model: claude-nope"))
    result = orkas("run", "hi", "--model", "claude-nope", env=anthropic_env(anthropic_server), cwd=tmp_path)
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines()[-1]
        == "orkas: error: anthropic: model: claude-nope (HTTP 404). Check the model name."
    )


def test_continue_a_session(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(a_wire.reply_text("First answer."), a_wire.reply_text("Second answer."))
    env = anthropic_env(anthropic_server)
    first = orkas("run", "first question", "--json", env=env, cwd=tmp_path)
    session_id = json.loads(first.stdout.splitlines()[0])["conversation"]
    second = orkas("run", "follow-up", "--session", session_id, env=env, cwd=tmp_path)
    assert second.returncode == 0, second.stderr
    assert second.stdout == "Second answer.\n"
    sent = anthropic_server.requests[1].json["messages"]
    assert [m["role"] for m in sent] == ["user", "assistant", "user"]
    assert sent[0]["content"][0]["text"] == "first question" and sent[2]["content"][0]["text"] == "follow-up"


def test_unknown_session_is_a_usage_error(tmp_path: Path) -> None:
    env = subprocess_env(ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    result = orkas("run", "hi", "--session", "doesnotexist", env=env, cwd=tmp_path)
    assert result.returncode == 2 and "no session 'doesnotexist'" in result.stderr


def test_session_repair_prints_the_report(tmp_path: Path) -> None:
    from orkas.adapter.conversations.sessions import encode_line
    from orkas.engine.messages import AssistantMessage, TextBlock, ToolUseBlock, UserMessage

    path = tmp_path / "broken.jsonl"
    call = AssistantMessage(content=(ToolUseBlock(id="a", name="read_file", input={}),), provider="p", model="m")
    path.write_bytes(encode_line(UserMessage(content=(TextBlock(text="hi"),))) + encode_line(call) + b'{"v":1,"id')
    dry = orkas("session", "repair", str(path), "--json", "--dry-run", env=subprocess_env(), cwd=tmp_path)
    assert json.loads(dry.stdout)["rewritten"] is False
    result = orkas("session", "repair", str(path), "--json", env=subprocess_env(), cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    assert report["records"] == 2 and report["torn_tail_bytes"] == 10 and report["rewritten"] is True
    assert report["repair"]["synthesized_results"] == ["a"]
    again = orkas("session", "repair", str(path), env=subprocess_env(), cwd=tmp_path)
    assert "file unchanged" in again.stdout and "3 records loaded" in again.stdout


def test_auto_mode_runs_workspace_commands_and_refuses_dangerous_ones(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "keep.txt").write_text("precious")
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("bash", {"command": "mkdir out && echo made > out/a.txt"}, id="toolu_1")),
        a_wire.message(a_wire.tool_use("bash", {"command": "rm -rf ./*"}, id="toolu_2")),
        a_wire.reply_text("Made the file; deleting needs your approval."),
    )
    result = orkas(
        "run",
        "organise",
        "--workspace",
        str(workspace),
        "--mode",
        "auto",
        env=anthropic_env(anthropic_server),
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert (workspace / "out" / "a.txt").read_text() == "made\n"
    assert (workspace / "keep.txt").read_text() == "precious"  # wholesale: asked, nobody answered, denied
    lines = [line for line in result.stderr.splitlines() if line.startswith("• bash")]
    assert "→ ok" in lines[0] and "→ error" in lines[1] and "destructive" in lines[1]
    sent = anthropic_server.requests[2].json["messages"][-1]["content"][0]
    assert sent["is_error"] is True and "approval" in sent["content"][0]["text"]


def test_plan_mode_changes_nothing(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(
        a_wire.message(a_wire.tool_use("write_file", {"path": "new.txt", "content": "x"}, id="toolu_1")),
        a_wire.reply_text("I would create new.txt."),
    )
    result = orkas("run", "plan it", "--mode", "plan", env=anthropic_env(anthropic_server), cwd=tmp_path)
    assert result.returncode == 0 and not (tmp_path / "new.txt").exists()


def test_status_says_what_is_configured(tmp_path: Path) -> None:
    result = orkas("status", env=subprocess_env(OPENAI_API_KEY="k"), cwd=tmp_path)
    assert result.returncode == 0
    assert "providers:     openai" in result.stdout and "sandbox:" in result.stdout
    assert "k\n" not in result.stdout  # never a key


def test_a_command_line_conversation_is_the_window_s_and_an_older_session_continues(
    anthropic_server: FakeServer, tmp_path: Path
) -> None:
    """`orkas run` drives the same conversations as the window: what it starts is listed there (titled by its
    first words, in its workspace), and a session an older version kept in `<data>/sessions/` goes on."""
    import asyncio

    from orkas.adapter.conversations.sessions import SessionStore
    from orkas.adapter.conversations.store import ConversationStore
    from orkas.engine.messages import AssistantMessage, TextBlock, UserMessage

    anthropic_server.script(a_wire.reply_text("Hello there."), a_wire.reply_text("Still here."))
    env = anthropic_env(anthropic_server)
    data = Path(env["ORKAS_HOME"])
    ran = orkas("run", "say hello", "--json", env=env, cwd=tmp_path)
    assert ran.returncode == 0, ran.stderr
    conversation = json.loads(ran.stdout.splitlines()[0])["conversation"]
    [listed] = ConversationStore(data).recent()
    assert listed.id == conversation and listed.title == "say hello" and listed.workspace == str(tmp_path.resolve())

    old = SessionStore(data / "sessions").create()
    said = (
        UserMessage(content=(TextBlock(text="remember 42"),)),
        AssistantMessage(content=(TextBlock(text="ok"),), provider="anthropic", model="m"),
    )
    for message in said:
        asyncio.run(old.append(message))
    old.close()
    (data / "sessions" / f"{old.id}.agent").unlink(missing_ok=True)
    again = orkas("run", "what number?", "--session", old.id, env=env, cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert again.stdout == "Still here.\n"
    sent = anthropic_server.requests[-1].json["messages"]
    assert [m["content"][0]["text"] for m in sent] == ["remember 42", "ok", "what number?"]
    assert {c.id for c in ConversationStore(data).recent()} == {conversation, old.id}
    assert not (data / "sessions" / f"{old.id}.jsonl").exists()  # moved, not copied


def test_an_empty_session_id_is_refused_not_taken_for_a_new_conversation(tmp_path: Path) -> None:
    """`--session "$ID"` with ID unset in a script: a new conversation answering would hide the mistake."""
    home = tmp_path / "home"
    env = subprocess_env(ORKAS_HOME=str(home), ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    for empty in ("", " "):
        done = orkas("run", "hi", "--session", empty, env=env, cwd=tmp_path)
        assert done.returncode == 2 and "--session needs a conversation's id" in done.stderr, done.stderr
    assert not (home / "conversations").exists() or not any((home / "conversations").iterdir())


def test_a_run_refused_before_sending_leaves_no_empty_chat_behind(tmp_path: Path) -> None:
    """A configuration mistake said before anything is sent: the conversation the command began is not kept
    (it showed in the window as an empty "Untitled chat")."""
    home = tmp_path / "home"
    env = subprocess_env(ORKAS_HOME=str(home), ANTHROPIC_API_KEY="k", ANTHROPIC_BASE_URL="http://127.0.0.1:9")
    mistakes = [
        (["--model", "nosuch/model-x"], tmp_path),  # an unknown provider
        (["--agent", "nobody"], tmp_path),  # an unknown agent
        ([], home.parent),  # a workspace that holds Orkas's own data
    ]
    for extra, cwd in mistakes:
        result = orkas("run", "hi", *extra, env=env, cwd=cwd)
        assert result.returncode == 2, result.stderr
        assert "session" not in result.stderr  # no id to continue: there is nothing to continue
    for empty in ("", "   ", "\u200b", "\t\u00a0\n"):  # an unset $PROMPT in a script; nothing that shows
        result = orkas("run", empty, env=env, cwd=tmp_path)
        assert result.returncode == 2 and "orkas: the message is empty" in result.stderr, result.stderr
    result = orkas("run", "hi", "--model", "", env=env, cwd=tmp_path)  # an unset $MODEL: not the default, silently
    assert result.returncode == 2 and "--model needs a model" in result.stderr, result.stderr
    assert not list((home / "conversations").glob("*")) and not list((home / "workspaces").glob("*"))
