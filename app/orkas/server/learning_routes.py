"""`/api/learning`: what each agent learned — last reflection, trigger, memo, learned skills with their health,
every change with where it came from — one-click undo, and a reflection cycle on demand."""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import FastAPI, HTTPException
from pydantic import BaseModel, Field

from orkas.adapter.evolution import Evolution, outcome_json


class Undo(BaseModel):
    agent: str = Field(min_length=1, max_length=64)
    id: str = Field(min_length=1, max_length=64)


class RunNow(BaseModel):
    agent: str | None = Field(default=None, max_length=64)
    force: bool = False


def add_learning_routes(api: FastAPI, evolution: Evolution) -> None:
    @api.get("/api/learning")
    async def learning() -> dict[str, Any]:
        rows = await asyncio.to_thread(evolution.status)
        for row in rows:
            history = await asyncio.to_thread(evolution.history, row["agent"])
            row["history"] = list(reversed(history[-100:]))  # newest first
        return {"agents": rows}

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
