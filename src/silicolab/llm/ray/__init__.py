"""Models on a Ray cluster: driver-owned services and worker-side clients (docs/scale.md).

A ``load_model`` model shipped to a worker becomes a :class:`ServiceModel` talking to one
:class:`LLMService` actor per model, which owns the limits, the cache and the ledger.
The private modules: ``_service`` (the actor, the worker-side model and :func:`ship`) and
``_channel`` (the per-process batching of call begins and ends).
"""

from __future__ import annotations

from silicolab.llm.ray._channel import Channel
from silicolab.llm.ray._service import DEFAULT_LEASE_S, LLMService, ServiceModel, ship

__all__ = ["DEFAULT_LEASE_S", "Channel", "LLMService", "ServiceModel", "ship"]
