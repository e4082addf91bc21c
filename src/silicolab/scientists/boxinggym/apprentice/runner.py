"""The script that fits one probabilistic program inside the sandbox (run, never imported).

It reads ``job.json`` and ``program.py`` from its working directory, builds the program's
model with ``build_model(data)``, and writes ``result.json``: in prior mode the prior-
predictive mean of ``y_obs`` at the query rows; in posterior mode the NUTS fit, PSIS-LOO and
WAIC of ``y_obs``, a per-observation posterior-predictive summary, the posterior means and
the posterior-predictive mean at the query rows. Only the standard library, numpy, pandas,
pymc and arviz are used; everything it writes stays in the working directory.
"""

from __future__ import annotations

import json
import math
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

TARGET = "y_obs"


def _round(value: float, digits: int = 2) -> float:
    """``value`` to ``digits`` significant figures (the published summaries' rounding)."""
    if not math.isfinite(value) or value == 0:
        return float(value)
    return float(round(value, digits - 1 - math.floor(math.log10(abs(value)))))


def _import_pymc_without_probes() -> None:
    """Import PyMC without the subprocesses PyTensor starts at import time, which the
    sandbox refuses: ``platform.processor()`` (``uname -p``) is answered from
    ``os.uname()``, and with ``cxx=`` (the numba backend) its ``g++ -v`` probe is told
    that there is no compiler."""
    import os
    import platform
    import subprocess

    processor = getattr(platform, "_Processor", None)
    if processor is not None:
        processor.get = classmethod(lambda cls: platform.machine())
    if "cxx=," not in os.environ.get("PYTENSOR_FLAGS", "") + ",":
        import pymc

        return

    def no_compiler(*args: Any, **kwargs: Any) -> Any:
        raise FileNotFoundError("no C compiler in the numba backend")

    popen = subprocess.Popen
    subprocess.Popen = no_compiler  # type: ignore[assignment, misc]
    try:
        import pymc  # noqa: F401
    finally:
        subprocess.Popen = popen  # type: ignore[misc]


def _draws(dataset: Any) -> np.ndarray:
    """``y_obs`` draws as (samples, rows)."""
    values = np.asarray(dataset[TARGET].values, dtype=float)
    return values.reshape(values.shape[0] * values.shape[1], -1)


def _load_program() -> Any:
    namespace: dict[str, Any] = {"__name__": "program"}
    with open("program.py", encoding="utf-8") as f:
        source = f.read()
    exec(compile(source, "program.py", "exec"), namespace)  # the sandboxed program
    build = namespace.get("build_model")
    if not callable(build):
        raise NameError("the program defines no function build_model(data)")
    return build


def _model(build: Any, frame: pd.DataFrame) -> Any:
    import pymc as pm

    model = build(frame.copy())
    if not isinstance(model, pm.Model):
        raise TypeError(f"build_model must return a pymc.Model, got {type(model).__name__}")
    if TARGET not in model.named_vars:
        raise NameError(f"the model has no variable named {TARGET!r} (name the likelihood so)")
    return model


def _predict(draws: np.ndarray, n_rows: int) -> list[float]:
    means = draws.mean(axis=0)
    if means.size == 1 and n_rows != 1:
        means = np.repeat(means, n_rows)
    if means.size != n_rows:
        raise ValueError(f"y_obs has {means.size} values for {n_rows} query rows")
    return [float(v) for v in means]


def _prior(job: dict[str, Any], build: Any, queries: pd.DataFrame) -> dict[str, Any]:
    import pymc as pm

    model = _model(build, queries)
    with model:
        prior = pm.sample_prior_predictive(draws=job["prior_draws"], random_seed=job["seed"])
    group = prior.prior_predictive if "prior_predictive" in prior.groups() else prior.prior
    return {"predictions": _predict(_draws(group), len(queries))}


def _posterior(job: dict[str, Any], build: Any, data: pd.DataFrame, queries: pd.DataFrame):
    import arviz as az
    import pymc as pm

    model = _model(build, data)
    began = time.perf_counter()
    with model:
        idata = pm.sample(
            draws=job["draws"],
            tune=job["tune"],
            chains=job["chains"],
            cores=1,
            target_accept=job["target_accept"],
            random_seed=job["seed"],
            progressbar=False,
            compute_convergence_checks=False,
        )
        phases = {"sample_s": time.perf_counter() - began}
        pm.compute_log_likelihood(idata, var_names=[TARGET], progressbar=False)
        phases["log_likelihood_s"] = time.perf_counter() - began - sum(phases.values())
        ppc = pm.sample_posterior_predictive(
            idata, var_names=[TARGET], random_seed=job["seed"] + 1, progressbar=False
        )
        phases["ppc_s"] = time.perf_counter() - began - sum(phases.values())
    fit_s = time.perf_counter() - began
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        loo = az.loo(idata, var_name=TARGET)
        waic = az.waic(idata, var_name=TARGET)
    draws = _draws(ppc.posterior_predictive)
    free = [v.name for v in model.free_RVs]
    means = {}
    for name in free:
        flat = np.asarray(idata.posterior[name].mean(("chain", "draw")).values).reshape(-1)
        for i, v in enumerate(flat[:12]):
            means[name if flat.size == 1 else f"{name}[{i}]"] = _round(float(v), 3)
    out: dict[str, Any] = {
        "elpd_loo": float(loo.elpd_loo),
        "loo_se": float(loo.se),
        "elpd_waic": float(waic.elpd_waic),
        "pareto_k_max": float(np.nanmax(loo.pareto_k.values)),
        "fit_s": fit_s,
        "phases": phases,
        "posterior_means": means,
        "ppc": [
            [_round(float(a)), _round(float(b)), _round(float(c))]
            for a, b, c in zip(draws.mean(0), draws.std(0), np.median(draws, 0), strict=True)
        ],
    }
    if len(queries):
        out["predictions"] = _query(job, build, idata, free, queries)
    return out


def _query(job: dict[str, Any], build: Any, idata: Any, free: list[str], queries: pd.DataFrame):
    import pymc as pm

    model = _model(build, queries)
    keep = [name for name in free if name in model.named_vars]
    with model:
        pred = pm.sample_posterior_predictive(
            idata.posterior[keep], var_names=[TARGET], random_seed=job["seed"] + 2,
            progressbar=False,
        )  # fmt: skip
    return _predict(_draws(pred.posterior_predictive), len(queries))


def main() -> None:
    """Fit the program described by ``job.json`` and write ``result.json``."""
    began = time.perf_counter()
    with open("job.json", encoding="utf-8") as f:
        job = json.load(f)
    _import_pymc_without_probes()

    build = _load_program()
    data = pd.DataFrame(job["data"], columns=job["columns"] + [job["target"]])
    queries = pd.DataFrame(job["queries"], columns=job["columns"])
    if job["mode"] == "prior":
        result = _prior(job, build, queries)
    else:
        result = _posterior(job, build, data, queries)
    result["elapsed_s"] = time.perf_counter() - began
    with open("result.json", "w", encoding="utf-8") as f:
        json.dump(result, f)


if __name__ == "__main__":
    main()
