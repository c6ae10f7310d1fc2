#!/usr/bin/env bash
# The project's test command: lint, types, layer contracts, then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin

echo "== ruff"; "$bin/ruff" check app tests bench; "$bin/ruff" format --check --quiet app tests bench
echo "== mypy"; "$bin/mypy"
echo "== import-linter"; "$bin/lint-imports" --no-cache | tail -n 2
# Twice as many workers as cores: much of a test is waiting on a subprocess, a browser or a socket. One
# worker per test file (loadfile): a module's browser, its PyInstaller build and dpkg's state stay in one
# process. ORKAS_TEST_WORKERS=0 runs everything in this process (for a debugger).
workers="${ORKAS_TEST_WORKERS:-$(($(nproc) * 2))}"
echo "== pytest ($workers workers)"; "$bin/pytest" -n "$workers" --dist loadfile "$@"
