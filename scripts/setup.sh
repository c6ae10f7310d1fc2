#!/usr/bin/env bash
# Set up everything Orkas needs on a fresh machine: a virtual environment in .venv with the app,
# its test tools and (with --bench) the benchmark peers. Safe to run again.
set -euo pipefail
cd "$(dirname "$0")/.."

PYTHON=${PYTHON:-python3}
if ! "$PYTHON" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    echo "setup: Python 3.11 or newer is required (found: $("$PYTHON" --version 2>&1))" >&2
    exit 1
fi

# System packages the tests need: bubblewrap confines shell commands on Linux.
if [[ "$(uname -s)" == "Linux" ]] && ! command -v bwrap >/dev/null 2>&1; then
    if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
        apt-get update -qq && apt-get install -y -qq bubblewrap >/dev/null
    else
        echo "setup: bubblewrap (bwrap) is not installed; shell commands will run unconfined" >&2
    fi
fi

extras="test"
if [[ "${1:-}" == "--bench" ]]; then extras="test,bench"; fi

if [[ ! -x .venv/bin/python ]]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]"
echo "setup: ready (.venv/bin/orkas)"
