"""One CausaLab episode: a scientist drives a :class:`CrystalLab`, the runner keeps the record.

Every scientist (LLM, reference, random) implements the same small protocol,
:class:`CausaLabScientist`: ``agent``, ``model_label`` and ``async arun(lab, trace)``. It acts
on the lab (typed tools or the text interface) and reports each step to the
:class:`EpisodeTrace`. :func:`aplay_episode` (CausaLab's episode player, which
:func:`silicolab.scientists.run_episode` calls) then scores the outcome with
``score_episode`` and returns a JSON-ready :class:`CausaLabRecord`.
"""

from __future__ import annotations

import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from silicolab.core.sync import sync_twin
from silicolab.envs.base import SCHEMA_VERSION
from silicolab.envs.causalab.dsl import Hypothesis
from silicolab.envs.causalab.metrics import score_episode
from silicolab.envs.causalab.suite import TARGET
from silicolab.scientists.causalab.reeval import apply_graph_reeval, apply_root_reeval

if TYPE_CHECKING:
    from silicolab.envs.causalab.lab import CrystalLab

#: Characters of an environment reply kept per step (the full screen is re-creatable).
OBSERVATION_EXCERPT = 600


def hypothesis_to_dict(h: Hypothesis | None) -> dict[str, Any] | None:
    """The DSL JSON form of ``h``, or None (a step without a valid hypothesis)."""
    return None if h is None else h.to_dict()


def is_empty(h: Hypothesis | None) -> bool:
    """True for a missing hypothesis or one with neither edges nor an equation."""
    return h is None or (not h.edges and not h.freq_equation.strip())


@dataclass
class StepRecord:
    """One agent step: what it believed, what it did, what the environment answered.

    ``phase`` is the lab's phase *before* the action; ``kind`` is ``"step"`` or
    ``"verify"`` (the extra verification turn); ``executed`` is False for a proposed action
    that was held back for verification."""

    t: int
    phase: str
    hypothesis: dict[str, Any] | None
    action: dict[str, Any]
    observation: str
    budget_used: int
    kind: str = "step"
    executed: bool = True
    parse_errors: list[str] = field(default_factory=list)
    parse_warnings: list[str] = field(default_factory=list)
    retries: int = 0
    parse_failure: bool = False
    raw_output: str | None = None
    refused: bool = False


class EpisodeTrace:
    """What a scientist reports while it plays: steps, panels it saw, submissions, usage.

    ``records`` starts with the prior (and Golden) records and grows with every
    manipulator panel reported via :meth:`note_panel`; these are the data the commit
    hypothesis is checked against (spec §6.9, using the environment's true records)."""

    def __init__(self, lab: CrystalLab):
        self.steps: list[StepRecord] = []
        self.records: list[dict[str, float]] = [dict(r) for r in lab.prior_records]
        for entry in lab.golden_records:
            row = {str(k): float(v) for k, v in entry.get("props", {}).items()}
            if isinstance(entry.get("freq"), int | float):
                row[TARGET] = float(entry["freq"])
            self.records.append(row)
        self.submissions: list[float] = []
        self.usage: dict[str, Any] = {"calls": 0, "input_tokens": 0, "output_tokens": 0}
        self.stop_reason = ""
        #: The settings the agent played with (an LLM scientist adds its sampling,
        #: history, prompt and root-scoring choices; see ``settings.py``).
        self.agent_settings: dict[str, Any] = {"fidelity": str(lab.fidelity)}
        #: The root-node re-evaluation's outcome, when the agent ran one (``reeval.py``).
        self.reeval: dict[str, Any] | None = None
        #: The graph re-evaluation's (Task-2) outcome, when the agent ran one.
        self.reeval_graph: dict[str, Any] | None = None
        self._commit: Hypothesis | None = None
        self._committed = False

    def note_panel(self, panel: Mapping[str, float]) -> None:
        """Record a manipulator panel (all properties incl. frequency) the agent observed."""
        row = {k: float(v) for k, v in panel.items() if isinstance(v, int | float)}
        if row and (not self.records or row != self.records[-1]):
            self.records.append(row)

    def add_step(self, step: StepRecord, hypothesis: Hypothesis | None) -> None:
        """Append ``step``; while the lab is still in the manipulator phase the latest
        non-empty hypothesis is the candidate commit hypothesis."""
        step.t = len(self.steps)
        self.steps.append(step)
        if step.phase == "manipulator" and not is_empty(hypothesis) and step.executed:
            self._commit = hypothesis

    def note_usage(self, input_tokens: int, output_tokens: int, cached: bool) -> None:
        """Count one LLM call of this episode (episodes share a model, so the model's
        ledger alone cannot tell them apart)."""
        self.usage["calls"] += 1
        self.usage["input_tokens"] += int(input_tokens)
        self.usage["output_tokens"] += int(output_tokens)
        self.usage["cache_hits"] = self.usage.get("cache_hits", 0) + int(bool(cached))

    @property
    def final_hypothesis(self) -> Hypothesis:
        """The last non-empty hypothesis of the episode (spec §5.3)."""
        for step in reversed(self.steps):
            h = Hypothesis.from_dict(step.hypothesis)
            if not is_empty(h):
                return h
        return Hypothesis.EMPTY

    @property
    def commit_hypothesis(self) -> Hypothesis:
        """The last non-empty hypothesis held before the first reactor interaction."""
        return self._commit or Hypothesis.EMPTY

    def commit_records(self) -> list[dict[str, float]]:
        """The records the agent had seen by the commit step (all manipulator panels are
        seen before the reactor is opened, so this is every record noted)."""
        return list(self.records)


