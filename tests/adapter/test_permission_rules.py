"""'Always allow' rules survive the run, can be listed and removed, and a damaged file is not fatal."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from orkas.adapter.settings.permission_rules import RuleStore
from orkas.engine.consent import AllowRule
from tests.conftest import subprocess_env

ORKAS = str(Path(sys.executable).parent / "orkas")


def test_rules_round_trip_and_removal(tmp_path: Path) -> None:
    store = RuleStore(tmp_path / "rules.json")
    a = AllowRule(workspace="/w1", key="bash:pytest")
    b = AllowRule(workspace="/w2", key="bash:pytest")
    store.add(a)
    store.add(b)
    store.add(a)
    assert store.load() == [a, b] and store.for_workspace(Path("/w1")) == [a]
    assert store.remove("bash:pytest", Path("/w1")) == [a] and store.load() == [b]
    assert store.remove("bash:nope") == []


def test_a_damaged_file_means_no_rules_and_says_so(tmp_path: Path) -> None:
    path = tmp_path / "rules.json"
    path.write_text("{not json")
    store = RuleStore(path)
    assert store.load() == [] and store.problem is not None and "could not be read" in store.problem
    assert path.read_text() == "{not json"  # left for the person to fix


def test_the_cli_lists_and_removes_rules(tmp_path: Path) -> None:
    env = subprocess_env()
    home = Path(env["ORKAS_HOME"])
    RuleStore(home / "permission_rules.json").add(AllowRule(workspace=str(tmp_path), key="bash:make test"))
    listed = subprocess.run([ORKAS, "rules"], env=env, capture_output=True, text=True)
    assert listed.stdout.strip() == f"bash:make test\t{tmp_path}"
    removed = subprocess.run([ORKAS, "rules", "remove", "bash:make test"], env=env, capture_output=True, text=True)
    assert removed.returncode == 0 and "removed 1 rule(s)" in removed.stdout
    assert json.loads((home / "permission_rules.json").read_text()) == {"rules": []}
