"""Models by role from settings: each part of silicolab asks for the role it plays.

``scientist`` designs experiments or discovers graphs (CausaLab, BoxingGym and MAC
scientists, the BoxingGym novice); ``subject`` speaks for simulated people in studies and
simulations; ``participant`` for the simulated participants of an environment (BoxingGym's
emotion and moral machines); ``coordinator`` runs conversations; ``judge`` decides debates;
``parser`` turns free text into typed answers; ``default`` is the fallback of every unset
role. See ``docs/llm.md``.
"""

from __future__ import annotations

import os
from typing import Any

from silicolab.core.config import ROLES, Settings, load_settings
from silicolab.core.errors import ConfigError
from silicolab.llm.base import LanguageModel
from silicolab.llm.factory import PROVIDERS, load_model, parse_spec

#: Options that describe the role's server or model, not how the client calls it: a spec
#: override for another provider drops them (the configured server is not the new one's).
SERVER_OPTIONS = ("base_url", "api_key_env", "json_mode", "prices")


def model_for_role(role: str, settings: Settings | None = None, **overrides: Any) -> LanguageModel:
    """Load the model configured for ``role`` (see :mod:`silicolab.core.config`), with the
    shared cache, and ``overrides`` applied on top of the configured options.

    A ``spec`` override (the command line's ``--model``) keeps the role's client settings
    (``max_concurrency``, ``timeout_s``, ``max_retries``, per-minute limits); it keeps the
    server settings too when it names the same provider, and drops them otherwise."""
    settings = settings or load_settings()
    entry = settings.model_settings(role)
    options: dict[str, Any] = {"cache_path": settings.resolved_cache_path, **entry.options()}
    spec = overrides.pop("spec", None)
    if spec is not None and spec != entry.spec and not _same_provider(spec, entry.spec):
        for name in SERVER_OPTIONS:
            options.pop(name, None)
    options.update(overrides)
    return load_model(spec or entry.spec, **options)


def _same_provider(spec: str, other: str) -> bool:
    try:
        return parse_spec(spec)[0] == parse_spec(other)[0]
    except ConfigError:
        return False


def role_model(
    role: str,
    settings: Settings | None = None,
    *,
    spec: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
) -> LanguageModel:
    """The model of ``role`` with the command-line overrides that were given (None: the
    configured value). A command that loads models for several roles calls this once per
    role, so a ``--model`` meant for the scientist never reaches the subjects."""
    overrides: dict[str, Any] = {}
    if spec:
        overrides["spec"] = spec
    if base_url:
        overrides["base_url"] = base_url
    if api_key_env:
        overrides["api_key_env"] = api_key_env
    return model_for_role(role, settings, **overrides)


def describe_roles(settings: Settings | None = None) -> list[dict[str, Any]]:
    """For ``silicolab models``: each role's spec, server, key variable and whether that
    variable is set. Key *values* are never included."""
    settings = settings or load_settings()
    rows = []
    for role in ROLES:
        entry = settings.model_settings(role)
        try:
            provider_name, _ = parse_spec(entry.spec)
            provider = PROVIDERS.get(provider_name)
        except Exception as err:  # shown in the table rather than aborting the listing
            rows.append({"role": role, "spec": entry.spec, "error": str(err)})
            continue
        key_env = entry.api_key_env or (provider.key_env if provider else None)
        base_url = entry.base_url or (provider.base_url if provider else None)
        rows.append(
            {
                "role": role,
                "spec": entry.spec,
                "source": settings.role_source(role),
                "base_url": base_url or _where(provider),
                "api_key_env": key_env,
                "key_set": None if key_env is None else bool(os.environ.get(key_env)),
            }
        )
    return rows


def _where(provider: Any) -> str:
    if provider is None:
        return "offline"
    if provider.backend == "local":
        return "this machine (silicolab serve local)"
    return "provider default"
