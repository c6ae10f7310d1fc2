#!/usr/bin/env bash
# The project's test command: lint, types, layer contracts, then the whole test suite.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.venv/bin

echo "== ruff"; "$bin/ruff" check app tests bench; "$bin/ruff" format --check --quiet app tests bench
echo "== mypy"; "$bin/mypy"
echo "== import-linter"; "$bin/lint-imports" --no-cache | tail -n 2
echo "== pytest"; "$bin/pytest" "$@"
