"""The CausaLab benchmark: scientists on the released suites, beside the paper's numbers.

What to run is a frozen :class:`CausaLabBench`; one unit of work is one episode (suite,
index) of its agent, run by :mod:`silicolab.bench.harness`. The reference and random
agents are CPU-bound and run in ``jobs`` worker processes; the LLM agent is network-bound
and runs ``jobs`` episodes concurrently on the event loop. With a run directory each
finished episode's full record is appended to ``events.jsonl`` at once, and a rerun skips
it (resume). The table has one row per suite: macro averages over episodes of task
accuracy, edge, weight and root scores, SHD, budget used, IMEC and hypothesis–data
consistency at commit (split by success), with the published anchors (arXiv 2605.26029,
spec §11, kept as data with their provenance in :mod:`silicolab.bench.causalab_anchors`)
beside them; :func:`regime_summary` gives the anchors of one scaling regime.
"""

from __future__ import annotations

import functools
import math
import statistics
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, Any

from silicolab.bench.anchors import ROW_KEY
from silicolab.bench.causalab_anchors import (
    MODELS,
    PUBLISHED,
    REGIMES,
    Anchor,
    regime_anchors,
    regime_match,
    run_regime,
)
from silicolab.bench.harness import (
    EMPTY_KEY,
    LOCAL,
    ExecutorChoice,
    arun_episode_groups,
    mean,
    offline_twin,
    play_episode,
    positive_int,
    sync,
)
from silicolab.core.errors import InputError
from silicolab.runtime.base import EventLog

if TYPE_CHECKING:  # pandas builds the driver's tables; workers never import it
    import pandas as pd

#: Substrings of a model spec that identify a published model (longest match wins).
MODEL_ALIASES: dict[str, str] = {
    "gpt-5.2": "gpt-5.2-high",
    "gpt-5-mini": "gpt-5-mini",
    "qwen3.5-thinking": "qwen3.5-thinking",
    "qwen3.5-non-thinking": "qwen3.5-non-thinking",
    "qwen3.5-nothink": "qwen3.5-non-thinking",
}


def published_table() -> pd.DataFrame:
    """:data:`PUBLISHED` as a tidy table, one column per provenance field."""
    import pandas as pd

    return pd.DataFrame([anchor_record(a) for a in PUBLISHED])


def anchor_record(anchor: Anchor) -> dict[str, Any]:
    """One anchor as a flat JSON-ready dict (its provenance as ``kind``/``where``/``source``)."""
    record = {k: v for k, v in asdict(anchor).items() if k != "provenance"}
    return {**record, **anchor.provenance.to_dict()}


def published_model(label: str) -> str | None:
    """The published model a spec names (``"openai:gpt-5-mini"`` -> ``"gpt-5-mini"``)."""
    text = label.lower().replace("_", "-")
    hits = [alias for alias in MODEL_ALIASES if alias in text]
    return MODEL_ALIASES[max(hits, key=len)] if hits else None


def find_anchor(suite: str, model: str, metric: str, setting: str = "main") -> Anchor | None:
    """The published ``metric`` for ``suite`` and ``model`` in ``setting``, or None."""
    for anchor in PUBLISHED:
        if (anchor.suite, anchor.model, anchor.metric, anchor.setting) == (
            suite,
            model,
            metric,
            setting,
        ):
            return anchor
    return None


def comparison_model(suite: str, label: str, setting: str = "main") -> str | None:
    """The published model to show beside our row: the one ``label`` names if the paper
    has numbers for it on ``suite``, else the strongest model that has (GPT-5.2-high
    first), so a reference or random agent is compared with the best published LLM."""
    named = published_model(label)
    have = {a.model for a in PUBLISHED if a.suite == suite and a.setting == setting}
    if named in have:
        return named
    return next((m for m in MODELS if m in have), None)


