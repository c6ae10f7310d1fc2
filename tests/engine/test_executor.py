"""The process executor: environment, process groups, limits, output caps, and what a confined command sees."""

from __future__ import annotations

import asyncio
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
        "echo O=$?; touch /usr/local/evil; echo U=$?; cat /etc/shadow; echo S=$?",
        writable=True,
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
async def test_each_command_gets_a_fresh_home_with_read_only_toolchains(home: Path) -> None:
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
    run.base_env["PATH"] = run.system_path = path
    first = await run.run(
        "echo kept > ~/.note; mkdir -p ~/.config/git && echo '[core]' > ~/.config/git/config; hello-tool; "
        "cat ~/.gitconfig; touch ~/.local/bin/x; echo T=$?; echo evil >> ~/.gitconfig; echo G=$?",
        writable=True,
    )
    second = await run.run("cat ~/.note; ls -a ~ ~/.config; cat ~/.gitconfig", writable=True)
    assert "tool says hi" in first.output and "ana@example.com" in first.output and "TOKEN" not in first.output
    assert "T=0" not in first.output and "G=0" not in first.output  # toolchains and provided files: read-only
    assert "kept" not in second.output and "ana@example.com" in second.output and "evil" not in second.output
    assert ".ssh" not in second.output and ".bash_history" not in second.output


@needs_bwrap
async def test_a_link_planted_in_the_home_never_leads_orkas_to_the_real_home(home: Path, tmp_path: Path) -> None:
    """The attack: a command links ~/.gitconfig (and a cache) to the person's real files; the next commands
    must not make Orkas — which is not confined — write through the links."""
    (home / ".bashrc").write_text("the person's bashrc\n")
    vault = tmp_path / "data" / "vault.key"
    vault.parent.mkdir()
    vault.write_text("the vault key")
    before = {p: p.read_bytes() for p in (home / ".bashrc", vault)}
    run = executor(home, home_files={".gitconfig": "[user]\n\tname = Ana\n"})
    for _ in range(2):
        await run.run(
            f"ln -sf {home}/.bashrc ~/.gitconfig; ln -sf {vault} ~/.gitconfig; rm -rf ~/.cache/pip; "
            f"ln -s {home}/.bashrc ~/.cache/pip; ln -sfn {home} ~/.npm; echo done",
            writable=True,
        )
    assert {p: p.read_bytes() for p in before} == before
    for place in [*run.caches_dir.iterdir(), *(run.sandbox_dir / "provided").iterdir()]:
        assert not place.is_symlink(), place  # what Orkas binds: never replaced (links inside a cache are its own)
    again = await run.run("cat ~/.gitconfig; ls ~/.cache/pip && echo cache-ok", writable=True)
    assert "Ana" in again.output and "the person's bashrc" not in again.output and "cache-ok" in again.output


@needs_bwrap
async def test_caches_persist_for_approved_commands_only(home: Path) -> None:
    run = executor(home)
    await run.run("echo wheel > ~/.cache/pip/cached.whl", writable=True)
    approved = await run.run("cat ~/.cache/pip/cached.whl", writable=True)
    unasked = await run.run("cat ~/.cache/pip/cached.whl; ls -a ~")
    assert "wheel" in approved.output and "wheel" not in unasked.output


@needs_bwrap
async def test_a_command_nobody_approved_cannot_write_anything_that_outlives_it(home: Path) -> None:
    (home / "ws" / "keep.txt").write_text("work\n")
    run = executor(home)
    result = await run.run(
        "echo x > keep.txt; echo A=$?; touch new.txt; echo B=$?; rm keep.txt; echo C=$?; mkdir d; echo D=$?; "
        "echo scratch > /tmp/s && cat /tmp/s; echo note > ~/n && cat ~/n"
    )
    assert (home / "ws" / "keep.txt").read_text() == "work\n" and sorted(os.listdir(home / "ws")) == ["keep.txt"]
    codes = dict(line.split("=") for line in result.output.splitlines() if line[1:2] == "=")
    assert all(codes[k] != "0" for k in "ABCD"), result.output
    assert "scratch" in result.output and "note" in result.output  # scratch space that vanishes with it
    assert not result.writable
    written = await run.run("echo x > new.txt", writable=True)
    assert written.exit_code == 0 and written.writable and (home / "ws" / "new.txt").exists()


