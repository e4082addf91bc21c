"""The LLM ReAct scientist: one DSL record per step, a repair loop, optional verification.

Each step renders the controller prompt (``prompts/controller.j2``) with the task text, the
carried state (previous memory, past_data, hypothesis and the agent's own action history)
and the current screen, and sends it as one user message (spec §7, §8). The reply is
validated with ``parse_record``; on errors the model gets ``repair_message(errors)`` up to
``max_repairs`` times, then the step is recorded as a parse failure and its action fields
are executed if they are valid on their own (otherwise a WAIT), with the previous state
carried forward (§5.4 rule 7). The action drives ``lab.text_step``.

Verification (§6.9): ``verify="per_step"`` adds a mandatory check of the equation against
all past data to every prompt; ``verify="before_commit"`` inserts one extra turn just before
the first action that would open the reactor, asking the model to check its hypothesis
against all its data and revise (or keep experimenting) before committing.

The lab's fidelity picks the agent's settings (:mod:`.settings`): ``faithful`` is the
paper's agent (temperature 0.1, top-p 0.95, 8192 tokens, the full previous records oldest
first, the paper's prompt content, the root-node re-evaluation after the episode);
``fixed`` is ours (greedy, compact action history, our prompt hints, source-only roots).
The settings used go into the record as ``agent_settings``.
"""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from silicolab.core.errors import InputError
from silicolab.envs.causalab.dsl import DSLState, Hypothesis, ParseOutcome, parse_record
from silicolab.envs.causalab.dsl import repair_message as dsl_repair_message
from silicolab.envs.causalab.suite import TARGET
from silicolab.llm import LanguageModel, load_model
from silicolab.scientists.causalab.episode import EpisodeTrace, StepRecord, excerpt
from silicolab.scientists.causalab.reeval import graph_reeval, phase1_context, root_reeval
from silicolab.scientists.causalab.settings import (
    AgentSettings,
    agent_settings,
    history_entry,
    render_paper_state,
)
from silicolab.scientists.templates import render_template

if TYPE_CHECKING:
    from silicolab.envs.causalab.lab import CrystalLab

Verify = Literal["none", "per_step", "before_commit"]
VERIFY_MODES: tuple[str, ...] = ("none", "per_step", "before_commit")
WAIT: dict[str, Any] = {"action": "WAIT"}
#: Characters of a raw reply kept in the step record.
RAW_CHARS = 8000
PROMPTS = Path(__file__).parent / "prompts"
#: The manipulator screen's header (spec §4.4): the agent is reading the crystal panel.
MANIPULATOR_HEADER = "PROPERTY MANIPULATOR"


def render(name: str, **values: Any) -> str:
    """Render the prompt template ``name`` (a missing variable is an error)."""
    return render_template(PROMPTS, name, keep_trailing_newline=True, **values)


@dataclass
class Reply:
    """The outcome of one model turn including its repairs."""

    outcome: ParseOutcome
    raw: str
    retries: int
    errors: list[str] = field(default_factory=list)

    @property
    def action(self) -> dict[str, Any]:
        """The action to execute: the record's, else valid action fields, else WAIT."""
        if self.outcome.record is not None:
            return dict(self.outcome.record.action)
        return dict(self.outcome.action) if self.outcome.action else dict(WAIT)

    @property
    def hypothesis(self) -> Hypothesis | None:
        """The validated hypothesis, or None after a parse failure."""
        return None if self.outcome.record is None else self.outcome.record.hypothesis


class LLMCallCap(Exception):
    """The episode's LLM-call cap was reached."""


