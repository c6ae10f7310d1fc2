"""Tools with subcommands (git, package managers, sqlite3, systemctl, docker, openssl), the machine's
settings, and bash builtins whose arguments bash may evaluate (array subscripts, trap, eval, source).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import PurePosixPath

from orkas.engine.sandbox import arith, known
from orkas.engine.sandbox.calls import Call, abbreviates, wholesale
from orkas.engine.sandbox.shell import Word
from orkas.engine.sandbox.verdict import is_secret, place

# ----- git -----

GIT_READS = frozenset(
    """
    status log show diff blame annotate grep ls-files ls-tree rev-parse rev-list describe shortlog cat-file
    check-ignore check-attr check-mailmap check-ref-format whatchanged count-objects merge-base name-rev show-ref
    show-branch for-each-ref var verify-commit verify-tag fsck cherry range-diff diff-tree diff-files diff-index
    help version get-tar-commit-id
    """.split()
)
GIT_NETWORK = frozenset("clone fetch pull ls-remote request-pull send-email svn p4 lfs daemon instaweb".split())
GIT_WRITES = frozenset(
    """
    add commit mv init merge rebase cherry-pick revert am apply notes sparse-checkout update-index repack pack-refs
    maintenance gc mergetool-no commit-tree write-tree read-tree checkout-index stage
    """.split()
)
GIT_DESTRUCTIVE = frozenset("filter-branch filter-repo prune update-ref replace".split())
GIT_VALUES = frozenset({"-C", "-c", "--git-dir", "--work-tree", "--namespace", "--exec-path", "--config-env"})
# Configuration that cannot make git run a program, or send anything anywhere.
GIT_SAFE_CONFIG = re.compile(
    r"^(color\..*|core\.(quotepath|autocrlf|safecrlf|filemode|ignorecase|abbrev|whitespace|eol|precomposeunicode)"
    r"|log\..*|user\.(name|email)|init\.defaultbranch|advice\..*|column\..*|status\..*"
    r"|diff\.(renames|algorithm|noprefix|mnemonicprefix|context|indentheuristic|colormoved|statgraphwidth)"
    r"|grep\..*|pull\.(rebase|ff)|push\.(default|autosetupremote)|merge\.(ff|conflictstyle|log)|rebase\.autostash"
    r"|fetch\.prune|i18n\..*|pretty\..*|blame\..*|safe\.directory|gc\.auto|tag\.sort|versionsort\..*"
    r"|checkout\.defaultremote|branch\.autosetupmerge|format\.pretty|feature\.manyfiles|index\.version)$",
    re.IGNORECASE,
)


def _git(call: Call) -> None:
    args = list(call.args)
    while args and args[0].text.startswith("-"):
        option = args.pop(0).text
        value = args.pop(0).text if option in GIT_VALUES and args else option.partition("=")[2]
        name = option.split("=")[0]
        if name == "-c" and not GIT_SAFE_CONFIG.match(value.split("=")[0]):
            call.code(f"git -c {value.split('=')[0]} can make git run a program")
            if re.search(r"gpg|sign", value.split("=")[0], re.IGNORECASE):
                call.verdict.add("credentials", f"git -c {value.split('=')[0]} signs with your key")
        elif name in ("--config-env", "--exec-path") and value:
            call.code(f"git {name} can make git run a program")
        elif name in ("-C", "--git-dir", "--work-tree") and value:
            found = place(value, call.ctx)
            if found in ("home", "outside", "root", "system", "device"):
                call.verdict.add("outside_workspace", f"git works on {value}, outside the workspace")
    if not args:
        return
    sub, rest = args[0].text, args[1:]
    words = [w.text for w in rest]
    rule = GIT_RULES.get(sub)
    if rule is not None:
        rule(call, sub, words)
    elif sub in GIT_READS:
        _git_read(call, sub, words)
    elif sub in GIT_NETWORK:
        _git_network(call, sub, words)
    elif sub == "gc" and any(w.startswith(("--prune", "--aggressive")) for w in words):
        call.verdict.add("destructive", "git gc --prune drops unreachable commits for good")
    elif sub in GIT_WRITES:
        call.verdict.add("writes", f"git {sub} changes the repository")
        if any(w in ("-S", "--gpg-sign") or (w.startswith(("--gpg-sign=", "-S")) and len(w) <= 40) for w in words):
            call.verdict.add("credentials", f"git {sub} -S signs with your key")
    elif sub in GIT_DESTRUCTIVE:
        call.verdict.add("destructive", f"git {sub} rewrites the repository and can lose work")
    else:
        call.program(f"git {sub} is not a known git command (it may be an alias that runs anything)")


SHOWS_CONTENT = frozenset({"show", "log", "diff", "blame", "annotate", "grep", "cat-file", "whatchanged", "range-diff"})


def _git_read(call: Call, sub: str, words: list[str]) -> None:
    for word in words if sub in SHOWS_CONTENT else ():
        if not word.startswith("-") and is_secret(word):  # `git show HEAD:.env`, `git log -p -- .env`
            call.verdict.add("secrets", f"git {sub} shows {word}, which may hold passwords or keys")
        if word.startswith(("--open-files-in-pager", "-O")) and sub == "grep":
            call.code("git grep -O runs the given program on the matching files")
        elif word == "--ext-diff":
            call.code("git --ext-diff runs the configured diff program")
        elif sub == "cat-file" and word in ("--textconv", "--filters"):
            call.code(f"git cat-file {word} runs the repository's {word[2:]} programs")
        elif word in ("--show-signature", "--verify-signatures") or (
            word.startswith(("--pretty", "--format")) and "%G" in word
        ):
            call.program(f"git {sub} runs gpg to check signatures")
        elif word.startswith("--output") or abbreviates(word, "--output"):
            target = word.split("=", 1)[1] if "=" in word else (words[words.index(word) + 1 :] or [""])[0]
            call.write(Word(target))


def _git_network(call: Call, sub: str, words: list[str]) -> None:
    call.network(f"git {sub} talks to another machine")
    for word in words:
        name = word.split("=")[0]
        if name in ("--upload-pack", "-u", "--receive-pack", "--exec", "--config", "-c") or word.startswith("ext::"):
            call.code(f"git {sub} {name} can run a program")
    if sub == "clone":
        local = [w for w in words if not w.startswith("-") and "://" not in w and ":" not in w]
        for path in local[:1]:
            call.read(Word(path))
        for path in local[1:2]:
            call.write(Word(path))


def _git_push(call: Call, sub: str, words: list[str]) -> None:
    call.network("git push sends commits to another machine")
    call.verdict.add("credentials", "git push uses your keys or tokens")
    forced = {"-f", "--force", "--force-with-lease", "--delete", "-d", "--mirror", "--prune", "--force-if-includes"}
    if any(w.split("=")[0] in forced for w in words) or any(w.startswith((":", "+")) for w in words):
        call.verdict.add("destructive", "git push can overwrite or delete work on the other machine")


def _git_config(call: Call, sub: str, words: list[str]) -> None:
    reading = {"--get", "--get-all", "--get-regexp", "--get-urlmatch", "-l", "--list", "get", "list", "--get-color"}
    if any(w.split("=")[0] in reading for w in words) or not [w for w in words if not w.startswith("-")]:
        return
    if "-e" in words or "--edit" in words or "edit" in words:
        call.program("git config --edit opens an editor")
        return
    if {"--global", "--system"} & set(words):
        call.verdict.add("outside_workspace", "git config --global changes your configuration outside the workspace")
    for value in call.option_values("-f", "--file"):
        call.write(Word(value))
    keys = [w for w in words if not w.startswith("-") and w not in ("set", "unset", "--add")]
    key = keys[0] if keys else ""
    if key and not GIT_SAFE_CONFIG.match(key):
        call.code(f"git config {key} can make git run a program later")
    else:
        call.verdict.add("writes", "git config changes the repository's configuration")


def _git_branch_tag(call: Call, sub: str, words: list[str]) -> None:
    if sub == "tag" and any(w in ("-s", "--sign", "-u") or w.startswith(("--local-user", "-u")) for w in words):
        call.verdict.add("credentials", "git tag -s signs with your key")
    listing = {"-l", "--list", "-a", "--all", "-r", "--remotes", "-v", "-vv", "--verbose", "--show-current", "-n"}
    listing |= {"--contains", "--no-contains", "--merged", "--no-merged", "--points-at", "--sort", "--format"}
    flags = {w.split("=")[0] for w in words if w.startswith("-")}
    positional = [w for w in words if not w.startswith("-")]
    if "-D" in flags or (sub == "branch" and "-d" in flags and "--force" in flags):
        call.verdict.add("destructive", f"git {sub} -D deletes a branch and the work only it holds")
    elif positional and not (flags & {"--contains", "--points-at", "--merged", "--no-merged", "-l", "--list"}):
        call.verdict.add("writes", f"git {sub} changes the repository")
    elif flags - listing:
        call.verdict.add("writes", f"git {sub} changes the repository")


def _git_remote(call: Call, sub: str, words: list[str]) -> None:
    positional = [w for w in words if not w.startswith("-")]
    if not positional or positional[0] in ("get-url",):
        return
    if positional[0] in ("show", "update", "prune"):
        call.network(f"git remote {positional[0]} talks to another machine")
    else:
        call.verdict.add("writes", "git remote changes the repository's remotes")


def _git_stash(call: Call, sub: str, words: list[str]) -> None:
    action = next((w for w in words if not w.startswith("-")), "push")
    if action in ("list", "show"):
        return
    if action in ("clear", "drop"):
        call.verdict.add("destructive", f"git stash {action} throws away stashed work for good")
    else:
        call.verdict.add("writes", f"git stash {action} changes the working tree")


def _git_reflog(call: Call, sub: str, words: list[str]) -> None:
    if words and words[0] in ("expire", "delete"):
        call.verdict.add("destructive", "git reflog expire forgets how to get lost work back")


def _git_discard(call: Call, sub: str, words: list[str]) -> None:
    flags = {w.split("=")[0] for w in words if w.startswith("-")}
    paths = words[words.index("--") + 1 :] if "--" in words else [w for w in words if not w.startswith("-")]
    everything = any(wholesale(Word(p), call.ctx) or p in (":/", ":/*") for p in paths)
    if sub == "clean":
        if not flags & {"-n", "--dry-run"}:
            call.verdict.add("destructive", "git clean deletes files that git does not track, beyond recovery")
    elif sub == "reset":
        if flags & {"--hard", "--merge", "--keep"}:
            call.verdict.add("destructive", "git reset --hard throws away uncommitted work")
        else:
            call.verdict.add("writes", "git reset moves the branch or unstages files")
    elif everything or flags & {"-f", "--force", "--discard-changes", "--ours", "--theirs"}:
        call.verdict.add("destructive", f"git {sub} throws away uncommitted changes")
    elif sub == "restore" or "--" in words:
        call.verdict.add("deletes", f"git {sub} replaces files with their committed version")
    else:
        call.verdict.add("writes", f"git {sub} changes the working tree")


def _git_rm(call: Call, sub: str, words: list[str]) -> None:
    paths = [w for w in words if not w.startswith("-")]
    if any(wholesale(Word(p), call.ctx) for p in paths):
        call.verdict.add("destructive", "git rm . removes every file")
    else:
        call.verdict.add("deletes", "git rm removes files (they stay in the history)")


def _git_with_programs(call: Call, sub: str, words: list[str]) -> None:
    if (
        sub in ("difftool", "mergetool")
        or (sub == "submodule" and "foreach" in words)
        or (sub == "bisect" and "run" in words)
    ):
        call.code(f"git {sub} runs programs")
    elif sub == "rebase" and any(w.split("=")[0] in ("-x", "--exec") for w in words):
        call.code("git rebase --exec runs a command for each commit")
    elif sub == "submodule":
        if words and words[0] in ("status", "summary"):
            return
        call.network("git submodule fetches from other machines")
    elif sub == "worktree":
        if words and words[0] == "list":
            return
        paths = [w for w in words[1:] if not w.startswith("-")]
        for path in paths[:1]:
            call.write(Word(path))
    elif sub == "bisect":
        if words and words[0] in ("log", "view", "visualize", "terms"):
            return
        call.verdict.add("writes", "git bisect changes the working tree")
    elif sub in ("archive", "format-patch", "bundle"):
        for target in call.option_values("-o", "--output", "--output-directory"):
            call.write(Word(target))
        if any(w.startswith("--remote") for w in words):
            call.network(f"git {sub} talks to another machine")
        if sub == "bundle" and words and words[0] == "create" and len(words) > 1:
            call.write(Word(words[1]))
        if sub == "format-patch" and not call.option_values("-o", "--output-directory") and "--stdout" not in words:
            call.verdict.add("writes", "git format-patch writes patch files")
    else:
        call.verdict.add("writes", f"git {sub} changes the repository")
    if sub == "rebase":
        call.verdict.add("writes", "git rebase rewrites the branch")


GIT_RULES: dict[str, Callable[[Call, str, list[str]], None]] = {
    "push": _git_push,
    "config": _git_config,
    "branch": _git_branch_tag,
    "tag": _git_branch_tag,
    "remote": _git_remote,
    "stash": _git_stash,
    "reflog": _git_reflog,
    "clean": _git_discard,
    "reset": _git_discard,
    "checkout": _git_discard,
    "restore": _git_discard,
    "switch": _git_discard,
    "rm": _git_rm,
    **dict.fromkeys(
        "difftool mergetool submodule bisect rebase worktree archive format-patch bundle".split(), _git_with_programs
    ),
}

# ----- package managers and language tools -----

READ_SUBCOMMANDS: dict[str, frozenset[str]] = {
    "pip": frozenset("list show freeze check config debug inspect help cache hash completion".split()),
    "npm": frozenset("ls list ll la config root prefix bin help why explain get".split()),
    "pnpm": frozenset("ls list ll why root bin config".split()),
    "yarn": frozenset("list why config bin".split()),
    "bun": frozenset("pm".split()),
    "cargo": frozenset("tree metadata pkgid locate-project read-manifest verify-project help".split()),
    "go": frozenset("version env list doc help".split()),
    "rustup": frozenset("show which".split()),
    "gem": frozenset("list env contents which specification help".split()),
    "bundle": frozenset("list show info check platform help".split()),
    "composer": frozenset("show info licenses validate check-platform-reqs diagnose".split()),
    "poetry": frozenset("show check env".split()),
    "conda": frozenset("list info env search".split()),
    "mamba": frozenset("list info env".split()),
    "pipx": frozenset("list environment".split()),
    "uv": frozenset("tree".split()),
    "apt": frozenset("list show policy search depends rdepends showsrc".split()),
    "apt-cache": frozenset("policy show search depends rdepends madison showpkg stats pkgnames".split()),
    "brew": frozenset("list info config doctor deps leaves outdated search home".split()),
    "dpkg": frozenset(
        "-l -L -s -S -p --list --listfiles --status --search --print-architecture --get-selections".split()
    ),
    "rpm": frozenset("-q -qa -qi -ql -qf -qa --query".split()),
    "dnf": frozenset("list info search repolist provides".split()),
    "yum": frozenset("list info search repolist provides".split()),
    "pacman": frozenset("-Q -Qi -Ql -Qs -Ss -Si".split()),
    "apk": frozenset("info list search".split()),
    "snap": frozenset("list info find".split()),
    "flatpak": frozenset("list info search".split()),
    "npm-run": frozenset(),
}
RUN_SUBCOMMANDS = frozenset(
    "test t run run-script start stop restart build exec b r check c clippy fmt bench doc vet generate clean fix "
    "new init serve dev lint format x".split()
)
ALWAYS_RUNS = frozenset({"make", "gmake", "cmake", "ninja", "meson", "bazel", "gradle", "mvn", "ant", "sbt", "dotnet"})


# Subcommands that fetch a project's dependencies, for package managers without their own rule above.
FETCHES: dict[str, frozenset[str]] = {
    "mix": frozenset({"deps.get", "deps.update", "hex.info", "hex.search", "local.hex", "archive.install"}),
    "swift": frozenset({"resolve", "update"}),  # `swift package resolve`
    "dotnet": frozenset({"restore", "add", "workload"}),
    "pod": frozenset({"install", "update", "repo", "search", "trunk"}),
    "carthage": frozenset({"update", "bootstrap", "checkout"}),
    "rebar3": frozenset({"get-deps", "upgrade", "update"}),
    "stack": frozenset({"update", "setup", "install"}),
    "cabal": frozenset({"update", "install", "get"}),
    "vcpkg": frozenset({"install", "update", "upgrade"}),
    "conan": frozenset({"install", "create", "upload", "search"}),
}


def fetches(call: Call) -> bool:
    """A package manager's subcommand that downloads (`mix deps.get`, `dotnet restore`, `swift package resolve`)."""
    words = [w for w in call.words if not w.startswith("-")]
    if call.name == "swift" and words[:1] == ["package"]:
        words = words[1:]
    if words and words[0] in FETCHES.get(call.name, frozenset()):
        call.verdict.add("package_install", f"{call.name} {words[0]} downloads packages")
        return True
    return False


