"""What is known about programs and environment variables, as data.

A program in `READERS` only reads the files it is given (its positional arguments are checked as
paths); `NO_PATHS` programs take no file arguments; the other sets name programs that reach the
network, need privilege, use the person's keys, or control the machine's processes. Programs with
options that change what they do have their own rules (rules_*.py). Environment variables in
`HOOKS` make a program run other code (a pager, an editor, a preloaded library, a startup file).
"""

from __future__ import annotations

import re
from collections.abc import Callable

from orkas.engine.sandbox.verdict import Verdict

READERS = frozenset(
    """
    ls dir vdir exa eza lsd cat tac head tail more most wc grep egrep fgrep rg ripgrep ag ack ugrep stat file du
    javap
    tree cut paste join comm column nl fold fmt pr expand unexpand rev diff diff3 sdiff cmp md5sum sha1sum
    sha224sum sha256sum sha384sum sha512sum cksum sum b2sum getfacl df lsattr od hexdump
    strings base32 basenc jq gron csvlook csvstat csvcut csvgrep zcat bzcat xzcat lzcat zstdcat lz4cat zgrep
    zegrep zfgrep bzgrep xzgrep zless zmore zdiff bzless xzless identify pdfinfo ffprobe mediainfo nm objdump
    readelf size otool c++filt addr2line look zipinfo lsof blkid findmnt test [ bc shasum kpsewhich h5ls pdffonts
    tokei cloc scc
    """.split()
)
NO_PATHS = frozenset(
    """
    echo printf tr true false : pwd whoami id groups logname cal uptime uname arch nproc free lscpu lsblk lsusb lspci
    lshw ps pgrep pidof pstree top htop btop seq yes sleep wait printenv locale tput clear reset help basename
    dirname expr numfmt factor getconf ulimit set shopt umask hash jobs times type which whereis history dirs
    shift break continue exit return true ss netstat route arp w who last lastlog users vmstat iostat mpstat sar
    lsb_release sw_vers tty stty sensors dmidecode cd pushd popd unalias sync readlink realpath namei whatis
    apropos info
    """.split()
)
# Accepted as the only argument by most programs: answering them runs nothing else.
VERSION_FLAGS = frozenset({"--version", "--help", "-help", "--usage"})
SHORT_VERSION = frozenset(
    "python python3 python2 node ruby perl php rustc java javac gcc g++ clang make cmake npm pip pip3 git docker "
    "curl wget bash sh zsh deno bun lua tsc kubectl terraform openssl ssh gpg".split()
)
# Build tools that read the project's own configuration before they answer even `--version` (Maven's
# .mvn/jvm.config, Yarn's yarnPath, Go's toolchain line, Cargo's config, Gradle's properties): a program.
PROJECT_CONFIGURED = frozenset(
    "mvn mvnw gradle gradlew yarn yarnpkg pnpm go cargo sbt bazel bazelisk dotnet ant lein mix rebar3 stack cabal "
    "bundle bundler composer uv poetry pdm hatch rye pixi".split()
)
# Readers that show a file's name, size or checksum, never its text.
METADATA_READERS = frozenset(
    "ls dir vdir exa eza lsd stat du tree getfacl lsattr df test [ realpath readlink namei findmnt file wc md5sum "
    "sha1sum sha224sum sha256sum sha384sum sha512sum cksum sum b2sum shasum".split()
)
ROOT_OK = frozenset({"ls", "cd", "stat", "file", "df", "test", "[", "findmnt", "namei", "readlink", "realpath"})

