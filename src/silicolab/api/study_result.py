"""What :func:`silicolab.run_study` returns: a study's data, fit and health as Python objects.

:class:`StudyResult` is read from the run directory's ``record.json`` and ``run.json``
(a fresh run and :meth:`StudyResult.from_run` on a finished one give equal results), so
what a notebook sees is what the command line printed and the report shows:

- ``table``: one row per run, its columns prefixed by where they come from:
  ``treatment.<cause>`` (set by the design), ``measured.<variable>`` (the survey's outcome
  and mediators), ``run.<name>`` (condition id, replicate, why the conversation stopped,
  statements, model calls and whether the run was usable);
- ``fit``: the fitted SCM as a tidy table (one row per path), with R² and n;
- ``predictions``, ``follow_on``, ``health``, ``status`` and ``record`` as stored.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from silicolab.api._display import Shown
from silicolab.core.errors import InputError

#: The kinds of run whose study part :class:`StudyResult` reads.
STUDY_KINDS = ("study", "demo")
#: Column kind in the record's column dictionary -> the table's column prefix.
ORIGIN = {
    "design": "run",
    "treatment": "treatment",
    "outcome": "measured",
    "mediator": "measured",
    "run": "run",
}
#: The fit table's columns: the record's parameter names -> tidy names.
FIT_COLUMNS = {
    "lhs": "equation",
    "rhs": "rhs",
    "est": "estimate",
    "se": "std_error",
    "z": "z",
    "p": "p_value",
    "ci_low": "ci_low",
    "ci_high": "ci_high",
    "std_all": "std_all",
}
#: Per-run health figures joined to the table (``run.<name>``).
HEALTH_COLUMNS = ("calls", "unusable", "parse_failures")


@dataclass(frozen=True)
class StudyFit:
    """The fitted SCM's main model: ``table`` holds one row per path (``equation`` is the
    effect, ``rhs`` the cause, then ``estimate``, ``std_error``, ``z``, ``p_value``,
    ``ci_low``, ``ci_high`` and the standardized ``std_all``), ``r2`` the R² of each
    equation, ``n`` the rows fitted, ``lavaan`` the model in lavaan syntax."""

    table: pd.DataFrame
    r2: dict[str, float]
    n: int
    lavaan: str = ""

    @classmethod
    def from_estimation(cls, main: dict[str, Any]) -> StudyFit:
        """The fit from a record's ``estimation["main"]``."""
        rows = [p for p in main.get("params", []) if p.get("op") == "~"]
        table = pd.DataFrame(rows, columns=[*FIT_COLUMNS, "op"]).drop(columns="op")
        table = table.rename(columns=FIT_COLUMNS).reset_index(drop=True)
        return cls(
            table, dict(main.get("r2") or {}), int(main.get("n") or 0), main.get("lavaan", "")
        )

    def __repr__(self) -> str:
        r2 = ", ".join(f"{k}={v:.4g}" for k, v in self.r2.items())
        return f"StudyFit(paths={len(self.table)}, n={self.n}, r2=({r2}))"


