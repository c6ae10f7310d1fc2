"""Reading a test client's WebSocket with a deadline: a missing event fails the test in seconds with a
clear message instead of hanging the suite."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from concurrent.futures import TimeoutError as FutureTimeout
from typing import Any

DEADLINE = 15.0


def receive_json(socket: Any, timeout: float = DEADLINE) -> Any:
    pool = ThreadPoolExecutor(max_workers=1)
    try:
        return pool.submit(socket.receive_json).result(timeout=timeout)
    except FutureTimeout:
        raise AssertionError(f"no event on the socket within {timeout:.0f} s") from None
    finally:
        pool.shutdown(wait=False)  # a reader still blocked dies with the socket
