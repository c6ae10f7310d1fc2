"""Programs that run other programs: wrappers (env, timeout, xargs, sudo…), shells, interpreters, find."""

from __future__ import annotations

import re
from collections.abc import Callable

from orkas.engine.sandbox import known
from orkas.engine.sandbox.calls import Call, computed, only_wildcards, wholesale
from orkas.engine.sandbox.rules_tools import python_module
from orkas.engine.sandbox.shell import Word
from orkas.engine.sandbox.verdict import is_secret


def _skip_options(rest: list[Word], with_values: tuple[str, ...]) -> None:
    """Drop the leading options from `rest` (and the value of each one in `with_values`)."""
    while rest and rest[0].text.startswith("-"):
        if rest.pop(0).text in with_values and rest:
            rest.pop(0)


def _wrapper(call: Call) -> None:
    options_with_values = known.WRAPPER_VALUES.get(call.name, frozenset())
    rest = list(call.args)
    while rest and rest[0].text.startswith("-") and rest[0].text != "-":
        option = rest.pop(0).text
        if option == "--":
            break
        if option in options_with_values and rest:
            rest.pop(0)
    for _ in range(known.WRAPPER_POSITIONALS.get(call.name, 0)):
        if rest:
            rest.pop(0)
    if call.name in ("taskset", "chrt") and call.has("-p", "--pid"):
        call.verdict.add("process_control", f"{call.name} changes another process")
        return
    if call.name == "ionice" and call.has("-p", "-P", "-u"):
        call.verdict.add("process_control", "ionice changes other processes")
        return
    if rest:
        call.judge_words(rest)


def _env(call: Call) -> None:
    rest = list(call.args)
    while rest:
        word = rest[0].text
        if word in ("-i", "--ignore-environment", "-0", "--null", "-v", "--debug", "-"):
            rest.pop(0)
        elif word in ("-u", "--unset", "-C", "--chdir", "-P"):
            rest = rest[2:]
        elif word.startswith(("--unset=", "--chdir=")):
            rest.pop(0)
        elif word in ("-S", "--split-string") and len(rest) > 1:
            call.judge_line(" ".join([rest[1].text] + [w.raw for w in rest[2:]]))
            return
        elif word.startswith("-S") or word.startswith("--split-string="):
            split = word[2:] if word.startswith("-S") else word.split("=", 1)[1]
            call.judge_line(" ".join([split] + [w.raw for w in rest[1:]]))
            return
        elif re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", word):
            name, value = word.split("=", 1)
            known.check_assignment(call.verdict, name, value, call.judge_line)
            rest.pop(0)
        elif word.startswith("-"):
            rest.pop(0)
        else:
            break
    if rest:
        call.judge_words(rest)


def _exec(call: Call) -> None:
    rest = list(call.args)
    _skip_options(rest, ("-a",))
    if rest:
        call.judge_words(rest)


def _command(call: Call) -> None:
    if call.has("-v", "-V"):
        return
    rest = [w for w in call.args if w.text != "-p"]
    if rest:
        call.judge_words(rest)


def _timeout(call: Call) -> None:
    rest = list(call.args)
    _skip_options(rest, ("-s", "--signal", "-k", "--kill-after"))
    if rest:
        rest.pop(0)  # the duration
    if rest:
        call.judge_words(rest)


def _flock(call: Call) -> None:
    rest = list(call.args)
    while rest and rest[0].text.startswith("-"):
        option = rest.pop(0).text
        if option in ("-c", "--command") and rest:
            call.judge_line(rest[0].text)
            return
        if option in ("-w", "--timeout", "-E", "--conflict-exit-code") and rest:
            rest.pop(0)
    if rest:
        rest.pop(0)  # the lock file
    if rest and rest[0].text in ("-c", "--command") and len(rest) > 1:
        call.judge_line(rest[1].text)
    elif rest:
        call.judge_words(rest)


