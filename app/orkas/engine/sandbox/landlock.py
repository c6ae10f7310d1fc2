"""Landlock scopes for commands that were approved to use the network.

A command with network shares the host's network namespace, and with it the host's *abstract* unix
sockets — X11 (`@/tmp/.X11-unix/X0`) and some D-Bus buses live there, and they often admit any
process of the same user. Landlock's scopes (Linux 6.12+, ABI 6) forbid connecting to abstract
sockets and signalling processes created outside the command's own domain, without touching its
network. The scope is set by a short Python prelude (in executor.py) that then runs the confined command; where the
kernel is older, or Orkas runs frozen (no `python -c`), `available()` is False and settings say so.
"""

from __future__ import annotations

import ctypes
import sys
from functools import cache

CREATE_RULESET, RESTRICT_SELF = 444, 446  # the same numbers on x86-64 and arm64 (generic syscall table)
CREATE_RULESET_VERSION = 1
SCOPES_ABI = 6


@cache
def available() -> bool:
    """Can commands be scoped here (Linux with Landlock ABI ≥ 6, and a Python that runs `-c`)?"""
    if not sys.platform.startswith("linux") or getattr(sys, "frozen", False):
        return False
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        abi = int(libc.syscall(CREATE_RULESET, None, 0, CREATE_RULESET_VERSION))
    except (OSError, AttributeError):
        return False
    return abi >= SCOPES_ABI
