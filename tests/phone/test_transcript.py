"""What the phone draws, from the mirror's real shapes: a history, then live events (catch-up overlaps
included), for one agent and for a group."""

from __future__ import annotations

from typing import Any

from orkas.phone.strings import Words
from orkas.phone.transcript import Bubble, Marker, Question, Transcript


def event(seq: int, type_: str, **fields: Any) -> dict[str, Any]:
    return {"v": 1, "seq": seq, "conversation": "c1", "type": type_, **fields}


HISTORY = {
    "id": "c1",
    "after": 3,
    "running": False,
    "group": None,
    "messages": [
        {"id": "u1", "role": "user", "content": [{"type": "text", "text": "list the files"}]},
        {
            "id": "a1",
            "role": "assistant",
            "content": [
                {"type": "text", "text": "Looking."},
                {"type": "tool_use", "id": "t", "name": "bash", "input": {"command": "ls"}, "summary": "ls"},
            ],
        },
        {"id": "r1", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t", "content": []}]},
        {"id": "a2", "role": "assistant", "content": [{"type": "text", "text": " Two files."}]},
        {"id": "n1", "role": "app", "kind": "error", "text": "The provider is overloaded"},
    ],
}


def test_a_history_becomes_bubbles_with_tools_and_markers() -> None:
    chat = Transcript.from_history(HISTORY)
    kinds = [(type(i).__name__, getattr(i, "who", "")) for i in chat.items]
    assert kinds == [("Bubble", "user"), ("Bubble", "assistant"), ("Marker", "")]  # a tool result is not a bubble
    answer = chat.items[1]
    assert isinstance(answer, Bubble) and answer.text == "Looking.\n\nTwo files." and answer.tools == ["bash: ls"]
    assert isinstance(chat.items[2], Marker) and chat.items[2].kind == "error"


def test_live_events_stream_into_a_bubble_and_catch_up_never_draws_twice() -> None:
    chat = Transcript.from_history(HISTORY)
    assert chat.apply(event(3, "text_delta", text="old")) == []  # the history already held it
    chat.apply(event(4, "user_message", message_id="u2", text="and now?"))
    first = chat.apply(event(5, "text_delta", text="Now"))
    chat.apply(event(6, "text_delta", text=" this."))
    bubble = first[0]
    assert isinstance(bubble, Bubble) and bubble.text == "Now this." and bubble.streaming and chat.running
    chat.apply(event(7, "done", text="Now this."))
    chat.apply(event(8, "idle"))
    assert not bubble.streaming and not chat.running and chat.after == 8
    assert chat.apply(event(6, "text_delta", text=" again")) == [] and bubble.text == "Now this."


def test_a_question_is_answered_by_whoever_was_first_and_later_words_go_below_it() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": []})
    chat.apply(event(4, "text_delta", text="Cleaning up."))
    chat.apply(
        event(5, "permission_request", id="q1", tool_use_id="t", tool="bash", preview="rm -rf build", level="dangerous")
    )
    assert [q.key for q in chat.waiting()] == ["q1"]
    changed = chat.apply(event(6, "permission_answered", question_id="q1", decision="deny", by="Pixel"))
    question = changed[0]
    assert isinstance(question, Question) and (question.decision, question.by) == ("deny", "Pixel")
    assert chat.waiting() == []
    chat.apply(event(7, "text_delta", text="Left it."))
    assert [type(i).__name__ for i in chat.items] == ["Bubble", "Question", "Bubble"]


def test_a_question_answered_before_a_reload_is_drawn_answered_where_it_was_asked() -> None:
    approval = {
        "id": "n0",
        "role": "app",
        "kind": "approval",
        "text": "ls",
        "detail": {"question": "q1", "tool_use_id": "t", "tool": "bash", "level": "read_only", "decision": "allow_once",
                   "by": "Pixel", "closed": "", "categories": "", "effect": ""},
    }  # fmt: skip
    messages = HISTORY["messages"]
    chat = Transcript.from_history({**HISTORY, "messages": [*messages[:3], approval, *messages[3:4]]})
    assert [type(i).__name__ for i in chat.items] == ["Bubble", "Bubble", "Question", "Bubble"]  # as it was live
    question = chat.items[2]
    assert isinstance(question, Question) and (question.key, question.preview) == ("q1", "ls")
    assert (question.decision, question.by, question.declined) == ("allow_once", "Pixel", "")
    assert chat.waiting() == []  # answered: nothing to ask again


def test_a_no_nobody_gave_is_said_as_such() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": []})
    for n, (qid, why) in enumerate((("q1", "expired"), ("q2", "unattended"), ("q3", "stopped"))):
        chat.apply(
            event(4 + 2 * n, "permission_request", id=qid, tool_use_id=qid, tool="bash", preview="make", level="x")
        )
        answered = {why: True, "by": "orkas run" if why == "unattended" else ""}
        (question,) = chat.apply(event(5 + 2 * n, "permission_answered", question_id=qid, decision="deny", **answered))
        assert isinstance(question, Question) and question.declined == why and question.decision == "deny"
        assert Words("en")(f"declined_{why}").startswith("Declined: ")  # each said in words


def test_a_stop_closes_the_bubble_and_says_so() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": []})
    chat.apply(event(4, "text_delta", text="Once upon"))
    changed = chat.apply(event(5, "error", kind="aborted", message="Stopped"))
    assert isinstance(changed[-1], Marker) and changed[-1].kind == "stopped"
    assert not any(isinstance(i, Bubble) and i.streaming for i in chat.items)


def test_a_group_shows_each_agent_in_its_own_bubble_and_the_floor() -> None:
    history = {
        "id": "g1",
        "after": 2,
        "running": True,
        "messages": [],
        "group": [
            {"id": "m1", "from": "user", "text": "@coder fix it", "seg": 0},
            {"id": "m2", "from": "commander", "text": "", "seg": 0, "dispatch": "fix", "to": ["coder"]},
        ],
    }
    chat = Transcript.from_history(history)
    assert [(type(i).__name__, getattr(i, "who", "")) for i in chat.items] == [("Bubble", "user"), ("Marker", "")]
    chat.apply(event(3, "text_delta", actor="coder", text="On it."))
    chat.apply(event(4, "text_delta", actor="commander", text="Waiting."))
    chat.apply(event(5, "text_delta", actor="coder", text=" Done."))
    chat.apply(event(6, "state_changed", floor="coder", floor_source="mention", open_tasks=0))
    bubbles = {i.who: i.text for i in chat.items if isinstance(i, Bubble) and i.who != "user"}
    assert bubbles == {"coder": "On it. Done.", "assistant": "Waiting."} and chat.floor == "coder"
    chat.apply(event(7, "turn_end", ok=True, aborted=False, floor="coder"))
    assert not chat.running and not any(isinstance(i, Bubble) and i.streaming for i in chat.items)


def test_every_memory_write_shows_as_remembered_live_and_in_the_history() -> None:
    saved = {"type": "tool_use", "id": "m1", "name": "memory", "input": {"action": "add", "text": "Likes tea."}}
    refused = {"type": "tool_use", "id": "m2", "name": "memory", "input": {"action": "add", "text": "Evil."}}
    history = {
        "id": "c1",
        "after": 1,
        "messages": [
            {"id": "a1", "role": "assistant", "content": [saved, refused]},
            {
                "id": "r1",
                "role": "user",
                "content": [
                    {"type": "tool_result", "tool_use_id": "m1", "content": []},
                    {"type": "tool_result", "tool_use_id": "m2", "content": [], "is_error": True},
                ],
            },
        ],
    }
    chat = Transcript.from_history(history)
    marks = [i for i in chat.items if isinstance(i, Marker)]
    assert [(m.kind, m.text, m.target) for m in marks] == [("remembered", "Likes tea.", "notes")]
    details = {"target": "profile", "action": "replace", "entry": "Prefers tea.", "replaced": "Likes coffee."}
    [live] = chat.apply(event(2, "tool_end", name="memory", details=details, is_error=False))
    assert isinstance(live, Marker) and live.kind == "remembered" and live.replaced == "Likes coffee."
    assert chat.apply(event(3, "tool_end", name="memory", details={"action": "list"}, is_error=False)) == []


def test_every_wire_type_is_drawn_or_left_to_the_desktop_on_purpose() -> None:
    """A new product event fails here until the phone draws it (or says why it does not), as the desktop's
    own check does for chat.js."""
    import re
    from pathlib import Path

    from orkas.adapter.wire import wire_types
    from orkas.phone import transcript

    source = Path(transcript.__file__).read_text(encoding="utf-8")
    drawn = set(re.findall(r"def _on_(\w+)\(", source))
    ignored = set(transcript.IGNORED)
    types = wire_types()
    assert not types - drawn - ignored, f"the phone neither draws nor ignores {sorted(types - drawn - ignored)}"
    assert not (drawn | ignored) - types, f"the phone handles events nobody sends: {sorted((drawn | ignored) - types)}"
    assert not drawn & ignored
    assert all(reason.strip() for reason in transcript.IGNORED.values())


def test_what_a_turn_can_say_beside_its_answer_reaches_the_phone() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": [], "after": 0})
    said = [
        event(1, "message_queued", message_id="q1", text="and the tests"),
        event(2, "retry", attempt=1, reason="overloaded", wait=1.0),
        event(3, "compaction", method="summary", tokens_before=9, tokens_after=3, messages_before=9, messages_after=3),
        event(4, "loop_warning", name="bash", count=3, stop_at=5),
        event(5, "warning", message="the model ignored an image"),
        event(6, "provider_fallback", reason="auth", failed="a/x", using="b/y", message="Moved to b/y."),
        event(7, "queued_dropped", message_ids=["q1"]),
        event(8, "message_not_sent", message_id="m2", text="hi", kind="no_provider", reason="no provider yet"),
        event(9, "user_message", message_id="q1", text="and the tests"),
    ]
    for e in said:
        chat.apply(e)
    queued = [i for i in chat.items if isinstance(i, Bubble)]
    assert [b.text for b in queued] == ["and the tests"]  # drawn once, when queued
    markers = [(m.kind, m.phrase, m.text) for m in chat.items if isinstance(m, Marker)]
    assert markers == [
        ("notice", "retrying", "overloaded"),
        ("notice", "compacted", ""),
        ("notice", "repeating", ""),
        ("notice", "", "the model ignored an image"),
        ("notice", "", "Moved to b/y."),
        ("notice", "queuedDropped", ""),
        ("error", "notSent", "no provider yet"),
    ]
    assert not chat.stale
    chat.apply(event(10, "history_changed"))
    assert chat.stale  # an edit elsewhere: the view reads the history again


def test_text_after_a_tool_call_starts_a_paragraph_of_its_own_live_and_in_the_history() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": []})
    chat.apply(event(4, "text_delta", text="Asking ghost."))
    chat.apply(event(5, "tool_start", id="t1", name="list_files", summary="."))
    chat.apply(event(6, "text_delta", text="Done"))
    (bubble,) = chat.apply(event(7, "text_delta", text="."))
    assert isinstance(bubble, Bubble) and bubble.text == "Asking ghost.\n\nDone."
    said = [
        {"id": "a1", "role": "assistant", "content": [{"type": "text", "text": "Asking ghost."},
                                                      {"type": "tool_use", "id": "t1", "name": "list_files"}]},
        {"id": "u2", "role": "user", "content": [{"type": "tool_result", "tool_use_id": "t1", "content": []}]},
        {"id": "a2", "role": "assistant", "content": [{"type": "text", "text": "Done."}]},
    ]  # fmt: skip
    history = Transcript.from_history({**HISTORY, "messages": said})
    assert [i.text for i in history.items if isinstance(i, Bubble)] == ["Asking ghost.\n\nDone."]


def test_a_group_bubble_the_person_stopped_reads_stopped_not_failed() -> None:
    history = {"id": "g1", "after": 2, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "tell me", "seg": 0},
        {"id": "m2", "from": "commander", "text": "Once upon", "seg": 0, "stopped": True},
    ]}  # fmt: skip
    chat = Transcript.from_history(history)
    bubble, marker = chat.items[1:]
    assert isinstance(bubble, Bubble) and bubble.text == "Once upon" and not bubble.failed
    assert isinstance(marker, Marker) and marker.kind == "stopped"


