"""The causal-discovery benchmark: our methods on the SCP/MAC datasets, side by side with
the numbers MAC published (arXiv 2407.15073 v2, Tables 2 and 3; each method only beside
its own row: :mod:`silicolab.bench.discovery_anchors`).

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

from silicolab.bench.anchors import ROW_KEY
from silicolab.bench.discovery_anchors import DATASETS, PUBLISHED, Published, paper_row
from silicolab.bench.harness import LOCAL, ExecutorChoice, arun_units, positive_int, sync
from silicolab.core.errors import InputError
from silicolab.runs.health import RunHealth, UnitHealth
from silicolab.runtime.base import EventLog


def published_table() -> pd.DataFrame:
    """:data:`PUBLISHED` as a tidy table (``table`` and ``row``: where each cell is)."""
    return pd.DataFrame([{**asdict(p), "row": p.row} for p in PUBLISHED])


def model_label(model: Any) -> str:
    """A model's name as Table 2 would print it (``"openai:gpt-4o-mini"`` -> the spec)."""
    if model is None:
        return ""
    return str(getattr(model, "spec", None) or model)


def find_published(method: str, dataset: str, model: Any = None) -> Published | None:
    """The published cell for ``method`` on ``dataset``: its own row only (the explicit
    mapping of :mod:`silicolab.bench.discovery_anchors`), for LLM methods the row of the
    exact paper model the model's spec names (``mac_single_agent`` with
    ``openai:gpt-4o-mini`` is Table 3's "Our single-agent"; never Table 2's single-agent
    prompting rows); ``exact_scp`` finds the published Exact Search row, while the
    correctly oriented ``exact`` is our own row and has none."""
    return paper_row(method, dataset, None if model is None else model_label(model))


def _tokens(usage: Mapping[str, Any]) -> int:
    total = usage.get("total", usage) if isinstance(usage, Mapping) else {}
    if not isinstance(total, Mapping):
        return 0
    if "total_tokens" in total:
        return int(total["total_tokens"])
    return int(total.get("input_tokens", 0)) + int(total.get("output_tokens", 0))


_SCORED = ("shd", "nhd", "nhd_truncated", "f1")


def _row(method: str, dataset: str, result: Any, truth: Any, model: Any) -> dict[str, Any]:
    """One bench row. A result whose coding agent failed and fell back to a statistical
    algorithm (:func:`~silicolab.discovery.mac.coding.fallback_of`) names it in
    ``fallback`` and says so in ``error``; when the graph is the fallback's, its scores go
    to the ``fallback_*`` columns and the method's own stay empty."""
    from silicolab.discovery.mac.coding import fallback_of
    from silicolab.discovery.scoring import score

    scores = score(result, truth)
    row = {
        "method": method,
        "dataset": dataset,
        "model": model_label(model),
        **{name: scores[name] for name in _SCORED},
        "runtime_s": result.runtime_s,
        "tokens": _tokens(result.usage),
        "notes": " | ".join(result.notes),
    }
    fell_back = fallback_of(result)
    if fell_back is None:
        return row
    algorithm, graph_is_fallback = fell_back
    row["fallback"] = algorithm
    if graph_is_fallback:
        row |= {f"fallback_{name}": scores[name] for name in _SCORED}
        row |= {"shd": None, "nhd": math.nan, "nhd_truncated": math.nan, "f1": math.nan}
        row["error"] = (
            f"FAILED: every coding attempt failed, so {method} has no graph of its own; "
            f"the graph of the fallback {algorithm} is scored in the fallback columns"
        )
    else:
        row["error"] = (
            f"DEGRADED: every coding attempt failed; the debate's evidence came from the "
            f"fallback {algorithm}, not from the agent's code"
        )
    return row


