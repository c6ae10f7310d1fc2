"""The real Codex CLI and opencode (installed from npm by scripts/setup.sh, pinned) as group members, each against a
local fake of the API it speaks — Codex: OpenAI's Responses API (tests/fakes/responses.py); opencode: Anthropic's
Messages API (tests/fakes/anthropic.py) — configured in the test's home as a person would configure them. Each
answers in its bubble, calls Orkas's skills through the real `orkas bridge` (the call shown as a card), continues
its own session on the next turn, and Stop ends its whole process tree."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from orkas.app import AgentProfile, external_member, settings_from_env
from orkas.engine.abort import AbortSignal
from orkas.engine.events import Error
from orkas.engine.session import InMemorySession
from orkas.team.agents import AgentSpec
from tests.e2e.test_cli import orkas
from tests.e2e.test_external_agents import lines
from tests.fakes import anthropic as a_wire
from tests.fakes import responses
from tests.fakes.server import FakeServer, Recorded, Reply

AGENTS = Path(__file__).parents[2] / ".venv" / "external-agents" / "node_modules" / ".bin"
CODEX, OPENCODE = AGENTS / "codex", AGENTS / "opencode"
QUESTION = "which skills do I have?"


def configure_codex(home: Path, fake: FakeServer) -> None:
    (home / ".codex").mkdir(parents=True)
    (home / ".codex" / "config.toml").write_text(
        'model = "gpt-test"\nmodel_provider = "fake"\n\n[model_providers.fake]\nname = "fake"\n'
        f'base_url = "{fake.url}/v1"\nwire_api = "responses"\nexperimental_bearer_token = "sk-test"\n'
    )


def configure_opencode(home: Path, fake: FakeServer) -> None:
    folder = home / ".config" / "opencode"
    folder.mkdir(parents=True)
    config = {
        "model": "anthropic/claude-sonnet-4-5",
        "provider": {"anthropic": {"options": {"baseURL": f"{fake.url}/v1", "apiKey": "sk-test"}}},
        "autoupdate": False,
        "share": "disabled",
    }
    (folder / "opencode.json").write_text(json.dumps(config))


def codex_model(request: Recorded) -> Reply:
    """Answers Codex by what it sends: a bridge result back → says what it saw; Orkas's tools offered → calls the
    skills list; a resumed thread (the first question in its input) → says so."""
    said = json.dumps(request.json.get("input"))
    if QUESTION in said and "and again" in said:
        return responses.reply(responses.text_item("RESUMED: the first question is still here"))
    if outputs := responses.outputs(request):
        return responses.reply(responses.text_item("SKILLS SEEN: " + outputs[-1][:3000]))
    namespace = responses.namespace_of(request, "orkas_list_skills")  # Orkas's bridge, as Codex offers it
    if namespace is not None:
        return responses.reply(responses.call_item("orkas_list_skills", {}, namespace=namespace))
    return responses.reply(responses.text_item("no bridge"))


def opencode_model(request: Recorded) -> Reply:
    """The same for opencode over the Messages API (it also asks for a title: answered plainly)."""
    body = request.json
    if "title generator" in json.dumps(body.get("system")):
        return a_wire.reply_text("Skills")
    last = (body.get("messages") or [{}])[-1].get("content")
    results = [b for b in last if b.get("type") == "tool_result"] if isinstance(last, list) else []
    if QUESTION in json.dumps(body.get("messages")) and "and again" in json.dumps(body.get("messages")):
        return a_wire.reply_text("RESUMED: the first question is still here")
    if results:
        return a_wire.reply_text("SKILLS SEEN: " + json.dumps(results[0].get("content"))[:3000])
    listing = next((t["name"] for t in body.get("tools", []) if t.get("name", "").endswith("orkas_list_skills")), None)
    if listing is not None:
        return a_wire.message(a_wire.tool_use(listing, {}, id="toolu_1"))
    return a_wire.reply_text("no bridge")


def member(data: Path, backend: str, cli: Path) -> None:
    folder = data / "agents" / "coder"
    folder.mkdir(parents=True)
    (folder / "AGENT.md").write_text(
        f"---\nname: coder\ndescription: an outside helper\nbackend: {backend}\ncli: {cli}\n---\nHelp.\n"
    )
    skill = data / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Use when notes need tidying.\n---\nSort.\n")


CASES = {
    "codex": (CODEX, "/responses", codex_model, configure_codex),
    "opencode": (OPENCODE, "/v1/messages", opencode_model, configure_opencode),
}


def installed(backend: str) -> Any:
    return pytest.mark.skipif(
        not CASES[backend][0].exists(), reason=f"{backend} is not installed (scripts/setup.sh installs it with npm)"
    )


@pytest.mark.parametrize("backend", [pytest.param(b, marks=installed(b)) for b in CASES])
def test_a_real_cli_answers_uses_the_bridge_and_resumes_its_session(backend: str, tmp_path: Path) -> None:
    cli, path, model, configure = CASES[backend]
    fake = FakeServer(path, model).start()
    try:
        home, data, ws = tmp_path / "home", tmp_path / "data", tmp_path / "ws"
        home.mkdir()
        ws.mkdir()
        configure(home, fake)
        member(data, backend, cli)
        env = {**os.environ, "ORKAS_HOME": str(data), "HOME": str(home), "ANTHROPIC_API_KEY": "sk-test",
               "ANTHROPIC_BASE_URL": fake.url}  # fmt: skip
        first = orkas("run", f"@coder {QUESTION}", "--agents", "coder", "--json", "--workspace", str(ws),
                      env=env, cwd=tmp_path, timeout=180)  # fmt: skip
        assert first.returncode == 0, first.stdout[-3000:] + first.stderr
        events = lines(first.stdout)
        said = "".join(e.get("text", "") for e in events if e.get("actor") == "coder" and e["type"] == "text_delta")
        assert "SKILLS SEEN" in said and "tidy" in said, (said, first.stderr[-2000:])
        cards = [e["name"] for e in events if e.get("actor") == "coder" and e["type"] == "tool_start"]
        assert cards == ["orkas_list_skills"]  # the bridge call, shown as a card in the member's bubble
        ended = [e for e in events if e.get("actor") == "coder" and e["type"] == "tool_end"]
        assert ended and not ended[0].get("is_error") and "tidy" in json.dumps(ended[0])

        conversation = next(e["conversation"] for e in events if e["type"] == "group_start")
        again = orkas("run", "@coder and again", "--session", conversation, "--json", "--workspace", str(ws),
                      env=env, cwd=tmp_path, timeout=180)  # fmt: skip
        assert again.returncode == 0, again.stderr
        resumed = "".join(e.get("text", "") for e in lines(again.stdout) if e.get("actor") == "coder"
                          and e["type"] == "text_delta")  # fmt: skip
        assert "RESUMED" in resumed, resumed  # the CLI's own session: its first question is still in it
    finally:
        fake.stop()


def stalled(model: Callable[[Recorded], Reply]) -> Callable[[Recorded], Reply]:
    """The model's main answer never comes (its side requests, a title, are answered)."""

    def answer(request: Recorded) -> Reply:
        reply = model(request)
        if "title generator" not in json.dumps(request.json.get("system", "")):
            reply.stall = 60.0
        return reply

    return answer


