#!/usr/bin/env bash
# The project's test command: lint, types, layer contracts, then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin

echo "== ruff"; "$bin/ruff" check app tests bench; "$bin/ruff" format --check --quiet app tests bench
echo "== mypy"; "$bin/mypy"
echo "== import-linter"; "$bin/lint-imports" --no-cache | tail -n 2
# Bytecode for the app and the tests, written once here: where PYTHONDONTWRITEBYTECODE is set (CI sets it) every
# `orkas` process a test starts would otherwise compile ~300 modules again (~0.2 s of CPU each, hundreds of them).
"$bin/python" -m compileall -q app tests bench >/dev/null
# Twice as many workers as cores: much of a test is waiting on a subprocess, a browser or a socket. One
# worker per test file (loadfile): a module's browser, its PyInstaller build and dpkg's state stay in one
# process. Files go out in the order tests/conftest.py sets (the long ones first), not re-sorted by xdist. ORKAS_TEST_WORKERS=0 runs everything in this process (for a debugger).
workers="${ORKAS_TEST_WORKERS:-$(($(nproc) * 2))}"
echo "== pytest ($workers workers)"; "$bin/pytest" -n "$workers" --dist loadfile --no-loadscope-reorder "$@"
