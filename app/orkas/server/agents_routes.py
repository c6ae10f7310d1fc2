"""The agents of the group chat (`/api/agents`: list with the files that cannot be used, create, edit,
duplicate, delete) and a conversation's members and floor (`/api/conversations/{id}/members`; `…/hand-back`
gives the floor back to the commander, and every view hears it as the turn's own `state_changed`)."""

from __future__ import annotations

from dataclasses import replace
from typing import Any, Protocol

from pydantic import BaseModel, Field

from orkas.adapter.conversations.runtime import ConversationRuntime
from orkas.adapter.wire import StateChanged
from orkas.core.errors import NotFound
from orkas.server.answers import answered, config
from orkas.server.routing import Api, HTTPException, Response
from orkas.team.agents import AgentSpec, AgentStore


class Members(Protocol):
    def members(self, conversation_id: str) -> dict[str, Any]: ...

    def set_members(self, conversation_id: str, names: list[str]) -> dict[str, Any]: ...

    def is_group(self, conversation_id: str) -> bool: ...

    def hand_back(self, conversation_id: str) -> bool: ...

    def history(self, conversation_id: str, limit: int | None = None) -> list[dict[str, Any]]: ...


class AgentBody(BaseModel):
    name: str = Field(min_length=1, max_length=32)
    description: str = Field(min_length=1, max_length=2000)
    prompt: str = Field(min_length=1, max_length=64 * 1024)
    model: str | None = Field(default=None, max_length=200)
    tools: list[str] | None = None
    skills: list[str] | None = Field(default=None, max_length=500)
    interactive: bool = False
    worktree: bool = False
    color: str | None = Field(default=None, max_length=32)
    backend: str | None = Field(default=None, max_length=16)  # claude | codex | opencode: an external CLI
    cli: str | None = Field(default=None, max_length=4000)


class Duplicate(BaseModel):
    name: str = Field(min_length=1, max_length=32)


class MemberList(BaseModel):
    members: list[str] = Field(max_length=32)


def _spec(body: AgentBody) -> AgentSpec:
    return AgentSpec(
        name=body.name,
        description=body.description,
        prompt=body.prompt,
        model=body.model or None,
        tools=tuple(body.tools) if body.tools is not None else None,
        skills=tuple(body.skills) if body.skills is not None else None,
        interactive=body.interactive,
        worktree=body.worktree,
        color=body.color or None,
        backend=body.backend or None,
        cli=(body.cli or None) if body.backend else None,
    )


def add_agents_routes(
    api: Api, agents: AgentStore, members: Members | None, runtime: ConversationRuntime | None = None
) -> None:
    def listing() -> dict[str, Any]:
        loaded = agents.load()
        return {
            "agents": [spec.public() for spec in loaded.agents.values()],
            "problems": [{"name": name, "problem": problem} for name, problem in loaded.problems.items()],
        }

    @api.get("/api/agents")
    async def agents_list() -> dict[str, Any]:
        return listing()

    @api.post("/api/agents", status_code=201)
    async def agents_add(body: AgentBody) -> dict[str, Any]:
        spec = _spec(body)
        config(lambda: agents.add(spec))
        return spec.public()

    @api.put("/api/agents/{name}")
    async def agents_edit(name: str, body: AgentBody) -> dict[str, Any]:
        if body.name != name:
            raise HTTPException(status_code=400, detail="an agent keeps its name; duplicate it to rename")
        config(lambda: agents.get(name))  # it exists (404/400 otherwise)
        spec = _spec(body)
        config(lambda: agents.add(spec, replace=True))
        return spec.public()

    @api.post("/api/agents/{name}/duplicate", status_code=201)
    async def agents_duplicate(name: str, body: Duplicate) -> dict[str, Any]:
        original = config(lambda: agents.get(name))
        copy = replace(original, name=body.name)
        config(lambda: agents.add(copy))
        return copy.public()

    @api.delete("/api/agents/{name}", status_code=204)
    async def agents_remove(name: str) -> Response:
        with answered():
            if not agents.remove(name):
                raise NotFound(f"no agent {name!r}")
        return Response(status_code=204)

    if members is None:
        return

    @api.get("/api/conversations/{conversation_id}/members")
    async def members_get(conversation_id: str) -> dict[str, Any]:
        return config(lambda: members.members(conversation_id))

    @api.put("/api/conversations/{conversation_id}/members")
    async def members_set(conversation_id: str, body: MemberList) -> dict[str, Any]:
        return config(lambda: members.set_members(conversation_id, body.members))

    if runtime is None:
        return

    @api.post("/api/conversations/{conversation_id}/hand-back")
    async def members_hand_back(conversation_id: str) -> dict[str, Any]:
        """The person gives the floor back to the commander (the member that held it is no longer answering
        every message). Between turns only: a running turn holds the floor and writes it when it ends."""
        if runtime.running(conversation_id):
            raise HTTPException(status_code=409, detail="wait for the answer to finish (or stop it), then hand back")
        if config(lambda: members.hand_back(conversation_id)):
            state = config(lambda: members.members(conversation_id))
            opened = sum(1 for task in state["tasks"] if task["status"] == "open")
            changed = StateChanged(floor=state["floor"], floor_source=state["floor_source"], open_tasks=opened)
            runtime.publish(conversation_id, changed, "group")
        return config(lambda: members.members(conversation_id))