NETWORK = frozenset(
    """
    curl wget wget2 http https httpie xh curlie aria2c axel lynx links elinks w3m nc ncat netcat socat telnet ftp
    tftp lftp ping ping6 traceroute traceroute6 tracepath mtr dig nslookup host whois arping nmap masscan
    ssh-keyscan youtube-dl yt-dlp ollama huggingface-cli hf rclone s3cmd gsutil aws gcloud az gh glab doctl flyctl
    fly heroku vercel netlify firebase kubectl helm k9s stern eksctl oc minikube kind ansible ansible-playbook
    ansible-galaxy vagrant packer nomad consul pulumi wrangler supabase railway tailscale ngrok cloudflared tldr
    """.split()
)
PRIVILEGE = frozenset(
    """
    chroot unshare nsenter capsh setpriv setcap insmod rmmod modprobe useradd userdel usermod groupadd groupdel
    passwd chpasswd visudo vipw chsh chfn newgrp sg mount umount losetup cryptsetup mkfs mke2fs mkfs.ext4 mkfs.ext3
    mkfs.xfs mkfs.btrfs mkfs.vfat mkfs.fat mkswap swapon swapoff fdisk sfdisk gdisk parted wipefs iptables
    ip6tables nft ufw firewall-cmd sysctl sudoedit runas
    """.split()
)
CREDENTIALS = frozenset(
    "ssh scp sftp sshfs mosh autossh ssh-add ssh-agent ssh-copy-id gpg gpg2 pass gopass security keyctl secret-tool "
    "op bw lpass age jarsigner apksigner signtool osslsigncode".split()
)
CREDENTIALS_NETWORK = frozenset("ssh scp sftp sshfs mosh autossh ssh-copy-id".split())
PROCESS_CONTROL = frozenset(
    "kill pkill killall killall5 xkill skill renice shutdown reboot halt poweroff init telinit systemd-run at batch "
    "atrm service launchctl loginctl disown".split()
)
WRAPPERS = frozenset("nice ionice nohup time stdbuf unbuffer setsid taskset chrt caffeinate catchsegv valgrind".split())
WRAPPER_VALUES: dict[str, frozenset[str]] = {
    "nice": frozenset({"-n", "--adjustment"}),
    "ionice": frozenset({"-c", "--class", "-n", "--classdata", "-p", "--pid", "-P", "-u"}),
    "stdbuf": frozenset({"-i", "-o", "-e", "--input", "--output", "--error"}),
    "time": frozenset({"-o", "--output", "-f", "--format"}),
    "taskset": frozenset(),
    "chrt": frozenset(),
    "valgrind": frozenset(),
}
WRAPPER_POSITIONALS: dict[str, int] = {"taskset": 1, "chrt": 1}
SHELLS = frozenset("sh bash zsh dash ksh mksh fish csh tcsh ash busybox".split())
INTERPRETERS = frozenset(
    """
    python python2 python3 python3.8 python3.9 python3.10 python3.11 python3.12 python3.13 python3.14 pypy pypy3
    perl ruby irb node nodejs deno bun php lua luajit Rscript R julia osascript pwsh powershell tclsh wish expect
    guile racket sbcl clisp ocaml ghci runghc swipl erl elixir iex scala groovy kotlin jshell
    """.split()
)
PACKAGE_RUNNERS = frozenset("npx pnpx bunx uvx pipx".split())
XARGS_VALUES = frozenset(
    {"-a", "--arg-file", "-d", "--delimiter", "-E", "-e", "-I", "-i", "-L", "-l", "-n", "--max-args", "-P"}
    | {"--max-procs", "-s", "--max-chars", "--process-slot-var"}
)
FIND_FILTERS = frozenset(
    "-name -iname -path -ipath -wholename -iwholename -regex -iregex -newer -mtime -mmin -atime -ctime -size "
    "-user -group -perm -empty -links -inum -samefile -lname -ilname".split()
)