@needs_bwrap
async def test_memory_is_capped_per_command(home: Path) -> None:
    run = executor(home, limits=Limits(memory=256 << 20))
    small = await run.run("x=$(head -c 50000000 /dev/zero | tr '\\0' a); echo ${#x}")
    big = await run.run("x=$(head -c 600000000 /dev/zero | tr '\\0' a); echo ${#x}", timeout=60)
    assert "50000000" in small.output, small.output
    assert "600000000" not in big.output, big.output
    assert run.report().memory_bytes == 256 << 20


@needs_bwrap
async def test_memory_is_capped_for_all_commands_together(home: Path) -> None:
    """Red team 149: eight background commands at 4 GB each went past the machine's RAM. Two commands at 200 MB
    each, under a total of 300 MB: both cannot hold their memory at once."""
    run = executor(home, limits=Limits(memory=256 << 20, memory_total=300 << 20))
    if run.pids.memory_total is None:
        pytest.skip("no memory cgroup to cap all commands on this machine")
    hold = (
        'python3 -c "import os, time\n'
        "b = bytearray(200 << 20)\n"
        "b[::4096] = b'x' * len(b[::4096])\n"
        "open('{me}', 'w').close()\n"
        "deadline = time.time() + 5\n"
        "while not os.path.exists('{other}') and time.time() < deadline: time.sleep(0.02)\n"
        "print('held', len(b))\""
    )
    first, second = await asyncio.gather(
        run.run(hold.format(me="a", other="b"), writable=True, timeout=30),
        run.run(hold.format(me="b", other="a"), writable=True, timeout=30),
    )
    assert not ("held" in first.output and "held" in second.output), (first.output, second.output)
    assert run.report().memory_total_bytes == 300 << 20
    alone = await run.run(hold.format(me="c", other="c"), writable=True, timeout=30)
    assert "held 209715200" in alone.output, alone.output  # one alone fits


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
    wrote = await run("echo x > new.txt; echo y >> greet.sh", cwd=skill, writable=True)
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


async def test_approved_commands_inside_a_package_find_its_environment_after_the_system(
    home: Path, tmp_path: Path
) -> None:
    package = tmp_path / "packages" / "kit"
    (package / ".venv" / "bin").mkdir(parents=True)
    for name, text in (("kit-tool", "from the package env"), ("ls", "the package's ls")):
        tool = package / ".venv" / "bin" / name
        tool.write_text(f"#!/bin/sh\necho {text}\n")
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
    inside = await run("kit-tool; ls -d .; echo $PATH", cwd=package, writable=True)
    lines = inside.output.splitlines()
    assert lines[0] == "from the package env" and lines[1] == "." and lines[2].startswith("/usr/bin:/bin:")
    assert lines[2].endswith(str(shims))
    outside = await run("command -v kit-tool || echo none", writable=True)
    assert outside.output.strip() == "none"
    unasked = await run("command -v kit-tool || echo none; echo $PATH", cwd=package)
    assert unasked.output.splitlines() == ["none", "/usr/bin:/bin"]


