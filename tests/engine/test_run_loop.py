"""The run loop through its public entry points, with an in-process scripted provider."""

from __future__ import annotations

from pathlib import Path

import pytest

from orkas.engine.events import Done, Error, TextDelta, ToolEnd, ToolProgress, ToolStart, UsageUpdate
from orkas.engine.messages import (
    AssistantMessage,
    ImageBlock,
    TextBlock,
    ToolResultBlock,
    Usage,
    UserMessage,
)
from orkas.engine.prompt import SystemPrompt
from orkas.engine.providers.base import INVALID_INPUT_KEY, Capabilities
from orkas.engine.providers.registry import ProviderRegistry
from orkas.engine.runner import Agent, RunConfig
from orkas.engine.session import InMemorySession
from orkas.engine.tools.files import ListFiles, ReadFile
from tests.engine.helpers import collect, make_agent, types
from tests.engine.tools_for_tests import Crashes, Echo, Fails, Picture
from tests.fakes.scripted import ScriptedProvider, text, tool_call, tool_calls


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "notes.txt").write_text("alpha\nbeta\ngamma\n")
    return tmp_path


def results_of(message: UserMessage) -> list[ToolResultBlock]:
    return [b for b in message.content if isinstance(b, ToolResultBlock)]


async def test_text_only_turn(workspace: Path) -> None:
    provider = ScriptedProvider(text("Hi there."))
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace), "hello", session=session)

    assert types(events) == ["run_start", "text_delta", "usage", "done"]
    done = events[-1]
    assert isinstance(done, Done)
    assert done.text == "Hi there." and done.stop_reason == "end_turn" and done.tool_loops == 0
    assert done.usage == Usage(input_tokens=10, output_tokens=5)
    user, reply = session.messages()
    assert isinstance(user, UserMessage) and user.content == (TextBlock(text="hello"),)
    assert isinstance(reply, AssistantMessage) and (reply.provider, reply.model) == (
        "scripted",
        "scripted-model",
    )
    provider.verify()


async def test_run_to_end_drains_the_same_generator(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("echo", {"text": "x"}), text("done"))
    result = await make_agent(provider, workspace, tools=[Echo()]).run_to_end("go", session=InMemorySession())
    assert result.text == "done" and result.error is None and result.done is not None
    assert result.done.tool_loops == 1
    provider.verify()


async def test_one_tool_round_trip_reads_a_real_file(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("read_file", {"path": "notes.txt"}, id="t1"), text("It says alpha."))
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace, tools=[ReadFile(), ListFiles()]), session=session)

    assert types(events) == ["run_start", "usage", "tool_start", "tool_end", "text_delta", "usage", "done"]
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert not end.is_error and "1\talpha" in end.content[0].text  # type: ignore[union-attr]
    assert end.details is not None and len(end.details["sha256"]) == 64
    # The second request carries the result right after the call.
    second = provider.requests[1].messages
    assert isinstance(second[-1], UserMessage) and results_of(second[-1])[0].tool_use_id == "t1"
    assert isinstance(events[-1], Done) and events[-1].tool_loops == 1
    provider.verify()


async def test_several_tools_answer_in_declared_order(workspace: Path) -> None:
    echo = Echo()
    provider = ScriptedProvider(
        tool_calls([("echo", {"text": "a"}, "c1"), ("fails", {}, "c2"), ("echo", {"text": "b", "times": 2}, "c3")]),
        text("ok"),
    )
    session = InMemorySession()
    await collect(make_agent(provider, workspace, tools=[echo, Fails()]), session=session)
    results = results_of(session.messages()[2])  # type: ignore[arg-type]
    assert [r.tool_use_id for r in results] == ["c1", "c2", "c3"]
    assert [r.is_error for r in results] == [False, True, False]
    assert results[2].content == (TextBlock(text="bb"),)
    assert echo.calls == [{"text": "a"}, {"text": "b", "times": 2}]
    provider.verify()


async def test_tool_error_result_lets_the_model_recover(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("fails", {}), text("I will try something else."))
    events = await collect(make_agent(provider, workspace, tools=[Fails()]))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "does not exist" in end.content[0].text  # type: ignore[union-attr]
    assert isinstance(events[-1], Done)
    provider.verify()


async def test_exception_inside_a_tool_becomes_an_error_result(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("crashes", {}), text("recovered"))
    events = await collect(make_agent(provider, workspace, tools=[Crashes()]))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "ZeroDivisionError" in end.content[0].text  # type: ignore[union-attr]
    assert isinstance(events[-1], Done) and events[-1].text == "recovered"
    provider.verify()


