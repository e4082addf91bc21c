"""User configuration: ``silicolab.yaml`` plus environment variables.

Example ``silicolab.yaml``::

    models:
      default: openai:gpt-4o-mini          # a spec string ...
      scientist:                           # ... or a mapping of load_model options
        spec: anthropic:claude-sonnet-4-5
        max_concurrency: 4
      subject:
        spec: ollama:llama3.1:8b
    cache_path: .silicolab/llm-cache.sqlite   # "off" disables the exact-prompt cache
    runs_dir: runs

Environment variables override the file: ``SILICOLAB_MODEL`` (the default role's spec),
``SILICOLAB_MODEL_<ROLE>`` (e.g. ``SILICOLAB_MODEL_JUDGE``), ``SILICOLAB_CACHE``,
``SILICOLAB_RUNS_DIR``, and ``SILICOLAB_CONFIG`` (the file's path). API keys are never
read from this file: it names the environment variable that holds each key.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, PrivateAttr, ValidationError, field_validator

from silicolab.core.errors import ConfigError
from silicolab.core.files import read_user_text

#: The roles a model can be configured for. Unset roles use ``default``.
ROLES = ("default", "scientist", "subject", "participant", "coordinator", "judge", "parser")
CONFIG_FILE = "silicolab.yaml"
DEFAULT_SPEC = "scripted"
DEFAULT_CACHE = ".silicolab/llm-cache.sqlite"


class ModelSettings(BaseModel):
    """The ``load_model`` options of one role."""

    model_config = ConfigDict(extra="forbid")

    spec: str
    base_url: str | None = None
    api_key_env: str | None = None
    max_concurrency: int | None = Field(default=None, ge=1)
    requests_per_minute: float | None = Field(default=None, gt=0)
    tokens_per_minute: float | None = Field(default=None, gt=0)
    max_retries: int | None = Field(default=None, ge=0)
    timeout_s: float | None = Field(default=None, gt=0)
    prices: dict[str, float] | None = None
    json_mode: str | None = None

    @field_validator("api_key_env")
    @classmethod
    def _not_a_key(cls, value: str | None) -> str | None:
        if value and (value.startswith(("sk-", "sk_")) or len(value) > 64):
            raise ValueError(
                "looks like a key itself; put the key in an environment variable and give "
                "that variable's name here"
            )
        return value

    def options(self) -> dict[str, Any]:
        """The set options as ``load_model`` keyword arguments (spec excluded)."""
        return self.model_dump(exclude_none=True, exclude={"spec"})


class Settings(BaseModel):
    """Everything ``silicolab.yaml`` may hold."""

    model_config = ConfigDict(extra="forbid")

    models: dict[str, ModelSettings] = Field(default_factory=dict)
    cache_path: str | None = DEFAULT_CACHE
    runs_dir: str = "runs"
    source: str = Field(default="defaults", exclude=True)

    @field_validator("models", mode="before")
    @classmethod
    def _spec_strings(cls, value: Any) -> Any:
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ValueError("must be a mapping of role -> model spec")
        unknown = sorted(set(value) - set(ROLES))
        if unknown:
            raise ValueError(f"unknown role(s) {unknown}; the roles are {', '.join(ROLES)}")
        return {k: ({"spec": v} if isinstance(v, str) else v) for k, v in value.items()}

    def model_settings(self, role: str) -> ModelSettings:
        """The settings for ``role`` (falling back to ``default``, then to ``scripted``)."""
        if role not in ROLES:
            raise ConfigError(f"unknown model role {role!r}: use one of {', '.join(ROLES)}")
        return (
            self.models.get(role) or self.models.get("default") or ModelSettings(spec=DEFAULT_SPEC)
        )

    def role_source(self, role: str) -> str:
        """Where the role's model comes from: an env variable, the file, the default
        role, or the built-in default."""
        if role in self._sources:
            return self._sources[role]
        if role in self.models:
            return "file"
        return "default role" if "default" in self.models else "built-in"

    _sources: dict[str, str] = PrivateAttr(default_factory=dict)

    @property
    def resolved_cache_path(self) -> Path | None:
        if self.cache_path is None or str(self.cache_path).lower() in ("off", "none", ""):
            return None
        return Path(self.cache_path)


def _yaml_error(path: Path, err: Exception) -> ConfigError:
    mark = getattr(err, "problem_mark", None)
    where = f" line {mark.line + 1}, column {mark.column + 1}" if mark is not None else ""
    problem = getattr(err, "problem", None) or str(err).splitlines()[0]
    return ConfigError(
        f"{path}{where}: {problem}; fix the YAML syntax (indent with spaces, 'key: value')"
    )


def _validation_error(path: Path | str, err: ValidationError) -> ConfigError:
    first = err.errors()[0]
    where = ".".join(str(p) for p in first["loc"]) or "(top level)"
    msg = first["msg"].removeprefix("Value error, ")
    if first["type"] == "extra_forbidden":
        msg = "unknown setting; check its spelling against the documented keys"
    return ConfigError(f"{path}: {where}: {msg}")


def load_settings(path: str | Path | None = None, *, env: dict[str, str] | None = None) -> Settings:
    """Read ``silicolab.yaml`` (``path``, else ``$SILICOLAB_CONFIG``, else ./silicolab.yaml
    when present) and apply the environment overrides."""
    import yaml

    env = dict(os.environ if env is None else env)
    explicit = path or env.get("SILICOLAB_CONFIG")
    file = Path(explicit) if explicit else Path(CONFIG_FILE)
    raw: Any = {}
    if file.exists():
        try:
            text = read_user_text(file, what="config file", error=ConfigError)
            raw = yaml.safe_load(text) or {}
        except yaml.YAMLError as err:
            raise _yaml_error(file, err) from err
        if not isinstance(raw, dict):
            raise ConfigError(
                f"{file}: the top level must be a mapping (models:, cache_path:, ...)"
            )
    elif explicit:
        raise ConfigError(f"config file {file} does not exist; check SILICOLAB_CONFIG or --config")
    sources = {role: "file" for role in (raw.get("models") or {}) if isinstance(role, str)}
    models = dict(raw.get("models") or {}) if isinstance(raw.get("models") or {}, dict) else None
    if models is not None:
        for role in ROLES:
            var = "SILICOLAB_MODEL" if role == "default" else f"SILICOLAB_MODEL_{role.upper()}"
            if env.get(var):
                entry = models.get(role)
                models[role] = {**entry, "spec": env[var]} if isinstance(entry, dict) else env[var]
                sources[role] = f"env {var}"
        raw = {**raw, "models": models}
    if env.get("SILICOLAB_CACHE"):
        raw["cache_path"] = env["SILICOLAB_CACHE"]
    if env.get("SILICOLAB_RUNS_DIR"):
        raw["runs_dir"] = env["SILICOLAB_RUNS_DIR"]
    try:
        settings = Settings.model_validate(raw)
    except ValidationError as err:
        raise _validation_error(file, err) from err
    settings.source = str(file) if file.exists() else "defaults"
    settings._sources = sources
    return settings
