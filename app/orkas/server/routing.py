"""Routes declared as typed async functions, on Starlette: what the servers used FastAPI for, without it.

FastAPI cost the window ~11 MB and ~0.25 s of start (~240 modules: its OpenAPI models, telemetry, email)
for what the routes use of it: a function's parameters read from the path, the query and a JSON body,
checked by pydantic, and `{"detail": ...}` answers. This module does that and no more:

- a parameter named in the path is taken from it; one annotated `Request` or `WebSocket` is the request;
  one whose type is a pydantic model is the JSON body (optional when its default is None); any other is a
  query parameter, its default or `Query(...)` saying whether it is required and what it must hold;
- a wrong value answers 422 with pydantic's errors under `detail`, as FastAPI did (a WebSocket is closed
  with 1008); an `HTTPException` answers `{"detail": ...}` with its status and headers;
- what a route returns is sent as JSON (or through `response_class`), a `Response` as it is.

Each route's checker is built when the route is first called: most are never called in a session.
"""

from __future__ import annotations

import inspect
import json
import typing
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from functools import cached_property
from types import UnionType
from typing import Any

from pydantic import BaseModel, ValidationError, create_model
from pydantic.fields import FieldInfo
from pydantic_core import to_jsonable_python
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route, WebSocketRoute, compile_path
from starlette.websockets import WebSocket

__all__ = ["Api", "HTTPException", "Query", "Request", "Response", "WebSocket"]

Handler = Callable[..., Awaitable[Any]]
NO_BODY = frozenset({204, 304})


def Query(default: Any = ..., **constraints: Any) -> Any:
    """A query parameter's default (`...`: required) and what it must hold (ge, le, min_length, max_length)."""
    return FieldInfo(default=default, **constraints)


