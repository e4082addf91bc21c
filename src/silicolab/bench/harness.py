"""The one benchmark harness: units of work from a frozen spec, run resumably, with health.

Every bench (discovery, CausaLab, BoxingGym, any environment family) is a frozen, typed
spec object whose ``units()`` are frozen, picklable units of work carrying the spec. This
module runs them: :func:`arun_units` picks the executor (a process pool for CPU-bound units
when ``jobs > 1``, the event loop otherwise, or a Ray cluster when the spec's ``executor``
says so: :class:`~silicolab.runtime.ExecutorChoice`), appends every finished unit to the run's
``events.jsonl`` (a rerun skips it: resume) and records failures instead of stopping;
:func:`run_health` turns the results into a :class:`~silicolab.runs.RunHealth`;
:func:`arun_episode_groups` does both for the episode benches and splits their results into
the rows of the table (:class:`EpisodeGroup`), with :func:`offline_twin` as the process-pool
twin of their play function; :func:`sync` is the one synchronous twin of every bench's
async runner.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Coroutine, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.sync import run_sync
from silicolab.runs.health import RunHealth, UnitHealth
from silicolab.runtime import LOCAL, AsyncExecutor, ExecutorChoice, ProcessExecutor
from silicolab.runtime.base import EventLog, UnitResult


def _identity(value: Any) -> Any:
    return value


async def arun_units(
    units: Sequence[Any],
    play: Callable[[Any], Any],
    *,
    key: Callable[[Any], str],
    jobs: int,
    run: EventLog | None = None,
    process: Callable[[Any], Any] | None = None,
    description: str = "",
    events: bool = False,
    executor: ExecutorChoice = LOCAL,
) -> list[UnitResult]:
    """Run ``play(unit)`` (sync or async) for every unit, in order of ``units``.

    ``process`` is a picklable, top-level twin of ``play`` for CPU-bound units: with
    ``jobs > 1`` they run in that many worker processes; otherwise units run ``jobs`` at a
    time on the event loop (one at a time when a process twin exists: they are CPU-bound).
    A unit's value is stored as ``{"value": value}``, or, with ``events``, as the event
    data itself (a dict, such as :meth:`~silicolab.scientists.EpisodeRecord.to_event`).
    On Ray (``executor.kind == "ray"``) the process twin runs as Ray tasks, ``play`` on the
    cluster's unit runners, ``jobs`` units in flight either way.
    """
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs must be a positive integer, got {jobs!r}")
    convert: dict[str, Any] = {"key": key, "run": run, "on_error": "record"}
    if events:
        convert.update(to_event=_identity, from_event=_identity)
    if executor.kind != "local":
        cpu_bound = process is not None
        remote = executor.make(jobs, cpu_bound=cpu_bound, description=description)
        return await remote.amap(process if cpu_bound else play, units, **convert)
    if process is not None and jobs > 1 and len(units) > 1:
        executor: Any = ProcessExecutor(jobs, description=description)
        return await executor.amap(process, units, **convert)
    concurrency = 1 if process is not None else jobs
    return await AsyncExecutor(concurrency, description=description).amap(play, units, **convert)


@dataclass(frozen=True)
class EpisodeGroup:
    """The finished episodes of one row of a bench table (a suite, an environment, an
    (environment, goal) pair): the ``events`` of the units that succeeded and the
    ``failed`` results, recorded not fatal."""

    key: Any
    events: list[dict[str, Any]]
    failed: list[UnitResult]

    @property
    def errors(self) -> int:
        """How many of the group's units failed."""
        return len(self.failed)


async def arun_episode_groups(
    bench: Any,
    play: Callable[[Any], Any],
    *,
    key: Callable[[Any], str],
    group: Callable[[Any], Any],
    groups: Iterable[Any],
    run: EventLog | None,
    offline: Callable[[Any], Any] | None,
    description: str,
) -> tuple[list[EpisodeGroup], RunHealth]:
    """Run every episode unit of ``bench`` (its ``units()``, ``jobs`` at a time) with
    :func:`arun_units` and split the results by ``group(unit)`` into one
    :class:`EpisodeGroup` per key of ``groups``, in that order; plus the run's health.

    Unit values are :meth:`~silicolab.scientists.EpisodeRecord.to_event` dicts; a failed
    unit counts as a model error when the episodes are model-driven (``offline`` is None).
    """
    units = bench.units()
    results = await arun_units(
        units,
        play,
        key=key,
        jobs=bench.jobs,
        run=run,
        events=True,
        process=offline,
        description=description,
        executor=bench.executor,
    )
    health_of = functools.partial(episode_health, model_errors=offline is None)
    by_key: dict[Any, list[UnitResult]] = {}
    for result, unit in zip(results, units, strict=True):
        by_key.setdefault(group(unit), []).append(result)
    split = []
    for name in groups:
        mine = by_key.get(name, [])
        events = [r.value for r in mine if r.ok]
        split.append(EpisodeGroup(name, events, [r for r in mine if not r.ok]))
    return split, run_health(results, health_of)


