"""``silicolab bench ...``: one flow for every bench, beside the published tables.

Each command validates its fixed-value options before any run directory exists, opens the
run with :func:`silicolab.runs.open_run` (``--resume`` continues the latest run of that
bench with its stored settings and refuses typed options that contradict them; a finished
run is never reopened: ``--resume`` then shows its results), builds the bench's frozen
spec from the settings in use, loads each model by its role, runs the bench through
:mod:`silicolab.bench.harness`, and renders with :mod:`silicolab.report.bench`. A run
whose every step failed in some unit ends ``degraded``: the health line goes to stderr
and the command exits :data:`~silicolab.runs.DEGRADED_EXIT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import typer

from silicolab.cli.flow import emit, runs_root, write_html_report
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.core.files import dumps

#: Old scientist names the CLI still accepts, with the one-line note it prints.
AGENT_ALIASES = {"boed": "reference", "react": "llm"}


@dataclass(frozen=True)
class Connection:
    """How to reach the models: the config file and the command-line overrides of the
    scientist's server (they never reach another role)."""

    config: Path | None = None
    base_url: str | None = None
    api_key_env: str | None = None

    def model(self, role: str, spec: str | None) -> Any:
        from silicolab.llm.roles import role_model

        server = {"base_url": self.base_url, "api_key_env": self.api_key_env}
        if role != "scientist":
            server = {}
        return role_model(role, load_settings(self.config), spec=spec, **server)


def typed_options(ctx: Any) -> set[str]:
    """The parameter names the user typed (command line or environment variable).

    Compares the parameter source by name, so it works with typer's own copy of click as
    well as with click."""
    typed = {"COMMANDLINE", "ENVIRONMENT"}
    return {
        p.name
        for p in ctx.command.params
        if p.name and getattr(ctx.get_parameter_source(p.name), "name", None) in typed
    }