def _hostile_repository(folder: Path) -> None:
    """A repository as someone might download it: its own configuration runs programs on plain reads."""
    folder.mkdir(parents=True, exist_ok=True)
    marker = "echo RAN-$0 >&2"

    def git(*args: str) -> None:
        subprocess.run(["git", "-C", str(folder), *args], check=True, capture_output=True)

    git("init", "-q")
    (folder / "a.txt").write_text("one\n")
    (folder / "b.txt").write_text("bee\n")
    git("add", "a.txt", "b.txt")
    git("-c", "user.name=A", "-c", "user.email=a@b", "commit", "-qm", "first")
    (folder / ".gitattributes").write_text("* diff=conv filter=clean\nb.txt diff=x*\n")
    git("config", "core.fsmonitor", f"sh -c '{marker}' fsmonitor; false")
    git("config", "filter.clean.clean", f"sh -c '{marker}; cat' clean")
    git("config", "filter.clean.process", f"sh -c '{marker}' process")
    git("config", "diff.conv.textconv", f"sh -c '{marker}; cat \"$1\"' textconv")
    git("config", "diff.external", f"sh -c '{marker}' external")
    # the red team's next settings: any section's program, by the setting's name
    git("config", "tar.evil.command", f"sh -c '{marker}' tar")
    git("config", "help.format", "web")
    (folder / "htmldocs").mkdir(exist_ok=True)
    (folder / "htmldocs" / "git-log.html").write_text("<html></html>")
    git("config", "help.htmlPath", str(folder / "htmldocs"))
    git("config", "web.browser", "evil")
    git("config", "browser.evil.cmd", f"sh -c '{marker}' browser")
    git("config", "man.viewer", "evilman")
    git("config", "man.evilman.cmd", f"sh -c '{marker}' man")
    git("config", "pager.log", f"sh -c '{marker}; cat' pager")
    git("config", "alias.st", f"!sh -c '{marker}' alias")
    git("config", "Diff.Upper.TextConv", f"sh -c '{marker}; cat \"$1\"' upper")
    # a subsection with a space (the shim once cut the key there) and one that is a glob of a file's name
    git("config", "man.viewer", "x y")
    git("config", "man.x y.cmd", f"sh -c '{marker}' manspace")
    git("config", "diff.x*.textconv", "sh t.sh")
    (folder / "t.sh").write_text(marker.replace("$0", "glob") + '\ncat "$1"\n')
    (folder / "diff.xA.textconv sh t.sh").write_text("")  # what the shell made of the line, had it globbed
    (folder / "b.txt").write_text("bee\nsting\n")
    (folder / "a.txt").write_text("one\ntwo\n")
    os.utime(folder / "a.txt", (1_600_000_000, 1_600_000_000))  # an old stat makes status run the filter


@needs_bwrap
@pytest.mark.skipif(not __import__("shutil").which("git"), reason="needs git")
async def test_git_reads_nobody_approved_run_none_of_the_repositorys_programs(home: Path) -> None:
    _hostile_repository(home / "ws")
    _hostile_repository(home / "ws" / "vendor" / "lib")
    run = executor(home)
    reads = await run.run(
        "git status --short; git diff; git log -p -1 | tail -2; /usr/bin/git diff --stat; "
        "/usr/lib/git-core/git status --short; git -C vendor/lib diff; (cd vendor/lib && git diff --no-ext-diff); "
        "git archive --format=evil HEAD | head -c 0; git help log; git log --help; git help -m log; "
        "git help -w log; git -p log -1; git st; git -C vendor/lib archive --format=evil HEAD | head -c 0"
    )
    assert "RAN-" not in reads.output, reads.output
    assert "+two" in reads.output and "M a.txt" in reads.output  # and git still reads
    between = await run.run("git diff HEAD~0 -- a.txt; git diff --stat HEAD HEAD~0")
    assert "cannot run" not in between.output and "+two" in between.output, between.output
    approved = await run.run("git status --short", writable=True)
    assert "RAN-fsmonitor" in approved.output  # an approved command is the person's: git behaves as configured


KEY = "sk_live_7d41c0ffeeAbc"


@needs_bwrap
async def test_secret_files_look_unreadable_and_their_values_leave_the_output(home: Path) -> None:
    ws = home / "ws"
    (ws / ".env").write_text(f"STRIPE_KEY={KEY}\nNODE_ENV=production\n")
    (ws / "keys").mkdir()
    private = f"-----BEGIN PRIVATE KEY-----\nMIIEv{KEY}QIBADAN\n-----END PRIVATE KEY-----\n"
    (ws / "keys" / "server.key").write_text(private)
    (ws / "keys" / "ca.pem").write_text("-----BEGIN CERTIFICATE-----\nMIIBpublicpublic0123\n-----END CERTIFICATE-----")
    (ws / "notes.md").write_text(f"the key is {KEY} (pasted by mistake)\n")
    run = executor(home)
    result = await run.run("cat .e* keys/*; grep -r STRIPE . ; cat notes.md")
    assert KEY not in result.output, result.output
    assert "Permission denied" in result.output and "MIIBpublicpublic0123" in result.output  # a certificate reads
    assert "the key is [hidden: a value from .env]" in result.output
    assert set(result.hidden) == {".env", "server.key"}
    assert "production" not in result.output or "NODE_ENV" in result.output  # plain words are not secrets
    approved = await run.run("cat .env", secrets=True)
    assert KEY in approved.output and approved.hidden == ()


