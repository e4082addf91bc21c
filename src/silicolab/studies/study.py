"""A whole study in a run directory: the main experiment, predictions, the follow-on, the
record and the report. :func:`arun_study` is what ``silicolab study run`` and the demo call;
:func:`run_study` is its synchronous twin for notebooks and scripts.

Nothing finished is lost: the main study's ``data.csv``, ``columns.json`` and
``record.json`` are written as soon as its conditions are fitted, before predictions and
the follow-on start; each later stage's outcome is recorded in ``record["stages"]`` (see
:mod:`silicolab.studies.stages`) and a failed stage makes the run ``degraded`` with the
reason, so ``study run --resume`` redoes only that stage.

>>> from silicolab.studies import load_example
>>> from silicolab.studies.study import run_study, StudyOptions
>>> from silicolab.runs import Run
>>> run = Run.create("runs", kind="study", slug="auction")          # doctest: +SKIP
>>> result = run_study(load_example("auction"), StudyOptions(subjects="rule"), run=run)
...                                                                  # doctest: +SKIP
>>> result["estimation"]["main"]["r2"]                              # doctest: +SKIP
"""

from __future__ import annotations

from typing import Any

from silicolab import __version__
from silicolab.core.errors import BudgetReached
from silicolab.core.files import atomic_write_text, dumps
from silicolab.core.sync import sync_twin
from silicolab.runs import Run, RunHealth, UnitHealth
from silicolab.runtime import LOCAL, ExecutorChoice
from silicolab.studies.files import write_hypothesis
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import (
    HYPOTHESIS_FILE,
    StageResult,
    StudyModels,
    StudyOptions,
    arun_stage,
)
from silicolab.studies.stages import (
    StageBook,
    condition_problem,
    fit_problem,
    health_line,
)

#: 2: the record holds the science only (deterministic given the run's settings, so a
#: resumed run's record is byte-identical to an uninterrupted one's); ``created_at`` and
#: ``llm_ledger`` moved to ``run.json`` (``created``, ``llm_ledger`` summed over every
#: process of the run, with ``runtime_s``: :mod:`silicolab.runs.usage`).
SCHEMA_VERSION = 2
FOLLOW_ON_PREFIX = "followon/"
#: What a prediction stage without a scientist model says it left out.
NO_SCIENTIST_NOTE = (
    "no scientist model: only the mechanical leave-one-out ran; predict-y, predict-beta "
    "and the model's leave-one-out need one (--model SPEC)"
)


async def arun_study(
    hypothesis: Hypothesis,
    options: StudyOptions,
    *,
    run: Run,
    models: StudyModels | None = None,
    executor: ExecutorChoice = LOCAL,
) -> dict[str, Any]:
    """Run the study in ``run`` (its conditions on ``executor``) and write ``record.json``,
    ``data.csv`` and its column dictionary ``columns.json`` (the report is rendered from
    the record by :mod:`silicolab.report.study_report`).

    ``models=None`` means no language model at all (rule-based subjects); predictions
    then run the model-free leave-one-out only. Returns the record; the models' ledgers
    and the run's time go to ``run.json`` (:meth:`~silicolab.runs.Run.track_usage`), not
    the record, so a resumed run's record is an uninterrupted one's. The run ends
    ``degraded`` (see :mod:`silicolab.studies.stages`) when a condition's every model step
    failed, the main model cannot be fitted, or a later stage failed; the caller turns
    that into a nonzero exit."""
    run.track_usage(models.ledgers if models is not None else None)
    if not (run.path / HYPOTHESIS_FILE).exists():
        write_hypothesis(hypothesis, run.path / HYPOTHESIS_FILE)
    book = StageBook.start(run, predict=options.predict, follow_on=options.follow_on)
    main = await arun_stage(hypothesis, options, run=run, models=models, executor=executor)
    book.done("main")
    record = _record(hypothesis, options, models, main)
    main.table.to_csv(run.path / "data.csv", index=False)
    atomic_write_text(run.path / "columns.json", dumps(record["data"]["columns"], indent=2) + "\n")
    _save(run, record, book)  # the main study is safe from here on
    units = list(main.health().units)
    if options.predict:
        predictions = await _predictions(hypothesis, options, models, main, book)
        if predictions is not None:
            record["predictions"] = predictions
            units.append(UnitHealth.from_dict(predictions["health"]))
        _save(run, record, book)
    if options.follow_on:
        follow = await _follow_on(hypothesis, options, run, models, main, book, executor)
        if follow is not None:
            record["follow_on"] = follow
            units += _follow_on_health(follow)
        _save(run, record, book)
    health = RunHealth.of(units)
    problems = _problems(main, record, book)
    record["health"] = {**health.to_dict(), "degraded": bool(problems), "problems": problems}
    _save(run, record, book)
    run.set_status(
        "degraded" if problems else "finished",
        health=health.totals(),
        health_summary=health_line(health, problems),
    )
    return record