def _watch(call: Call) -> None:
    rest = list(call.args)
    _skip_options(rest, ("-n", "--interval", "-q", "--equexit"))
    if not rest:
        return
    if call.has("-x", "--exec"):
        call.judge_words(rest)
    else:
        call.judge_line(" ".join(w.raw or w.text for w in rest))


def _xargs(call: Call) -> None:
    rest = list(call.args)
    while rest and rest[0].text.startswith("-"):
        option = rest.pop(0).text
        if option in known.XARGS_VALUES and rest:
            value = rest.pop(0)
            if option in ("-a", "--arg-file"):
                call.read(value)
        elif option.startswith("--arg-file="):
            call.read(Word(option.split("=", 1)[1]))
    inner = rest or [Word("echo")]
    replace = _replace_string(call.words)
    if replace is not None and _runs_text(inner) and any(replace in w.text for w in inner[1:]):
        call.code("xargs puts each line it reads into code it runs (a line can be any command)")
    before = set(call.verdict.categories)
    call.judge_words(inner)
    if inner[0].text.rsplit("/", 1)[-1] in ("rm", "shred", "unlink", "rmdir", "truncate") and (
        ("deletes" in call.verdict.categories and "deletes" not in before) or "destructive" in call.verdict.categories
    ):
        call.verdict.add("destructive", "xargs deletes whatever list it is fed")


def _replace_string(words: list[str]) -> str | None:
    """xargs' -I/-i/--replace: the text each input line replaces in the command."""
    for i, word in enumerate(words):
        if word == "-I" and i + 1 < len(words):
            return words[i + 1]
        if word.startswith("-I") and len(word) > 2:
            return word[2:]
        if word.startswith(("-i", "--replace")):
            value = word[2:] if word.startswith("-i") else word.partition("=")[2]
            return value or "{}"
        if not word.startswith("-"):
            return None
    return None


def _runs_text(inner: list[Word]) -> bool:
    """Does this command run one of its arguments as code (a shell's -c, an interpreter's -c/-e, eval)?"""
    program = inner[0].text.rsplit("/", 1)[-1] if inner else ""
    return program in known.SHELLS or program in known.INTERPRETERS or program in ("eval", "watch", "su", "flock")


def _script(call: Call) -> None:
    command = call.option_values("-c", "--command")
    for line in command:
        call.judge_line(line)
    if not command:
        call.program("script starts a shell")
    outputs = call.positionals(skip_values=frozenset({"-c", "--command", "-t", "-T", "-I", "-O", "-B", "-E"}))
    for word in outputs:
        call.write(word)


def _sudo(call: Call) -> None:
    call.verdict.add("privilege", f"{call.name} runs a command with other privileges")
    rest = list(call.args)
    _skip_options(rest, ("-u", "-g", "-C", "-p", "-h", "-r", "-t", "-U", "-D"))
    if call.name == "su":
        for line in call.option_values("-c", "--command"):
            call.judge_line(line)
    elif rest:
        call.judge_words(rest)


def _trace(call: Call) -> None:
    for word in call.option_values("-o", "--output"):
        call.write(Word(word))
    if call.has("-p", "--attach"):
        call.verdict.add("process_control", f"{call.name} attaches to another process")
    rest = call.positionals(skip_values=frozenset({"-o", "-e", "-s", "-p", "-E", "-u", "-P", "-I", "-b", "-S", "-X"}))
    if rest:
        call.judge_words(rest)


def _find_inner(call: Call, start: int) -> tuple[list[Word], int]:
    end = start
    while end < len(call.args) and call.args[end].text not in (";", "+"):
        end += 1
    return list(call.args[start:end]), end


