"""One study, end to end: design -> runs -> survey data -> fit -> predictions -> follow-on.

:func:`arun_study` does the work inside a run directory. Every finished condition is one
event in ``events.jsonl`` (its whole :class:`ConditionRun`), so ``--resume`` redoes only
the unfinished conditions and, with the LLM cache, no paid call is made twice. The
hypothesis is stored beside ``run.json`` as ``hypothesis.yaml``: a resumed run reads it
from there, so editing the source file after the start can never mix two experiments.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from typing import Any, Literal

from silicolab.core.errors import InputError, SilicolabError
from silicolab.llm.base import LanguageModel
from silicolab.runs import Run, RunHealth
from silicolab.runtime import LOCAL, ExecutorChoice
from silicolab.studies.conduct import ConditionRun, arun_condition
from silicolab.studies.data import column_dictionary, na_counts, study_table
from silicolab.studies.design import Design, make_design
from silicolab.studies.fit import StudyFit, fit_study
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.rule_worlds import rule_world

HYPOTHESIS_FILE = "hypothesis.yaml"


@dataclass(frozen=True, kw_only=True)
class StudyOptions:
    """How a study is run; stored in ``run.json`` and reused by ``--resume``."""

    subjects: Literal["llm", "rule"] = "llm"
    conditions: int | None = None
    replicates: int = 1
    aggregate_replicates: bool = False
    agent_names: Literal["roles", "random"] = "roles"
    seed: int = 0
    max_conditions: int = 1000
    jobs: int = 16
    statement_tokens: int | None = 300
    interactions: bool = False
    drop_capped: bool = False
    predict: bool = False
    #: Conditions the scientist predicts (predict-y, model LOO); None: every one (the
    #: paper's protocol), N: a seeded sample of N.
    predict_conditions: int | None = None
    follow_on: bool = False
    #: The scientist's sampling temperature for predictions and the follow-on plan;
    #: None: each step's default (0.0 for predictions, 0.4 for the follow-on).
    scientist_temperature: float | None = None
    #: How a respondent answers its survey questions: ``"at_once"`` (each from its state
    #: after the conversation, all requests at once: no answer sees another, and the
    #: survey takes one round of calls) or ``"in_turn"`` (one after another, each seeing
    #: the earlier answers; what studies did before this option existed).
    survey: Literal["at_once", "in_turn"] = "at_once"
    rule_options: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StudyOptions:
        """Options from stored settings; a run stored before ``survey`` existed asked its
        questions in turn, and resumes that way."""
        known = set(cls.__dataclass_fields__)
        return cls(**{"survey": "in_turn", **{k: v for k, v in data.items() if k in known}})


@dataclass(frozen=True)
class StudyModels:
    """The model of each role: the scientist (hypotheses, predictions, follow-on), the
    subjects (the agents) and the coordinator (turn-taking, stopping, transcript reading).

    ``scientist=None``: no scientist model (the predictions run the model-free
    leave-one-out only; a follow-on cannot be planned)."""

    scientist: LanguageModel | None
    subject: LanguageModel
    coordinator: LanguageModel

    def specs(self) -> dict[str, str | None]:
        return {
            role: None if getattr(self, role) is None else getattr(getattr(self, role), "spec", "?")
            for role in self.roles()
        }

    @staticmethod
    def roles() -> tuple[str, ...]:
        return ("scientist", "subject", "coordinator")

    def ledgers(self) -> dict[str, Any]:
        """Each distinct model's ledger summary, by role (a model shared by roles once)."""
        out: dict[str, Any] = {}
        seen: set[int] = set()
        for role in self.roles():
            model = getattr(self, role)
            if model is None or id(model) in seen or not hasattr(model, "ledger"):
                continue
            seen.add(id(model))
            out[role] = model.ledger.summary()
        return out


