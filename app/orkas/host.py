"""Hosting the app: the conversation runtime and the local server, wired from the settings.

`orkas serve` runs the server on the main thread; the desktop window runs it on a background thread
(the window needs the main one). Either way there is one secret token per launch, a socket bound to
127.0.0.1 before the URL is printed, and uvicorn with its access log off (URLs carry the token).
"""

from __future__ import annotations

import asyncio
import json
import secrets
import socket
import threading
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import uvicorn

from orkas.adapter.attachments import AttachmentStore
from orkas.adapter.conversations import Conversation, ConversationStore
from orkas.adapter.local_servers import detect
from orkas.adapter.permission_rules import RuleStore
from orkas.adapter.runtime import ConversationRuntime
from orkas.adapter.settings import SettingsStore
from orkas.adapter.usage import LedgerBudget, UsageLedger
from orkas.adapter.vault import Vault, choose_key_source
from orkas.app import Settings, build_agent, check_provider, load_configured, protected_data
from orkas.engine.budget import Budget
from orkas.engine.consent import Permissions
from orkas.engine.runner import Agent
from orkas.engine.sandbox import PathPolicy
from orkas.server.app import Services, create_app


@dataclass
class Hosted:
    url: str  # with the token: what the window or the browser opens
    port: int
    token: str
    runtime: ConversationRuntime
    services: Services
    server: uvicorn.Server
    listener: socket.socket
    problems: list[str] = field(default_factory=list)
    thread: threading.Thread | None = None

    def serve_forever(self) -> None:
        asyncio.run(self.server.serve(sockets=[self.listener]))

    def start_in_background(self) -> None:
        self.thread = threading.Thread(target=self.serve_forever, name="orkas-server", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout)


def _vault(settings: Settings) -> Vault:
    return Vault(settings.data_dir / "vault.bin", choose_key_source(settings.data_dir))


def host(settings: Settings, *, port: int = 0) -> Hosted:
    """Bind the socket and build everything; nothing is served until `serve_forever` / `start_in_background`."""
    store = ConversationStore(settings.data_dir)
    attachments = AttachmentStore(settings.data_dir)
    settings_store = SettingsStore(settings.data_dir / "settings.json")
    rules = RuleStore(settings.data_dir / "permission_rules.json")
    ledger = UsageLedger(settings.data_dir / "usage.jsonl")
    problems = list(load_configured(settings).problems)
    if rules.problem:
        problems.append(rules.problem)

    def make_agent(conversation: Conversation) -> Agent:
        configured = load_configured(settings)  # every run sees what the settings screen just changed
        granted: list[str | Path] = [*conversation.granted, attachments.folder(conversation.id)]
        attachments.folder(conversation.id).mkdir(parents=True, exist_ok=True)
        return build_agent(
            settings, workspace=conversation.workspace_path, model=None, configured=configured, granted=granted
        )

    def prepare_run(conversation: Conversation) -> tuple[Permissions, Budget | None]:
        product = load_configured(settings).product
        workspace = conversation.workspace_path
        permissions = Permissions(
            workspace=workspace,
            mode=product.preferences.mode,  # type: ignore[arg-type]  # checked when saved
            can_ask=True,
            rules=rules.for_workspace(workspace),
            on_rule_added=rules.add,
        )
        budgets = product.budgets
        budget = LedgerBudget(
            ledger, conversation=conversation.id, per_conversation=budgets.per_conversation, per_day=budgets.per_day
        )
        return permissions, budget

    async def test_provider(name: str) -> list[dict[str, Any]]:
        configured = load_configured(settings)
        return await check_provider(configured.product, configured.vault, name)

    async def detect_local() -> list[dict[str, Any]]:
        return [asdict(s) for s in await detect(settings.local_servers)]

    services = Services(
        settings=settings_store,
        vault=lambda: _vault(settings),
        attachments=attachments,
        protected=lambda: tuple(protected_data(settings.data_dir)),
        test_provider=test_provider,
        detect_local=detect_local,
    )
    runtime = ConversationRuntime(store, make_agent, prepare_run)
    configured = load_configured(settings)
    names = list(configured.product.providers) + [s.name for s in settings.providers]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", port))
    listener.listen(64)
    bound = listener.getsockname()[1]
    token = secrets.token_urlsafe(32)
    app = create_app(token=token, port=bound, runtime=runtime, providers=list(dict.fromkeys(names)), services=services)
    server = uvicorn.Server(
        uvicorn.Config(app, log_level="warning", access_log=False, lifespan="off", timeout_graceful_shutdown=3)
    )
    return Hosted(
        url=f"http://127.0.0.1:{bound}/?token={token}",
        port=bound,
        token=token,
        runtime=runtime,
        services=services,
        server=server,
        listener=listener,
        problems=problems,
    )


def run_desktop(settings: Settings, *, report: Path | None = None) -> int:
    """`orkas`: the server on a background thread and the window on this one, until the window closes.
    `report` (tests) receives one JSON line per window event: shown (with the bridge's answer), dropped."""
    from orkas.desktop.bridge import Bridge
    from orkas.desktop.window import open_window

    hosted = host(settings)
    hosted.start_in_background()
    deadline = time.monotonic() + 10
    while not hosted.server.started and time.monotonic() < deadline:
        time.sleep(0.01)
    store = hosted.runtime.store

    def attach(conversation_id: str, path: Path) -> dict[str, Any]:
        conversation = store.get(conversation_id)
        policy = PathPolicy(
            conversation.workspace, granted=conversation.granted, protected=protected_data(settings.data_dir)
        )
        return asdict(hosted.services.attachments.add_path(conversation, path, policy))

    bridge = Bridge(attach)

    def write(record: dict[str, Any]) -> None:
        if report is not None:
            with report.open("a") as out:
                out.write(json.dumps(record) + "\n")

    def on_shown(window: Any) -> None:
        if report is None:
            return
        # The page calls Python through the bridge; the answer comes back through a resolved promise.
        window.evaluate_js("window.pywebview.api.ping()", lambda answer: write({"event": "shown", "ping": answer}))

    original = bridge.attach_paths

    def attach_paths(conversation_id: str, paths: list[str]) -> list[dict[str, Any]]:
        results = original(conversation_id, paths)
        write({"event": "attached", "conversation": conversation_id, "paths": paths, "results": results})
        return results

    bridge.attach_paths = attach_paths  # type: ignore[method-assign]
    try:
        open_window(hosted.url, bridge, on_shown=on_shown)
    finally:
        hosted.stop()
    return 0