def _package_tool(call: Call) -> None:
    name = call.name
    words = call.words
    positional = [w for w in words if not w.startswith("-")]
    reads = READ_SUBCOMMANDS.get(name, frozenset())
    sub = next((w for w in words if w in reads), None) if name in ("dpkg", "rpm", "pacman") else None
    sub = sub or (positional[0] if positional else (words[0] if words else ""))
    if name == "npm" and sub == "config" and len(positional) > 1 and positional[1] not in ("get", "list", "ls"):
        call.program("npm config changes npm's settings")
        return
    if name == "uv" and sub == "pip" and len(positional) > 1 and positional[1] in ("list", "show", "freeze", "tree"):
        return
    if name == "go" and sub == "env" and "-w" in words:
        call.verdict.add("writes", "go env -w changes Go's settings")
        return
    if name == "rustup" and sub in ("toolchain", "component", "target") and "list" in positional:
        return
    if name == "conda" and sub == "env" and "list" not in positional:
        call.verdict.add("package_install", "conda env creates or changes environments")
        return
    if sub in reads or (name == "npm" and words in (["version"], ["-v"])):
        return
    if name == "npm" and sub == "pkg" and len(positional) > 1 and positional[1] == "get":
        return  # prints a field of package.json
    if name in ("npm", "pnpm", "yarn", "bun") and sub in ("view", "info", "outdated", "search", "audit", "doctor"):
        call.network(f"{name} {sub} asks the registry")
    elif sub in RUN_SUBCOMMANDS or (name == "yarn" and sub and sub not in INSTALL_WORDS):
        call.program(f"{name} {sub} runs the project's code")
    elif name == "pip" and sub == "uninstall":
        call.verdict.add("outside_workspace", "pip uninstall removes packages from the system")
    else:
        call.verdict.add("package_install", f"{name} {sub} downloads or installs packages".replace("  ", " "))


