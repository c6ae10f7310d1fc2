"""What a confined command can see: the bubblewrap mount plan.

A command runs in new user, PID, IPC, UTS and (unless the person approved network for it) network
namespaces, with no capabilities, dying with Orkas. It sees only:

- the system's read-only runtime: /usr, /bin, /sbin, /lib*, /opt, /sys and /etc, with the entries
  of /etc that hold secrets (shadow, sudoers, host keys, Wi-Fi and VPN secrets…) masked;
- a private /tmp, /var/tmp and /run, in memory and sized — host unix sockets (Docker, D-Bus,
  ssh-agent, X11) live there and in the network namespace's abstract sockets, so none is reachable;
- a fresh, empty home for this one command, in memory, gone when it ends: nothing a command leaves there
  (a ~/.gitconfig, a ~/.config/git/config, a .pth in ~/.local) is seen by the next one. Into it, read-only:
  the toolchains found in the real home (pyenv, rustup, nvm…) and the files Orkas provides (a .gitconfig
  holding only the person's name and e-mail), prepared in Orkas's own folder, which no command can write —
  Orkas never opens anything a command could have written or linked. Commands the person approved (and
  `auto` mode's confined changes) also get the workspace's toolchain caches (pip, npm, cargo, Go, Maven…):
  folders of their own under the data folder, bound at their usual paths, never read or followed by Orkas;
- the workspace and the granted folders (which include the conversation's attachments): **read-only for a
  command nobody approved**, writable only for an approved one (or `auto` mode's confined changes) — except
  names in them of protected files (hard links to ~/.bash_history and the like), shown empty;
- no network: a fresh namespace with only its own loopback. With network approved the host's
  network is shared and DNS works (resolv.conf's target is made visible).

This is where a wrong classification is caught: a command that was let through by mistake as a read still
cannot write, persist anything for a later command, read the home folder, reach a socket or send anything
anywhere — it can only read what the model could already read.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from orkas.core.fsutil import atomic_write

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc", "/sys", "/nix/store")
# Private, in-memory folders beside /tmp (whose size is a limit, limits.py), sized so a runaway command cannot
# fill the machine's memory.
PRIVATE = (("/var/tmp", 256 << 20), ("/run", 16 << 20))
# Toolchain caches kept per workspace for approved commands: the path in the home → the folder's name.
CACHES = {
    ".cache/pip": "pip",
    ".cache/uv": "uv",
    ".cache/go-build": "go-build",
    ".cache/yarn": "yarn",
    ".npm": "npm",
    ".cargo/registry": "cargo-registry",
    ".cargo/git": "cargo-git",
    ".m2/repository": "maven",
    ".gradle/caches": "gradle",
    "go/pkg/mod": "go-mod",
    ".bun/install/cache": "bun",
    ".local/share/pnpm/store": "pnpm",
}
GIT_INSIDE = "/run/orkas/git"  # where the real git is, inside the sandbox, when a shim stands in for it
# Entries of /etc that hold secrets or keys; masked even though a non-root person cannot read most of them.
ETC_SECRETS = (
    "shadow",
    "shadow-",
    "gshadow",
    "gshadow-",
    "sudoers",
    "sudoers.d",
    "ssl/private",
    "ssh",
    "NetworkManager/system-connections",
    "wpa_supplicant",
    "ppp",
    "ipsec.secrets",
    "ipsec.d",
    "krb5.keytab",
    "security/opasswd",
    "openvpn",
    "wireguard",
    "letsencrypt",
    "libvirt/secrets",
    "credstore",
    "credstore.encrypted",
    "docker",
    "containerd",
)
# Folders in the home where toolchains live: code, not secrets (~/.cargo/bin, not ~/.cargo, which holds tokens).
TOOLCHAINS = (
    ".pyenv",
    ".rustup",
    ".cargo/bin",
    ".nvm",
    ".volta",
    ".bun/bin",
    ".deno/bin",
    ".local/bin",
    ".local/lib",
    ".sdkman/candidates",
    ".asdf",
    ".rbenv",
    ".nodenv",
    ".goenv",
    ".juliaup",
    ".elan",
    ".ghcup/bin",
    ".dotnet",
    "go/bin",
    "sdk",
)


@dataclass(frozen=True, slots=True)
class GitShim:
    """A script that stands in for git in commands nobody approved (it switches off the repository's settings
    that run programs), bound read-only over each git binary; the real one is bound at GIT_INSIDE."""

    script: Path
    real: Path
    names: tuple[Path, ...]  # the paths a command may call git by (/usr/bin/git, /usr/lib/git-core/git…)


@dataclass(frozen=True, slots=True)
class Layout:
    """The parts of the file system a confined command sees, beyond the system's runtime."""

    roots: tuple[Path, ...]  # the workspace and the granted folders
    home: Path  # the person's home path, where the command's fresh home is mounted
    writable: bool = False  # the roots (and the caches) writable: only for an approved command
    toolchains: tuple[Path, ...] = ()  # read-only inside the fresh home
    provided: Mapping[str, Path] = field(default_factory=dict)  # home-relative name → a file Orkas wrote, read-only
    caches: Mapping[str, Path] = field(default_factory=dict)  # home-relative path → a cache folder (writable runs)
    masked: tuple[Path, ...] = ()  # names in the roots of protected files (hard links): shown as empty
    masked_folders: tuple[Path, ...] = ()  # folders of many secrets, shown empty (secret_files.py)
    readable: tuple[Path, ...] = ()  # read-only: the folders of the skills the agent may use
    git: GitShim | None = None  # stands in for git (runs nobody approved)
    scratch: int = 1 << 30  # bytes of /tmp
    home_size: int = 512 << 20  # bytes of the fresh home


