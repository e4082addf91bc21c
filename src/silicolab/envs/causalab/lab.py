"""The CausaLab crystal lab: one episode on one hidden SCM (spec §4).

An agent first studies an *experiment crystal* in the Property Manipulator (read its panel,
set one property at a time, within an intervention budget), then opens the Crystal Reactor
(which locks the manipulator for good), reads the *target crystal's* properties and submits
its resonance frequency. A submission within 5 Hz activates the reactor and ends the
episode successfully.

Two fidelities:

* ``"fixed"`` (default): every instance is drawn from generators derived from
  ``(graph_id, seed, role)`` with :mod:`silicolab.core.seeding` (same seed, same episode),
  all three submissions can activate the reactor, no frequency clamp, no distractor
  properties in the reactor panel.
* ``"faithful"``: the published behaviour and its quirks: only submissions 1-2 can activate
  (the off-by-one of §4.3), submissions are clamped to [0, 10000] Hz, the reactor panel shows
  the constant distractors temperatureC 25.0 / density 1.0 / quantumSize 2.0 when they are not
  graph nodes, and each crystal property's base is ``Random(seed*1000 + h(name) % 1000)
  .randint(0, 100)`` (+50000 for the reactor). Upstream ``h`` is Python's salted string hash,
  so the published crystals change on every run; here ``h`` is the stable
  :func:`~silicolab.core.seeding.stable_hash`, so faithful episodes are reproducible too
  (they cannot equal the unknowable published crystals). The hidden-disturbance draws are
  seeded in both modes (upstream they are not).

Prior records use one ``random.Random(42)`` shared by the records, as published, in both
modes (``seeded_priors=True`` draws them from the episode seed instead). The intervention
rule is the coded one (:meth:`GraphConfig.set_now`, upstream's arithmetic: X shows ``v``
now, its solved base persists); ``intervention_rule="paper"`` applies the paper's literal
wording instead (X's base becomes ``v``, so X shows ``v + sum(w * parents)``).
"""

from __future__ import annotations

import inspect
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng
from silicolab.envs.base import EnvSpec, Fidelity, env_repr
from silicolab.envs.causalab.episode_setup import (
    as_number,
    check_options,
    crystal_bases,
    default_max_env_steps,
    prior_bases,
    reactor_panel,
)
from silicolab.envs.causalab.suite import TARGET, GraphConfig, load_suite
from silicolab.envs.errors import InvalidAction

Phase = Literal["manipulator", "reactor", "done"]
TOLERANCE = 5.0
MAX_SUBMISSIONS = 3
FREQUENCY_RANGE = (0.0, 10000.0)


@dataclass(frozen=True)
class SubmitResult:
    """The outcome of one reactor submission. ``correct`` means the reactor activated;
    ``within_tolerance`` whether ``|f - f*| < 5`` (they differ for a rejected 3rd
    submission in faithful mode)."""

    correct: bool
    frequency: float
    submissions: int
    remaining: int
    message: str
    within_tolerance: bool = False