INSTALL_WORDS = frozenset("add install i ci update upgrade up remove uninstall publish dlx create global".split())


INFORMATION_MODULES = frozenset({"platform", "sysconfig", "site", "calendar", "this"})  # print, change nothing


def python_module(call: Call, module: str, *, isolated: bool) -> None:
    """`python -m MODULE …`: Python looks for MODULE (and everything it imports) in the working folder first, so
    a workspace with its own `json/` runs that. Only in isolated mode (`-I`, or `-P`: the working folder is not
    searched) are json.tool, pip's reads and the standard library's information modules reads; anything else
    runs a program."""
    words = call.words
    at = next((i for i, w in enumerate(words) if w == module or w.endswith("m" + module)), len(words) - 1)
    args = words[at + 1 :]
    if not isolated:
        call.program(f"{call.name} -m {module} runs a module, looked for in the working folder first")
    if module in INFORMATION_MODULES:
        return
    if module in ("zipfile", "tarfile") and args[:1] in (["-l"], ["--list"], ["-t"], ["--test"]):
        call.read_all([Word(w) for w in args[1:]])
        return
    if module == "json.tool":
        paths = [Word(w) for w in args if not w.startswith("-")]
        call.read_all(paths[:1])
        for out in paths[1:2]:
            call.write(out)
    elif module == "pip":
        _package_tool(
            Call(
                "pip", [Word(w) for w in args], call.command, call.ctx, call.verdict, call.judge_words, call.judge_line
            )
        )
    elif module == "venv" or module == "virtualenv":
        for path in [w for w in args if not w.startswith("-")][:1]:
            call.write(Word(path))
    else:
        call.program(f"{call.name} -m {module} runs a program")