def split_list(value: str, what: str) -> list[str]:
    """``"pc, exact"`` -> ``["pc", "exact"]``; an empty list is an error."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise InputError(f"--{what} is empty: give a comma-separated list")
    return items


def agent_name(agent: str, known: str, extra: tuple[str, ...] = ()) -> str:
    """``agent`` checked against reference/random/llm and ``extra`` (old names accepted
    with a note)."""
    if agent in AGENT_ALIASES:
        typer.echo(f"note: --agent {agent} is now called {AGENT_ALIASES[agent]}", err=True)
        agent = AGENT_ALIASES[agent]
    if agent not in ("reference", "random", "llm", *extra):
        raise InputError(f"--agent {agent!r}: use {known}")
    return agent


def choice(value: str, option: str, allowed: Iterable[str]) -> str:
    """``value`` if it is one of ``allowed``, else an InputError naming them."""
    allowed = list(allowed)
    if value not in allowed:
        raise InputError(f"{option} {value!r}: use one of {', '.join(allowed)}")
    return value


def llm_needs_model(settings: Mapping[str, Any]) -> None:
    """``--agent llm`` (and ``apprentice``) plays the scientist with the model the user
    names: refuse it without ``--model``."""
    agent = settings["agent"]
    if agent in ("llm", "apprentice") and not settings["model"]:
        raise InputError(f"--agent {agent} needs --model SPEC (and --base-url for a local server)")


def run_bench(
    name: str,
    settings: dict[str, Any],
    *,
    check: Callable[[dict[str, Any]], None],
    execute: Callable[[dict[str, Any], Any], tuple[Any, Any]],
    explicit: Iterable[str],
    resume: bool,
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
    slug: str,
) -> dict[str, Any]:
    """The flow every bench command shares (module docstring). ``check(settings)``
    validates; ``execute(settings, run)`` returns ``(table, view)``."""
    from silicolab.runs import Run, open_run

    check(settings)
    root = runs_root(runs_dir, config)
    kind = f"bench-{name}"
    if resume:
        latest = Run.latest(root, kind=kind)
        if latest is not None and latest.status == "finished":
            return _show_finished(latest, settings, explicit, json_out)
    run, used = open_run(root, kind, settings=settings, explicit=explicit, resume=resume, slug=slug)
    check(used)
    with run:
        table, view = execute(used, run)
        rows = table_rows(table)
        health = table.attrs.get("health")
        record = {"settings": used, "rows": rows, "usage": table.attrs.get("usage")}
        if health is not None:
            record["health"] = health.to_dict()
        run.write_record(record)
        run.write_report(view.markdown(table))
        status = run.finish(health)
        write_html_report(run)
    emit(
        {"run_dir": str(run.path), "status": status, "rows": rows},
        json_out=json_out,
        show=lambda: view.print(table, run.path),
        status=status,
        health=health,
    )
    return {"run_dir": str(run.path), "rows": rows}


def table_rows(table: Any) -> list[dict[str, Any]]:
    """The bench table as JSON-ready rows: missing and non-finite numbers are ``None``
    and each row whose figures are ``None`` says why in ``null_reasons`` (see
    :func:`silicolab.bench.harness.null_reasons`)."""
    from silicolab.bench.harness import null_reasons
    from silicolab.core.files import finite

    rows = finite(table.to_dict(orient="records"))
    for row in rows:
        reasons = null_reasons(row)
        if reasons:
            row["null_reasons"] = reasons
    return rows


def _show_finished(
    run: Any, settings: Mapping[str, Any], explicit: Iterable[str], json_out: bool
) -> dict[str, Any]:
    """``--resume`` on a finished run: nothing to do; its stored rows are shown, the run
    is left as it is. Typed options that differ from its settings are refused."""
    stored = run.config
    differ = [n for n in sorted(set(explicit)) if n in settings and settings[n] != stored.get(n)]
    if differ:
        given = "; ".join(f"{n}={settings[n]} (stored: {stored.get(n)})" for n in differ)
        raise InputError(
            f"the latest run {run.path} is finished with other settings ({given}); "
            "start a new run without --resume"
        )
    rows = (run.read_record() or {}).get("rows", [])
    typer.echo(f"note: {run.path} is finished; nothing to resume, showing its results", err=True)
    if json_out:
        typer.echo(dumps({"run_dir": str(run.path), "status": run.status, "rows": rows}))
    else:
        typer.echo(run.path.joinpath("report.md").read_text(encoding="utf-8"))
    return {"run_dir": str(run.path), "rows": rows}


# -- discovery ---------------------------------------------------------------------------


def run_bench_discovery(
    *,
    settings: dict[str, Any],
    connection: Connection,
    jobs: int,
    executor: Any,
    **flow: Any,
) -> dict[str, Any]:
    """Causal discovery on the SCP/MAC datasets (settings: methods, datasets, model)."""

    def check(s: dict[str, Any]) -> None:
        from silicolab.discovery import registry

        methods = split_list(s["methods"], "methods")
        for method in methods:
            registry.get(method)
        if s["datasets"] != "all":
            split_list(s["datasets"], "datasets")
        needs_llm = [m for m in methods if m in registry.available("llm")]
        if needs_llm and not s["model"]:
            raise InputError(
                f"{', '.join(needs_llm)} need a language model: add --model SPEC "
                "(and --base-url for a local server)"
            )

    def execute(s: dict[str, Any], run: Any) -> tuple[Any, Any]:
        from silicolab.bench.discovery import DATASETS, DiscoveryBench, arun_discovery
        from silicolab.bench.harness import sync
        from silicolab.discovery import registry
        from silicolab.report.bench import discovery_view

        methods = split_list(s["methods"], "methods")
        datasets = DATASETS if s["datasets"] == "all" else split_list(s["datasets"], "datasets")
        bench = DiscoveryBench.build(methods, datasets, jobs=jobs, executor=executor)
        llm = any(m in registry.available("llm") for m in methods)
        model = connection.model("scientist", s["model"]) if llm else None
        table = sync(arun_discovery(bench, model=model, run=run), twin="arun_discovery")
        if model is not None:
            table.attrs["usage"] = model.ledger.summary()
        return table, discovery_view()

    slug = settings["methods"].replace(",", "-")[:40]
    return run_bench("discovery", settings, check=check, execute=execute, slug=slug, **flow)


# -- CausaLab ----------------------------------------------------------------------------


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
    from silicolab.envs import FIDELITIES

    settings["agent"] = agent_name(settings["agent"], "reference, random or llm")

    def check(s: dict[str, Any]) -> None:
        from silicolab.scientists.causalab import VERIFY_MODES

        expand_suites(s["suite"])
        choice(s["verify"], "--verify", VERIFY_MODES)
        choice(s["fidelity"], "--fidelity", FIDELITIES)
        llm_needs_model(s)

    def execute(s: dict[str, Any], run: Any) -> tuple[Any, Any]:
        from silicolab.bench.causalab import CausaLabBench, arun_causalab
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
        )
        model = connection.model("scientist", s["model"]) if s["agent"] == "llm" else None
        table = sync(arun_causalab(bench, model=model, run=run), twin="arun_causalab")
        return table, causalab_view(table, s["agent"], with_tokens=model is not None)

    slug = f"{settings['agent']}-{settings['suite']}"[:40]
    return run_bench("causalab", settings, check=check, execute=execute, slug=slug, **flow)


# -- BoxingGym ---------------------------------------------------------------------------


def boxinggym_pairs(value: str) -> Any:
    """``"all"``, or the (env, goal) pairs of ``"dugongs,death_process:infection"``
    checked against the paper's goals."""
    from silicolab.bench.boxinggym import ENV_GOALS

    if value == "all":
        return "all"
    pairs = [
        tuple(i.split(":", 1)) if ":" in i else (i, "direct") for i in split_list(value, "env")
    ]
    known = sorted(f"{e}:{g}" for e, g in ENV_GOALS)
    for pair in pairs:
        if pair not in ENV_GOALS:
            raise InputError(
                f"unknown environment/goal {':'.join(pair)!r}; choose from {', '.join(known)}"
            )
    return pairs


