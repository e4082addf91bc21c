"""The steps of :func:`silicolab.api.study_replicate.replicate_study`: open (or resume)
the run, plan and check its cost, settle the wordings, run every variant, analyze, and
write the record, the reports and the figures."""

from __future__ import annotations

import sys
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.runs import RunHealth

KIND = "replication"
WORDINGS_UNIT = "wordings"
#: Every variant's estimate of every path, and one line per path (beside record.json).
ESTIMATES_CSV, PATHS_CSV = "estimates.csv", "paths.csv"


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_replication(
    study: Any, settings: dict[str, Any], *, model: str | None, base_url: str | None,
    max_cost: float | None, root: Path, config: Path | None, resume: Any, typed: set[str],
    executor: Any, notify: Callable[[str], None] | None,
) -> Any:  # fmt: skip
    """Open, plan, run and write the replication (see the module docstring). A resumed
    run uses its stored settings; ``typed`` names the caller's settings that must agree
    with them. The executor is checked (Ray: installed and reachable) before any run
    directory exists."""
    from silicolab.api import study_models as money
    from silicolab.api.run_flow import analysis_preloaded, shown_run_dir
    from silicolab.api.study import load_hypothesis
    from silicolab.api.study_replicate import ReplicationResult
    from silicolab.runs import open_run
    from silicolab.studies.files import read_hypothesis, same_study, write_hypothesis
    from silicolab.studies.pipeline import HYPOTHESIS_FILE, StudyOptions

    say = notify or _stderr
    if resume:
        run, used = open_run(root, KIND, settings=settings, explicit=typed, resume=resume)
        hypothesis = read_hypothesis(run.path / HYPOTHESIS_FILE)
        if study is not None:  # the interrupted call with resume= added
            same_study(run.path, hypothesis, load_hypothesis(study))
    else:
        hypothesis, used, run = load_hypothesis(study), settings, None
    options = StudyOptions(
        subjects="llm", conditions=used["conditions"], max_conditions=used["max_conditions"],
        statement_tokens=used["statement_tokens"],
    )  # fmt: skip
    budget = money.make_budget(max_cost, run)
    world = used["subjects"] == "world"
    base = money.study_models(
        used["subjects"], hypothesis, model=model, base_url=base_url, config=config,
        budget=budget,
    )  # fmt: skip
    subject_models = {} if world else _subject_models(used["models"], config, budget, base_url)
    wordings_planned = used["wordings"] if isinstance(used["wordings"], int) else None
    n_variants = len(used["models"]) * (wordings_planned or 1) * len(used["seeds"])
    _plan(hypothesis, options, base, subject_models, n_variants, max_cost, say)
    money.refuse_limit_on_ray(bool(subject_models), max_cost=max_cost, executor=executor)
    executor.check()
    if run is None:
        run, _ = open_run(root, KIND, settings=settings, slug=hypothesis.name)
        write_hypothesis(hypothesis, run.path / HYPOTHESIS_FILE)
    with run, analysis_preloaded(KIND):
        scientist = getattr(base, "scientist", None)
        wordings = settle_wordings(run, hypothesis, used["wordings"], scientist, world)
        record, health = _conduct(run, hypothesis, used, options, wordings, base, subject_models,
                                  executor)  # fmt: skip
        _write(run, record, health)
    return ReplicationResult(shown_run_dir(run.path), run.status, run.read_record() or record,
                             run.info)  # fmt: skip


def _subject_models(
    specs: list[str], config: Path | None, budget: Any, base_url: str | None
) -> dict[str, Any]:
    """One subject model per spec (the subject role's settings with the spec; ``base_url``
    when given, as for the other roles)."""
    from silicolab.core.config import load_settings
    from silicolab.llm.roles import model_for_role

    settings = load_settings(config)
    server = {"base_url": base_url} if base_url else {}
    return {s: model_for_role("subject", settings, spec=s, budget=budget, **server) for s in specs}


def _plan(
    hypothesis: Any, options: Any, base: Any, subject_models: dict[str, Any], n_variants: int,
    max_cost: float | None, say: Callable[[str], None],
) -> None:  # fmt: skip
    """Show the plan of one variant times the variants; refuse one above ``max_cost``."""
    from silicolab.api import study_models as money

    plans = []
    for spec, subject in (subject_models or {"world": None}).items():
        models = base if subject is None else replace(base, subject=subject, coordinator=subject)
        plan, _ = money.study_plan(hypothesis, replace(options, predict=False), models)
        plans.append((spec, plan))
    per_model = n_variants // max(len(plans), 1)
    high = sum(p.cost_usd[1] for _, p in plans if p.cost_usd is not None) * per_model
    calls = sum(p.calls[1] for _, p in plans) * per_model
    say(f"plan: {n_variants} variants x {plans[0][1].conditions} conditions, up to {calls:,} "
        f"LLM calls; one variant: {plans[0][1].summary_line().removeprefix('plan: ')}")  # fmt: skip
    unknown = [spec for spec, p in plans if p.cost_usd is None and p.calls[1]]
    if max_cost is not None and unknown:
        raise InputError(
            f"the price of {', '.join(unknown)} is unknown, so max_cost= cannot be checked: "
            "give prices in silicolab.yaml",
            params=("max_cost",),
        )
    if max_cost is not None and high > max_cost:
        raise InputError(
            f"the planned cost may reach ${high:.2f}, above max_cost={max_cost:g}; run fewer "
            "conditions, models, wordings or seeds, or raise max_cost=",
            params=("max_cost", "conditions"),
        )