# ----- databases, certificates, containers -----

SQLITE_VALUES = frozenset(
    {"-cmd", "-init", "-separator", "-nullvalue", "-newline", "-mmap", "-vfs", "-maxsize", "-lookaside"}
)
SQLITE_DANGEROUS_DOT = re.compile(r"^\s*\.(shell|system|load|excel|edit)\b", re.IGNORECASE)
SQLITE_WRITING_DOT = re.compile(
    r"^\s*\.(output|once|save|backup|import|restore|open|clone|archive|ar)\b", re.IGNORECASE
)
SQL_READ = re.compile(r"^\s*(select|with|explain|values|pragma\s+\w+\s*(\(|;|$))", re.IGNORECASE)


def _sqlite(call: Call) -> None:
    if call.option_values("-init"):
        call.program("sqlite3 -init runs a script")
    paths = call.positionals(skip_values=SQLITE_VALUES)
    statements = call.option_values("-cmd") + [w.text for w in paths[1:]]
    readonly = call.has("-readonly", "-safe") or any(
        w.text.startswith("file:") and "mode=ro" in w.text for w in paths[:1]
    )
    if paths:
        call.read(paths[0]) if readonly else call.write(paths[0])
    if not statements:
        if not call.command.redirects and not call.command.piped_into:
            return
        call.program("sqlite3 runs the SQL it reads from its input")
        return
    for text in statements:
        for statement in _sql_statements(text):
            if SQLITE_DANGEROUS_DOT.match(statement) or re.search(r"\b(load_extension|edit)\s*\(", statement, re.I):
                call.code("sqlite3 runs a program or loads code")
            elif SQLITE_WRITING_DOT.match(statement) or re.search(r"\bwritefile\s*\(", statement, re.I):
                call.verdict.add("writes", "sqlite3 writes a file")
            elif re.match(r"^\s*attach\b", statement, re.I):
                target = re.search(r"'([^']*)'", statement)
                call.write(Word(target.group(1) if target else "?"))
            elif not SQL_READ.match(statement) and statement.strip() and not statement.strip().startswith("."):
                call.verdict.add("writes", "sqlite3 changes the database")


