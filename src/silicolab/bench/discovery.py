"""The causal-discovery benchmark: our methods on the SCP/MAC datasets, side by side with
the numbers MAC published (arXiv 2407.15073 v2, Table 2).

One unit of work is one (method, dataset) pair. Statistical units are CPU-bound and run in
a process pool when ``jobs > 1``; LLM units are network-bound and run concurrently on the
event loop. With a :class:`silicolab.runs.Run`, each finished unit is appended to the run's
``events.jsonl`` at once and a rerun skips it (resume).
"""

from __future__ import annotations

import asyncio
import functools
import inspect
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import pandas as pd

from silicolab.bench.harness import LOCAL, ExecutorChoice, arun_units, positive_int, sync
from silicolab.core.errors import InputError
from silicolab.runs.health import RunHealth, UnitHealth
from silicolab.runtime.base import EventLog

DATASETS = ("auto_mpg", "dwd_climate", "sachs")
_ES_QUIRK = (
    "published Exact Search read dag_est untransposed (SCP's quirk), reproduced by the "
    "method exact_scp; the Auto MPG cell also needs numpy 1.x (tie-break among equivalent DAGs)"
)
#: Registry names whose published row has another name, and rows that are our own (None).
_PUBLISHED_AS: dict[str, str | None] = {"exact_scp": "exact", "exact": None}
_INCONSISTENT = "inconsistent cell: HD - SHD > |E|, which no binarized matrix can give (spec §2.4)"


@dataclass(frozen=True)
class Published:
    """One cell pair (SHD, NHD) of MAC's Table 2. ``model`` is the LLM ('' for statistical
    methods); ``label`` is the row name as printed."""

    method: str
    model: str
    dataset: str
    shd: int | None
    nhd: float | None
    label: str
    note: str = ""


def _rows(
    method: str,
    model: str,
    label: str,
    cells: Sequence[Any],
    notes: Mapping[str, str] | None = None,
) -> list[Published]:
    notes = notes or {}
    out = []
    for i, dataset in enumerate(DATASETS):
        shd, nhd = cells[2 * i], cells[2 * i + 1]
        if shd is not None:
            out.append(Published(method, model, dataset, shd, nhd, label, notes.get(dataset, "")))
    return out


_N = None  # a cell printed as "-" in the paper
_BAD = {"auto_mpg": _INCONSISTENT}