def shown(chat: Transcript) -> list[str]:
    """The transcript as a person reads it: who speaks and what, and the markers by kind."""
    return [f"{i.who}: {i.text}" if isinstance(i, Bubble) else f"[{i.kind}]" for i in chat.items]


def test_a_stopped_group_turn_says_stopped_once_with_no_empty_bubble_live_and_from_the_history() -> None:
    history = {"id": "g1", "after": 4, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "build it", "seg": 0},
        {"id": "m2", "from": "coder", "text": "Starting", "seg": 0, "stopped": True},
        {"id": "m3", "from": "commander", "text": "", "seg": 1, "stopped": True},  # the segment a Stop leaves
        {"id": "m4", "from": "user", "text": "again", "seg": 1},
        {"id": "m5", "from": "commander", "text": "", "seg": 1, "stopped": True},
    ]}  # fmt: skip
    chat = Transcript.from_history(history)
    assert shown(chat) == ["user: build it", "coder: Starting", "[stopped]", "user: again", "[stopped]"]
    chat.apply(event(5, "user_message", message_id="u3", text="once more"))
    chat.apply(event(6, "group_start", members=["coder"], floor="commander"))
    chat.apply(event(7, "text_delta", actor="coder", text="Going"))
    for seq, actor in ((8, "coder"), (9, "commander"), (10, "group")):
        chat.apply(event(seq, "error", actor=actor, kind="aborted", message="Stopped"))
    chat.apply(event(11, "turn_end", actor="group", ok=False, aborted=True, floor="commander"))
    assert shown(chat)[-3:] == ["user: once more", "coder: Going", "[stopped]"]
    assert not chat.running and not any(isinstance(i, Bubble) and i.streaming for i in chat.items)


