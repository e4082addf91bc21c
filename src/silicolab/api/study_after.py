"""What can be done with a finished study, from Python and for the commands: refit its
data (``study fit``), have the scientist predict against its fit (``study predict``) and
plan a follow-on experiment (``study follow-on``).

Each reads the study's own files (``hypothesis.yaml``, ``data.csv``, ``record.json``) and
its stored options, so ``drop_capped`` and ``aggregate_replicates`` apply as they did to
the study's fit. A model that cannot be fitted raises
:class:`~silicolab.scm.estimability.NotEstimable` (its ``problems`` say why); the commands
turn it into a degraded exit. Every refusal comes before any model call or write.

>>> import silicolab as sl
>>> study = sl.load_run("runs/20260101-120000-study-lawyer")          # doctest: +SKIP
>>> refit = study.refit(interactions=True)                             # doctest: +SKIP
>>> predicted = study.predict(model="openai:gpt-4o-mini")              # doctest: +SKIP
"""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.files import atomic_write_text, can_create_in, dumps

#: The kinds of run whose study part can be refitted, predicted and followed on.
STUDY_KINDS = ("study", "demo")


@dataclass(frozen=True)
class FinishedStudy:
    """A study run (or demo run) whose main study is on disk: its run, hypothesis, record,
    and the rows its fit used (``data.csv``, replicates averaged when it was run with
    ``aggregate_replicates``)."""

    run: Any
    hypothesis: Any
    record: dict[str, Any]

    @classmethod
    def open(cls, run_dir: str | Path) -> FinishedStudy:
        """The finished study in ``run_dir``, or an :class:`InputError` naming the fix."""
        from silicolab.runs import Run
        from silicolab.studies.files import read_hypothesis
        from silicolab.studies.pipeline import HYPOTHESIS_FILE

        run = Run.open(Path(run_dir))
        record = run.read_record()
        ready = all((run.path / name).is_file() for name in (HYPOTHESIS_FILE, "data.csv"))
        if run.kind not in STUDY_KINDS or record is None or not ready:
            raise InputError(
                f"{run_dir} is not a study run whose main study finished; pass a "
                "runs/...-study-... or runs/...-demo-... folder (an interrupted one: finish "
                "it with resume= first)",
                params=("resume",),
            )
        return cls(run, read_hypothesis(run.path / HYPOTHESIS_FILE), record)

    @property
    def options(self) -> dict[str, Any]:
        return dict(self.record.get("options") or {})

    @property
    def seed(self) -> int:
        return int(self.options.get("seed", 0))

    @property
    def demo_seed(self) -> int | None:
        """The seed of a demo run (whose scripted scientist then stands in), else None."""
        return self.seed if self.run.kind == "demo" else None

    def data(self) -> Any:
        """The rows the study's fit used (class docstring)."""
        import pandas as pd

        from silicolab.core.files import read_user_text
        from silicolab.runs.run_dir import RECORD_FIX

        path = self.run.path / "data.csv"
        what = "the study's data"
        text = read_user_text(path, what=what, missing=RECORD_FIX, damaged=RECORD_FIX)
        try:
            table = pd.read_csv(io.StringIO(text))
        except (pd.errors.ParserError, pd.errors.EmptyDataError) as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise InputError(f"{path} is damaged (not CSV: {reason}): {RECORD_FIX}") from None
        if self.options.get("aggregate_replicates"):
            from silicolab.studies.data import aggregate_replicates

            return aggregate_replicates(self.hypothesis, table)
        return table

    def fit(self, **options: Any) -> Any:
        """``fit_study`` of :meth:`data` with the stored ``drop_capped`` (``options`` may
        add ``interactions``, ``outcome``, ``alternatives``, ``drop_capped=True``)."""
        from silicolab.studies.fit import fit_study

        drop = bool(options.pop("drop_capped", False) or self.options.get("drop_capped"))
        return fit_study(self.hypothesis, self.data(), drop_capped=drop, **options)


@dataclass(frozen=True)
class Refit:
    """A refit's JSON-ready ``data`` (as ``fit_study(...).to_dict()``), the file it was
    written to, which model (``"main"`` or ``"interactions"``) and the outcome fitted."""

    data: dict[str, Any]
    path: Path
    which: str
    outcome: str


def refit(
    run_dir: str | Path,
    *,
    interactions: bool = False,
    drop_capped: bool = False,
    outcome: str | None = None,
    out: str | Path | None = None,
) -> Refit:
    """Refit a finished study's data without rerunning it (``silicolab study fit``),
    optionally for another measured column ``outcome``; writes
    ``fit[-OUTCOME][-interactions][-uncapped].json`` into the run, or to ``out`` (a file,
    or a folder to write that name into): the only way to refit a read-only run, which is
    refused with that fix before anything is fitted."""
    study = FinishedStudy.open(run_dir)
    drop = drop_capped or bool(study.options.get("drop_capped"))
    name = "fit" + (f"-{outcome}" if outcome else "") + ("-interactions" * interactions)
    name += "-uncapped" if drop else ""
    target = _fit_target(study.run.path, f"{name}.json", None if out is None else Path(out))
    chosen = {"outcome": outcome} if outcome else {}
    fit = study.fit(interactions=interactions, drop_capped=drop, **chosen)
    data = fit.to_dict()
    path = _write_fit(target, study.run.path, dumps(data) + "\n")
    which = "interactions" if interactions else "main"
    return Refit(data, path, which, outcome or study.hypothesis.outcome.name)


