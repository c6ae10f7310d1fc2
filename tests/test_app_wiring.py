"""The composition root: an agent in a conversation's default workspace (inside the data folder) works,
and the data folder's private parts stay out of its reach."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from orkas.adapter.conversations.attachments import AttachmentStore
from orkas.adapter.conversations.store import ConversationStore
from orkas.adapter.settings.store import Preferences, ProductSettings, SettingsStore
from orkas.app import AgentProfile, Configured, build_agent, protected_data, settings_from_env
from orkas.engine.sandbox import PathDenied, PathPolicy


def test_the_private_parts_of_the_data_folder_are_protected_even_before_they_exist(tmp_path: Path) -> None:
    data = tmp_path / "data"
    (data / "memory").mkdir(parents=True)  # something a later version adds
    names = {p.name for p in protected_data(data)}
    assert {"vault.bin", "vault.key", "settings.json", "conversations", "sessions", "memory"} <= names
    assert {"workspaces", "attachments"} <= names  # a conversation owns only its own folders in them


def test_an_agent_works_in_a_default_workspace_and_reads_attachments_not_secrets(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = settings_from_env({"ORKAS_HOME": str(data), "ANTHROPIC_API_KEY": "sk-test"})
    chat = ConversationStore(data).create()
    attachment = AttachmentStore(data).add_bytes(chat, "notes.txt", b"hi")
    (data / "settings.json").write_text("{}")
    folder = AttachmentStore(data).folder(chat.id)
    own = (*ConversationStore(data).own(chat), folder)
    agent = build_agent(settings, AgentProfile(chat.workspace_path, granted=[folder], own=own))
    assert agent.workspace == chat.workspace_path.resolve()
    policy = PathPolicy(chat.workspace, granted=[folder], protected=protected_data(data), own=own)
    assert policy.check(attachment.path, write=False) == Path(attachment.path).resolve()
    for secret in ("settings.json", "vault.bin", "conversations"):
        with pytest.raises(PathDenied):
            policy.check(data / secret, write=False)
    other = ConversationStore(data).create()
    theirs = AttachmentStore(data).add_bytes(other, "theirs.txt", b"not yours")
    with pytest.raises(PathDenied):  # another conversation's workspace is not this one's
        policy.check(Path(other.workspace) / "x.txt", write=True)
    with pytest.raises(PathDenied):  # nor its attachments
        policy.check(theirs.path, write=False)
    with pytest.raises(PathDenied):  # nor may the attachments folder as a whole be granted
        policy.grant(data / "attachments")
    with pytest.raises(PathDenied):  # without being named as its own, a default workspace is protected
        PathPolicy(chat.workspace, protected=protected_data(data))


def test_the_preferred_default_model_is_used(tmp_path: Path) -> None:
    data = tmp_path / "data"
    settings = settings_from_env({"ORKAS_HOME": str(data), "ANTHROPIC_API_KEY": "sk-test"})
    workspace = tmp_path / "w"
    workspace.mkdir()
    configured = Configured(product=ProductSettings(preferences=Preferences(default_model="anthropic/claude-opus-4")))
    agent = build_agent(settings, AgentProfile(workspace, configured=configured))
    assert agent.config.model == "anthropic/claude-opus-4"
    SettingsStore(data / "settings.json").save(configured.product)
    assert json.loads((data / "settings.json").read_text())["preferences"]["default_model"] == "anthropic/claude-opus-4"


def test_every_built_in_tool_schema_is_a_valid_json_schema(tmp_path: Path) -> None:
    """ToolSet compiles a schema at a tool's first call (to keep jsonschema off the start path): every
    schema we ship is checked here instead, so none can fail in front of a person."""
    import jsonschema

    from orkas.engine.memory.kb import KnowledgeBase

    data = tmp_path / "data"
    settings = settings_from_env({"ORKAS_HOME": str(data), "ANTHROPIC_API_KEY": "sk-test"})
    workspace = tmp_path / "w"
    workspace.mkdir()
    kb = KnowledgeBase.in_memory(embedder=None)
    remembering = Configured(product=ProductSettings(preferences=Preferences(memory=True)))
    agent = build_agent(settings, AgentProfile(workspace, knowledge=kb, past_conversations=kb, configured=remembering))
    assert {"bash", "read_file", "memory", "kb_search", "chat_search", "web_fetch"} <= set(agent.tools.names)
    for name in agent.tools.names:
        schema = agent.tools.get(name).input_schema  # type: ignore[union-attr]
        jsonschema.validators.validator_for(schema).check_schema(dict(schema))


def test_the_group_caps_come_from_the_environment_or_say_what_is_wrong() -> None:
    import pytest

    from orkas.app import settings_from_env
    from orkas.core.errors import ConfigError

    assert settings_from_env({}).max_dispatch == 4 and settings_from_env({}).max_model_calls == 10
    assert settings_from_env({"ORKAS_MAX_DISPATCH": "2", "ORKAS_MAX_MODEL_CALLS": "3"}).max_dispatch == 2
    for bad in ("0", "-1", "four", "1.5"):
        with pytest.raises(ConfigError, match="ORKAS_MAX_DISPATCH must be a whole number"):
            settings_from_env({"ORKAS_MAX_DISPATCH": bad})


@pytest.mark.parametrize(
    ("agent_model", "kinds", "choice", "expected"),
    [
        ("claude-sonnet-4-5", {}, "small", "anthropic/claude-haiku-4-5"),  # a bare name, routed by its prefix
        ("work/claude-opus-4", {"work": "anthropic"}, "small", "work/claude-haiku-4-5"),  # an Anthropic-kind provider
        ("openai/gpt-5", {"openai": "openai-compatible"}, "small", "openai/gpt-5-mini"),
        ("ollama/llama3.2", {"ollama": "openai-compatible"}, "small", "ollama/llama3.2"),  # a local server: its own
        ("openai/gpt-5", {"openai": "openai-compatible"}, "agent", "openai/gpt-5"),
        ("openai/gpt-5", {"openai": "openai-compatible"}, "openai/gpt-4o", "openai/gpt-4o"),
    ],
)
def test_reflections_run_on_the_small_model_of_the_agents_provider_unless_the_person_chose(
    agent_model: str, kinds: dict[str, str], choice: str, expected: str
) -> None:
    from orkas.adapter.settings.store import ProviderConfig
    from orkas.app.agents import reflection_model

    product = ProductSettings(preferences=Preferences(reflection_model=choice))
    for name, kind in kinds.items():
        product.providers[name] = ProviderConfig(name=name, kind=kind)  # type: ignore[arg-type]
    assert reflection_model(agent_model, Configured(product=product)) == expected


def test_memory_and_learning_are_off_until_the_person_turns_them_on() -> None:
    preferences = Preferences()
    assert preferences.memory is False and preferences.learning is False and preferences.offered is False
    assert preferences.reflection_model == "small"
