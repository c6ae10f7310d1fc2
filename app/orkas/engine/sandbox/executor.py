"""The one place that starts processes.

Every command gets a fresh environment (a safe allowlist plus what the caller passes explicitly; no
secret is inherited), a working directory inside the allowed folders, its own process group (a
timeout sends SIGTERM to the whole group, then SIGKILL after a grace period), a cap on its processes,
a timeout no longer than the configured maximum, and capped output: the model gets the head and the
tail, the full output is spilled to a file (itself capped; old spills are pruned).

On Linux with bubblewrap the command is also confined (confine.py): it sees the system's runtime,
a fresh home of its own, the workspace and the granted folders — nothing else of the home folder, no host
socket, and no network unless the caller says the person approved it for this command. The workspace is
read-only unless the caller says `writable` (the person approved the command, or `auto` mode let a
confined change through): a command nobody approved cannot write, persist or send anything. Where there
is no confinement `report()` says so plainly and the shell tool asks before anything that is not
known to be read-only.

Nothing the sandbox can write is opened or followed here: the files Orkas gives commands (a .gitconfig,
the git shim) are written into Orkas's own folder and bound read-only; the caches commands keep are bound
from folders whose parent no command sees. The model is never shown a path inside the data folder: a
kept output is named by its file name alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import os
import shlex
import shutil
import signal
import subprocess
import sys
import time
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any, BinaryIO, Literal, TextIO

from orkas.core.fsutil import person_umask
from orkas.engine.sandbox import SAFE_ENV, landlock
from orkas.engine.sandbox.confine import Layout, bwrap_argv, cache_folders, provide
from orkas.engine.sandbox.git_shim import fixed_environment, git_shim
from orkas.engine.sandbox.limits import Limits, ProcessLimiter, prune_spills
from orkas.engine.sandbox.links import planted_names
from orkas.engine.sandbox.paths import PathPolicy
from orkas.engine.sandbox.seccomp import filter_fd
from orkas.engine.sandbox.secret_files import SECRETS, Secrets

DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
OUTPUT_LIMIT = 30_000  # characters the model sees: head and tail halves
LOG_LIMIT = 16 * 1024 * 1024  # bytes of a background process's log kept (the latest)
GRACE = 3.0  # seconds between SIGTERM and SIGKILL
Confinement = Literal["bubblewrap", "none"]
# LANDLOCK_SCOPE_ABSTRACT_UNIX_SOCKET | LANDLOCK_SCOPE_SIGNAL
LANDLOCK_PRELUDE = """
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
class Attr(ctypes.Structure):
    _fields_ = [("fs", ctypes.c_uint64), ("net", ctypes.c_uint64), ("scoped", ctypes.c_uint64)]
attr = Attr(0, 0, 3)
if libc.prctl(38, 1, 0, 0, 0) != 0:
    sys.exit("orkas: cannot set no_new_privs")
fd = libc.syscall(444, ctypes.byref(attr), ctypes.sizeof(attr), 0)
if fd < 0 or libc.syscall(446, fd, 0) != 0:
    sys.exit("orkas: Landlock refused the scope")