# Environment variables that make a program run other code, or load it from somewhere else.
HOOKS = frozenset(
    """
    LESSOPEN LESSCLOSE LESSKEY LESSKEYIN LESSKEY_SYSTEM LESSEDIT LESS PAGER MANPAGER MANOPT MANPATH BROWSER EDITOR
    VISUAL SUDO_EDITOR FCEDIT SYSTEMD_PAGER SYSTEMD_EDITOR BAT_PAGER DELTA_PAGER PSQL_PAGER MYSQL_PS1 LD_PRELOAD
    LD_LIBRARY_PATH LD_AUDIT LD_BIND_NOW BASH_ENV ENV PROMPT_COMMAND PS0 PS1 PS2 PS4 SHELLOPTS BASHOPTS IFS
    PYTHONPATH PYTHONSTARTUP PYTHONHOME PYTHONINSPECT PYTHONWARNINGS PYTHONBREAKPOINT PYTHONUSERBASE PERL5LIB PERL5OPT
    PERLLIB PERL5DB RUBYLIB RUBYOPT NODE_OPTIONS NODE_PATH NODE_REPL_EXTERNAL_MODULE JAVA_TOOL_OPTIONS _JAVA_OPTIONS
    JDK_JAVA_OPTIONS CLASSPATH GCONV_PATH NLSPATH HOSTALIASES XDG_CONFIG_HOME XDG_DATA_HOME ZDOTDIR INPUTRC
    GNUPGHOME CURL_HOME WGETRC HOME TMUX_TMPDIR MAKEFLAGS MFLAGS GEM_HOME GEM_PATH BUNDLE_GEMFILE RUSTC_WRAPPER
    RUSTC CARGO_HOME CC CXX LD AR LUA_INIT LUA_PATH LUA_CPATH TCLLIBPATH R_PROFILE R_PROFILE_USER R_ENVIRON
    DOCKER_HOST KUBECONFIG PIP_INDEX_URL PIP_EXTRA_INDEX_URL PIP_CONFIG_FILE NPM_CONFIG_USERCONFIG
    BASH_CMDS BASH_ALIASES BASH_LOADABLES_PATH EXECIGNORE GLOBIGNORE PYTHONSAFEPATH
    """.split()
)
# Long options that name a program for the command to run. getopt_long and git's parse-options take any
# unambiguous prefix (`--compress-prog` is `--compress-program`), and an ambiguous one is refused, so a
# word that could abbreviate one of these is treated as that option.
PROGRAM_OPTIONS: dict[str, tuple[str, ...]] = {
    "sort": ("compress-program",),
    "split": ("filter",),
    "tar": (
        "use-compress-program",
        "to-command",
        "checkpoint-action",
        "info-script",
        "new-volume-script",
        "rsh-command",
        "rmt-command",
    ),
    "cpio": ("rsh-command",),
    "diff3": ("diff-program",),
    "sdiff": ("diff-program",),
    "rg": ("pre", "hostname-bin"),
    "ripgrep": ("pre", "hostname-bin"),
    "ugrep": ("filter", "pager"),
    "man": ("pager", "html", "browser"),
    "bat": ("pager",),
    "batcat": ("pager",),
    "ack": ("pager",),
    "rsync": ("rsh", "rsync-path"),
    "fd": ("exec", "exec-batch"),
    "fdfind": ("exec", "exec-batch"),
    "zip": ("unzip-command",),
    "less": ("lesskey-file", "lesskey-src", "lesskey-content"),  # a lesskey file can set LESSOPEN: code
    "git": ("exec-path", "open-files-in-pager", "ext-diff", "upload-pack", "receive-pack", "exec", "config-env"),
}
# For any other program: options whose name says they run a program (an abbreviation of three letters or more).
GENERIC_PROGRAM_OPTIONS = (
    "pager",
    "editor",
    "exec",
    "compress-program",
    "use-compress-program",
    "diff-program",
    "open-files-in-pager",
    "preprocessor",
)
# Common options of their own that happen to begin like one of those: never read as an abbreviation.
NOT_ABBREVIATIONS = frozenset({"edit", "exe", "comp", "compress", "diff", "open", "pre", "prep", "page"})


