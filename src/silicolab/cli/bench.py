"""``silicolab bench discovery``: our numbers beside the published tables."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import typer

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError


def open_run(root: Path, kind: str, *, resume: bool, **create: Any) -> Any:
    """The latest ``kind`` run under ``root`` for ``--resume`` (a clear error when there is
    none), else a new run made with ``create`` (slug, config, seed)."""
    from silicolab.runs import Run

    if resume:
        run = Run.latest(root, kind=kind)
        if run is None:
            raise InputError(f"no {kind} run under {root} to resume; drop --resume")
        return run
    return Run.create(root, kind=kind, **create)


def split_list(value: str, what: str) -> list[str]:
    """``"pc, exact"`` -> ``["pc", "exact"]``; an empty list is an error."""
    items = [v.strip() for v in value.split(",") if v.strip()]
    if not items:
        raise InputError(f"--{what} is empty: give a comma-separated list")
    return items


def run_bench_discovery(
    *,
    methods: str,
    datasets: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    jobs: int,
    resume: bool,
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """Run the benchmark (resumably) and print the comparison table."""
    from silicolab.bench.discovery import run_discovery_bench
    from silicolab.cli.discover import llm_model
    from silicolab.discovery import registry

    method_list = split_list(methods, "methods")
    dataset_list = (
        ["auto_mpg", "dwd_climate", "sachs"]
        if datasets == "all"
        else split_list(datasets, "datasets")
    )
    for name in method_list:
        registry.get(name)
    needs_llm = [m for m in method_list if m in registry.available("llm")]
    if needs_llm and not model:
        raise InputError(
            f"{', '.join(needs_llm)} need a language model: add --model SPEC "
            "(and --base-url for a local server)"
        )
    llm = llm_model(model, base_url, api_key_env, config) if needs_llm else None
    root = runs_dir or Path(load_settings(config).runs_dir)
    run = open_run(
        root,
        "bench-discovery",
        resume=resume,
        slug="-".join(method_list)[:40],
        config={
            "methods": method_list,
            "datasets": dataset_list,
            "model": getattr(llm, "spec", None),
        },
    )
    with run:
        table = run_discovery_bench(method_list, dataset_list, model=llm, run=run, jobs=jobs)
        rows = json.loads(table.to_json(orient="records"))
        record = {"rows": rows, "usage": llm.ledger.summary() if llm is not None else None}
        run.write_record(record)
        run.write_report("# Causal discovery benchmark\n\n" + markdown_table(table) + "\n")
    if json_out:
        typer.echo(json.dumps({"run_dir": str(run.path), "rows": rows}))
    else:
        _print_table(table, run.path)
    return {"run_dir": str(run.path), "rows": rows}


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
    suite: str,
    agent: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    episodes: int,
    jobs: int,
    verify: str,
    fidelity: str,
    seed: int,
    resume: bool,
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """Run the CausaLab benchmark (resumably) and print ours beside the paper's numbers."""
    from silicolab.bench.causalab import run_causalab_bench
    from silicolab.cli.discover import llm_model

    suites = expand_suites(suite)
    if agent not in ("reference", "random", "llm"):
        raise InputError(f"--agent {agent!r}: use reference, random or llm")
    if agent == "llm" and not model:
        raise InputError("--agent llm needs --model SPEC (and --base-url for a local server)")
    llm = llm_model(model, base_url, api_key_env, config) if agent == "llm" else None
    root = runs_dir or Path(load_settings(config).runs_dir)
    run = open_run(
        root,
        "bench-causalab",
        resume=resume,
        slug=f"{agent}-{suite}"[:40],
        seed=seed,
        config={
            "suites": suites,
            "agent": agent,
            "episodes": episodes,
            "verify": verify,
            "fidelity": fidelity,
            "model": getattr(llm, "spec", None),
        },
    )
    columns = CAUSALAB_COLUMNS + ((("tokens", "tokens/ep"),) if llm is not None else ())
    with run:
        table = run_causalab_bench(
            suites,
            "react" if agent == "llm" else agent,
            model=llm,
            episodes=episodes,
            jobs=jobs,
            run=run,
            verify=verify,
            fidelity=fidelity,
            seed=seed,
        )
        rows = json.loads(table.to_json(orient="records"))
        run.write_record({"rows": rows, "usage": table.attrs.get("usage")})
        compared = ", ".join(sorted({str(m) for m in table.get("published_model", []) if m}))
        run.write_report(
            "# CausaLab benchmark\n\n"
            + markdown_table(table, columns)
            + f"\n\nPaper columns: {compared or 'no published numbers for these suites'}.\n"
        )
    if json_out:
        typer.echo(json.dumps({"run_dir": str(run.path), "rows": rows}))
    else:
        title = f"CausaLab, {agent} agent, beside the paper ({compared or 'no anchor'})"
        _print_table(table, run.path, columns, title)
    return {"run_dir": str(run.path), "rows": rows}


