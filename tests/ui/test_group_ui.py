"""The group chat in a real browser against `orkas serve` and the wire fake answering each actor by its
system prompt: two agents streaming at once, a hand-off moving the floor (and surviving a reload), and
Stop ending every live bubble."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import Page, expect

from tests.fakes import anthropic as wire
from tests.fakes.routing import ByActor, parallel_dispatch
from tests.fakes.server import FakeServer, Reply
from tests.ui.conftest import App, answer_dialog, start_app

TIMEOUT = 15_000
MARKERS = {"coder": "CODER-BOT", "critic": "CRITIC-BOT", "tutor": "TUTOR-BOT", "commander": "commander of a team"}


@pytest.fixture
def group_app(anthropic_server: FakeServer, tmp_path: Path) -> Iterator[tuple[App, ByActor, str]]:
    router = ByActor(MARKERS)
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    with httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30) as client:
        for name, interactive in (("coder", False), ("critic", False), ("tutor", True)):
            made = client.post(
                "/api/agents",
                json={
                    "name": name,
                    "description": f"the {name}",
                    "prompt": f"You are {MARKERS[name]}.",
                    "interactive": interactive,
                },
            )
            assert made.status_code == 201, made.text
        conversation = client.post("/api/conversations", json={}).json()["id"]
        members = client.put(
            f"/api/conversations/{conversation}/members", json={"members": ["coder", "critic", "tutor"]}
        )
        assert members.status_code == 200, members.text
    yield app, router, conversation
    app.stop()


@pytest.fixture
def group_page(browser: Any, group_app: tuple[App, ByActor, str]) -> Iterator[Page]:
    """A page of the group's own server (not the `app` fixture's: one server per data folder), closed
    before that server stops, failing the test on any error the page raised."""
    context = browser.new_context(viewport={"width": 1200, "height": 800})
    opened = context.new_page()
    errors: list[str] = []
    opened.on("pageerror", lambda e: errors.append(str(e)))
    yield opened
    context.close()
    assert not errors, f"the page raised: {errors}"


def open_app(page: Page, app: App) -> None:
    page.goto(app.url)
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#members .member")).to_have_count(3, timeout=TIMEOUT)


def send(page: Page, text: str) -> None:
    page.fill("#composer textarea", text)
    page.press("#composer textarea", "Enter")


def test_parallel_dispatch_shows_two_live_bubbles(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    parallel_dispatch(router)
    words = " ".join(f"w{i}" for i in range(12))
    router.add("coder", Reply(events=wire.events([wire.text(f"code {words}")]), event_delay=0.25))
    router.add("critic", Reply(events=wire.events([wire.text(f"review {words}")]), event_delay=0.25))
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "build and review")
    coder = page.locator('.msg.assistant.agent[data-actor="coder"]')
    critic = page.locator('.msg.assistant.agent[data-actor="critic"]')
    expect(coder).to_have_count(1, timeout=TIMEOUT)
    expect(critic).to_have_count(1, timeout=TIMEOUT)
    # Both live at once: neither has finished while the other is already showing text.
    expect(coder.locator(".markdown")).to_contain_text("code", timeout=TIMEOUT)
    expect(critic.locator(".markdown")).to_contain_text("review", timeout=TIMEOUT)
    assert "finished" not in (coder.get_attribute("class") or "") or "finished" not in (
        critic.get_attribute("class") or ""
    )
    expect(page.locator(".dispatch-card")).to_have_count(2)
    expect(page.locator('.msg.assistant[data-actor="commander"]').last).to_contain_text(
        "Both are done.", timeout=TIMEOUT
    )
    expect(coder.locator(".actor")).to_have_text("coder")
    # Each ask is drawn once, as its dispatch card: no tool card beside it, never the model's envelope.
    expect(page.locator(".tool-card")).to_have_count(0)
    assert "worker-result" not in page.locator("#messages").inner_text()
    card = page.locator(".dispatch-card", has_text="coder")
    card.locator("summary").click()
    card.get_by_role("button", name="Show the answer").click()
    expect(coder).to_have_class(re.compile(r"\bhighlight\b"))
    page.reload()  # the history from the bus: the same bubbles, once each
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator('.msg.assistant.agent[data-actor="coder"]')).to_have_count(1, timeout=TIMEOUT)
    expect(page.locator('.msg.assistant.agent[data-actor="critic"]')).to_have_count(1)
    expect(page.locator('.msg.assistant[data-actor="commander"]').last).to_contain_text("Both are done.")


def test_a_hand_off_moves_the_floor_indicator_and_it_survives_a_reload(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    router.add("commander", wire.message(wire.tool_use("hand_off_to", {"to": "tutor", "message": "teach fractions"})))
    router.add("tutor", wire.reply_text("A fraction is part of a whole."))
    router.add("tutor", wire.reply_text('Half is 1/2. <handback reason="completed_handoff" />'))
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "teach me fractions")
    expect(page.locator('.msg.assistant.agent[data-actor="tutor"]')).to_contain_text("part of a whole", timeout=TIMEOUT)
    expect(page.locator("#floor")).to_contain_text("Talking to: tutor", timeout=TIMEOUT)
    expect(page.locator(".dispatch-card")).to_have_count(1)  # the hand-off, drawn once: no tool card with its
    expect(page.locator(".tool-card")).to_have_count(0)  # raw <worker-result> envelope beside it
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator("#floor")).to_contain_text("Talking to: tutor", timeout=TIMEOUT)
    send(page, "what is a half?")  # no @: the floor holder answers, then hands back
    expect(page.locator('.msg.assistant.agent[data-actor="tutor"]').last).to_contain_text(
        "Half is 1/2.", timeout=TIMEOUT
    )
    expect(page.locator('.msg.assistant.agent[data-actor="tutor"]').last).not_to_contain_text("handback")
    expect(page.locator("#floor")).to_have_text("", timeout=TIMEOUT)
    # The sidebar's search reads a group's messages too (its history is the bus, not a transcript), and opens
    # the chat at the agent's words.
    page.fill("#search", "part of a whole")
    found = page.locator("#chats .chat")
    expect(found.locator(".snippet")).to_contain_text("part of a whole", timeout=TIMEOUT)
    found.locator("button.chat-open").click()
    expect(page.locator("#find-count")).to_have_text("1 of 1", timeout=TIMEOUT)
    expect(page.locator('.msg.assistant.agent[data-actor="tutor"]').first).to_be_in_viewport()


def test_stop_ends_every_live_bubble(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    router.add(
        "commander",
        wire.message(
            wire.tool_use("dispatch_to", {"to": "coder", "message": "a"}, id="toolu_a"),
            wire.tool_use("dispatch_to", {"to": "critic", "message": "b"}, id="toolu_b"),
        ),
    )
    long = " ".join(f"w{i}" for i in range(200))
    router.add("coder", Reply(events=wire.events([wire.text(long)]), event_delay=0.2))
    router.add("critic", Reply(events=wire.events([wire.text(long)]), event_delay=0.2))
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "do a and b")
    expect(page.locator('.msg.assistant.agent[data-actor="coder"] .markdown')).to_contain_text("w", timeout=TIMEOUT)
    expect(page.locator('.msg.assistant.agent[data-actor="critic"] .markdown')).to_contain_text("w", timeout=TIMEOUT)
    page.click("#composer button.stop")
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)  # the turn is over
    for actor in ("coder", "critic"):
        expect(page.locator(f'.msg.assistant.agent[data-actor="{actor}"]')).to_have_class(
            "msg assistant agent finished"
        )
    expect(page.locator(".marker.stopped").first).to_be_visible()
    live = page.evaluate(SHAPE)
    assert page.locator("#messages").inner_text().lower().count("stopped") == 1  # the person's Stop, said once
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator(".marker.stopped").first).to_be_visible(timeout=TIMEOUT)
    assert page.evaluate(SHAPE) == live


def test_a_reload_mid_dispatch_shows_every_bubble_once(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    router.add(
        "commander",
        wire.message(wire.text("Asking the coder."), wire.tool_use("dispatch_to", {"to": "coder", "message": "go"})),
        wire.reply_text("All done."),
    )
    words = " ".join(f"w{i}" for i in range(16))
    router.add("coder", Reply(events=wire.events([wire.text(f"code {words}")]), event_delay=0.25))
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "go")
    expect(page.locator('.msg.assistant.agent[data-actor="coder"] .markdown')).to_contain_text("code", timeout=TIMEOUT)
    page.reload()  # mid-stream: the history stops where the turn began, the turn is replayed
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator('.msg.assistant[data-actor="commander"]').last).to_contain_text("All done.", timeout=TIMEOUT)
    page.reload()  # and after it ended: the bus
    page.wait_for_selector("body[data-ready=true]")
    expect(page.locator('.msg.assistant[data-actor="commander"]').last).to_contain_text("All done.", timeout=TIMEOUT)
    expect(page.locator(".msg.user")).to_have_count(1)
    expect(page.locator('.msg.assistant.agent[data-actor="coder"]')).to_have_count(1)
    expect(page.locator('.msg.assistant[data-actor="commander"]')).to_have_count(2)  # before and after the dispatch
    expect(page.locator(".dispatch-card")).to_have_count(1)


def test_an_ask_that_fails_says_why_in_the_commander_s_bubble(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    ask = wire.tool_use("dispatch_to", {"to": "nobody", "message": "help"})
    router.add("commander", wire.message(wire.text("Asking."), ask), wire.reply_text("Nobody by that name."))
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "ask nobody")
    commander = page.locator('.msg.assistant[data-actor="commander"]')
    expect(commander.last).to_contain_text("Nobody by that name.", timeout=TIMEOUT)
    expect(commander.locator(".notice.error")).to_contain_text("Could not ask:")
    expect(commander.locator(".notice.error")).to_contain_text("nobody")
    expect(commander.locator(".notice.error")).not_to_contain_text("worker-")
    expect(page.locator(".tool-card.failed")).to_have_count(0)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    said = commander.locator(".notice.error").inner_text()
    page.reload()  # it was gone after a reload: only the words were kept in the group's record
    page.wait_for_selector("body[data-ready=true]")
    expect(commander.last).to_contain_text("Nobody by that name.", timeout=TIMEOUT)
    expect(commander.locator(".notice.error")).to_have_text(said)


def test_agents_are_made_edited_duplicated_and_deleted_in_settings(page: Page, app: App) -> None:
    page.click("#settings-button")
    section = page.locator("#settings section.agents")
    expect(section).to_contain_text("No agents yet.", timeout=TIMEOUT)
    form = section.locator("form.agent-form")
    form.locator("input[name=name]").fill("tutor")
    form.locator("input[name=description]").fill("explains things")
    form.locator("textarea[name=prompt]").fill("You are patient.")
    form.locator("input[name=interactive]").check()
    form.get_by_role("button", name="Create agent").click()
    agent = page.locator('#settings li.agent[data-agent="tutor"]')
    expect(agent).to_contain_text("explains things", timeout=TIMEOUT)
    assert "interactive: true" in (app.home / "agents" / "tutor" / "AGENT.md").read_text()

    agent.get_by_role("button", name="Edit").click()
    page.locator("#settings form.agent-form input[name=description]").fill("explains step by step")
    page.locator("#settings form.agent-form").get_by_role("button", name="Save").click()
    expect(page.locator('#settings li.agent[data-agent="tutor"]')).to_contain_text("step by step", timeout=TIMEOUT)

    page.locator('#settings li.agent[data-agent="tutor"]').get_by_role("button", name="Duplicate").click()
    answer_dialog(page, "tutor-two")
    expect(page.locator('#settings li.agent[data-agent="tutor-two"]')).to_be_visible(timeout=TIMEOUT)
    page.locator('#settings li.agent[data-agent="tutor"]').get_by_role("button", name="Remove").click()
    expect(page.locator('#settings li.agent[data-agent="tutor"]')).to_have_count(0, timeout=TIMEOUT)
    assert not (app.home / "agents" / "tutor").exists() and (app.home / "agents" / "tutor-two" / "AGENT.md").exists()


def test_at_offers_the_members_and_inserts_the_one_chosen(
    group_app: tuple[App, ByActor, str], group_page: Page
) -> None:
    page = group_page
    app, _, _ = group_app
    open_app(page, app)
    page.fill("#composer textarea", "please @co")
    page.locator("#composer textarea").dispatch_event("input")
    options = page.locator("#composer .mentions button.mention")
    expect(options).to_have_text(["@coder", "@commander"], timeout=TIMEOUT)
    options.first.click()
    expect(page.locator("#composer textarea")).to_have_value("please @coder ")
    expect(page.locator("#composer .mentions")).to_be_hidden()


def test_members_are_added_and_removed_from_the_bar_and_the_chat_becomes_a_group(
    page: Page, app: App, anthropic_server: FakeServer
) -> None:
    with httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30) as client:
        made = client.post(
            "/api/agents", json={"name": "coder", "description": "codes", "prompt": "You are CODER-BOT."}
        )
        assert made.status_code == 201
    anthropic_server.script(wire.reply_text("Hello from one agent."))
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    page.fill("#composer textarea", "hi")
    page.press("#composer textarea", "Enter")
    expect(page.locator(".msg.assistant")).to_contain_text("Hello from one agent.", timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    page.locator("#members select.add-member").select_option("coder")
    expect(page.locator('#members .member[data-member="coder"]')).to_be_visible(timeout=TIMEOUT)
    # Now a group: its history is the bus, and nothing of the one-agent conversation is lost.
    expect(page.locator('.msg.assistant[data-actor="commander"]')).to_contain_text("Hello from one agent.")
    expect(page.locator(".msg.user")).to_have_text("hi")
    page.locator('#members .member[data-member="coder"] button').click()
    expect(page.locator('#members .member[data-member="coder"]')).to_have_count(0, timeout=TIMEOUT)
    expect(page.locator("#members select.add-member")).to_be_visible()


# What a person sees of a group chat, in order: each bubble, card and marker, whose it is, its words, its cost line.
SHAPE = """() => [...document.querySelectorAll(
  '#messages :is(.msg, .dispatch-card, .marker, .notice, .worker-card, .tool-card)'
)].map((n) => {
  const kind = n.classList.contains('msg') ? (n.classList.contains('user') ? 'user' : 'answer') : n.classList[0];
  const words = n.classList.contains('msg')
    ? [...n.querySelectorAll(':scope > .body > .markdown')].map((m) => m.innerText.trim()).join(' | ')
    : (n.querySelector('summary') ?? n).innerText.trim();
  const foot = n.querySelector(':scope > .turn-foot')?.innerText.trim() ?? '';
  return [kind, n.dataset.actor ?? '', words, foot];
})"""


def test_a_group_turn_reads_the_same_live_and_after_a_reload(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    router.add(
        "commander",
        wire.message(
            wire.text("Asking both."),
            wire.tool_use("dispatch_to", {"to": "coder", "message": "write it"}, id="toolu_a"),
            wire.tool_use("dispatch_to", {"to": "critic", "message": "review it"}, id="toolu_b"),
        ),
        wire.reply_text("Both are done."),
    )
    # Asked first, the coder ends last: the order they were asked in is the one both views keep.
    router.add("coder", Reply(events=wire.events([wire.text("code written")]), event_delay=0.4))
    router.add("critic", Reply(events=wire.events([wire.text("review written")]), event_delay=0.02))
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "build and review")
    last = page.locator('.msg.assistant[data-actor="commander"]').last
    expect(last).to_contain_text("Both are done.", timeout=TIMEOUT)
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    live = page.evaluate(SHAPE)
    text = page.locator("#messages").inner_text()
    assert "<worker-" not in text and "<handback" not in text and "failed" not in text.lower()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    expect(last).to_contain_text("Both are done.", timeout=TIMEOUT)
    assert page.evaluate(SHAPE) == live


def look_of(locator: Any) -> tuple[str, str]:
    """The initial drawn before a name (its ::before) and the colour it is drawn in."""
    shown: list[str] = locator.evaluate(
        "(n) => { const s = getComputedStyle(n, '::before'); return [s.content, s.backgroundColor]; }"
    )
    initial, _, spoken = shown[0].partition(" / ")
    assert spoken == '""', shown  # decoration: the name beside it is what a screen reader says
    return initial.strip('"'), shown[1]


def rgb(color: str) -> str:
    return "rgb({}, {}, {})".format(*(int(color[i : i + 2], 16) for i in (1, 3, 5)))


def test_a_new_chat_gets_its_members_before_its_first_message(
    browser: Any, anthropic_server: FakeServer, tmp_path: Path
) -> None:
    """New chat → two agents added on the blank page → `@` offers them → "@coder hi" answered in the coder's
    colour and initial → a hand-off gives the tutor the floor ("Talking to: tutor") → "hand back" returns it."""
    router = ByActor(MARKERS)
    router.add("coder", wire.reply_text("Hello from the coder."))
    router.add("commander", wire.message(wire.tool_use("hand_off_to", {"to": "tutor", "message": "teach fractions"})))
    router.add("tutor", wire.reply_text("A fraction is part of a whole."))
    anthropic_server.script(*[router] * router.total)
    app = start_app(tmp_path / "home", ANTHROPIC_API_KEY="sk-ant-test", ANTHROPIC_BASE_URL=anthropic_server.url)
    context = browser.new_context(viewport={"width": 1280, "height": 800})
    page = context.new_page()
    errors: list[str] = []
    page.on("pageerror", lambda e: errors.append(str(e)))
    try:
        with httpx.Client(base_url=app.base, headers={"X-Orkas-Token": app.token}, timeout=30) as client:
            for name, interactive in (("coder", False), ("critic", False), ("tutor", True)):
                body = {"name": name, "description": f"the {name}", "prompt": f"You are {MARKERS[name]}."}
                assert client.post("/api/agents", json={**body, "interactive": interactive}).status_code == 201
            page.goto(app.url)
            page.wait_for_selector("body[data-ready=true]")
            pick = page.locator("#members select.add-member")  # the blank page of a new chat
            pick.select_option("coder")
            expect(page.locator('#members .member[data-member="coder"]')).to_be_visible(timeout=TIMEOUT)
            page.locator("#members select.add-member").select_option("tutor")
            expect(page.locator("#members .member")).to_have_count(2, timeout=TIMEOUT)
            assert client.get("/api/conversations").json() == []  # nothing made yet: walking away leaves nothing

            page.fill("#composer textarea", "@")
            page.locator("#composer textarea").dispatch_event("input")
            expect(page.locator("#composer .mentions button.mention")).to_have_text(["@coder", "@tutor", "@commander"])
            expect(page.get_by_role("option", name="@coder", exact=True)).to_be_visible()  # the initial is not read
            send(page, "@coder hi")
            coder = page.locator('.msg.assistant.agent[data-actor="coder"]')
            expect(coder).to_contain_text("Hello from the coder.", timeout=TIMEOUT)
            looks = {a["name"]: a["look"] for a in client.get("/api/agents").json()["agents"]}
            assert looks["coder"]["color"] != looks["tutor"]["color"]
            assert look_of(coder.locator(".actor")) == ("C", rgb(looks["coder"]["color"]))
            assert look_of(page.locator('#members .member[data-member="coder"]')) == ("C", rgb(looks["coder"]["color"]))
            assert look_of(page.locator('#members .member[data-member="tutor"]')) == ("T", rgb(looks["tutor"]["color"]))
            [chat] = client.get("/api/conversations").json()
            assert client.get(f"/api/conversations/{chat['id']}/members").json()["members"] == ["coder", "tutor"]
            expect(page.locator("#floor")).to_have_text("")  # the commander holds the floor: nothing said

            expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
            send(page, "teach me fractions")
            expect(page.locator('.msg.assistant.agent[data-actor="tutor"]')).to_contain_text("part of a whole")
            floor = page.locator("#floor")
            expect(floor).to_have_text("Talking to: tutor · hand back", timeout=TIMEOUT)
            expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
            floor.get_by_role("button", name="hand back").click()
            expect(floor).to_have_text("", timeout=TIMEOUT)
            assert client.get(f"/api/conversations/{chat['id']}/members").json()["floor"] == "commander"
    finally:
        context.close()
        app.stop()
    assert not errors, f"the page raised: {errors}"


def test_settings_offers_an_agent_the_configured_models_and_a_colour(page: Page, app: App) -> None:
    page.click("#settings-button")
    form = page.locator("#settings section.agents form.agent-form")
    models = form.locator("select[name=model] option")
    expect(models.first).to_have_text("Default (the chat's model)", timeout=TIMEOUT)
    offered = models.evaluate_all("(all) => all.map((o) => o.value)")
    configured = httpx.get(f"{app.base}/api/models", headers={"X-Orkas-Token": app.token}).json()["models"]
    assert configured and offered == ["", *configured]
    form.locator("input[name=name]").fill("tutor")
    form.locator("input[name=description]").fill("explains things")
    form.locator("textarea[name=prompt]").fill("You are patient.")
    form.locator("select[name=model]").select_option(configured[0])
    form.get_by_label("Choose one").check()
    form.locator("input[name=color]").fill("#aa3300")
    form.get_by_role("button", name="Create agent").click()
    agent = page.locator('#settings li.agent[data-agent="tutor"]')
    expect(agent).to_be_visible(timeout=TIMEOUT)
    written = (app.home / "agents" / "tutor" / "AGENT.md").read_text()
    assert f"model: {configured[0]}" in written and "color: '#aa3300'" in written
    assert look_of(agent.locator(".look")) == ("T", "rgb(170, 51, 0)")


def test_a_members_question_answered_is_still_there_after_a_reload(
    group_app: tuple[App, ByActor, str], group_page: Page, anthropic_server: FakeServer
) -> None:
    page = group_page
    app, router, _ = group_app
    router.add(
        "commander",
        wire.message(wire.tool_use("dispatch_to", {"to": "coder", "message": "save it"}, id="toolu_d")),
        wire.reply_text("Saved by the coder."),
    )
    router.add(
        "coder",
        wire.message(
            wire.text("I need to save it."),
            wire.tool_use("write_file", {"path": "kept.md", "content": "a"}, id="toolu_w"),
        ),
        wire.reply_text("kept.md written"),
    )
    anthropic_server.script(*[router] * router.total)
    open_app(page, app)
    send(page, "save kept.md")
    coder = page.locator('.msg.assistant[data-actor="coder"]')
    card = coder.locator(".permission-card")
    expect(card).to_be_visible(timeout=TIMEOUT)
    card.locator("button.allow_once").click()
    expect(page.locator('.msg.assistant[data-actor="commander"]').last).to_contain_text(
        "Saved by the coder.", timeout=TIMEOUT
    )
    expect(page.locator("#composer button.stop")).to_be_hidden(timeout=TIMEOUT)
    live = card.locator(".answer").inner_text()
    expect(coder.locator(".markdown").last).to_have_text("kept.md written", timeout=TIMEOUT)
    order = "(n) => [...n.querySelectorAll('.body > *')].map((c) => c.classList[0])"
    seen = coder.evaluate(order)
    row = coder.locator(".tool-card .tool-row")
    expect(row).to_contain_text("kept.md")
    called = row.inner_text()
    page.reload()
    page.wait_for_selector("body[data-ready=true]")
    # The question as it was answered, above the call it allowed, in the coder's bubble (it was gone: only the
    # words were kept in the group's record).
    expect(coder.locator(".permission-card.answered.allowed")).to_have_count(1, timeout=TIMEOUT)
    expect(coder.locator('.permission-card + .tool-card.ok:has-text("write_file")')).to_have_count(1)
    assert row.inner_text() == called  # the call in one line and its time, as live
    assert coder.locator(".permission-card .answer").inner_text() == live
    expect(coder.locator(".permission-card")).to_contain_text("kept.md")  # what was asked, not only that it was
    expect(coder.locator(".permission-card button:enabled")).to_have_count(0)
    # what it said before its call, the question, the call, what it said after: in that order, as live (the words
    # before the call were lost, and the rest came above the card)
    expect(coder.locator(".markdown")).to_have_text(["I need to save it.", "kept.md written"])
    assert [c.split(":")[0] for c in coder.evaluate(order)] == [c.split(":")[0] for c in seen], (
        seen,
        coder.evaluate(order),
    )
    exported = httpx.get(
        f"{app.base}/api/conversations/{group_app[2]}/export", headers={"X-Orkas-Token": app.token}, timeout=30
    )
    assert "asked to run write_file" in exported.text and "allowed once" in exported.text, exported.text
