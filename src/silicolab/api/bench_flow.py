"""The flow every bench shares, behind :func:`silicolab.api.run_bench` (and so behind every
``silicolab bench ...`` command).

A bench family (:class:`BenchFamily`) says how to check its settings, count its units,
run them and name its run; :func:`bench_flow` does the rest the same way for all of them:
check the settings and load the models before any run directory exists, ask ``confirm``
about a run of more than :data:`~silicolab.runtime.bounds.LARGE_RUN` units, open the run
with :func:`silicolab.runs.open_run` (``resume=True`` continues the latest unfinished run
of that bench with its stored settings and refuses given options that contradict them, a
path continues that run; a finished run is never reopened: when every run is finished,
``resume=True`` returns the latest one's results; ``retry_failed`` also reruns the
episodes that failed), run the bench through :mod:`silicolab.bench.harness`, and write
``record.json``, ``report.md`` and ``report.html``. A run whose every step failed in some
unit ends ``degraded`` and is returned, not raised.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from silicolab.api.run_flow import finish_run, runs_root
from silicolab.core.config import load_settings
from silicolab.core.errors import InputError
from silicolab.runtime.bounds import LARGE_RUN, check_jobs

if TYPE_CHECKING:
    from silicolab.api.bench import BenchResult

#: Old scientist names still accepted (with a warning), and their current names.
AGENT_ALIASES = {"boed": "reference", "react": "llm"}

#: ``confirm(units, plan)``: whether to run a plan of more than LARGE_RUN units.
Confirm = Callable[[int, str], bool]


@dataclass(frozen=True)
class Connection:
    """How to reach the models: the config file and the overrides of the scientist's
    server (they never reach another role).

    A model is loaded once per role and spec: the benches' ``check`` loads the models
    it will use before any run directory exists (an unknown spec or a missing key is
    refused there), and ``execute`` gets the same objects back."""

    config: Path | None = None
    base_url: str | None = None
    api_key_env: str | None = None
    _loaded: dict[tuple[str, str | None], Any] = field(
        default_factory=dict, compare=False, repr=False
    )

    def model(self, role: str, spec: str | None) -> Any:
        """The model of ``role`` for ``spec`` (loaded on first use)."""
        from silicolab.llm.roles import role_model

        if (role, spec) not in self._loaded:
            server = {"base_url": self.base_url, "api_key_env": self.api_key_env}
            if role != "scientist":
                server = {}
            self._loaded[role, spec] = role_model(
                role, load_settings(self.config), spec=spec, **server
            )
        return self._loaded[role, spec]


@dataclass(frozen=True)
class Resources:
    """What runs a bench and does not change its results: the models, ``jobs`` and the
    executor (none of them is a stored setting)."""

    connection: Connection
    jobs: int
    executor: Any


@dataclass(frozen=True)
class BenchFamily:
    """One bench: ``check(settings, resources)`` refuses bad settings (and loads models);
    ``execute(settings, run, resources)`` returns ``(table, view)``; ``plan(settings)``
    counts a new run's units and says what they are; ``slug(settings)`` names the run;
    ``keys`` are the table's row-identity columns; ``defaults`` its settings and their
    defaults (the command's); ``scientists`` says which scientists it takes (``""``: the
    bench has none) and ``extra`` names those beyond reference/random/llm."""

    name: str
    check: Callable[[dict[str, Any], Resources], None]
    execute: Callable[[dict[str, Any], Any, Resources], tuple[Any, Any]]
    slug: Callable[[dict[str, Any]], str]
    keys: tuple[str, ...]
    defaults: Mapping[str, Any]
    plan: Callable[[dict[str, Any]], tuple[int, str]] | None = None
    scientists: str = "reference, random or llm"
    extra: tuple[str, ...] = ()


def as_list(value: str | Sequence[str], param: str) -> list[str]:
    """``"pc, exact"`` or ``["pc", "exact"]`` -> ``["pc", "exact"]``; an empty list is an
    error naming the Python parameter ``param``."""
    items = value.split(",") if isinstance(value, str) else [str(v) for v in value]
    items = [v.strip() for v in items if v.strip()]
    if not items:
        raise InputError(f"{param}= is empty: give a comma-separated list", params=(param,))
    return items


def joined(value: str | Sequence[str]) -> str:
    """A list option as the comma-separated text stored in the run's settings (as the
    command line gives it), so both front doors store the same settings."""
    return value if isinstance(value, str) else ",".join(str(v) for v in value)


def scientist_name(agent: str, known: str, extra: tuple[str, ...] = ()) -> str:
    """``agent`` checked against reference/random/llm and ``extra`` (old names accepted
    with a :class:`DeprecationWarning`)."""
    if agent in AGENT_ALIASES:
        new = AGENT_ALIASES[agent]
        warnings.warn(f"scientist {agent!r} is now called {new!r}", DeprecationWarning, 3)
        agent = new
    if agent not in ("reference", "random", "llm", *extra):
        raise InputError(f"scientist={agent!r}: use {known}", params=("scientist",))
    return agent


def choice(value: str, param: str, allowed: Iterable[str]) -> str:
    """``value`` if it is one of ``allowed``, else an InputError naming them and the
    Python parameter ``param``."""
    allowed = list(allowed)
    if value not in allowed:
        raise InputError(f"{param}={value!r}: use one of {', '.join(allowed)}", params=(param,))
    return value


def refuse_unknown(
    param: str, value: Any, unknown: Any, known: Iterable[str], extra: str = ""
) -> None:
    """Refuse ``param=value`` for naming ``unknown`` (e.g. ``"suite(s) ['9nodes']"``): an
    InputError naming the Python parameter and the ``known`` choices (then ``extra``)."""
    raise InputError(
        f"{param}={value!r}: unknown {unknown}; choose from {', '.join(known)}{extra}",
        params=(param,),
    )


def llm_needs_model(settings: Mapping[str, Any]) -> None:
    """The ``llm`` (and ``apprentice``) scientist plays with the model the user names:
    refuse it without ``model=``."""
    agent = settings["agent"]
    if agent in ("llm", "apprentice") and not settings["model"]:
        raise InputError(
            f"scientist={agent} needs model= (a spec such as 'openai:gpt-4o-mini'; and "
            "base_url= for a local server)",
            params=("scientist", "model", "base_url"),
        )


def check_llm_scientist(settings: Mapping[str, Any], res: Resources) -> None:
    """The checks of a family whose one language-model scientist is ``llm``: it needs
    ``model=``; the units run in processes unless it plays (or Ray runs them); its model is
    loaded now, so a bad spec or a missing key is refused before the run."""
    llm_needs_model(settings)
    llm = settings["agent"] == "llm"
    check_jobs(res.jobs, processes=not llm and res.executor.kind == "local")
    if llm:
        res.connection.model("scientist", settings["model"])


def table_rows(table: Any) -> list[dict[str, Any]]:
    """The bench table as JSON-ready rows: missing and non-finite numbers are ``None``
    and each row whose figures are ``None`` says why in ``null_reasons`` (see
    :func:`silicolab.bench.harness.null_reasons`)."""
    from silicolab.bench.harness import null_reasons
    from silicolab.core.files import finite

    rows = finite(table.to_dict(orient="records"))
    for row in rows:
        reasons = null_reasons(row)
        if reasons:
            row["null_reasons"] = reasons
    return rows


def bench_flow(
    family: BenchFamily,
    settings: dict[str, Any],
    resources: Resources,
    *,
    explicit: Iterable[str],
    resume: bool | str | Path,
    retry_failed: bool,
    runs_dir: str | Path | None,
    config: Path | None,
    confirm: Confirm | None,
) -> BenchResult:
    """Run ``family`` with ``settings`` (module docstring): ``explicit`` names the settings
    the caller gave (a resumed run refuses those that differ from its stored ones)."""
    from silicolab.api.bench import BenchResult
    from silicolab.runs import Run, open_run

    family.check(settings, resources)
    if family.plan is not None and not resume:
        units, plan = family.plan(settings)
        if units > LARGE_RUN and confirm is not None and not confirm(units, plan):
            raise InputError("cancelled; nothing was run")
    root, kind = runs_root(runs_dir, config), f"bench-{family.name}"
    target = resume or retry_failed
    if target is True and not retry_failed and Run.latest(root, kind, unfinished=True) is None:
        latest = Run.latest(root, kind=kind)  # nothing to resume: the finished results
        if latest is not None and latest.status == "finished":
            refuse_other_settings(latest, settings, explicit)
            return BenchResult.from_run(latest.path, reopened=True)
    run, used = open_run(
        root, kind, settings=settings, explicit=explicit, resume=target,
        slug=family.slug(settings), retry_failed=retry_failed,
    )  # fmt: skip
    family.check(used, resources)
    with run:
        table, view = family.execute(used, run, resources)
        health = table.attrs.get("health")
        record = {"settings": used, "rows": table_rows(table), "usage": table.attrs.get("usage")}
        if table.attrs.get("regime"):  # causalab's regime=: the regime's anchors
            record["regime"] = table.attrs["regime"]
        if health is not None:
            record["health"] = health.to_dict()
        status = finish_run(run, record, view.markdown(table), health)
    return BenchResult(
        family=family.name, table=table, run_dir=Path(run.path).resolve(), status=status,
        health=health, record=record, keys=family.keys, view=view,
    )  # fmt: skip


def refuse_other_settings(run: Any, settings: Mapping[str, Any], explicit: Iterable[str]) -> None:
    """``resume=True`` on a finished run shows it as it is: given settings that differ
    from its stored ones are refused."""
    stored = run.config
    differ = [n for n in sorted(set(explicit)) if n in settings and settings[n] != stored.get(n)]
    if differ:
        given = "; ".join(f"{n}={settings[n]} (stored: {stored.get(n)})" for n in differ)
        raise InputError(
            f"the latest run {run.path} is finished with other settings ({given}); "
            "start a new run without resume=",
            params=("resume",),
        )


__all__ = [
    "AGENT_ALIASES",
    "BenchFamily",
    "Confirm",
    "Connection",
    "Resources",
    "as_list",
    "bench_flow",
    "check_llm_scientist",
    "choice",
    "joined",
    "llm_needs_model",
    "refuse_unknown",
    "scientist_name",
    "table_rows",
]
