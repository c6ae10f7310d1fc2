"""Hosting the app: the conversation runtime and the local server, wired from the settings.

`orkas serve` runs the server on the main thread; the desktop window runs it on a background thread
(the window needs the main one). Either way there is one secret token per launch, a socket bound to
127.0.0.1 before the URL is printed, and uvicorn with its access log off (URLs carry the token).
"""

from __future__ import annotations

import asyncio
import functools
import gc
import logging
import signal
import socket
import threading
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

import uvicorn

from orkas.adapter.connectors.hub import ConnectorHub
from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.conversations.store import Conversation
from orkas.adapter.knowledge.service import KnowledgeService
from orkas.adapter.learning.evolution import INTERVAL, Evolution
from orkas.adapter.schedules.scheduler import Scheduler
from orkas.adapter.schedules.store import Schedule
from orkas.adapter.settings.mirror_devices import MirrorDevices
from orkas.adapter.settings.preferences import change_preferences
from orkas.adapter.settings.store import SettingsStore
from orkas.adapter.settings.vault import Vault
from orkas.adapter.skills.index import SkillIndex
from orkas.adapter.skills.roots import SkillRegistry
from orkas.adapter.skills.watch import SkillWatcher, watch
from orkas.app import (
    Settings,
    check_provider,
    confinement_report,
    embedder_for,
    environment_providers,
    evolution_for,
    load_configured,
    model_choices,
    package_store,
    protected_data,
    skill_registry,
    suggest_title,
    title_text,
    updater_for,
)
from orkas.app.assembly import Assembly, Knowledge
from orkas.core import crashes
from orkas.core.crashes import CrashReports
from orkas.core.errors import ConfigError
from orkas.core.logging import since_start
from orkas.core.net import bind_local
from orkas.core.paths import make_private
from orkas.core.redact import remember_secret
from orkas.diagnose import save_diagnostics
from orkas.engine.catalog import lookup
from orkas.engine.memory import Memory
from orkas.engine.messages import Message
from orkas.server.app import create_app
from orkas.server.connections import Server, server_config
from orkas.server.loop_watch import LoopWatch
from orkas.server.mirror.app import create_mirror_app
from orkas.server.mirror.routes import MirrorControl
from orkas.server.mirror.security import MirrorGuard
from orkas.server.mirror.server import MirrorServer
from orkas.server.services import Services

if TYPE_CHECKING:
    from orkas.phone.client import Target  # httpx and websockets load with the mirror, not with the app