def run_bench_boxinggym(
    *,
    env: str,
    agent: str,
    model: str | None,
    base_url: str | None,
    api_key_env: str | None,
    seeds: int,
    prior: bool,
    communicate: bool,
    participant_model: str | None,
    jobs: int,
    fidelity: str,
    resume: bool,
    runs_dir: Path | None,
    config: Path | None,
    json_out: bool,
) -> dict[str, Any]:
    """Run the BoxingGym benchmark (resumably) and print ours beside the paper's tables."""
    from silicolab.bench.boxinggym import run_boxinggym_bench
    from silicolab.cli.discover import llm_model

    if agent not in ("boed", "random", "llm"):
        raise InputError(f"--agent {agent!r}: use boed (reference Bayesian), random or llm")
    if agent == "llm" and not model:
        raise InputError("--agent llm needs --model SPEC (and --base-url for a local server)")
    envs: Any = (
        "all"
        if env == "all"
        else [tuple(item.split(":", 1)) if ":" in item else item for item in split_list(env, "env")]
    )
    if envs != "all":
        from silicolab.bench.boxinggym import ENV_GOALS

        known = sorted({f"{e}:{g}" for e, g in ENV_GOALS})
        for item in envs:
            pair = item if isinstance(item, tuple) else (item, "direct")
            if tuple(pair) not in ENV_GOALS:
                raise InputError(
                    f"unknown environment/goal {':'.join(pair)!r}; choose from {', '.join(known)}"
                )
    llm = llm_model(model, base_url, api_key_env, config) if agent == "llm" else None
    participant = None
    if participant_model:
        from silicolab.llm.roles import model_for_role

        participant = {
            "llm": model_for_role("subject", load_settings(config), spec=participant_model)
        }
    root = runs_dir or Path(load_settings(config).runs_dir)
    run = open_run(
        root,
        "bench-boxinggym",
        resume=resume,
        slug=f"{agent}-{env}"[:40],
        config={
            "env": env,
            "agent": agent,
            "seeds": seeds,
            "prior": prior,
            "communicate": communicate,
            "participant_model": participant_model,
            "fidelity": fidelity,
            "model": getattr(llm, "spec", None),
        },
    )
    columns = BOXINGGYM_COLUMNS + (
        (("after_comm", "after comm."), ("paper_after_comm", "paper")) if communicate else ()
    )
    with run:
        table = run_boxinggym_bench(
            envs,
            agent,
            model=llm,
            seeds=seeds,
            prior=prior,
            jobs=jobs,
            run=run,
            communicate=communicate,
            fidelity=fidelity,
            env_options=participant,
        )
        rows = json.loads(table.to_json(orient="records"))
        run.write_record({"rows": rows, "usage": table.attrs.get("usage")})
        run.write_report(
            "# BoxingGym benchmark\n\nStandardized error (lower is better; "
            "negative beats the prior-mean predictor) and EI regret.\n\n"
            + markdown_table(table, columns)
            + "\n"
        )
    if json_out:
        typer.echo(json.dumps({"run_dir": str(run.path), "rows": rows}))
    else:
        _print_table(
            table,
            run.path,
            columns,
            f"BoxingGym, {agent} agent: standardized error and EI regret beside the "
            "paper (GPT-4o, Table 1/3)",
        )
    return {"run_dir": str(run.path), "rows": rows}


#: (column, heading) of the printed BoxingGym comparison.
BOXINGGYM_COLUMNS = (
    ("env", "environment"),
    ("goal", "goal"),
    ("seeds", "seeds"),
    ("before", "before"),
    ("paper_before", "paper"),
    ("after", "after 10"),
    ("paper_after", "paper"),
    ("regret", "EI regret"),
    ("paper_regret", "paper"),
)


#: (column, heading) of the printed CausaLab comparison (short: it must fit a terminal).
CAUSALAB_COLUMNS = (
    ("suite", "suite"),
    ("episodes", "n"),
    ("accuracy", "acc %"),
    ("published_accuracy", "paper"),
    ("all_edge_f1", "edge F1"),
    ("published_all_edge_f1", "paper"),
    ("shd", "SHD"),
    ("published_shd", "paper"),
    ("weight_f1", "weight F1"),
    ("root_f1", "root F1"),
    ("budget_used", "used"),
)

#: (column, heading) of the printed comparison; the record keeps every column.
COLUMNS = (
    ("method", "method"),
    ("dataset", "dataset"),
    ("model", "model"),
    ("shd", "SHD"),
    ("nhd_truncated", "NHD"),
    ("published_shd", "paper SHD"),
    ("published_nhd", "paper NHD"),
    ("match", "match"),
    ("f1", "F1"),
    ("runtime_s", "seconds"),
    ("tokens", "tokens"),
)


def markdown_table(table: Any, columns: Any = None) -> str:
    """The comparison as a Markdown table (the discovery columns unless ``columns``)."""
    from silicolab.report import markdown_table as render

    return render(table, columns or COLUMNS)


def _print_table(
    table: Any,
    path: Path,
    columns: Any = None,
    title: str = "causal discovery: ours beside the MAC paper (arXiv 2407.15073 v2)",
) -> None:
    from silicolab.report import print_table

    print_table(table, columns or COLUMNS, title=title, footer=[f"run directory: {path}"])