#: MAC Table 2 rows: (method, model, label as printed, [SHD, NHD] per dataset[, notes]).
#: Method names are silicolab's registry names; the LLM-KBCI rows are SCP's statistical
#: methods with GPT-4 prior knowledge.
_TABLE2: tuple[tuple[Any, ...], ...] = (
    ("pc", "", "PC", [8, 0.48, 9, 0.305, 24, 0.206]),
    (
        "exact",
        "",
        "Exact Search",
        [7, 0.44, 6, 0.194, 31, 0.33],
        dict.fromkeys(DATASETS, _ES_QUIRK),
    ),
    ("direct_lingam", "", "LINGAM", [8, 0.48, 10, 0.388, 29, 0.289]),
    ("pc_llm_kbci", "gpt-4", "PC LLM-KBCI", [7, 0.44, 7, 0.222, 30, 0.314]),
    ("exact_llm_kbci", "gpt-4", "ES LLM-KBCI", [7, 0.44, 7, 0.222, 31, 0.33]),
    ("direct_lingam_llm_kbci", "gpt-4", "DirectLiGam LLM-KBCI", [7, 0.4, 9, 0.305, 29, 0.289]),
    ("single_agent", "gpt-4o", "Single-agent (GPT-4o)", [8, 0.36, 11, 0.388, 18, 0.214]),
    ("single_agent", "gpt-3.5", "Single-agent (GPT-3.5)", [7, 0.28, 10, 0.361, 31, 0.363]),
    ("meta_debate", "gpt-4o", "Causal Agent Debate", [5, 0.2, 9, 0.333, 35, 0.371]),
    ("meta_debate", "gpt-4o-mini", "Causal Agent Debate", [4, 0.16, 11, 0.416, 35, 0.338]),
    ("meta_debate", "gpt-3.5", "Causal Agent Debate", [5, 0.2, 5, 0.194, 21, 0.231]),
    ("meta_debate", "llama-3.1-70b", "Causal Agent Debate", [10, 0.44, 8, 0.222, 35, 0.380]),
    ("meta_debate", "llama-3.1-8b", "Causal Agent Debate", [7, 0.28, 9, 0.277, 35, 0.338]),
    ("meta_debate", "gemma-2-9b", "Causal Agent Debate", [5, 0.2, 7, 0.222, 25, 0.223]),
    ("debate_coding", "gpt-4o", "Coding Agents", [8, 0.48, 9, 0.388, 30, 0.322]),
    ("debate_coding", "gpt-4o-mini", "Coding Agents", [6, 0.6, 6, 0.194, 30, 0.322], _BAD),
    ("debate_coding", "gpt-3.5", "Coding Agents", [4, 0.48, 9, 0.305, 29, 0.28], _BAD),
    ("debate_coding", "llama-3.1-70b", "Coding Agents", [6, 0.6, 6, 0.194, 18, 0.157], _BAD),
    ("debate_coding", "llama-3.1-8b", "Coding Agents", [6, 0.6, 9, 0.388, 36, 0.396], _BAD),
    (
        "debate_coding",
        "gemma-2-9b",
        "Coding Agents (GPT-4o-mini's plan)",
        [7, 0.36, _N, _N, _N, _N],
    ),
    ("coding_debating", "gpt-4o", "Hybrid-Coding-Debating", [6, 0.28, 10, 0.305, 23, 0.247]),
    ("coding_debating", "gpt-4o-mini", "Hybrid-Coding-Debating", [5, 0.24, 9, 0.25, 21, 0.190]),
    ("coding_debating", "gpt-3.5", "Hybrid-Coding-Debating", [6, 0.32, 7, 0.25, 23, 0.198]),
    ("coding_debating", "llama-3.1-70b", "Hybrid-Coding-Debating", [6, 0.36, 6, 0.166, 33, 0.314]),
    ("coding_debating", "llama-3.1-8b", "Hybrid-Coding-Debating", [5, 0.2, 5, 0.138, 33, 0.305]),
    ("debating_coding", "gpt-4o", "Hybrid-Debating-Coding", [5, 0.24, 5, 0.138, 29, 0.297]),
    ("debating_coding", "gpt-4o-mini", "Hybrid-Debating-Coding", [8, 0.48, 7, 0.25, 22, 0.190]),
    ("debating_coding", "gpt-3.5", "Hybrid-Debating-Coding", [8, 0.48, 7, 0.277, 28, 0.272]),
    ("debating_coding", "llama-3.1-70b", "Hybrid-Debating-Coding", [5, 0.24, 6, 0.194, 29, 0.289]),
    ("debating_coding", "llama-3.1-8b", "Hybrid-Debating-Coding", [6, 0.4, 9, 0.388, _N, _N]),
)
PUBLISHED: tuple[Published, ...] = tuple(p for row in _TABLE2 for p in _rows(*row))


def published_table() -> pd.DataFrame:
    """:data:`PUBLISHED` as a tidy table."""
    return pd.DataFrame([asdict(p) for p in PUBLISHED])


def model_label(model: Any) -> str:
    """A model's name as Table 2 would print it (``"openai:gpt-4o-mini"`` -> the spec)."""
    if model is None:
        return ""
    return str(getattr(model, "spec", None) or model)


def find_published(method: str, dataset: str, model: Any = None) -> Published | None:
    """The published cell for ``method`` on ``dataset``.

    A ``mac_`` prefix is ignored (``mac_meta_debate`` finds ``meta_debate``); ``exact_scp``
    finds the published Exact Search row, while the correctly oriented ``exact`` is our own
    row and has none. For LLM methods: the row whose model name occurs in the model's spec
    (the longest such name, so ``gpt-4o-mini`` is not read as ``gpt-4o``)."""
    label = model_label(model).lower().replace("_", "-")
    base = _PUBLISHED_AS.get(method, method.removeprefix("mac_"))
    if base is None:
        return None
    best: Published | None = None
    for row in PUBLISHED:
        if row.method != base or row.dataset != dataset:
            continue
        if row.model and row.model not in label and model is not None:
            continue
        if row.model and model is None:
            continue
        if best is None or len(row.model) > len(best.model):
            best = row
    return best


def _tokens(usage: Mapping[str, Any]) -> int:
    total = usage.get("total", usage) if isinstance(usage, Mapping) else {}
    if not isinstance(total, Mapping):
        return 0
    if "total_tokens" in total:
        return int(total["total_tokens"])
    return int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))