async def play_episode(
    env: Any,
    agent: str,
    *,
    model: Any = None,
    seed: int | None = None,
    options: Iterable[tuple[str, Any]] = (),
    **play_options: Any,
) -> dict[str, Any]:
    """One episode of scientist ``agent`` on ``env`` as its event (``options`` go to the
    scientist, ``play_options`` to the family's player)."""
    from silicolab.scientists import arun_episode, make_scientist

    scientist = make_scientist(env, agent, model=model, seed=seed, **dict(options))
    return (await arun_episode(env, scientist, **play_options)).to_event()


def offline_twin(
    play: Callable[[Any], Coroutine[Any, Any, Any]], twin: str
) -> Callable[[Any], Any]:
    """The process-pool twin of an episode bench's ``play(unit)`` coroutine function (a
    top-level function, so the twin pickles): it plays the unit with no model, in the worker's
    own event loop (``twin`` names the bench's async runner for :func:`sync`)."""
    return functools.partial(_play_offline, play, twin)


def _play_offline(
    play: Callable[[Any], Coroutine[Any, Any, Any]], twin: str, unit: Any
) -> dict[str, Any]:
    event: dict[str, Any] = sync(play(unit), twin=twin)
    return event


#: Run a bench's async runner from synchronous code, a notebook included: the one
#: :func:`~silicolab.core.sync.run_sync`, under the name the benches and the CLI use.
sync = run_sync


def episode_health(result: UnitResult, *, model_errors: bool) -> UnitHealth | None:
    """The health of one episode unit: its stored counters, or for a failed unit one
    model error when a model drives the episode (``model_errors``), else None."""
    if result.ok:
        stored = (result.value or {}).get("episode", {}).get("health")
        return None if stored is None else UnitHealth.from_dict({**stored, "unit": result.key})
    if not model_errors:
        return None
    return UnitHealth(unit=result.key, steps=1, model_errors=1, sample_reply=str(result.error))


def run_health(
    results: Sequence[UnitResult], health_of: Callable[[UnitResult], UnitHealth | None]
) -> RunHealth:
    """The run's health from each unit's (units without counters are left out)."""
    units = [h for h in (health_of(r) for r in results) if h is not None]
    return RunHealth.of(units)


def mean(values: Sequence[Any]) -> float:
    """The mean of the values that are not None or NaN (NaN when there is none)."""
    clean = [float(v) for v in values if v is not None and not math.isnan(float(v))]
    return sum(clean) / len(clean) if clean else math.nan


#: Column prefixes of the published figures printed beside ours.
PUBLISHED_PREFIXES = ("published_", "paper_", "box_")
#: The key of a bench row that says, per published column, why it is empty when the paper
#: is not simply silent: a number the bench *withholds* (it measures something else in this
#: run's mode) or one the paper has but the bench does not hold. Read by :func:`null_reasons`.
EMPTY_KEY = "published_empty"
#: Why an empty published column is empty when the row does not say otherwise.
NO_PUBLISHED_VALUE = "the published tables have no value for this row"


def null_reasons(row: Mapping[str, Any]) -> dict[str, str]:
    """``{column: why it is empty}`` for every ``None`` figure of a bench row (strict JSON
    writes a missing or non-finite number as ``null``; the reason says which it was): a
    published column the row's :data:`EMPTY_KEY` explains (withheld, or not held), else one
    the paper has no value for; a fallback column of a row without a scored fallback graph,
    a unit that failed (its error), a row whose every unit failed, or a summary with no
    finite value to summarize."""
    error = str(row.get("error") or "").strip()
    done = next((row[k] for k in ("episodes", "seeds") if row.get(k) is not None), None)
    all_failed = done == 0 and bool(row.get("errors"))  # no unit of the row finished
    explained = row.get(EMPTY_KEY) or {}
    reasons: dict[str, str] = {}
    for column, value in row.items():
        if value is not None or column in ("error", "null_reasons", EMPTY_KEY):
            continue
        if column in explained:
            reasons[column] = str(explained[column])
        elif column.startswith(PUBLISHED_PREFIXES) or column == "match":
            reasons[column] = NO_PUBLISHED_VALUE
        elif column.startswith("fallback"):
            reasons[column] = "no fallback graph was scored for this row"
        elif error:
            reasons[column] = f"the unit failed: {error[:200]}"
        elif all_failed:
            reasons[column] = f"every unit of this row failed ({int(row['errors'])} errors)"
        else:
            reasons[column] = "no finite value to summarize (every unit's was missing or NaN)"
    return reasons


def positive_int(value: Any, name: str) -> int:
    """``value`` if it is a positive integer, else an :class:`InputError` naming ``name``."""
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise InputError(f"{name} must be a positive integer, got {value!r}")
    return value


__all__ = [
    "EMPTY_KEY",
    "LOCAL",
    "NO_PUBLISHED_VALUE",
    "EpisodeGroup",
    "ExecutorChoice",
    "arun_episode_groups",
    "arun_units",
    "episode_health",
    "mean",
    "null_reasons",
    "offline_twin",
    "play_episode",
    "positive_int",
    "run_health",
    "sync",
]