def program_option(name: str, word: str) -> str | None:
    """The program-naming option `word` is (or abbreviates) for program `name`, if any."""
    if not word.startswith("--") or len(word) < 3 or word.startswith("--no-"):
        return None
    given = word[2:].split("=", 1)[0]
    specific = PROGRAM_OPTIONS.get(name)
    options, shortest = (specific, 1) if specific is not None else (GENERIC_PROGRAM_OPTIONS, 3)
    if len(given) < shortest or (specific is None and given in NOT_ABBREVIATIONS):
        return None
    return next((option for option in options if option.startswith(given)), None)


HOOK_PATTERNS = re.compile(
    r"^(LD_|DYLD_|GIT_(?!AUTHOR_|COMMITTER_|TERMINAL_PROMPT|TRACE)|NPM_CONFIG_|npm_config_)"
    r"|(PAGER|EDITOR|BROWSER|_PROGRAM|_PROG|_COMMAND|_CMD|_SHELL|_HOOK|_WRAPPER)$"  # any tool's way to name a program
    r"|(_CONFIG|_CONFIG_PATH|_CONFIG_FILE|_CONFIG_DIR|_CONF|RC|_RC|RC_PATH|_INIT|_PROFILE|_STARTUP)$",  # …or a config
    re.IGNORECASE,
)
SAFE_PATH = re.compile(r"^(/usr/local/s?bin|/usr/s?bin|/s?bin|/opt/[\w.-]+/bin|\$PATH|\$\{PATH\})(:|$)")


def is_hook(name: str) -> bool:
    return name in HOOKS or bool(HOOK_PATTERNS.search(name))


def hidden_commands(text: str) -> list[str]:
    """Bodies of `$( … )` and backticks inside text that bash may evaluate later (a quoted value, a subscript)."""
    bodies: list[str] = []
    i = 0
    while i < len(text):
        if text.startswith("$(", i) and not text.startswith("$((", i):
            depth, j = 0, i + 1
            while j < len(text):
                depth += {"(": 1, ")": -1}.get(text[j], 0)
                if depth == 0:
                    break
                j += 1
            bodies.append(text[i + 2 : j])
            i = j + 1
        elif text[i] == "`":
            end = text.find("`", i + 1)
            end = len(text) if end < 0 else end
            bodies.append(text[i + 1 : end])
            i = end + 1
        else:
            i += 1
    return bodies


HARMLESS_PAGERS = frozenset({"", "cat", "less", "more", "less -R", "less -FRX", "less -FR"})


def harmless_value(name: str, value: str) -> bool:
    """A hook variable set to what runs nothing new: IFS to a separator, a pager to cat or less."""
    if name == "IFS":
        return len(value) <= 2 and not any(c.isalnum() or c in "$`\\" for c in value)
    if name.endswith("PAGER"):
        return value in HARMLESS_PAGERS
    return False


def check_assignment(verdict: Verdict, name: str, value: str, judge_line: Callable[[str], None]) -> None:
    """`NAME=value`: a hook variable makes the command run other code; a value holding `$(…)` is code."""
    if name == "PATH":
        if not all(SAFE_PATH.match(part + ":") for part in value.split(":") if part):
            verdict.add("code_execution", "PATH is changed, so another program may run under a known name")
    elif is_hook(name) and not harmless_value(name, value):
        verdict.add("code_execution", f"{name}=… makes programs run other code")
    elif name.startswith("GIT_TRACE") and value not in ("", "0", "1", "2", "true", "false"):
        verdict.add("writes", f"{name}={value} makes git write its trace to that file")
    for body in hidden_commands(value):
        judge_line(body)


def only_asks_for_version(name: str, words: list[str]) -> bool:
    """`prog --version`, `prog --help` (and `-V`, `-v`, `-h`, `version` for well-known programs): reads nothing else.
    Never for a build tool that reads the project's configuration first."""
    if len(words) != 1 or name in PROJECT_CONFIGURED:
        return False
    flag = words[0]
    if flag in VERSION_FLAGS:
        return True
    return name in SHORT_VERSION and flag in ("-V", "-v", "-h", "-version", "version")
