"""``sl.run_bench``: the benchmark suites beside the published numbers, from Python.

>>> import silicolab as sl
>>> result = sl.run_bench("causalab", suites="3nodes", episodes=2)  # doctest: +SKIP
>>> result.table[["suite", "accuracy", "published_accuracy"]]  # doctest: +SKIP

One function for the four benches of ``silicolab bench``: ``"causalab"``, ``"boxinggym"``,
``"discovery"`` and ``"episodes"``. It writes the same run directory as the command with
the same settings and returns a :class:`BenchResult`; the command is a thin layer over it.
"""

from __future__ import annotations

import html
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicolab.api._display import Shown, html_table, inline_image
from silicolab.api.bench_flow import (
    Confirm,
    Connection,
    Resources,
    bench_flow,
    choice,
    joined,
    scientist_name,
)
from silicolab.core.errors import InputError

#: The benches ``run_bench`` runs.
FAMILIES = ("causalab", "boxinggym", "discovery", "episodes")

#: Python parameter -> the run's setting, where they differ (the settings keep the
#: command line's names, so both front doors store the same ``run.json``).
SETTING_OF = {"scientist": "agent", "suites": "suite", "goals": "env", "envs": "env"}

#: Each bench's Python parameters (beside ``scientist`` and ``model``).
OPTIONS = {
    "causalab": (
        "suites", "episodes", "verify", "fidelity", "seed", "regime", "observations",
        "interventions",
    ),
    "boxinggym": ("goals", "seeds", "prior", "communicate", "participant_model", "fidelity"),
    "discovery": ("methods", "datasets", "fidelity"),
    "episodes": ("envs", "seeds"),
}  # fmt: skip

#: Options that take a list (or the command line's comma-separated text).
LISTS = ("suites", "goals", "envs", "methods", "datasets")


def family_spec(family: str) -> Any:
    """The :class:`~silicolab.api.bench_flow.BenchFamily` called ``family``."""
    from silicolab.api.bench_causalab import CAUSALAB
    from silicolab.api.bench_families import BOXINGGYM, DISCOVERY, EPISODES

    specs = {"causalab": CAUSALAB, "boxinggym": BOXINGGYM, "discovery": DISCOVERY}
    specs["episodes"] = EPISODES
    if family not in specs:
        raise InputError(f"family={family!r}: use one of {', '.join(FAMILIES)}", params=("family",))
    return specs[family]


def bench_settings(family: str, given: Mapping[str, Any]) -> tuple[dict[str, Any], set[str]]:
    """The run's settings from the Python options ``given`` (None: not given, the
    default) and the names of the settings given, which a resumed run checks."""
    spec = family_spec(family)
    allowed = (*OPTIONS[family], "model", *(("scientist",) if spec.scientists else ()))
    unknown = sorted(k for k, v in given.items() if k not in allowed and v is not None)
    if unknown:
        raise InputError(
            f"run_bench({family!r}) takes no {', '.join(f'{k}=' for k in unknown)}; its "
            f"options are {', '.join(f'{k}=' for k in allowed)}",
            params=tuple(unknown),
        )
    settings, explicit = dict(spec.defaults), set()
    for name, value in given.items():
        if value is None:
            continue
        key = SETTING_OF.get(name, name)
        settings[key] = joined(value) if name in LISTS else value
        explicit.add(key)
    if spec.scientists:
        settings["agent"] = scientist_name(settings["agent"], spec.scientists, spec.extra)
    return settings, explicit


def run_bench(
    family: str,
    *,
    scientist: str | None = None,
    model: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    seed: int | None = None,
    jobs: int = 1,
    executor: str = "local",
    ray_address: str | None = None,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    resume: bool | str | Path | None = None,
    retry_failed: bool = False,
    confirm: Confirm | None = None,
    **options: Any,
) -> BenchResult:
    """Run the bench ``family`` (``"causalab"``, ``"boxinggym"``, ``"discovery"`` or
    ``"episodes"``) and write its run directory, as ``silicolab bench FAMILY`` does.

    ``scientist`` is the agent (``"reference"`` by default: no language model; ``"llm"``
    needs ``model``, a spec such as ``"openai:gpt-4o-mini"``, and ``base_url`` for a local
    server). The bench's own ``options`` mirror the command's, lists as Python lists or
    comma-separated text; anything not given is the command's default:

    - causalab: ``suites`` (``"3nodes..7nodes"``), ``episodes`` (50), ``verify``,
      ``fidelity``, ``seed`` (0), ``regime``, ``observations``, ``interventions``;
    - boxinggym: ``goals`` (``"all"``, or ``["dugongs", "death_process:infection"]``),
      ``seeds`` (5), ``prior``, ``communicate``, ``participant_model``, ``fidelity``;
    - discovery: ``methods``, ``datasets`` (``"all"``);
    - episodes: ``envs`` (``"causalab"``), ``seeds`` (3).

    ``jobs`` units run at once (worker processes for offline scientists) on ``executor``
    (``"local"`` or ``"ray"`` at ``ray_address``): neither changes the numbers. Runs go
    under ``runs_dir`` (default: the configured one, ``runs``). ``resume=True`` continues
    the latest unfinished run of this bench with its stored settings, ``resume=RUN_DIR``
    that run; ``retry_failed`` also reruns its failed episodes. ``confirm(units, plan)`` is
    asked before a run of more than 1,000 units (None: no question). A degraded run is
    returned (``status == "degraded"``; ``health`` says why).
    """
    from silicolab.runtime.choice import EXECUTORS, ExecutorChoice

    spec = family_spec(family)
    choice(executor, "executor", EXECUTORS)
    if ray_address is not None and executor != "ray":
        raise InputError("ray_address= needs executor='ray'", params=("ray_address", "executor"))
    given = {"scientist": scientist, "model": model, "seed": seed, **options}
    settings, explicit = bench_settings(family, given)
    config = None if config is None else Path(config)
    resources = Resources(
        connection=Connection(config, base_url, api_key_env),
        jobs=_positive(jobs),
        executor=ExecutorChoice(executor, ray_address).check(),  # type: ignore[arg-type]
    )
    return bench_flow(
        spec, settings, resources, explicit=explicit, resume=resume or False,
        retry_failed=retry_failed, runs_dir=runs_dir, config=config, confirm=confirm,
    )  # fmt: skip