def _save(run: Run, record: dict[str, Any], book: StageBook) -> None:
    record["stages"] = book.to_dict()
    write_study_record(run, record)


def write_study_record(run: Run, record: dict[str, Any]) -> None:
    """Write ``record`` as the run's ``record.json`` with the study :data:`SCHEMA_VERSION`."""
    run.write_record(record, schema_version=str(SCHEMA_VERSION))


def _problems(main: StageResult, record: dict[str, Any], book: StageBook) -> list[str]:
    """Every reason the run is degraded, each naming where and showing a sample reply."""
    out = [p for p in (condition_problem(main), fit_problem(main)) if p]
    health = (record.get("predictions") or {}).get("health")
    if health and UnitHealth.from_dict(health).all_failed:
        unit = UnitHealth.from_dict(health)
        out.append(
            f"every prediction reply was unusable ({unit.failed_steps} of {unit.steps} "
            f"steps failed); sample reply {unit.sample_reply!r}"
        )
    follow = record.get("follow_on") or {}
    bad = [r for r in follow.get("runs", []) if UnitHealth.from_dict(r["health"]).all_failed]
    if bad:
        first = bad[0]
        out.append(
            f"{len(bad)} of {len(follow['runs'])} follow-on conditions unusable; first "
            f"{first['condition_id']}: {first.get('error') or 'no usable survey answer'}; "
            f"sample reply {first['health'].get('sample_reply', '')!r}"
        )
    return out + book.problems()


def _temperature(options: StudyOptions, default: float) -> float:
    """The scientist's temperature: the study's ``scientist_temperature`` or the step's
    ``default`` (0 for predictions, 0.4 for the follow-on plan)."""
    t = options.scientist_temperature
    return default if t is None else float(t)


async def _predictions(
    hypothesis: Hypothesis,
    options: StudyOptions,
    models: StudyModels | None,
    main: StageResult,
    book: StageBook,
) -> dict[str, Any] | None:
    """The predictions stage: a kept result, or predict-y, predict-β and LOO on the rows
    the fit used (the mechanical LOO alone without a scientist model)."""
    kept = book.stored("predictions")
    if kept is not None:
        book.done("predictions", kept.get("note"))
        return kept
    if main.fit is None:
        book.skipped("predictions", "the main model could not be fitted")
        return None
    from silicolab.studies.predict import apredict

    scientist = models.scientist if models is not None else None
    tasks = ("y", "beta", "loo") if scientist is not None else ("loo_mechanical",)
    try:
        with book.fresh("predictions"):  # --retry-failed: not the cached unusable replies
            result = await apredict(
                hypothesis,
                main.fit_table,
                main.fit.main,
                scientist,
                tasks=tasks,
                conditions=options.predict_conditions,
                drop_capped=options.drop_capped,
                seed=options.seed,
                temperature=_temperature(options, 0.0),
            )
    except BudgetReached:  # a stop, not the stage's failure: the run ends interrupted
        raise
    except Exception as exc:  # recorded; the main study is already on disk
        book.failed("predictions", exc)
        return None
    data = result.to_dict()
    note = NO_SCIENTIST_NOTE if scientist is None else None
    if note:
        data["note"] = note
    book.keep("predictions", data)
    book.done("predictions", note)
    return data


