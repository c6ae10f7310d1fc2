"""Fixtures that start the fake servers and verify their scripts at teardown."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.fakes import anthropic, openai
from tests.fakes.server import FakeServer


@pytest.fixture
def anthropic_server() -> Iterator[FakeServer]:
    server = FakeServer(anthropic.PATH).start()
    yield server
    server.stop()
    server.verify()


@pytest.fixture
def openai_server() -> Iterator[FakeServer]:
    server = FakeServer(openai.PATH).start()
    yield server
    server.stop()
    server.verify()