def _positive(jobs: Any) -> int:
    if isinstance(jobs, bool) or not isinstance(jobs, int) or jobs < 1:
        raise InputError(f"jobs={jobs!r}: give a positive integer", params=("jobs",))
    return jobs


@dataclass(eq=False, repr=False)
class BenchResult(Shown):
    """A finished bench: its ``table`` (one row per suite, goal, dataset x method or
    environment, with the published numbers in the ``published_*``/``paper_*``/``box_*``
    columns), where it was written and how healthy it was.

    ``record`` is what ``record.json`` holds; ``reopened`` is True when ``resume=True``
    found every run finished and returned the latest one as it was."""

    family: str
    table: Any
    run_dir: Path
    status: str
    health: Any = None
    record: dict[str, Any] = field(default_factory=dict)
    keys: tuple[str, ...] = ()
    view: Any = None
    reopened: bool = False

    @property
    def anchors(self) -> Any:
        """The table's published numbers beside each row's identity columns."""
        from silicolab.bench.harness import PUBLISHED_PREFIXES

        keys = [c for c in self.keys if c in self.table.columns]
        published = [c for c in self.table.columns if str(c).startswith(PUBLISHED_PREFIXES)]
        return self.table[keys + published]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The table as the JSON rows of ``record.json`` (and of ``--json``)."""
        return list(self.record.get("rows", []))

    @property
    def settings(self) -> dict[str, Any]:
        """The settings the run used (as stored in ``run.json``)."""
        return dict(self.record.get("settings", {}))

    def to_dict(self) -> dict[str, Any]:
        """JSON-safe: what ``silicolab bench FAMILY --json`` prints, plus the family and
        the run's health."""
        out: dict[str, Any] = {"run_dir": str(self.run_dir), "status": self.status}
        out["rows"] = self.rows
        if self.record.get("regime"):
            out["regime"] = self.record["regime"]
        out["family"] = self.family
        out["health"] = self.record.get("health")
        return out

    @classmethod
    def from_run(cls, path: str | Path, *, reopened: bool = False) -> BenchResult:
        """The result of the finished bench run at ``path``, read back from its files."""
        import pandas as pd

        from silicolab.runs import Run

        run = Run.open(Path(path))
        family = run.kind.removeprefix("bench-")
        if not run.kind.startswith("bench-") or family not in FAMILIES:
            raise InputError(f"path={str(path)!r} is a {run.kind} run, not a bench run")
        record = run.read_record() or {}
        rows = [{k: v for k, v in r.items() if k != "null_reasons"} for r in record.get("rows", [])]
        return cls(
            family=family, table=pd.DataFrame(rows), run_dir=Path(run.path).resolve(),
            status=run.status, health=_health(record.get("health")), record=record,
            keys=family_spec(family).keys, reopened=reopened,
        )  # fmt: skip

    def _headline(self) -> list[tuple[str, Any]]:
        return [
            ("family", self.family),
            ("status", self.status),
            ("rows", len(self.table)),
            ("run_dir", self.run_dir),
        ]

    def _figure(self) -> Path | None:
        figures = Path(self.run_dir) / "figures"
        found = sorted(figures.glob("*.png")) or sorted(figures.glob("*.svg"))
        return found[0] if found else None

    def _repr_html_(self) -> str:
        title = f"<strong>{html.escape(type(self).__name__)}</strong>"
        head = self.table.head(10).to_html(index=False, na_rep="", float_format="{:.4g}".format)
        figure = inline_image(self._figure())
        return f"<div>{title}{html_table(self._headline())}{head}{figure}</div>"


def _health(data: Mapping[str, Any] | None) -> Any:
    """The :class:`~silicolab.runs.RunHealth` stored in a record, or None."""
    if not data:
        return None
    from silicolab.runs.health import RunHealth, UnitHealth

    return RunHealth.of(UnitHealth.from_dict(u) for u in data.get("units", []))


__all__ = ["FAMILIES", "BenchResult", "run_bench"]