@pytest.mark.parametrize("backend", [pytest.param(b, marks=installed(b)) for b in CASES])
async def test_stop_ends_a_real_cli_s_whole_tree(backend: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cli, path, model, configure = CASES[backend]
    fake = FakeServer(path, stalled(model)).start()
    try:
        home = tmp_path / "home"
        home.mkdir()
        (tmp_path / "ws").mkdir()
        configure(home, fake)
        monkeypatch.setenv("HOME", str(home))  # the person's home, where their CLI's configuration is
        settings = settings_from_env({**os.environ, "ORKAS_HOME": str(tmp_path / "data")})
        spec = AgentSpec(name="slowpoke", description="d", prompt="p", backend=backend, cli=str(cli))
        agent = external_member(settings, spec, AgentProfile(workspace=tmp_path / "ws"))
        stop = AbortSignal()
        events: list[Any] = []
        tag = f"stop-{uuid.uuid4().hex[:12]}"  # in the prompt, so on every command line of this run's tree

        async def run() -> None:
            async for event in agent.run(f"{QUESTION} ({tag})", session=InMemorySession(), signal=stop):
                events.append(event)

        running = asyncio.create_task(run())
        deadline = time.monotonic() + 120
        while not any("title generator" not in r.body.decode(errors="replace") for r in fake.requests):
            assert time.monotonic() < deadline and not running.done(), events
            await asyncio.sleep(0.1)  # until the CLI is waiting on its model: busy
        busy = subprocess.run(["pgrep", "-af", tag], capture_output=True, text=True)
        assert busy.returncode == 0, "the CLI's processes carry the tag"  # so their absence below means something
        began = time.monotonic()
        stop.abort()
        await asyncio.wait_for(running, 30)
        assert isinstance(events[-1], Error) and events[-1].aborted, events[-1]
        assert time.monotonic() - began < 10
        left = subprocess.run(["pgrep", "-af", tag], capture_output=True, text=True)
        assert left.returncode == 1, left.stdout  # nothing of its tree is left running
    finally:
        fake.stop()
