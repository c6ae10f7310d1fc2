"""The window's process tells glibc's malloc to keep less idle memory (launch.tune_malloc; the figures are in
bench/idle_memory.py's RESULTS entry). Checked in a fresh process: glibc accepts every setting, and after it a
freed large block goes back to the system instead of staying in the process."""

from __future__ import annotations

import subprocess
import sys

import pytest

PROBE = r"""
import ctypes, sys
from orkas.launch import tune_malloc

def rss_kb():
    return next(int(line.split()[1]) for line in open("/proc/self/status") if line.startswith("VmRSS:"))

tuned = tune_malloc() if sys.argv[1] == "tuned" else None
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
# A 16 MiB block freed raises glibc's own thresholds (mmap to 16 MiB, trim to 32); from then on blocks of 1 MiB come
# from the heap and, freed, stay there.
big = libc.malloc(16 << 20); ctypes.memset(big, 1, 16 << 20); libc.free(big)
before = rss_kb()
blocks = [libc.malloc(1 << 20) for _ in range(20)]
for block in blocks:
    ctypes.memset(block, 1, 1 << 20)
for block in blocks:
    libc.free(block)
print(tuned, rss_kb() - before)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's malloc")
def test_tuned_malloc_gives_freed_memory_back() -> None:
    def kept(mode: str) -> tuple[str, int]:
        done = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, check=True)
        tuned, grown = done.stdout.split()
        return tuned, int(grown)

    tuned, kept_tuned = kept("tuned")
    _, kept_default = kept("default")
    assert tuned == "True"
    assert kept_default > 15_000  # glibc alone keeps the 20 MiB it was given back (under its raised trim threshold)
    assert kept_tuned < 4_000
