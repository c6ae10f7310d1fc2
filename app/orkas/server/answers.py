"""A store's refusal as a response, for every router: 404 for what does not exist (`NotFound`), 400
with the sentence for any other configuration mistake or path the policy refuses."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar

from fastapi import HTTPException

from orkas.core.errors import ConfigError, ConversationBusy, NotFound
from orkas.engine.sandbox import PathDenied

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


def config(action: Callable[[], T]) -> T:
    with answered():
        return action()
