"""`/api/learning`: what each agent learned — last reflection, trigger, memo, learned skills with their health,
every change with where it came from — one-click undo, the changes held for the person (proposals: accept or
reject), and a reflection cycle on demand."""

from __future__ import annotations

import asyncio
from typing import Any

from pydantic import BaseModel, Field

from orkas.adapter.learning.evolution import Evolution, outcome_json
from orkas.server.routing import Api, HTTPException


class Undo(BaseModel):
    agent: str = Field(min_length=1, max_length=64)
    id: str = Field(min_length=1, max_length=64)


class Decision(BaseModel):
    accept: bool


class RunNow(BaseModel):
    agent: str | None = Field(default=None, max_length=64)
    force: bool = False


def add_learning_routes(api: Api, evolution: Evolution) -> None:
    @api.get("/api/learning")
    async def learning() -> dict[str, Any]:
        rows = await asyncio.to_thread(evolution.status)
        for row in rows:
            history = await asyncio.to_thread(evolution.history, row["agent"])
            row["history"] = list(reversed(history[-100:]))  # newest first
        proposals = await asyncio.to_thread(evolution.proposals)
        return {"agents": rows, "proposals": proposals}

    @api.get("/api/learning/waiting")
    async def learning_waiting() -> dict[str, int]:
        """How many proposals wait for the person (the window's notice at start)."""
        return {"count": len(await asyncio.to_thread(evolution.proposals))}

    @api.post("/api/learning/proposals/{agent}/{proposal_id}")
    async def learning_decide(agent: str, proposal_id: str, body: Decision) -> dict[str, Any]:
        """The person's answer to what a reflection wanted to keep: accepted (applied, with undo) or rejected."""
        if agent not in [row["agent"] for row in await asyncio.to_thread(evolution.status)]:
            raise HTTPException(status_code=404, detail=f"no agent {agent!r}")
        try:
            decided = await asyncio.to_thread(evolution.decide, agent, proposal_id, body.accept)
        except KeyError:
            raise HTTPException(status_code=404, detail="no such proposal (already answered?)") from None
        except Exception as e:  # the store refused (a guard rule): say why
            raise HTTPException(status_code=400, detail=str(e)) from None
        return {"decided": decided["id"], "accepted": body.accept}

    @api.post("/api/learning/undo")
    async def learning_undo(body: Undo) -> dict[str, Any]:
        if body.agent not in [row["agent"] for row in await asyncio.to_thread(evolution.status)]:
            raise HTTPException(status_code=404, detail=f"no agent {body.agent!r}")
        try:
            entry = await asyncio.to_thread(evolution.undo, body.agent, body.id)
        except KeyError:
            raise HTTPException(status_code=404, detail="no such change") from None
        except Exception as e:  # the store refused (a guard finding, a name): say why
            raise HTTPException(status_code=400, detail=str(e)) from None
        return {"undone": entry["id"]}

    @api.post("/api/learning/run")
    async def learning_run(body: RunNow) -> dict[str, Any]:
        outcomes = await evolution.cycle(agent=body.agent, scheduled=False, force=body.force)
        return {"outcomes": [outcome_json(o) for o in outcomes]}