def _row(method: str, dataset: str, result: Any, truth: Any, model: Any) -> dict[str, Any]:
    from silicolab.discovery.scoring import score

    scores = score(result, truth)
    return {
        "method": method,
        "dataset": dataset,
        "model": model_label(model),
        "shd": scores["shd"],
        "nhd": scores["nhd"],
        "nhd_truncated": scores["nhd_truncated"],
        "f1": scores["f1"],
        "runtime_s": result.runtime_s,
        "tokens": _tokens(result.usage),
        "notes": " | ".join(result.notes),
    }


@dataclass(frozen=True, kw_only=True)
class DiscoveryBench:
    """What to run: each of ``methods`` on each of ``datasets`` (``method_params`` maps a
    method to extra parameters, as sorted pairs), ``jobs`` units at a time. Validated on
    construction; :meth:`build` takes friendlier values."""

    methods: tuple[str, ...]
    datasets: tuple[str, ...] = DATASETS
    jobs: int = 1
    executor: ExecutorChoice = LOCAL
    method_params: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()

    def __post_init__(self) -> None:
        if isinstance(self.methods, str) or isinstance(self.datasets, str):
            raise InputError("methods and datasets are lists of names, e.g. ['pc'], ['auto_mpg']")
        object.__setattr__(self, "methods", tuple(self.methods))
        object.__setattr__(self, "datasets", tuple(self.datasets))
        unknown = sorted(set(self.datasets) - set(DATASETS))
        if unknown:
            raise InputError(f"unknown dataset(s) {unknown}; choose from {list(DATASETS)}")
        stray = sorted(set(dict(self.method_params)) - set(self.methods))
        if stray:
            raise InputError(
                f"method_params names method(s) {stray} that are not in {list(self.methods)}"
            )
        positive_int(self.jobs, "jobs")

    @classmethod
    def build(
        cls,
        methods: Sequence[str],
        datasets: Sequence[str] = DATASETS,
        *,
        jobs: int = 1,
        method_params: Mapping[str, Mapping[str, Any]] | None = None,
        executor: ExecutorChoice = LOCAL,
    ) -> DiscoveryBench:
        params = tuple(
            sorted((m, tuple(sorted(p.items()))) for m, p in (method_params or {}).items())
        )
        return cls(
            methods=methods, datasets=datasets, jobs=jobs, method_params=params, executor=executor
        )  # type: ignore[arg-type]

    def params(self, method: str) -> dict[str, Any]:
        return dict(dict(self.method_params).get(method, ()))

    def units(self, kinds: Mapping[str, str], llm: bool) -> list[DiscoveryUnit]:
        """The (method, dataset) units whose method is (``llm``) or is not an LLM method."""
        return [
            DiscoveryUnit(self, m, d)
            for m in self.methods
            for d in self.datasets
            if (kinds[m] == "llm") == llm
        ]


@dataclass(frozen=True)
class DiscoveryUnit:
    """One (method, dataset) pair under ``bench``."""

    bench: DiscoveryBench
    method: str
    dataset: str


def run_statistical_unit(unit: DiscoveryUnit) -> dict[str, Any]:
    """One statistical (method, dataset) unit; top level so a process pool can pickle it."""
    from silicolab.discovery import datasets, registry

    ds = datasets.load(unit.dataset)
    result = registry.discover(ds.data, unit.method, **unit.bench.params(unit.method))
    return _row(unit.method, unit.dataset, result, ds.truth, None)


async def _run_llm_unit(unit: DiscoveryUnit, model: Any) -> dict[str, Any]:
    from silicolab.discovery import datasets, registry

    ds = datasets.load(unit.dataset)
    fn = registry.get(unit.method)
    kwargs = unit.bench.params(unit.method)
    accepted = inspect.signature(fn).parameters
    open_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    for name, value in (("description", ds.description), ("variables", ds.variables)):
        if (name in accepted or open_kwargs) and name not in kwargs:
            kwargs[name] = value
    if inspect.iscoroutinefunction(fn):
        result = await fn(ds.data, model=model, **kwargs)
    else:  # a sync wrapper may run its own event loop, so keep it off this one
        result = await asyncio.to_thread(fn, ds.data, model=model, **kwargs)
    return _row(unit.method, unit.dataset, result, ds.truth, model)


