"""Shared pieces of the apprentice tests: the PyMC requirement, tiny fit settings, and
programs for dugongs (one right, one wrong)."""

from __future__ import annotations

import importlib.util
import os

import pytest

from silicolab.scientists.boxinggym.apprentice.execute import FitSettings

#: Tiny fits (seconds, not minutes); the compile cache is the per-user one that every
#: sandbox run shares, so PyMC compiles each graph once per machine.
TINY = FitSettings(draws=150, tune=150, chains=2, prior_draws=200, timeout_s=120)

DUGONG_PROGRAM = """import pymc as pm


def build_model(data):
    with pm.Model() as model:
        x = pm.Data("x", data["x"].to_numpy())
        alpha = pm.Normal("alpha", 2.0, 0.5)
        beta = pm.Normal("beta", 1.5, 0.5)
        lam = pm.Uniform("lam", 0.0, 1.0)
        sigma = pm.HalfNormal("sigma", 0.5)
        observed = data["Y"].to_numpy() if "Y" in data else None
        pm.Normal("y_obs", alpha - beta * lam**x, sigma, observed=observed, shape=x.shape)
    return model
"""

#: Wrong on purpose: a straight line through the origin with a far too small noise.
WRONG_PROGRAM = """import pymc as pm


def build_model(data):
    with pm.Model() as model:
        x = pm.Data("x", data["x"].to_numpy())
        slope = pm.Normal("slope", 0.0, 1.0)
        observed = data["Y"].to_numpy() if "Y" in data else None
        pm.Normal("y_obs", slope * x, 0.05, observed=observed, shape=x.shape)
    return model
"""


def require_pymc() -> None:
    """Skip the calling module without PyMC, unless ``SILICOLAB_REQUIRE_PPL=1`` (CI)."""
    missing = [n for n in ("pymc", "arviz") if importlib.util.find_spec(n) is None]
    if not missing:
        return
    if os.environ.get("SILICOLAB_REQUIRE_PPL") == "1":
        pytest.fail(f"SILICOLAB_REQUIRE_PPL=1 but {missing} not installed", pytrace=False)
    pytest.skip("PyMC/arviz not installed (pip install silicolab[ppl])", allow_module_level=True)


def reply(program: str, note: str = "Here is the program.") -> str:
    """A statistician's reply holding ``program``."""
    return f"{note}\n```python\n{program}```\n"