def _inside(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def toolchain_dirs(home: Path, path_env: str, secrets: Iterable[Path] = ()) -> tuple[Path, ...]:
    """Toolchain folders in `home`: the usual ones, and folders of `PATH` that lie in the home.

    Never the home itself, and never a folder that is or contains a protected place."""
    hidden = list(secrets)
    found: list[Path] = [home / name for name in TOOLCHAINS if (home / name).is_dir()]
    for entry in path_env.split(os.pathsep):
        path = Path(entry)
        if path.is_absolute() and path != home and _inside(path, home) and path.is_dir():
            found.append(path)
    usable: list[Path] = []
    for path in found:
        if any(_inside(secret, path) or _inside(path, secret) for secret in hidden):
            continue
        if path.name.startswith(".ssh") or any(_inside(path, other) for other in usable):
            continue
        usable = [p for p in usable if not _inside(p, path)] + [path]
    return tuple(usable)


def git_identity(gitconfig: Path) -> str | None:
    """Only the [user] name and email of a .gitconfig (its other sections may hold tokens)."""
    try:
        lines = gitconfig.read_text(errors="replace").splitlines()
    except OSError:
        return None
    section, kept = "", []
    for raw in lines:
        line = raw.strip()
        if line.startswith("["):
            section = line.strip("[] ").lower()
        elif section == "user" and "=" in line:
            name, value = (part.strip() for part in line.split("=", 1))
            if name.lower() in ("name", "email") and "\n" not in value:
                kept.append(f"\t{name.lower()} = {value}")
    return "[user]\n" + "\n".join(kept) + "\n" if kept else None


def provide(folder: Path, files: Mapping[str, str]) -> dict[str, Path]:
    """Write the files Orkas gives every command into `folder` — Orkas's own, never mounted for a command to
    write — and return where each is. Rewritten atomically only when the text changed (idempotent)."""
    folder.mkdir(parents=True, exist_ok=True, mode=0o700)
    where: dict[str, Path] = {}
    for name, text in files.items():
        target = folder / name.replace("/", "_")
        try:
            current = target.read_text(errors="replace") if not target.is_symlink() else None
        except OSError:
            current = None
        if current != text:
            atomic_write(target, text.encode())
        where[name] = target
    return where


def cache_folders(folder: Path) -> dict[str, Path]:
    """The workspace's cache folders (created here), by the home path each is mounted at. `folder` is Orkas's own
    (never mounted): a command sees only each cache's inside, so it can never put a link in a cache's place."""
    made: dict[str, Path] = {}
    for inside, name in CACHES.items():
        path = folder / name
        path.mkdir(parents=True, exist_ok=True, mode=0o700)
        made[inside] = path
    return made


def bwrap_argv(
    layout: Layout,
    *,
    cwd: Path,
    network: bool,
    program: Sequence[str],
    sized: bool = True,
    seccomp_fd: int | None = None,
) -> list[str]:
    """The bubblewrap command line that runs `program` under `layout`. Later mounts sit on earlier ones.
    `seccomp_fd` holds the filter (seccomp.py) the command runs under."""
    args = [
        "bwrap",
        *(["--seccomp", str(seccomp_fd)] if seccomp_fd is not None else []),
        "--die-with-parent",
        "--new-session",  # no controlling terminal to push keystrokes into
        "--unshare-user-try",
        "--unshare-pid",
        "--unshare-ipc",
        "--unshare-uts",
        "--unshare-cgroup-try",
        "--cap-drop",
        "ALL",
    ]
    if not network:
        args.append("--unshare-net")
    for name in SYSTEM:
        path = Path(name)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), name]
        elif path.is_dir():
            args += ["--ro-bind", name, name]
    etc = Path("/etc")
    for name in ETC_SECRETS:
        entry = etc / name
        if entry.is_dir() and not entry.is_symlink():
            args += ["--tmpfs", str(entry)]
        elif entry.exists() or entry.is_symlink():
            args += ["--ro-bind", "/dev/null", str(entry)]
    args += ["--dev", "/dev", "--proc", "/proc"]
    for name, size in (("/tmp", layout.scratch), *PRIVATE, (str(layout.home), layout.home_size)):
        args += ["--size", str(size), "--tmpfs", name] if sized else ["--tmpfs", name]
    if network:
        resolv = Path("/etc/resolv.conf")
        target = Path(os.path.realpath(resolv))
        if target != resolv and target.exists() and any(_inside(target, Path(p)) for p, _ in (("/tmp", 0), *PRIVATE)):
            args += ["--ro-bind", str(target), str(target)]
    for name, source in layout.provided.items():
        args += ["--ro-bind", str(source), str(layout.home / name)]
    for toolchain in layout.toolchains:
        args += ["--ro-bind", str(toolchain), str(toolchain)]
    if layout.writable:
        for inside, source in layout.caches.items():
            args += ["--bind", str(source), str(layout.home / inside)]
    bind = "--bind" if layout.writable else "--ro-bind"
    for root in layout.roots:
        if root.exists():
            args += [bind, str(root), str(root)]
    for folder in layout.readable:
        if folder.is_dir():
            args += ["--ro-bind", str(folder), str(folder)]
    for masked in layout.masked:
        args += ["--ro-bind", "/dev/null", str(masked)]
    for folder in layout.masked_folders:
        args += ["--tmpfs", str(folder), "--remount-ro", str(folder)]
    if layout.git is not None:
        args += ["--ro-bind", str(layout.git.real), GIT_INSIDE]
        for git_path in layout.git.names:
            args += ["--ro-bind", str(layout.git.script), str(git_path)]
    args += ["--chdir", str(cwd), "--", *program]
    return args
