"""The CausaLab crystal lab beside the paper's numbers: the ``causalab`` family of
:func:`silicolab.api.run_bench` (``silicolab bench causalab``)."""

from __future__ import annotations

from typing import Any

from silicolab.api.bench_flow import (
    BenchFamily,
    Resources,
    as_list,
    check_llm_scientist,
    choice,
    refuse_unknown,
)
from silicolab.core.errors import InputError

#: The settings of a ``causalab`` run and their defaults (the command's defaults).
DEFAULTS: dict[str, Any] = {
    "suite": "3nodes..7nodes",
    "agent": "reference",
    "model": None,
    "episodes": 50,
    "verify": "none",
    "fidelity": "fixed",
    "seed": 0,
    "regime": None,
    "observations": None,
    "interventions": None,
}


def expand_suites(value: str) -> list[str]:
    """``"3nodes..7nodes"`` -> the five main suites; ``"main"`` likewise; otherwise a
    comma-separated list checked against the released suite names."""
    from silicolab.envs.causalab.suite import suite_names

    known = suite_names()
    if value in ("main", "3nodes..7nodes"):
        return [f"{k}nodes" for k in range(3, 8)]
    if value == "all":
        return list(known)
    out = []
    for item in as_list(value, "suites"):
        lo, sep, hi = item.partition("..")
        if sep:
            ks = range(int(lo.removesuffix("nodes")), int(hi.removesuffix("nodes")) + 1)
            out += [f"{k}nodes" for k in ks]
        else:
            out.append(item)
    unknown = [s for s in out if s not in known]
    if unknown:
        refuse_unknown("suites", value, f"suite(s) {unknown}", known)
    return out


def _check(s: dict[str, Any], res: Resources) -> None:
    from silicolab.bench.causalab_anchors import REGIMES
    from silicolab.envs import FIDELITIES
    from silicolab.scientists.causalab import VERIFY_MODES

    expand_suites(s["suite"])
    choice(s["verify"], "verify", VERIFY_MODES)
    choice(s["fidelity"], "fidelity", FIDELITIES)
    if s.get("regime"):
        choice(s["regime"], "regime", REGIMES)
    if s.get("observations") == 0 and s.get("interventions") == 0:
        raise InputError(
            "observations=0 with interventions=0 leaves nothing to learn from: give "
            "prior records, an intervention budget, or both",
            params=("observations", "interventions"),
        )
    check_llm_scientist(s, res)


def _plan(s: dict[str, Any]) -> tuple[int, str]:
    suites = len(expand_suites(s["suite"]))
    units = suites * s["episodes"]
    return units, f"{suites} suites x {s['episodes']} episodes = up to {units:,} episodes"


def _execute(s: dict[str, Any], run: Any, res: Resources) -> tuple[Any, Any]:
    from silicolab.bench.causalab import CausaLabBench, arun_causalab, regime_summary
    from silicolab.bench.harness import sync
    from silicolab.report.bench import causalab_view

    bench = CausaLabBench(
        suites=tuple(expand_suites(s["suite"])),
        agent=s["agent"],
        episodes=s["episodes"],
        verify=s["verify"],
        fidelity=s["fidelity"],
        seed=s["seed"],
        jobs=res.jobs,
        executor=res.executor,
        observations=s.get("observations"),
        interventions=s.get("interventions"),
    )
    model = res.connection.model("scientist", s["model"]) if s["agent"] == "llm" else None
    table = sync(arun_causalab(bench, model=model, run=run), twin="arun_causalab")
    regime = s.get("regime") or bench.regime
    regime = regime and regime_summary(regime, bench.observations, bench.interventions)
    table.attrs["regime"] = regime
    view = causalab_view(table, s["agent"], with_tokens=model is not None, regime=regime)
    return table, view


CAUSALAB = BenchFamily(
    name="causalab",
    check=_check,
    execute=_execute,
    plan=_plan,
    slug=lambda s: f"{s['agent']}-{s['suite']}"[:40],
    keys=("suite",),
    defaults=DEFAULTS,
)

__all__ = ["CAUSALAB", "DEFAULTS", "expand_suites"]