log = logging.getLogger(__name__)
QUIT_SIGNALS = (signal.SIGINT, signal.SIGTERM)  # Ctrl+C in the terminal; the system (or a test) stopping it


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
    mirror: MirrorServer | None = None
    mirror_at_start: bool = False  # `orkas serve --mirror`, or turned on in Settings → Phone
    skills: SkillRegistry | None = None
    skill_watcher: SkillWatcher | None = None
    evolution: Evolution | None = None
    evolve_settle: float = 600.0
    learning: Callable[[], bool] = lambda: True  # Settings → Learning's switch, read at each cycle
    connectors: ConnectorHub | None = None
    update_checks: bool = True  # ORKAS_UPDATES=off: no automatic check (Settings' switch is read at each)
    update_settle: float = 60.0
    scheduler: Scheduler | None = None  # fires the conversations' schedules while this process holds their lock

    def serve_forever(self) -> None:
        try:
            asyncio.run(self._serve())
        finally:
            if self.skill_watcher is not None:
                self.skill_watcher.close()
            if self.thread is None and self.services.knowledge is not None:  # `orkas serve`: the main thread
                self.services.knowledge.close()

    async def _serve(self) -> None:
        asyncio.get_running_loop().set_exception_handler(_unhandled_in_loop)
        if self.services.loop is not None:
            self.services.loop.start()
        log.info("server ready on port %d after %.0f ms", self.port, since_start() * 1000)
        # What start-up made (modules, classes, tables) lives as long as the app: out of the collector's reach, so a
        # full collection walks only what was made since — it walked ~90,000 objects (~30 ms) at every one, and the
        # soak's event loop stalled ~90 ms at each as conversations grew (bench/soak.py).
        gc.collect()
        gc.freeze()
        if self.services.knowledge is not None and self.services.knowledge.watched():
            # Watched folders may have changed while the app was closed: open now and catch up. Otherwise
            # the knowledge base (numpy, faiss, the embedding model: ~150 MB) opens on its first use.
            self.services.knowledge.warm()
        if self.skills is not None:  # the skill roots: scanned and watched off the start path
            threading.Thread(target=self._watch_skills, name="skill-scan", daemon=True).start()
        evolving = asyncio.create_task(self._evolve_forever()) if self.evolution is not None else None
        checking = asyncio.create_task(self._check_updates_forever()) if self.update_checks else None
        scheduling = asyncio.create_task(self.scheduler.run_forever()) if self.scheduler is not None else None
        if threading.current_thread() is threading.main_thread():  # `orkas serve`; the window stops it itself
            for quit_by in QUIT_SIGNALS:
                asyncio.get_running_loop().add_signal_handler(quit_by, self._quit, quit_by)
        if self.mirror is not None and self.mirror_at_start:
            try:
                self.mirror.start()
            except OSError as e:  # the port is taken: the desktop still works, and says so
                log.warning("the phone mirror cannot listen: %s", e)
        try:
            await self.server.serve(sockets=[self.listener])
        finally:  # the app is exiting: no run goes on, no background process is left behind
            for task in (evolving, checking, scheduling):
                if task is not None:
                    task.cancel()
            if self.mirror is not None:
                await self.mirror.stop(quitting=True)
            await self.runtime.shutdown()
            if self.connectors is not None:  # local MCP servers end with the app
                await self.connectors.close()

    def _quit(self, quit_by: signal.Signals) -> None:
        """Ctrl+C or SIGTERM: the server stops and `_serve` shuts the rest down (see `connections.Server`);
        a second Ctrl+C stops waiting for open connections."""
        if self.server.should_exit and quit_by == signal.SIGINT:
            self.server.force_exit = True
        self.server.should_exit = True

    async def _evolve_forever(self) -> None:
        """Reflection in the background: a first cycle once start-up has settled, then every 12 hours."""
        assert self.evolution is not None
        await asyncio.sleep(self.evolve_settle)
        while True:
            if await asyncio.to_thread(self.learning):
                try:
                    outcomes = await self.evolution.cycle()
                    log.info(
                        "reflection cycle: %d of %d agents reflected", sum(o.reflected for o in outcomes), len(outcomes)
                    )
                except Exception as e:  # the next cycle tries again; the app goes on
                    crashes.report("evolution", e)
            await asyncio.sleep(INTERVAL)

    async def _check_updates_forever(self) -> None:
        """The release feed read once start-up has settled, then once a day — never more often, across restarts
        too (the updater remembers when) — while Settings → About's switch is on; a newer version downloads."""
        from orkas.adapter.updates.feed import UpdateError  # light: the updater itself loads when it is due

        await asyncio.sleep(self.update_settle)
        updates = self.services.updates
        if updates is not None:
            await asyncio.to_thread(lambda: updates().clean())
        while updates is not None:
            wanted = await asyncio.to_thread(lambda: self.services.settings.load().preferences.update_check)
            due = await asyncio.to_thread(lambda: updates().due_in())
            if not wanted or due > 0:
                log.info("update check: %s", f"next in {due / 3600:.1f} h" if wanted else "off in Settings → About")
                await asyncio.sleep(min(due, 3600.0) if wanted else 3600.0)  # the switch is read again hourly
                continue
            try:
                newer = await asyncio.to_thread(updates().check)
                if newer is not None and updates().installed.kind != "source":  # a checkout updates with git
                    await asyncio.to_thread(updates().download)
            except UpdateError as e:  # said in Settings → About; tried again tomorrow
                log.info("update check: %s", e)
            except Exception as e:
                crashes.report("updates", e)
                await asyncio.sleep(3600.0)

    def restart_if_installing(self, argv: Sequence[str], env: Mapping[str, str]) -> None:
        """After the app has shut down: the update the person said yes to is put in place and started in this
        process's place, with `argv` and `env` (does not return then)."""
        if self.services.updates is not None and self.services.restart is not None:
            self.services.updates().restart_if_installing(argv, env)

    def _watch_skills(self) -> None:
        assert self.skills is not None
        try:
            self.skill_watcher = watch(self.skills)  # first: a skill written during the scan is not missed
            self.skills.ensure()
        except Exception as e:  # the app works without skills; the report says why
            crashes.report("skills", e)

    def start_in_background(self) -> None:
        self.thread = threading.Thread(target=self.serve_forever, name="orkas-server", daemon=True)
        self.thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        self.server.should_exit = True
        if self.thread is not None:
            self.thread.join(timeout)
        if self.skill_watcher is not None:
            self.skill_watcher.close()
        if self.services.knowledge is not None:
            self.services.knowledge.close()  # the embedding worker saves its index on the way out


