"""What every view of a group is given: members asked together in the order they were asked (as the live view
showed them), and a member's hand-back marker never streamed out as text."""

from __future__ import annotations

from orkas.engine.events import Done, TextDelta
from orkas.engine.messages import Usage
from orkas.team.bus import in_asked_order
from orkas.team.handback import StreamScrub


def rec(sender: str, text: str = "", **fields: object) -> dict[str, object]:
    return {"from": sender, "text": text, **fields}


def test_answers_to_asks_made_together_follow_the_asks_not_who_finished_first() -> None:
    records = [
        rec("user", "build and review"),
        rec("commander", "Asking both."),
        rec("commander", dispatch="write it", to=["coder"]),
        rec("commander", dispatch="review it", to=["critic"]),
        rec("critic", "review written"),  # the critic was quicker
        rec("coder", "code written"),
        rec("commander", "Both are done."),
        rec("user", "again, one by one"),
        rec("commander", dispatch="review", to=["critic"]),
        rec("critic", "second review"),
        rec("commander", dispatch="fix", to=["coder"]),
        rec("coder", "fixed"),
    ]
    texts = [r["text"] or r.get("dispatch") for r in in_asked_order(records)]
    assert texts == [
        "build and review", "Asking both.", "write it", "review it", "code written", "review written",
        "Both are done.", "again, one by one", "review", "second review", "fix", "fixed",
    ]  # fmt: skip


def test_a_stop_written_before_the_answers_it_stopped_does_not_reorder_them() -> None:
    records = [
        rec("user", "do a and b"),
        rec("commander", dispatch="a", to=["coder"]),
        rec("commander", dispatch="b", to=["critic"]),
        rec("critic", "half of b", stopped=True),
        rec("commander", "", stopped=True),  # the commander's run ended first, between its members' ends
        rec("coder", "half of a", stopped=True),
        rec("user", "again"),
    ]
    texts = [r["text"] or r.get("dispatch") or "" for r in in_asked_order(records)]
    assert texts == ["do a and b", "a", "b", "half of a", "half of b", "", "again"]


def test_a_hand_back_marker_split_anywhere_across_deltas_never_streams_out() -> None:
    said = 'Half is 1/2 <b>ok</b> a < b. <handback reason="completed_handoff" />'
    for first in range(len(said)):
        for second in range(first, len(said)):
            scrub = StreamScrub()
            parts = [said[:first], said[first:second], said[second:]]
            out = [e for part in parts for e in scrub.events(TextDelta(text=part))]
            out += scrub.events(Done(text=said, stop_reason="end_turn", usage=Usage(), tool_loops=0))
            streamed = "".join(e.text for e in out if isinstance(e, TextDelta))
            assert streamed == "Half is 1/2 <b>ok</b> a < b. ", (first, second, streamed)
            assert isinstance(out[-1], Done) and out[-1].text == "Half is 1/2 <b>ok</b> a < b."


def test_text_that_only_looks_like_the_start_of_a_marker_is_sent_at_the_end() -> None:
    scrub = StreamScrub()
    assert scrub.text("see <hand") == "see "
    assert [e.text for e in scrub.events(Done(text="", stop_reason="end_turn", usage=Usage(), tool_loops=0))[:1]] == [
        "<hand"
    ]
