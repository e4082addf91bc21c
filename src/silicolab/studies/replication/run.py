"""Run one study under every variant (subject model x wording x seed) in one run
directory, then meta-analyze each path.

Every (variant, condition) is a unit of the run with its own event, keyed
``<variant id>/<condition unit id>`` (the stage prefix a follow-on uses), so a killed
replication resumes where it stopped and the cache makes a rerun free. Each variant is a
stage of its own: its wording applied to the hypothesis, its seed in the options, its
subject model from ``models_for`` — the pipeline's own runs, data and fit. The variants
run concurrently; the model's concurrency limit (shared by all of them) paces the calls.
Each variant's fit gives one :class:`~.meta.VariantEstimate` per path; a variant whose
fit fails is kept with its reason and contributes no rows.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any, Protocol

from silicolab.core.errors import InputError
from silicolab.runs import Run
from silicolab.runtime import LOCAL, ExecutorChoice
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import StageResult, StudyModels, StudyOptions, arun_stage
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

    async def one(variant: Variant) -> tuple[VariantOutcome, StageResult]:
        worded = by_index[variant.wording].apply(hypothesis)
        stage = await arun_stage(
            worded, replace(options, seed=variant.seed), run=run,
            models=models_for(variant, worded), prefix=f"{variant.id}/",
            description=f"variant {variant.id}", executor=executor,
        )  # fmt: skip
        rows = []
        if stage.fit is not None:
            rows = rows_from_fit(stage.fit, variant=variant.id, model=variant.model,
                                 wording=variant.wording, seed=variant.seed)  # fmt: skip
        na = sum(1 for r in stage.runs if any(v is None for v in r.values.values()))
        outcome = VariantOutcome(variant, rows, stage.fit_error, len(stage.runs), na)
        return outcome, stage

    done = await asyncio.gather(*(one(v) for v in variants))
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


__all__ = [
    "NO_ESTIMATE",
    "Original",
    "Replication",
    "Variant",
    "VariantOutcome",
    "WordingLike",
    "arun_replication",
    "variant_grid",
]
