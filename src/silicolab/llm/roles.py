"""Models by role (default, scientist, subject, coordinator, judge, parser) from settings."""

from __future__ import annotations

import os
from typing import Any

from silicolab.core.config import ROLES, Settings, load_settings
from silicolab.llm.base import LanguageModel
from silicolab.llm.factory import PROVIDERS, load_model, parse_spec


def model_for_role(role: str, settings: Settings | None = None, **overrides: Any) -> LanguageModel:
    """Load the model configured for ``role`` (see :mod:`silicolab.core.config`), with the
    shared cache, and ``overrides`` applied on top of the configured options. A ``spec``
    override replaces the role's model (and drops its server-specific options)."""
    settings = settings or load_settings()
    entry = settings.model_settings(role)
    options: dict[str, Any] = {"cache_path": settings.resolved_cache_path, **entry.options()}
    spec = overrides.pop("spec", None)
    if spec is not None and spec != entry.spec:
        options = {"cache_path": options["cache_path"]}  # the role's server settings don't apply
    options.update(overrides)
    return load_model(spec or entry.spec, **options)


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
                "base_url": base_url or ("offline" if provider is None else "provider default"),
                "api_key_env": key_env,
                "key_set": None if key_env is None else bool(os.environ.get(key_env)),
            }
        )
    return rows