def _unhandled_in_loop(loop: asyncio.AbstractEventLoop, context: dict[str, Any]) -> None:
    """A task that failed with nobody awaiting it: a crash report, not a line lost on stderr."""
    error = context.get("exception")
    if isinstance(error, BaseException):
        crashes.report("server", error)
    else:
        log.error("event loop: %s", context.get("message", "unknown problem"))


def _vault(settings: Settings) -> Vault:
    return Vault.at(settings.data_dir)


def host(
    settings: Settings,
    *,
    port: int = 0,
    bound: tuple[socket.socket, str, str] | None = None,
    mirror: tuple[str, int] | None = None,
) -> Hosted:
    """Build everything on a bound socket; nothing is served until `serve_forever` / `start_in_background`.
    `mirror` (host, port) turns the phone mirror on there; otherwise Settings → Phone decides (where
    `settings.mirror_host` / `mirror_port` say)."""
    make_private(settings.data_dir)
    knowledge = KnowledgeService(
        settings.data_dir / "kb", lambda: embedder_for(settings), lambda: protected_data(settings.data_dir)
    )
    skills = skill_registry(settings, scan=False)
    skill_index = SkillIndex(skills, knowledge)
    skills.meaning = skill_index.search
    assembly = Assembly(
        settings,
        # the first turn: the knowledge base loads while the model answers (once); opened by the first search
        knowledge=Knowledge(lambda: knowledge.kb, lambda: knowledge.chats, knowledge.warm),
        skills=skills,
        after_actor=skill_index.kick,  # the skills are indexed in it (only what changed)
    )
    store, ledger, rules = assembly.store, assembly.ledger, assembly.rules
    settings_store = SettingsStore(settings.data_dir / "settings.json")
    evolution = evolution_for(settings)

    def similar(agent: str) -> Callable[[str], list[str]]:
        """Before a reflection creates a skill: its learned skills much like it, by the skills' index (opened
        and brought up to date first: a reflection may come before any turn did that). Runs on a thread."""
        mine = set(evolution.skills(agent).names())

        def lookalikes(text: str) -> list[str]:
            if not mine:
                return []
            warming = knowledge.warm()
            if warming is not None:
                warming.join(120)
            skill_index.sync()
            return [name for name in skill_index.search(text, 5) if name in mine]

        return lookalikes

    evolution.similar = similar
    problems = list(load_configured(settings).problems)
    if rules.problem:
        problems.append(rules.problem)

    async def test_provider(name: str) -> list[dict[str, Any]]:
        configured = load_configured(settings)
        return await check_provider(configured.product, configured.vault, name)

    async def detect_local() -> list[dict[str, Any]]:
        from orkas.adapter.providers.local_servers import detect  # httpx: only when someone looks

        return [asdict(s) for s in await detect(settings.local_servers)]

    services = Services(
        loop=LoopWatch(),
        settings=settings_store,
        vault=lambda: _vault(settings),
        attachments=assembly.attachments,
        protected=lambda: tuple(protected_data(settings.data_dir)),
        test_provider=test_provider,
        detect_local=detect_local,
        memory=Memory.in_folder(settings.data_dir / "memory"),
        knowledge=knowledge,
        sandbox=lambda: confinement_report(settings).as_dict(),
        crashes=crashes.reports() or CrashReports(settings.data_dir / "crashes", process="server"),
        diagnostics=lambda: save_diagnostics(settings),
        diagnostics_folder=settings.data_dir / "diagnostics",
        agents=assembly.agents,
        members=assembly.groups,
        usage=ledger,
        rules=rules,
        models=lambda: model_choices(settings, load_configured(settings)),
        skills=skills,
        packages=package_store(settings),
        evolution=evolution,
        connectors=assembly.connectors,
        environment=environment_providers(settings),
        instructions=assembly.instructions,
        home=settings.home,
        updates=functools.cache(lambda: updater_for(settings)),
    )
    devices = MirrorDevices(settings.data_dir / "mirror")

    def make_mirror_app(mirror_port: int, addresses: set[str], phone: Target) -> MirrorGuard:
        return create_mirror_app(
            runtime=runtime,
            services=services,
            devices=devices,
            port=mirror_port,
            addresses=addresses,
            phone=phone,
            uploads=settings.data_dir / "mirror" / "uploads",
        )

    mirror_host, mirror_port = mirror or (settings.mirror_host, settings.mirror_port)
    mirror_server = MirrorServer(make_mirror_app, settings.data_dir / "mirror", mirror_host, mirror_port)

    async def remember_mirror(enabled: bool) -> None:
        await change_preferences(settings_store, {"mirror": enabled})

    services.mirror = MirrorControl(devices, mirror_server, remember_mirror)

    def index(conversation: Conversation, messages: Sequence[Message]) -> None:
        knowledge.index_conversation(conversation.id, store.get(conversation.id).title, messages)

    async def make_title(conversation: Conversation, prompt: str, answer: str) -> str | None:
        """A chat's title from a short call to its own model, counted in the ledger and kept to its budgets."""
        configured = await asyncio.to_thread(load_configured, settings)
        product = configured.product
        model = conversation.model or model_choices(settings, configured)[1]
        budget = assembly.budget(conversation.id)
        if not product.preferences.auto_title or not model or budget.blocked():
            return None
        end = await suggest_title(settings, configured, model, prompt, answer)
        price = lookup(end.message.model).price
        cost = price.cost(end.usage) if price is not None else None
        budget.record(
            provider=end.message.provider, model=end.message.model, usage=end.usage, cost=cost, purpose="title"
        )
        return title_text(end)

    hooks = assembly.hooks(
        after_turn=index, after_delete=knowledge.forget_conversation, after_restore=index, make_title=make_title
    )
    runtime = assembly.runtime(hooks)

    def provider_names() -> list[str]:  # read at each ask: the settings screen adds and removes them
        configured = load_configured(settings)
        return list(dict.fromkeys([*configured.product.providers, *(s.name for s in settings.providers)]))

    async def fire(schedule: Schedule) -> None:
        """A schedule's turn, as if the person had sent its prompt; not started while a spending limit is reached (the
        schedule says why in Settings, and runs at its next time)."""
        spent = await asyncio.to_thread(lambda: assembly.budget(schedule.conversation).blocked())
        if spent is not None:
            raise ConfigError(spent)
        conversation = runtime.store.get(schedule.conversation)
        await asyncio.to_thread(assembly.prepare, conversation)  # no provider, a model gone: said, not "started"
        runtime.send(schedule.conversation, schedule.prompt)

    scheduler = Scheduler(assembly.schedules, fire, runtime.running)
    services.schedules = assembly.schedules
    services.schedules_changed = scheduler.poke

    listener, token, url = bound or bind_local(port)
    remember_secret(token)  # never in a log line, a crash report or a diagnostics bundle
    bound_port = listener.getsockname()[1]
    app = create_app(token=token, port=bound_port, runtime=runtime, providers=provider_names, services=services)
    server = Server(server_config(app))
    services.restart = lambda: setattr(server, "should_exit", True)  # the window closes itself instead

    return Hosted(
        url=url,
        port=bound_port,
        token=token,
        runtime=runtime,
        services=services,
        server=server,
        listener=listener,
        problems=problems,
        mirror=mirror_server,
        mirror_at_start=mirror is not None or load_configured(settings).product.preferences.mirror,
        skills=skills,
        evolution=evolution,
        evolve_settle=settings.evolve_settle,
        learning=assembly.learning,
        connectors=assembly.connectors,
        update_checks=settings.update_checks,
        update_settle=settings.update_settle,
        scheduler=scheduler,
    )
