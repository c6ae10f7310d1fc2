"""What programs do with their arguments: the one dispatch from a program's name to what is known of it.

A program with its own rule (rules_wrappers.py, rules_files.py, rules_tools.py) is judged by it; a
program in a set of known.py is judged by the set (readers have their paths checked); any other
program "runs a program": asked about in `ask` mode, run confined in `auto` — unknown is not the
same as dangerous.
"""

from __future__ import annotations

from collections.abc import Callable

from orkas.engine.sandbox import known, rules_files, rules_tools, rules_wrappers
from orkas.engine.sandbox.calls import Call, pathish
from orkas.engine.sandbox.shell import Word
from orkas.engine.sandbox.verdict import is_secret

HANDLERS: dict[str, Callable[[Call], None]] = {
    **rules_wrappers.HANDLERS,
    **rules_files.HANDLERS,
    **rules_tools.HANDLERS,
}


def judge_program(call: Call) -> None:
    name = call.name
    for word in call.words:
        option = known.program_option(name, word)
        if option is not None:
            call.code(f"{name} {word.split('=', 1)[0]} (--{option}) runs a program")
    if name in known.PROJECT_CONFIGURED:
        call.program(f"{name} reads the project's own configuration, which can make it run code")
    if known.only_asks_for_version(name, call.words):
        return
    handler = HANDLERS.get(name)
    if name in rules_tools.FETCHES and rules_tools.fetches(call):
        pass
    elif name == "codesign" and call.has("-s", "--sign", "-f", "--force"):
        call.verdict.add("credentials", "codesign signs with your keys")
    elif handler is not None:
        handler(call)
    elif name in known.READERS:
        call.read_all([w for w in call.positionals() if pathish(w) or is_secret(w.text)] or [Word(".")])
    elif name in known.NO_PATHS:
        pass
    elif name in known.NETWORK:
        call.network(f"{name} talks to other machines")
    elif name in known.PRIVILEGE or name.startswith("mkfs"):
        call.verdict.add("privilege", f"{name} changes the machine with elevated rights")
    elif name in known.CREDENTIALS:
        call.verdict.add("credentials", f"{name} uses your keys or passwords")
        if name in known.CREDENTIALS_NETWORK:
            call.network(f"{name} talks to another machine")
    elif name in known.PROCESS_CONTROL:
        call.verdict.add("process_control", f"{name} stops or controls processes or services of the machine")
    elif name in known.PACKAGE_RUNNERS:
        call.verdict.add("package_install", f"{name} may download and run a package")
    else:
        call.program(f"{name!r} runs a program that is not known to be read-only")
        call.read_all(call.positionals())