async def test_a_tool_exception_is_logged_by_type_and_frames_never_its_message(
    workspace: Path, caplog: pytest.LogCaptureFixture
) -> None:
    # A command tool's exception may quote the command (or a key in it): the model gets the message,
    # the log gets what a developer needs to find the bug.
    provider = ScriptedProvider(tool_call("crashes", {"command": "curl -H 'X-Key: hunter2-secret'"}), text("ok"))
    with caplog.at_level("INFO", logger="orkas.engine.tool_runner"):
        events = await collect(make_agent(provider, workspace, tools=[Crashes()]))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert "hunter2-secret" in end.content[0].text  # type: ignore[union-attr]
    logged = "\n".join(r.getMessage() for r in caplog.records)
    assert "tool crashes raised ZeroDivisionError" in logged and "tools_for_tests.py" in logged
    assert "hunter2-secret" not in logged
    assert "tool crashes failed in" in logged


async def test_invalid_input_is_rejected_before_the_tool_runs(workspace: Path) -> None:
    echo = Echo()
    provider = ScriptedProvider(tool_call("echo", {"txt": 3}), text("oops"))
    events = await collect(make_agent(provider, workspace, tools=[echo]))
    end = next(e for e in events if isinstance(e, ToolEnd))
    message = end.content[0].text  # type: ignore[union-attr]
    assert end.is_error and "'text' is a required property" in message and "txt" in message
    assert echo.calls == []
    provider.verify()


async def test_unparseable_tool_json_becomes_an_error_result(workspace: Path) -> None:
    echo = Echo()
    provider = ScriptedProvider(tool_call("echo", {INVALID_INPUT_KEY: '{"text": "unterminated'}), text("ok"))
    events = await collect(make_agent(provider, workspace, tools=[echo]))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error and "not valid JSON" in end.content[0].text  # type: ignore[union-attr]
    assert echo.calls == []
    provider.verify()


async def test_unknown_tool_names_the_available_ones(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("delete_everything", {}), text("fine"))
    events = await collect(make_agent(provider, workspace, tools=[Echo(), Fails()]))
    end = next(e for e in events if isinstance(e, ToolEnd))
    assert end.is_error
    assert "unknown tool 'delete_everything'; available tools: echo, fails" in end.content[0].text  # type: ignore[union-attr]
    provider.verify()


async def test_max_tool_loops_stops_cleanly_with_a_summary(workspace: Path) -> None:
    echo = Echo()
    provider = ScriptedProvider(
        tool_call("echo", {"text": "1"}),
        tool_call("echo", {"text": "2"}),
        tool_call("echo", {"text": "3"}, id="over"),
        text("I did two rounds; one remains."),
    )
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace, tools=[echo], max_tool_loops=2), session=session)
    done = events[-1]
    assert isinstance(done, Done)
    assert done.stop_reason == "max_tool_loops" and done.tool_loops == 2
    assert done.text == "I did two rounds; one remains."
    assert [c["text"] for c in echo.calls] == ["1", "2"]  # the third call never ran
    final_request = provider.requests[-1]
    assert final_request.tool_choice == "none"
    note = final_request.messages[-1]
    assert isinstance(note, UserMessage)
    assert results_of(note)[0].tool_use_id == "over" and results_of(note)[0].is_error
    assert "limit of 2 tool rounds" in note.content[-1].text  # type: ignore[union-attr]
    provider.verify()


async def test_a_model_that_ignores_the_limit_still_gets_a_clean_stop(workspace: Path) -> None:
    provider = ScriptedProvider(
        tool_call("echo", {"text": "1"}), tool_call("echo", {"text": "2"}), tool_call("echo", {"text": "3"})
    )
    session = InMemorySession()
    events = await collect(make_agent(provider, workspace, tools=[Echo()], max_tool_loops=1), session=session)
    done = events[-1]
    assert isinstance(done, Done) and done.stop_reason == "max_tool_loops"
    assert "limit" in done.text
    last = session.messages()[-1]
    assert isinstance(last, UserMessage) and results_of(last)  # every call answered
    provider.verify()


async def test_tool_progress_events_flow_while_the_tool_runs(workspace: Path) -> None:
    from tests.engine.tools_for_tests import Slow

    slow = Slow()
    slow.release.set()
    provider = ScriptedProvider(tool_call("slow", {}), text("ok"))
    events = await collect(make_agent(provider, workspace, tools=[slow]))
    kinds = types(events)
    assert kinds.index("tool_start") < kinds.index("tool_progress") < kinds.index("tool_end")
    assert next(e for e in events if isinstance(e, ToolProgress)).message == "working"
    provider.verify()


