"""``load_model(spec, **options)``: a backend wrapped in ledger → cache → limits → retry.

Specs name a backend and a model: ``"openai:gpt-4o-mini"``, ``"anthropic:claude-sonnet-4-5"``,
``"scripted"``. Hosted and local OpenAI-compatible servers have shortcuts that fill in
``base_url`` and the key's environment variable: ``ollama:``, ``vllm:``, ``llamacpp:``,
``lmstudio:``, ``openrouter:``, ``together:``, ``groq:``. Keys are read from the
environment variable named by ``api_key_env`` and never stored anywhere else.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from silicolab.core.errors import ConfigError
from silicolab.llm.base import LanguageModel
from silicolab.llm.cache import CachedModel, SQLiteCache
from silicolab.llm.ledger import MeteredModel, Prices
from silicolab.llm.limits import LimitedModel
from silicolab.llm.retry import RetryingModel


@dataclass(frozen=True)
class Provider:
    """An OpenAI-compatible server family: where it listens and which variable holds its key."""

    backend: str
    base_url: str | None
    key_env: str | None  # None: the server needs no key
    json_mode: str = "json_schema"  # how the server takes a JSON schema (see openai_backend)


PROVIDERS: dict[str, Provider] = {
    "openai": Provider("openai", None, "OPENAI_API_KEY"),
    "anthropic": Provider("anthropic", None, "ANTHROPIC_API_KEY"),
    "openrouter": Provider("openai", "https://openrouter.ai/api/v1", "OPENROUTER_API_KEY"),
    "together": Provider("openai", "https://api.together.xyz/v1", "TOGETHER_API_KEY"),
    "groq": Provider("openai", "https://api.groq.com/openai/v1", "GROQ_API_KEY"),
    "ollama": Provider("openai", "http://localhost:11434/v1", None),
    "vllm": Provider("openai", "http://localhost:8000/v1", None),
    "llamacpp": Provider("openai", "http://localhost:8080/v1", None, "json_object"),
    "lmstudio": Provider("openai", "http://localhost:1234/v1", None),
}
_SHORTCUTS = ", ".join(f"{p}:<model>" for p in PROVIDERS if p not in ("openai", "anthropic"))
_SPEC_HELP = (
    f"write it as 'openai:<model>', 'anthropic:<model>' or 'scripted' (shortcuts: {_SHORTCUTS})"
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
    provider, sep, model = spec.partition(":")
    if not sep or provider not in PROVIDERS or not model:
        raise ConfigError(f"unknown model spec {spec!r}: {_SPEC_HELP}")
    return provider, model


def make_backend(
    spec: str,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    timeout_s: float = 60.0,
    **backend_options: Any,
) -> LanguageModel:
    """The bare backend for ``spec``, without wrappers (see :func:`load_model`)."""
    provider_name, model = parse_spec(spec)
    if provider_name == "scripted":
        from silicolab.llm.backends.scripted import ScriptedModel

        return ScriptedModel(
            name=f"scripted:{model}" if model != "scripted" else "scripted", **backend_options
        )
    provider = PROVIDERS[provider_name]
    url = base_url or provider.base_url
    key = resolve_api_key(provider, api_key_env, url)
    if provider.backend == "anthropic":
        from silicolab.llm.backends.anthropic_backend import AnthropicModel

        return AnthropicModel(
            model, api_key=key, base_url=url, timeout_s=timeout_s, **backend_options
        )
    from silicolab.llm.backends.openai_backend import OpenAIChatModel

    backend_options.setdefault("json_mode", provider.json_mode)
    return OpenAIChatModel(model, api_key=key, base_url=url, timeout_s=timeout_s, **backend_options)


def load_model(
    spec: str | LanguageModel,
    *,
    base_url: str | None = None,
    api_key_env: str | None = None,
    cache_path: str | Path | None = None,
    max_concurrency: int | None = 16,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    max_retries: int = 5,
    timeout_s: float = 60.0,
    prices: Prices | Mapping[str, float] | None = None,
    **backend_options: Any,
) -> LanguageModel:
    """A ready-to-use model: metering (``model.ledger``) → exact-prompt cache (when
    ``cache_path`` is given) → limits → retry → backend.

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
    if timeout_s <= 0:
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
    model: LanguageModel = RetryingModel(backend, max_retries=max_retries)
    model = LimitedModel(
        model,
        max_concurrency=max_concurrency,
        requests_per_minute=requests_per_minute,
        tokens_per_minute=tokens_per_minute,
    )
    if cache_path is not None:
        model = CachedModel(model, SQLiteCache(cache_path))
    return MeteredModel(model, prices=prices)