def _sql_statements(text: str) -> list[str]:
    if text.lstrip().startswith("."):
        return [line for line in text.splitlines() if line.strip()]
    return [part for part in re.split(r";(?=(?:[^']*'[^']*')*[^']*$)", text) if part.strip()]


def _openssl(call: Call) -> None:
    words = call.words
    sub = words[0] if words else ""
    if sub in ("version", "help", "list") or not words:
        return
    if sub in ("s_client", "s_server", "s_time", "ocsp") or "-connect" in words or "-url" in words:
        call.network(f"openssl {sub} talks to another machine")
    if sub == "engine" or any(w in ("-engine", "-provider", "-provider-path", "-keyform") for w in words):
        call.code("openssl loads an engine or provider (code)")
    for value in call.option_values("-out", "-keyout", "-signature"):
        call.write(Word(value))
    for value in call.option_values("-in", "-key", "-CAfile", "-inkey", "-kfile"):
        call.read(Word(value))


def _docker(call: Call) -> None:
    words = call.words
    sub = next((w for w in words if not w.startswith("-")), "")
    if sub in ("pull", "push", "login", "search"):
        call.network(f"{call.name} {sub} talks to a registry")
        return
    if sub in ("run", "exec", "create") and any(
        w.split("=")[0] in ("-v", "--volume", "--mount", "--privileged", "--pid", "--net", "--network", "--cap-add")
        or (w in ("-it", "-ti") and sub == "exec")
        for w in words
    ):
        call.verdict.add("privilege", f"{call.name} {sub} gives a container your files or the machine")
        return
    call.program(f"{call.name} {sub} talks to the container engine (root on this machine)")


