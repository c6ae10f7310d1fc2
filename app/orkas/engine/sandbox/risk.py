"""How risky is a shell command line? Parsed, not pattern-matched.

`classify_command(line)` walks every command the line would run (see shell.py), unwraps wrappers
(`sudo`, `env`, `timeout`, `xargs`, `bash -c '…'`, `eval` …) and judges each by its name, its
arguments and its redirections. Only what is provably read-only gets level "read_only"; known file
writes inside the workspace are "workspace_write"; everything else — including anything unknown
or computed at run time — is "dangerous", and is asked about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from orkas.engine.sandbox.shell import Command, ParseError, Word, parse

Level = Literal["read_only", "workspace_write", "dangerous"]
Category = Literal[
    "destructive",
    "network_egress",
    "privilege_escalation",
    "sensitive_path",
    "process_control",
    "package_install",
    "code_execution",
    "unknown",
]


@dataclass(frozen=True, slots=True)
class CommandRisk:
    level: Level
    categories: tuple[Category, ...]
    reason: str


READ_ONLY = frozenset(
    "ls ll dir cat tac head tail less more wc grep egrep fgrep rg ag ack pwd echo printf which whereis type "
    "whoami id groups date cal uptime stat file du df tree sort uniq cut tr paste join comm column nl fold fmt "
    "expand unexpand rev diff cmp md5sum sha1sum sha256sum sha512sum cksum b2sum basename dirname realpath "
    "readlink test [ true false uname hostname arch nproc free lsblk ps pgrep jq yq xxd od hexdump strings "
    "seq yes sleep wait env printenv locale tput clear history man info help apropos whatis nslookup dig host "
    "git-status".split()
)
WRITES = frozenset("mkdir touch cp mv ln tee install patch rmdir".split())
DESTRUCTIVE = frozenset("rm unlink shred dd mkfs wipefs fdisk sfdisk parted mkswap truncate srm".split())
NETWORK = frozenset("scp sftp ssh nc ncat netcat socat telnet ftp rsync ssh-copy-id curl wget http https".split())
PRIV = frozenset("sudo su doas pkexec runas gsudo setcap chroot".split())
PROCESS = frozenset("kill pkill killall xkill skill renice".split())
SHELLS = frozenset("sh bash zsh dash ksh fish csh tcsh busybox".split())
INTERPRETERS = frozenset(
    "python python2 python3 perl ruby node deno bun php lua Rscript osascript pwsh powershell".split()
)
WRAPPERS = frozenset("nice ionice nohup time command exec stdbuf unbuffer chronic caffeinate builtin".split())
KEYWORDS = frozenset("if then else elif fi do done while until { } ! function".split())
LOOP_HEADERS = frozenset("for select case esac in".split())
GIT_READ = frozenset(
    "status log diff show blame grep ls-files ls-tree rev-parse describe shortlog reflog cat-file branch tag "
    "remote config".split()
)
GIT_DESTRUCTIVE = re.compile(r"^(clean|reset|push|filter-branch|update-ref|gc|prune)$")
PACKAGE_VERBS = {
    "pip": {"install", "uninstall", "download"},
    "pip3": {"install", "uninstall", "download"},
    "npm": {"install", "i", "add", "ci", "uninstall", "update", "exec"},
    "npx": {"*"},
    "pnpm": {"add", "install", "i"},
    "yarn": {"add", "install", "global"},
    "apt": {"install", "remove", "purge"},
    "apt-get": {"install", "remove", "purge"},
    "dnf": {"install", "remove"},
    "yum": {"install", "remove"},
    "brew": {"install", "uninstall", "tap"},
    "cargo": {"install"},
    "gem": {"install"},
    "go": {"install", "get"},
    "conda": {"install", "create"},
    "poetry": {"add", "install"},
    "uv": {"add", "pip", "tool"},
    "pipx": {"install", "run"},
    "snap": {"install"},
    "choco": {"install"},
    "winget": {"install"},
}
SENSITIVE = re.compile(
    r"(^|/)(\.ssh|\.gnupg|\.aws|\.azure|\.kube|\.docker|\.config/gcloud|\.config/gh|\.password-store)(/|$)"
    r"|(^|/)(id_rsa|id_ed25519|id_ecdsa|id_dsa|authorized_keys|known_hosts|\.netrc|\.npmrc|\.pypirc|"
    r"\.git-credentials|\.env(\.[\w.-]+)?|\.bashrc|\.bash_profile|\.zshrc|\.zprofile|\.profile|\.bash_login|"
    r"crontab|\.vault-token)$"
    r"|\.(pem|key|p12|pfx|kdbx)$"
    r"|^/etc(/|$)|^/var/spool/cron|^/boot|^/dev/(sd|nvme|hd|disk)|systemd|LaunchAgents|LaunchDaemons|autostart"
    r"|Keychains|^~/?$|^/$"
)
UPLOAD_FLAGS = re.compile(
    r"^(-d|--data.*|-F|--form.*|-T|--upload-file|--post-data.*|--post-file.*|--body-data.*|--body-file.*|-X|--request"
    r"|--method.*|-u|--user)$|^-[a-zA-Z]*[dFT]$"
)
SAFE_REDIRECT_TARGETS = frozenset({"/dev/null", "/dev/stdout", "/dev/stderr", "&1", "&2", "1", "2", "-"})


class _Verdict:
    def __init__(self) -> None:
        self.level: Level = "read_only"
        self.categories: list[Category] = []
        self.reasons: list[str] = []

    def write(self, reason: str) -> None:
        if self.level == "read_only":
            self.level = "workspace_write"
        self.reasons.append(reason)

    def danger(self, category: Category, reason: str) -> None:
        self.level = "dangerous"
        if category not in self.categories:
            self.categories.append(category)
        self.reasons.append(reason)


def classify_command(line: str) -> CommandRisk:
    """Judge a shell command line. Never raises: what cannot be parsed is dangerous ("unknown")."""
    verdict = _Verdict()
    if not line.strip():
        return CommandRisk("read_only", (), "empty command")
    try:
        commands = parse(line)
    except ParseError as e:
        verdict.danger("unknown", f"cannot be parsed safely ({e})")
        commands = []
    for command in commands:
        _judge(command, verdict, depth=0)
    reason = "; ".join(dict.fromkeys(verdict.reasons)) or "only reads"
    return CommandRisk(verdict.level, tuple(verdict.categories), reason)


def _judge(command: Command, verdict: _Verdict, depth: int) -> None:
    for op, target in command.redirects:
        _redirect(op, target, verdict)
    argv = _strip(command.argv)
    if not argv:
        return
    if argv[0].text in LOOP_HEADERS:
        return  # `for x in …` headers only name values; the body is judged as its own commands
    name_word = argv[0]
    if name_word.dynamic or name_word.text.startswith(("$", "`")):
        verdict.danger("unknown", f"the command name {name_word.text!r} is computed at run time")
        return
    name = name_word.text.rsplit("/", 1)[-1]
    args = argv[1:]
    words = [a.text for a in args]
    if any(SENSITIVE.search(w) for w in words):
        verdict.danger("sensitive_path", f"{name} touches a sensitive location")
    if command.piped_into and (name in SHELLS or name in INTERPRETERS):
        verdict.danger("code_execution", f"pipes data into {name} to run it")
        return
    _by_name(name, args, words, verdict, depth)


def _by_name(name: str, args: list[Word], words: list[str], verdict: _Verdict, depth: int) -> None:
    if name in PRIV:
        verdict.danger("privilege_escalation", f"{name} runs with other privileges")
        _inner(args, verdict, depth, skip_options=True)
    elif name in WRAPPERS or name == "timeout" or (name == "env" and _has_command(words)):
        _inner(args, verdict, depth, skip_options=True, skip_first_value=name in ("timeout", "nice", "ionice"))
    elif name == "xargs":
        _inner(args, verdict, depth, skip_options=True)
    elif name.startswith("python") and words[:2] == ["-m", "pip"] and len(words) > 2 and words[2] != "list":
        verdict.danger("package_install", "pip installs packages")
    elif name in SHELLS or name == "eval" or name in INTERPRETERS:
        _interpreter(name, args, words, verdict, depth)
    elif name in DESTRUCTIVE or name.startswith("mkfs"):
        verdict.danger("destructive", f"{name} destroys data")
    elif name in NETWORK:
        _network(name, words, verdict)
    elif name in PROCESS:
        verdict.danger("process_control", f"{name} stops processes")
    elif name in PACKAGE_VERBS and words and ("*" in PACKAGE_VERBS[name] or words[0] in PACKAGE_VERBS[name]):
        verdict.danger("package_install", f"{name} {words[0] if words else ''} installs or removes packages")
    elif name == "git":
        _git(words, verdict)
    elif name == "find":
        _find(args, verdict, depth)
    elif name == "sed" and any(w.startswith("-i") or w == "--in-place" for w in words):
        verdict.write("sed -i edits files in place")
    elif name in ("chmod", "chown", "chgrp"):
        _permissions(name, words, verdict)
    elif name in ("systemctl", "service", "launchctl", "crontab", "shutdown", "reboot", "halt", "poweroff", "init"):
        verdict.danger("process_control" if name != "crontab" else "sensitive_path", f"{name} controls the system")
    elif name in WRITES:
        outside = [w for w in words if w.startswith(("/", "~")) and not w.startswith(("/tmp/", "/var/tmp/"))]
        if outside:
            verdict.danger("sensitive_path", f"{name} writes outside the workspace ({outside[0]})")
        else:
            verdict.write(f"{name} writes files")
    elif name in READ_ONLY:
        if any(a.dynamic for a in args) and name in ("env", "printenv"):
            verdict.write(f"{name} with computed arguments")
    else:
        verdict.danger("unknown", f"{name!r} is not a command known to be safe")


def _strip(argv: list[Word]) -> list[Word]:
    """Drop leading keywords (`if`, `then`, `!` …) and variable assignments (`A=1 cmd`)."""
    i = 0
    while i < len(argv) and (argv[i].text in KEYWORDS or re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", argv[i].text)):
        i += 1
    return argv[i:]


def _has_command(words: list[str]) -> bool:
    return any(not w.startswith("-") and "=" not in w for w in words)


def _inner(
    args: list[Word], verdict: _Verdict, depth: int, *, skip_options: bool, skip_first_value: bool = False
) -> None:
    rest = list(args)
    while skip_options and rest and (rest[0].text.startswith("-") or "=" in rest[0].text):
        option = rest.pop(0).text
        if option in ("-u", "-g", "-n", "-C", "-E", "-I", "-s", "-k", "--signal", "-P", "-L") and rest:
            rest.pop(0)  # the option's value
    if skip_first_value and rest and re.match(r"^[\d.]+[smhd]?$", rest[0].text):
        rest.pop(0)
    if rest:
        _judge(Command(argv=rest), verdict, depth + 1)


def _interpreter(name: str, args: list[Word], words: list[str], verdict: _Verdict, depth: int) -> None:
    code = None
    if name == "eval":
        code = " ".join(words)
    elif "-c" in words and words.index("-c") + 1 < len(words):
        code = words[words.index("-c") + 1]
    elif name in SHELLS and not words:
        verdict.danger("code_execution", f"{name} reads commands from its input")
        return
    if code is not None and (name in SHELLS or name == "eval"):
        if depth >= 4:
            verdict.danger("unknown", f"{name} nests commands too deeply to judge")
            return
        try:
            inner = parse(code, depth + 1)
        except ParseError as e:
            verdict.danger("unknown", f"{name} -c text cannot be parsed ({e})")
            return
        for command in inner:
            _judge(command, verdict, depth + 1)
        return
    if name in INTERPRETERS and words and words[0] in ("--version", "-V", "--help"):
        return
    verdict.danger("code_execution", f"{name} runs a program that can do anything")


def _network(name: str, words: list[str], verdict: _Verdict) -> None:
    if name in ("curl", "wget", "http", "https"):
        uploads = any(UPLOAD_FLAGS.match(w) for w in words) or any(w.startswith("@") for w in words)
        reason = f"{name} sends data out" if uploads else f"{name} talks to the network"
        verdict.danger("network_egress", reason)
        return
    verdict.danger("network_egress", f"{name} opens a connection to another machine")


def _git(words: list[str], verdict: _Verdict) -> None:
    args = [w for w in words if not w.startswith("-C")]
    sub = next((w for w in args if not w.startswith("-")), "")
    flags = set(args)
    if GIT_DESTRUCTIVE.match(sub):
        if sub == "push" and not ({"-f", "--force", "--force-with-lease", "--delete", "-d"} & flags):
            verdict.danger("network_egress", "git push sends commits to another machine")
        elif sub == "reset" and "--hard" not in flags:
            verdict.write("git reset moves the branch")
        else:
            verdict.danger("destructive", f"git {sub} can destroy work")
    elif sub in ("clone", "fetch", "pull", "submodule", "ls-remote"):
        verdict.danger("network_egress", f"git {sub} talks to another machine")
    elif sub in ("checkout", "restore", "switch", "stash", "rebase", "merge", "cherry-pick", "revert"):
        if {"--", "."} <= flags or "-f" in flags or "--force" in flags or sub == "restore":
            verdict.danger("destructive", f"git {sub} can discard changes")
        else:
            verdict.write(f"git {sub} changes the working tree")
    elif sub in GIT_READ and not (flags & GIT_WRITE_FLAGS) and not _names_something(sub, args):
        return
    elif sub in ("add", "commit", "mv", "init", "tag", "branch", "notes", "apply", "am", "config"):
        verdict.write(f"git {sub} changes the repository")
    elif sub == "rm":
        verdict.danger("destructive", "git rm deletes files")
    else:
        verdict.danger("unknown", f"git {sub or '(no command)'} is not known to be safe")


GIT_WRITE_FLAGS = frozenset({"-d", "-D", "--delete", "-m", "-M", "--unset", "--add", "set-url", "add", "remove", "rm"})


def _names_something(sub: str, args: list[str]) -> bool:
    """`git tag v1` or `git branch topic` create things; bare `git tag` / `git branch` only list."""
    if sub not in ("branch", "tag", "config", "remote"):
        return False
    positional = [w for w in args[args.index(sub) + 1 :] if not w.startswith("-")]
    return bool(positional) and not (sub == "remote" and positional == ["show"])


def _find(args: list[Word], verdict: _Verdict, depth: int) -> None:
    words = [a.text for a in args]
    if "-delete" in words:
        verdict.danger("destructive", "find -delete removes files")
    for flag in ("-exec", "-execdir", "-ok", "-okdir"):
        while flag in words:
            start = words.index(flag) + 1
            end = next((i for i in range(start, len(words)) if words[i] in (";", "+", "\\;")), len(words))
            inner = [w for w in args[start:end] if w.text != "{}"]
            if inner:
                _judge(Command(argv=inner), verdict, depth + 1)
            words = words[end:]
            args = args[end:]
    if any(w in ("-fprint", "-fprintf", "-fls", "-fprint0") for w in words):
        verdict.write("find writes a file")


def _permissions(name: str, words: list[str], verdict: _Verdict) -> None:
    joined = " ".join(words)
    if re.search(r"(^|\s)([ugoa]*\+[rwx]*s|[0-7]?[4-7][0-7]{3})(\s|$)", joined) or (
        name == "chown" and "root" in joined
    ):
        verdict.danger("privilege_escalation", f"{name} grants elevated rights")
    elif "-R" in words and any(w in ("/", "~", "777", "a+rwx") for w in words):
        verdict.danger("destructive", f"{name} -R changes permissions widely")
    else:
        verdict.write(f"{name} changes file permissions")


def _redirect(op: str, target: Word, verdict: _Verdict) -> None:
    if op in ("<", "<<", "<<<", "<&"):
        if SENSITIVE.search(target.text):
            verdict.danger("sensitive_path", "reads a sensitive file")
        return
    if target.text in SAFE_REDIRECT_TARGETS or (op in (">&",) and target.text.isdigit()):
        return
    if target.dynamic:
        verdict.danger("unknown", "writes to a file whose name is computed at run time")
    elif SENSITIVE.search(target.text):
        verdict.danger("sensitive_path", f"writes to {target.text}")
    elif target.text.startswith(("/", "~")) and not target.text.startswith(("/tmp/", "/var/tmp/")):
        verdict.danger("sensitive_path", f"writes outside the workspace ({target.text})")
    else:
        verdict.write(f"writes {target.text}")
