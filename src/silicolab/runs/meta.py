"""Small helpers behind :class:`~silicolab.runs.Run`: directory names, timestamps,
library versions and the secret values a run must keep out of its files."""

from __future__ import annotations

import os
import platform
import re
import sys
from datetime import datetime
from importlib import metadata
from typing import Any

from silicolab.core.secrets import is_secret_key

#: Libraries whose versions are recorded in ``run.json`` when installed, so a result can
#: be traced to the code that produced it.
_VERSIONED = (
    "numpy",
    "scipy",
    "pandas",
    "pydantic",
    "networkx",
    "statsmodels",
    "causal-learn",
    "openai",
    "anthropic",
    "ray",
)
#: Shortest config value treated as a secret to scrub (shorter ones would erase ordinary
#: words); the threshold :func:`silicolab.core.secrets.secret_env_values` uses too.
_MIN_SECRET_LENGTH = 8


def slugify(text: str) -> str:
    """``text`` lowered and reduced to ``[a-z0-9-]``: other runs of characters become one
    ``-`` and leading/trailing dashes are dropped (``"My Study #2"`` -> ``"my-study-2"``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def now() -> datetime:
    """The current local time with its UTC offset (comparable across time zones)."""
    return datetime.now().astimezone()


def timestamp(moment: datetime) -> str:
    """ISO 8601 with microseconds and offset, as stored in ``run.json`` and events."""
    return moment.isoformat(timespec="microseconds")


def dir_name(moment: datetime, kind: str, slug: str) -> str:
    """``<YYYYmmdd-HHMMSS>-<kind>[-<slug>]``: sorts by time, readable in ``ls``."""
    parts = [moment.strftime("%Y%m%d-%H%M%S"), kind]
    if slug:
        parts.append(slug)
    return "-".join(parts)


def versions() -> dict[str, str]:
    """Python, platform, silicolab and the installed scientific/LLM libraries."""
    import silicolab

    found = {
        "python": sys.version.split()[0],
        "platform": platform.platform(),
        "silicolab": silicolab.__version__,
    }
    for name in _VERSIONED:
        try:
            found[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            continue
    return found


def config_secrets(obj: Any) -> list[str]:
    """String values stored under credential-named keys anywhere in ``obj``.

    :func:`silicolab.core.secrets.redact` hides them in ``run.json``; the run also scrubs
    them from events, records and reports in case the same value leaks into a message.
    """
    found: list[str] = []
    if isinstance(obj, dict):
        for k, v in obj.items():
            if isinstance(k, str) and is_secret_key(k) and isinstance(v, str):
                if len(v) >= _MIN_SECRET_LENGTH:
                    found.append(v)
            else:
                found.extend(config_secrets(v))
    elif isinstance(obj, list | tuple):
        for v in obj:
            found.extend(config_secrets(v))
    return found


#: Credential values seen in run configs in this process. A run reopened later in the same
#: process (a resume) keeps scrubbing them although its run.json holds only "***".
_CONFIG_SECRETS: set[str] = set()


def remember_secrets(values: list[str]) -> None:
    """Add credential values from a config to those every run in this process scrubs."""
    _CONFIG_SECRETS.update(values)


def known_secrets() -> list[str]:
    """Secrets to scrub now: credential-like environment variables plus the config
    credentials remembered in this process.

    Values are read from the environment on every call (a key may be set or rotated after
    the run began); only the scan of variable *names* is cached, and redone whenever the
    number of variables changes, because it dominated the cost of writing an event.
    """
    env = (os.environ.get(name, "") for name in _secret_env_names())
    return [*(v for v in env if len(v) >= _MIN_SECRET_LENGTH), *_CONFIG_SECRETS]


_env_names_cache: tuple[int, list[str]] = (-1, [])


def _secret_env_names() -> list[str]:
    """Names of the credential-like environment variables (see :func:`is_secret_key`)."""
    global _env_names_cache
    if _env_names_cache[0] != len(os.environ):
        _env_names_cache = (len(os.environ), [k for k in os.environ if is_secret_key(k)])
    return _env_names_cache[1]
