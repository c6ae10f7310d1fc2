"""Git, in a command nobody approved: the repository's settings that would run a program are switched off.

A repository someone downloaded carries its own `.git/config` and `.gitattributes`, and git obeys them even
for a plain read: `core.fsmonitor` runs a program on every `git status`, a `filter.<x>.clean` driver runs on
each changed file `git status` looks at, `diff.<x>.textconv` on each file `git diff` or `git log -p` shows,
`diff.external` for every diff. In a command that runs without the person's approval (one the classifier
judged a read), a small script stands in for git: it bound read-only over each git binary the command
could call, and execs the real one (bound at GIT_INSIDE) with every such setting overridden through git's
command-line configuration (`GIT_CONFIG_COUNT`), which outranks the repository's own and reaches every git
that one starts. The rest are found by asking the real git which settings of this repository's configuration
(its includes too) name a program, by the setting's name whatever its section (PROGRAMS; reading configuration
runs nothing). A textconv becomes `cat` (the diff shows the file as it is), a `pager.<cmd>` false, the others
nothing, aliases too (git never lets one stand for a built-in command, so no read needs one; an approved
command runs git as the person configured it).

The command is read-only anyway (confine.py): this keeps a downloaded repository from running its code
even there, where it could only have read what the model can already read.
"""

from __future__ import annotations

import os
import shlex
import shutil
from pathlib import Path

from orkas.engine.sandbox.confine import GIT_INSIDE, GitShim, provide

SCRIPT = r"""#!/bin/sh
# Orkas: git in a command nobody approved. The repository's settings that run programs are switched off.
real=__REAL__
n=${GIT_CONFIG_COUNT:-0}
put() { export "GIT_CONFIG_KEY_$n=$1" "GIT_CONFIG_VALUE_$n=$2"; n=$((n + 1)); }
__FIXED__
export GIT_CONFIG_COUNT=$n
# The options before the subcommand choose the repository (-C, --git-dir…): ask that one for its drivers.
count=0
value=0
for word in "$@"; do
    if [ "$value" = 1 ]; then value=0; count=$((count + 1)); continue; fi
    case "$word" in
        -C|-c|--git-dir|--work-tree|--namespace|--config-env|--exec-path|--super-prefix) value=1 ;;
        -*) ;;
        *) break ;;
    esac
    count=$((count + 1))
done
settings() {  # KEEP PATTERN GIT-ARGS…: the names of the settings; the first KEEP git options choose the repository
    keep=$1; pattern=$2; shift 2; total=$#; i=0
    while [ "$i" -lt "$total" ]; do
        word=$1; shift; i=$((i + 1))
        if [ "$i" -le "$keep" ]; then set -- "$@" "$word"; fi
    done
    "$real" "$@" config --name-only --get-regexp "$pattern" 2>/dev/null
}
# One key per line: a subsection may hold spaces (`man.x y.cmd`); no globbing of what git prints.
set -f
saved=$IFS
IFS='
'
for key in $(settings "$count" '__PROGRAMS__' "$@"); do
    case "$key" in
        *.textconv) put "$key" cat ;;
        pager.*) put "$key" false ;;
        alias.*) put "$key" "" ;;
        *) put "$key" "" ;;
    esac
done
IFS=$saved
set +f
# Again: the last value of a key wins, and the listing above saw these too.
__FIXED__
export GIT_CONFIG_COUNT=$n
# diff.external is blanked above, and git would try to run the blank: the diff family is told not to use it.
at=$((count + 1))
if [ "$at" -le "$#" ]; then
    eval "sub=\${$at}"
    case "$sub" in
        diff|log|show|whatchanged)
            total=$#; i=0
            while [ "$i" -lt "$total" ]; do
                word=$1; shift; i=$((i + 1))
                set -- "$@" "$word"
                if [ "$i" -eq "$at" ]; then set -- "$@" --no-ext-diff; fi
            done ;;
    esac
fi
exec "$real" "$@"
"""


# Settings that run a program whatever the repository's attributes say; each is overridden in every git
# call of a command nobody approved (and, where nothing confines commands, set in its environment).
FIXED: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("diff.external", ""),
    ("core.pager", "cat"),
    ("core.editor", "false"),
    ("sequence.editor", "false"),
    ("core.askPass", "false"),
    ("core.sshCommand", "false"),
    ("core.gitProxy", ""),
    ("core.alternateRefsCommand", ""),
    ("gpg.program", "false"),
    ("gpg.ssh.program", "false"),
    ("gpg.x509.program", "false"),
    ("log.showSignature", "false"),
    ("credential.helper", ""),
    ("protocol.allow", "never"),
    ("help.format", "man"),
    ("help.autocorrect", "0"),
)

# Every setting, in any section, whose value git runs as a program: by how the variable's name ends (git
# lists keys with the section and the variable in lower case; gpg.ssh.defaultkeycommand ends in "command"),
# so `tar.<format>.command`, `browser.<tool>.cmd`, `man.<tool>.cmd`, `web.browser`, `credential.<url>.helper`
# are caught with the drivers and whatever comes next under such a name; the `path` of a man viewer, a browser
# or a tool; each `pager.<cmd>`; every alias.
PROGRAMS = (
    r"^[^.]+([.].+)?[.][a-z0-9-]*(textconv|command|cmd|clean|smudge|process|driver|program|helper|viewer|browser|"
    r"tool|editor|pager|askpass|fsmonitor|hookspath|receivepack|uploadpack|packobjectshook|gitproxy|difffilter)$"
    r"|^(man|browser|mergetool|difftool)[.].+[.]path$|^pager[.]|^alias[.]"
)


def fixed_environment() -> dict[str, str]:
    """FIXED as git's command-line configuration in the environment (for commands nothing confines)."""
    env = {"GIT_CONFIG_COUNT": str(len(FIXED))}
    for i, (key, value) in enumerate(FIXED):
        env[f"GIT_CONFIG_KEY_{i}"] = key
        env[f"GIT_CONFIG_VALUE_{i}"] = value
    return env


def script() -> str:
    """The shim's text: FIXED, then the drivers the repository names, then the real git."""
    lines = "\n".join(f"put {key} {shlex.quote(value)}" for key, value in FIXED)
    return SCRIPT.replace("__REAL__", GIT_INSIDE).replace("__FIXED__", lines).replace("__PROGRAMS__", PROGRAMS)


def git_shim(folder: Path, path_env: str) -> GitShim | None:
    """The shim for the git found on `path_env` (None when there is no git), written into `folder` (Orkas's own)."""
    found = shutil.which("git", path=path_env)
    if found is None:
        return None
    real = Path(os.path.realpath(found))
    names = {real, Path(found)}
    core = Path("/usr/lib/git-core/git")
    if core.exists():
        names.add(Path(os.path.realpath(core)))
    where = provide(folder, {"git-shim": script()})["git-shim"]
    if where.stat().st_mode & 0o111 != 0o111:
        where.chmod(0o755)
    return GitShim(script=where, real=real, names=tuple(sorted(names)))