def regime_summary(
    regime: str, observations: int | None = None, interventions: int | None = None
) -> dict[str, Any]:
    """What ``--regime`` shows: the regime's description, its anchors (as bench rows with
    their provenance, ranges as ``[low, high]``) and whether our run matches it."""
    if regime not in REGIMES:
        raise InputError(f"unknown regime {regime!r}; choose from {', '.join(REGIMES)}")
    rows = []
    for anchor in regime_anchors(regime):
        info = {**anchor.provenance.to_dict(), "low": anchor.value, "high": anchor.high}
        rows.append(
            {
                "suite": anchor.suite,
                "model": anchor.model,
                "metric": anchor.metric,
                "published": published_value(anchor),
                ROW_KEY: {"published": info},
            }
        )
    return {
        "regime": regime,
        "description": REGIMES[regime],
        "anchors": rows,
        "match": regime_match(regime, observations, interventions),
    }


# -- running ---------------------------------------------------------------------------------

#: Per-episode metrics averaged into the table (macro: mean over episodes).
MEAN_METRICS = (
    "all_edge_precision",
    "all_edge_recall",
    "all_edge_f1",
    "target_parent_f1",
    "shd",
    "weight_f1",
    "weight_terms_f1",
    "root_f1",
    "budget_used",
    "imec_final",
)
#: Our table's column -> the published metric shown beside it.
COMPARED = {
    "accuracy": "accuracy",
    "shd": "shd",
    "all_edge_f1": "all_edge_f1",
    "weight_f1": "weight_f1",
    "root_f1": "root_f1",
    "budget_used_success": "budget_used_success",
    "budget_used_failure": "budget_used_failure",
}


@dataclass(frozen=True, kw_only=True)
class CausaLabBench:
    """What to run: ``agent`` (reference, random or llm) on the first ``episodes`` graphs
    of each suite, with the lab's ``fidelity`` and ``seed``; ``verify`` applies to the LLM
    scientist; ``jobs`` episodes run in parallel, on ``executor``. Validated on construction."""

    suites: tuple[str, ...]
    agent: str = "reference"
    episodes: int = 50
    verify: str = "none"
    fidelity: str = "fixed"
    seed: int = 0
    jobs: int = 8
    executor: ExecutorChoice = LOCAL
    observations: int | None = None
    interventions: int | None = None

    def __post_init__(self) -> None:
        from silicolab.envs import check_fidelity
        from silicolab.scientists import family_of
        from silicolab.scientists.causalab.react import VERIFY_MODES

        if isinstance(self.suites, str):
            raise InputError("suites is a list of names, e.g. ['3nodes', '4nodes']")
        object.__setattr__(self, "suites", tuple(self.suites))
        object.__setattr__(self, "agent", family_of("causalab").canonical(self.agent))
        positive_int(self.episodes, "episodes")
        positive_int(self.jobs, "jobs")
        if self.verify not in VERIFY_MODES:
            raise InputError(f"verify must be one of {list(VERIFY_MODES)}, got {self.verify!r}")
        check_fidelity(self.fidelity)
        for name in ("observations", "interventions"):
            value = getattr(self, name)
            if value is not None and (not isinstance(value, int) or value < 0):
                raise InputError(f"{name} must be 0 or more (None: the suite's), got {value!r}")
        if self.observations == 0 and self.interventions == 0:
            raise InputError("observations=0 with interventions=0 leaves nothing to learn from")

    @property
    def regime(self) -> str | None:
        """The scaling regime this bench runs (None: the main setting)."""
        return run_regime(self.observations, self.interventions)

    def units(self) -> list[CausaLabUnit]:
        from silicolab.envs.causalab.suite import load_suite

        sizes = {s: len(load_suite(s)) for s in self.suites}
        return [
            CausaLabUnit(self, s, i)
            for s in self.suites
            for i in range(min(self.episodes, sizes[s]))
        ]


@dataclass(frozen=True)
class CausaLabUnit:
    """One episode: graph ``index`` of ``suite`` under ``bench``."""

    bench: CausaLabBench
    suite: str
    index: int


async def _aplay(unit: CausaLabUnit, model: Any = None) -> dict[str, Any]:
    from silicolab.envs import make

    bench = unit.bench
    budget = {} if bench.interventions is None else {"budget": bench.interventions}
    prior = {} if bench.observations is None else {"n_prior": bench.observations}
    lab = make(
        "causalab", suite=unit.suite, index=unit.index, fidelity=bench.fidelity, seed=bench.seed,
        **prior, **budget,
    )  # fmt: skip
    options = {"verify": bench.verify} if bench.agent == "llm" else {}
    return await play_episode(
        lab, bench.agent, model=model, seed=bench.seed, options=options.items(), index=unit.index
    )


