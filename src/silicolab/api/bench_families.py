"""The ``discovery``, ``boxinggym`` and ``episodes`` families of
:func:`silicolab.api.run_bench` (``silicolab bench discovery|boxinggym|episodes``); the
``causalab`` family is in :mod:`silicolab.api.bench_causalab`."""

from __future__ import annotations

from typing import Any

from silicolab.api.bench_flow import (
    BenchFamily,
    Resources,
    as_list,
    check_llm_scientist,
    choice,
    llm_needs_model,
    refuse_unknown,
)
from silicolab.core.errors import InputError
from silicolab.runtime.bounds import check_jobs

# -- discovery ---------------------------------------------------------------------------

DISCOVERY_DEFAULTS: dict[str, Any] = {
    "methods": "pc,exact_scp,exact,direct_lingam",
    "datasets": "all",
    "fidelity": "faithful",
    "model": None,
}


def _discovery_bench(s: dict[str, Any], res: Resources) -> Any:
    from silicolab.bench.discovery import DATASETS, DiscoveryBench

    methods = as_list(s["methods"], "methods")
    datasets = DATASETS if s["datasets"] == "all" else as_list(s["datasets"], "datasets")
    unknown = [d for d in datasets if d not in DATASETS]
    if unknown:
        refuse_unknown("datasets", s["datasets"], f"dataset(s) {unknown}", DATASETS, " or 'all'")
    fidelity = s.get("fidelity", "faithful")  # runs stored before the option: faithful
    return DiscoveryBench.build(
        methods, datasets, jobs=res.jobs, executor=res.executor, fidelity=fidelity
    )


def _discovery_check(s: dict[str, Any], res: Resources) -> None:
    from silicolab.discovery import registry

    methods = as_list(s["methods"], "methods")
    for method in methods:
        registry.get(method)
    statistical = any(m not in registry.available("llm") for m in methods)
    check_jobs(res.jobs, processes=statistical and res.executor.kind == "local")
    _discovery_bench(s, res)  # unknown datasets are refused here, before any run directory
    needs_llm = [m for m in methods if m in registry.available("llm")]
    if needs_llm and not s["model"]:
        raise InputError(
            f"{', '.join(needs_llm)} need a language model: add model= (a spec such as "
            "'openai:gpt-4o-mini'; and base_url= for a local server)",
            params=("model", "base_url"),
        )
    if needs_llm:  # a bad spec or a missing key: refused before the run
        res.connection.model("scientist", s["model"])


def _discovery_execute(s: dict[str, Any], run: Any, res: Resources) -> tuple[Any, Any]:
    from silicolab.bench.discovery import arun_discovery
    from silicolab.bench.harness import sync
    from silicolab.discovery import registry
    from silicolab.report.bench import discovery_view

    bench = _discovery_bench(s, res)
    llm = any(m in registry.available("llm") for m in bench.methods)
    model = res.connection.model("scientist", s["model"]) if llm else None
    table = sync(arun_discovery(bench, model=model, run=run), twin="arun_discovery")
    if model is not None:
        table.attrs["usage"] = model.ledger.summary()
    return table, discovery_view()


DISCOVERY = BenchFamily(
    name="discovery",
    check=_discovery_check,
    execute=_discovery_execute,
    slug=lambda s: s["methods"].replace(",", "-")[:40],
    keys=("dataset", "method"),
    defaults=DISCOVERY_DEFAULTS,
    scientists="",
)

# -- BoxingGym ---------------------------------------------------------------------------

BOXINGGYM_DEFAULTS: dict[str, Any] = {
    "env": "all",
    "agent": "reference",
    "model": None,
    "seeds": 5,
    "prior": True,
    "communicate": False,
    "participant_model": None,
    "fidelity": "fixed",
}


def boxinggym_pairs(value: str) -> Any:
    """``"all"``, or the (env, goal) pairs of ``"dugongs,death_process:infection"``
    checked against the paper's goals."""
    from silicolab.bench.boxinggym import ENV_GOALS

    if value == "all":
        return "all"
    pairs = [tuple(i.split(":", 1)) if ":" in i else (i, "direct") for i in as_list(value, "goals")]
    known = sorted(f"{e}:{g}" for e, g in ENV_GOALS)
    for pair in pairs:
        if pair not in ENV_GOALS:
            refuse_unknown("goals", value, f"environment/goal {':'.join(pair)!r}", known)
    return pairs