def settle_wordings(
    run: Any, hypothesis: Any, wordings: int | str, scientist: Any, world: bool
) -> list[Any]:
    """The run's wordings: from its ``wordings`` event when a process made them before,
    else made now (paraphrased by the scientist, or read from the file) and stored."""
    from silicolab.studies.replication.wordings import Wording, load_wordings, original

    done = run.finished_events().get(WORDINGS_UNIT)
    if done is not None:
        return [Wording.from_dict(w) for w in done["data"]["wordings"]]
    if isinstance(wordings, str):
        made = load_wordings(wordings, hypothesis)
    elif wordings == 1:
        made = [original(hypothesis)]
    else:
        made = _paraphrased(hypothesis, wordings, scientist, world)
    run.append_event(WORDINGS_UNIT, {"wordings": [w.to_dict() for w in made]})
    return made


def _paraphrased(hypothesis: Any, k: int, scientist: Any, world: bool) -> list[Any]:
    """``k`` wordings by the scientist model (offline: the scripted paraphraser)."""
    from silicolab.core.sync import run_sync
    from silicolab.studies.replication.wordings import aparaphrase

    offline = scientist is None or str(getattr(scientist, "spec", "")).startswith("scripted")
    if offline and world:
        from silicolab.llm import load_model
        from silicolab.studies.replication.scripted_wordings import scripted_paraphraser

        scientist = load_model("scripted:paraphraser", fn=scripted_paraphraser())
    elif offline:
        raise InputError(
            f"wordings={k} needs a scientist model to write the paraphrases: set model= "
            "(or the scientist role in silicolab.yaml), or give a wordings file",
            params=("wordings", "model"),
        )
    return run_sync(aparaphrase(hypothesis, scientist, k))


def _conduct(
    run: Any, hypothesis: Any, used: dict[str, Any], options: Any, wordings: list[Any],
    base: Any, subject_models: dict[str, Any], executor: Any,
) -> tuple[dict[str, Any], RunHealth]:  # fmt: skip
    """Run every variant; the record and the run's health."""
    from silicolab.core.sync import run_sync
    from silicolab.studies.offline import offline_study_models
    from silicolab.studies.replication.run import arun_replication, jobs_for, variant_grid

    variants = variant_grid(used["models"], len(wordings), used["seeds"])
    options = replace(options, jobs=jobs_for(used["jobs"], len(variants)))
    if not subject_models and base is None:
        raise InputError("no models for the subjects", params=("subjects",))

    def models_for(variant: Any, worded: Any) -> Any:
        if not subject_models:  # world subjects: the hidden SCM of the worded hypothesis
            return offline_study_models(worded, seed=variant.seed, scientist=base.scientist)
        subject = subject_models[variant.model]
        return replace(base, subject=subject, coordinator=subject)

    rep = run_sync(arun_replication(hypothesis, variants, options, run=run,
                                    models_for=models_for, wordings=wordings,
                                    executor=executor))  # fmt: skip
    health = RunHealth.of(r.health for stage in rep.stages for r in stage.runs)
    record = {
        "kind": KIND,
        "study": hypothesis.name,
        "subjects": used["subjects"],
        "models": used["models"],
        "seeds": used["seeds"],
        "wordings": [w.to_dict() for w in wordings],
        **rep.to_dict(),
        "health": health.to_dict(),
    }
    return record, health


def _write_tables(folder: Path, record: dict[str, Any]) -> None:
    """``estimates.csv`` and ``paths.csv`` beside the record (each written whole, then
    moved into place, so a crash never leaves half a table)."""
    from silicolab.core.files import atomic_write_text
    from silicolab.studies.replication.tables import estimates_table, paths_table

    for name, table in ((ESTIMATES_CSV, estimates_table(record)), (PATHS_CSV, paths_table(record))):
        atomic_write_text(Path(folder) / name, table.to_csv(index=False))


def _write(run: Any, record: dict[str, Any], health: RunHealth) -> None:
    """Record, reports and the end status: degraded when the subjects' model kept failing
    or when no variant's fit gave a single estimate (each reason named)."""
    from silicolab.api.run_flow import write_html_report
    from silicolab.report.replication_report import replication_report

    problems = []
    if not record.get("rows"):
        reasons = sorted({v["fit_error"] for v in record["variants"] if v.get("fit_error")})
        problems.append("no variant's fit gave an estimate: " + "; ".join(reasons))
    record["health"] = {**record["health"], "degraded": health.degraded or bool(problems),
                        "problems": problems}  # fmt: skip
    run.write_record(record)
    _write_tables(run.path, record)
    run.write_report(replication_report(record))
    summary = "; ".join([health.summary_line(), *problems])
    degraded = health.degraded or bool(problems)
    run.set_status("degraded" if degraded else "finished", health=health.totals(),
                   health_summary=summary)  # fmt: skip
    write_html_report(run)