class CrystalLab:
    """One CausaLab episode (typed tools plus the text interface of :mod:`.text_ui`).

    ``bases`` fixes crystal bases for tests and replays: ``{"manipulator": {prop: base},
    "reactor": {...}, "prior": [{...}, ...]}`` (any subset). ``hidden_draws`` fixes the
    sequence of hidden-disturbance values drawn after each intervention.
    """

    #: the registration record, set by :func:`silicolab.envs.make`.
    spec: EnvSpec | None = None

    def __init__(
        self,
        config: GraphConfig,
        *,
        fidelity: Fidelity = "fixed",
        seed: int | None = 0,
        n_prior: int = 2,
        budget: int | None = None,
        intervention_rule: Literal["coded", "paper"] = "coded",
        bases: Mapping[str, Any] | None = None,
        hidden_draws: Sequence[float] | None = None,
        max_env_steps: int | None = None,
        seeded_priors: bool = False,
    ) -> None:
        check_options(fidelity, intervention_rule, n_prior, budget, max_env_steps, bases)
        self.config = config
        self.fidelity: Fidelity = fidelity
        self.seed = seed
        self.n_prior = n_prior
        self.budget: int = config.budget if budget is None else budget
        self.intervention_rule = intervention_rule
        self.seeded_priors = seeded_priors
        self._fixed_bases = dict(bases or {})
        self._fixed_hidden = None if hidden_draws is None else [float(h) for h in hidden_draws]
        self.max_env_steps: int = (
            default_max_env_steps(config, self.budget) if max_env_steps is None else max_env_steps
        )
        self.reset()

    def __repr__(self) -> str:
        config = self.config
        return env_repr(
            self, "causalab", graph=config.graph_id, suite=config.suite,
            nodes=len(config.nodes), fidelity=self.fidelity, seed=self.seed, budget=self.budget,
        )  # fmt: skip

    # -- instances -----------------------------------------------------------------------

    def reset(self, seed: int | None = None) -> None:
        """Start the episode again (with ``seed`` if given, else the current seed): new
        crystals for a new seed, the same ones otherwise."""
        if seed is not None:
            self.seed = seed
        config = self.config
        priors = prior_bases(
            config,
            self.n_prior,
            seed=self.seed,
            seeded=self.seeded_priors,
            given=self._fixed_bases.get("prior"),
        )
        self.prior_records: list[dict[str, float]] = [config.evaluate(b) for b in priors]
        self.golden_records: list[dict] = [
            step.record() for step in (*config.golden_observations, *config.golden_chain)
        ]
        self._manipulator = self._crystal("manipulator")
        self._reactor = self._crystal("reactor")
        self.instance_bases: dict[str, Any] = {
            "prior": [dict(b) for b in priors],
            "manipulator": dict(self._manipulator),
            "reactor": dict(self._reactor),
        }
        self.target_frequency: float = config.evaluate(self._reactor)[TARGET]
        hidden = config.hidden
        self.hidden_value: float = hidden.initial_value if hidden is not None else 0.0
        self.hidden_values: list[float] = []
        self._hidden_rng = rng(self.seed, config.graph_id, "hidden")
        self.budget_used = 0
        self.phase: Phase = "manipulator"
        self.submissions = 0
        self.success = False
        self.done = False
        self.end_reason: str | None = None
        self.interventions: list[tuple[str, float]] = []
        self.history: list[dict] = []
        self.env_steps = 0
        from silicolab.envs.causalab.text_ui import TextSession

        self._ui = TextSession(self)

    def _crystal(self, role: Literal["manipulator", "reactor"]) -> dict[str, Any]:
        return crystal_bases(
            self.config,
            role,
            fidelity=self.fidelity,
            seed=self.seed,
            given=self._fixed_bases.get(role),
        )

    # -- state ---------------------------------------------------------------------------

    @property
    def budget_left(self) -> int:
        """Interventions still allowed."""
        return self.budget - self.budget_used

    @property
    def submissions_left(self) -> int:
        return MAX_SUBMISSIONS - self.submissions

    def observe(self) -> dict[str, float]:
        """The manipulator crystal's panel values, target included (hidden shift applied)."""
        return self.config.evaluate(self._manipulator, hidden_shift=self.hidden_value)

    def reactor_properties(self) -> dict[str, float]:
        """The target crystal's properties as the reactor panel lists them (no target)."""
        return reactor_panel(self.config, self.config.evaluate(self._reactor), self.fidelity)

    # -- typed tools ---------------------------------------------------------------------

    def intervene(self, prop: str, value: float) -> dict[str, float]:
        """Set the manipulator crystal's ``prop`` to ``value`` (the coded rule, spec §4.2)
        and return the new panel. Costs one intervention and one env step."""
        panel = self._intervene(prop, value)
        self._tick()
        return panel

    def open_reactor(self) -> dict[str, float]:
        """Open the Crystal Reactor: locks the manipulator for good and returns the target
        crystal's properties (no target). Costs one env step."""
        shown = self._open_reactor()
        self._tick()
        return shown

    def submit(self, frequency: float) -> SubmitResult:
        """Set the reactor to ``frequency``; it activates if within 5 Hz of the target.
        Costs one submission (of 3) and one env step."""
        result = self._submit(frequency)
        self._tick()
        return result

    def end(self, reason: str = "agent ended the episode") -> None:
        """End the episode without a submission (the agent's SUBMIT action)."""
        self._require_active()
        self._event("end", reason=reason)
        self._finish(reason)

    # -- rules (no step accounting; the public tools and the text interface add it) -------

    def _require_active(self) -> None:
        if self.done:
            raise InvalidAction(
                f"The episode is over ({self.end_reason}); no further actions are accepted."
            )

    def _intervene(self, prop: str, value: Any) -> dict[str, float]:
        self._require_active()
        config = self.config
        if self.phase != "manipulator":
            raise InvalidAction(
                "The Property Manipulator is locked: the Crystal Reactor has been used, so no "
                "more adjustments are possible."
            )
        if prop == TARGET:
            raise InvalidAction(
                f"{config.display_names.get(TARGET, TARGET)} cannot be adjusted directly; it "
                "changes only through the properties that cause it."
            )
        if prop not in config.controllable:
            raise InvalidAction(
                f"Unknown property {prop!r}; adjustable properties are {list(config.controllable)}."
            )
        number = as_number(value)
        if number is None:
            raise InvalidAction(
                f"The value for {config.display_names.get(prop, prop)} must be a number; got "
                f"{value!r}. Nothing was changed."
            )
        if self.budget_left <= 0:
            raise InvalidAction(
                f"The Property Manipulator is locked: all {self.budget} adjustments are used."
                if self.budget
                else "This episode allows no adjustments (budget 0); use the existing observations."
            )
        self.budget_used += 1
        if self.intervention_rule == "paper":
            new_base = round(number, 2)
        else:
            new_base = config.set_now(self._manipulator, prop, number)
        self._manipulator[prop] = new_base
        self.interventions.append((prop, number))
        if config.hidden is not None:
            self.hidden_value = self._draw_hidden()
            self.hidden_values.append(self.hidden_value)
        panel = self.observe()
        self._event(
            "intervene",
            prop=prop,
            value=number,
            base=new_base,
            panel=panel,
            hidden=self.hidden_value if config.hidden is not None else None,
        )
        return panel

    def _draw_hidden(self) -> float:
        index = len(self.hidden_values)
        if self._fixed_hidden is not None and index < len(self._fixed_hidden):
            return self._fixed_hidden[index]
        space = self.config.hidden.value_space  # type: ignore[union-attr]
        return space[int(self._hidden_rng.integers(len(space)))]

    def _open_reactor(self) -> dict[str, float]:
        self._require_active()
        if self.phase == "manipulator":
            self.phase = "reactor"
            self._event("open_reactor")
        return self.reactor_properties()

    def _submit(self, frequency: Any) -> SubmitResult:
        self._require_active()
        if self.phase != "reactor":
            raise InvalidAction("Open the Crystal Reactor before submitting a frequency.")
        number = as_number(frequency)
        if number is None:
            raise InvalidAction(f"The frequency must be a number; got {frequency!r}.")
        if self.submissions_left <= 0:
            raise InvalidAction("No submissions are left.")
        if self.fidelity == "faithful":
            number = min(max(number, FREQUENCY_RANGE[0]), FREQUENCY_RANGE[1])
        self.submissions += 1
        within = abs(number - self.target_frequency) < TOLERANCE
        # faithful: the count is incremented before the check, so the 3rd try cannot activate
        allowed = self.submissions < MAX_SUBMISSIONS or self.fidelity == "fixed"
        activated = within and allowed
        remaining = self.submissions_left
        if activated:
            message = f"Frequency set to {number:g} Hz. The reactor activated: task complete."
        else:
            message = (
                f"Frequency set to {number:g} Hz. The reactor did not activate. "
                f"Submissions used: {self.submissions}/{MAX_SUBMISSIONS}, remaining: {remaining}."
            )
        result = SubmitResult(activated, number, self.submissions, remaining, message, within)
        self._event("submit", frequency=number, correct=activated, within_tolerance=within)
        if activated:
            self.success = True
            self._finish("reactor activated")
        elif remaining <= 0:
            self._finish("no submissions left")
        return result

    def _tick(self) -> None:
        self.env_steps += 1
        if not self.done and self.env_steps >= self.max_env_steps:
            self._finish("step limit reached")

    def _finish(self, reason: str) -> None:
        self.done = True
        self.phase = "done"
        self.end_reason = reason
        self._event("done", reason=reason, success=self.success)

    def _event(self, kind: str, **data: Any) -> None:
        self.history.append({"t": self.env_steps, "event": kind, **data})

    # -- text interface ------------------------------------------------------------------

    def task_text(self) -> str:
        """The task description an LLM agent reads first (rules, budget, tolerance,
        EXISTING OBSERVATIONS, Golden lines, variant notes)."""
        from silicolab.envs.causalab.text_ui import task_text

        return task_text(self)

    def describe(self) -> str:
        """The task text a scientist starts from (:meth:`task_text`)."""
        return self.task_text()

    def text_step(self, action: Mapping[str, Any]) -> str:
        """Carry out one DSL action (``action``/``arg1``/``arg2``, ``chosen_dialog_option_int``
        or ``value``) and return the new screen. Refused actions return the environment's
        message and cost no budget."""
        return self._ui.step(action)

    @property
    def last_action_refused(self) -> bool:
        """Whether the last :meth:`text_step` action was refused (it cost no budget)."""
        return bool(getattr(self._ui, "refused", False))

    def text_observation(self) -> str:
        """The current screen."""
        return self._ui.screen()

    # -- records -------------------------------------------------------------------------

    def to_record(self) -> dict[str, Any]:
        """A JSON-ready summary of the episode (realised bases, f*, H draws, events)."""
        return {
            "graph_id": self.config.graph_id,
            "suite": self.config.suite,
            "fidelity": self.fidelity,
            "seed": self.seed,
            "intervention_rule": self.intervention_rule,
            "budget": self.budget,
            "budget_used": self.budget_used,
            "instance_bases": self.instance_bases,
            "target_frequency": self.target_frequency,
            "hidden_values": list(self.hidden_values),
            "interventions": [list(i) for i in self.interventions],
            "submissions": self.submissions,
            "success": self.success,
            "end_reason": self.end_reason,
            "env_steps": self.env_steps,
            "history": self.history,
        }


