"""The offline study world over real HTTP: the local test server answering every request
as a :class:`~silicolab.studies.world.HiddenWorld` does (its answers follow a hidden SCM),
so a study, a replication or a kill test meets a real OpenAI-compatible endpoint whose
effects are known."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any

from silicolab.studies.world import HiddenWorld
from tests.support.openai_server import FakeLLMServer


def world_server(world: HiddenWorld, *, latency_s: float = 0.0, **options: Any) -> FakeLLMServer:
    """A :class:`FakeLLMServer` (not started: use it as a context manager) whose reply to
    each request is ``world``'s reply to its messages; ``options`` go to the server
    (``log_limit`` defaults to 100,000 requests kept)."""
    options.setdefault("log_limit", 100_000)
    return FakeLLMServer(
        reply=lambda body: world(SimpleNamespace(messages=body["messages"], sample_index=0)),
        latency_s=latency_s,
        **options,
    )


__all__ = ["world_server"]
