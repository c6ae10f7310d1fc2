"""A store's refusal as a response, for every router: 404 for what does not exist (`NotFound`), 400
with the sentence for any other configuration mistake or path the policy refuses, 409 for an answer to a question
another view closed first (`too_late`)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import asdict
from typing import TypeVar

from starlette.responses import JSONResponse

from orkas.adapter.wire import PermissionAnswered
from orkas.core.errors import ConfigError, ConversationBusy, NotFound
from orkas.engine.sandbox import PathDenied
from orkas.server.routing import HTTPException

T = TypeVar("T")


@contextmanager
def answered() -> Iterator[None]:
    """A store's refusal as a response: 404 for what does not exist, 400 with its message otherwise."""
    try:
        yield
    except PathDenied as e:
        raise HTTPException(status_code=400, detail=f"{e.path} cannot be used: {e.reason}") from None
    except NotFound as e:
        raise HTTPException(status_code=404, detail=str(e)) from None
    except ConversationBusy as e:
        raise HTTPException(status_code=409, detail=str(e)) from None
    except ConfigError as e:
        raise HTTPException(status_code=400, detail=str(e)) from None


def too_late(given: PermissionAnswered | None) -> JSONResponse:
    """An answer to a question no longer open: 409 with the answer that closed it (`answered`: its decision, who gave
    it, or why it was declined), so the late view shows the real outcome and says whose it was; 404 when no such
    question is known."""
    if given is None:
        return JSONResponse({"detail": "no open question with that id"}, status_code=404)
    who = f" on {given.by}" if given.by else ""
    said = f"too late: this question was already answered{who} ({given.decision})"
    return JSONResponse({"detail": said, "answered": asdict(given)}, status_code=409)


def config(action: Callable[[], T]) -> T:
    with answered():
        return action()
