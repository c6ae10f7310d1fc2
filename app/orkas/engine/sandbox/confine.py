"""What a confined command can see: the bubblewrap mount plan.

A command runs in new user, PID, IPC, UTS and (unless the person approved network for it) network
namespaces, with no capabilities, dying with Orkas. It sees only:

- the system's read-only runtime: /usr, /bin, /sbin, /lib*, /opt, /sys and /etc, with the entries
  of /etc that hold secrets (shadow, sudoers, host keys, Wi-Fi and VPN secrets…) masked;
- a private /tmp, /var/tmp and /run — host unix sockets (Docker, D-Bus, ssh-agent, X11) live there
  and in the network namespace's abstract sockets, so none is reachable;
- a private home: a folder of its own per workspace, bound at the home path so `~` and caches work,
  with the toolchains found in the real home (pyenv, rustup, nvm…) read-only inside it, and a
  .gitconfig holding only the person's name and e-mail — not the rest of the home folder;
- the workspace and the granted folders (which include the conversation's attachments), writable —
  except names in them of protected files (hard links to ~/.bash_history and the like), shown empty;
- no network: a fresh namespace with only its own loopback. With network approved the host's
  network is shared and DNS works (resolv.conf's target is made visible).

This is where a wrong classification is caught: a command that was let through by mistake still
cannot read the home folder, reach a socket or send anything anywhere.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/etc", "/sys", "/nix/store")
# Private, in-memory folders, with a size each so a runaway command cannot fill the machine's memory.
PRIVATE = (("/tmp", 2 << 30), ("/var/tmp", 1 << 30), ("/run", 16 << 20))
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
class Layout:
    """The parts of the file system a confined command sees, beyond the system's runtime."""

    roots: tuple[Path, ...]  # writable: the workspace and the granted folders
    home: Path  # the person's home path, where the private home is mounted
    private_home: Path  # the folder of this workspace's private home
    toolchains: tuple[Path, ...] = ()  # read-only inside the private home
    home_files: Mapping[str, str] = field(default_factory=dict)  # written into the private home
    masked: tuple[Path, ...] = ()  # names in the roots of protected files (hard links): shown as empty
    readable: tuple[Path, ...] = ()  # read-only: the folders of the skills the agent may use


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


def prepare_home(layout: Layout) -> None:
    """Create the private home and write its files (idempotent)."""
    layout.private_home.mkdir(parents=True, exist_ok=True, mode=0o700)
    for name, text in layout.home_files.items():
        target = layout.private_home / name
        if not target.exists() or target.read_text(errors="replace") != text:
            target.write_text(text)


def bwrap_argv(layout: Layout, *, cwd: Path, network: bool, program: Sequence[str], sized: bool = True) -> list[str]:
    """The bubblewrap command line that runs `program` under `layout`. Later mounts sit on earlier ones."""
    args = [
        "bwrap",
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
    for name, size in PRIVATE:
        args += ["--size", str(size), "--tmpfs", name] if sized else ["--tmpfs", name]
    if network:
        resolv = Path("/etc/resolv.conf")
        target = Path(os.path.realpath(resolv))
        if target != resolv and target.exists() and any(_inside(target, Path(p)) for p, _ in PRIVATE):
            args += ["--ro-bind", str(target), str(target)]
    args += ["--bind", str(layout.private_home), str(layout.home)]
    for toolchain in layout.toolchains:
        args += ["--ro-bind", str(toolchain), str(toolchain)]
    for root in layout.roots:
        if root.exists():
            args += ["--bind", str(root), str(root)]
    for folder in layout.readable:
        if folder.is_dir():
            args += ["--ro-bind", str(folder), str(folder)]
    for masked in layout.masked:
        args += ["--ro-bind", "/dev/null", str(masked)]
    args += ["--chdir", str(cwd), "--", *program]
    return args