@dataclass
class StageResult:
    """The runs, data and fit of one experiment (the main one or the follow-on).

    ``fit_error`` says why the model could not be fitted and ``fit_problems`` lists the
    estimability problems behind it (``{"equation", "kind", "detail"}`` each, from
    :class:`silicolab.scm.NotEstimable`); both are empty when ``fit`` is set."""

    hypothesis: Hypothesis
    design: Design
    runs: list[ConditionRun]
    fit: StudyFit | None
    fit_error: str | None = None
    fit_problems: list[dict[str, Any]] = field(default_factory=list)
    aggregate_replicates: bool = False

    @functools.cached_property
    def table(self) -> Any:
        """The analysis table of the runs (built once: the fit, record and CSV share it)."""
        return study_table(self.hypothesis, self.runs)

    @functools.cached_property
    def fit_table(self) -> Any:
        """The rows the fit (and the predictions) use: every run, or with
        ``aggregate_replicates`` one row per condition holding its replicates' means."""
        if not self.aggregate_replicates:
            return self.table
        from silicolab.studies.data import aggregate_replicates

        return aggregate_replicates(self.hypothesis, self.table)

    def health(self) -> RunHealth:
        return RunHealth.of(r.health for r in self.runs)

    def to_dict(self) -> dict[str, Any]:
        table = self.table
        return {
            "hypothesis": self.hypothesis.to_dict(),
            "design": {
                "protocol": self.hypothesis.protocol,
                "order": self.hypothesis.order,
                "central": self.hypothesis.central,
                "max_statements": self.hypothesis.max_statements,
                **self.design.to_dict(),
            },
            "runs": [r.to_dict() for r in self.runs],
            "data": {
                "columns": column_dictionary(self.hypothesis),
                "rows": table.astype(object).where(table.notna(), None).to_dict("records"),
                "na_counts": na_counts(self.hypothesis, table),
                "errors": sum(r.error is not None for r in self.runs),
                "capped": int((table.stop_reason == "cap").sum()) if len(table) else 0,
            },
            "estimation": self.fit.to_dict() if self.fit else None,
            "fit_error": self.fit_error,
            "fit_problems": list(self.fit_problems),
        }


async def arun_stage(
    hypothesis: Hypothesis,
    options: StudyOptions,
    *,
    run: Run,
    models: StudyModels | None,
    prefix: str = "",
    description: str = "conditions",
    executor: ExecutorChoice = LOCAL,
) -> StageResult:
    """Run every condition of ``hypothesis`` (resumably, ``prefix`` keeps a follow-on's
    units apart from the main ones) on ``executor`` (not a stored option: it changes
    where conditions run, not what they give), then build the data and fit it."""
    design, run_one = plan_stage(hypothesis, options, models, prefix)
    jobs = options.jobs if options.subjects == "llm" else 1
    runner = executor.make(jobs, cpu_bound=False, description=description)
    results = await runner.amap(
        run_one,
        design.conditions,
        key=lambda c: prefix + c.unit_id,
        run=run,
        to_event=ConditionRun.to_dict,
        from_event=ConditionRun.from_dict,
        on_error="record",
    )
    check_crashed(results)
    return finish_stage(hypothesis, design, [r.value for r in results], options)


def plan_stage(
    hypothesis: Hypothesis, options: StudyOptions, models: StudyModels | None, prefix: str = ""
) -> tuple[Design, Callable[[Any], Any]]:
    """A stage's design and the coroutine function that runs one of its conditions (its
    calls' sample identity is ``prefix`` + the condition's unit id): what
    :func:`arun_stage` maps over, and what a caller that runs several stages in one batch
    (a replication) combines."""
    design = make_design(
        hypothesis,
        conditions=options.conditions,
        seed=options.seed,
        max_conditions=options.max_conditions,
        replicates=options.replicates,
    )
    return design, _condition_runner(hypothesis, options, models, prefix)


