"""``sl.run_episode``: one scientist on one environment for one episode, from Python.

>>> import silicolab as sl
>>> episode = sl.run_episode("causalab", "reference", seed=1, suite="3nodes")
>>> episode.scores["success"], episode.steps, episode.status
(1.0, 5, 'ok')

The environment is built by :func:`silicolab.envs.make` (``env_kw`` are its options, e.g.
CausaLab's ``suite`` and ``index``), the scientist by its family
(:func:`silicolab.scientists.make_scientist`), and the episode is played by
:func:`silicolab.scientists.arun_episode`. The command line has no one-episode command;
``silicolab bench episodes`` is the nearest: with ``runs_dir`` the episode is run as a
``bench-episodes`` run of one episode (its settings also store ``seed`` and
``env_options``) and its directory is written; without it nothing is written.
"""

from __future__ import annotations

import html
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.api._display import Shown, html_table
from silicolab.api.bench_flow import Connection
from silicolab.core.errors import InputError
from silicolab.scientists.episode import EpisodeRecord

_HEADLINE_SCORES = 3  # scores in the repr (the HTML shows them all)


def run_episode(
    env_id: str,
    scientist: str = "reference",
    *,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    seed: int = 0,
    config: str | Path | None = None,
    runs_dir: str | Path | None = None,
    **env_kw: Any,
) -> EpisodeResult:
    """Play one episode of ``scientist`` (``"reference"``: no language model, ``"random"``,
    or ``"llm"`` with ``model``, a spec such as ``"openai:gpt-4o-mini"``, and ``base_url``
    for a local server) on the environment registered as ``env_id`` (e.g. ``"causalab"``,
    ``"boxinggym/dugongs"``) made with ``seed`` and the options ``env_kw``.

    With ``runs_dir`` the episode is written as a ``bench-episodes`` run (see the module
    docstring) and read back from it."""
    from silicolab.envs import registry
    from silicolab.scientists import family_of

    if env_id not in registry.registered():
        raise InputError(
            f"env_id={env_id!r} is not a registered environment; use one of "
            f"{', '.join(registry.registered())}",
            params=("env_id",),
        )
    config = None if config is None else Path(config)
    family = family_of(env_id)
    name = family.canonical(scientist)
    if name in family.needs_model and not model:
        raise InputError(
            f"scientist={name!r} needs model= (a spec such as 'openai:gpt-4o-mini'; and "
            "base_url= for a local server)",
            params=("scientist", "model", "base_url"),
        )
    connection = Connection(config, base_url, api_key_env)
    if runs_dir is not None:
        return _run_written(env_id, name, model, seed, env_kw, connection, runs_dir)
    from silicolab.core.sync import run_sync
    from silicolab.envs import make
    from silicolab.scientists import arun_episode, make_scientist

    loaded = connection.model("scientist", model) if model else None
    env = make(env_id, seed=seed, **env_kw)
    player = make_scientist(env, name, model=loaded, seed=seed)
    record = run_sync(arun_episode(env, player), twin="arun_episode")
    return EpisodeResult(record=record)


def _run_written(
    env_id: str,
    scientist: str,
    model: str | None,
    seed: int,
    env_kw: dict[str, Any],
    connection: Connection,
    runs_dir: str | Path,
) -> EpisodeResult:
    """The episode as a ``bench-episodes`` run of one episode under ``runs_dir``."""
    from silicolab.api.bench_families import EPISODES, EPISODES_DEFAULTS
    from silicolab.api.bench_flow import Resources, bench_flow
    from silicolab.runtime.choice import LOCAL

    settings = {**EPISODES_DEFAULTS, "env": env_id, "agent": scientist, "model": model}
    settings.update(seeds=1, seed=seed, env_options=dict(env_kw))
    bench = bench_flow(
        EPISODES, settings, Resources(connection, 1, LOCAL), explicit=(), resume=False,
        retry_failed=False, runs_dir=runs_dir, config=connection.config, confirm=None,
    )  # fmt: skip
    return EpisodeResult.from_run(bench.run_dir)


@dataclass(eq=False, repr=False)
class EpisodeResult(Shown):
    """One finished episode: its :class:`~silicolab.scientists.EpisodeRecord` (``record``),
    and the run directory it was written to (``run_dir``, None when none was)."""

    record: EpisodeRecord
    run_dir: Path | None = None

    @property
    def env_id(self) -> str:
        return self.record.env

    @property
    def scientist(self) -> str:
        return self.record.scientist

    @property
    def seed(self) -> int | None:
        return self.record.seed

    @property
    def scores(self) -> dict[str, float]:
        """The episode's headline scores (the family's metrics)."""
        return dict(self.record.scores)

    metrics = scores

    @property
    def steps(self) -> int:
        return self.record.steps

    @property
    def health(self) -> Any:
        """The episode's :class:`~silicolab.runs.UnitHealth` counters."""
        return self.record.health

    @property
    def status(self) -> str:
        """``"degraded"`` when every step of the episode failed, else ``"ok"``."""
        return "degraded" if self.record.health.all_failed else "ok"

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: the episode record, its status and run directory."""
        run_dir = None if self.run_dir is None else str(self.run_dir)
        return {"status": self.status, "run_dir": run_dir, **self.record.to_dict()}

    @classmethod
    def from_run(cls, path: str | Path) -> EpisodeResult:
        """The first finished episode of the ``bench-episodes`` run at ``path``."""
        from silicolab.runs import Run

        run = Run.open(Path(path))
        if run.kind != "bench-episodes":
            raise InputError(
                f"path={str(path)!r} is a {run.kind} run, not a bench-episodes run",
                params=("path",),
            )
        for event in run.finished_events().values():
            data = event.get("data") or {}
            if "episode" in data:
                return cls(EpisodeRecord.from_event(data), run_dir=Path(run.path).resolve())
        raise InputError(
            f"path={str(path)!r}: the run has no finished episode (see its events.jsonl)",
            params=("path",),
        )

    def _headline(self) -> list[tuple[str, Any]]:
        scores = list(self.record.scores.items())[:_HEADLINE_SCORES]
        return [
            ("env", self.env_id),
            ("scientist", self.scientist),
            ("seed", self.seed),
            ("steps", self.steps),
            *scores,
            ("status", self.status),
        ]

    def _repr_html_(self) -> str:
        title = f"<strong>{html.escape(type(self).__name__)}</strong>"
        rows = [(k, v) for k, v in self._headline() if k not in self.record.scores] + list(
            self.record.scores.items()
        )
        if self.run_dir is not None:
            rows.append(("run_dir", self.run_dir))
        return f"<div>{title}{html_table(rows)}</div>"


__all__ = ["EpisodeResult", "run_episode"]