async def test_images_move_out_of_tool_results_for_providers_that_cannot_take_them(workspace: Path) -> None:
    provider = ScriptedProvider(
        tool_call("picture", {}, id="p1"),
        text("a red pixel"),
        capabilities=Capabilities(images=True, images_in_tool_results=False),
    )
    session = InMemorySession()
    await collect(make_agent(provider, workspace, tools=[Picture()]), session=session)
    # The history keeps the truth: the image is inside the tool result ...
    stored = results_of(session.messages()[2])[0]  # type: ignore[arg-type]
    assert any(isinstance(c, ImageBlock) for c in stored.content)
    # ... and the provider got it as user content right after the result.
    sent = provider.requests[1].messages[-1]
    assert isinstance(sent, UserMessage)
    result = results_of(sent)[0]
    assert not any(isinstance(c, ImageBlock) for c in result.content)
    assert sent.content[0] is result or sent.content[0] == result
    assert isinstance(sent.content[-1], ImageBlock)
    provider.verify()


async def test_images_stay_in_tool_results_when_the_provider_supports_it(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("picture", {}), text("ok"))
    await collect(make_agent(provider, workspace, tools=[Picture()]))
    sent = provider.requests[1].messages[-1]
    assert isinstance(sent, UserMessage) and len(sent.content) == 1
    assert any(isinstance(c, ImageBlock) for c in results_of(sent)[0].content)
    provider.verify()


async def test_user_images_reach_the_provider(workspace: Path) -> None:
    from tests.engine.tools_for_tests import PNG_1PX

    provider = ScriptedProvider(text("I see a pixel."))
    message = UserMessage(content=(TextBlock(text="what is this?"), ImageBlock(data=PNG_1PX, media_type="image/png")))
    agent = make_agent(provider, workspace)
    result = await agent.run_to_end(message, session=InMemorySession())
    assert result.text == "I see a pixel."
    assert provider.requests[0].messages[0] == message
    provider.verify()


async def test_system_prompt_lists_tools_and_hook_sections(workspace: Path) -> None:
    provider = ScriptedProvider(text("ok"))
    agent = Agent(
        providers=ProviderRegistry({"scripted": provider}),
        config=RunConfig(model="scripted/m"),
        workspace=workspace,
        tools=[ReadFile(), ListFiles()],
        system_prompt=SystemPrompt(hooks=[lambda: "## Pinned memory\nThe user likes tea.", lambda: None]),
    )
    await agent.run_to_end("hi", session=InMemorySession())
    request = provider.requests[0]
    assert "- read_file:" in request.system and "- list_files:" in request.system
    assert request.system.endswith("## Pinned memory\nThe user likes tea.")
    assert [t.name for t in request.tools] == ["read_file", "list_files"]
    assert request.model == "m"
    provider.verify()


async def test_usage_accumulates_across_rounds(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("echo", {"text": "x"}), text("ok"))
    events = await collect(make_agent(provider, workspace, tools=[Echo()]))
    updates = [e for e in events if isinstance(e, UsageUpdate)]
    assert [u.total.input_tokens for u in updates] == [10, 20]
    assert isinstance(events[-1], Done) and events[-1].usage.output_tokens == 10
    assert events[-1].timings.total >= events[-1].timings.provider > 0


async def test_tool_start_carries_the_input(workspace: Path) -> None:
    provider = ScriptedProvider(tool_call("echo", {"text": "hey"}, id="e1"), text("ok"))
    events = await collect(make_agent(provider, workspace, tools=[Echo()]))
    start = next(e for e in events if isinstance(e, ToolStart))
    assert (start.id, start.name, dict(start.input)) == ("e1", "echo", {"text": "hey"})


async def test_text_deltas_add_up_to_the_final_text(workspace: Path) -> None:
    provider = ScriptedProvider(text("one two three"))
    events = await collect(make_agent(provider, workspace))
    assert "".join(e.text for e in events if isinstance(e, TextDelta)) == "one two three"


async def test_unexpected_provider_exception_is_an_internal_error_event(workspace: Path) -> None:
    provider = ScriptedProvider()  # no steps: the call itself is a bug
    events = await collect(make_agent(provider, workspace))
    error = events[-1]
    assert isinstance(error, Error) and error.kind == "internal"
    assert "unexpected model call" in error.message
    assert provider.violations  # and the fake says so loudly
