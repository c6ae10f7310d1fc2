"""The wire, both ways: every event type the stream can carry comes back from its wire form equal to what went
out — so the event log on disk gives a restarted server the same typed events it published."""

from __future__ import annotations

import dataclasses
import types
import typing
from typing import Any

import pytest

from orkas.adapter.wire import ProductEvent, ProductOnly, UnknownEvent, from_wire, to_wire, type_of, wire_types
from orkas.engine.events import Event


def sample(hint: Any, depth: int = 0) -> Any:
    """A value of the annotated type, with something in every nested part."""
    origin = typing.get_origin(hint)
    if hint is str:
        return "x"
    if hint is bool:
        return True
    if hint is int:
        return 3
    if hint is float:
        return 1.5
    if origin is typing.Literal:
        return typing.get_args(hint)[0]
    if dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        fields = {f.name: sample(hints[f.name], depth + 1) for f in dataclasses.fields(hint) if f.name != "type"}
        return hint(**fields)  # type: ignore[operator]
    if origin is tuple:
        return (sample(typing.get_args(hint)[0], depth + 1),)
    if origin in (typing.Union, types.UnionType):
        members = [a for a in typing.get_args(hint) if a is not type(None)]
        return sample(members[-1], depth + 1)  # the last: an image block, not always the first text
    if hint is Any or origin in (dict, typing.Mapping) or str(origin) == "<class 'collections.abc.Mapping'>":
        return {"k": "v", "n": [1, 2]}
    raise AssertionError(f"no sample for {hint!r}")


EVENTS: list[ProductEvent] = [sample(cls) for cls in (*typing.get_args(ProductOnly), *typing.get_args(Event))]


def test_every_type_has_a_sample() -> None:
    assert {e.type for e in EVENTS} == wire_types()


@pytest.mark.parametrize("event", EVENTS, ids=lambda e: e.type)
def test_an_event_comes_back_from_its_wire_form(event: ProductEvent) -> None:
    wire = to_wire("c1", 7, event, "coder")
    assert from_wire(wire) == ("c1", 7, event, "coder")
    assert wire["type"] == type_of(type(event)) and wire["v"] >= 2


def test_a_type_from_a_newer_version_is_said_not_guessed() -> None:
    with pytest.raises(UnknownEvent):
        from_wire({"v": 9, "seq": 1, "conversation": "c1", "type": "hologram"})


@pytest.mark.parametrize("cls", [*typing.get_args(ProductOnly), *typing.get_args(Event)], ids=lambda c: c.__name__)
def test_each_event_spells_its_type_once_as_the_field_s_default(cls: type) -> None:
    """`type_of` reads the field's default (cheap at start); the Literal annotation must say the same."""
    assert typing.get_type_hints(cls)["type"].__args__ == (type_of(cls),)
