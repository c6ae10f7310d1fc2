"""Programs that read, write, move or delete files, and the options that make a reader run code or write.

Deleting something in the workspace is a workspace change; deleting or rewriting the workspace
wholesale (`rm -rf .`, `find . -delete`, `xargs rm -rf` fed an unknown list) is destructive and is
asked about even in `auto`. Anything that lands outside the workspace leaves the sandbox.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from orkas.engine.sandbox.calls import Call, abbreviates, computed, pathish, wholesale
from orkas.engine.sandbox.shell import Word
from orkas.engine.sandbox.verdict import Category


def _targets(call: Call, values: frozenset[str] = frozenset()) -> list[Word]:
    return call.positionals(skip_values=values)


def _copy(call: Call) -> None:
    values = frozenset({"-t", "--target-directory", "-S", "--suffix", "-m", "--mode", "-o", "--owner", "-g", "--group"})
    paths = _targets(call, values)
    target = call.option_values("-t", "--target-directory")
    if call.name == "install" and call.has("-d", "--directory"):
        for path in paths:
            call.write(path)
        return
    if target:
        sources, dests = paths, [Word(target[0])]
    elif len(paths) >= 2:
        sources, dests = paths[:-1], paths[-1:]
    else:
        sources, dests = paths, [Word(".")]
    for source in sources:
        if call.name == "mv" and wholesale(source, call.ctx):
            call.verdict.add("destructive", f"mv {source.text} moves the whole workspace")
        elif call.name == "ln" and call.has("-s", "--symbolic"):
            far = source.text.startswith(("/", "~", "$")) and call.where(source) in (
                "home",
                "outside",
                "root",
                "device",
            )
            if far:  # a link next door (../shared) is a workspace change; a link into the home folder is not
                call.verdict.add("outside_workspace", f"ln links to {source.text}, outside the workspace")
        else:
            call.read(source)
            if call.name == "mv":
                call.write(source, deletes=True)
    for dest in dests:
        call.write(dest)


def _remove(call: Call) -> None:
    always = call.name in ("shred", "srm", "wipe") or call.has("--no-preserve-root")
    targets = _targets(call, frozenset({"-n", "--iterations", "-s", "--size"}))
    if not targets:  # under xargs or find -exec: whatever list it is handed
        call.verdict.add("deletes", f"{call.name} removes the files it is handed")
    for target in targets:
        if wholesale(target, call.ctx):
            call.verdict.add("destructive", f"{call.name} {target.text} deletes the workspace wholesale")
        elif computed(target, call.ctx):
            call.verdict.add(
                "destructive",
                f"{call.name} {target.raw or target.text}: what it deletes is decided at run time (it "
                "may name the whole workspace)",
            )
        elif always:
            call.verdict.add("destructive", f"{call.name} destroys {target.text} beyond recovery")
            call.write(target, deletes=True)
        else:
            call.write(target, deletes=call.name != "rmdir")


def _truncate(call: Call) -> None:
    targets = _targets(call, frozenset({"-s", "--size", "-r", "--reference"}))
    if not targets:  # under xargs or find -exec: whatever list it is handed, emptied
        call.verdict.add("destructive", "truncate empties every file it is handed")
    for target in targets:
        if target.glob and (target.text.lstrip("./") in ("*", "*.*") or wholesale(target, call.ctx)):
            call.verdict.add("destructive", "truncate empties every file")
        elif computed(target, call.ctx):
            call.verdict.add("destructive", "truncate empties files decided at run time (they may be every file)")
        else:
            call.write(target)


def _create(call: Call) -> None:
    values = frozenset({"-m", "--mode", "-r", "--reference", "-d", "--date", "-t", "-p", "--tmpdir", "--suffix"})
    targets = _targets(call, values)
    for folder in call.option_values("-p", "--tmpdir"):
        call.write(Word(folder))
    if call.name == "mktemp" and not targets:
        call.verdict.add("writes", "mktemp creates a temporary file")
        return
    for target in targets:
        call.write(target)


def _permissions(call: Call) -> None:
    paths = _targets(call, frozenset({"--reference"}))
    if not paths:
        return
    mode, targets = paths[0].text, paths[1:]
    if call.name == "chmod" and (re.fullmatch(r"[0-7]?[4-7][0-7]{3}", mode) or re.search(r"(^|,)[ua]*\+[rwx]*s", mode)):
        call.verdict.add("privilege", f"chmod {mode} makes a program run with its owner's rights")
    if call.name == "chown" and re.match(r"^(root|0)(:|\.|$)", mode):
        call.verdict.add("privilege", "chown hands files to root")
    recursive = call.has("-R", "--recursive")
    for target in targets:
        if recursive and wholesale(target, call.ctx):
            where = call.where(target)
            category: Category = "outside_workspace" if where in ("root", "home", "outside") else "destructive"
            call.verdict.add(category, f"{call.name} -R changes every file under {target.text}")
        elif mode in ("000", "0", "a-rwx") and wholesale(target, call.ctx):
            call.verdict.add("destructive", f"{call.name} {mode} locks the workspace")
        else:
            call.write(target)


def _tee(call: Call) -> None:
    for target in _targets(call, frozenset({"--output-error"})):
        if computed(target, call.ctx):
            call.verdict.add("destructive", "tee empties files decided at run time (they may be every file)")
        call.write(target)


def _dd(call: Call) -> None:
    for word in call.args:
        if word.text.startswith("if="):
            call.read(Word(word.text[3:], dynamic=word.dynamic))
        elif word.text.startswith("of="):
            call.write(Word(word.text[3:], dynamic=word.dynamic))


def _patch(call: Call) -> None:
    for value in call.option_values("-i", "--input"):
        call.read(Word(value))
    for value in call.option_values("-o", "--output"):
        call.write(Word(value))
    for value in call.option_values("-d", "--directory"):
        call.write(Word(value))
    if not call.has("--dry-run", "-C", "--check"):
        call.verdict.add("writes", "patch changes files")


def _writes_positionals(values: frozenset[str] = frozenset()) -> Callable[[Call], None]:
    def rule(call: Call) -> None:
        for target in _targets(call, values):
            call.write(target)

    return rule


def _output_option(*names: str, reads: bool = True) -> Callable[[Call], None]:
    """A reader whose output option writes a file (sort -o, iconv -o, shuf -o)."""

    def rule(call: Call) -> None:
        for value in call.option_values(*names):
            call.write(Word(value))
        if reads:
            call.read_all(_targets(call, frozenset(names) | {"-k", "-t", "-S", "-T", "-f", "-c", "-n", "-s"}))
        if call.name == "sort" and call.option_values("--compress-program"):
            call.code("sort --compress-program runs a program")

    return rule


def _second_is_output(values: frozenset[str]) -> Callable[[Call], None]:
    """`uniq in out`, `xxd in out`: the second positional is written."""

    def rule(call: Call) -> None:
        paths = _targets(call, values)
        call.read_all(paths[:1])
        for out in paths[1:2]:
            call.write(out)

    return rule


def _pdftotext(call: Call) -> None:
    paths = _targets(call, frozenset({"-f", "-l", "-r", "-x", "-y", "-W", "-H", "-enc", "-opw", "-upw", "-eol"}))
    call.read_all(paths[:1])
    if len(paths) == 1:
        call.write(Word(re.sub(r"\.pdf$", "", paths[0].text) + ".txt"))
    elif paths[1:2] and paths[1].text != "-":
        call.write(paths[1])


def _exiftool(call: Call) -> None:
    writing = any(
        w in ("-o", "-out", "-overwrite_original", "-overwrite_original_in_place", "-delete_original", "-tagsFromFile")
        or (w.startswith("-") and "=" in w)
        for w in call.words
    )
    for path in _targets(call, frozenset({"-o", "-out", "-tagsFromFile", "-ext", "-d", "-p", "-w"})):
        call.write(path) if writing else call.read(path)


def _dos2unix(call: Call) -> None:
    paths = _targets(call)
    if call.has("-n", "--newfile"):
        call.read_all(paths[::2])
        for out in paths[1::2]:
            call.write(out)
    else:
        for path in paths:
            call.write(path)


def _compressor(call: Call) -> None:
    reading = call.has("-l", "--list", "-t", "--test", "-c", "--stdout", "--to-stdout")
    for path in _targets(call, frozenset({"-S", "--suffix", "-o", "-T", "--threads", "-b"})):
        call.read(path) if reading else call.write(path)


def _tar(call: Call) -> None:
    words = call.words
    letters = words[0] if words and not words[0].startswith("-") else ""
    archive: list[str] = []
    for i, word in enumerate(words):
        cluster = word[1:] if re.fullmatch(r"-[A-Za-z]+", word) else (word if i == 0 and letters else "")
        letters += cluster if cluster != letters or i else ""
        if cluster.endswith("f") and i + 1 < len(words):
            archive.append(words[i + 1])
        if (cluster.endswith("I") and i + 1 < len(words)) or (cluster.endswith("F") and i + 1 < len(words)):
            call.code("tar runs a program given to -I/-F")
    archive += call.option_values("--file")
    for word in words:
        if word.startswith(("--to-command", "--use-compress-program", "--info-script", "--new-volume-script")) or (
            word.startswith(("--rsh-command", "--rmt-command"))
        ):
            call.code(f"tar {word.split('=')[0]} runs a program")
        elif word.startswith("--checkpoint-action") and "exec" in word:
            call.code("tar --checkpoint-action=exec runs a program")
    for name in archive:
        if re.match(r"^[^/.][^/]*:", name) and "--force-local" not in words:
            call.network(f"tar uses the remote archive {name}")
    longs = {w.split("=")[0] for w in words if w.startswith("--")}
    extract = "x" in letters or {"--extract", "--get"} & longs
    create = any(c in letters for c in "cruA") or {"--create", "--append", "--update", "--catenate", "--delete"} & longs
    where = call.option_values("-C", "--directory") or ["."]
    to_stdout = "O" in letters or {"--to-stdout"} & longs
    if extract and not to_stdout:
        for folder in where:
            call.write(Word(folder))
        if "P" in letters or "--absolute-names" in longs:
            call.verdict.add("outside_workspace", "tar -P may write anywhere the archive says")
    for name in archive:
        call.write(Word(name)) if create else call.read(Word(name))
    if create:
        skip = set(archive)
        sources = [w for w in call.positionals() if w.text not in skip and w.text != letters]
        call.read_all(sources)
        if "--remove-files" in longs or any(abbreviates(w, "--remove-files") for w in words):
            for source in sources:
                if wholesale(source, call.ctx):
                    call.verdict.add("destructive", f"tar --remove-files deletes {source.text} once archived")
                call.write(source, deletes=True)


def _zip(call: Call) -> None:
    if call.option_values("-TT", "--unzip-command"):
        call.code("zip -TT runs a program to test the archive")
    paths = _targets(call, frozenset({"-TT", "-b", "-n", "-t", "-tt", "-O", "-P", "-Z", "-s", "-sp"}))
    if paths:
        call.write(paths[0])
        call.read_all(paths[1:])
        if call.has("-m", "--move"):
            for path in paths[1:]:
                if wholesale(path, call.ctx) or computed(path, call.ctx):
                    call.verdict.add("destructive", f"zip -m deletes {path.text} once archived")
                call.write(path, deletes=True)


def _unzip(call: Call) -> None:
    paths = _targets(call, frozenset({"-d", "-x", "-P"}))
    call.read_all(paths[:1])
    if call.has("-l", "-v", "-Z", "-t", "-z", "-p", "-c"):
        return
    for folder in call.option_values("-d") or ["."]:
        call.write(Word(folder))


def _seven_zip(call: Call) -> None:
    paths = _targets(call)
    if not paths:
        return
    action, rest = paths[0].text, paths[1:]
    if action in ("l", "t", "h", "i", "b"):
        call.read_all(rest)
    else:
        for folder in [w[2:] for w in call.words if w.startswith("-o")] or ["."]:
            call.write(Word(folder))
        call.write(rest[0]) if rest else None


def _rsync(call: Call) -> None:
    if call.has("-n", "--dry-run"):  # only says what it would do
        call.read_all([w for w in call.positionals() if ":" not in w.text])
        return
    if call.option_values("-e", "--rsh") or call.option_values("--rsync-path"):
        call.code("rsync runs the program given to -e/--rsync-path")
    paths = _targets(call, frozenset({"-e", "--rsh", "--rsync-path", "-f", "--filter", "--exclude", "--include"}))
    for path in paths:
        if "::" in path.text or path.text.startswith("rsync://") or re.match(r"^[^/.~][^/]*:", path.text):
            call.network(f"rsync copies to or from {path.text}")
    local = [p for p in paths if ":" not in p.text]
    if not local:
        return
    dest = local[-1] if len(paths) >= 2 and paths[-1] is local[-1] else None
    for source in local:
        if source is not dest:
            call.read(source)
    if dest is not None:
        if call.has("--delete", "--delete-before", "--delete-after", "--delete-during") and wholesale(dest, call.ctx):
            call.verdict.add("destructive", "rsync --delete into the workspace removes what the source lacks")
        call.write(dest)
    if call.has("--remove-source-files"):
        for source in local:
            if source is not dest:
                call.write(source, deletes=True)


def _sed(call: Call) -> None:
    scripts = call.option_values("-e", "--expression")
    files = call.option_values("-f", "--file")
    for script_file in files:
        call.program("sed runs a script from a file")
        call.read(Word(script_file))
    values = frozenset({"-e", "--expression", "-f", "--file", "-l", "--line-length"})
    paths = _targets(call, values)
    if not scripts and not files and paths:
        scripts, paths = [paths[0].text], paths[1:]
    in_place = call.has("-i", "--in-place") or any(re.fullmatch(r"-[nEsrzu]*i\S*", w) for w in call.words)
    sandboxed = "--sandbox" in call.words
    for script in scripts:
        if not sandboxed:
            _sed_script(call, script)
    for path in paths:
        if in_place and computed(path, call.ctx):
            call.verdict.add("destructive", "sed -i rewrites files decided at run time (they may be every file)")
        call.write(path) if in_place else call.read(path)


SED_ADDRESS = re.compile(r"(\d+(~\d+)?|\$|/(\\.|[^/\\])*/[IM]*|\\(.)(\\.|(?!\4).)*\4[IM]*)")


def _sed_script(call: Call, script: str) -> None:
    """Find sed commands that run programs (e, s///e) or touch files (w, W, r, R, s///w)."""
    i, n = 0, len(script)
    while i < n:
        c = script[i]
        if c in " \t\n;{}!,+~":
            i += 1
            continue
        if c == "#":
            i = _line_end(script, i)
            continue
        address = SED_ADDRESS.match(script, i)
        if address and address.end() > i and (c.isdigit() or c in "$/\\"):
            i = address.end()
            continue
        if c in "sy" and i + 1 < n:
            i = _sed_substitute(call, script, i, flags=c == "s")
        elif c in "aic":
            i = _line_end(script, i)
        elif c in "wW":
            end = _line_end(script, i)
            call.write(Word(script[i + 1 : end].strip()))
            i = end
        elif c in "rR":
            end = _line_end(script, i)
            call.read(Word(script[i + 1 : end].strip()))
            i = end
        elif c == "e":
            call.code("sed's e command runs a shell command")
            i = _line_end(script, i)
        elif c in ":btT":
            i = next((j for j in range(i + 1, n) if script[j] in ";\n"), n)
        else:
            i += 1


def _line_end(text: str, i: int) -> int:
    end = text.find("\n", i)
    return len(text) if end < 0 else end


def _sed_substitute(call: Call, script: str, i: int, *, flags: bool) -> int:
    delimiter = script[i + 1]
    j = i + 2
    for _ in range(2):
        while j < len(script) and script[j] != delimiter:
            j += 2 if script[j] == "\\" else 1
        j += 1
    if not flags:
        return j
    start = j
    while j < len(script) and script[j] not in ";\n}":
        if script[j] == "w":
            end = _line_end(script, j)
            call.write(Word(script[j + 1 : end].strip()))
            return end
        if script[j] == "e":
            call.code("sed's s///e flag runs the result as a command")
        j += 1
    return max(j, start)


AWK_VALUES = frozenset({"-F", "-v", "-f", "--file", "-e", "--source", "-i", "--include", "-l", "--load", "-E"})


def _awk(call: Call) -> None:
    for option in ("-f", "--file", "-E", "--exec", "-i", "--include", "-l", "--load"):
        if call.option_values(option):
            call.program(f"{call.name} runs code from {option}")
    programs = call.option_values("-e", "--source")
    paths = _targets(call, AWK_VALUES)
    if not programs and not call.option_values("-f", "--file", "-E") and paths:
        programs, paths = [paths[0].text], paths[1:]
    sandboxed = call.has("-S", "--sandbox")
    for program in programs:
        if not sandboxed:
            _awk_program(call, program)
    call.read_all([p for p in paths if "=" not in p.text])


def _awk_program(call: Call, program: str) -> None:
    if re.search(r"\bsystem\s*\(", program) or re.search(r"@(include|load)\b", program):
        call.code(f"{call.name} runs a command (system)")
    if re.search(r"\|&?\s*getline", program) or re.search(r"\|&", program):
        call.code(f"{call.name} reads the output of a command")
    for statement in re.finditer(r"\b(print|printf)\b([^;{}\n]*)", program):
        body = _without_groups(statement.group(2))
        if re.search(r"(?<!\|)\|(?!\|)", body):
            call.code(f"{call.name} pipes its output into a command")
        redirect = re.search(r">>?\s*(\"[^\"]*\"|\S+)?", body)
        if redirect:
            target = redirect.group(1) or "(a file named at run time)"  # `print > ("out/" $1)`: computed
            call.write(Word(target.strip('"'), dynamic=not target.startswith('"')))
    for source in re.finditer(r"getline[^;{}]*<\s*(\"[^\"]*\")", program):
        call.read(Word(source.group(1).strip('"')))


def _without_groups(text: str) -> str:
    """Text with string literals and parenthesised parts removed (`print (a > b)` compares, it does not redirect)."""
    text = re.sub(r'"(\\.|[^"\\])*"', lambda m: '"' + m.group(0)[1:-1].replace(">", "").replace("|", "") + '"', text)
    previous = None
    while previous != text:
        previous, text = text, re.sub(r"\([^()]*\)", "", text)
    return text


def _grep(call: Call) -> None:
    for value in call.option_values("-f", "--file"):
        call.read(Word(value))
    if call.name in ("rg", "ripgrep") and call.option_values("--pre"):
        call.code("rg --pre runs a program on every file")
    if call.name == "ack" and call.option_values("--pager"):
        call.code("ack --pager runs a program")
    values = frozenset(
        {"-e", "-f", "-m", "-A", "-B", "-C", "-g", "-t", "-T", "--type", "-j", "-M", "--max-count", "--regexp"}
    )
    paths = _targets(call, values)
    listing = call.has("--files") and call.name in ("rg", "ripgrep")
    patterns = call.option_values("-e", "--regexp")
    if not listing and not patterns and not call.option_values("-f", "--file") and paths:
        patterns, paths = [paths[0].text], paths[1:]  # the pattern
    if any(KEY_MATERIAL.search(p) for p in patterns):
        call.verdict.add("secrets", f"{call.name} looks for keys or tokens themselves, and shows what it finds")
    call.read_all(paths)


# Patterns that find key material itself (not code that handles passwords): private keys, cloud and API tokens.
KEY_MATERIAL = re.compile(
    r"PRIVATE.{0,3}KEY|BEGIN.{0,20}(KEY|CERTIFICATE)|AKIA|ASIA\[|ghp_|gho_|github_pat|glpat-|sk[-_]live|sk-ant|"
    r"sk-proj|xox[abpr]-|AIza|-----BEGIN",
    re.IGNORECASE,
)


def _pager(call: Call) -> None:
    for value in call.option_values("-O", "-o", "--log-file", "--LOG-FILE"):
        call.write(Word(value))
    if call.option_values("-k"):
        call.code(f"{call.name} -k reads a lesskey file, which can make it run a program")
    for word in call.words:
        if word.startswith("+") and ("!" in word or "|" in word):
            call.code(f"{call.name} {word} runs a command")
    call.read_all(_targets(call, frozenset({"-O", "-o", "-k", "--lesskey-file", "-x", "-y", "-z", "-b", "-h", "-j"})))


def _man(call: Call) -> None:
    if call.option_values("-P", "--pager") or call.has("-H", "--html"):
        call.code("man runs the program given as its pager or browser")
    if call.option_values("-C", "--config-file"):
        call.program("man reads another configuration")
    call.read_all(_targets(call, frozenset({"-P", "--pager", "-C", "-M", "-S", "-p", "-L", "-m"})))


def _bat(call: Call) -> None:
    if call.option_values("--pager"):
        call.code("bat --pager runs a program")
    call.read_all(_targets(call, frozenset({"--pager", "-l", "--language", "-r", "--line-range", "--style"})))


def _jq(call: Call) -> None:
    words = call.words
    for i, word in enumerate(words):
        if word in ("--rawfile", "--slurpfile") and i + 2 < len(words):
            call.read(call.args[i + 2])
    for value in call.option_values("-f", "--from-file"):
        call.read(Word(value))
    if "--args" in words or "--jsonargs" in words:
        return
    values = frozenset({"--arg", "--argjson", "--rawfile", "--slurpfile", "-f", "--from-file", "--indent", "-L"})
    paths = _jq_positionals(call, values)
    if not call.option_values("-f", "--from-file") and paths:
        paths = paths[1:]
    if call.name == "yq" and call.has("-i", "--inplace"):
        for path in paths:
            call.write(path)
    else:
        call.read_all(paths)


def _jq_positionals(call: Call, values: frozenset[str]) -> list[Word]:
    out: list[Word] = []
    args = list(call.args)
    i = 0
    while i < len(args):
        text = args[i].text
        if text in ("--arg", "--argjson", "--rawfile", "--slurpfile"):
            i += 3
            continue
        if text in values:
            i += 2
            continue
        if not text.startswith("-") and not (call.name == "yq" and text in ("eval", "e", "eval-all", "ea")):
            out.append(args[i])
        i += 1
    return out


HANDLERS: dict[str, Callable[[Call], None]] = {
    "cp": _copy,
    "mv": _copy,
    "install": _copy,
    "ln": _copy,
    "rm": _remove,
    "unlink": _remove,
    "rmdir": _remove,
    "shred": _remove,
    "srm": _remove,
    "wipe": _remove,
    "truncate": _truncate,
    "mkdir": _create,
    "touch": _create,
    "mkfifo": _create,
    "mktemp": _create,
    "chmod": _permissions,
    "chown": _permissions,
    "chgrp": _permissions,
    "tee": _tee,
    "dd": _dd,
    "patch": _patch,
    "split": _writes_positionals(frozenset({"-l", "-b", "-n", "-a", "-C", "--additional-suffix"})),
    "csplit": _writes_positionals(frozenset({"-f", "-b", "-n"})),
    "sponge": _writes_positionals(),
    "tree": _output_option("-o", reads=True),
    "sort": _output_option("-o", "--output"),
    "iconv": _output_option("-o", "--output"),
    "shuf": _output_option("-o", "--output"),
    "base64": _output_option("-o", "--output"),
    "uniq": _second_is_output(frozenset({"-f", "-s", "-w", "--skip-fields", "--skip-chars", "--check-chars"})),
    "xxd": _second_is_output(frozenset({"-c", "-g", "-l", "-s", "-o", "-n", "-C"})),
    "pdftotext": _pdftotext,
    "exiftool": _exiftool,
    "dos2unix": _dos2unix,
    "unix2dos": _dos2unix,
    "mac2unix": _dos2unix,
    "tar": _tar,
    "zip": _zip,
    "unzip": _unzip,
    "7z": _seven_zip,
    "7za": _seven_zip,
    "7zr": _seven_zip,
    "rsync": _rsync,
    "sed": _sed,
    "gsed": _sed,
    "awk": _awk,
    "gawk": _awk,
    "mawk": _awk,
    "nawk": _awk,
    "grep": _grep,
    "egrep": _grep,
    "fgrep": _grep,
    "rg": _grep,
    "ripgrep": _grep,
    "ag": _grep,
    "ack": _grep,
    "ugrep": _grep,
    "zgrep": _grep,
    "less": _pager,
    "more": _pager,
    "most": _pager,
    "zless": _pager,
    "man": _man,
    "bat": _bat,
    "batcat": _bat,
    "jq": _jq,
    "yq": _jq,
    **dict.fromkeys(
        "gzip gunzip bzip2 bunzip2 xz unxz zstd unzstd lz4 lzma unlzma brotli pigz compress".split(), _compressor
    ),
}

__all__ = ["HANDLERS", "pathish"]
