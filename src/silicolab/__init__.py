"""silicolab: an in-silico laboratory for causal science with language-model agents.

``import silicolab as sl`` is the Python front door: ``sl.run_study``, ``sl.run_sim``,
``sl.run_episode``, ``sl.run_bench``, ``sl.discover``, ``sl.generate_hypothesis`` and
``sl.load_run`` (:mod:`silicolab.api`) write the same run directories and pages as the
command line and return typed results that show themselves in Jupyter; ``sl.Simulation``
is a simulation as a value (load, edit, run, save). They are imported on first use, so
``import silicolab`` stays cheap.
"""

from __future__ import annotations

from typing import Any

__version__ = "0.1.0"

#: The lazily imported public names (each from :mod:`silicolab.api`).
__all__ = [
    "BenchResult",
    "DiscoveryResult",
    "EpisodeResult",
    "ReplicationResult",
    "SimResult",
    "Simulation",
    "StudyResult",
    "__version__",
    "discover",
    "generate_hypothesis",
    "load_run",
    "replicate_study",
    "run_bench",
    "run_episode",
    "run_sim",
    "run_study",
]


def __getattr__(name: str) -> Any:
    """Import the public names from :mod:`silicolab.api` on first use."""
    if name in __all__ and name != "__version__":
        from silicolab import api

        return getattr(api, name)
    raise AttributeError(f"module 'silicolab' has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
