"""Studies from Python: :func:`run_study` and :func:`generate_hypothesis`.

``sl.run_study("lawyer", runs_dir="runs")`` does what ``silicolab study run lawyer
--runs-dir runs`` does (the same defaults, the same checks, the same run directory:
``run.json``, ``events.jsonl``, ``record.json``, ``data.csv``, ``report.md``,
``figures/``, ``report.html``) and returns a :class:`StudyResult`. It never asks on stdin:
a Python call is itself the consent to the plan, unless a ``confirm`` callback says no;
a plan above ``max_cost`` is refused either way. The plan line and notes go to stderr
(``notify``), like the command's. Both calls work inside a running event loop (a Jupyter
cell) through :func:`silicolab.core.sync.run_sync`.

>>> import silicolab as sl
>>> result = sl.run_study("lawyer", subjects="world", runs_dir="runs")   # doctest: +SKIP
>>> result.fit.table[["rhs", "estimate", "p_value"]]                    # doctest: +SKIP
"""

from __future__ import annotations

import inspect
import sys
from collections.abc import Callable, Collection
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from silicolab.api.study_result import StudyFit, StudyResult
from silicolab.core.errors import InputError
from silicolab.studies.design import DEFAULT_MAX_CONDITIONS
from silicolab.studies.hypothesis import Hypothesis

#: The ``subjects`` a study can have.
SUBJECTS = ("llm", "rule", "world")
#: ``run_study`` options stored in run.json (the others say where and how to run, not what),
#: with their defaults: the command line's.
DEFAULTS: dict[str, Any] = {
    "subjects": "llm", "conditions": None, "replicates": 1, "aggregate_replicates": False,
    "agent_names": "roles", "seed": 0, "max_conditions": DEFAULT_MAX_CONDITIONS, "jobs": 16,
    "statement_tokens": 300, "interactions": False, "drop_capped": False, "predict": False,
    "predict_conditions": None, "follow_on": False, "scientist_temperature": None,
    "survey": "at_once",
}  # fmt: skip
#: The allowed values of the options that take a name.
CHOICES = {
    "subjects": SUBJECTS,
    "agent_names": ("roles", "random"),
    "survey": ("at_once", "in_turn"),
    "price_rule": ("second_dropout", "next_increment"),
}
#: The smallest value of each whole-number option.
MINIMUM = {
    "conditions": 1, "replicates": 1, "max_conditions": 1, "seed": 0, "jobs": 1,
    "statement_tokens": 8, "predict_conditions": 1,
}  # fmt: skip


