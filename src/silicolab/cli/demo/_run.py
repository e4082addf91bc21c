"""``silicolab demo``: the main job, offline.

First a whole automated-social-science study (:mod:`silicolab.studies.demo_study`): the
scientist turns "Two people bargaining over a mug." into a hypothesized SCM, every
condition of the factorial design is a conversation between a buyer and a seller, a
coordinator ends it and answers the survey, the SCM is fitted, the scientist's
predictions are scored, and a follow-on experiment drops the cause that did not matter and
tests new ones. Every role is a scripted test double whose answers follow a hidden SCM, so
the estimates can be shown beside the truth. Then a short tour of the other capabilities
(causal discovery, the CausaLab lab, a BoxingGym episode). Resumable with ``--resume``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from silicolab.cli.flow import shown_run_dir, write_html_report
from silicolab.cli.resume_target import resume_target
from silicolab.core.config import load_settings
from silicolab.core.files import dumps


def run_demo(
    *,
    runs_dir: Path | None,
    conditions: int | None,
    seed: int,
    jobs: int,
    resume: bool,
    explicit: set[str],
    config: Path | None,
    json_out: bool,
    retry_failed: bool = False,
) -> dict[str, Any]:
    """Run (or resume; ``retry_failed`` also reruns the units that failed) the demo and
    print what a researcher wants to see first."""
    from silicolab.cli.demo._tour import (
        boxinggym_part,
        causalab_part,
        discovery_part,
        print_tour,
        tour_report,
    )
    from silicolab.llm.base import run_sync
    from silicolab.report.demo_report import demo_report, print_demo
    from silicolab.runs import open_run
    from silicolab.studies.demo_study import arun_demo_study
    from silicolab.studies.study import write_study_record

    settings = load_settings(config)
    root = runs_dir or Path(settings.runs_dir)
    wanted = {"seed": seed, "jobs": jobs, "conditions": conditions}
    run, used = open_run(
        root, "demo", settings=wanted, explicit=explicit, slug="mug-study",
        resume=resume_target(resume or retry_failed),
        seed=seed, retry_failed=retry_failed,
    )  # fmt: skip
    with run:
        run.track_usage()  # time and model calls go to run.json; the record is the science
        study = run_sync(
            arun_demo_study(
                run,
                seed=int(used["seed"]),
                jobs=int(used["jobs"]),
                conditions=used["conditions"],
                cache_path=settings.resolved_cache_path,
            )
        )
        tour = {
            "discovery": discovery_part(run),
            "causalab": causalab_part(run),
            "boxinggym": boxinggym_part(),
        }
        record = {**study, "tour": tour}
        write_study_record(run, record)
        info = run.info  # the ledger and the tour's timings: process accounting
        run.write_report(
            demo_report(record, tour_report(**tour, timings=info.get("timings")), info)
        )
        write_html_report(run)
    out = _summary(run, record)
    if json_out:
        typer.echo(dumps(out))
    else:
        path = shown_run_dir(run.path)
        print_demo(record, path, run.info)
        print_tour(**tour)
        typer.echo(
            f"run directory: {path}  (report: {path / 'report.html'}; "
            f"'silicolab view {path} --open' opens it)"
        )
        typer.echo(
            "with a real model on this machine (SmolLM2-135M, llama.cpp; docs/real_model.md): "
            "silicolab study run mug --conditions 16 --model local -y"
        )
    return out


def _summary(run: Any, record: dict[str, Any]) -> dict[str, Any]:
    from silicolab.report.study_report import path_rows

    follow = record.get("follow_on") or {}
    return {
        "run_dir": str(shown_run_dir(run.path)),
        "status": run.status,
        "conditions": len(record["runs"]),
        "paths": path_rows(record.get("estimation")),
        "truth": record["truth"],
        "predictions": (record.get("predictions") or {}).get("mse"),
        "follow_on": {
            "dropped": (follow.get("plan") or {}).get("dropped"),
            "added": (follow.get("plan") or {}).get("added"),
            "paths": path_rows(follow.get("estimation")),
        },
        "decisions": len(record["decisions"]),
        "ledger": run.info.get("llm_ledger"),
        **record["tour"],
    }


__all__ = ["run_demo"]