os.execvp(sys.argv[1], sys.argv[1:])
"""


def landlock_prefix() -> list[str]:
    """The argv prefix that scopes what follows it (empty when Landlock scopes are not available)."""
    return [sys.executable, "-I", "-S", "-c", LANDLOCK_PRELUDE] if landlock.available() else []


@cache
def bubblewrap_works() -> bool:
    """Is bubblewrap here, and can it make the namespaces we need? (It cannot in some containers.)"""
    if not sys.platform.startswith("linux") or shutil.which("bwrap") is None:
        return False
    probe = ["bwrap", "--ro-bind", "/", "/", "--unshare-net", "--unshare-pid", "--unshare-user-try", "true"]
    return _succeeds(probe)


@cache
def bubblewrap_sizes_tmpfs() -> bool:
    """Does this bubblewrap take --size (0.5+)? Older ones get unsized private folders."""
    return _succeeds(["bwrap", "--ro-bind", "/", "/", "--size", "1048576", "--tmpfs", "/tmp", "true"])


def _succeeds(argv: list[str]) -> bool:
    try:
        return subprocess.run(argv, capture_output=True, timeout=10).returncode == 0
    except (OSError, subprocess.SubprocessError):
        return False


def confinement() -> Confinement:
    """What confines commands on this machine. macOS sandbox-exec is not wired yet: say so plainly."""
    return "bubblewrap" if bubblewrap_works() else "none"


@dataclass(frozen=True, slots=True)
class ConfinementReport:
    """What confinement is in force, in words for `orkas status` and the settings screen."""

    kind: Confinement
    network: str
    home: str
    sockets: str
    processes: str
    pids: int | None = None  # the cap on processes per command, when there is one
    files: str = ""  # what a command may write, by whether the person approved it
    memory: str = ""
    memory_bytes: int | None = None  # the cap on memory per command, when there is one
    memory_total_bytes: int | None = None  # the cap on all commands' memory together, when there is one
    scratch_bytes: int | None = None  # the size of a command's private /tmp (confined)

    def as_dict(self) -> dict[str, str | int | None]:
        return {
            "kind": self.kind,
            "network": self.network,
            "home": self.home,
            "sockets": self.sockets,
            "processes": self.processes,
            "pids": self.pids,
            "files": self.files,
            "memory": self.memory,
            "memory_bytes": self.memory_bytes,
            "memory_total_bytes": self.memory_total_bytes,
            "scratch_bytes": self.scratch_bytes,
        }


def _size(n: int) -> str:
    return f"{n / (1 << 30):g} GB" if n >= 1 << 30 else f"{n / (1 << 20):g} MB"


def describe_confinement(
    kind: Confinement, limits: Limits, pids_method: str, memory_method: str, memory_total: int | None = None
) -> ConfinementReport:
    sockets = "host sockets (Docker, ssh-agent, D-Bus, X11) are not reachable" + (
        "" if landlock.available() else ", except abstract ones (X11) for a command you let use the network"
    )
    processes = f"at most {limits.pids} per command" if pids_method != "none" else "not limited"
    memory = "not limited"
    if memory_method == "cgroup":
        memory = f"at most {_size(limits.memory)} per command"
    elif memory_method == "rlimit":
        memory = f"at most {_size(limits.memory)} per process of a command"
    memory_bytes = limits.memory if memory_method != "none" else None
    if memory_total is not None:
        memory += f", {_size(memory_total)} for all commands together"
    if kind == "none":
        return ConfinementReport(
            kind="none",
            network="not confined: a command can reach the network, so every command that is not a known read asks",
            home="not confined: commands can read the whole home folder",
            sockets="not confined: host sockets (Docker, ssh-agent, D-Bus) are reachable",
            processes=processes,
            pids=limits.pids if pids_method != "none" else None,
            files="not confined: a command can write wherever you can, so every command that is not a known read asks",
            memory=memory,
            memory_bytes=memory_bytes,
            memory_total_bytes=memory_total,
        )
    return ConfinementReport(
        kind="bubblewrap",
        network="off, unless you approve it for a command",
        home="a fresh, empty one for each command; the rest of your home folder is not visible",
        sockets=sockets,
        processes=processes + (f" ({pids_method})" if pids_method != "none" else ""),
        pids=limits.pids if pids_method != "none" else None,
        files=(
            "a command that runs without your approval sees everything read-only, the workspace included; only a"
            " command you approve (or, in auto mode, a change that stays in the workspace) can write there"
        ),
        memory=memory + f"; private /tmp up to {_size(limits.scratch)}, home up to {_size(limits.home)}",
        memory_bytes=memory_bytes,
        memory_total_bytes=memory_total,
        scratch_bytes=limits.scratch,
    )


@dataclass(frozen=True, slots=True)
class ExecResult:
    exit_code: int | None  # None when killed by the timeout
    output: str  # head and tail when the output was larger than the limit
    truncated: bool
    spill_path: Path | None  # the full output (up to the spill cap), when truncated
    timed_out: bool
    duration: float
    confined: Confinement
    network: bool = False
    writable: bool = True  # could the command change the workspace (approved, or nothing confined it)?
    hidden: tuple[str, ...] = ()  # names of the secret files it was shown as empty


@dataclass(slots=True)
class _Capture:
    limit: int
    spill_path: Path
    spill_cap: int
    head: list[str] = field(default_factory=list)
    head_size: int = 0
    tail: deque[str] = field(default_factory=deque)
    tail_size: int = 0
    total: int = 0
    spilled: int = 0
    spill: TextIO | None = None

    def add(self, text: str) -> None:
        self.total += len(text)
        if self.spill is None and self.total > self.limit:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True)
            self.spill = self.spill_path.open("w", encoding="utf-8", errors="replace")
            self._spill("".join(self.head) + "".join(self.tail))
        if self.spill is not None:
            self._spill(text)
        if self.head_size < self.limit // 2:
            take = text[: self.limit // 2 - self.head_size]
            self.head.append(take)
            self.head_size += len(take)
            text = text[len(take) :]
        if text:
            self.tail.append(text)
            self.tail_size += len(text)
            while self.tail_size - len(self.tail[0]) >= self.limit // 2:
                self.tail_size -= len(self.tail.popleft())

    def _spill(self, text: str) -> None:
        assert self.spill is not None
        room = self.spill_cap - self.spilled
        if room <= 0:
            return
        part = text[:room]
        self.spill.write(part)
        self.spilled += len(part)
        if self.spilled >= self.spill_cap:
            self.spill.write(f"\n[… output kept on disk stops here: the cap is {self.spill_cap} characters …]\n")

    def finish(self) -> tuple[str, bool]:
        if self.spill is not None:
            self.spill.close()
        head = "".join(self.head)
        tail = "".join(self.tail)
        if self.total <= self.limit:
            return head + tail, False
        tail = tail[-(self.limit // 2) :]
        omitted = self.total - len(head) - len(tail)
        note = (
            f"[… {omitted} characters omitted (the whole output is kept for the person as {self.spill_path.name}); "
            "to see more, run the command again with its output narrowed: grep, head, tail or sed -n …]"
        )
        return f"{head}\n{note}\n{tail}", True


@dataclass
class Background:
    """A command running in the background: its process, its log, and what cleans up after it."""

    process: asyncio.subprocess.Process
    log_path: Path
    network: bool
    hidden: Secrets = field(default_factory=Secrets)  # what its log must not show (see secret_files.py)
    _pump: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def returncode(self) -> int | None:
        return self.process.returncode

    async def stop(self) -> None:
        await terminate(self.process)
        if self._pump is not None:
            # Its output ends when the last holder of the pipe is gone; never wait on that for ever.
            done, _ = await asyncio.wait({self._pump}, timeout=GRACE)
            if not done:
                self._pump.cancel()
                await asyncio.gather(self._pump, return_exceptions=True)


@dataclass
class Piped:
    """A long-lived program spoken to over its stdin and stdout (a local MCP server); its stderr goes to
    `log_path` (the latest LOG_LIMIT bytes). `stop()` ends its whole tree and frees its process group."""

    process: asyncio.subprocess.Process
    log_path: Path
    _cleanup: Any = None
    _pump: asyncio.Task[None] | None = None

    @property
    def pid(self) -> int:
        return self.process.pid

    async def stop(self) -> None:
        if self.process.stdin is not None:
            self.process.stdin.close()
        await terminate(self.process, grace=1.0)
        if self._pump is not None:
            done, _ = await asyncio.wait({self._pump}, timeout=GRACE)
            if not done:
                self._pump.cancel()
        if self._cleanup is not None:
            cleanup, self._cleanup = self._cleanup, None
            await asyncio.to_thread(cleanup)


def _slug(path: Path) -> str:
    return hashlib.sha256(str(path).encode()).hexdigest()[:16]


class Executor:
    def __init__(
        self,
        policy: PathPolicy,
        *,
        spill_dir: Path,
        sandbox_dir: Path | None = None,
        confine: bool = True,
        limits: Limits | None = None,
        output_limit: int = OUTPUT_LIMIT,
        base_env: Mapping[str, str] | None = None,
        toolchains: Sequence[Path] = (),
        home_files: Mapping[str, str] | None = None,
        path_suffix: Sequence[Path] = (),
        prefer: Mapping[Path, Sequence[Path]] | None = None,
    ) -> None:
        """`sandbox_dir` is Orkas's own folder for what it gives commands (default: beside `spill_dir`): the
        files in `home_files`, the git shim, and each workspace's caches. `path_suffix` ends the PATH of the
        commands the person approved (installed packages' commands); `prefer` maps a folder to the bin folders
        that approved commands run inside it also find (a package's own environment) — after the system's,
        so a package's `ls` never stands in for the real one. Commands nobody approved find neither; and both
        apply only while the policy can read them (a folder made readable later — the skills' folders, added when
        the first turn's prompt is built — counts from then on)."""
        self.policy = policy
        self.spill_dir = spill_dir
        self.limits = limits or Limits()
        self.confined: Confinement = confinement() if confine else "none"
        self.output_limit = output_limit
        self.sandbox_dir = sandbox_dir or spill_dir.parent / "sandbox"
        self.caches_dir = self.sandbox_dir / "caches" / _slug(policy.workspace)
        self.toolchains = tuple(toolchains)
        self.home_files = dict(home_files or {})
        self.pids = ProcessLimiter(self.limits, user_namespace=self.confined == "bubblewrap")
        source = base_env or {}  # the caller (the composition root) passes what it read from the environment
        self.base_env = {k: source[k] for k in SAFE_ENV if k in source}
        self.base_env.setdefault("PATH", DEFAULT_PATH)
        self.system_path = self.base_env["PATH"]
        self._path_suffix = tuple(path_suffix)
        self._package_commands: tuple[tuple[Path, ...], frozenset[str]] | None = None
        self._prefer = dict(prefer or {})
        self.base_env.update(
            {"PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1", "LANG": self.base_env.get("LANG", "C.UTF-8")}
        )
        if self.confined == "bubblewrap":
            self.base_env["HOME"] = str(policy.home)
            self.base_env["TMPDIR"] = "/tmp"

    @property
    def path_suffix(self) -> tuple[Path, ...]:
        return tuple(folder for folder in self._path_suffix if self._readable(folder))

    @property
    def prefer(self) -> dict[Path, Sequence[Path]]:
        return {folder: bins for folder, bins in self._prefer.items() if self._readable(folder)}

    def _readable(self, folder: Path) -> bool:
        return any(folder == place or place in folder.parents for place in self.policy.readable)

    def package_commands(self) -> frozenset[str]:
        """Command names that only an installed package provides (the system has none by that name): the
        classifier counts them as programs — a package's `tree` is its code, not the reader of that name."""
        suffix = self.path_suffix
        if self._package_commands is None or self._package_commands[0] != suffix:
            names: set[str] = set()
            for folder in suffix:
                try:
                    names |= {entry.name for entry in os.scandir(folder) if entry.is_file()}
                except OSError:
                    continue
            commands = frozenset(n for n in names if shutil.which(n, path=self.system_path) is None)
            self._package_commands = (suffix, commands)
        return self._package_commands[1]

    def report(self) -> ConfinementReport:
        return describe_confinement(
            self.confined, self.limits, self.pids.pids_method, self.pids.memory_method, self.pids.memory_total
        )

    def environment(
        self, extra: Mapping[str, str] | None = None, cwd: Path | None = None, *, writable: bool = True
    ) -> dict[str, str]:
        """A command's environment. Only an approved (`writable`) command finds the packages' commands, after
        the system's; one nobody approved gets git's program-running settings switched off where nothing
        confines it (confined, the git shim does that and more)."""
        env = dict(self.base_env)
        if writable:
            folders = [self.system_path]
            if cwd is not None:
                for folder, bins in self.prefer.items():
                    if cwd == folder or folder in cwd.parents:
                        folders += map(str, bins)
                        break
            env["PATH"] = os.pathsep.join([*folders, *map(str, self.path_suffix)])
        elif self.confined == "none":
            env.update(fixed_environment())
        env.update(extra or {})
        return env

    def hidden(self, *, secrets: bool = False, unconfined: bool = False) -> Secrets:
        """The secret files a command must not see (and whose values leave its output), unless the person
        approved it with "secrets" on the card. Looks at the file system: call it off the event loop."""
        if secrets or unconfined:
            return Secrets(shown=True)
        return SECRETS.find(self.policy.roots)

    def layout(self, *, writable: bool = False, hidden: Secrets | None = None, readable: Sequence[Path] = ()) -> Layout:
        """What a command sees. Prepares Orkas's own folders (the provided files, the caches): call it off the
        event loop."""
        provided_dir = self.sandbox_dir / "provided"
        return Layout(
            roots=self.policy.roots,
            home=self.policy.home,
            writable=writable,
            toolchains=self.toolchains,
            provided=provide(provided_dir, self.home_files) if self.home_files else {},
            caches=cache_folders(self.caches_dir) if writable else {},
            masked=tuple(
                planted_names([*self.policy.roots, *self.policy.readable], self.policy.home, self.policy.secrets)
            )
            + (hidden.files if hidden is not None else ()),
            masked_folders=hidden.folders if hidden is not None else (),
            readable=(*self.policy.readable, *readable),
            git=None if writable else git_shim(provided_dir, self.system_path),
            scratch=self.limits.scratch,
            home_size=self.limits.home,
        )

    def argv(
        self,
        command: str,
        cwd: Path,
        *,
        network: bool = False,
        unconfined: bool = False,
        writable: bool = False,
        group: Sequence[Path] = (),
        hidden: Secrets | None = None,
        fds: list[int] | None = None,
        readable: Sequence[Path] = (),
    ) -> list[str]:
        """The command line for `command`. Descriptors the child must inherit (the seccomp filter) are added to
        `fds`: the caller passes them to the child and closes them."""
        shell = shutil.which("bash") or "/bin/sh"
        program = [shell, "-c", command]
        if self.confined == "bubblewrap" and not unconfined:
            layout = self.layout(writable=writable, hidden=hidden, readable=readable)
            seccomp = filter_fd() if fds is not None else None
            if seccomp is not None and fds is not None:
                fds.append(seccomp)
            program = bwrap_argv(
                layout,
                cwd=cwd,
                network=network,
                program=program,
                sized=bubblewrap_sizes_tmpfs(),
                seccomp_fd=seccomp,
            )
            if network:  # the host's abstract unix sockets (X11, D-Bus) come with its network: scope them out
                program = [*landlock_prefix(), *program]
        return [*self.pids.prefix(group), *program]

    async def run(
        self,
        command: str,
        *,
        cwd: Path | None = None,
        timeout: float | None = None,  # noqa: ASYNC109 - the command's own limit, enforced by killing its group
        env: Mapping[str, str] | None = None,
        network: bool = False,
        unconfined: bool = False,
        writable: bool = False,
        secrets: bool = False,
        stdin: bytes | None = None,
        readable: Sequence[Path] = (),
    ) -> ExecResult:
        """Run `command` to completion (or its timeout, capped by the limits). `writable=True` only when the
        person approved the command (or `auto` mode let a confined change through): otherwise the workspace is
        read-only for it. `network=True` only when the person approved network for this command,
        `unconfined=True` only when they approved running it outside the sandbox, `secrets=True` only when they
        approved it with "secrets" on the card (else the workspace's secret files look empty and their values
        are cut from the output). `stdin`: what the command reads on its standard input (a hook's event), else
        nothing; `readable`: folders it may also read, this once (a hook's own scripts), each checked as the policy
        checks a folder made readable. Raises `PathDenied` for a cwd outside the policy, or such a folder."""
        workdir = self.policy.check(cwd or self.policy.workspace, write=False)
        also = tuple(self.policy.may_read(folder) for folder in readable)
        limit = self.limits.timeout(timeout)
        group = self.pids.new_group()
        started = time.perf_counter()
        writes = writable or unconfined or self.confined == "none"
        if writes:
            SECRETS.writing(self.policy.roots, +1)  # what it writes is looked at before the next command
        try:
            # Building the argv looks at the file system (provided files, caches, planted links): off the event loop.
            hidden = await asyncio.to_thread(self.hidden, secrets=secrets, unconfined=unconfined)
            fds: list[int] = []
            try:
                argv = await asyncio.to_thread(
                    self.argv,
                    command,
                    workdir,
                    network=network,
                    unconfined=unconfined,
                    writable=writable,
                    group=group,
                    hidden=hidden,
                    fds=fds,
                    readable=also,
                )
                environment = self.environment(env, workdir, writable=writable or unconfined)
                process = await _spawn(argv, workdir, environment, fds, stdin=stdin is not None)
            finally:
                for fd in fds:
                    os.close(fd)
            feeding = asyncio.create_task(_feed(process, stdin)) if stdin is not None else None
            capture = _Capture(
                self.output_limit,
                self.spill_dir / f"output-{os.getpid()}-{process.pid}-{time.time_ns()}.txt",
                self.limits.spill_bytes,
            )
            timed_out = False
            try:
                await asyncio.wait_for(self._read(process, capture), timeout=limit)
                await process.wait()
            except TimeoutError:
                timed_out = True
                await terminate(process)
            except asyncio.CancelledError:
                await terminate(process)
                raise
            finally:
                if feeding is not None:
                    feeding.cancel()
        finally:
            self.pids.kill_group(group)
            self.pids.remove_group(group)
            if writes:
                SECRETS.writing(self.policy.roots, -1)
        output, truncated = capture.finish()
        output = hidden.redact(output)
        if truncated:
            if hidden.values:
                await asyncio.to_thread(_redact_file, capture.spill_path, hidden)
            prune_spills(self.spill_dir, self.limits)
        return ExecResult(
            exit_code=None if timed_out else process.returncode,
            output=output,
            truncated=truncated,
            spill_path=capture.spill_path if truncated else None,
            writable=writable or unconfined or self.confined == "none",
            timed_out=timed_out,
            duration=time.perf_counter() - started,
            confined="none" if unconfined else self.confined,
            network=network or unconfined or self.confined == "none",
            hidden=tuple(path.name for path in hidden.files),
        )

    async def _read(self, process: asyncio.subprocess.Process, capture: _Capture) -> None:
        assert process.stdout is not None
        decoder = _Utf8()
        while chunk := await process.stdout.read(65536):
            capture.add(decoder.decode(chunk))
        capture.add(decoder.decode(b"", final=True))

    async def start(
        self,
        command: str,
        *,
        log_path: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        network: bool = False,
        unconfined: bool = False,
        writable: bool = False,
        secrets: bool = False,
    ) -> Background:
        """Start `command` in the background; its latest output (up to LOG_LIMIT bytes) goes to `log_path`.
        `writable`, `network`, `unconfined` and `secrets` as for `run`; whoever shows the log redacts it with
        the returned process's `hidden`."""
        workdir = self.policy.check(cwd or self.policy.workspace, write=False)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        group = self.pids.new_group()
        try:
            # Building the argv looks at the file system (provided files, caches, planted links): off the event loop.
            hidden = await asyncio.to_thread(self.hidden, secrets=secrets, unconfined=unconfined)
            fds: list[int] = []
            try:
                argv = await asyncio.to_thread(
                    self.argv,
                    command,
                    workdir,
                    network=network,
                    unconfined=unconfined,
                    writable=writable,
                    group=group,
                    hidden=hidden,
                    fds=fds,
                )
                environment = self.environment(env, workdir, writable=writable or unconfined)
                process = await _spawn(argv, workdir, environment, fds)
            finally:
                for fd in fds:
                    os.close(fd)
        except BaseException:
            self.pids.remove_group(group)
            raise
        background = Background(process=process, log_path=log_path, network=network, hidden=hidden)
        writes = writable or unconfined or self.confined == "none"
        if writes:
            SECRETS.writing(self.policy.roots, +1)  # until it ends, every folder is looked at before a command
        background._pump = asyncio.create_task(self._pump(process, log_path, group, writes=writes))
        return background

    async def open_pipes(
        self,
        argv: Sequence[str],
        *,
        log_path: Path,
        cwd: Path | None = None,
        env: Mapping[str, str] | None = None,
        network: bool = False,
        unconfined: bool = False,
        writable: bool = False,
        secrets: bool = False,
    ) -> Piped:
        """Start `argv` with pipes on its stdin and stdout, for a program that speaks a protocol over them.
        Same environment, process group, limits and confinement rules as `run` (its secret files hidden unless
        `secrets`)."""
        workdir = self.policy.check(cwd or self.policy.workspace, write=False)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        group = self.pids.new_group()

        def cleanup() -> None:
            self.pids.kill_group(group)
            self.pids.remove_group(group)

        try:
            hidden = await asyncio.to_thread(self.hidden, secrets=secrets, unconfined=unconfined)
            fds: list[int] = []
            log = await asyncio.to_thread(log_path.open, "ab")
            try:
                program = await asyncio.to_thread(
                    self.argv,
                    shlex.join(argv),
                    workdir,
                    network=network,
                    unconfined=unconfined,
                    writable=writable,
                    group=group,
                    hidden=hidden,
                    fds=fds,
                )
                process = await asyncio.create_subprocess_exec(
                    *program,
                    cwd=workdir,
                    env=self.environment(env, workdir, writable=writable or unconfined),
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.PIPE,
                    stderr=log,
                    start_new_session=True,
                    umask=person_umask(),
                    pass_fds=fds,
                )
            finally:
                log.close()
                for fd in fds:
                    os.close(fd)
        except BaseException:
            cleanup()
            raise
        if os.path.getsize(log_path) > LOG_LIMIT:
            await asyncio.to_thread(_keep_tail, log_path, LOG_LIMIT)
        return Piped(process=process, log_path=log_path, _cleanup=cleanup)

    async def _pump(
        self, process: asyncio.subprocess.Process, log_path: Path, group: list[Path], *, writes: bool = False
    ) -> None:
        """Copy a background process's output to its log, keeping only the latest LOG_LIMIT bytes."""
        assert process.stdout is not None
        try:
            log: BinaryIO = await asyncio.to_thread(log_path.open, "ab")
            try:
                while chunk := await process.stdout.read(65536):
                    log.write(chunk)
                    log.flush()
                    if log.tell() > 2 * LOG_LIMIT:
                        log.close()
                        await asyncio.to_thread(_keep_tail, log_path, LOG_LIMIT)
                        log = await asyncio.to_thread(log_path.open, "ab")
            finally:
                log.close()
            await process.wait()
        finally:
            if writes:
                SECRETS.writing(self.policy.roots, -1)
            await asyncio.to_thread(self.pids.kill_group, group)
            await asyncio.to_thread(self.pids.remove_group, group)


def _redact_file(path: Path, hidden: Secrets) -> None:
    """The spilled output, its secret values cut as in what the model was shown."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return
    redacted = hidden.redact(text)
    if redacted != text:
        path.write_text(redacted, encoding="utf-8")


def _keep_tail(path: Path, size: int) -> None:
    with path.open("rb") as f:
        f.seek(-size, os.SEEK_END)
        tail = f.read()
    path.write_bytes(b"[... earlier output dropped ...]\n" + tail)


async def terminate(process: asyncio.subprocess.Process, grace: float = GRACE) -> None:
    """SIGTERM the process group and every descendant, then SIGKILL whatever is left, at the latest
    after `grace` seconds. The descendants are signalled one by one because bubblewrap starts the
    command in a session of its own and its inner process ignores SIGTERM: without this a server would
    never get the chance to shut down cleanly, and an inner bubblewrap outliving the outer one would
    keep the output pipe open for ever."""
    tree: list[int] = []
    for sig in (signal.SIGTERM, signal.SIGKILL):
        tree += [pid for pid in _descendants(process.pid) if pid not in tree]
        _signal_all(tree, sig)
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)
        try:
            await asyncio.wait_for(process.wait(), timeout=grace)
        except TimeoutError:
            continue
        _signal_all(tree, signal.SIGKILL)  # the leader is gone: nothing of its tree may linger
        return


def _signal_all(pids: list[int], sig: signal.Signals) -> None:
    for pid in pids:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.kill(pid, sig)


def _descendants(pid: int) -> list[int]:
    """Every process below `pid`, from /proc (empty where there is no /proc)."""
    found: list[int] = []
    pending = [pid]
    while pending:
        parent = pending.pop()
        try:
            tasks = os.listdir(f"/proc/{parent}/task")
        except OSError:
            continue
        for task in tasks:
            try:
                with open(f"/proc/{parent}/task/{task}/children") as f:
                    children = [int(c) for c in f.read().split()]
            except (OSError, ValueError):
                continue
            found += children
            pending += children
    return found


class _Utf8:
    """Incremental UTF-8 decoding that never splits a character across chunks."""

    def __init__(self) -> None:
        import codecs

        self._decoder: Any = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def decode(self, data: bytes, final: bool = False) -> str:
        return str(self._decoder.decode(data, final))


async def _feed(process: asyncio.subprocess.Process, data: bytes) -> None:
    """Write `data` to the command's input and close it; a command that does not read it is not waited for."""
    assert process.stdin is not None
    with contextlib.suppress(BrokenPipeError, ConnectionResetError):
        process.stdin.write(data)
        await process.stdin.drain()
        process.stdin.close()


async def _spawn(
    argv: list[str], workdir: Path, env: Mapping[str, str], fds: Sequence[int] = (), *, stdin: bool = False
) -> asyncio.subprocess.Process:
    """Start a command with its output on one pipe, its input a pipe when `stdin` (else nothing), and `fds`
    inherited."""
    return await asyncio.create_subprocess_exec(
        *argv,
        cwd=workdir,
        env=env,
        stdin=asyncio.subprocess.PIPE if stdin else asyncio.subprocess.DEVNULL,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.STDOUT,
        start_new_session=True,  # its own process group: a timeout kills the whole tree
        umask=person_umask(),  # what the command creates is the person's, not Orkas's private 077
        pass_fds=tuple(fds),
    )


# The app's own programs — never a command of the model's, a hook or an outside agent — start here too: the next
# version of Orkas, asked what it is before it replaces this one, then started in this process's place; and a
# downloaded installer handed to the desktop.


def run_own_program(argv: Sequence[str], *, timeout: float, env: Mapping[str, str]) -> subprocess.CompletedProcess[str]:
    """Run a program of the app's (a verified release of it) until it exits, its output captured in files (a child
    it leaves behind holding a pipe would keep a reader waiting) and its whole process group ended afterwards.
    Raises subprocess.TimeoutExpired when it does not exit in `timeout` seconds."""
    import tempfile

    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=err, env=dict(env), start_new_session=True
        )
        try:
            code = child.wait(timeout)
        finally:
            with contextlib.suppress(OSError):
                os.killpg(child.pid, signal.SIGKILL)  # what it started goes with it
            child.wait()
        out.seek(0)
        err.seek(0)
        said = out.read(1 << 20).decode("utf-8", "replace"), err.read(1 << 20).decode("utf-8", "replace")
    return subprocess.CompletedProcess(list(argv), code, *said)


def replace_process(executable: Path, argv: Sequence[str], env: Mapping[str, str]) -> None:
    """This process becomes `executable` (the same pid, terminal and arguments: a restart in place)."""
    os.execve(executable, [str(executable), *argv], dict(env))


def start_detached(argv: Sequence[str], *, env: Mapping[str, str], output: Path) -> int:
    """Start a program of the app's in its own session (a terminal closing does not end it), its output written to
    `output`; returns its pid."""
    with output.open("wb") as out:
        child = subprocess.Popen(
            list(argv), stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT, env=dict(env),
            start_new_session=True,
        )  # fmt: skip
    return child.pid


def open_with_desktop(path: Path) -> bool:
    """Hand a file to the desktop's opener (the software centre for a .deb, Finder, Explorer); False if there
    is none."""
    opener = {"darwin": ["open"], "win32": ["explorer"]}.get(sys.platform, ["xdg-open"])
    if shutil.which(opener[0]) is None:
        return False
    subprocess.Popen([*opener, str(path)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    return True
