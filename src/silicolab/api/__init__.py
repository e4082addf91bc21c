"""The Python front door: one facade per capability, used by the CLI and by notebooks.

Each function writes the same run directory (``run.json``, ``record.json``, reports,
figures, ``report.html``) as the matching command and returns a typed result with a short
``repr`` and an inline ``_repr_html_`` for Jupyter. Every call is synchronous and works
inside a running event loop (a notebook cell) through :func:`silicolab.core.sync.run_sync`.
Errors name the Python parameters (``conditions=0``); the CLI translates them to flags.

Layering: ``api`` sits between ``report`` and ``cli``: it may import every layer below it,
and only ``cli`` imports it. Names are resolved lazily so that importing one capability
does not import the others.
"""

from __future__ import annotations

import importlib
from typing import Any

#: public name -> the module of this package that defines it
_WHERE = {
    "run_study": "study",
    "generate_hypothesis": "study",
    "StudyResult": "study",
    "run_sim": "sim",
    "SimResult": "sim",
    "Simulation": "sim",
    "run_episode": "episode",
    "EpisodeResult": "episode",
    "run_bench": "bench",
    "BenchResult": "bench",
    "discover": "discovery",
    "DiscoveryResult": "discovery",
    "load_run": "runs",
    "replicate_study": "study_replicate",
    "ReplicationResult": "study_replicate",
}

__all__ = sorted(_WHERE)


def __getattr__(name: str) -> Any:
    """Import ``name`` from its module on first use."""
    if name not in _WHERE:
        raise AttributeError(f"module 'silicolab.api' has no attribute {name!r}")
    value = getattr(importlib.import_module(f"silicolab.api.{_WHERE[name]}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