class CausaLabScientist(Protocol):
    """What :func:`aplay_episode` needs of a scientist."""

    agent: str
    model_label: str

    async def arun(self, lab: CrystalLab, trace: EpisodeTrace) -> None:
        """Play one episode on ``lab`` (already reset), reporting to ``trace``."""


#: The metrics a CausaLab episode reports as its headline scores.
HEADLINE = ("all_edge_f1", "shd", "weight_f1", "root_f1", "budget_used")


@dataclass
class CausaLabRecord:
    """The full record of one episode, JSON-ready via :meth:`to_dict`.

    ``solvable`` is False only when the faithful reactor's 10 kHz clamp puts the target out
    of reach; ``metrics`` is ``score_episode``'s flat dict; ``usage`` counts this episode's
    LLM calls and tokens (empty counts for agents without a model); ``agent_settings`` the
    settings the agent played with (sampling, history, prompt variant, fidelity),
    ``reeval`` the root-node re-evaluation's outcome when one ran (its roots then give
    ``metrics["root_*"]``) and ``reeval_graph`` the graph re-evaluation's (its graph then
    gives the edge, SHD and weight metrics; the final hypothesis's stay as ``*_source_only``)."""

    suite: str
    index: int
    graph_id: str
    seed: int | None
    agent: str
    model: str
    fidelity: str
    verify: str
    success: bool
    solvable: bool
    target_frequency: float
    submissions: list[float]
    interventions: list[list[Any]]
    steps: list[StepRecord]
    final_hypothesis: dict[str, Any] | None
    commit_hypothesis: dict[str, Any] | None
    metrics: dict[str, Any]
    usage: dict[str, Any]
    runtime_s: float
    env_steps: int
    stop_reason: str
    schema_version: str = SCHEMA_VERSION
    agent_settings: dict[str, Any] | None = None
    reeval: dict[str, Any] | None = None
    reeval_graph: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON-ready data (steps as dicts)."""
        return asdict(self)

    def summary(self) -> dict[str, Any]:
        """The common episode fields (see :class:`silicolab.scientists.EpisodeRecord`):
        a step that stayed unparseable counts as a parse failure, a refused action as an
        invalid action."""
        taken = [s for s in self.steps if s.executed]
        scores = {"success": float(self.success)}
        scores.update({k: self.metrics[k] for k in HEADLINE if k in self.metrics})
        sample = next((s.raw_output for s in taken if s.parse_failure and s.raw_output), "")
        return {
            "steps": len(taken),
            "scores": scores,
            "health": {
                "steps": len(taken),
                "parse_failures": sum(s.parse_failure for s in taken),
                "invalid_actions": sum(s.refused and not s.parse_failure for s in taken),
                "sample_reply": sample or "",
            },
            "usage": self.usage,
            "runtime_s": self.runtime_s,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> CausaLabRecord:
        """Rebuild a record written by :meth:`to_dict` (e.g. from a run's events)."""
        values = dict(data)
        values["steps"] = [StepRecord(**s) for s in values.get("steps", [])]
        return cls(**values)


def index_of(graph_id: str) -> int:
    """The episode index encoded at the end of a graph id (``"4nodes_12"`` -> 12)."""
    match = re.search(r"(\d+)$", graph_id)
    return int(match.group(1)) if match else -1


def submissions_of(lab: CrystalLab, trace: EpisodeTrace) -> list[float]:
    """Frequencies submitted in the episode: the trace's, else those in the lab history."""
    if trace.submissions:
        return list(trace.submissions)
    found = []
    for event in lab.history:
        if isinstance(event, Mapping) and "submit" in str(
            event.get("event", event.get("kind", ""))
        ):
            value = event.get("frequency", event.get("value"))
            if isinstance(value, int | float):
                found.append(float(value))
    return found


async def aplay_episode(
    lab: CrystalLab,
    scientist: CausaLabScientist,
    *,
    index: int | None = None,
) -> CausaLabRecord:
    """Play one episode of ``scientist`` on ``lab`` (reset here) and score it."""
    lab.reset(lab.seed)
    trace = EpisodeTrace(lab)
    start = time.perf_counter()
    await scientist.arun(lab, trace)
    runtime = time.perf_counter() - start
    config = lab.config
    final = trace.final_hypothesis
    metrics = score_episode(
        final,
        config,
        success=bool(lab.success),
        interventions=list(lab.interventions),
        commit_hypothesis=trace.commit_hypothesis,
        records=trace.commit_records(),
        reactor_props=lab.reactor_properties(),
        target_frequency=float(lab.target_frequency),
    )
    if trace.reeval is not None:
        apply_root_reeval(
            metrics,
            trace.reeval,
            config,
            lab.reactor_properties(),
            float(lab.target_frequency),
        )
    if trace.reeval_graph is not None:
        apply_graph_reeval(metrics, trace.reeval_graph, config)
    return CausaLabRecord(
        suite=config.suite,
        index=index_of(config.graph_id) if index is None else index,
        graph_id=config.graph_id,
        seed=lab.seed,
        agent=scientist.agent,
        model=scientist.model_label,
        fidelity=str(lab.fidelity),
        verify=str(getattr(scientist, "verify", "none")),
        success=bool(lab.success),
        solvable=lab.fidelity == "fixed" or 0.0 <= float(lab.target_frequency) <= 10000.0,
        target_frequency=float(lab.target_frequency),
        submissions=submissions_of(lab, trace),
        interventions=[[p, float(v)] for p, v in lab.interventions],
        steps=trace.steps,
        final_hypothesis=hypothesis_to_dict(final),
        commit_hypothesis=hypothesis_to_dict(trace.commit_hypothesis),
        metrics=metrics,
        usage=dict(trace.usage),
        runtime_s=runtime,
        env_steps=int(lab.env_steps),
        stop_reason=trace.stop_reason or ("success" if lab.success else "done"),
        agent_settings=dict(trace.agent_settings),
        reeval=trace.reeval,
        reeval_graph=trace.reeval_graph,
    )


play_episode = sync_twin(aplay_episode)


def excerpt(text: str, limit: int = OBSERVATION_EXCERPT) -> str:
    """The first ``limit`` characters of an environment reply, marked when cut."""
    return text if len(text) <= limit else text[:limit] + " …"


def panel_text(panel: Mapping[str, Any]) -> str:
    """A compact rendering of a typed panel for step records."""
    return ", ".join(f"{k}={v}" for k, v in panel.items())


__all__: Sequence[str] = [
    "SCHEMA_VERSION",
    "CausaLabRecord",
    "CausaLabScientist",
    "EpisodeTrace",
    "StepRecord",
    "aplay_episode",
    "excerpt",
    "hypothesis_to_dict",
    "panel_text",
    "play_episode",
]
