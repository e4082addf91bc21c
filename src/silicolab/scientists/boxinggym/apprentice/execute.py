"""Run one probabilistic program in the sandbox: fit, score and predict (no LLM here).

A program is Python source that defines ``build_model(data) -> pymc.Model``: ``data`` is a
pandas frame of the feature columns, plus the observation column when there are data; the
likelihood is called ``y_obs`` and is observed only when that column is present. The
sandbox script (:mod:`runner`, run as the sandbox's code) builds the model on the data,
fits it with the sampler settings of :class:`FitSettings` (seeds fixed, so the same
program gives the same fit), scores it by PSIS-LOO and WAIC, and builds it again on the
question rows to predict them (posterior-predictive mean; prior-predictive mean before any
data). An error, a refusal or a timeout becomes a :class:`ProgramRun` with ``ok=False`` and
the sandbox's report, never an exception.
"""

from __future__ import annotations

import json
import os
import tempfile
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.sync import sync_twin

RUNNER = Path(__file__).with_name("runner.py")
#: PyTensor compiles through numba in the sandbox: no C compiler subprocess is needed and
#: compiled functions are cached in ``compiledir`` across programs (docs/boxinggym.md).
BACKEND_FLAGS = "cxx=,mode=NUMBA"


def require_ppl(scientist: str = "apprentice") -> None:
    """Raise :class:`InputError` (one line, exit 2 in the CLI) naming ``scientist`` (the
    apprentice or the statistician: both fit PyMC programs) when PyMC or arviz is missing."""
    import importlib.util

    if any(importlib.util.find_spec(name) is None for name in ("pymc", "arviz")):
        raise InputError(f"the {scientist} needs PyMC and arviz: install silicolab[ppl]")


def default_compiledir() -> str:
    """A per-user compile cache shared by every program of this machine."""
    path = Path(tempfile.gettempdir()) / f"silicolab-pytensor-{os.getuid()}"
    path.mkdir(parents=True, exist_ok=True)
    return str(path)


@dataclass(frozen=True, kw_only=True)
class FitSettings:
    """How programs are fitted and contained.

    Defaults are our fast settings (2 chains × 500 draws after 500 tuning steps, numba
    backend, shared compile cache); :meth:`published` gives the paper's 3 chains × 1000
    draws after 500 tuning steps, PyTensor's C backend and a fresh compile directory per
    program. ``timeout_s``
    and ``memory_mb`` bound each sandbox run (PyMC's first compile needs room).
    """

    draws: int = 500
    tune: int = 500
    chains: int = 2
    target_accept: float = 0.9
    prior_draws: int = 1000
    seed: int = 42
    timeout_s: float = 120.0
    memory_mb: int = 4096
    compiledir: str | None = None
    backend_flags: str = BACKEND_FLAGS

    @classmethod
    def published(cls, **overrides: Any) -> FitSettings:
        """The published procedure: 3 × 1000 draws, 500 tuning, a fresh compile per program."""
        values = {"draws": 1000, "tune": 500, "chains": 3, "compiledir": "", "backend_flags": ""}
        values.update(overrides)
        return cls(**values)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready settings."""
        return asdict(self)


@dataclass
class ProgramRun:
    """What one program did: ``ok``, the sandbox's ``message`` and ``report`` (given back
    to the LLM on failure), the ``violation`` kind if it was stopped, the scores
    (``elpd_loo``, ``elpd_waic``, ``loo_se``, ``pareto_k_max``), the per-observation
    posterior-predictive summary ``ppc`` ([mean, std, median] per row), ``posterior_means``,
    ``predictions`` at the query rows, ``fit_s`` (compile + sampling + predictive draws)
    with its ``phases``, and ``elapsed_s`` (the whole sandbox run)."""

    ok: bool
    message: str = ""
    report: str = ""
    violation: str | None = None
    elpd_loo: float | None = None
    elpd_waic: float | None = None
    loo_se: float | None = None
    pareto_k_max: float | None = None
    ppc: list[list[float]] = field(default_factory=list)
    posterior_means: dict[str, float] = field(default_factory=dict)
    predictions: list[float] | None = None
    fit_s: float | None = None
    phases: dict[str, float] = field(default_factory=dict)
    elapsed_s: float = 0.0

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record."""
        return asdict(self)


def build_job(
    mode: str,
    columns: list[str],
    target: str,
    rows: list[list[float]],
    queries: list[list[float]],
    settings: FitSettings,
) -> dict[str, Any]:
    """The runner's ``job.json``: ``mode`` "prior" or "posterior", the data ``rows``
    (features then observation) and the ``queries`` (features only)."""
    if mode not in ("prior", "posterior"):
        raise InputError(f"mode must be 'prior' or 'posterior', got {mode!r}")
    return {
        "mode": mode,
        "columns": list(columns),
        "target": target,
        "data": [list(r) for r in rows],
        "queries": [list(q) for q in queries],
        "draws": settings.draws,
        "tune": settings.tune,
        "chains": settings.chains,
        "target_accept": settings.target_accept,
        "prior_draws": settings.prior_draws,
        "seed": settings.seed,
    }


def _sandbox_options(settings: FitSettings) -> dict[str, Any]:
    compiledir = default_compiledir() if settings.compiledir is None else settings.compiledir
    flags = settings.backend_flags
    writable: tuple[str, ...] = ()
    if compiledir:  # "" = a fresh directory inside the run's own working directory
        flags = (
            f"base_compiledir={compiledir},{flags}" if flags else f"base_compiledir={compiledir}"
        )
        writable = (compiledir,)
    # else: PyTensor's default compile directory lies under HOME, the run's own directory
    return {
        "timeout_s": settings.timeout_s,
        "memory_mb": settings.memory_mb,
        "env": {"PYTENSOR_FLAGS": flags},
        "writable_dirs": writable,
        # PyTensor's C backend compiles with g++ in a subprocess; the numba one needs none
        "allow_subprocess": "cxx=" not in flags,
        "collect": ("result.json",),
    }


async def arun_program(program: str, job: dict[str, Any], settings: FitSettings) -> ProgramRun:
    """Fit ``program`` on ``job`` (see :func:`build_job`) in the sandbox."""
    from silicolab.runtime.sandbox import arun_python

    result = await arun_python(
        RUNNER.read_text(encoding="utf-8"),
        inputs={"program.py": program, "job.json": json.dumps(job)},
        **_sandbox_options(settings),
    )
    run = ProgramRun(
        ok=False,
        message=result.message,
        report=result.report(),
        violation=result.violation,
        elapsed_s=float(result.elapsed_s),
    )
    payload = result.files.get("result.json")
    if not result.ok or payload is None:
        return run
    values = json.loads(payload)
    run.ok = True
    for key in ("elpd_loo", "elpd_waic", "loo_se", "pareto_k_max", "fit_s", "predictions"):
        setattr(run, key, values.get(key))
    run.ppc = values.get("ppc", [])
    run.posterior_means = values.get("posterior_means", {})
    run.phases = values.get("phases", {})
    return run


run_program = sync_twin(arun_program)
