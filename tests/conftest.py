"""Shared pytest fixtures for silicolab's test suite.

The fixtures here start :class:`tests.support.openai_server.FakeLLMServer` instances so tests can
exercise real HTTP clients against a local, scripted LLM API instead of the internet.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# ``tests`` is a package; make sure the repository root is importable so test modules anywhere
# under ``tests/`` (even in sub-directories without ``__init__.py``) can do
# ``from tests.support.openai_server import FakeLLMServer`` when pytest runs from the repo root.
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from tests.support.openai_server import FakeLLMServer  # noqa: E402

ServerFactory = Callable[..., FakeLLMServer]


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` with default options (echo replies, no faults)."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm_server_factory() -> Iterator[ServerFactory]:
    """A callable ``make(**options) -> FakeLLMServer`` returning started servers.

    Options are :class:`FakeLLMServer`'s constructor arguments. Every server made is stopped at
    teardown, even when the test fails.
    """
    servers: list[FakeLLMServer] = []

    def make(**options: Any) -> FakeLLMServer:
        server = FakeLLMServer(**options)
        server.start()
        servers.append(server)
        return server

    yield make
    for server in reversed(servers):
        server.stop()