def check_crashed(results: Sequence[Any]) -> None:
    """Raise when a condition crashed (its own error, not a model's failure, which a
    condition records): not bad input (exit 2); the run stays for --resume and the
    finished conditions are kept."""
    crashed = [r for r in results if not r.ok]
    if crashed:
        raise SilicolabError(
            f"{len(crashed)} of {len(results)} conditions crashed (first: {crashed[0].key}: "
            f"{crashed[0].error}); the finished ones are kept: fix the cause and rerun with "
            "--resume"
        )


def finish_stage(
    hypothesis: Hypothesis, design: Design, runs: list[ConditionRun], options: StudyOptions
) -> StageResult:
    """The stage of ``design``'s finished ``runs``: its data and fit."""
    stage = StageResult(
        hypothesis, design, runs, None, aggregate_replicates=options.aggregate_replicates
    )
    fit_stage(stage, options)
    return stage


def fit_stage(stage: StageResult, options: StudyOptions) -> None:
    """Fit ``stage``'s rows (see :attr:`StageResult.fit_table`); a model that cannot be
    fitted leaves ``fit`` empty and says why in ``fit_error`` and ``fit_problems``."""
    try:
        stage.fit = fit_study(
            stage.hypothesis,
            stage.fit_table,
            interactions=options.interactions,
            drop_capped=options.drop_capped,
        )
    except InputError as exc:
        stage.fit_error = str(exc)
        stage.fit_problems = [dict(p) for p in getattr(exc, "problems", None) or []]


def _condition_runner(
    hypothesis: Hypothesis, options: StudyOptions, models: StudyModels | None, prefix: str = ""
) -> Callable[[Any], Any]:
    """One condition's coroutine; its calls' sample identity is the condition's event key
    (``prefix`` + unit id), so a follow-on condition whose treatments equal a main one's
    draws anew."""
    if hypothesis.simulation is not None:
        return _simulation_runner(hypothesis, options, models, prefix)
    if options.subjects == "rule":
        world = rule_world(hypothesis)
        return lambda condition: world(hypothesis, condition, dict(options.rule_options))
    if models is None:
        raise InputError("LLM subjects need models; pass models= or use subjects='rule'")

    subject, coordinator = models.subject, models.coordinator  # all a condition ships

    async def run_one(condition: Any) -> ConditionRun:
        return await arun_condition(
            hypothesis,
            condition,
            subject_model=subject,
            coordinator_model=coordinator,
            seed=options.seed,
            statement_tokens=options.statement_tokens,
            agent_names=options.agent_names,
            sample_key=prefix + condition.unit_id,
            survey=options.survey,
        )

    return run_one


def _simulation_runner(
    hypothesis: Hypothesis, options: StudyOptions, models: StudyModels | None, prefix: str
) -> Callable[[Any], Any]:
    """One condition in the study's simulation: rule-based subjects play the world's
    offline script; language-model subjects the subject model, the game master the
    coordinator's."""
    from silicolab.studies.sim_conduct import arun_simulation_condition

    if options.subjects == "world":
        raise InputError(
            f"study {hypothesis.name!r} runs in a simulation: use subjects='rule' (the "
            "simulation's offline script) or subjects='llm'",
            params=("subjects",),
        )
    offline = options.subjects == "rule" or models is None
    subject = None if offline else models.subject  # type: ignore[union-attr]
    gm = None if offline else models.coordinator  # type: ignore[union-attr]

    async def run_one(condition: Any) -> ConditionRun:
        return await arun_simulation_condition(
            hypothesis, condition, model=subject, gm_model=gm, seed=options.seed,
            sample_key=prefix + condition.unit_id,
        )  # fmt: skip

    return run_one


__all__ = [
    "HYPOTHESIS_FILE",
    "StageResult",
    "StudyModels",
    "StudyOptions",
    "arun_stage",
    "check_crashed",
    "finish_stage",
    "fit_stage",
    "plan_stage",
]