def test_the_latest_failure_offers_retry_of_the_message_before_it_and_a_new_message_withdraws_it() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": HISTORY["messages"][:-1], "after": 0})
    first = chat.apply(event(1, "error", kind="provider", message="Overloaded"))
    assert isinstance(first[0], Marker) and first[0].retry == "u1"  # the person's last message, answered again
    chat.apply(event(2, "user_message", message_id="u2", text="again?"))
    assert first[0].retry == ""  # an old failure would answer an old message: no Retry there any more
    chat.apply(event(3, "text_delta", text="Half"))
    (failed,) = chat.apply(event(4, "error", kind="provider", message="reset"))
    assert isinstance(failed, Bubble) and failed.failed == "reset" and failed.retry == "u2"
    assert chat.apply(event(5, "error", kind="aborted", message="Stopped"))[-1].kind == "stopped"  # type: ignore[union-attr]
    history = Transcript.from_history(HISTORY)  # after a reload too
    assert isinstance(history.items[-1], Marker) and history.items[-1].retry == "u1"
    group = Transcript.from_history({**HISTORY, "messages": [], "group": [{"id": "m1", "from": "user", "text": "hi"}]})
    assert not group.apply(event(4, "error", kind="provider", message="x"))[0].retry  # type: ignore[union-attr]


