"""A bench over any registered environment family: the common episode record, averaged.

>>> from silicolab.bench.episodes import run_episodes_bench
>>> table = run_episodes_bench(["causalab"], "reference", seeds=2, jobs=1)
>>> table[["env", "episodes", "score_success"]].to_dict("records")
[{'env': 'causalab', 'episodes': 2, 'score_success': 1.0}]

Every environment registered with a :class:`~silicolab.scientists.Family` runs here with
no code of its own: one unit is one seed of one environment id, played by
:func:`silicolab.scientists.run_episode`; the row of an environment is the mean of each of
its headline ``scores`` (columns ``score_<name>``) and of its health counters. The family
benches (:mod:`.causalab`, :mod:`.boxinggym`) add their published anchors on top.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from silicolab.bench.harness import (
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


@dataclass(frozen=True, kw_only=True)
class EpisodesBench:
    """What to run: scientist ``agent`` on each environment id of ``envs`` for each of
    ``seeds`` (``env_options`` go to ``make``, ``options`` to the scientist, as sorted
    pairs); ``jobs`` episodes at a time, on ``executor``. Validated on construction."""

    envs: tuple[str, ...]
    agent: str = "reference"
    seeds: tuple[int, ...] = (1, 2, 3)
    env_options: tuple[tuple[str, Any], ...] = ()
    options: tuple[tuple[str, Any], ...] = ()
    jobs: int = 1
    executor: ExecutorChoice = LOCAL

    def __post_init__(self) -> None:
        from silicolab.scientists import family_of

        if isinstance(self.envs, str) or not self.envs:
            raise InputError("envs is a non-empty list of environment ids, e.g. ['causalab']")
        object.__setattr__(self, "envs", tuple(self.envs))
        names = {family_of(e).canonical(self.agent) for e in self.envs}
        object.__setattr__(self, "agent", names.pop())
        positive_int(self.jobs, "jobs")

    def units(self) -> list[EpisodeUnit]:
        return [EpisodeUnit(self, e, s) for e in self.envs for s in self.seeds]


@dataclass(frozen=True)
class EpisodeUnit:
    """One seed of one environment under ``bench``."""

    bench: EpisodesBench
    env: str
    seed: int


async def _aplay(unit: EpisodeUnit, model: Any = None) -> dict[str, Any]:
    from silicolab.envs import make

    bench = unit.bench
    env = make(unit.env, seed=unit.seed, **dict(bench.env_options))
    return await play_episode(env, bench.agent, model=model, seed=unit.seed, options=bench.options)


def env_row(env: str, episodes: Sequence[Mapping[str, Any]], errors: int) -> dict[str, Any]:
    """The mean of each score and health counter over one environment's episodes."""
    row: dict[str, Any] = {"env": env, "episodes": len(episodes), "errors": errors}
    names = sorted({k for e in episodes for k in e["scores"]})
    for name in names:
        row[f"score_{name}"] = mean([e["scores"].get(name) for e in episodes])
    row["steps"] = mean([e["steps"] for e in episodes])
    row["failed_steps"] = mean([_failed(e["health"]) for e in episodes])
    return row


def _failed(health: Mapping[str, Any]) -> int:
    from silicolab.runs.health import UnitHealth

    return UnitHealth.from_dict(health).failed_steps


async def arun_episodes(
    bench: EpisodesBench, *, model: Any = None, run: EventLog | None = None
) -> pd.DataFrame:
    """Run ``bench``; one row per environment, the run's health in ``attrs["health"]``."""
    import pandas as pd

    if bench.agent == "llm" and model is None:
        raise InputError("the llm scientist needs model= (a spec such as 'openai:gpt-4o-mini')")
    label = "" if model is None else str(getattr(model, "spec", model))
    tag = f"{bench.agent}[{label}|{bench.env_options}|{bench.options}]"
    groups, health = await arun_episode_groups(
        bench,
        functools.partial(_aplay, model=model),
        key=lambda u: f"{tag}/{u.env}/seed={u.seed}",
        group=lambda u: u.env,
        groups=bench.envs,
        run=run,
        offline=None if model is not None else offline_twin(_aplay, "arun_episodes"),
        description="episodes",
    )
    rows = []
    for group in groups:
        episodes = [event["episode"] for event in group.events]
        row = env_row(group.key, episodes, errors=group.errors)
        rows.append({**row, "agent": bench.agent, "model": label})
    table = pd.DataFrame(rows)
    table.attrs["health"] = health
    return table


def run_episodes_bench(
    envs: Sequence[str],
    agent: str = "reference",
    *,
    model: Any = None,
    run: EventLog | None = None,
    seeds: int | Sequence[int] = 3,
    env_options: Mapping[str, Any] | None = None,
    options: Mapping[str, Any] | None = None,
    jobs: int = 1,
) -> pd.DataFrame:
    """Run ``agent`` on each environment id in ``envs`` for ``seeds`` (a count: seeds
    1..n, or a list) and return one row per environment (module docstring)."""
    if isinstance(seeds, int) and not isinstance(seeds, bool):
        seeds = range(1, positive_int(seeds, "seeds") + 1)
    bench = EpisodesBench(
        envs=tuple(envs),
        agent=agent,
        seeds=tuple(int(s) for s in seeds),
        env_options=tuple(sorted((env_options or {}).items())),
        options=tuple(sorted((options or {}).items())),
        jobs=jobs,
    )
    return sync(arun_episodes(bench, model=model, run=run), twin="arun_episodes")


__all__ = ["EpisodeUnit", "EpisodesBench", "arun_episodes", "env_row", "run_episodes_bench"]