def _terraform(call: Call) -> None:
    sub = next((w for w in call.words if not w.startswith("-")), "")
    if sub == "fmt" and call.has("-check") and not any(w.startswith("-write=true") for w in call.words):
        return  # only says which files it would reformat
    if sub in ("validate", "fmt", "version", "graph", "console", "show"):
        call.program(f"terraform {sub} runs locally")
    else:
        call.network(f"terraform {sub} talks to cloud providers")


# ----- the machine's settings and services -----


def _reads_unless(*changing: str, category: str = "privilege") -> Callable[[Call], None]:
    def rule(call: Call) -> None:
        if any(
            w in changing or w.startswith(tuple(c + "=" for c in changing if c.startswith("--"))) for w in call.words
        ):
            call.verdict.add(category, f"{call.name} changes the machine")  # type: ignore[arg-type]

    return rule


SYSTEMCTL_READS = frozenset(
    "status show list-units list-unit-files list-timers list-sockets list-dependencies is-active is-enabled "
    "is-failed cat help get-default show-environment list-jobs".split()
)


def _service_manager(call: Call) -> None:
    positional = [w for w in call.words if not w.startswith("-")]
    if call.name == "systemctl":
        if not positional or positional[0] in SYSTEMCTL_READS:
            return
    elif call.name == "service":
        if (len(positional) >= 2 and positional[1] in ("status",)) or "--status-all" in call.words:
            return
    elif call.name in ("launchctl", "loginctl"):
        if positional and positional[0] in (
            "list",
            "print",
            "blame",
            "list-sessions",
            "list-users",
            "show-session",
            "session-status",
        ):
            return
    elif call.name in ("timedatectl", "hostnamectl", "localectl"):
        if not positional or positional[0] in ("status", "show", "list-timezones", "list-locales", "list-keymaps"):
            return
        call.verdict.add("privilege", f"{call.name} changes the machine's settings")
        return
    elif call.name == "crontab":
        call.verdict.add("outside_workspace", "crontab reads or changes your own schedule, outside the workspace")
        return
    call.verdict.add("process_control", f"{call.name} changes the machine's services or schedules")


def _date(call: Call) -> None:
    if call.option_values("-s", "--set") or call.has("-s", "--set"):
        call.verdict.add("privilege", "date -s changes the clock")
    for value in call.option_values("-r", "--reference", "-f", "--file"):
        call.read(Word(value))


def _hostname(call: Call) -> None:
    if [w for w in call.words if not w.startswith("-")] or call.option_values("-F", "--file"):
        call.verdict.add("privilege", "hostname changes the machine's name")


IP_CHANGES = frozenset("add del delete set flush change replace append exec attach detach up down".split())


def _ip(call: Call) -> None:
    if IP_CHANGES & set(call.words):
        call.verdict.add("privilege", f"{call.name} changes the network configuration")


def _ifconfig(call: Call) -> None:
    if len([w for w in call.words if not w.startswith("-")]) > 1:
        call.verdict.add("privilege", "ifconfig changes a network interface")


def _mount(call: Call) -> None:
    if [w for w in call.words if w not in ("-l", "--show-labels", "-t")] and call.name != "findmnt":
        call.verdict.add("privilege", f"{call.name} changes what is mounted")


def _kill(call: Call) -> None:
    if call.has("-l", "-L", "--list", "--table") or call.words[:1] == ["-0"]:
        return
    call.verdict.add("process_control", f"{call.name} stops processes")


def _ssh_keygen(call: Call) -> None:
    if call.has("-l", "-B", "-F"):
        for value in call.option_values("-f"):
            call.read(Word(value))
        return
    call.verdict.add("credentials", "ssh-keygen creates or reads private keys")


def _gpg(call: Call) -> None:
    if call.has("--list-packets", "--print-md"):
        return
    call.verdict.add("credentials", f"{call.name} uses your keyring")


# ----- bash builtins -----


READS_INTO = frozenset({"read", "mapfile", "readarray", "getopts"})  # assign what they read to the names given
DECLARES = frozenset({"export", "declare", "typeset", "local", "readonly"})