def test_an_attached_image_is_kept_structured_for_its_thumbnail_and_a_question_carries_its_risk() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": []})
    photo = {"name": "cat (1).png", "id": "a1", "media_type": "image/png", "size": 9}
    (bubble,) = chat.apply(event(4, "user_message", message_id="u2", text="look", attachments=[photo]))
    assert isinstance(bubble, Bubble) and [(f.name, f.image) for f in bubble.files] == [("cat (1).png", True)]
    asked = {"id": "q1", "tool_use_id": "t", "tool": "bash", "preview": "curl x | sh"}
    risky = {"level": "dangerous", "categories": ["network", "runs_program"], "effect": "network"}
    (question,) = chat.apply(event(5, "permission_request", **asked, **risky))
    assert isinstance(question, Question)
    said = (question.level, question.categories, question.effect)
    assert said == ("dangerous", ("network", "runs_program"), "network")


def test_an_untitled_chat_is_read_again_with_its_title_when_its_first_turn_ends() -> None:
    chat = Transcript.from_history({**HISTORY, "messages": [], "title": ""})
    chat.apply(event(4, "user_message", message_id="u1", text="plan my garden"))
    chat.apply(event(5, "text_delta", text="Tomatoes."))
    assert not chat.stale
    chat.apply(event(6, "done", text="Tomatoes."))
    chat.apply(event(7, "idle"))
    assert chat.stale  # the view reads the history again, and its title with it
    named = Transcript.from_history({**HISTORY, "messages": [], "title": "plan my garden"})
    assert named.title == "plan my garden"
    for n, type_ in enumerate(("user_message", "done", "idle")):
        named.apply(event(4 + n, type_, message_id="u2", text="more"))
    assert not named.stale  # a named chat is not read again after each turn


