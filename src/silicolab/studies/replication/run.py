"""Run one study under every variant (subject model x wording x seed) in one run
directory, then meta-analyze each path.

Every (variant, condition) is a unit of the run with its own event, keyed
``<variant id>/<condition unit id>`` (the stage prefix a follow-on uses), so a killed
replication resumes where it stopped and the cache makes a rerun free. Each variant is a
stage of its own: its wording applied to the hypothesis, its seed in the options, its
subject model from ``models_for`` — the pipeline's own design, runs, data and fit. All
variants' units run as ONE batch on the executor (local or Ray): one progress bar,
``options.jobs`` conditions in flight in all, interleaved so that every subject model has
its share from the start; each model's concurrency limit paces its calls. Each variant's
fit gives one :class:`~.meta.VariantEstimate` per path; a variant whose fit fails is kept
with its reason and contributes no rows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from silicolab.core.errors import InputError
from silicolab.runs import Run
from silicolab.runtime import LOCAL, ExecutorChoice
from silicolab.studies.conduct import ConditionRun
from silicolab.studies.design import Design
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import (
    StageResult,
    StudyModels,
    StudyOptions,
    check_crashed,
    finish_stage,
    plan_stage,
)
from silicolab.studies.replication.decomposition import Decomposition, variance_decomposition
from silicolab.studies.replication.meta import (
    PathMeta,
    VariantEstimate,
    meta_analyze,
    rows_from_fit,
)
from silicolab.studies.replication.verdict import Verdict, verdict


class WordingLike(Protocol):
    """What a replication needs of a wording: its index (0 = the original) and how to
    apply it to a hypothesis."""

    index: int

    def apply(self, hypothesis: Hypothesis) -> Hypothesis: ...


@dataclass(frozen=True)
class Original:
    """Wording 0: the hypothesis as written."""

    index: int = 0

    def apply(self, hypothesis: Hypothesis) -> Hypothesis:
        return hypothesis


@dataclass(frozen=True)
class Variant:
    """One replication variant: the subject ``model`` spec (its position ``model_index``
    in the list given), the ``wording`` index and the ``seed``."""

    model: str
    model_index: int
    wording: int
    seed: int

    @property
    def id(self) -> str:
        """The variant's key in the run's events (short, stable, no model spec in it)."""
        return f"m{self.model_index}w{self.wording}s{self.seed}"

    def to_dict(self) -> dict[str, Any]:
        return {"id": self.id, "model": self.model, "wording": self.wording, "seed": self.seed}


def variant_grid(models: Sequence[str], wordings: int, seeds: Sequence[int]) -> list[Variant]:
    """Every model x wording (0 .. ``wordings - 1``) x seed, model first."""
    if not models:
        raise InputError("models= needs at least one subject model spec", params=("models",))
    if len(set(models)) != len(models):
        raise InputError(f"models= repeats a spec: {list(models)}", params=("models",))
    if wordings < 1:
        raise InputError(f"wordings={wordings} must be at least 1 (the original)",
                         params=("wordings",))  # fmt: skip
    if not seeds or len(set(seeds)) != len(seeds):
        raise InputError(f"seeds= must be distinct and not empty, got {list(seeds)}",
                         params=("seeds",))  # fmt: skip
    return [
        Variant(m, i, w, s) for i, m in enumerate(models) for w in range(wordings) for s in seeds
    ]


@dataclass
class VariantOutcome:
    """One variant's stage: its fit's rows, or why it gave none."""

    variant: Variant
    rows: list[VariantEstimate]
    fit_error: str | None
    n_conditions: int
    na: int

    def to_dict(self) -> dict[str, Any]:
        return {
            **self.variant.to_dict(),
            "paths": len(self.rows),
            "fit_error": self.fit_error,
            "conditions": self.n_conditions,
            "na": self.na,
        }


@dataclass
class Replication:
    """Every variant's outcome and, per path, the meta-analysis, the variance
    decomposition and the verdict."""

    variants: list[VariantOutcome]
    metas: list[PathMeta]
    decompositions: list[Decomposition]
    verdicts: list[Verdict]
    stages: list[StageResult] = field(default_factory=list, repr=False)
    #: every path of the hypothesis, ``"cause -> effect"``: one no variant estimated is
    #: still reported, with the variants' reasons
    expected: list[str] = field(default_factory=list)

    @property
    def rows(self) -> list[VariantEstimate]:
        return [r for v in self.variants for r in v.rows]

    def paths(self) -> list[dict[str, Any]]:
        """One summary per path: pooled estimates, heterogeneity, shares and verdict."""
        out = []
        for meta, dec, ver in zip(self.metas, self.decompositions, self.verdicts, strict=True):
            out.append({**meta.to_dict(), "decomposition": dec.to_dict(), "verdict": ver.to_dict()})
        done = {m.path for m in self.metas}
        reasons = sorted({v.fit_error for v in self.variants if v.fit_error})
        for path in (p for p in self.expected if p not in done):
            detail = "; ".join(reasons) or "no variant's fit has this path"
            verdict = Verdict(NO_ESTIMATE, "no variant's fit estimated this path", detail)
            out.append({"path": path, "k": 0, "verdict": verdict.to_dict()})
        return out

    def to_dict(self) -> dict[str, Any]:
        return {
            "variants": [v.to_dict() for v in self.variants],
            "rows": [r.to_dict() for r in self.rows],
            "paths": self.paths(),
        }


ModelsFor = Callable[[Variant, Hypothesis], "StudyModels | None"]
#: The verdict of a path no variant estimated (every fit failed, e.g. too few rows).
NO_ESTIMATE = "no estimate"


async def arun_replication(
    hypothesis: Hypothesis,
    variants: Sequence[Variant],
    options: StudyOptions,
    *,
    run: Run,
    models_for: ModelsFor,
    wordings: Sequence[WordingLike] = (Original(),),
    executor: ExecutorChoice = LOCAL,
) -> Replication:
    """Run ``hypothesis`` under every variant in ``run`` and analyze it (module docstring).
    ``wordings[i]`` is wording ``i``; ``models_for(variant, worded hypothesis)`` gives the
    variant's models (``None`` for rule-based subjects)."""
    by_index = {w.index: w for w in wordings}
    missing = sorted({v.wording for v in variants} - set(by_index))
    if missing:
        raise InputError(f"variants use wordings {missing} that were not given",
                         params=("wordings",))  # fmt: skip
    plans = [_VariantPlan.make(v, by_index[v.wording].apply(hypothesis), options, models_for)
             for v in variants]  # fmt: skip
    by_variant = await _run_units(plans, options, run, executor)
    done = []
    for plan in plans:
        runs = by_variant[plan.variant.id]
        stage = finish_stage(plan.hypothesis, plan.design, runs, plan.options)
        done.append((plan.outcome(stage), stage))
    outcomes = [o for o, _ in done]
    rows = [r for o in outcomes for r in o.rows]
    metas = meta_analyze(rows)
    decompositions = [variance_decomposition(rows, m.path) for m in metas]
    verdicts = [verdict(m, d) for m, d in zip(metas, decompositions, strict=True)]
    expected = [f"{c} -> {effect}" for effect, causes in hypothesis.equations().items()
                for c in causes]  # fmt: skip
    return Replication(
        outcomes, metas, decompositions, verdicts, [s for _, s in done], expected=expected
    )