def suite_row(suite: str, records: Sequence[dict[str, Any]], errors: int) -> dict[str, Any]:
    """Macro averages over the episodes of one suite (accuracy and consistency in %)."""
    won = [r for r in records if r["success"]]
    lost = [r for r in records if not r["success"]]
    solvable = [r for r in records if r["solvable"]]
    row: dict[str, Any] = {
        "suite": suite,
        "episodes": len(records),
        "errors": errors,
        "solvable": len(solvable),
        "accuracy": 100 * mean([r["success"] for r in records]),
        "accuracy_solvable": 100 * mean([r["success"] for r in solvable]),
    }
    for name in MEAN_METRICS:
        row[name] = mean([r["metrics"].get(name) for r in records])
    for label, group in (("success", won), ("failure", lost)):
        row[f"budget_used_{label}"] = mean([r["metrics"]["budget_used"] for r in group])
        row[f"consistency_{label}"] = 100 * mean(
            [r["metrics"]["consistency_fraction"] for r in group]
        )
    row.update(formula_columns(records))
    row["runtime_s"] = mean([r["runtime_s"] for r in records])
    row["llm_calls"] = mean([r["usage"].get("calls", 0) for r in records])
    row["tokens"] = mean(
        [r["usage"].get("input_tokens", 0) + r["usage"].get("output_tokens", 0) for r in records]
    )
    return row


#: Why the ``formula_*`` columns have no paper number beside them: they are ours.
FORMULA_NOTE = (
    "formula_* columns are our own metrics, not the paper's: the share of episodes whose "
    "final hypothesis's equation, evaluated on the reactor crystal, is within 5 Hz of f* "
    "(formula_hit, %), and the median of that error (formula_abs_error_median, Hz). The "
    "paper scores the formula of its re-evaluation instead (reeval_formula_*, faithful LLM "
    "runs) and publishes no number for it"
)


def formula_columns(records: Sequence[dict[str, Any]]) -> dict[str, float]:
    """Our ``formula_hit`` (% of episodes whose final equation predicts f* within 5 Hz on
    the reactor crystal; an equation that cannot be evaluated misses) and
    ``formula_abs_error_median`` (Hz, over the evaluable ones), and the same of the
    re-evaluation's formula (``reeval_formula_*``, NaN when no episode ran one)."""
    out: dict[str, float] = {}
    for prefix in ("", "reeval_"):
        had = [r["metrics"] for r in records if f"{prefix}formula_hit" in r["metrics"]]
        errors = [m[f"{prefix}formula_abs_error"] for m in had]
        finite = [float(e) for e in errors if e is not None and math.isfinite(float(e))]
        out[f"{prefix}formula_hit"] = 100 * mean([bool(m[f"{prefix}formula_hit"]) for m in had])
        out[f"{prefix}formula_abs_error_median"] = statistics.median(finite) if finite else math.nan
    return out


def _with_published(
    row: dict[str, Any], label: str, verify: str, regime: str | None = None
) -> dict[str, Any]:
    """Add the anchors for the row's suite: the verification setting where the paper has
    it (4 nodes) for a verifying agent, else the main results; none for a run in a scaling
    regime (``--regime`` shows that regime's points beside it)."""
    if regime is not None:
        row.update(published_model="", published_setting=f"{regime} (not the main runs)")
        row.update({f"published_{ours}": math.nan for ours in COMPARED})
        row[ROW_KEY] = {}
        why = (
            f"withheld: this run is the paper's {regime} regime, not its main setting, so the "
            "main results are not compared; the regime's own anchors are listed beside the "
            "table (regime_summary), see docs/causalab.md, 'Benchmark'"
        )
        row[EMPTY_KEY] = {f"published_{ours}": why for ours in COMPARED}
        return row
    setting = "main"
    if verify != "none" and comparison_model(row["suite"], label, "verification"):
        setting = "verification"
    model = comparison_model(row["suite"], label, setting)
    row["published_model"] = model or ""
    row["published_setting"] = setting
    provenance: dict[str, dict[str, Any]] = {}
    for ours, metric in COMPARED.items():
        anchor = find_anchor(row["suite"], model, metric, setting) if model else None
        row[f"published_{ours}"] = published_value(anchor)
        if anchor is not None:
            provenance[f"published_{ours}"] = {
                **anchor.provenance.to_dict(),
                "low": anchor.value,
                "high": anchor.high,
            }
    row[ROW_KEY] = provenance
    return row