def _names_evaluated(call: Call) -> None:
    """Builtins that take variable names: a subscript `a[$(cmd)]` in a name runs cmd; what they assign from input
    is computed text (bash evaluates it again in arithmetic); `declare -i` makes every later assignment arithmetic."""
    for word in call.args:
        for body in known.hidden_commands(word.raw or word.text) if "[" in word.text else []:
            call.judge_line(body)
    names = [w.text for w in call.args if re.match(r"^[A-Za-z_][A-Za-z0-9_]*(\[|$)", w.text)]
    if call.name in ("mapfile", "readarray") and call.option_values("-C"):
        call.code(f"{call.name} -C runs a callback for every line it reads")
    if call.name in READS_INTO:
        for name in names[1:] if call.name == "getopts" else names:
            call.ctx.tainted.add(name.split("[")[0])
            call.ctx.loop_tainted.add(name.split("[")[0])  # a line of input each time round a `while read`
    elif call.name == "printf":
        for name in call.option_values("-v"):
            call.ctx.tainted.add(name.split("[")[0])
    elif call.name == "let":
        for word in call.args:
            _arithmetic(call, word.raw or word.text)
    if call.name in DECLARES:
        integer = any(w.startswith("-") and "i" in w for w in call.words)
        for word in call.args:
            m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)\+?=", word.text)
            if m is None:
                if integer and re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", word.text):
                    call.ctx.integers.add(word.text)
                continue
            name, value = m.group(1), word.raw.split("=", 1)[-1]
            known.check_assignment(call.verdict, name, value, call.judge_line)
            if word.dynamic or word.glob:
                call.ctx.tainted.add(name)
            else:
                call.ctx.variables[name] = [word.text.split("=", 1)[1]]
            if integer:
                call.ctx.integers.add(name)
                _arithmetic(call, value)


def _arithmetic(call: Call, expression: str) -> None:
    why = arith.unsafe(expression, call.ctx)
    if why is not None:
        call.code(why)


def _arith(call: Call) -> None:
    body = call.command.arith or ""
    for inner in known.hidden_commands(body):
        call.judge_line(inner)


def _alias(call: Call) -> None:
    if any("=" in w for w in call.words):
        call.code("alias defines a name that runs other commands")


def _trap(call: Call) -> None:
    words = call.words
    if not words or words[0] in ("-p", "-l", "-P"):
        return
    call.judge_line(words[0])


def _eval(call: Call) -> None:
    if any(w.dynamic for w in call.args):
        call.code("eval runs text that is computed at run time")
    else:
        call.judge_line(" ".join(w.text for w in call.args))


def _source(call: Call) -> None:
    call.program(f"{call.name} runs a script in this shell")
    call.read_all(call.args[:1])


def _cd(call: Call) -> None:
    positional = [w for w in call.args if not w.text.startswith("-") or w.text == "-"]
    if call.name == "popd" or (positional and positional[0].text == "-"):
        call.ctx.cwd = None
        return
    target = positional[0] if positional else Word("~")
    found = place(target.text, call.ctx, dynamic=target.dynamic)
    if found in ("home", "outside", "dynamic"):
        call.ctx.cwd = None
    elif found in ("system", "scratch", "root"):
        call.ctx.cwd = PurePosixPath(target.text if target.text.startswith("/") else "/")
    elif call.ctx.cwd is not None:
        call.ctx.cwd = PurePosixPath(str(call.ctx.cwd / target.text))


def _dc(call: Call) -> None:
    if any("!" in w for w in call.words):
        call.code("dc's ! runs a shell command")


def _test(call: Call) -> None:
    _names_evaluated(call)
    if call.name == "[[":  # unlike `[`, `[[` evaluates the operands of -eq, -lt… as arithmetic
        for operand in arith.comparison_operands([w.raw or w.text for w in call.args]):
            _arithmetic(call, operand)


def _hash(call: Call) -> None:
    if any(w.startswith("-") and not w.startswith("--") and "p" in w for w in call.words):
        call.code("hash -p makes a command name run another program")


def _enable(call: Call) -> None:
    if call.has("-f"):
        call.code("enable -f loads a builtin from a shared library (code)")
    elif [w for w in call.words if not w.startswith("-")] or call.has("-n", "-d"):
        call.code("enable changes which program a command name runs")


def _rustc(call: Call) -> None:
    if not any(w.startswith("--print") for w in call.words):
        call.program("rustc compiles (and build scripts may run)")


def _cmake(call: Call) -> None:
    """`cmake -N` (view mode, with -L to list the cache) reads a build folder; anything else configures or builds."""
    if not call.has("-N"):
        call.program("cmake configures or builds the project (its scripts run)")


def _xmllint(call: Call) -> None:
    if call.has("--shell", "--xinclude") or call.option_values("--catalogs"):
        call.program("xmllint runs its shell or follows includes")
    for value in call.option_values("-o", "--output"):
        call.write(Word(value))
    values = frozenset({"--xpath", "--output", "-o", "--schema", "--relaxng", "--dtdvalid", "--encode", "--path"})
    call.read_all(call.positionals(skip_values=values))


