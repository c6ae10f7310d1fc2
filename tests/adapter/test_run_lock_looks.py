"""Looking whether a conversation runs elsewhere takes its run lock for a moment; a look must never make a run
fail to start as "running in another Orkas" — from a worker thread of this process (the window opening a chat
while sending in it), nor from another process (a terminal starting while the window lists its chats)."""

from __future__ import annotations

import subprocess
import sys
import threading
from pathlib import Path

from orkas.adapter.conversations.store import ConversationStore

RUNS = 300


def test_a_look_on_another_thread_never_refuses_a_run_here(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    chat = store.create(title="busy").id
    done = threading.Event()

    def look() -> None:
        while not done.is_set():
            store.running_elsewhere(chat)

    lookers = [threading.Thread(target=look) for _ in range(2)]
    for thread in lookers:
        thread.start()
    try:
        for _ in range(RUNS):
            store.hold_run(chat).release()  # ConversationBusy here is the bug
    finally:
        done.set()
        for thread in lookers:
            thread.join()


def test_another_process_looking_never_refuses_a_run_here(tmp_path: Path) -> None:
    store = ConversationStore(tmp_path)
    chat = store.create(title="busy").id
    looker = subprocess.Popen(
        [sys.executable, "-c",
         "import sys\nfrom pathlib import Path\nfrom orkas.adapter.conversations.store import ConversationStore\n"
         "store = ConversationStore(Path(sys.argv[1]))\nprint('looking', flush=True)\n"
         "while True:\n    store.running_elsewhere(sys.argv[2])\n", str(tmp_path), chat],
        stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    try:
        assert looker.stdout is not None and looker.stdout.readline() == "looking\n"
        for _ in range(RUNS):
            store.hold_run(chat).release()
    finally:
        looker.kill()
        looker.wait()