@dataclass(frozen=True, kw_only=True)
class DiscoveryBench:
    """What to run: each of ``methods`` on each of ``datasets`` (``method_params`` maps a
    method to extra parameters, as sorted pairs), ``jobs`` units at a time; ``fidelity``
    goes to the MAC methods with debaters (:data:`~silicolab.discovery.mac.DEBATE_METHODS`):
    ``"faithful"`` (default) the paper's debater instructions, ``"fixed"`` ours. Validated
    on construction; :meth:`build` takes friendlier values."""

    methods: tuple[str, ...]
    datasets: tuple[str, ...] = DATASETS
    jobs: int = 1
    executor: ExecutorChoice = LOCAL
    method_params: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    fidelity: str = "faithful"

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
        from silicolab.envs import check_fidelity

        check_fidelity(self.fidelity)
        given = sorted(m for m, p in self.method_params if "fidelity" in dict(p))
        if given:
            raise InputError(
                f"method_params gives fidelity for {given}; give it once as fidelity= "
                "(it goes to every method with debaters)",
                params=("method_params", "fidelity"),
            )

    @classmethod
    def build(
        cls,
        methods: Sequence[str],
        datasets: Sequence[str] = DATASETS,
        *,
        jobs: int = 1,
        method_params: Mapping[str, Mapping[str, Any]] | None = None,
        executor: ExecutorChoice = LOCAL,
        fidelity: str = "faithful",
    ) -> DiscoveryBench:
        params = tuple(
            sorted((m, tuple(sorted(p.items()))) for m, p in (method_params or {}).items())
        )
        return cls(
            methods=methods,
            datasets=datasets,
            jobs=jobs,
            method_params=params,
            executor=executor,
            fidelity=fidelity,
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
    from silicolab.discovery.mac import DEBATE_METHODS

    ds = datasets.load(unit.dataset)
    fn = registry.get(unit.method)
    kwargs = unit.bench.params(unit.method)
    if unit.method in DEBATE_METHODS:  # the debaters' instructions: the paper's or ours
        kwargs["fidelity"] = unit.bench.fidelity
    accepted = inspect.signature(fn).parameters
    open_kwargs = any(p.kind is inspect.Parameter.VAR_KEYWORD for p in accepted.values())
    for name, value in (("description", ds.description), ("variables", ds.variables)):
        if (name in accepted or open_kwargs) and name not in kwargs:
            kwargs[name] = value
    if inspect.iscoroutinefunction(fn):
        result = await fn(ds.data, model=model, **kwargs)
    else:  # a sync wrapper may run its own event loop, so keep it off this one
        result = await asyncio.to_thread(fn, ds.data, model=model, **kwargs)
    row = _row(unit.method, unit.dataset, result, ds.truth, model)
    if "fidelity" in kwargs:  # the debaters' instructions this row was run with
        row["fidelity"] = kwargs["fidelity"]
    return row


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
    row["published_row"] = "" if ref is None else ref.row
    row[ROW_KEY] = (
        {}
        if ref is None
        else {
            "published_shd": {**ref.provenance("SHD").to_dict(), "low": ref.shd, "high": None},
            "published_nhd": {**ref.provenance("NHD").to_dict(), "low": ref.nhd, "high": None},
        }
    )
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
            description="discovery",
            executor=bench.executor,
        )
        rows += _collect(results, stat, "")
    if llm:
        results = await arun_units(
            llm,
            functools.partial(_run_llm_unit, model=model),
            key=lambda u: f"{u.method}[{label}{_fidelity_tag(u)}]/{u.dataset}",
            jobs=bench.jobs,
            run=run,
            description="discovery (LLM)",
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


def _fidelity_tag(unit: DiscoveryUnit) -> str:
    """What a unit key adds for fixed-fidelity debaters (faithful keys stay as they were
    before ``fidelity`` existed, so older runs resume), so a run never reuses one
    fidelity's result for the other."""
    from silicolab.discovery.mac import DEBATE_METHODS

    fixed = unit.method in DEBATE_METHODS and unit.bench.fidelity != "faithful"
    return f"|{unit.bench.fidelity}" if fixed else ""


def _llm_health(result: Any) -> UnitHealth:
    """An LLM unit is one model step: a failed unit is a model error, a unit whose coding
    agent fell back to a statistical algorithm (its row names the ``fallback``) an
    invalid action."""
    unit = UnitHealth(unit=result.key, steps=1)
    if not result.ok:
        unit.note_failure("model_errors", str(result.error))
    elif result.value.get("fallback"):
        unit.note_failure("invalid_actions", result.value.get("error"))
    return unit


def _collect(results: list[Any], units: list[DiscoveryUnit], label: str) -> list[dict]:
    rows = []
    for result, unit in zip(results, units, strict=True):
        if result.ok:
            rows.append({**result.value, "error": result.value.get("error", "")})
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
    fidelity: str = "faithful",
) -> pd.DataFrame:
    """Run each method on each dataset and return one row per (method, dataset): our
    ``shd``/``nhd``/``nhd_truncated``/``f1``/``runtime_s``/``tokens``, the published
    ``published_shd``/``published_nhd`` beside them, ``match`` (both equal, NHD truncated
    as printed), notes and ``error`` (a failed unit is recorded, not fatal).

    ``model`` is passed to LLM methods; ``method_params`` maps a method to extra
    parameters (e.g. ``{"exact": {"scp_orientation_quirk": True}}``); ``run`` makes the
    bench resumable; ``jobs`` bounds the parallel units. ``fidelity`` goes to the MAC
    methods with debaters (meta-debate, debate-coding and the hybrids): ``"faithful"`` the
    paper's debater instructions (the default, as the methods'), ``"fixed"`` ours; their
    rows record it in ``fidelity``.
    """
    bench = DiscoveryBench.build(
        methods, datasets, jobs=jobs, method_params=method_params, fidelity=fidelity
    )
    for method in bench.methods:  # unknown names fail before any work
        from silicolab.discovery import registry

        registry.kind_of(method)
    return sync(arun_discovery(bench, model=model, run=run), twin="arun_discovery")
