"""A whole study in a run directory: the main experiment, predictions, the follow-on, the
record and the report. :func:`arun_study` is what ``silicolab study run`` and the demo call;
:func:`run_study` is its synchronous twin for notebooks and scripts.

>>> from silicolab.studies import load_example
>>> from silicolab.studies.study import run_study, StudyOptions
>>> from silicolab.runs import Run
>>> run = Run.create("runs", kind="study", slug="auction")          # doctest: +SKIP
>>> result = run_study(load_example("auction"), StudyOptions(subjects="rule"), run=run)
...                                                                  # doctest: +SKIP
>>> result["estimation"]["main"]["r2"]                              # doctest: +SKIP
"""

from __future__ import annotations

import json
from typing import Any

from silicolab import __version__
from silicolab.core.files import atomic_write_text
from silicolab.llm.base import run_sync
from silicolab.runs import Run, RunHealth
from silicolab.runs.meta import now, timestamp
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

SCHEMA_VERSION = 1
FOLLOW_ON_PREFIX = "followon/"


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

    Returns the record. The run ends ``degraded`` (see :class:`RunHealth`) when a
    condition's every model step failed; the caller turns that into a nonzero exit."""
    if not (run.path / HYPOTHESIS_FILE).exists():
        write_hypothesis(hypothesis, run.path / HYPOTHESIS_FILE)
    main = await arun_stage(hypothesis, options, run=run, models=models, executor=executor)
    record = _record(hypothesis, options, models, {"main": main})
    units = list(main.health().units)
    if options.predict and models is not None and main.fit is not None:
        from silicolab.studies.predict import apredict

        predictions = await apredict(
            hypothesis,
            main.table,
            main.fit.main,
            models.scientist,
            max_conditions=options.predict_conditions,
            seed=options.seed,
        )
        record["predictions"] = predictions.to_dict()
        units.append(predictions.health)
    if options.follow_on and models is not None and main.fit is not None:
        record["follow_on"] = await _follow_on(hypothesis, options, run, models, main, executor)
    if models is not None:
        record["llm_ledger"] = models.ledgers()
    health = RunHealth.of([*units, *_follow_on_health(record.get("follow_on"))])
    record["health"] = health.to_dict()
    main.table.to_csv(run.path / "data.csv", index=False)
    atomic_write_text(
        run.path / "columns.json", json.dumps(record["data"]["columns"], indent=2) + "\n"
    )
    run.write_record(record, schema_version=str(SCHEMA_VERSION))
    run.finish(health)
    return record


async def _follow_on(
    hypothesis: Hypothesis,
    options: StudyOptions,
    run: Run,
    models: StudyModels,
    main: StageResult,
    executor: ExecutorChoice = LOCAL,
) -> dict[str, Any]:
    """Plan the next experiment from the main fit, run it, and compare the two fits."""
    from silicolab.studies.follow_on import afollow_on

    assert main.fit is not None
    plan = await afollow_on(hypothesis, main.fit.main, models.scientist, seed=options.seed)
    follow = await arun_stage(
        plan.hypothesis,
        options,
        run=run,
        models=models,
        prefix=FOLLOW_ON_PREFIX,
        description="follow-on conditions",
        executor=executor,
    )
    out = {"plan": plan.to_dict(), **follow.to_dict()}
    out["comparison"] = _compare(main, follow)
    return out


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


def _follow_on_health(follow: dict[str, Any] | None) -> list[Any]:
    from silicolab.runs import UnitHealth

    if not follow:
        return []
    return [UnitHealth.from_dict(r["health"]) for r in follow.get("runs", [])]


def _record(
    hypothesis: Hypothesis,
    options: StudyOptions,
    models: StudyModels | None,
    stages: dict[str, StageResult],
) -> dict[str, Any]:
    main = stages["main"]
    return {
        "tool_version": __version__,
        "created_at": timestamp(now()),
        "study": hypothesis.name,
        "scenario": hypothesis.scenario,
        "options": options.to_dict(),
        "models": models.specs() if models is not None else {"subject": "rule"},
        "decisions": [d.model_dump(mode="json") for d in hypothesis.decisions],
        **main.to_dict(),
    }


def run_study(hypothesis: Hypothesis, options: StudyOptions, **kw: Any) -> dict[str, Any]:
    """The synchronous twin of :func:`arun_study` (same keyword arguments)."""
    return run_sync(arun_study(hypothesis, options, **kw))


__all__ = ["SCHEMA_VERSION", "arun_study", "run_study"]
