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

# System packages (Debian/Ubuntu, as root): bubblewrap confines shell commands; chromium drives the
# browser tests; Xvfb, xdotool, xwd and ImageMagick run and photograph the real window; the xcb
# libraries let Qt open a window; a CJK font makes Chinese render; gcc and binutils build and check the installer's
# BLAS shim (build/one_blas.py).
SYSTEM_PACKAGES=(bubblewrap chromium xvfb xdotool x11-apps imagemagick libxcb-cursor0 libxcb-icccm4
    libxcb-keysyms1 fonts-wqy-microhei gcc binutils)
if [[ "$(uname -s)" == "Linux" ]] && command -v dpkg >/dev/null 2>&1; then
    missing=()
    for package in "${SYSTEM_PACKAGES[@]}"; do
        dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
    done
    if ((${#missing[@]})); then
        if [[ "$(id -u)" == "0" ]] && command -v apt-get >/dev/null 2>&1; then
            echo "setup: installing ${missing[*]}"
            apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
        else
            echo "setup: missing system packages (install them for the window and browser tests): ${missing[*]}" >&2
        fi
    fi
fi

extras="test"
if [[ "${1:-}" == "--bench" ]]; then extras="test,bench"; fi

if [[ ! -x .venv/bin/python ]]; then
    "$PYTHON" -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip
.venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".[$extras]"
# The external agent CLIs for the tests that drive real ones through `orkas bridge` (pinned; from the npm
# registry; skipped with a warning where npm is missing or the registry is out of reach).
if command -v npm >/dev/null 2>&1; then
    npm install --silent --no-audit --no-fund --prefix .venv/external-agents @anthropic-ai/claude-code@2.1.197 \
        @openai/codex@0.171.0 opencode-ai@1.18.33 \
        >/dev/null 2>&1 || echo "setup: the agent CLIs could not be installed; their tests will be skipped" >&2
fi
# Bytecode for the checkout's own code: with PYTHONDONTWRITEBYTECODE set nothing else writes it, and each `orkas`
# start would compile ~300 modules (~0.2 s). Python still checks each file's time, so an edit is never run stale.
.venv/bin/python -m compileall -q app >/dev/null
echo "setup: ready (.venv/bin/orkas)"