class Api(Starlette):
    """A Starlette app whose routes are declared with `@api.get(path)` and friends."""

    def __init__(self) -> None:
        super().__init__(exception_handlers={HTTPException: _http_error})

    def get(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self._route(path, "GET", **options)

    def post(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self._route(path, "POST", **options)

    def put(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self._route(path, "PUT", **options)

    def patch(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self._route(path, "PATCH", **options)

    def delete(self, path: str, **options: Any) -> Callable[[Handler], Handler]:
        return self._route(path, "DELETE", **options)

    def _route(
        self, path: str, method: str, *, status_code: int = 200, response_class: type[Response] = JSONResponse
    ) -> Callable[[Handler], Handler]:
        def add(handler: Handler) -> Handler:
            call = _Call(handler, path, status_code, response_class)
            self.router.routes.append(Route(path, call.http, methods=[method], name=handler.__name__))
            return handler

        return add

    def websocket(self, path: str) -> Callable[[Handler], Handler]:
        def add(handler: Handler) -> Handler:
            call = _Call(handler, path, 200, JSONResponse)
            self.router.routes.append(WebSocketRoute(path, call.socket, name=handler.__name__))
            return handler

        return add


class _JSON(JSONResponse):
    """JSON as FastAPI wrote it (UTF-8, compact), except that a text JSON can carry but UTF-8 cannot — a lone surrogate
    such as "\\ud800", which a client may send and a refusal quotes back — is written escaped instead of failing."""

    def render(self, content: Any) -> bytes:
        try:
            return super().render(content)
        except UnicodeEncodeError:
            return json.dumps(content, allow_nan=False, separators=(",", ":")).encode("ascii")


async def _http_error(request: Request, exc: Exception) -> Response:
    assert isinstance(exc, HTTPException)
    if exc.status_code in NO_BODY:
        return Response(status_code=exc.status_code, headers=exc.headers)
    return _JSON({"detail": exc.detail}, status_code=exc.status_code, headers=exc.headers)


@dataclass
class _Parameters:
    """How one route reads its arguments: built on its first call."""

    request: str | None  # the parameter that receives the Request or WebSocket
    body: str | None
    body_model: type[BaseModel] | None
    body_required: bool
    fields: type[BaseModel] | None  # the path and query parameters, checked together
    in_path: frozenset[str]


class _Call:
    def __init__(self, handler: Handler, path: str, status_code: int, response_class: type[Response]) -> None:
        self.handler = handler
        self.path = path
        self.status_code = status_code
        self.response_class = response_class

    @cached_property
    def parameters(self) -> _Parameters:
        return _read_signature(self.handler, self.path)

    async def http(self, request: Request) -> Response:
        try:
            arguments = await self._arguments(request)
        except _Invalid as e:
            return _JSON({"detail": e.errors}, status_code=422)
        result = await self.handler(**arguments)
        if isinstance(result, Response):
            return result
        if self.status_code in NO_BODY:
            return Response(status_code=self.status_code)
        if self.response_class is JSONResponse:
            return _JSON(to_jsonable_python(result), status_code=self.status_code)
        return self.response_class(result, status_code=self.status_code)

    async def socket(self, socket: WebSocket) -> None:
        try:
            arguments = await self._arguments(socket)
        except _Invalid:
            await socket.close(code=1008)  # policy violation, as FastAPI closes on a wrong query
            return
        await self.handler(**arguments)

    async def _arguments(self, connection: Request | WebSocket) -> dict[str, Any]:
        parameters = self.parameters
        arguments: dict[str, Any] = {}
        errors: list[dict[str, Any]] = []
        if parameters.fields is not None:
            given = {**connection.query_params, **connection.path_params}
            try:
                checked = parameters.fields.model_validate(given)
                arguments.update({name: getattr(checked, name) for name in type(checked).model_fields})
            except ValidationError as e:
                errors.extend(_located(e, parameters.in_path))
        if parameters.body is not None and isinstance(connection, Request):
            try:
                arguments[parameters.body] = await _body(connection, parameters)
            except _Invalid as e:
                errors.extend(e.errors)
        if errors:
            raise _Invalid(errors)
        if parameters.request is not None:
            arguments[parameters.request] = connection
        return arguments


class _Invalid(Exception):
    def __init__(self, errors: list[dict[str, Any]]) -> None:
        self.errors = errors


async def _body(request: Request, parameters: _Parameters) -> BaseModel | None:
    """The JSON body as its model. Decoded as FastAPI did — `json.loads` (UTF-8, -16 or -32, NaN and Infinity
    allowed), then checked as Python values — so a client FastAPI accepted is accepted the same way."""
    assert parameters.body_model is not None
    raw = await request.body()
    if not raw.strip():
        if not parameters.body_required:
            return None
        raise _Invalid([{"type": "missing", "loc": ("body",), "msg": "Field required", "input": None}])
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError) as e:  # UnicodeDecodeError is a ValueError
        error = {"type": "json_invalid", "loc": ("body",), "msg": "JSON decode error", "input": {}}
        raise _Invalid([{**error, "ctx": {"error": str(e)[:200]}}]) from None
    try:
        return parameters.body_model.model_validate(value)
    except ValidationError as e:
        raise _Invalid([{**error, "loc": ("body", *error["loc"])} for error in _errors(e)]) from None


def _errors(e: ValidationError) -> list[dict[str, Any]]:
    """pydantic's errors, ready to send as JSON: a failed check's exception in `ctx` as its text, and an input that
    JSON cannot carry (NaN, Infinity, bytes) as text too — the answer must stay a 422, never become a 500."""
    errors = e.errors(include_url=False)
    return json.loads(json.dumps(errors, default=str), parse_constant=str)  # type: ignore[no-any-return]


def _located(e: ValidationError, in_path: frozenset[str]) -> list[dict[str, Any]]:
    located = []
    for error in _errors(e):
        name = error["loc"][0] if error["loc"] else ""
        if error["type"] == "missing":
            error["input"] = None  # not the whole query, as FastAPI reports a missing parameter
        located.append({**error, "loc": ("path" if name in in_path else "query", *error["loc"])})
    return located


def _read_signature(handler: Handler, path: str) -> _Parameters:
    hints = typing.get_type_hints(handler)
    in_path = frozenset(compile_path(path)[2])
    request = body = None
    body_model: type[BaseModel] | None = None
    body_required = True
    fields: dict[str, Any] = {}
    for name, parameter in inspect.signature(handler).parameters.items():
        hint = hints.get(name, str)
        model = _model_in(hint)
        if hint in (Request, WebSocket):
            request = name
        elif model is not None and name not in in_path:
            body, body_model, body_required = name, model, parameter.default is inspect.Parameter.empty
        else:
            default = parameter.default
            if isinstance(default, FieldInfo):
                fields[name] = (hint, default)
            else:
                fields[name] = (hint, ... if default is inspect.Parameter.empty else default)
    checker = create_model(f"{handler.__name__}_parameters", **fields) if fields else None
    return _Parameters(request, body, body_model, body_required, checker, in_path)


def _model_in(hint: Any) -> type[BaseModel] | None:
    """The pydantic model a body parameter is (`Model` or `Model | None`), else None."""
    candidates = typing.get_args(hint) if typing.get_origin(hint) in (typing.Union, UnionType) else (hint,)
    for candidate in candidates:
        if inspect.isclass(candidate) and issubclass(candidate, BaseModel):
            return candidate
    return None
