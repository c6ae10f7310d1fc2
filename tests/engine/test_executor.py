"""The process executor: environment, process groups, limits, output caps, and what a confined command sees."""

from __future__ import annotations

import os
import socket
import subprocess
import time
from pathlib import Path

import pytest

from orkas.engine.sandbox import PathDenied, PathPolicy
from orkas.engine.sandbox.confine import git_identity, toolchain_dirs
from orkas.engine.sandbox.executor import Executor, confinement
from orkas.engine.sandbox.limits import Limits, prune_spills

needs_bwrap = pytest.mark.skipif(
    confinement() != "bubblewrap" and not os.environ.get("CI"),
    reason="bubblewrap is not installed here (CI installs it, so there this test runs)",
)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("-----BEGIN PRIVATE KEY----- planted")
    (home / ".bash_history").write_text("export TOKEN=planted\n")
    (home / "Documents").mkdir()
    (home / "Documents" / "taxes.txt").write_text("planted")
    (home / "ws").mkdir()
    (home / "other-conversation").mkdir()
    (home / "other-conversation" / "notes.txt").write_text("planted")
    return home


def executor(home: Path, **kwargs: object) -> Executor:
    policy = PathPolicy(home / "ws", home=home)
    env = {"PATH": os.environ["PATH"], "HOME": str(home), "ANTHROPIC_API_KEY": "sk-secret", "MY_TOKEN": "t0k"}
    return Executor(policy, spill_dir=home.parent / "spill", base_env=env, **kwargs)  # type: ignore[arg-type]


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


def test_the_model_cannot_raise_a_timeout_past_the_maximum() -> None:
    limits = Limits(max_timeout=30, default_timeout=10)
    assert limits.timeout(None) == 10 and limits.timeout(5) == 5
    assert limits.timeout(3600) == 30 and limits.timeout(0) == 1


async def test_the_timeout_is_capped_when_the_command_runs(home: Path) -> None:
    run = executor(home, confine=False, limits=Limits(max_timeout=1))
    started = time.perf_counter()
    result = await run.run("sleep 20", timeout=3600)
    assert result.timed_out and time.perf_counter() - started < 8


async def test_big_output_keeps_head_and_tail_and_spills_the_rest(home: Path) -> None:
    result = await executor(home, confine=False, output_limit=2000).run("seq 1 100000")
    assert result.truncated and result.spill_path is not None
    assert result.output.startswith("1\n2\n3\n") and result.output.rstrip().endswith("100000")
    assert "characters omitted" in result.output and len(result.output) < 2300
    assert result.spill_path.read_text().split() == [str(i) for i in range(1, 100001)]


async def test_the_spill_file_is_capped(home: Path) -> None:
    run = executor(home, confine=False, output_limit=1000, limits=Limits(spill_bytes=50_000))
    result = await run.run("seq 1 1000000")
    assert result.spill_path is not None and result.spill_path.stat().st_size < 60_000
    assert "the cap is 50000 characters" in result.spill_path.read_text()
    assert result.output.rstrip().endswith("1000000")  # the tail is still the real end


def test_old_and_excess_spills_are_pruned(tmp_path: Path) -> None:
    folder = tmp_path / "spill"
    folder.mkdir()
    now = time.time()
    for i in range(5):
        path = folder / f"output-{i}.txt"
        path.write_bytes(b"x" * 1000)
        os.utime(path, (now - i * 60, now - i * 60))
    old = folder / "old.txt"
    old.write_text("x")
    os.utime(old, (now - 30 * 86400, now - 30 * 86400))
    removed = prune_spills(folder, Limits(spill_total_bytes=2500, spill_days=7), now=now)
    assert removed == 4 and sorted(p.name for p in folder.iterdir()) == ["output-0.txt", "output-1.txt"]


async def test_a_cwd_outside_the_policy_is_refused(home: Path) -> None:
    with pytest.raises(PathDenied):
        await executor(home, confine=False).run("ls", cwd=home)


@needs_bwrap
async def test_confined_commands_cannot_write_outside_or_read_the_home_folder(home: Path, tmp_path: Path) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    run = executor(home)
    assert run.confined == "bubblewrap"
    result = await run.run(
        f"echo ok > inside.txt; echo bad > {outside}/x.txt; echo W=$?; cat {home}/.ssh/id_rsa; echo R=$?; "
        f"cat ~/.bash_history; echo H=$?; ls {home}/Documents; echo D=$?; cat {home}/other-conversation/notes.txt; "
        "echo O=$?; touch /usr/local/evil; echo U=$?; cat /etc/shadow; echo S=$?"
    )
    assert (home / "ws" / "inside.txt").read_text() == "ok\n"
    assert not (outside / "x.txt").exists() and not Path("/usr/local/evil").exists()
    assert "planted" not in result.output and "root:" not in result.output
    codes = dict(line.split("=") for line in result.output.splitlines() if line[1:2] == "=" and line[0] in "WRHDOU")
    assert all(codes[k] != "0" for k in "WRHDOU"), result.output