def _find(call: Call) -> None:
    words = call.words
    first_expression = next((i for i, w in enumerate(words) if w.startswith(("-", "(", "!"))), len(words))
    roots = call.args[:first_expression] or [Word(".")]
    for root in roots:
        call.read(root)
    # A test that narrows what is found: not negated (`! -name .` keeps everything but one), and not computed
    # (`-name "${1:-*}"` may be everything).
    # Narrowed by name or path, not by size or age (`-size -100M`, `-mtime -9999` keep nearly everything).
    filtered = any(
        w in NAME_FILTERS
        and words[i - 1] not in ("!", "-not")
        and not (i + 1 < len(call.args) and computed(call.args[i + 1], call.ctx))
        and not (i + 1 < len(words) and _matches_anything(words[i + 1]))  # `-name '*'` narrows nothing
        for i, w in enumerate(words)
    )
    i = first_expression
    while i < len(call.args):
        word = words[i]
        if word in ("-exec", "-execdir", "-ok", "-okdir"):
            inner, end = _find_inner(call, i + 1)
            if inner and "{}" in inner[0].text:
                call.code("find runs each file it finds as a program")
            elif inner and any(is_secret(p) for p in _name_patterns(words)) and inner[0].text not in METADATA:
                call.verdict.add("secrets", "find hands files named like keys or secrets to a program that reads them")
            if _runs_text(inner) and any("{}" in w.text and w.text != "{}" for w in inner[1:]):
                call.code("find puts each file's name into code it runs (a name can be any command)")
            inner = [w for w in inner if w.text != "{}"] or []
            if inner:
                before = set(call.verdict.categories)
                call.judge_words(inner)
                deleted = {"deletes", "destructive"} & (set(call.verdict.categories) - before)
                unknown_root = any(computed(r, call.ctx) for r in roots)
                if deleted and (unknown_root or (not filtered and any(wholesale(r, call.ctx) for r in roots))):
                    call.verdict.add("destructive", "find deletes everything under the folder")
            i = end + 1
            continue
        if word == "-delete":
            if any(computed(r, call.ctx) for r in roots):
                call.verdict.add(
                    "destructive", "find -delete under a folder decided at run time (it may be the workspace)"
                )
            elif filtered or not any(wholesale(r, call.ctx) for r in roots):
                for root in roots:
                    call.write(root, deletes=True)
            else:
                call.verdict.add("destructive", "find -delete removes everything under the folder")
        elif word in ("-fprint", "-fprint0", "-fprintf", "-fls") and i + 1 < len(call.args):
            call.write(call.args[i + 1])
        elif word == "-files0-from" and i + 1 < len(call.args):
            call.read(call.args[i + 1])
        i += 1


METADATA = known.METADATA_READERS


def _name_patterns(words: list[str]) -> list[str]:
    """The patterns of find's -name, -iname, -path and -wholename tests."""
    tests = ("-name", "-iname", "-path", "-ipath", "-wholename", "-iwholename")
    return [words[i + 1] for i, w in enumerate(words[:-1]) if w in tests]


def _fd(call: Call) -> None:
    for i, word in enumerate(call.words):
        if word in ("-x", "--exec", "-X", "--exec-batch"):
            inner = list(call.args[i + 1 :])
            if _runs_text(inner) and any("{" in w.text and w.text not in ("{}", ";") for w in inner[1:]):
                call.code(f"{call.name} puts each file's name into code it runs (a name can be any command)")
            inner = [w for w in inner if w.text not in ("{}", ";")]
            if inner:
                call.judge_words(inner)
            return
    call.read_all(
        call.positionals(skip_values=frozenset({"-e", "-t", "-E", "-d", "-S", "-j", "-c", "--base-directory"}))
    )


def _shell(call: Call) -> None:
    words = call.words
    code = None
    for i, word in enumerate(words):
        if word.startswith("-") and not word.startswith("--") and "c" in word[1:] and word != "-":
            code = words[i + 1] if i + 1 < len(words) else None
            break
        if not word.startswith(("-", "+")):
            break
        if word in ("-o", "+o", "-O", "+O"):
            continue
    if code is not None:
        call.judge_line(code)
        return
    scripts = call.positionals(skip_values=frozenset({"-o", "+o", "-O", "+O"}))
    if scripts and any(w.startswith("-") and not w.startswith("--") and "n" in w[1:] for w in words[:1]):
        call.read(scripts[0])  # -n: the script is only parsed, never run
        return
    if call.name == "busybox" and scripts:
        call.judge_words(call.args)
        return
    if scripts:
        call.program(f"{call.name} runs the script {scripts[0].text}")
        call.read(scripts[0])
    elif call.command.piped_into:
        call.code(f"pipes text into {call.name} to run it as commands")
    else:
        call.code(f"{call.name} runs the commands it reads from its input")


