"""``load_model(spec, **options)``: a backend wrapped in ledger → cache → limits → retry.

Specs name a backend and a model: ``"openai:gpt-4o-mini"``, ``"anthropic:claude-sonnet-4-5"``,
``"scripted"``. Hosted and local OpenAI-compatible servers have shortcuts that fill in
``base_url`` and the key's environment variable: ``ollama:``, ``vllm:``, ``llamacpp:``,
``lmstudio:``, ``openrouter:``, ``together:``, ``groq:``. Keys are read from the
environment variable named by ``api_key_env`` and never stored anywhere else.

``local`` (``local:smollm2``, ``local:/path/model.gguf``) is a llama.cpp server on this
machine that silicolab starts on first use and reuses (:mod:`silicolab.llm.local`).

Options left unset adapt to the server: a llama.cpp server (``local``, ``llamacpp:``) gets
as many concurrent calls as it has slots (one for llama-cpp-python) and its JSON schemas
in the ``json_object`` form from the first call; local servers (those two and
``lmstudio:``) get a per-attempt timeout of 600 s instead of 60 s.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from silicolab.core.errors import ConfigError
from silicolab.llm.base import LanguageModel
from silicolab.llm.cache import CachedModel, SQLiteCache
from silicolab.llm.ledger import MeteredModel, Prices
from silicolab.llm.limits import LimitedModel
from silicolab.llm.local import LOCAL_MAX_TOKENS, LOCAL_TIMEOUT_S
from silicolab.llm.prices import resolve_prices
from silicolab.llm.retry import RetryingModel

if TYPE_CHECKING:
    from silicolab.llm.budget import Budget


@dataclass(frozen=True)
class Provider:
    """An OpenAI-compatible server family: where it listens and which variable holds its key."""

    backend: str
    base_url: str | None
    key_env: str | None  # None: the server needs no key
    json_mode: str = "json_schema"  # how the server takes a JSON schema (see openai_backend)
    slots: int | None = None  # requests served at once, when the server cannot be asked


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("openai", None, "OPENAI_API_KEY"),
    "anthropic": Provider("anthropic", None, "ANTHROPIC_API_KEY"),
    "openrouter": Provider("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": Provider("openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "groq": Provider("openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "ollama": Provider("openai", "http://localhost:11434/v1", None),
    "vllm": Provider("openai", "http://localhost:8000/v1", None),
    "llamacpp": Provider("openai", "http://localhost:8080/v1", None, "json_object", 1),
    "lmstudio": Provider("openai", "http://localhost:1234/v1", None, slots=1),
    "local": Provider("local", None, None, "json_object", 1),
}
#: Calls in flight at once, when neither the settings nor the server say otherwise (the
#: adaptive limit halves it after a 429 or a timeout, so a stricter provider costs retries,
#: not failures).
DEFAULT_CONCURRENCY = 64
DEFAULT_TIMEOUT_S = 60.0
#: Providers that always run on this machine (one CPU or GPU: long answers, few slots).
_LOCAL_PROVIDERS = ("local", "llamacpp", "lmstudio")
_SHORTCUTS = ", ".join(
    f"{p}:<model>" for p in PROVIDERS if p not in ("openai", "anthropic", "local")
)
_SPEC_HELP = (
    f"write it as 'openai:<model>', 'anthropic:<model>', 'scripted' or 'local' (a llama.cpp "
    f"server on this machine; 'local:<file.gguf>') (shortcuts: {_SHORTCUTS})"
)


def _is_loopback(url: str | None) -> bool:
    host = urlsplit(url).hostname if url else None
    return host in ("localhost", "::1") or bool(host and host.startswith("127."))


def resolve_api_key(provider: Provider, api_key_env: str | None, base_url: str | None) -> str:
    """The key from the environment, or a clear :class:`ConfigError` saying which variable
    to set. Local servers (loopback ``base_url``, or providers that need no key) may run
    without one."""
    env = api_key_env or provider.key_env
    value = os.environ.get(env) if env else None
    if value:
        return value
    if env is None or _is_loopback(base_url):
        return "no-key-needed"
    raise ConfigError(
        f"the API key is missing: environment variable {env} is not set; "
        f"export {env}=... (or set api_key_env to the variable that holds your key)"
    )


def parse_spec(spec: str) -> tuple[str, str]:
    """Split ``"provider:model"``; :class:`ConfigError` for anything else."""
    if not isinstance(spec, str) or not spec.strip():
        raise ConfigError(f"model spec {spec!r} is empty: {_SPEC_HELP}")
    spec = spec.strip()
    if spec == "scripted" or spec.startswith("scripted:"):
        return "scripted", spec.partition(":")[2] or "scripted"
    if spec == "local":
        return "local", "smollm2"
    provider, sep, model = spec.partition(":")
    if not sep or provider not in PROVIDERS or not model:
        raise ConfigError(f"unknown model spec {spec!r}: {_SPEC_HELP}")
    return provider, model


@dataclass(frozen=True)
class ServerDefaults:
    """What unset options become for one server (see the module docstring)."""

    slots: int | None
    timeout_s: float
    json_mode: str


def server_defaults(provider_name: str, base_url: str | None) -> ServerDefaults:
    """Defaults for ``provider_name``'s server at ``base_url``. A ``llamacpp:`` server is
    asked how many requests it serves at once (:func:`silicolab.llm.local.probe_server`:
    llama-server's slots, or 1 for llama-cpp-python); other servers are not asked."""
    provider = PROVIDERS[provider_name]
    slots = provider.slots
    if provider_name == "llamacpp" and base_url:
        from silicolab.llm.local import probe_server

        slots = probe_server(base_url, timeout_s=2.0).slots or slots
    timeout = LOCAL_TIMEOUT_S if provider_name in _LOCAL_PROVIDERS else DEFAULT_TIMEOUT_S
    return ServerDefaults(slots, timeout, provider.json_mode)


def make_backend(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout_s: float | None = None,
    **backend_options: Any,
) -> LanguageModel:
    """The bare backend for ``spec``, without wrappers (see :func:`load_model`).

    ``timeout_s=None`` and an absent ``json_mode`` take the server's defaults
    (:func:`server_defaults`); the backend's ``server_slots`` says how many calls the
    server serves at once, when known."""
    provider_name, model = parse_spec(spec)
    if provider_name == "scripted":
        from silicolab.llm.backends.scripted import ScriptedModel

        return ScriptedModel(
            name=f"scripted:{model}" if model != "scripted" else "scripted", **backend_options
        )
    from silicolab.llm.backends.openai_backend import OpenAIChatModel

    provider = PROVIDERS[provider_name]
    if provider.backend == "local":
        return _local_backend(model, timeout_s, **backend_options)
    url = base_url or provider.base_url
    key = resolve_api_key(provider, api_key_env, url)
    if provider.backend == "anthropic":
        from silicolab.llm.backends.anthropic_backend import AnthropicModel

        return AnthropicModel(
            model, api_key=key, base_url=url, timeout_s=timeout_s or DEFAULT_TIMEOUT_S,
            **backend_options,
        )  # fmt: skip
    defaults = server_defaults(provider_name, url)
    backend_options.setdefault("json_mode", defaults.json_mode)
    backend = OpenAIChatModel(
        model, api_key=key, base_url=url, timeout_s=timeout_s or defaults.timeout_s,
        **backend_options,
    )  # fmt: skip
    backend.server_slots = defaults.slots
    return backend


def _local_backend(model: str, timeout_s: float | None, **options: Any) -> LanguageModel:
    """The ``local`` spec: start or reuse this machine's llama.cpp server for ``model``."""
    from silicolab.llm.backends.openai_backend import OpenAIChatModel
    from silicolab.llm.local import ensure_server, probe_server

    record = ensure_server(model)
    info = probe_server(record.base_url, timeout_s=5.0)
    options.setdefault("json_mode", PROVIDERS["local"].json_mode)
    options.setdefault("default_max_tokens", LOCAL_MAX_TOKENS)
    path = Path(record.model_path)
    # The cache key names the model file, not the port, so a restarted server hits the cache.
    identity = {"backend": "local", "model": record.alias, "file": path.name,
                "bytes": path.stat().st_size}  # fmt: skip
    backend = OpenAIChatModel(
        record.alias, api_key="no-key-needed", base_url=record.base_url,
        timeout_s=timeout_s or LOCAL_TIMEOUT_S, spec=record.spec, identity=identity, **options,
    )  # fmt: skip
    backend.server_slots = info.slots or PROVIDERS["local"].slots
    return backend


def load_model(
    spec: str | LanguageModel,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache_path: str | Path | None = None,
    max_concurrency: int | Literal["auto"] | None = "auto",
    adaptive_concurrency: bool = True,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    max_retries: int = 5,
    timeout_s: float | None = None,
    prices: Prices | Mapping[str, float] | None = None,
    budget: Budget | None = None,
    **backend_options: Any,
) -> LanguageModel:
    """A ready-to-use model: metering (``model.ledger``) → exact-prompt cache (when
    ``cache_path`` is given) → limits → spending limit (with ``budget``) → retry → backend.

    ``prices`` (USD per 1M tokens) bill the ledger; without them the built-in table's
    apply (:func:`~silicolab.llm.prices.resolve_prices`: free for scripted and local
    specs; ``model.ledger.prices.known`` is False when nobody knows the price). A
    ``budget`` (:class:`~silicolab.llm.budget.Budget`, one per run, shared by its models)
    refuses new paid calls once the run's actual spend reaches its limit.

    ``max_concurrency="auto"`` is the server's slot count when it says (llama.cpp), else
    64 (None: no limit; it backs off on 429s and timeouts); ``timeout_s=None`` is 600 s
    for servers on this machine that serve few requests at once (``local``,
    ``llamacpp:``, ``lmstudio:``, a llama.cpp server at a loopback ``base_url``), else
    60 s. Calls waiting for a free slot wait in
    the client, where no timeout runs. The concurrency adapts to the server
    (``adaptive_concurrency``, on by default): it halves after a 429 or a timeout and
    grows back by one per window of successes, never above ``max_concurrency``
    (``model.concurrency.changes`` lists the changes; each is logged).

    ``spec`` may also be a :class:`LanguageModel` instance (e.g. a configured
    ``ScriptedModel``), which is wrapped the same way. Backend-specific options pass
    through ``backend_options`` (``json_mode``, ``extra_body`` for ``openai``; ``replies``,
    ``rules``, ``fn``, ``default``, ``latency_s`` for ``scripted``).

    Example::

        model = load_model("openai:gpt-4o-mini", cache_path=".silicolab/llm-cache.sqlite")
        reply = model.generate("Name one cause of rain.", temperature=0, tag="demo")
        print(reply.text, model.ledger.summary()["cost"])
    """
    if max_retries < 0:
        raise ConfigError(f"max_retries={max_retries} must be >= 0")
    if timeout_s is not None and timeout_s <= 0:
        raise ConfigError(f"timeout_s={timeout_s} must be positive")
    if isinstance(spec, LanguageModel):
        backend = spec
    else:
        backend = make_backend(
            spec,
            base_url=base_url,
            api_key_env=api_key_env,
            timeout_s=timeout_s,
            **backend_options,
        )
    if max_concurrency == "auto":
        max_concurrency = backend.server_slots or DEFAULT_CONCURRENCY
    named = spec if isinstance(spec, str) else backend.spec
    prices = resolve_prices(named, prices, base_url=base_url)
    model: LanguageModel = RetryingModel(backend, max_retries=max_retries)
    if budget is not None:  # below the limits: a call is checked when it gets its slot
        from silicolab.llm.budget import BudgetedModel

        model = BudgetedModel(model, budget, prices)
    model = LimitedModel(
        model,
        max_concurrency=max_concurrency,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
        adaptive=adaptive_concurrency,
    )
    if cache_path is not None:
        model = CachedModel(model, SQLiteCache(cache_path))
    return MeteredModel(model, prices=prices)