@dataclass
class _VariantPlan:
    """One variant's worded hypothesis, options (its seed), design and condition runner."""

    variant: Variant
    hypothesis: Hypothesis
    options: StudyOptions
    design: Design
    run_one: Callable[[Any], Any]

    @classmethod
    def make(
        cls, variant: Variant, worded: Hypothesis, options: StudyOptions, models_for: ModelsFor
    ) -> _VariantPlan:
        options = replace(options, seed=variant.seed)
        design, run_one = plan_stage(
            worded, options, models_for(variant, worded), prefix=f"{variant.id}/"
        )
        return cls(variant, worded, options, design, run_one)

    def outcome(self, stage: StageResult) -> VariantOutcome:
        """The variant's fit rows (none when its fit failed, with the reason)."""
        v, rows = self.variant, []
        if stage.fit is not None:
            rows = rows_from_fit(stage.fit, variant=v.id, model=v.model, wording=v.wording,
                                 seed=v.seed)  # fmt: skip
        na = sum(1 for r in stage.runs if any(x is None for x in r.values.values()))
        return VariantOutcome(v, rows, stage.fit_error, len(stage.runs), na)


#: Conditions in flight per variant when a replication's ``jobs`` is not given.
JOBS_PER_VARIANT = 16


def jobs_for(jobs: int | None, variants: int) -> int:
    """The conditions a replication keeps in flight in all: ``jobs`` when given, else
    :data:`JOBS_PER_VARIANT` per variant, at most the in-flight bound (256)."""
    from silicolab.runtime.bounds import MAX_IN_FLIGHT

    if jobs is not None:
        return jobs
    return max(1, min(MAX_IN_FLIGHT, JOBS_PER_VARIANT * variants))


async def _run_units(
    plans: Sequence[_VariantPlan], options: StudyOptions, run: Run, executor: ExecutorChoice
) -> dict[str, list[ConditionRun]]:
    """Every (variant, condition) as one batch on ``executor``; each variant's runs in its
    design's order, by variant id (a crashed condition raises, see
    :func:`~silicolab.studies.pipeline.check_crashed`). One progress bar, one event per
    unit, ``options.jobs`` conditions in flight in all. The units are
    interleaved (each variant's first condition, then each one's second, ...) so that
    every variant, hence every subject model, has its share of the slots from the start
    rather than the first variants taking them all."""
    runners = {plan.variant.id: plan.run_one for plan in plans}
    longest = max((len(p.design.conditions) for p in plans), default=0)
    items = [(p.variant.id, p.design.conditions[i]) for i in range(longest) for p in plans
             if i < len(p.design.conditions)]  # fmt: skip

    async def run_unit(item: tuple[str, Any]) -> Any:
        variant, condition = item
        return await runners[variant](condition)

    description = f"replication ({len(plans)} variants)"
    runner = executor.make(options.jobs, cpu_bound=False, description=description)
    results = await runner.amap(
        run_unit,
        items,
        key=lambda item: f"{item[0]}/{item[1].unit_id}",
        run=run,
        to_event=ConditionRun.to_dict,
        from_event=ConditionRun.from_dict,
        on_error="record",
    )
    check_crashed(results)
    by_variant: dict[str, list[ConditionRun]] = {plan.variant.id: [] for plan in plans}
    for (variant, _), result in zip(items, results, strict=True):
        by_variant[variant].append(result.value)
    return by_variant


__all__ = [
    "NO_ESTIMATE",
    "Original",
    "Replication",
    "Variant",
    "VariantOutcome",
    "WordingLike",
    "arun_replication",
    "jobs_for",
    "variant_grid",
]
