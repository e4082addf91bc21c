"""``sl.replicate_study``: one study under every subject model x wording x seed, in one
resumable run directory, with a meta-analysis, a variance decomposition and a verdict per
path (``silicolab study replicate`` is its command).

The run directory holds ``run.json`` (the settings), ``hypothesis.yaml``, ``events.jsonl``
(a ``wordings`` unit with the paraphrases, then one unit per variant and condition),
``record.json`` (variants, per-variant estimates, per-path meta-analysis and verdict, the
wordings side by side), ``estimates.csv`` and ``paths.csv`` (the same as flat tables),
``report.md``, ``figures/`` (a forest plot per path, the variance
decomposition) and ``report.html``.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from silicolab.api._display import Shown, html_table, inline_image
from silicolab.api.run_flow import first_figure, runs_root, shown_run_dir
from silicolab.api.study_replicate_flow import KIND
from silicolab.core.errors import InputError
from silicolab.report.replication_report import summary_row
from silicolab.runtime.bounds import check_jobs
from silicolab.studies.design import DEFAULT_MAX_CONDITIONS

if TYPE_CHECKING:
    import pandas as pd


@dataclass(frozen=True, repr=False)
class ReplicationResult(Shown):
    """A finished replication: its ``run_dir``, ``status`` and ``record``; ``paths`` has one
    summary per path (pooled estimates, heterogeneity, decomposition, verdict)."""

    run_dir: Path
    status: str
    record: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)

    @property
    def paths(self) -> list[dict[str, Any]]:
        return list(self.record.get("paths") or [])

    @property
    def health(self) -> Any:
        """The subjects' model health over every variant's conditions (a ``RunHealth``)."""
        from silicolab.runs import RunHealth, UnitHealth

        units = (self.record.get("health") or {}).get("units") or []
        return _Health(RunHealth.of(UnitHealth.from_dict(u) for u in units), self.record)

    @property
    def estimates(self) -> pd.DataFrame:
        """Every variant's estimate of every path (``estimates.csv``): variant, model,
        wording, seed, path, estimate, se, p, n."""
        from silicolab.studies.replication.tables import estimates_table

        return estimates_table(self.record)

    @property
    def summary(self) -> pd.DataFrame:
        """One row per path (``paths.csv``): verdict, pooled fixed and random effects with
        CIs, tau², I², Q, the prediction interval, the sign and significance shares and
        the variance shares of model, wording and seed."""
        from silicolab.studies.replication.tables import paths_table

        return paths_table(self.record)

    @property
    def verdicts(self) -> dict[str, str]:
        """``{path: verdict name}``."""
        return {p["path"]: p["verdict"]["name"] for p in self.paths}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: what ``silicolab study replicate --json`` prints."""
        return {
            "run_dir": str(self.run_dir),
            "status": self.status,
            "study": self.record.get("study"),
            "variants": self.record.get("variants"),
            "paths": [summary_row(p) for p in self.paths],
        }

    @classmethod
    def from_run(cls, path: str | Path) -> ReplicationResult:
        """Read a finished replication run back."""
        from silicolab.api.run_flow import open_finished

        run, record = open_finished(path, KIND)
        return cls(shown_run_dir(run.path), run.status, record, run.info)

    def _headline(self) -> list[tuple[str, Any]]:
        robust = sum(v == "robust" for v in self.verdicts.values())
        return [
            ("study", self.record.get("study")),
            ("status", self.status),
            ("variants", len(self.record.get("variants") or [])),
            ("robust paths", f"{robust} of {len(self.paths)}"),
            ("run_dir", self.run_dir),
        ]

    def _figure(self) -> Path | None:
        return first_figure(self.run_dir)

    def _repr_html_(self) -> str:
        rows = [
            (r["path"], f"{r['verdict']} · RE {r['random']}") for r in map(summary_row, self.paths)
        ]
        return (
            f"<div><strong>ReplicationResult</strong>{html_table(self._headline() + rows)}"
            f"{inline_image(self._figure())}</div>"
        )


#: ``replicate_study``'s stored settings and their defaults: a resumed replication reuses
#: the stored values, and refuses one the caller set to something else.
DEFAULTS: dict[str, Any] = {
    "models": [], "wordings": 1, "seeds": [0], "subjects": "llm", "conditions": None,
    "max_conditions": DEFAULT_MAX_CONDITIONS, "jobs": None, "statement_tokens": 300,
}  # fmt: skip