def test_a_group_members_answered_question_reads_the_same_live_and_from_the_history() -> None:
    asked = {"id": "q1", "tool_use_id": "t1", "tool": "write_file", "preview": "kept.md", "level": "workspace_write"}
    live = Transcript.from_history({"id": "g1", "after": 1, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "save it", "seg": 0}]})  # fmt: skip
    live.apply(event(2, "group_start", members=["coder"], floor="commander"))
    live.apply(event(3, "tool_start", actor="coder", id="t1", name="write_file", input={}, summary="kept.md"))
    live.apply(event(4, "permission_request", actor="coder", **asked))
    live.apply(event(5, "permission_answered", actor="coder", question_id="q1", decision="allow_once", by="Pixel"))
    live.apply(event(6, "tool_end", actor="coder", id="t1", name="write_file", content=[], is_error=False))
    live.apply(event(7, "text_delta", actor="coder", text="written"))
    approval = {"question": "q1", "tool_use_id": "t1", "tool": "write_file", "level": "workspace_write",
                "decision": "allow_once", "by": "Pixel", "closed": "", "preview": "kept.md"}  # fmt: skip
    reloaded = Transcript.from_history({"id": "g1", "after": 9, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "save it", "seg": 0},
        {"id": "m2", "from": "coder", "text": "written", "seg": 0,
         "process": [{"tool": "write_file", "ok": True, "ms": 3, "approval": approval}]},
    ]})  # fmt: skip
    kinds = [type(i).__name__ for i in live.items]
    assert kinds == [type(i).__name__ for i in reloaded.items] == ["Bubble", "Bubble", "Question", "Bubble"]
    assert [getattr(i, "text", None) for i in reloaded.items] == [getattr(i, "text", None) for i in live.items]
    question = reloaded.items[2]
    assert isinstance(question, Question) and (question.key, question.preview, question.by) == (
        "q1",
        "kept.md",
        "Pixel",
    )
    assert question.decision == "allow_once" and reloaded.waiting() == []


def test_a_group_turn_on_the_phone_reads_in_the_same_order_live_as_after_a_reload() -> None:
    # Orkas speaks, asks the critic, the critic answers, Orkas sums up: its summary streamed into its first bubble,
    # above the critic's (and "dispatch_to: → critic" showed as a tool line beside the "Asked" card).
    asked = {"id": "m3", "from": "commander", "to": ["critic"], "dispatch": "review it", "seg": 1}
    live = Transcript.from_history({"id": "g1", "after": 1, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "review my plan", "seg": 0}]})  # fmt: skip
    live.apply(event(2, "group_start", members=["critic"], floor="commander"))
    live.apply(event(3, "text_delta", actor="commander", text="Let me ask the team."))
    call = {"id": "t1", "name": "dispatch_to", "input": {"to": "critic"}, "summary": "→ critic: review it"}
    live.apply(event(4, "tool_start", actor="commander", **call))
    live.apply(event(5, "group_message", actor="group", message=asked))
    live.apply(event(6, "text_delta", actor="critic", text="Looks fine."))
    live.apply(event(7, "done", actor="critic", text="Looks fine."))
    live.apply(event(8, "text_delta", actor="commander", text="Summary: fine."))
    reloaded = Transcript.from_history({"id": "g1", "after": 9, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "review my plan", "seg": 0},
        {"id": "m2", "from": "commander", "text": "Let me ask the team.", "seg": 0},
        asked,
        {"id": "m4", "from": "critic", "text": "Looks fine.", "seg": 1},
        {"id": "m5", "from": "commander", "text": "Summary: fine.", "seg": 1},
    ]})  # fmt: skip
    assert shown(live) == shown(reloaded)
    assert shown(live)[-2:] == ["critic: Looks fine.", "assistant: Summary: fine."]
    assert not any(isinstance(i, Bubble) and i.tools for i in live.items)  # the ask is its card, not a tool line


