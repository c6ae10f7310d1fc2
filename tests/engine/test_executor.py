"""The process executor: environment, process groups, output caps, and bubblewrap confinement."""

from __future__ import annotations

import os
import socket
import subprocess
from pathlib import Path

import pytest

from orkas.engine.sandbox import PathPolicy
from orkas.engine.sandbox.executor import Executor, confinement

needs_bwrap = pytest.mark.skipif(
    confinement() != "bubblewrap" and not os.environ.get("CI"),
    reason="bubblewrap is not installed here (CI installs it, so there this test runs)",
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN PRIVATE KEY----- planted")
    (home / "ws").mkdir()
    return home


def executor(home: Path, **kwargs: object) -> Executor:
    policy = PathPolicy(home / "ws", home=home)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_API_KEY": "sk-secret", "MY_TOKEN": "t0k"}
    return Executor(policy, spill_dir=home / "spill", base_env=env, **kwargs)  # type: ignore[arg-type]


async def test_runs_in_the_workspace_with_a_clean_environment(home: Path) -> None:
    result = await executor(home, confine=False).run("pwd; env | sort; exit 3", env={"GREETING": "hi"})
    assert result.exit_code == 3 and not result.timed_out
    lines = result.output.splitlines()
    assert lines[0] == str(home / "ws")
    assert "GREETING=hi" in lines and f"HOME={home}" in lines
    assert "sk-secret" not in result.output and "t0k" not in result.output


async def test_a_timeout_kills_the_whole_process_group(home: Path) -> None:
    marker = "61.4242"
    result = await executor(home, confine=False).run(f"sleep {marker} & sleep {marker}; echo never", timeout=0.5)
    assert result.timed_out and result.exit_code is None and "never" not in result.output
    leftovers = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    assert leftovers.stdout.strip() == ""


async def test_big_output_keeps_head_and_tail_and_spills_the_rest(home: Path) -> None:
    result = await executor(home, confine=False, output_limit=2000).run("seq 1 100000")
    assert result.truncated and result.spill_path is not None
    assert result.output.startswith("1\n2\n3\n") and result.output.rstrip().endswith("100000")
    assert "characters omitted" in result.output and len(result.output) < 2300
    assert result.spill_path.read_text().split() == [str(i) for i in range(1, 100001)]


async def test_a_cwd_outside_the_policy_is_refused(home: Path) -> None:
    from orkas.engine.sandbox import PathDenied

    with pytest.raises(PathDenied):
        await executor(home, confine=False).run("ls", cwd=home)


@needs_bwrap
async def test_confined_commands_cannot_write_outside_or_read_credentials(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    run = executor(home)
    assert run.confined == "bubblewrap"
    result = await run.run(
        f"echo ok > inside.txt; echo bad > {outside}/x.txt; echo W=$?; cat {home}/.ssh/id_rsa; echo R=$?; "
        "touch /usr/local/evil; echo U=$?"
    )
    assert (home / "ws" / "inside.txt").read_text() == "ok\n"
    assert not (outside / "x.txt").exists() and not Path("/usr/local/evil").exists()
    assert "planted" not in result.output
    codes = dict(line.split("=") for line in result.output.splitlines() if line[:2] in ("W=", "R=", "U="))
    assert codes["W"] != "0" and codes["R"] != "0" and codes["U"] != "0"


@needs_bwrap
async def test_the_network_can_be_cut(home: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        # bash's own /dev/tcp: no interpreter path that a private /tmp could hide
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        online = await executor(home).run(probe)
        offline = await executor(home, network=False).run(probe)
    assert "connected" in online.output
    assert "connected" not in offline.output and offline.exit_code != 0
