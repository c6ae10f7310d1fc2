"""AGENT.md files: parsed strictly, written back the same, a broken one reported by name."""

from __future__ import annotations

from pathlib import Path

import pytest

from orkas.core.errors import ConfigError
from orkas.team.agents import PALETTE, AgentSpec, AgentStore, look, parse, render

GOOD = """---
name: tutor
description: Explains step by step.
model: anthropic/claude-sonnet-4-5
tools: [read_file, grep_files]
interactive: true
color: "#3a7"
---
You are a patient tutor.
"""


def test_a_hand_written_file_parses_and_round_trips() -> None:
    spec = parse(GOOD, folder_name="tutor")
    assert spec == AgentSpec(
        name="tutor",
        description="Explains step by step.",
        prompt="You are a patient tutor.",
        model="anthropic/claude-sonnet-4-5",
        tools=("read_file", "grep_files"),
        interactive=True,
        color="#3a7",
    )
    assert parse(render(spec), folder_name="tutor") == spec


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("no frontmatter", "must start with a --- frontmatter block"),
        ("---\nname: tutor\n", "not closed"),
        ("---\nname: [unclosed\n---\nbody", "not valid YAML"),
        ("---\n- a list\n---\nbody", "table of fields"),
        ("---\nname: other\ndescription: d\n---\nbody", "differs from its folder"),
        ("---\nname: tutor\n---\nbody", "description is required"),
        ("---\nname: tutor\ndescription: d\n---\n   \n", "body"),
        ("---\nname: tutor\ndescription: d\nmodel: claude sonnet\n---\nbody", "provider/model"),
        ("---\nname: tutor\ndescription: d\ntools: 3\n---\nbody", "list of tool names"),
        ("---\nname: tutor\ndescription: d\ninteractive: maybe\n---\nbody", "true or false"),
        ("---\nname: Tutor\ndescription: d\n---\nbody", "lowercase"),
    ],
)
def test_a_broken_file_says_what_is_wrong(text: str, problem: str) -> None:
    with pytest.raises(ConfigError, match=problem):
        parse(text, folder_name="tutor")


def test_one_broken_agent_never_hides_the_others(tmp_path: Path) -> None:
    store = AgentStore(tmp_path / "agents")
    store.add(AgentSpec(name="coder", description="writes code", prompt="Code."))
    (tmp_path / "agents" / "broken").mkdir()
    (tmp_path / "agents" / "broken" / "AGENT.md").write_bytes(b"\xff\xfe not text")
    (tmp_path / "agents" / "empty").mkdir()
    loaded = store.load()
    assert list(loaded.agents) == ["coder"]
    assert set(loaded.problems) == {"broken", "empty"} and "no AGENT.md" in loaded.problems["empty"]
    with pytest.raises(ConfigError, match="cannot be used"):
        store.get("broken")
    with pytest.raises(ConfigError, match="no agent 'ghost'; agents: coder"):
        store.get("ghost")


@pytest.mark.parametrize("name", ["user", "commander", "../etc", "a" * 33, "-x", ""])
def test_names_that_would_be_confused_or_escape_are_refused(tmp_path: Path, name: str) -> None:
    with pytest.raises(ConfigError):
        AgentStore(tmp_path).add(AgentSpec(name=name, description="d", prompt="p"))
    assert not any(tmp_path.rglob("AGENT.md"))


@pytest.mark.parametrize("color", ["red", "#12345", "#ggg", "3a7", "#3a7; x", 7, ["#3a7"]])
def test_a_colour_that_is_not_hex_is_refused_in_a_file_and_from_the_form(tmp_path: Path, color: object) -> None:
    text = f"---\nname: tutor\ndescription: d\ncolor: {color!r}\n---\nbody"
    with pytest.raises(ConfigError, match="color must be #rgb or #rrggbb"):
        parse(text, folder_name="tutor")
    with pytest.raises(ConfigError, match="color must be"):
        AgentStore(tmp_path).add(AgentSpec(name="tutor", description="d", prompt="p", color=str(color)))
    assert not any(tmp_path.rglob("AGENT.md"))


def test_a_chosen_colour_is_kept_as_written_and_drawn_in_full() -> None:
    spec = parse("---\nname: tutor\ndescription: d\ncolor: '#3A7'\n---\nbody", folder_name="tutor")
    assert spec.color == "#3A7" and parse(render(spec), folder_name="tutor") == spec
    assert spec.public()["look"] == {"color": "#33aa77", "ink": "#000000", "initial": "T"}
    assert look("tutor", "#1c1d21")["ink"] == "#ffffff"  # the initial reads on a dark colour too


def test_an_agent_without_a_colour_gets_one_from_its_name_the_same_everywhere() -> None:
    # Pinned values: a stable hash (not Python's per-process one), so no agent changes colour between launches.
    assert look("coder") == {"color": "#0f766e", "ink": "#ffffff", "initial": "C"}
    assert look("tutor")["color"] == "#7c3aed"
    names = [f"agent-{i}" for i in range(200)]
    assert {look(name)["color"] for name in names} == set(PALETTE)  # every colour of the palette is used
    assert AgentSpec(name="coder", description="d", prompt="p").public()["color"] is None  # derived: not written