@needs_bwrap
async def test_the_network_is_off_unless_approved_for_the_command(home: Path) -> None:
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        # bash's own /dev/tcp: no interpreter path that a private /tmp could hide
        probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
        offline = await executor(home).run(probe)
        online = await executor(home).run(probe, network=True)
    assert "connected" not in offline.output and offline.exit_code != 0 and not offline.network
    assert "connected" in online.output and online.network


@needs_bwrap
async def test_host_unix_sockets_are_not_reachable(home: Path, tmp_path: Path) -> None:
    sockets = tmp_path / "sockets"
    sockets.mkdir()
    path_socket = socket.socket(socket.AF_UNIX)
    path_socket.bind(str(sockets / "agent.sock"))
    path_socket.listen()
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0orkas-test-abstract")
    abstract.listen()
    try:
        probe = (
            'python3 -c "import socket,sys\n'
            f"for a in ['{sockets}/agent.sock', '\\0orkas-test-abstract', '/run/docker.sock']:\n"
            "  s = socket.socket(socket.AF_UNIX)\n"
            "  try: s.connect(a); print('reached', repr(a))\n"
            "  except OSError as e: print('refused', type(e).__name__)\""
        )
        result = await executor(home).run(probe)
    finally:
        path_socket.close()
        abstract.close()
    assert "reached" not in result.output and result.output.count("refused") == 3, result.output


@needs_bwrap
async def test_a_command_with_network_still_cannot_reach_abstract_sockets(home: Path) -> None:
    from orkas.engine.sandbox import landlock

    if not landlock.available():
        pytest.skip("Landlock scopes need Linux 6.12+ (status and settings say so)")
    abstract = socket.socket(socket.AF_UNIX)
    abstract.bind("\0orkas-test-x11")
    abstract.listen()
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        probe = (
            'python3 -c "import socket\n'
            "s = socket.socket(socket.AF_UNIX)\n"
            "try: s.connect('\\0orkas-test-x11'); print('reached abstract')\n"
            "except OSError as e: print('refused', type(e).__name__)\n"
            f"socket.create_connection(('127.0.0.1', {port}), timeout=3); print('network ok')\""
        )
        try:
            result = await executor(home).run(probe, network=True)
        finally:
            abstract.close()
    assert "network ok" in result.output and "reached abstract" not in result.output, result.output


@needs_bwrap
async def test_the_private_home_persists_per_workspace_and_toolchains_are_read_only(home: Path) -> None:
    tool = home / ".local" / "bin"
    tool.mkdir(parents=True)
    (tool / "hello-tool").write_text("#!/bin/sh\necho tool says hi\n")
    (tool / "hello-tool").chmod(0o755)
    (home / ".gitconfig").write_text(
        '[user]\n\tname = Ana\n\temail = ana@example.com\n[url "https://TOKEN@github.com"]\n\tinsteadOf = gh:\n'
    )
    identity = git_identity(home / ".gitconfig")
    assert identity is not None and "TOKEN" not in identity
    path = f"{tool}:{os.environ['PATH']}"
    run = executor(home, toolchains=toolchain_dirs(home, path), home_files={".gitconfig": identity})
    run.base_env["PATH"] = path
    first = await run.run("echo cached > ~/.cache-note; hello-tool; cat ~/.gitconfig; touch ~/.local/bin/x; echo T=$?")
    second = await run.run("cat ~/.cache-note; ls -a ~")
    assert "tool says hi" in first.output and "ana@example.com" in first.output and "TOKEN" not in first.output
    assert "T=0" not in first.output  # the toolchain is read-only
    assert "cached" in second.output and ".ssh" not in second.output and ".bash_history" not in second.output


@needs_bwrap
async def test_private_folders_have_a_size(home: Path) -> None:
    result = await executor(home).run("df -k /tmp /run | tail -n 2")
    sizes = [int(line.split()[1]) for line in result.output.splitlines()]
    assert sizes and all(0 < size <= 2 * 1024 * 1024 for size in sizes), result.output


@needs_bwrap
async def test_processes_are_capped_per_command(home: Path) -> None:
    run = executor(home, limits=Limits(pids=40))
    if run.pids.method == "none":
        pytest.skip("no way to cap processes on this machine (root without a writable pids cgroup)")
    forker = (
        'python3 -c "import os, time\n'
        "n = 0\n"
        "for _ in range(120):\n"
        "    try: pid = os.fork()\n"
        "    except OSError: break\n"
        "    if pid == 0: time.sleep(3); os._exit(0)\n"
        "    n += 1\n"
        "print('forked', n, flush=True)\""
    )
    result = await run.run(forker, timeout=20)
    forked = int(result.output.split("forked")[1].split()[0])
    assert 0 < forked < 40, result.output