def make_lab(
    *,
    suite: str = "4nodes",
    index: int = 0,
    fidelity: Fidelity = "fixed",
    seed: int | None = 0,
    n_prior: int = 2,
    budget: int | None = None,
    intervention_rule: Literal["coded", "paper"] = "coded",
    config: GraphConfig | None = None,
    **options: Any,
) -> CrystalLab:
    """The ``"causalab"`` factory: graph ``index`` of the bundled ``suite`` (or ``config``)."""
    unknown = sorted(set(options) - set(inspect.signature(CrystalLab).parameters))
    if unknown:
        raise InputError(
            f"make('causalab') does not take {unknown}; check the spelling "
            "(options: suite, index, fidelity, seed, n_prior, budget, "
            "intervention_rule, and CrystalLab's bases, hidden_draws, ...)"
        )
    if config is None:
        configs = load_suite(suite)
        if isinstance(index, bool) or not isinstance(index, int) or not 0 <= index < len(configs):
            raise InputError(
                f"index must be an integer in 0..{len(configs) - 1} for suite {suite!r}; "
                f"got {index!r}"
            )
        config = configs[index]
    return CrystalLab(
        config,
        fidelity=fidelity,
        seed=seed,
        n_prior=n_prior,
        budget=budget,
        intervention_rule=intervention_rule,
        **options,
    )