def published_value(anchor: Anchor | None) -> float | list[float]:
    """The published column's value: the number, ``[low, high]`` for a range, NaN for none."""
    if anchor is None:
        return math.nan
    return anchor.value if anchor.bounds is None else list(anchor.bounds)


async def arun_causalab(
    bench: CausaLabBench, *, model: Any = None, run: EventLog | None = None
) -> pd.DataFrame:
    """Run ``bench`` and return one row per suite (see :func:`run_causalab_bench`); the
    run's :class:`~silicolab.runs.RunHealth` is in ``table.attrs["health"]``."""
    import pandas as pd

    label = ""
    if bench.agent == "llm":
        if model is None:
            raise InputError("the llm agent needs model= (a spec such as 'openai:gpt-5-mini')")
        from silicolab.llm import load_model

        model = load_model(model) if isinstance(model, str) else model
        label = model.spec
    tag = f"{bench.agent}[{label}|verify={bench.verify}|{bench.fidelity}|seed={bench.seed}]"
    groups, health = await arun_episode_groups(
        bench,
        functools.partial(_aplay, model=model),
        key=lambda u: f"{tag}/{u.suite}/{u.index}",
        group=lambda u: u.suite,
        groups=bench.suites,
        run=run,
        offline=None if bench.agent == "llm" else offline_twin(_aplay, "arun_causalab"),
        description="causalab",
    )
    rows = []
    for group in groups:
        records = [event["record"] for event in group.events]
        row = suite_row(group.key, records, errors=group.errors)
        row.update(agent=bench.agent, model=label, verify=bench.verify, fidelity=bench.fidelity)
        row.update(observations=bench.observations, interventions=bench.interventions)
        rows.append(_with_published(row, label, bench.verify, bench.regime))
    table = pd.DataFrame(rows)
    if label:
        table.attrs["usage"] = model.ledger.summary()
    table.attrs["health"] = health
    return table


def run_causalab_bench(
    suites: Sequence[str],
    agent: str,
    *,
    model: Any = None,
    run: EventLog | None = None,
    **options: Any,
) -> pd.DataFrame:
    """Run ``agent`` ("reference", "random" or "llm") on the first ``episodes`` graphs
    of each suite and return one row per suite (``options``: the other
    :class:`CausaLabBench` fields: ``episodes``, ``jobs``, ``verify``, ``fidelity``,
    ``seed``).

    Columns: ``suite``, ``episodes``, ``errors`` (failed units, recorded not fatal),
    ``solvable``, ``accuracy`` and ``accuracy_solvable`` (%), ``all_edge_precision/
    recall/f1``, ``target_parent_f1``, ``shd``, ``weight_f1`` (upstream's published
    metric) and ``weight_terms_f1`` (ours: both quadratic terms), ``root_f1``,
    ``budget_used`` (also split ``_success``/``_failure``), ``imec_final``,
    ``consistency_success``/``_failure`` (mean % of records the commit hypothesis fits
    within 5 Hz), ``runtime_s``, ``llm_calls`` and ``tokens`` per episode, and
    ``published_*`` beside them for ``published_model`` (the model ``model`` names, else
    the strongest published one). ``model`` (spec or loaded model) drives the llm
    agent, with ``verify`` ("none", "per_step", "before_commit"); ``run`` makes the bench
    resumable and receives every episode's full record.
    """
    bench = CausaLabBench(suites=suites, agent=agent, **options)  # type: ignore[arg-type]
    return sync(arun_causalab(bench, model=model, run=run), twin="arun_causalab")