async def test_a_process_that_leaves_its_group_is_still_stopped(home: Path) -> None:
    run = executor(home)
    marker = "73.1717"
    result = await run.run(f"setsid sleep {marker} & sleep {marker}", timeout=0.5)
    assert result.timed_out
    if run.confined == "none" and run.pids.method != "cgroup":
        pytest.skip("unconfined and without cgroups a process can leave its group")
    deadline = time.monotonic() + 5  # a killed process may take a moment to be reaped
    while (left := leftovers(marker)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert left == ""


def leftovers(marker: str) -> str:
    found = subprocess.run(["pgrep", "-f", f"sleep {marker}"], capture_output=True, text=True)
    return found.stdout.strip()


async def test_background_logs_keep_the_latest_output(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from orkas.engine.sandbox import executor as executor_module

    monkeypatch.setattr(executor_module, "LOG_LIMIT", 10_000)
    run = executor(home, confine=False)
    log = home.parent / "logs" / "p1.log"
    background = await run.start("seq 1 200000; echo the-end", log_path=log)
    for _ in range(200):
        if background.returncode is not None and background._pump is not None and background._pump.done():
            break
        await __import__("asyncio").sleep(0.05)
    text = log.read_text()
    assert text.rstrip().endswith("the-end") and len(text) < 40_000 and "earlier output dropped" in text


@needs_bwrap
async def test_skill_folders_are_readable_and_runnable_but_never_writable(home: Path, tmp_path: Path) -> None:
    data = tmp_path / "data"
    skill = data / "skills" / "greet"
    skill.mkdir(parents=True)
    (skill / "greet.sh").write_text("echo hello from the skill\n")
    (data / "vault.bin").write_text("planted-vault")
    sibling = data / "skills" / "other"
    sibling.mkdir()
    (sibling / "SKILL.md").write_text("planted-sibling")
    policy = PathPolicy(home / "ws", home=home, protected=[data / "vault.bin", data / "skills"], readable=[skill])
    env = {"PATH": os.environ["PATH"]}
    run = Executor(policy, spill_dir=tmp_path / "spill", base_env=env).run
    ran = await run("bash greet.sh && cat ../other/SKILL.md; cat " + str(data / "vault.bin"), cwd=skill)
    assert "hello from the skill" in ran.output
    assert "planted-sibling" not in ran.output and "planted-vault" not in ran.output
    wrote = await run("echo x > new.txt; echo y >> greet.sh", cwd=skill)
    assert (
        wrote.exit_code != 0 and not (skill / "new.txt").exists() and "echo y" not in (skill / "greet.sh").read_text()
    )
    assert policy.check(skill / "greet.sh", write=False) == skill / "greet.sh"
    with pytest.raises(PathDenied):
        policy.check(skill / "greet.sh", write=True)
    with pytest.raises(PathDenied):
        policy.check(sibling / "SKILL.md", write=False)


@pytest.mark.parametrize("folder", ["home", ".ssh", "etc"])
def test_a_readable_folder_is_never_home_credentials_or_system(home: Path, folder: str) -> None:
    place = {"home": home, ".ssh": home / ".ssh", "etc": Path("/etc")}[folder]
    with pytest.raises(PathDenied):
        PathPolicy(home / "ws", home=home, readable=[place])


@needs_bwrap
async def test_a_hard_link_to_a_key_inside_a_skill_folder_reads_empty(home: Path, tmp_path: Path) -> None:
    skill = tmp_path / "skills" / "innocent"
    skill.mkdir(parents=True)
    os.link(home / ".ssh" / "id_rsa", skill / "notes.txt")
    policy = PathPolicy(home / "ws", home=home, readable=[skill])
    ran = await Executor(policy, spill_dir=tmp_path / "spill", base_env={"PATH": os.environ["PATH"]}).run(
        "cat notes.txt; echo end", cwd=skill
    )
    assert "planted" not in ran.output and "end" in ran.output
    with pytest.raises(PathDenied):
        policy.read_bytes(skill / "notes.txt")


async def test_commands_inside_a_package_find_its_own_environment_first(home: Path, tmp_path: Path) -> None:
    package = tmp_path / "packages" / "kit"
    (package / ".venv" / "bin").mkdir(parents=True)
    tool = package / ".venv" / "bin" / "kit-tool"
    tool.write_text("#!/bin/sh\necho from the package env\n")
    tool.chmod(0o755)
    shims = tmp_path / "packages" / ".bin"
    shims.mkdir()
    policy = PathPolicy(home / "ws", home=home, readable=[tmp_path / "packages"])
    run = Executor(
        policy,
        spill_dir=tmp_path / "spill",
        base_env={"PATH": "/usr/bin:/bin"},
        confine=False,
        path_suffix=[shims],
        prefer={package: [package / ".venv" / "bin"]},
    ).run
    inside = await run("kit-tool; echo $PATH", cwd=package)
    assert "from the package env" in inside.output and inside.output.splitlines()[1].endswith(str(shims))
    outside = await run("command -v kit-tool || echo none")
    assert outside.output.strip() == "none"
