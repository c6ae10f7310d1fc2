"""How long signing in to a hosted MCP server takes, and what the sign-in costs each later start. A real
OAuth-protected MCP server (tests/fixtures/oauth_mcp_server.py, the SDK's own auth pieces) and a scripted browser
(Playwright with Debian's chromium) that logs in on the page `orkas mcp login` prints.

    .venv/bin/python -m bench.oauth_signin [--runs 5]

Per run, on a fresh data folder: the time from starting `orkas mcp login` to the page printed, the browser's own
part (opening the page, filling it in, coming back), and the whole sign-in to its first call answered (the tools
listed). Then a first call in a new process with the saved sign-in (`orkas mcp tools`), side by side with the same
call to a server that takes a fixed bearer header (the baseline: no OAuth at all). Medians.
"""

from __future__ import annotations

import argparse
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
VENDOR = ROOT / "tests" / "fixtures" / "oauth_mcp_server.py"
PLAIN = ROOT / "tests" / "fixtures" / "mcp_server.py"
ORKAS = str(Path(sys.executable).parent / "orkas")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def serve(*argv: str, port: int) -> subprocess.Popen[bytes]:
    process = subprocess.Popen([sys.executable, *argv], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise SystemExit(f"{argv[0]} did not start")


def orkas(*args: str, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run([ORKAS, *args], env=env, check=True, capture_output=True, timeout=120)
    return time.perf_counter() - started


def sign_in(browser: Any, url: str, env: dict[str, str]) -> tuple[float, float, float]:
    """(to the page printed, the browser's part, the whole sign-in to its tools listed) in seconds."""
    started = time.perf_counter()
    process = subprocess.Popen([ORKAS, "mcp", "add", "vendor", "--url", url, "--oauth"], env=env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    assert process.stdout is not None
    address = next(line for line in process.stdout if line.startswith("  http")).strip()
    printed = time.perf_counter() - started
    page = browser.new_page()
    began = time.perf_counter()
    page.goto(address)
    page.get_by_label("User").fill("ana")
    page.get_by_label("Password").fill("correct horse")
    page.get_by_role("button", name="Sign in").click()
    page.get_by_text("Signed in to vendor").wait_for()
    browsing = time.perf_counter() - began
    page.close()
    process.communicate(timeout=60)
    assert process.returncode == 0
    return printed, browsing, time.perf_counter() - started


def main() -> None:
    from playwright.sync_api import sync_playwright

    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    machine = f"{platform.machine()} {os.cpu_count()} cores"
    print(f"oauth sign-in — {time.strftime('%Y-%m-%d')} on {machine}, {args.runs} runs")
    vendor_port, plain_port = free_port(), free_port()
    vendor = serve(str(VENDOR), "--port", str(vendor_port), port=vendor_port)
    plain = serve(str(PLAIN), "--http", str(plain_port), "--require-header", "Authorization=Bearer b", port=plain_port)
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    rows: list[tuple[float, float, float, float, float]] = []
    try:
        with sync_playwright() as playwright:
            browser = playwright.chromium.launch(executable_path=chromium, headless=True, args=["--no-sandbox"])
            for _ in range(args.runs):
                with tempfile.TemporaryDirectory(prefix="orkas-oauth-") as home:
                    env = {**os.environ, "ORKAS_HOME": str(Path(home) / "data"), "HOME": home}
                    printed, browsing, whole = sign_in(browser, f"http://127.0.0.1:{vendor_port}/mcp", env)
                    signed = orkas("mcp", "tools", "vendor", env=env)
                    url = f"http://127.0.0.1:{plain_port}/mcp"
                    orkas("mcp", "add", "plain", "--url", url, "--header", "Authorization=Bearer b", env=env)
                    fixed = orkas("mcp", "tools", "plain", env=env)
                    rows.append((printed, browsing, whole, signed, fixed))
            browser.close()
    finally:
        vendor.terminate()
        plain.terminate()
    printed, browsing, whole, signed, fixed = (statistics.median(r[i] for r in rows) for i in range(5))
    print(f"  sign-in: page printed after {printed:.2f} s; the browser's part {browsing:.2f} s; "
          f"signed in, tools listed after {whole:.2f} s (Orkas's part {whole - browsing:.2f} s)")  # fmt: skip
    print(f"  a later first call (new process): with the saved sign-in {signed:.2f} s, "
          f"with a fixed header (baseline) {fixed:.2f} s — {signed / fixed:.2f}×")  # fmt: skip


if __name__ == "__main__":
    main()