def run_bench_boxinggym(
    *,
    settings: dict[str, Any],
    connection: Connection,
    jobs: int,
    executor: Any,
    **flow: Any,
) -> dict[str, Any]:
    """BoxingGym (settings: env, agent, model, seeds, prior, communicate,
    participant_model, fidelity), beside the paper's Tables 1-3."""
    from silicolab.envs import FIDELITIES

    settings["agent"] = agent_name(
        settings["agent"],
        "reference (the greedy-EIG Bayesian designer, once boed), random, llm, apprentice or "
        "statistician",
        extra=("apprentice", "statistician"),
    )

    def check(s: dict[str, Any]) -> None:
        boxinggym_pairs(s["env"])
        choice(s["fidelity"], "--fidelity", FIDELITIES)
        llm_needs_model(s)
        if s["agent"] in ("apprentice", "statistician"):
            from silicolab.scientists.boxinggym.apprentice.execute import require_ppl

            require_ppl()

    def execute(s: dict[str, Any], run: Any) -> tuple[Any, Any]:
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
            jobs=jobs,
            executor=executor,
        )
        llm = s["agent"] in ("llm", "apprentice")
        scientist = connection.model("scientist", s["model"]) if llm else None
        participant = s["participant_model"]
        speak = {"llm": connection.model("participant", participant)} if participant else None
        models = Models(scientist=scientist, env_options=speak)
        table = sync(arun_boxinggym(bench, models=models, run=run), twin="arun_boxinggym")
        return table, boxinggym_view(s["agent"], s["communicate"])

    slug = f"{settings['agent']}-{settings['env']}"[:40]
    return run_bench("boxinggym", settings, check=check, execute=execute, slug=slug, **flow)


# -- any environment family ------------------------------------------------------------


def run_bench_episodes(
    *,
    settings: dict[str, Any],
    connection: Connection,
    jobs: int,
    executor: Any,
    **flow: Any,
) -> dict[str, Any]:
    """Any registered environment family (settings: env, agent, model, seeds)."""
    settings["agent"] = agent_name(settings["agent"], "reference, random or llm")

    def check(s: dict[str, Any]) -> None:
        from silicolab.scientists import family_of

        for env in split_list(s["env"], "env"):
            family_of(env)
        llm_needs_model(s)

    def execute(s: dict[str, Any], run: Any) -> tuple[Any, Any]:
        from silicolab.bench.episodes import EpisodesBench, arun_episodes
        from silicolab.bench.harness import sync
        from silicolab.report.bench import episodes_view

        bench = EpisodesBench(
            envs=tuple(split_list(s["env"], "env")),
            agent=s["agent"],
            seeds=tuple(range(1, s["seeds"] + 1)),
            jobs=jobs,
            executor=executor,
        )
        model = connection.model("scientist", s["model"]) if s["agent"] == "llm" else None
        table = sync(arun_episodes(bench, model=model, run=run), twin="arun_episodes")
        return table, episodes_view(table)

    slug = f"{settings['agent']}-{settings['env']}"[:40]
    return run_bench("episodes", settings, check=check, execute=execute, slug=slug, **flow)