def replicate_study(
    study: Any = None,
    *,
    models: Sequence[str] | str = (),
    wordings: int | str | Path = 1,
    seeds: int | Sequence[int] = 1,
    subjects: str = "llm",
    conditions: int | None = None,
    max_conditions: int = DEFAULT_MAX_CONDITIONS,
    jobs: int | None = None,
    statement_tokens: int = 300,
    model: str | None = None,
    base_url: str | None = None,
    max_cost: float | None = None,
    executor: Any = "local",
    ray_address: str | None = None,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    resume: bool | str | Path | None = None,
    notify: Callable[[str], None] | None = None,
    typed: Collection[str] | None = None,
) -> ReplicationResult:
    """Replicate ``study`` (a built-in study, a hypothesis file or a Hypothesis) under
    every subject model in ``models`` x wording x seed and meta-analyze each path.

    ``wordings``: how many wordings (1 = the original only; K: the original and K-1
    paraphrases written by the scientist model, each checked to keep every treatment
    value, level and unit), or a YAML file of the researcher's own. ``seeds``: how many
    (0 .. S-1) or which. ``subjects="world"`` runs every variant offline in the hidden-SCM
    world (the model specs are then labels). ``model`` is the scientist's model (it writes
    the paraphrases); each variant's subjects and coordinator are its model in
    ``models``; ``base_url`` serves ``model`` and ``models``. ``jobs``: conditions in
    flight in all (default: 16 per variant, at most 256); every variant's units run as one
    batch, interleaved, and each subject model's concurrency limit paces its calls.
    ``max_cost`` refuses a plan that may cost more and stops new paid calls at the limit
    (``resume=`` finishes it).
    ``executor="ray"`` (with ``ray_address``, default the cluster started on this
    machine) runs the units on a Ray cluster, checked before any run directory exists.

    ``resume``: ``True`` (the newest unfinished replication) or a run directory; the run's
    stored settings are used, so ``models`` and the rest may be left out. ``typed`` names
    the settings the caller set on purpose (``None``: those that differ from their
    defaults): one that contradicts the stored value is refused, as is a ``study`` that
    is not the stored one.
    """
    from silicolab.api.study_replicate_flow import run_replication
    from silicolab.runtime.choice import ExecutorChoice

    resuming = resume not in (None, False)
    settings = _settings(
        models=models, wordings=wordings, seeds=seeds, subjects=subjects,
        conditions=conditions, max_conditions=max_conditions, jobs=jobs,
        statement_tokens=statement_tokens, resuming=resuming,
    )  # fmt: skip
    if typed is None:
        typed = {k for k, v in settings.items() if v != DEFAULTS[k]}
    choice = (
        executor if isinstance(executor, ExecutorChoice) else ExecutorChoice(executor, ray_address)
    )
    return run_replication(
        study, settings, model=model, base_url=base_url, max_cost=max_cost,
        root=runs_root(runs_dir, config), config=None if config is None else Path(config),
        resume=resume if resuming else None, typed=set(typed), executor=choice,
        notify=notify,
    )  # fmt: skip


def _settings(*, resuming: bool, **given: Any) -> dict[str, Any]:
    """The replication's settings as ``run.json`` stores them, each checked (an
    :class:`InputError` naming the parameter)."""
    wordings, subjects, jobs = given["wordings"], given["subjects"], given["jobs"]
    if isinstance(wordings, bool) or (isinstance(wordings, int) and wordings < 1):
        raise InputError(
            f"wordings={wordings!r} must be 1 or more, or a file", params=("wordings",)
        )
    if subjects not in ("llm", "world"):
        raise InputError(f"subjects={subjects!r}: replicate 'llm' or 'world' subjects",
                         params=("subjects",))  # fmt: skip
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
            raise InputError(f"jobs={jobs!r} must be a whole number of at least 1",
                             params=("jobs",))  # fmt: skip
        check_jobs(jobs, processes=False)
    return {
        **given,
        "models": _models(given["models"], subjects, resuming),
        "wordings": wordings if isinstance(wordings, int) else str(wordings),
        "seeds": _seeds(given["seeds"]),
    }


class _Health:
    """The replication's health for the command's last line: the subjects' health and the
    record's own problems (a replication without a single estimate)."""

    def __init__(self, health: Any, record: dict[str, Any]):
        self.health, self.problems = health, (record.get("health") or {}).get("problems") or []

    @property
    def degraded(self) -> bool:
        return bool(self.health.degraded or self.problems)

    def summary_line(self) -> str:
        return "; ".join([self.health.summary_line(), *self.problems])


def _models(models: Sequence[str] | str, subjects: str, resuming: bool) -> list[str]:
    if isinstance(models, str):
        models = [m.strip() for m in models.split(",") if m.strip()]
    models = list(models)
    if not models and subjects == "world" and not resuming:
        return ["world"]
    if not models and not resuming:  # a resumed run's are its stored ones
        raise InputError(
            "models= names the subject models to compare, e.g. models=['openai:gpt-4o-mini', "
            "'anthropic:claude-3-5-haiku-latest']",
            params=("models",),
        )
    return models


def _seeds(seeds: int | Sequence[int]) -> list[int]:
    if isinstance(seeds, bool):
        raise InputError("seeds= takes a count or a list of seeds", params=("seeds",))
    if isinstance(seeds, int):
        if seeds < 1:
            raise InputError(f"seeds={seeds} must be at least 1", params=("seeds",))
        return list(range(seeds))
    out = [int(s) for s in seeds]
    if not out or any(s < 0 for s in out):
        raise InputError(f"seeds={list(seeds)} must be whole numbers >= 0", params=("seeds",))
    return out


__all__ = ["ReplicationResult", "replicate_study", "summary_row"]