def _boxinggym_check(s: dict[str, Any], res: Resources) -> None:
    from silicolab.bench.boxinggym import LLM_AGENTS
    from silicolab.envs import FIDELITIES

    boxinggym_pairs(s["env"])
    choice(s["fidelity"], "fidelity", FIDELITIES)
    llm_needs_model(s)
    online = s["agent"] in LLM_AGENTS or s["communicate"] or bool(s["participant_model"])
    check_jobs(res.jobs, processes=not online and res.executor.kind == "local")
    if s["agent"] in ("apprentice", "statistician"):
        from silicolab.scientists.boxinggym.apprentice.execute import require_ppl

        require_ppl(s["agent"])
    if s["agent"] in ("llm", "apprentice"):  # models load before the run: bad specs stop
        res.connection.model("scientist", s["model"])
    if s["participant_model"]:
        res.connection.model("participant", s["participant_model"])


def _boxinggym_execute(s: dict[str, Any], run: Any, res: Resources) -> tuple[Any, Any]:
    from silicolab.bench.boxinggym import BoxingGymBench, Models, arun_boxinggym
    from silicolab.bench.harness import sync
    from silicolab.report.bench import boxinggym_view

    bench = BoxingGymBench.build(
        boxinggym_pairs(s["env"]),
        s["agent"],
        seeds=s["seeds"],
        prior=s["prior"],
        communicate=s["communicate"],
        fidelity=s["fidelity"],
        jobs=res.jobs,
        executor=res.executor,
    )
    llm = s["agent"] in ("llm", "apprentice")
    scientist = res.connection.model("scientist", s["model"]) if llm else None
    participant = s["participant_model"]
    speak = {"llm": res.connection.model("participant", participant)} if participant else None
    models = Models(scientist=scientist, env_options=speak)
    table = sync(arun_boxinggym(bench, models=models, run=run), twin="arun_boxinggym")
    return table, boxinggym_view(s["agent"], s["communicate"], table)


def _boxinggym_plan(s: dict[str, Any]) -> tuple[int, str]:
    from silicolab.bench.boxinggym import BoxingGymBench

    one = BoxingGymBench.build(boxinggym_pairs(s["env"]), s["agent"], prior=s["prior"], seeds=1)
    goals, units = len(one.pairs), len(one.pairs) * s["seeds"]
    return units, f"{goals} goals x {s['seeds']:,} seeds = {units:,} episodes"


BOXINGGYM = BenchFamily(
    name="boxinggym",
    check=_boxinggym_check,
    execute=_boxinggym_execute,
    plan=_boxinggym_plan,
    slug=lambda s: f"{s['agent']}-{s['env']}"[:40],
    keys=("env", "goal"),
    defaults=BOXINGGYM_DEFAULTS,
    scientists="reference (the greedy-EIG Bayesian designer, once boed), random, llm, "
    "apprentice or statistician",
    extra=("apprentice", "statistician"),
)

# -- any environment family ------------------------------------------------------------

#: ``seed`` (the first seed) and ``env_options`` are stored only by
#: :func:`silicolab.api.run_episode` (the command runs seeds 1..n with no options).
EPISODES_DEFAULTS: dict[str, Any] = {
    "env": "causalab",
    "agent": "reference",
    "model": None,
    "seeds": 3,
}


def _episodes_check(s: dict[str, Any], res: Resources) -> None:
    from silicolab.scientists import family_of

    for env in as_list(s["env"], "envs"):
        family_of(env)
    check_llm_scientist(s, res)


def _episodes_plan(s: dict[str, Any]) -> tuple[int, str]:
    envs = len(as_list(s["env"], "envs"))
    units = envs * s["seeds"]
    kinds = "environments" if envs > 1 else "environment"
    return units, f"{envs} {kinds} x {s['seeds']:,} seeds = {units:,} episodes"


def _episodes_execute(s: dict[str, Any], run: Any, res: Resources) -> tuple[Any, Any]:
    from silicolab.bench.episodes import EpisodesBench, arun_episodes
    from silicolab.bench.harness import sync
    from silicolab.report.bench import episodes_view

    first = s.get("seed", 1)
    bench = EpisodesBench(
        envs=tuple(as_list(s["env"], "envs")),
        agent=s["agent"],
        seeds=tuple(range(first, first + s["seeds"])),
        env_options=tuple(sorted((s.get("env_options") or {}).items())),
        jobs=res.jobs,
        executor=res.executor,
    )
    model = res.connection.model("scientist", s["model"]) if s["agent"] == "llm" else None
    table = sync(arun_episodes(bench, model=model, run=run), twin="arun_episodes")
    return table, episodes_view(table)


EPISODES = BenchFamily(
    name="episodes",
    check=_episodes_check,
    execute=_episodes_execute,
    plan=_episodes_plan,
    slug=lambda s: f"{s['agent']}-{s['env']}"[:40],
    keys=("env",),
    defaults=EPISODES_DEFAULTS,
)

__all__ = ["BOXINGGYM", "DISCOVERY", "EPISODES", "boxinggym_pairs"]