def _plutil(call: Call) -> None:
    if any(w in ("-convert", "-replace", "-insert", "-remove", "-extract", "-o") for w in call.words):
        call.verdict.add("writes", "plutil changes or writes a property list")
    call.read_all(call.positionals())


def _formatter(*, writes_with: tuple[str, ...] = (), reads_with: tuple[str, ...] = ()) -> Callable[[Call], None]:
    """A formatter: it reports, or rewrites the files it is given — by default (black) unless `reads_with` is
    there, or only when `writes_with` is (gofmt -w, clang-format -i)."""

    def judge(call: Call) -> None:
        rewrites = call.has(*writes_with) if writes_with else not call.has(*reads_with)
        files = [w for w in call.positionals() if not w.text.startswith("-")]
        for path in files if rewrites else ():
            call.write(path)
        if not rewrites:
            call.read_all(files)

    return judge


def _compiler_check(call: Call) -> None:
    """`clang -fsyntax-only` (or gcc's) only parses: unless a plugin, a tool prefix or a config file is loaded."""
    loads = any(w.startswith(("-fplugin", "-Xclang", "-B", "--config", "-specs", "@")) for w in call.words)
    if "-fsyntax-only" not in call.words or loads:
        call.program(f"{call.name} compiles (and can load plugins)")
        return
    call.read_all([w for w in call.positionals() if not w.text.startswith("-")])


def _jar(call: Call) -> None:
    mode = call.words[0] if call.words else ""
    if mode.lstrip("-").startswith("t") or mode in ("--list",):
        call.read_all(call.positionals()[1:] if not mode.startswith("-") else call.positionals())
    else:
        call.program("jar creates, extracts or changes an archive")


HANDLERS: dict[str, Callable[[Call], None]] = {
    "black": _formatter(reads_with=("--check", "--diff")),
    "gofmt": _formatter(writes_with=("-w",)),
    "clang-format": _formatter(writes_with=("-i",)),
    "clang": _compiler_check,
    "gcc": _compiler_check,
    "jar": _jar,
    "rustc": _rustc,
    "cmake": _cmake,
    "xmllint": _xmllint,
    "plutil": _plutil,
    "git": _git,
    **dict.fromkeys(READ_SUBCOMMANDS, _package_tool),
    "pip3": lambda call: _package_tool(
        Call("pip", call.args, call.command, call.ctx, call.verdict, call.judge_words, call.judge_line)
    ),
    **dict.fromkeys(
        (
            "uv",
            "apt-get",
            "aptitude",
            "zypper",
            "port",
            "nix-env",
            "choco",
            "winget",
            "scoop",
            "pdm",
            "pipenv",
            "hatch",
            "pixi",
            "rye",
        ),
        _package_tool,
    ),
    "sqlite3": _sqlite,
    "openssl": _openssl,
    "docker": _docker,
    "podman": _docker,
    "nerdctl": _docker,
    "terraform": _terraform,
    "tofu": _terraform,
    **dict.fromkeys(
        ("systemctl", "service", "launchctl", "loginctl", "timedatectl", "hostnamectl", "localectl", "crontab"),
        _service_manager,
    ),
    "journalctl": _reads_unless(
        "--vacuum-size",
        "--vacuum-time",
        "--vacuum-files",
        "--rotate",
        "--flush",
        "--sync",
        "--relinquish-var",
        "--setup-keys",
    ),
    "dmesg": _reads_unless("-C", "-c", "--clear", "--read-clear", "-D", "-E", "-n", "--console-off", "--console-on"),
    "sysctl": lambda call: (
        call.verdict.add("privilege", "sysctl -w changes the kernel")
        if call.has("-w", "--write", "-p", "--load") or any("=" in w for w in call.words)
        else None
    ),
    "nmcli": _reads_unless(*"up down modify add delete connect disconnect reload on off set".split()),
    "date": _date,
    "hostname": _hostname,
    "ip": _ip,
    "ifconfig": _ifconfig,
    "mount": _mount,
    "umount": lambda call: call.verdict.add("privilege", "umount changes what is mounted"),
    "kill": _kill,
    "ssh-keygen": _ssh_keygen,
    "gpg": _gpg,
    "gpg2": _gpg,
    **dict.fromkeys(
        (
            "printf",
            "read",
            "mapfile",
            "readarray",
            "declare",
            "typeset",
            "local",
            "export",
            "readonly",
            "unset",
            "let",
            "getopts",
            "wait",
        ),
        _names_evaluated,
    ),
    "test": _test,
    "hash": _hash,
    "enable": _enable,
    "[": _test,
    "[[": _test,
    "((": _arith,
    "alias": _alias,
    "trap": _trap,
    "eval": _eval,
    "source": _source,
    ".": _source,
    "cd": _cd,
    "pushd": _cd,
    "popd": _cd,
    "dc": _dc,
}