@dataclass(repr=False)
class StudyResult(Shown):
    """A finished (or degraded) study run: see the module docstring. ``status`` is the
    run's (``"finished"``, ``"degraded"``...); a degraded study is returned, and
    ``health["problems"]`` says why. ``plan`` is the cost plan and ``notes`` the notes on
    options that applied in part, when the study was run in this process."""

    run_dir: Path
    status: str
    record: dict[str, Any]
    info: dict[str, Any] = field(default_factory=dict)
    plan: dict[str, Any] | None = None
    notes: list[str] = field(default_factory=list)

    @classmethod
    def from_run(cls, path: str | Path) -> StudyResult:
        """The result of the study run (or demo run) in ``path``, once its main study is
        on disk."""
        from silicolab.runs import Run

        run = Run.open(path)
        record = run.read_record()
        if run.kind not in STUDY_KINDS or record is None or "estimation" not in record:
            raise InputError(
                f"{path} is not a study run whose main study finished; pass a "
                "runs/...-study-... or runs/...-demo-... folder (an interrupted one: finish "
                "it with sl.run_study(resume=RUN_DIR) first)"
            )
        return cls(Path(run.path).resolve(), run.status, record, run.info)

    @property
    def study(self) -> str:
        return str(self.record.get("study", ""))

    @property
    def fit(self) -> StudyFit | None:
        """The main model's fit, or None when it could not be fitted (see ``health``)."""
        main = (self.record.get("estimation") or {}).get("main")
        return StudyFit.from_estimation(main) if main else None

    @property
    def r2(self) -> float | None:
        """R² of the outcome's equation (None without a fit)."""
        fit = self.fit
        outcome = ((self.record.get("hypothesis") or {}).get("outcome") or {}).get("name")
        if fit is None or not fit.r2:
            return None
        return fit.r2[outcome] if outcome in fit.r2 else next(iter(fit.r2.values()))

    @property
    def table(self) -> pd.DataFrame:
        """The study's data, one row per usable run, columns prefixed by origin."""
        data = self.record.get("data") or {}
        columns = [c["column"] for c in data.get("columns", [])]
        table = pd.DataFrame(data.get("rows", []), columns=columns)
        names = {c["column"]: f"{ORIGIN.get(c['kind'], 'run')}.{c['column']}"
                 for c in data.get("columns", [])}  # fmt: skip
        health = {(r["condition_id"], r["replicate"]): r for r in self.record.get("runs", [])}
        for name in HEALTH_COLUMNS:
            table[name] = [
                _health_value(health.get((c, r)), name)
                for c, r in zip(table["condition_id"], table["replicate"], strict=True)
            ]
            names[name] = f"run.{name}"
        return table.rename(columns=names)

    @property
    def predictions(self) -> dict[str, Any] | None:
        return self.record.get("predictions")

    @property
    def follow_on(self) -> dict[str, Any] | None:
        return self.record.get("follow_on")

    @property
    def health(self) -> dict[str, Any]:
        return dict(self.record.get("health") or {})

    def to_dict(self) -> dict[str, Any]:
        """The summary ``silicolab study run --json`` prints (JSON-safe)."""
        from silicolab.report.study_report import path_rows, run_ledger

        record = self.record
        main = (record.get("estimation") or {}).get("main") or {}
        health = record.get("health") or {}
        return {
            "run_dir": str(self.run_dir),
            "status": self.status,
            "plan": self.plan,
            "study": record["study"],
            "conditions": len(record["runs"]),
            "n": main.get("n"),
            "r2": main.get("r2"),
            "paths": path_rows(record.get("estimation")),
            "fit_error": record.get("fit_error"),
            "fit_problems": record.get("fit_problems") or [],
            "na_counts": record["data"]["na_counts"],
            "capped": record["data"]["capped"],
            "stages": record.get("stages"),
            "health": health.get("totals"),
            "problems": health.get("problems") or [],
            "predictions": (record.get("predictions") or {}).get("mse"),
            "follow_on": (record.get("follow_on") or {}).get("comparison"),
            "ledger": run_ledger(record, self.info) or None,
            "notes": list(self.notes),
        }

    # -- what can be done with the finished study (silicolab.api.study_after) ----------

    def refit(self, **options: Any) -> Any:
        """Refit this study's data (``study fit``): ``interactions``, ``drop_capped``,
        ``outcome``, ``out``; see :func:`silicolab.api.study_after.refit`."""
        from silicolab.api.study_after import refit

        return refit(self.run_dir, **options)

    def predict(self, **options: Any) -> Any:
        """The scientist's predictions against this study's fit (``study predict``):
        ``model``, ``conditions``, ``temperature``, ...; see
        :func:`silicolab.api.study_after.predict`."""
        from silicolab.api.study_after import predict

        return predict(self.run_dir, **options)

    def plan_follow_on(self, out: str | Path, **options: Any) -> Any:
        """Plan the next experiment from this study's fit into the hypothesis file ``out``
        (``study follow-on``); see :func:`silicolab.api.study_after.plan_follow_on`."""
        from silicolab.api.study_after import plan_follow_on

        return plan_follow_on(self.run_dir, out=out, **options)

    def discover(self, method: str = "ges") -> dict[str, Any]:
        """Causal discovery (``ges`` or ``pc``) on this study's data against its
        hypothesized graph (``study discover``); the summary it writes."""
        from silicolab.api.study_discover import discover_in_study

        return discover_in_study(self.run_dir, method)

    def _headline(self) -> list[tuple[str, Any]]:
        main = (self.record.get("estimation") or {}).get("main") or {}
        return [
            ("study", self.study),
            ("conditions", len(self.record.get("runs", []))),
            ("n", main.get("n")),
            ("r2", self.r2),
            ("status", self.status),
            ("run_dir", self.run_dir),
        ]

    def _figure(self) -> Path | None:
        figures = self.run_dir / "figures"
        for name in ("scm.svg", "scm.png"):
            if (figures / name).is_file():
                return figures / name
        found = sorted(figures.glob("*.png")) if figures.is_dir() else []
        return found[0] if found else None


def _health_value(run: dict[str, Any] | None, name: str) -> Any:
    if run is None:
        return None
    if name == "calls":
        return run.get("calls")
    return (run.get("health") or {}).get(name)


__all__ = ["ORIGIN", "STUDY_KINDS", "StudyFit", "StudyResult"]