async def _follow_on(
    hypothesis: Hypothesis,
    options: StudyOptions,
    run: Run,
    models: StudyModels | None,
    main: StageResult,
    book: StageBook,
    executor: ExecutorChoice = LOCAL,
) -> dict[str, Any] | None:
    """Plan the next experiment from the main fit (or take the kept plan), run it, and
    compare the two fits."""
    from silicolab.studies.follow_on import FollowOnPlan, afollow_on

    if main.fit is None:
        book.skipped("follow_on", "the main model could not be fitted")
        return None
    if models is None or models.scientist is None:
        book.skipped("follow_on", "it needs a scientist model and language-model subjects")
        return None
    plan = None
    try:
        kept = book.stored("follow_on_plan")
        if kept is not None:
            plan = FollowOnPlan.from_dict(kept)
        else:
            plan = await afollow_on(
                hypothesis, main.fit.main, models.scientist, seed=options.seed,
                temperature=_temperature(options, 0.4),
            )  # fmt: skip
            book.keep("follow_on_plan", plan.to_dict())
        follow = await arun_stage(
            plan.hypothesis,
            options,
            run=run,
            models=models,
            prefix=FOLLOW_ON_PREFIX,
            description="follow-on conditions",
            executor=executor,
        )
    except BudgetReached:  # a stop, not the stage's failure: the run ends interrupted
        raise
    except Exception as exc:  # recorded; the main study is already on disk
        book.failed("follow_on", exc)
        return {"plan": plan.to_dict()} if plan is not None else None
    book.done("follow_on", fit_problem(follow, "the follow-on model"))
    return {"plan": plan.to_dict(), **follow.to_dict(), "comparison": _compare(main, follow)}


def _compare(main: StageResult, follow: StageResult) -> dict[str, Any]:
    """Side by side: each stage's paths (estimate, p) and R² of the outcome."""
    rows = []
    for name, stage in (("main", main), ("follow_on", follow)):
        if stage.fit is None:
            continue
        for path in stage.fit.paths().to_dict("records"):
            rows.append({"stage": name, "cause": path["rhs"], "est": path["est"], "p": path["p"]})
    outcome = main.hypothesis.outcome.name
    r2 = {
        name: (stage.fit.main.r2.get(outcome) if stage.fit else None)
        for name, stage in (("main", main), ("follow_on", follow))
    }
    return {"paths": rows, "r2": r2}


def _follow_on_health(follow: dict[str, Any] | None) -> list[UnitHealth]:
    if not follow:
        return []
    return [UnitHealth.from_dict(r["health"]) for r in follow.get("runs", [])]


def _record(
    hypothesis: Hypothesis,
    options: StudyOptions,
    models: StudyModels | None,
    main: StageResult,
) -> dict[str, Any]:
    return {
        "tool_version": __version__,
        "study": hypothesis.name,
        "scenario": hypothesis.scenario,
        "options": options.to_dict(),
        "models": _model_specs(options, models),
        "decisions": [d.model_dump(mode="json") for d in hypothesis.decisions],
        **main.to_dict(),
    }


def _model_specs(options: StudyOptions, models: StudyModels | None) -> dict[str, Any]:
    """The model of each role; rule-based subjects (and coordination) say ``rule``."""
    if options.subjects == "rule":
        scientist = models.specs()["scientist"] if models is not None else None
        return {"scientist": scientist, "subject": "rule", "coordinator": "rule"}
    return models.specs() if models is not None else {"subject": "rule"}


run_study = sync_twin(arun_study)


__all__ = ["NO_SCIENTIST_NOTE", "SCHEMA_VERSION", "arun_study", "run_study", "write_study_record"]