def _fit_target(run_dir: Path, name: str, out: Path | None) -> Path:
    """Where a refit goes: ``out`` (a folder: ``out/name``), else the run directory, which
    must then be writable (a shared, read-only archive of a run is refused here)."""
    if out is not None:
        return out / name if out.is_dir() else out
    if not can_create_in(run_dir):
        raise InputError(
            f"cannot write {name} into {run_dir}: the folder is not writable; pass out=FILE "
            "(or out=DIR) to write the fit elsewhere, or make the folder writable",
            params=("out",),
        )
    return run_dir / name


def _write_fit(target: Path, run_dir: Path, text: str) -> Path:
    """Write the fit's JSON to ``target`` atomically, or one line naming why not."""
    try:
        return atomic_write_text(target, text)
    except OSError as exc:
        into_run = target.parent == run_dir
        fix = "pass out=FILE to write it elsewhere" if into_run else "pass another out="
        raise InputError(
            f"cannot write {target} ({exc.strerror or exc}); {fix}", params=("out",)
        ) from None


def _can_write(folder: Path, fix: str, params: tuple[str, ...] = ()) -> None:
    """Refuse, before any model call, a call whose output could not be written."""
    if not can_create_in(folder):
        raise InputError(
            f"cannot write into {folder}: the folder is not writable; {fix}", params=params
        )


@dataclass(frozen=True)
class Predicted:
    """The scientist's predictions against a study's fit (``data``: predictions.json's
    content), the file they went to, their health, and whether only the mechanical
    leave-one-out ran (no usable scientist model)."""

    data: dict[str, Any]
    path: Path
    health: Any
    mechanical_only: bool


def predict(
    run_dir: str | Path,
    *,
    conditions: int | None = None,
    temperature: float | None = None,
    model: str | None = None,
    base_url: str | None = None,
    config: str | Path | None = None,
) -> Predicted:
    """The scientist's predictions against a finished study's fit, on the rows the fit
    used (``silicolab study predict``): ``predictions.json`` in the run and its page
    updated. Without a usable scientist model only the mechanical leave-one-out runs."""
    from silicolab.api.run_flow import write_html_report
    from silicolab.api.study_models import scientist_model, usable_scientist
    from silicolab.core.sync import run_sync
    from silicolab.runs import RunHealth
    from silicolab.studies.predict import apredict

    study = FinishedStudy.open(run_dir)
    _can_write(study.run.path, "predictions.json and the page belong to the run: make it writable")
    table = study.data()
    fit = study.fit(alternatives=False)
    config_path = None if config is None else Path(config)
    scientist = scientist_model(model, base_url, config_path, demo_seed=study.demo_seed)
    usable = usable_scientist(scientist)
    tasks = ("y", "beta", "loo") if usable else ("loo_mechanical",)
    predictions = run_sync(
        apredict(study.hypothesis, table, fit.main, scientist if usable else None,
                 tasks=tasks, conditions=conditions,
                 drop_capped=bool(study.options.get("drop_capped")), seed=study.seed,
                 temperature=0.0 if temperature is None else temperature)
    )  # fmt: skip
    data = predictions.to_dict()
    path = atomic_write_text(study.run.path / "predictions.json", dumps(data) + "\n")
    write_html_report(study.run)  # the study's page now shows them
    return Predicted(data, path, RunHealth.of([predictions.health]), not usable)


@dataclass(frozen=True)
class FollowOn:
    """A follow-on plan (``plan``: the planner's result, ``.hypothesis`` the next study's)
    and the hypothesis file it was written to."""

    plan: Any
    path: Path


def plan_follow_on(
    run_dir: str | Path,
    *,
    out: str | Path,
    temperature: float | None = None,
    model: str | None = None,
    base_url: str | None = None,
    config: str | Path | None = None,
) -> FollowOn:
    """Plan the next experiment from a finished study's fit (``silicolab study
    follow-on``) and write its hypothesis to ``out`` (run it with ``sl.run_study(out)``).
    Needs a scientist model (``model``, or the scientist role in ``silicolab.yaml``)."""
    from silicolab.api.study_models import scientist_model
    from silicolab.core.sync import run_sync
    from silicolab.studies.files import write_hypothesis
    from silicolab.studies.follow_on import afollow_on

    study = FinishedStudy.open(run_dir)
    _can_write(Path(out).parent, "pass out= in a folder you can write", ("out",))
    fit = study.fit(alternatives=False)
    config_path = None if config is None else Path(config)
    scientist = scientist_model(model, base_url, config_path, needed_for="plan a follow-on",
                                demo_seed=study.demo_seed)  # fmt: skip
    plan = run_sync(
        afollow_on(study.hypothesis, fit.main, scientist, seed=study.seed,
                   temperature=0.4 if temperature is None else temperature)
    )  # fmt: skip
    return FollowOn(plan, write_hypothesis(plan.hypothesis, Path(out)))


__all__ = [
    "STUDY_KINDS",
    "FinishedStudy",
    "FollowOn",
    "Predicted",
    "Refit",
    "plan_follow_on",
    "predict",
    "refit",
]