def _stderr(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


def run_study(
    study: str | Path | Hypothesis | None = None,
    *,
    subjects: str = "llm",
    model: str | None = None,
    base_url: str | None = None,
    conditions: int | None = None,
    replicates: int = 1,
    aggregate_replicates: bool = False,
    agent_names: str = "roles",
    seed: int = 0,
    max_conditions: int = DEFAULT_MAX_CONDITIONS,
    jobs: int = 16,
    statement_tokens: int = 300,
    interactions: bool = False,
    drop_capped: bool = False,
    predict: bool = False,
    predict_conditions: int | None = None,
    follow_on: bool = False,
    scientist_temperature: float | None = None,
    survey: str = "at_once",
    price_rule: str = "second_dropout",
    max_cost: float | None = None,
    prices: tuple[float, float] | None = None,
    executor: Any = "local",
    ray_address: str | None = None,
    runs_dir: str | Path | None = None,
    config: str | Path | None = None,
    resume: bool | str | Path | None = None,
    retry_failed: bool = False,
    confirm: Callable[[Any], bool] | None = None,
    notify: Callable[[str], None] | None = None,
    typed: Collection[str] | None = None,
) -> StudyResult:
    """Run a study and return its :class:`StudyResult` (a degraded one too: its
    ``status`` is ``"degraded"`` and ``health["problems"]`` says why).

    ``study``: a built-in study's name (``"mug"``, ``"bail"``, ``"lawyer"``,
    ``"auction"``), a hypothesis YAML/JSON file, or a :class:`Hypothesis`; it may be left
    out with ``resume``. The options are ``silicolab study run``'s, with its defaults
    (``prices``: the command's two price options as one (input, output) pair)
    (``subjects="llm"``: the configured model, the offline ``scripted`` test double when
    none is; ``subjects="world"`` is the offline world whose answers follow a hidden SCM;
    ``"rule"``: the auction's rule-based bidders). ``resume``: ``True`` continues the
    newest unfinished study under ``runs_dir``, a path continues that run, with its stored
    settings; ``retry_failed`` also reruns its failed conditions.

    ``confirm(plan)`` is asked when the plan makes paid calls (``None``: not asked);
    ``False`` cancels before any run directory exists. ``notify`` receives the plan line
    and the notes (default: stderr). ``typed`` names the options the caller set on
    purpose (``None``: those that differ from their defaults): only those can refuse a
    run as inapplicable or contradict a resumed run's settings.
    """
    from silicolab.runtime.choice import ExecutorChoice

    given = {
        "subjects": subjects, "conditions": conditions, "replicates": replicates,
        "aggregate_replicates": aggregate_replicates, "agent_names": agent_names, "seed": seed,
        "max_conditions": max_conditions, "jobs": jobs, "statement_tokens": statement_tokens,
        "interactions": interactions, "drop_capped": drop_capped, "predict": predict,
        "predict_conditions": predict_conditions, "follow_on": follow_on,
        "scientist_temperature": scientist_temperature, "survey": survey,
    }  # fmt: skip
    _check_options({**given, "price_rule": price_rule, "max_cost": max_cost})
    settings = {**given, "rule_options": {"price_rule": price_rule}}
    if typed is None:
        typed = {k for k, v in given.items() if v != DEFAULTS[k]}
        typed |= {"rule_options"} if price_rule != "second_dropout" else set()
    choice = (
        executor if isinstance(executor, ExecutorChoice) else ExecutorChoice(executor, ray_address)
    )
    return _run(
        study, settings, set(typed),
        resume=resume if resume not in (None, False) else bool(retry_failed),
        retry_failed=retry_failed, max_cost=max_cost, model=model, base_url=base_url,
        prices=_prices(prices), executor=choice,
        runs_dir=Path(runs_dir) if runs_dir is not None else None,
        config=Path(config) if config is not None else None,
        confirm=confirm, notify=notify or _stderr,
    )  # fmt: skip


def _prices(prices: Any) -> Any:
    from silicolab.api.study_models import given_prices

    return given_prices(prices)


def _check_options(options: dict[str, Any]) -> None:
    """Refuse an option of the wrong kind or out of its range, naming it."""
    for name, allowed in CHOICES.items():
        value = getattr(options[name], "value", options[name])
        if value not in allowed:
            raise InputError(f"{name}={value!r} is not one of {', '.join(allowed)}", params=(name,))
    for name, least in MINIMUM.items():
        value = options[name]
        if value is None and DEFAULTS[name] is None:
            continue
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InputError(
                f"{name}={value!r} must be a whole number of at least {least}", params=(name,)
            )
    from silicolab.runtime.bounds import check_jobs

    check_jobs(options["jobs"], processes=False)  # conversations (or Ray units) in flight
    cost = options["max_cost"]
    if cost is not None and (
        isinstance(cost, bool) or not isinstance(cost, int | float) or cost < 0
    ):
        raise InputError(f"max_cost={cost!r} must be a number of USD >= 0", params=("max_cost",))


def load_hypothesis(study: str | Path | Hypothesis | None) -> Hypothesis:
    """The hypothesis ``study`` names: itself, a built-in study's, or a file's."""
    from silicolab.studies.examples import EXAMPLES, load_example
    from silicolab.studies.files import read_hypothesis

    if isinstance(study, Hypothesis):
        return study
    if study is None:
        raise InputError(
            f"name the study: a built-in one ({', '.join(EXAMPLES)}), a hypothesis file or "
            "a Hypothesis (or resume=RUN_DIR to continue a run)",
            params=("study", "resume"),
        )
    path = Path(study)
    if isinstance(study, str) and not path.suffix and len(path.parts) == 1:
        return load_example(study)  # a name; an unknown one is refused naming the examples
    return read_hypothesis(path)


def _run(
    study: Any, settings: dict[str, Any], typed: set[str], *, resume: bool | Path | str,
    retry_failed: bool, max_cost: float | None, model: str | None, base_url: str | None,
    prices: Any, executor: Any, runs_dir: Path | None, config: Path | None,
    confirm: Callable[[Any], bool] | None, notify: Callable[[str], None],
) -> StudyResult:  # fmt: skip
    """Check, plan, confirm, then run the study (every refusal before a run directory)."""
    from silicolab.api import study_models as money
    from silicolab.api.run_flow import runs_root
    from silicolab.runs import open_run
    from silicolab.studies.applicable import check_applicable
    from silicolab.studies.files import read_hypothesis, same_study
    from silicolab.studies.pipeline import HYPOTHESIS_FILE, StudyOptions

    root = runs_root(runs_dir, config)
    if resume:
        run, used = open_run(root, "study", settings=settings, explicit=typed, resume=resume,
                             retry_failed=retry_failed)  # fmt: skip
        hypothesis = read_hypothesis(run.path / HYPOTHESIS_FILE)
        if study is not None:  # the same call with resume= added
            same_study(run.path, hypothesis, load_hypothesis(study))
    else:
        hypothesis, used, run = load_hypothesis(study), settings, None
    options = StudyOptions.from_dict(used)
    if options.subjects == "rule" and hypothesis.simulation is None:
        from silicolab.studies.rule_worlds import rule_world

        rule_world(hypothesis)  # refuses a study without rule-based subjects, before any run
    models = money.study_models(
        options.subjects, hypothesis, model=model, base_url=base_url, config=config,
        seed=options.seed, prices=prices, budget=money.make_budget(max_cost, run),
    )  # fmt: skip
    scientist = models is not None and models.scientist is not None
    notes = check_applicable(options, typed=() if resume else typed, scientist=scientist)
    money.check_spending_limit(models, options, max_cost=max_cost, executor=executor)
    plan, paid = money.study_plan(hypothesis, options, models)
    notify(plan.summary_line())
    money.check_plan_cost(plan, max_cost)
    if paid and confirm is not None and not confirm(plan):
        raise InputError("cancelled; nothing was run")
    for note in notes:
        notify(f"note: {note}")
    if run is None:
        run, _ = open_run(root, "study", settings=settings, slug=hypothesis.name)
    record = _conduct(run, hypothesis, options, models, executor, notify)
    path = Path(run.path).resolve()
    plan_dict = {k: list(v) if isinstance(v, tuple) else v for k, v in plan.to_dict().items()}
    return StudyResult(path, run.status, record, run.info, plan=plan_dict, notes=notes)


def _conduct(
    run: Any, hypothesis: Hypothesis, options: Any, models: Any, executor: Any,
    notify: Callable[[str], None],
) -> dict[str, Any]:  # fmt: skip
    """Run the study in ``run`` and write its reports; the record."""
    from silicolab.api.run_flow import analysis_preloaded, write_html_report
    from silicolab.core.sync import run_sync
    from silicolab.report.study_report import study_report
    from silicolab.studies.study import arun_study

    with run, analysis_preloaded("study"):
        record = run_sync(
            arun_study(hypothesis, options, run=run, models=models, executor=executor)
        )
        run.write_report(study_report(record, run.info))
        write_html_report(run)  # the page never fails a run
    return record


@dataclass(frozen=True)
class Proposal:
    """A generated hypothesis, the file it was written to (or None), the chain's settings
    (scenario, n_causes, seed, temperature, model) and the scientist's ledger summary."""

    hypothesis: Hypothesis
    path: Path | None
    settings: dict[str, Any]
    ledger: dict[str, Any]


def propose_hypothesis(
    scenario: str | None = None,
    *,
    model: str | None = None,
    base_url: str | None = None,
    causes: int | None = None,
    seed: int | None = None,
    temperature: float | None = None,
    out: str | Path | None = None,
    resume: str | Path | None = None,
    config: str | Path | None = None,
) -> Proposal:
    """:func:`generate_hypothesis` with what the command line also shows: where the file
    went, the chain's settings and what the scientist's calls cost."""
    import tempfile

    from silicolab.core.sync import run_sync
    from silicolab.studies.files import write_hypothesis
    from silicolab.studies.scientist import ajournaled_hypothesis, open_chain

    if resume is None and (scenario is None or len(scenario.strip()) < 10):
        raise InputError(
            "the scenario is empty or too short; describe it in a sentence", params=("scenario",)
        )
    if causes is not None and not (isinstance(causes, int) and 1 <= causes <= 6):
        raise InputError(
            f"causes={causes!r} must be a whole number from 1 to 6", params=("causes",)
        )
    scientist = scientist_for(model, base_url, config)
    with tempfile.TemporaryDirectory(prefix="silicolab-hypothesis-") as scratch:
        target = Path(out) if out is not None else Path(scratch) / "hypothesis.yaml"
        journal = open_chain(
            target, resume=resume, model=scientist.spec, scenario=scenario, n_causes=causes,
            seed=seed, temperature=temperature,
        )  # fmt: skip
        result = run_sync(ajournaled_hypothesis(journal, scientist))
        path = None
        if out is not None or resume is not None:
            path = write_hypothesis(result, journal.settings.get("out") or target)
        journal.path.unlink(missing_ok=True)  # the hypothesis holds every decision now
    return Proposal(result, path, dict(journal.settings), scientist.ledger.summary())


def generate_hypothesis(scenario: str | None = None, **options: Any) -> Hypothesis:
    """The scientist model's hypothesized SCM of ``scenario`` (``silicolab study
    hypothesis``): agents, outcome, ``causes`` causes (default 3), their operationalization
    and levels, each with the model's explanation. ``seed`` (default 0) and
    ``temperature`` (default 0.4) are the scientist's. With ``out`` the hypothesis is
    written there as editable YAML and every accepted step is journaled beside it as it
    is taken, so ``resume=out`` continues a chain that failed without repeating a call.
    Needs a scientist model (``model``, or the scientist role in ``silicolab.yaml``).
    The options are :func:`propose_hypothesis`'s (its signature is shown as this one's)."""
    return propose_hypothesis(scenario, **options).hypothesis


#: help() and editors show the real keyword options of generate_hypothesis.
generate_hypothesis.__signature__ = inspect.signature(propose_hypothesis).replace(  # type: ignore[attr-defined]
    return_annotation=Hypothesis
)


def scientist_for(model: str | None, base_url: str | None, config: str | Path | None) -> Any:
    """The scientist model that proposes hypotheses, or a refusal naming the fix."""
    from silicolab.api.study_models import scientist_model

    return scientist_model(
        model, base_url, Path(config) if config is not None else None,
        needed_for="propose hypotheses (start from a built-in study instead: "
        "'silicolab study list-examples --write DIR')",
    )  # fmt: skip


__all__ = [
    "DEFAULTS",
    "SUBJECTS",
    "Proposal",
    "StudyFit",
    "StudyResult",
    "generate_hypothesis",
    "load_hypothesis",
    "propose_hypothesis",
    "run_study",
]