@needs_bwrap
async def test_a_secret_made_after_the_last_command_is_hidden_from_the_next(home: Path) -> None:
    ws = home / "ws"
    run = executor(home)
    assert (await run.run("ls")).hidden == ()
    (ws / "sub").mkdir()
    (ws / "sub" / ".env.local").write_text(f"TOKEN={KEY}\n")
    os.link(ws / "sub" / ".env.local", ws / "readme.txt")  # another name for it
    result = await run.run("cat sub/.env.local readme.txt")
    assert KEY not in result.output and set(result.hidden) == {".env.local", "readme.txt"}


@needs_bwrap
async def test_a_background_process_log_is_shown_without_the_values(home: Path, tmp_path: Path) -> None:
    (home / "ws" / ".env").write_text(f"STRIPE_KEY={KEY}\n")
    (home / "ws" / "leak.txt").write_text(f"{KEY}\n")
    background = await executor(home).start("cat leak.txt", log_path=tmp_path / "p.log")
    await background.process.wait()
    await background.stop()
    assert KEY in (tmp_path / "p.log").read_text()  # the log is the person's, whole
    assert background.hidden.redact((tmp_path / "p.log").read_text()).strip() == "[hidden: a value from .env]"


KEYRING = (
    'python3 -c "import ctypes\n'
    "libc = ctypes.CDLL(None, use_errno=True)\n"
    "key = libc.syscall({nr}, b'user', b'left-for-later', b'PERSISTED', 9, -4)\n"  # add_key into @u
    "print('add_key', key, ctypes.get_errno())\""
)


@needs_bwrap
@pytest.mark.skipif(__import__("platform").machine() != "x86_64", reason="the syscall number is x86_64's")
async def test_a_command_cannot_leave_a_key_in_the_kernel_keyring_for_the_next(home: Path) -> None:
    """Second red team, B11: a key added to the user keyring outlived the command (the kernel's key store is
    not namespaced), the one thing a read-only command could leave for a later one. Now add_key is refused."""
    run = executor(home)
    for writable in (False, True):
        result = await run.run(KEYRING.format(nr=248), writable=writable)
        assert "add_key -1 1" in result.output, result.output  # EPERM
    background = await run.start(KEYRING.format(nr=248), log_path=home.parent / "bg.log")
    await background.process.wait()
    await background.stop()
    assert "add_key -1 1" in (home.parent / "bg.log").read_text()


@needs_bwrap
async def test_a_secret_moved_into_a_dependency_folder_is_still_hidden(home: Path) -> None:
    """Third red team: `mv config node_modules/pkg/` in an approved (auto) command, then an unasked read of
    node_modules/pkg/config/.env* printed it: dependency folders were not searched."""
    ws = home / "ws"
    (ws / "config").mkdir()
    (ws / "config" / ".env.production").write_text(f"DB_PASS={KEY}\n")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    run = executor(home)
    moved = await run.run("mv config node_modules/pkg/ && echo moved", writable=True)
    assert "moved" in moved.output
    read = await run.run("cat node_modules/pkg/config/.e* | base64; tar c node_modules | base64 -w0 | head -c 9")
    assert KEY not in read.output and "Permission denied" in read.output
    import base64 as b64

    assert b64.b64encode(KEY.encode()).decode()[:12] not in read.output


@needs_bwrap
async def test_thousands_of_planted_secret_names_neither_stop_commands_nor_uncover_the_real_one(home: Path) -> None:
    ws = home / "ws"
    (ws / ".a").mkdir()
    for i in range(3000):
        (ws / ".a" / f"k{i}.pem").write_text("")
    (ws / "id_ed25519").write_text(f"{KEY}\n")
    result = await executor(home).run("cat .e* i* | base64; ls .a | wc -l; echo ran")
    assert "ran" in result.output and KEY not in result.output, result.output