NAME_FILTERS = frozenset("-name -iname -path -ipath -wholename -iwholename -regex -iregex -lname -ilname".split())


def _matches_anything(pattern: str) -> bool:
    """A name or path pattern made only of wildcards (`*`, `?*`, `[a-z]*`, `.*`, `*/*`), or the regex `.*`."""
    return pattern in (".*", "^.*$", ".+") or only_wildcards(pattern)


# The option that makes an interpreter only check a file's syntax (it runs nothing). Not perl: `perl -c`
# runs BEGIN blocks and every `use`. Any other option (-r, --require, -d) could load code first.
SYNTAX_CHECK = {"ruby": "-c", "php": "-l", "node": "--check"}
# Inline code that deletes or empties files: its target is whatever the code computes, the workspace included.
DELETES = re.compile(
    r"rmtree|remove_tree|rm_rf|rm_r\b|rmSync|rmdirSync|unlinkSync|os\.remove|os\.unlink|\.unlink\(|truncate\(|"
    r"FileUtils\.rm|rmdir\(|unlink\s+glob|"
    r"remove_dir_all|remove_file|File\.delete|Files\.delete|unlink\s*\("
)


def python_flags(words: list[str]) -> tuple[set[str], str | None]:
    """Python's own options before the script (flags, clustered or not) and the module `-m` names, if any."""
    flags: set[str] = set()
    i = 0
    while i < len(words):
        word = words[i]
        if not word.startswith("-") or word in ("-", "--") or word.startswith("--"):
            return flags, None
        for j, letter in enumerate(word[1:], start=1):
            if letter in "cmWXQ":  # the rest of the word, or the next one, is this option's value
                value = word[j + 1 :] or (words[i + 1] if i + 1 < len(words) else "")
                return flags, value if letter == "m" else None
            flags.add(letter)
        i += 1
    return flags, None


def _interpreter(call: Call) -> None:
    name = call.name
    if name.startswith(("python", "pypy")):
        flags, module = python_flags(call.words)
        if module:
            python_module(call, module, isolated=bool(flags & {"I", "P"}))
            return
    if call.command.piped_into and not call.positionals():
        call.code(f"pipes text into {name} to run it as a program")
        return
    check = SYNTAX_CHECK.get(name.rstrip("0123456789."))
    if check and [w for w in call.words if w.startswith("-")] == [check]:
        call.read_all(call.positionals())  # only parsed, never run
        return
    inline = call.option_values("-c", "-e", "-E", "--eval", "-r")
    if any(DELETES.search(code) for code in inline):
        call.verdict.add("destructive", f"the {name} code deletes or empties files it names at run time")
    call.program(f"{name} runs a program that can do anything")
    call.read_all(call.positionals())


HANDLERS: dict[str, Callable[[Call], None]] = {
    **dict.fromkeys(known.SHELLS, _shell),
    **dict.fromkeys(known.INTERPRETERS, _interpreter),
    **dict.fromkeys(known.WRAPPERS, _wrapper),
    "env": _env,
    "exec": _exec,
    "command": _command,
    "builtin": lambda call: call.judge_words(call.args) if call.args else None,
    "timeout": _timeout,
    "gtimeout": _timeout,
    "flock": _flock,
    "watch": _watch,
    "xargs": _xargs,
    "script": _script,
    "sudo": _sudo,
    "su": _sudo,
    "doas": _sudo,
    "pkexec": _sudo,
    "run0": _sudo,
    "gsudo": _sudo,
    "strace": _trace,
    "ltrace": _trace,
    "find": _find,
    "fd": _fd,
    "fdfind": _fd,
}