def test_a_spending_limit_reached_is_said_in_the_phones_words_live_and_from_the_history() -> None:
    # The engine's sentence names `orkas budget --day …`: a terminal command, meaningless on a phone.
    sentence = "the daily budget of $0.01 is reached ($0.04 spent today); raise it with `orkas budget --day …`"
    chat = Transcript.from_history({**HISTORY, "messages": []})
    (marker,) = chat.apply(event(4, "error", kind="budget", cause="per_day", message=sentence))
    assert isinstance(marker, Marker) and marker.phrase == "limit_per_day"
    note = {
        "id": "n9",
        "role": "app",
        "kind": "error",
        "text": sentence,
        "detail": {"error": "budget", "cause": "per_month"},
    }
    history = Transcript.from_history({**HISTORY, "messages": [note]})
    assert isinstance(history.items[0], Marker) and history.items[0].phrase == "limit_per_month"
    for lang in ("en", "zh", "pt"):
        said = Words(lang)("limit_per_day")
        assert "orkas budget" not in said and "`" not in said
    other = chat.apply(event(5, "error", kind="provider", cause="overloaded", message="Overloaded"))
    assert isinstance(other[0], Marker) and other[0].phrase == ""  # any other failure: its own sentence


def test_a_members_words_before_its_question_stay_above_it_after_a_reload() -> None:
    asked = {"id": "q1", "tool_use_id": "t1", "tool": "bash", "preview": "make test", "level": "runs_program"}
    live = Transcript.from_history({"id": "g1", "after": 1, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "test it", "seg": 0}]})  # fmt: skip
    live.apply(event(2, "group_start", members=["builder"], floor="commander"))
    live.apply(event(3, "text_delta", actor="builder", text="I need to run a command."))
    live.apply(event(4, "tool_start", actor="builder", id="t1", name="bash", input={}, summary="make test"))
    live.apply(event(5, "permission_request", actor="builder", **asked))
    live.apply(event(6, "permission_answered", actor="builder", question_id="q1", decision="allow_once"))
    live.apply(event(7, "text_delta", actor="builder", text="It passed."))
    approval = {"question": "q1", "tool_use_id": "t1", "tool": "bash", "decision": "allow_once", "preview": "make test"}
    before = "I need to run a command.\n\n"
    step = {"tool": "bash", "ok": True, "ms": 90, "summary": "make test", "at": len(before), "approval": approval}
    reloaded = Transcript.from_history({"id": "g1", "after": 9, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "test it", "seg": 0},
        {"id": "m2", "from": "builder", "text": before + "It passed.", "seg": 0, "process": [step]},
    ]})  # fmt: skip

    def read(chat: Transcript) -> list[str]:
        return [f"{i.who}: {i.text}" if isinstance(i, Bubble) else f"? {i.key}" for i in chat.items]

    assert (
        read(live)
        == read(reloaded)
        == ["user: test it", "builder: I need to run a command.", "? q1", "builder: It passed."]
    )


def test_a_group_bubble_stopped_by_a_spending_limit_says_it_in_the_phones_words_live_and_after_a_reload() -> None:
    sentence = "the daily budget of $0.10 is reached; raise it with `orkas budget --day …`"
    live = Transcript.from_history({"id": "g1", "after": 1, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "go", "seg": 0}]})  # fmt: skip
    live.apply(event(2, "group_start", members=["critic"], floor="commander"))
    live.apply(event(3, "text_delta", actor="commander", text="Asking."))
    (bubble,) = live.apply(event(4, "error", actor="commander", kind="budget", cause="per_day", message=sentence))
    assert isinstance(bubble, Bubble) and bubble.failed_phrase == "limit_per_day"
    failed = {"id": "m2", "from": "commander", "text": "Asking.", "seg": 0, "failure": sentence,
              "extra": {"error": "budget", "cause": "per_day"}}  # fmt: skip
    reloaded = Transcript.from_history({"id": "g1", "after": 9, "running": False, "messages": [], "group": [
        {"id": "m1", "from": "user", "text": "go", "seg": 0}, failed]})  # fmt: skip
    assert isinstance(reloaded.items[-1], Bubble) and reloaded.items[-1].failed_phrase == "limit_per_day"
