"""``silicolab bench ...``: one flow for every bench, beside the published tables.

Each command validates its fixed-value options and loads the models it will use before
any run directory exists, opens the run with :func:`silicolab.runs.open_run`
(``--resume`` continues the latest unfinished run of that bench with its stored settings
and refuses typed options that contradict them; a finished run is never reopened: when
every run is finished ``--resume`` shows the latest one's results; ``--retry-failed``
also reruns the episodes that failed), builds the bench's frozen spec from the settings
in use, runs the bench through :mod:`silicolab.bench.harness`, and renders with
:mod:`silicolab.report.bench`. A run whose every step failed in some unit ends
``degraded``: the health line goes to stderr and the command exits
:data:`~silicolab.runs.DEGRADED_EXIT`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import typer

from silicolab.cli.bounds import check_jobs, confirm_units
from silicolab.cli.flow import emit, runs_root, shown_run_dir, write_html_report
from silicolab.cli.resume_target import resume_target
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.core.files import dumps

#: Old scientist names the CLI still accepts, with the one-line note it prints.
AGENT_ALIASES = {"boed": "reference", "react": "llm"}


@dataclass(frozen=True)
class Connection:
    """How to reach the models: the config file and the command-line overrides of the
    scientist's server (they never reach another role).

    A model is loaded once per role and spec: the benches' ``check`` loads the models
    it will use before any run directory exists (an unknown spec or a missing key is
    refused there), and ``execute`` gets the same objects back."""

    config: Path | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    _loaded: dict[tuple[str, str | None], Any] = field(
        default_factory=dict, compare=False, repr=False
    )

    def model(self, role: str, spec: str | None) -> Any:
        from silicolab.llm.roles import role_model

        if (role, spec) not in self._loaded:
            server = {"base_url": self.base_url, "api_key_env": self.api_key_env}
            if role != "scientist":
                server = {}
            self._loaded[role, spec] = role_model(
                role, load_settings(self.config), spec=spec, **server
            )
        return self._loaded[role, spec]


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
    plan: Callable[[dict[str, Any]], tuple[int, str]] | None = None,
    yes: bool = False,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """The flow every bench command shares (module docstring). ``check(settings)``
    validates; ``execute(settings, run)`` returns ``(table, view)``; ``plan(settings)``
    counts a new run's units and says what they are: a large run needs ``yes`` (or a
    yes at the prompt, :func:`~silicolab.cli.bounds.confirm_units`); ``retry_failed``
    resumes and reruns the units that failed."""
    from silicolab.runs import Run, open_run

    check(settings)
    if plan is not None and not resume:
        confirm_units(*plan(settings), yes=yes)
    root = runs_root(runs_dir, config)
    kind = f"bench-{name}"
    target = resume_target(resume or retry_failed)
    if target is True and not retry_failed and Run.latest(root, kind, unfinished=True) is None:
        latest = Run.latest(root, kind=kind)  # nothing to resume: show the finished results
        if latest is not None and latest.status == "finished":
            return _show_finished(latest, settings, explicit, json_out)
    run, used = open_run(
        root, kind, settings=settings, explicit=explicit, resume=target, slug=slug,
        retry_failed=retry_failed,
    )  # fmt: skip
    check(used)
    with run:
        table, view = execute(used, run)
        rows = table_rows(table)
        health = table.attrs.get("health")
        record = {"settings": used, "rows": rows, "usage": table.attrs.get("usage")}
        if table.attrs.get("regime"):  # bench causalab --regime: the regime's anchors
            record["regime"] = table.attrs["regime"]
        if health is not None:
            record["health"] = health.to_dict()
        run.write_record(record)
        run.write_report(view.markdown(table))
        status = run.finish(health)
        write_html_report(run)
    payload = {"run_dir": str(shown_run_dir(run.path)), "status": status, "rows": rows}
    if record.get("regime"):
        payload["regime"] = record["regime"]
    emit(
        payload,
        json_out=json_out,
        show=lambda: view.print(table, shown_run_dir(run.path)),
        status=status,
        health=health,
    )
    return {"run_dir": str(shown_run_dir(run.path)), "rows": rows}


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
    rows, run_dir = (run.read_record() or {}).get("rows", []), str(shown_run_dir(run.path))
    typer.echo(f"note: {run_dir} is finished; nothing to resume, showing its results", err=True)
    if json_out:
        typer.echo(dumps({"run_dir": run_dir, "status": run.status, "rows": rows}))
    else:
        typer.echo(run.path.joinpath("report.md").read_text(encoding="utf-8"))
    return {"run_dir": run_dir, "rows": rows}


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

    def bench_of(s: dict[str, Any]) -> Any:
        from silicolab.bench.discovery import DATASETS, DiscoveryBench

        methods = split_list(s["methods"], "methods")
        datasets = DATASETS if s["datasets"] == "all" else split_list(s["datasets"], "datasets")
        fidelity = s.get("fidelity", "faithful")  # runs stored before --fidelity: faithful
        return DiscoveryBench.build(
            methods, datasets, jobs=jobs, executor=executor, fidelity=fidelity
        )

    def check(s: dict[str, Any]) -> None:
        from silicolab.discovery import registry

        methods = split_list(s["methods"], "methods")
        for method in methods:
            registry.get(method)
        statistical = any(m not in registry.available("llm") for m in methods)
        check_jobs(jobs, processes=statistical and executor.kind == "local")
        bench_of(s)  # unknown datasets are refused here, before any run directory
        needs_llm = [m for m in methods if m in registry.available("llm")]
        if needs_llm and not s["model"]:
            raise InputError(
                f"{', '.join(needs_llm)} need a language model: add --model SPEC "
                "(and --base-url for a local server)"
            )
        if needs_llm:  # a bad spec or a missing key: refused before the run
            connection.model("scientist", s["model"])

    def execute(s: dict[str, Any], run: Any) -> tuple[Any, Any]:
        from silicolab.bench.discovery import arun_discovery
        from silicolab.bench.harness import sync
        from silicolab.discovery import registry
        from silicolab.report.bench import discovery_view

        bench = bench_of(s)
        llm = any(m in registry.available("llm") for m in bench.methods)
        model = connection.model("scientist", s["model"]) if llm else None
        table = sync(arun_discovery(bench, model=model, run=run), twin="arun_discovery")
        if model is not None:
            table.attrs["usage"] = model.ledger.summary()
        return table, discovery_view()

    slug = settings["methods"].replace(",", "-")[:40]
    return run_bench("discovery", settings, check=check, execute=execute, slug=slug, **flow)


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
        from silicolab.bench.boxinggym import LLM_AGENTS

        online = s["agent"] in LLM_AGENTS or s["communicate"] or bool(s["participant_model"])
        check_jobs(jobs, processes=not online and executor.kind == "local")
        if s["agent"] in ("apprentice", "statistician"):
            from silicolab.scientists.boxinggym.apprentice.execute import require_ppl

            require_ppl(s["agent"])
        if s["agent"] in ("llm", "apprentice"):  # models load before the run: bad specs stop
            connection.model("scientist", s["model"])
        if s["participant_model"]:
            connection.model("participant", s["participant_model"])

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
        return table, boxinggym_view(s["agent"], s["communicate"], table)

    def plan(s: dict[str, Any]) -> tuple[int, str]:
        from silicolab.bench.boxinggym import BoxingGymBench

        one = BoxingGymBench.build(boxinggym_pairs(s["env"]), s["agent"], prior=s["prior"], seeds=1)
        goals, units = len(one.pairs), len(one.pairs) * s["seeds"]
        return units, f"{goals} goals x {s['seeds']:,} seeds = {units:,} episodes"

    slug = f"{settings['agent']}-{settings['env']}"[:40]
    return run_bench(
        "boxinggym", settings, check=check, execute=execute, plan=plan, slug=slug, **flow
    )


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
        check_jobs(jobs, processes=s["agent"] != "llm" and executor.kind == "local")
        if s["agent"] == "llm":  # a bad spec or a missing key: refused before the run
            connection.model("scientist", s["model"])

    def plan(s: dict[str, Any]) -> tuple[int, str]:
        envs = len(split_list(s["env"], "env"))
        units = envs * s["seeds"]
        kinds = "environments" if envs > 1 else "environment"
        return units, f"{envs} {kinds} x {s['seeds']:,} seeds = {units:,} episodes"

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
    return run_bench(
        "episodes", settings, check=check, execute=execute, plan=plan, slug=slug, **flow
    )