def _with_published(row: dict[str, Any], model: Any) -> dict[str, Any]:
    ref = find_published(row["method"], row["dataset"], model)
    row["published_shd"] = None if ref is None else ref.shd
    row["published_nhd"] = None if ref is None else ref.nhd
    nhd = row.get("nhd_truncated")
    row["match"] = (
        None
        if ref is None
        else bool(
            row.get("shd") == ref.shd
            and nhd is not None
            and not (isinstance(nhd, float) and math.isnan(nhd))
            and abs(nhd - ref.nhd) < 1e-9
        )
    )
    row["published_note"] = "" if ref is None else ref.note
    return row


async def arun_discovery(
    bench: DiscoveryBench, *, model: Any = None, run: EventLog | None = None
) -> pd.DataFrame:
    """Run ``bench`` and return one row per (method, dataset) (see
    :func:`run_discovery_bench`); the LLM units' health is in ``table.attrs["health"]``."""
    from silicolab.discovery import registry

    kinds = {m: registry.kind_of(m) for m in bench.methods}
    if any(k == "llm" for k in kinds.values()) and model is None:
        raise InputError("LLM methods need model= (a spec such as 'openai:gpt-4o-mini' or a model)")
    label = model_label(model)
    stat, llm = bench.units(kinds, llm=False), bench.units(kinds, llm=True)
    rows: list[dict[str, Any]] = []
    health: list[Any] = []
    if stat:
        results = await arun_units(
            stat,
            run_statistical_unit,
            key=lambda u: f"{u.method}/{u.dataset}",
            jobs=bench.jobs,
            run=run,
            process=run_statistical_unit,
            executor=bench.executor,
        )
        rows += _collect(results, stat, "")
    if llm:
        results = await arun_units(
            llm,
            functools.partial(_run_llm_unit, model=model),
            key=lambda u: f"{u.method}[{label}]/{u.dataset}",
            jobs=bench.jobs,
            run=run,
            executor=bench.executor,
        )
        rows += _collect(results, llm, label)
        health = [_llm_health(r) for r in results]
    order = {
        (m, d): i for i, (m, d) in enumerate((m, d) for m in bench.methods for d in bench.datasets)
    }
    rows.sort(key=lambda r: order[(r["method"], r["dataset"])])
    table = [_with_published(r, model if kinds[r["method"]] == "llm" else None) for r in rows]
    frame = pd.DataFrame(table)
    frame.attrs["health"] = RunHealth.of(health)
    return frame


def _llm_health(result: Any) -> UnitHealth:
    """An LLM unit is one model step: a failed unit is a model error."""
    if result.ok:
        return UnitHealth(unit=result.key, steps=1)
    return UnitHealth(unit=result.key, steps=1, model_errors=1, sample_reply=str(result.error))


def _collect(results: list[Any], units: list[DiscoveryUnit], label: str) -> list[dict]:
    rows = []
    for result, unit in zip(results, units, strict=True):
        if result.ok:
            rows.append({**result.value, "error": ""})
        else:
            rows.append(
                {
                    "method": unit.method,
                    "dataset": unit.dataset,
                    "model": label,
                    "shd": None,
                    "nhd": math.nan,
                    "nhd_truncated": math.nan,
                    "f1": math.nan,
                    "runtime_s": result.elapsed_s,
                    "tokens": 0,
                    "notes": "",
                    "error": result.error,
                }
            )
    return rows


def run_discovery_bench(
    methods: Sequence[str],
    datasets: Sequence[str] = DATASETS,
    *,
    model: Any = None,
    run: EventLog | None = None,
    jobs: int = 1,
    method_params: Mapping[str, Mapping[str, Any]] | None = None,
) -> pd.DataFrame:
    """Run each method on each dataset and return one row per (method, dataset): our
    ``shd``/``nhd``/``nhd_truncated``/``f1``/``runtime_s``/``tokens``, the published
    ``published_shd``/``published_nhd`` beside them, ``match`` (both equal, NHD truncated
    as printed), notes and ``error`` (a failed unit is recorded, not fatal).

    ``model`` is passed to LLM methods; ``method_params`` maps a method to extra
    parameters (e.g. ``{"exact": {"scp_orientation_quirk": True}}``); ``run`` makes the
    bench resumable; ``jobs`` bounds the parallel units.
    """
    bench = DiscoveryBench.build(methods, datasets, jobs=jobs, method_params=method_params)
    for method in bench.methods:  # unknown names fail before any work
        from silicolab.discovery import registry

        registry.kind_of(method)
    return sync(arun_discovery(bench, model=model, run=run), twin="arun_discovery")
