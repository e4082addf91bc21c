"""``silicolab bench causalab``: the CausaLab crystal lab beside the paper's numbers, run
through the flow every bench shares (:func:`silicolab.cli.bench.run_bench`)."""

from __future__ import annotations

from typing import Any

from silicolab.cli.bench import (
    Connection,
    agent_name,
    choice,
    llm_needs_model,
    run_bench,
    split_list,
)
from silicolab.cli.bounds import check_jobs
from silicolab.core.errors import InputError


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
    for item in split_list(value, "suite"):
        lo, sep, hi = item.partition("..")
        if sep:
            ks = range(int(lo.removesuffix("nodes")), int(hi.removesuffix("nodes")) + 1)
            out += [f"{k}nodes" for k in ks]
        else:
            out.append(item)
    unknown = [s for s in out if s not in known]
    if unknown:
        raise InputError(f"unknown suite(s) {unknown}; choose from {', '.join(known)}")
    return out


def run_bench_causalab(
    *,
    settings: dict[str, Any],
    connection: Connection,
    jobs: int,
    executor: Any,
    **flow: Any,
) -> dict[str, Any]:
    """The CausaLab crystal lab (settings: suite, agent, model, episodes, verify,
    fidelity, seed), beside the paper's numbers."""
    from silicolab.bench.causalab_anchors import REGIMES
    from silicolab.envs import FIDELITIES

    settings["agent"] = agent_name(settings["agent"], "reference, random or llm")

    def check(s: dict[str, Any]) -> None:
        from silicolab.scientists.causalab import VERIFY_MODES

        expand_suites(s["suite"])
        choice(s["verify"], "--verify", VERIFY_MODES)
        choice(s["fidelity"], "--fidelity", FIDELITIES)
        if s.get("regime"):
            choice(s["regime"], "--regime", REGIMES)
        if s.get("observations") == 0 and s.get("interventions") == 0:
            raise InputError(
                "--observations 0 with --interventions 0 leaves nothing to learn from: give "
                "prior records, an intervention budget, or both"
            )
        llm_needs_model(s)
        check_jobs(jobs, processes=s["agent"] != "llm" and executor.kind == "local")
        if s["agent"] == "llm":  # a bad spec or a missing key: refused before the run
            connection.model("scientist", s["model"])

    def plan(s: dict[str, Any]) -> tuple[int, str]:
        suites = len(expand_suites(s["suite"]))
        units = suites * s["episodes"]
        return units, f"{suites} suites x {s['episodes']} episodes = up to {units:,} episodes"

    def execute(s: dict[str, Any], run: Any) -> tuple[Any, Any]:
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
            jobs=jobs,
            executor=executor,
            observations=s.get("observations"),
            interventions=s.get("interventions"),
        )
        model = connection.model("scientist", s["model"]) if s["agent"] == "llm" else None
        table = sync(arun_causalab(bench, model=model, run=run), twin="arun_causalab")
        regime = s.get("regime") or bench.regime
        regime = regime and regime_summary(regime, bench.observations, bench.interventions)
        table.attrs["regime"] = regime
        view = causalab_view(table, s["agent"], with_tokens=model is not None, regime=regime)
        return table, view

    slug = f"{settings['agent']}-{settings['suite']}"[:40]
    return run_bench(
        "causalab", settings, check=check, execute=execute, plan=plan, slug=slug, **flow
    )
