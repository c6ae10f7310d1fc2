"""The one place that starts processes.

Every command gets a fresh environment (a safe allowlist plus what the caller passes explicitly; no
secret is inherited), a working directory inside the allowed folders, its own process group (a
timeout sends SIGTERM to the whole group, then SIGKILL after a grace period), and capped output: the
model gets the head and the tail, the full output is spilled to a file.

On Linux with bubblewrap the command is also confined: the root file system is read-only, only the
workspace, granted folders and a private /tmp are writable, credential folders are hidden, and the
network can be cut. `confinement()` says what is in force, so settings can show it.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import signal
import sys
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal, TextIO

from orkas.engine.sandbox.paths import PathPolicy

SAFE_ENV = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TERM", "TZ", "USER", "LOGNAME", "SHELL", "HOME", "TMPDIR")
DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin"
OUTPUT_LIMIT = 30_000  # characters the model sees: head and tail halves
GRACE = 3.0  # seconds between SIGTERM and SIGKILL
Confinement = Literal["bubblewrap", "none"]


def confinement() -> Confinement:
    """What confines commands on this machine. macOS sandbox-exec is not wired yet: say so plainly."""
    if sys.platform.startswith("linux") and shutil.which("bwrap"):
        return "bubblewrap"
    return "none"


@dataclass(frozen=True, slots=True)
class ExecResult:
    exit_code: int | None  # None when killed by the timeout
    output: str  # head and tail when the output was larger than the limit
    truncated: bool
    spill_path: Path | None  # the full output, when truncated
    timed_out: bool
    duration: float
    confined: Confinement


@dataclass(slots=True)
class _Capture:
    limit: int
    spill_path: Path
    head: list[str] = field(default_factory=list)
    head_size: int = 0
    tail: deque[str] = field(default_factory=deque)
    tail_size: int = 0
    total: int = 0
    spill: TextIO | None = None

    def add(self, text: str) -> None:
        self.total += len(text)
        if self.spill is None and self.total > self.limit:
            self.spill_path.parent.mkdir(parents=True, exist_ok=True)
            self.spill = self.spill_path.open("w", encoding="utf-8", errors="replace")
            self.spill.write("".join(self.head) + "".join(self.tail))
        if self.spill is not None:
            self.spill.write(text)
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

    def finish(self) -> tuple[str, bool]:
        if self.spill is not None:
            self.spill.close()
        head = "".join(self.head)
        tail = "".join(self.tail)
        if self.total <= self.limit:
            return head + tail, False
        tail = tail[-(self.limit // 2) :]
        omitted = self.total - len(head) - len(tail)
        return f"{head}\n[… {omitted} characters omitted; full output in {self.spill_path} …]\n{tail}", True


class Executor:
    def __init__(
        self,
        policy: PathPolicy,
        *,
        spill_dir: Path,
        network: bool = True,
        confine: bool = True,
        output_limit: int = OUTPUT_LIMIT,
        base_env: Mapping[str, str] | None = None,
    ) -> None:
        self.policy = policy
        self.spill_dir = spill_dir
        self.network = network
        self.confined: Confinement = confinement() if confine else "none"
        self.output_limit = output_limit
        source = base_env or {}  # the caller (the composition root) passes what it read from the environment
        self.base_env = {k: source[k] for k in SAFE_ENV if k in source}
        self.base_env.setdefault("PATH", DEFAULT_PATH)
        self.base_env.update(
            {"PYTHONIOENCODING": "utf-8", "PYTHONUNBUFFERED": "1", "LANG": self.base_env.get("LANG", "C.UTF-8")}
        )

    def environment(self, extra: Mapping[str, str] | None = None) -> dict[str, str]:
        env = dict(self.base_env)
        env.update(extra or {})
        return env

    def argv(self, command: str, cwd: Path) -> list[str]:
        shell = shutil.which("bash") or "/bin/sh"
        if self.confined != "bubblewrap":
            return [shell, "-c", command]
        args = [
            "bwrap",
            "--die-with-parent",
            "--unshare-pid",
            "--ro-bind",
            "/",
            "/",
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--tmpfs",
            "/tmp",
        ]
        for root in self.policy.roots:
            if root.exists():
                args += ["--bind", str(root), str(root)]
        for hidden in self.policy.secrets:
            if hidden.is_dir():
                args += ["--tmpfs", str(hidden)]
            elif hidden.exists():
                args += ["--ro-bind", "/dev/null", str(hidden)]
        if not self.network:
            args.append("--unshare-net")
        args += ["--chdir", str(cwd), "--", shell, "-c", command]
        return args

    async def run(
        self,
        command: str,
        *,
        cwd: Path | None = None,
        timeout: float = 120.0,  # noqa: ASYNC109 - the command's own limit, enforced by killing its group
        env: Mapping[str, str] | None = None,
    ) -> ExecResult:
        """Run `command` to completion (or its timeout). Raises `PathDenied` for a cwd outside the policy."""
        workdir = self.policy.check(cwd or self.policy.workspace, write=False)
        started = time.perf_counter()
        process = await asyncio.create_subprocess_exec(
            *self.argv(command, workdir),
            cwd=workdir,
            env=self.environment(env),
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT,
            start_new_session=True,  # its own process group: a timeout kills the whole tree
        )
        capture = _Capture(self.output_limit, self.spill_dir / f"output-{os.getpid()}-{process.pid}.txt")
        timed_out = False
        try:
            await asyncio.wait_for(self._read(process, capture), timeout=timeout)
            await process.wait()
        except TimeoutError:
            timed_out = True
            await terminate(process)
        except asyncio.CancelledError:
            await terminate(process)
            raise
        output, truncated = capture.finish()
        return ExecResult(
            exit_code=None if timed_out else process.returncode,
            output=output,
            truncated=truncated,
            spill_path=capture.spill_path if truncated else None,
            timed_out=timed_out,
            duration=time.perf_counter() - started,
            confined=self.confined,
        )

    async def _read(self, process: asyncio.subprocess.Process, capture: _Capture) -> None:
        assert process.stdout is not None
        decoder = _Utf8()
        while chunk := await process.stdout.read(65536):
            capture.add(decoder.decode(chunk))
        capture.add(decoder.decode(b"", final=True))

    async def start(
        self, command: str, *, log_path: Path, cwd: Path | None = None, env: Mapping[str, str] | None = None
    ) -> asyncio.subprocess.Process:
        """Start `command` in the background, its output going to `log_path`."""
        workdir = self.policy.check(cwd or self.policy.workspace, write=False)
        log_path.parent.mkdir(parents=True, exist_ok=True)
        with log_path.open("ab") as log:
            return await asyncio.create_subprocess_exec(
                *self.argv(command, workdir),
                cwd=workdir,
                env=self.environment(env),
                stdin=asyncio.subprocess.DEVNULL,
                stdout=log,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
            )


async def terminate(process: asyncio.subprocess.Process, grace: float = GRACE) -> None:
    """SIGTERM the process group, then SIGKILL it if it has not gone after `grace` seconds."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(process.pid, sig)
        except ProcessLookupError:
            return
        try:
            await asyncio.wait_for(process.wait(), timeout=grace)
            return
        except TimeoutError:
            continue


class _Utf8:
    """Incremental UTF-8 decoding that never splits a character across chunks."""

    def __init__(self) -> None:
        import codecs

        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def decode(self, data: bytes, final: bool = False) -> str:
        return str(self._decoder.decode(data, final))
