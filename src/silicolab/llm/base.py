"""The :class:`LanguageModel` protocol every backend and wrapper implements.

A model answers :meth:`LanguageModel.acomplete` for one checked :class:`Request`; the
public :meth:`~LanguageModel.agenerate` / :meth:`~LanguageModel.generate` build that
request from keyword arguments. Wrappers (ledger, cache, limits, retry) hold an ``inner``
model and override :meth:`acomplete`, so they compose in any order.
"""

from __future__ import annotations

import asyncio
import contextlib
from abc import ABC, abstractmethod
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Generic, TypedDict, TypeVar, Unpack

from silicolab.core.errors import InputError
from silicolab.core.sync import run_sync as run_sync  # re-exported: the old import path
from silicolab.core.sync import sync_twin
from silicolab.llm.types import Completion, MessagesLike, Request, normalize_messages

if TYPE_CHECKING:
    from silicolab.llm.ledger import Ledger

T = TypeVar("T")


class SamplingOptions(TypedDict, total=False):
    """How one call samples and is labelled: what every generation call takes, including
    the structured ones (:func:`~silicolab.llm.structured.astructured` and its kin)."""

    temperature: float | None
    top_p: float | None
    max_tokens: int | None
    seed: int | None
    tag: str
    sample_index: int


class GenerationOptions(SamplingOptions, total=False):
    """The keyword options of one generation call, defined once: :meth:`LanguageModel.agenerate`
    and :meth:`~LanguageModel.generate` take them and pass them to :func:`make_request`,
    which checks them and gives their defaults."""

    stop: Sequence[str] | str | None
    json_schema: Mapping[str, Any] | None


class LanguageModel(ABC):
    """A chat language model: messages in, one :class:`Completion` out."""

    #: The spec the model was loaded from, e.g. ``"openai:gpt-4o-mini"``.
    spec: str = ""
    #: Requests the model's server answers at once, when it said so (llama.cpp's slots);
    #: ``load_model`` sends no more than that at a time unless told otherwise.
    server_slots: int | None = None

    @property
    def name(self) -> str:
        """The model's name as its server knows it."""
        return self.spec.split(":", 1)[-1]

    @abstractmethod
    async def acomplete(self, request: Request) -> Completion:
        """Answer one request."""

    def identity(self) -> dict[str, Any]:
        """What identifies this model's answers (backend, model, server) for cache keys.
        Never includes credentials."""
        return {"spec": self.spec}

    @property
    def ledger(self) -> Ledger:
        """The usage ledger of this model (the metering wrapper's)."""
        raise AttributeError(f"{type(self).__name__} has no ledger: load it with load_model()")

    async def agenerate(
        self, messages: MessagesLike, **options: Unpack[GenerationOptions]
    ) -> Completion:
        """Generate one reply to ``messages`` (``options`` as :func:`make_request` takes).

        ``json_schema`` asks for a reply that is a JSON document of that schema (enforced by
        the server where it supports it). ``tag`` labels the call in the ledger.
        ``sample_index`` makes repeated independent samples of the same prompt distinct
        and individually cacheable.
        """
        return await self.acomplete(make_request(messages, **options))

    generate = sync_twin(agenerate)

    async def aclose(self) -> None:  # noqa: B027 - optional hook, most models hold nothing
        """Release network clients and files. Safe to call more than once."""

    close = sync_twin(aclose)


def make_request(
    messages: MessagesLike,
    *,
    temperature: float | None = None,
    top_p: float | None = None,
    max_tokens: int | None = None,
    seed: int | None = None,
    stop: Sequence[str] | str | None = None,
    json_schema: Mapping[str, Any] | None = None,
    tag: str = "",
    sample_index: int = 0,
) -> Request:
    """Check the arguments of a generation call and build its :class:`Request`."""
    if temperature is not None and not (0.0 <= float(temperature) <= 2.0):
        raise InputError(f"temperature={temperature} is out of range: use a value in [0, 2]")
    if top_p is not None and not (0.0 < float(top_p) <= 1.0):
        raise InputError(f"top_p={top_p} is out of range: use a value in (0, 1]")
    if max_tokens is not None and int(max_tokens) < 1:
        raise InputError(f"max_tokens={max_tokens} must be a positive integer")
    if int(sample_index) < 0:
        raise InputError(f"sample_index={sample_index} must be >= 0")
    stops = (stop,) if isinstance(stop, str) else (tuple(stop) if stop else None)
    return Request(
        messages=normalize_messages(messages),
        temperature=None if temperature is None else float(temperature),
        max_tokens=None if max_tokens is None else int(max_tokens),
        seed=None if seed is None else int(seed),
        stop=stops,
        json_schema=dict(json_schema) if json_schema is not None else None,
        tag=str(tag),
        sample_index=int(sample_index),
        top_p=None if top_p is None else float(top_p),
    )


class ModelWrapper(LanguageModel):
    """Base of the wrappers: forwards everything to ``inner`` unless overridden."""

    def __init__(self, inner: LanguageModel):
        self.inner = inner
        self.spec = inner.spec

    async def acomplete(self, request: Request) -> Completion:
        return await self.inner.acomplete(request)

    def identity(self) -> dict[str, Any]:
        return self.inner.identity()

    @property
    def ledger(self) -> Ledger:
        return self.inner.ledger

    async def aclose(self) -> None:
        await self.inner.aclose()

    def __getattr__(self, name: str) -> Any:
        # Reached only for attributes not found normally: expose the layers below
        # (e.g. ``model.cache`` from the outermost wrapper).
        if name == "inner":
            raise AttributeError(name)
        return getattr(self.inner, name)


class PerLoop(Generic[T]):
    """One object per running event loop, made by ``factory`` on first use in that loop.

    Network clients, semaphores and locks belong to the loop that created them; the sync
    twins start a fresh loop per call, so loop-bound state is kept per loop (only the
    current loop's object is retained).
    """

    def __init__(self, factory: Callable[[], T]):
        self._factory = factory
        self._loop_id: int | None = None
        self._value: T | None = None

    def get(self) -> T:
        loop_id = id(asyncio.get_running_loop())
        if self._value is None or self._loop_id != loop_id:
            self._value, self._loop_id = self._factory(), loop_id
        return self._value

    def __getstate__(self) -> dict[str, Any]:
        # A copy (a pickle sent to another process) starts without the loop-bound object.
        return {"_factory": self._factory, "_loop_id": None, "_value": None}

    def take(self) -> T | None:
        """Remove and return the current object (for closing), if any."""
        value, self._value, self._loop_id = self._value, None, None
        return value


async def close_client(client: Any) -> None:
    """Close an SDK client whose loop may already be gone."""
    if client is None:
        return
    with contextlib.suppress(RuntimeError):  # its event loop is closed: nothing to release
        await client.close()


def scrub_completion(completion: Completion, secret: str) -> Completion:
    """``completion`` with ``secret`` (the backend's own key) masked in its text, so a
    server that echoes credentials cannot push them into caches and records."""
    if secret and len(secret) >= 8 and secret in completion.text:
        from dataclasses import replace

        return replace(completion, text=completion.text.replace(secret, "***"))
    return completion