class ReactScientist:
    """A language model playing CausaLab through the text interface (module docstring).

    ``model`` is a loaded :class:`LanguageModel` or a spec for :func:`load_model`;
    ``max_steps`` caps agent turns (default: twice the lab's step cap);
    ``max_llm_calls`` caps model calls per episode, repairs included (spec: 1000)."""

    agent = "llm"

    def __init__(
        self,
        model: LanguageModel | str,
        *,
        verify: Verify = "none",
        max_repairs: int = 2,
        max_steps: int | None = None,
        max_llm_calls: int = 1000,
        temperature: float | None = None,
        max_tokens: int | None = None,
        top_p: float | None = None,
        seed: int | None = 0,
        tag: str = "scientist",
    ):
        if verify not in VERIFY_MODES:
            raise InputError(f"verify must be one of {list(VERIFY_MODES)}, got {verify!r}")
        self.model = load_model(model) if isinstance(model, str) else model
        self.model_label = self.model.spec
        self.verify = verify
        self.max_repairs = max_repairs
        self.max_steps = max_steps
        self.max_llm_calls = max_llm_calls
        self.temperature, self.max_tokens, self.seed = temperature, max_tokens, seed
        self.top_p = top_p
        self.tag = tag

    def settings_for(self, lab: CrystalLab) -> AgentSettings:
        """The agent settings for ``lab``'s fidelity (explicit sampling options win)."""
        return agent_settings(
            str(lab.fidelity),
            self.model.name,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            top_p=self.top_p,
        )

    def prompt(
        self,
        lab: CrystalLab,
        state: DSLState,
        settings: AgentSettings | None = None,
        history: list[str] | None = None,
    ) -> str:
        """The controller prompt for the lab's current screen: the paper's content and
        full-record history, or ours with the compact action history (module docstring)."""
        settings = settings or self.settings_for(lab)
        task = lab.task_text()
        paper = settings.prompt_variant == "paper"
        return render(
            "controller_paper.j2" if paper else "controller.j2",
            target=TARGET,
            family=lab.config.family,
            verify_each_step=self.verify == "per_step",
            task=task,
            state=render_paper_state(state, history or [], task) if paper else state.render(),
            screen=lab.text_observation(),
        )

    async def arun(self, lab: CrystalLab, trace: EpisodeTrace) -> None:
        """Play until success, the end of the episode, the step cap or the LLM-call cap."""
        state = DSLState(past_data=golden_past_data(lab))
        settings = self.settings_for(lab)
        trace.agent_settings = settings.to_dict()
        history: list[str] = []
        prompts: list[str] = []  # every controller prompt, for the re-evaluation
        max_steps = self.max_steps or 2 * int(lab.max_env_steps)
        verified = self.verify != "before_commit"
        try:
            for _ in range(max_steps):
                if lab.success or lab.done:
                    break
                prompt = self.prompt(lab, state, settings, history)
                prompts.append(prompt)
                reply = await self._ask(lab, prompt, trace, settings)
                kind = "step"
                if not verified and lab.phase == "manipulator" and opens_reactor(lab, reply.action):
                    verified = True
                    held = self._step(lab, reply, kind="step", executed=False)
                    held.observation = "(held back for the verification turn)"
                    trace.add_step(held, reply.hypothesis)
                    raw_json = reply.outcome.raw_json
                    proposed = reply.raw if raw_json is None else json.dumps(raw_json)
                    check = render("verify_commit.j2", controller=prompt, proposed=proposed)
                    reply, kind = await self._ask(lab, check, trace, settings), "verify"
                self._execute(lab, state, reply, trace, kind)
                history.append(history_entry(reply.outcome.raw_json, reply.action))
            else:
                if not (lab.success or lab.done):
                    trace.stop_reason = "step_cap"
        except LLMCallCap:
            trace.stop_reason = "llm_call_cap"
        if not trace.stop_reason:
            trace.stop_reason = "success" if lab.success else "done"
        if settings.root_reeval and phase1_context(prompts):
            await self._reeval(settings, phase1_context(prompts), trace)
        if settings.root_reeval:  # Task-2 needs only the final hypothesis
            await self._reeval_graph(settings, trace)

    async def _reeval(
        self, settings: AgentSettings, phase1_prompt: str, trace: EpisodeTrace
    ) -> None:
        """The paper's root-node re-evaluation (:mod:`.reeval`); its calls are counted in
        the episode's usage (``reeval_calls`` among them) but not against the call cap."""
        outcome, completions = await root_reeval(
            self.model, settings, phase1_prompt, seed=self.seed, tag=self.tag
        )
        self._note_calls(trace, completions, "reeval_calls")
        trace.reeval = outcome

    async def _reeval_graph(self, settings: AgentSettings, trace: EpisodeTrace) -> None:
        """The paper's graph re-evaluation (Task-2, :mod:`.reeval`) of the final
        hypothesis; counted like the root one (``reeval_graph_calls``)."""
        final = trace.final_hypothesis.to_dict()
        outcome, completions = await graph_reeval(
            self.model, settings, final, seed=self.seed, tag=self.tag
        )
        self._note_calls(trace, completions, "reeval_graph_calls")
        trace.reeval_graph = outcome

    @staticmethod
    def _note_calls(trace: EpisodeTrace, completions: list[Any], counter: str) -> None:
        for completion in completions:
            usage = completion.usage
            trace.note_usage(usage.input_tokens, usage.output_tokens, completion.cached)
        trace.usage[counter] = len(completions)

    def _execute(
        self, lab: CrystalLab, state: DSLState, reply: Reply, trace: EpisodeTrace, kind: str
    ) -> None:
        step = self._step(lab, reply, kind=kind, executed=True)
        screen = lab.text_step(reply.action)
        step.observation = excerpt(screen)
        step.refused = lab.last_action_refused
        if reply.outcome.record is not None:
            state.update(reply.outcome.record)
        else:
            state.record_action(reply.action)
        if lab.phase == "manipulator" and MANIPULATOR_HEADER in screen:
            trace.note_panel(lab.observe())  # a panel the agent has now seen
        trace.add_step(step, reply.hypothesis)

    def _step(self, lab: CrystalLab, reply: Reply, *, kind: str, executed: bool) -> StepRecord:
        h = reply.hypothesis
        return StepRecord(
            t=0,
            phase=str(lab.phase),
            hypothesis=None if h is None else h.to_dict(),
            action=reply.action,
            observation="",
            budget_used=int(lab.budget_used),
            kind=kind,
            executed=executed,
            parse_errors=reply.errors,
            parse_warnings=list(reply.outcome.warnings),
            retries=reply.retries,
            parse_failure=reply.outcome.record is None,
            raw_output=reply.raw[:RAW_CHARS],
        )

    async def _ask(
        self, lab: CrystalLab, prompt: str, trace: EpisodeTrace, settings: AgentSettings
    ) -> Reply:
        """One turn: the prompt, then up to ``max_repairs`` re-prompts listing the errors."""
        messages: list[dict[str, str]] = [{"role": "user", "content": prompt}]
        errors: list[str] = []
        for attempt in range(self.max_repairs + 1):
            if trace.usage["calls"] >= self.max_llm_calls:
                raise LLMCallCap
            completion = await self.model.agenerate(
                messages,
                temperature=settings.temperature,
                top_p=settings.top_p,
                max_tokens=settings.max_tokens,
                seed=self.seed,
                tag=self.tag,
            )
            usage = completion.usage
            trace.note_usage(usage.input_tokens, usage.output_tokens, completion.cached)
            outcome = parse_record(
                completion.text, variables=list(lab.config.controllable), family=lab.config.family
            )
            if outcome.record is not None or attempt == self.max_repairs:
                return Reply(outcome, completion.text, attempt, errors)
            errors += [f"attempt {attempt + 1}: {e}" for e in outcome.errors]
            messages += [
                {"role": "assistant", "content": completion.text},
                {"role": "user", "content": dsl_repair_message(outcome.errors)},
            ]
        raise AssertionError("unreachable")  # pragma: no cover


def opens_reactor(lab: CrystalLab, action: dict[str, Any]) -> bool:
    """Whether ``action`` would take the lab out of the manipulator phase, found by
    trying it on a copy (the text interface decides what opens the reactor)."""
    trial = copy.deepcopy(lab, memo={id(lab.config): lab.config})  # the config is immutable
    trial.text_step(action)
    return trial.phase != "manipulator"


def golden_past_data(lab: CrystalLab) -> list[dict[str, Any]]:
    """Golden records preloaded into the agent's past_data (spec §3.7.3), else []."""
    entries = []
    for i, entry in enumerate(lab.golden_records, start=1):
        item: dict[str, Any] = {"id": f"{i}/bootstrap", "props": dict(entry.get("props", {}))}
        item["freq"] = entry.get("freq")
        if entry.get("intervention"):
            item["intervention"] = dict(entry["intervention"])
        entries.append(item)
    return entries
