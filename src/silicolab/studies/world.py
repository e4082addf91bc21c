"""A scripted "world" for offline studies: subjects whose answers follow a hidden SCM.

This is a test double, not a language model. Plugged into the ``scripted`` backend it
plays every subject and the coordinator of a study:

* a subject's statement states the attributes in its own prompt (its treatment values);
* the coordinator lets the conversation end once every agent has spoken ``rounds`` times;
* a survey answer about the outcome is drawn from the hidden SCM, whose expected outcome
  is linear in the treatment values found in the transcript,
  ``E[y] = intercept + sum(effect * x)`` with ``x`` each cause's numeric coding (the one
  the fit uses); a cause the experiment does not vary stays at its first value. The draw
  matches the outcome's type, so that the expected answer *is* that linear function and
  never needs clipping: a binary outcome is "yes" with probability ``E[y]`` (a linear
  probability model), an ordinal one is level ``1 + Binomial(k - 1, (E[y] - 1) / (k - 1))``
  of its ``k`` levels, a count is ``Poisson(E[y])`` and a continuous one
  ``E[y] + Normal(0, noise_sd)``. The world refuses effects that would take ``E[y]``
  outside the outcome's range anywhere in the full factorial design (a probability
  outside (0, 1), a score outside 1..k, a negative count).

Draws are seeded by the world's seed, the treatment values and the request's sample
index (which carries the condition and replicate), so answers do not depend on call order
and replicates of a condition are independent. Agents may speak under any names: the
"Participants:" line every prompt starts with maps them to the hypothesis' agents, in
order.

Because the truth is known (:meth:`HiddenWorld.truth`, in the units the fit estimates), a
study run on this world must recover it within the fitted confidence intervals: the
end-to-end check of the pipeline's data handling.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng
from silicolab.llm.types import Request
from silicolab.studies.hypothesis import Hypothesis, StudyVariable

_LINE = re.compile(r"^\d+\. ([^:\n]+): (.*)$", re.MULTILINE)
_OPTIONS = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)
_PARTICIPANTS = re.compile(r"^Participants: (.*)\.$", re.MULTILINE)
_PARTICIPANT = re.compile(r"\s*(.+?) \(the [^)]*\)\s*(?:,|$)")


def _attributes(system: str) -> list[tuple[str, str]]:
    """The ``name: value`` lines of the Attributes section of a subject's system prompt."""
    _, _, rest = system.partition("Attributes:\n")
    pairs = []
    for line in rest.split("\n\n")[0].splitlines():
        name, sep, value = line.partition(": ")
        if sep:
            pairs.append((name.strip(), value.strip()))
    return pairs


def _digest(hypothesis: Hypothesis) -> str:
    """A short stable digest of a hypothesis, for cache identities."""
    text = json.dumps(hypothesis.to_dict(), sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:12]


def _text(request: Request, role: str) -> str:
    return "\n".join(m["content"] for m in request.messages if m["role"] == role)


def stable_identity(fn: Callable[..., Any], *parts: Any) -> Callable[..., Any]:
    """Name the closure ``fn`` after its maker and ``parts`` (hypotheses by digest), so the
    scripted backend's cache tells apart closures made from different inputs."""
    shown = [_digest(p) if isinstance(p, Hypothesis) else repr(p) for p in parts]
    fn.__qualname__ = f"{fn.__qualname__}[{', '.join(shown)}]"
    return fn


def outcome_range(outcome: StudyVariable) -> tuple[float, float]:
    """The range the expected outcome must stay in (binary: the open interval (0, 1))."""
    if outcome.type == "binary":
        return 0.0, 1.0
    if outcome.type in ("ordinal", "nominal"):
        return 1.0, float(len(outcome.levels))
    if outcome.type == "count":
        return 0.0, float("inf")
    return float("-inf"), float("inf")


def coded_values(cause: StudyVariable) -> list[float]:
    """The numbers a cause's treatment values stand for in the fit (not for nominal)."""
    return [float(cause.numeric(value)) for value in cause.values]


def _scale(outcome: StudyVariable) -> str:
    """What the truth's numbers measure for ``outcome``."""
    if outcome.type == "binary":
        return f"probability of {outcome.levels[-1]!r}"
    if outcome.type in ("ordinal", "nominal"):
        return f"score 1..{len(outcome.levels)}"
    if outcome.type == "count":
        return "expected count"
    return outcome.units or "outcome units"


class HiddenWorld:
    """The reply function of the world (see the module docstring); call it with a request.

    ``effects`` are per unit of each cause's numeric coding, on the outcome's scale (for a
    binary outcome: the change in the probability of its second level). ``intercept=None``
    centres the expected outcome in its range over the design (0 for a continuous
    outcome; a count's lowest expected value becomes 1). ``noise_sd`` applies to a
    continuous outcome only: the other types draw their own noise."""

    def __init__(
        self,
        hypothesis: Hypothesis,
        effects: Mapping[str, float],
        *,
        intercept: float | None = None,
        noise_sd: float = 1.0,
        seed: int = 0,
        rounds: int = 1,
    ) -> None:
        causes = {v.name: v for v in hypothesis.treatments}
        unknown = set(effects) - set(causes)
        if unknown:
            raise InputError(f"effects name unknown causes {sorted(unknown)}")
        nominal = [n for n, e in effects.items() if e and causes[n].type == "nominal"]
        if nominal:
            raise InputError(
                f"the world has no single effect for the nominal causes {nominal}: give them "
                "no effect (they are dummy-coded in the fit)"
            )
        self.hypothesis = hypothesis
        self.effects = {n: float(e) for n, e in effects.items() if causes[n].type != "nominal"}
        self.noise_sd = noise_sd
        self.seed = seed
        self.rounds = rounds
        low, high = self._span(0.0)
        self.intercept = self._centred(low, high) if intercept is None else float(intercept)
        self._check_range()

    def __repr__(self) -> str:
        # The scripted backend keys its cache on this text: it must name everything that
        # changes an answer, and nothing that changes between processes (no memory address).
        # "/2": the answers' rules changed (typed draws, sample index), so the answers
        # cached for earlier worlds are not reused.
        return (
            f"HiddenWorld/2({_digest(self.hypothesis)}, effects={sorted(self.effects.items())}, "
            f"intercept={self.intercept!r}, noise_sd={self.noise_sd!r}, seed={self.seed}, "
            f"rounds={self.rounds})"
        )

    # -- the hidden SCM -------------------------------------------------------------------

    def _span(self, intercept: float) -> tuple[float, float]:
        """The lowest and highest expected outcome over the full factorial design."""
        low = high = intercept
        for v in self.hypothesis.treatments:
            effect = self.effects.get(v.name, 0.0)
            if effect:
                terms = [effect * x for x in coded_values(v)]
                low, high = low + min(terms), high + max(terms)
        return low, high

    def _centred(self, low: float, high: float) -> float:
        lo, hi = outcome_range(self.hypothesis.outcome)
        if self.hypothesis.outcome.type == "count":
            return 1.0 - low
        if lo == float("-inf"):
            return 0.0
        return (lo + hi) / 2 - (low + high) / 2

    def _check_range(self) -> None:
        outcome = self.hypothesis.outcome
        low, high = self._span(self.intercept)
        lo, hi = outcome_range(outcome)
        strict = outcome.type == "binary"
        inside = (lo < low and high < hi) if strict else (lo <= low and high <= hi)
        if not inside:
            what = _scale(outcome) if strict else f"the expected {outcome.name}"
            bounds = "strictly inside (0, 1)" if strict else f"within [{lo:g}, {hi:g}]"
            raise InputError(
                f"the world's effects take {what} from {low:.4g} to {high:.4g} over the "
                f"design; it must stay {bounds}: scale the effects down or change the "
                "intercept (silicolab.studies.offline.default_effects gives effects that fit)"
            )

    def expected(self, treatments: Mapping[str, str]) -> float:
        """The hidden SCM's expected outcome for these treatment values (no noise)."""
        y = self.intercept
        for v in self.hypothesis.treatments:
            if v.name in self.effects:
                y += self.effects[v.name] * float(v.numeric(treatments[v.name]))
        return y

    def truth(self, causes: Iterable[str] | None = None) -> dict[str, Any]:
        """What a linear fit of the outcome on ``causes`` (default: every cause) estimates:
        the intercept (the causes not varied sit at their first value) and the effect per
        unit of each cause's numeric coding, on the scale named by ``scale``."""
        outcome = self.hypothesis.outcome
        if outcome.type == "nominal":
            raise InputError("a nominal outcome has no single effect per cause to compare")
        varied = [v.name for v in self.hypothesis.treatments] if causes is None else list(causes)
        intercept = self.intercept
        for v in self.hypothesis.treatments:
            if v.name not in varied and v.name in self.effects:
                intercept += self.effects[v.name] * float(v.numeric(v.values[0]))
        return {
            "outcome": outcome.name,
            "scale": _scale(outcome),
            "intercept": intercept,
            "effects": {
                name: self.effects.get(name, 0.0)
                for name in varied
                if self.hypothesis.variable(name).type != "nominal"
            },
        }

    def answer(self, treatments: Mapping[str, str], sample: int = 0) -> str:
        """The survey answer about the outcome for these treatments; ``sample`` (the
        request's sample index) makes independent runs of one condition draw anew."""
        outcome = self.hypothesis.outcome
        mean = self.expected(treatments)
        draw = rng(self.seed, "world", json.dumps(dict(treatments), sort_keys=True), sample)
        if outcome.type == "binary":
            return f"{outcome.levels[int(draw.random() < mean)]}. That is how it went."
        if outcome.type in ("ordinal", "nominal"):
            k = len(outcome.levels)
            level = int(draw.binomial(k - 1, (mean - 1.0) / (k - 1)))
            return f"{outcome.levels[level]}. That is how it went."
        if outcome.type == "count":
            return f"{int(draw.poisson(mean))}. That is how it went."
        return f"{mean + draw.normal(0.0, self.noise_sd):.6f}. That is how it went."

    # -- the reply function ---------------------------------------------------------------

    def __call__(self, request: Request) -> str:
        user = _text(request, "user")
        if "Survey question:" in user:
            return self._survey(user, int(getattr(request, "sample_index", 0) or 0))
        if "Options:\n" in user:
            return self._choose(user)
        if "Write what you say next" in user:
            pairs = _attributes(_text(request, "system"))
            said = "; ".join(f"{name}: {value}" for name, value in pairs)
            return f"Hello. {said}." if said else "Hello, let us begin."
        return "OK"

    def agent_ids(self, text: str) -> dict[str, str]:
        """Speaker name -> agent id, from the prompt's "Participants:" line (which lists
        the hypothesis' agents in order); names not listed stand for themselves."""
        found = _PARTICIPANTS.search(text)
        if not found:
            return {}
        names = _PARTICIPANT.findall(found.group(1))
        agents = [a.name for a in self.hypothesis.agents]
        return dict(zip(names, agents, strict=True)) if len(names) == len(agents) else {}

    def _choose(self, user: str) -> str:
        options = dict(_OPTIONS.findall(user.split("Options:\n", 1)[1]))
        by_text = {text.strip(): int(number) for number, text in options.items()}
        ids = self.agent_ids(user)
        said = [m.group(1) for m in _LINE.finditer(user)]
        spoken = set(said)
        counts = [ids.get(name, name) for name in said]
        everyone = all(counts.count(a.name) >= self.rounds for a in self.hypothesis.agents)
        if "stop" in by_text and "continue" in by_text:
            return json.dumps({"choice": by_text["stop" if everyone else "continue"]})
        if everyone and "STOP" in by_text:
            return json.dumps({"choice": by_text["STOP"]})
        fresh = [n for t, n in by_text.items() if t not in spoken and t != "STOP"]
        return json.dumps({"choice": (fresh or list(by_text.values()))[0]})

    def treatments_in(self, transcript: str) -> dict[str, str]:
        """The treatment values stated in ``transcript``, by cause name (an individual
        cause only counts when its own agent states it)."""
        ids = self.agent_ids(transcript)
        found: dict[str, str] = {}
        lines = _LINE.findall(transcript)
        for v in self.hypothesis.treatments:
            for speaker, text in lines:
                agent = ids.get(speaker.strip(), speaker.strip())
                if v.scope == "individual" and agent != v.agent:
                    continue
                match = re.search(re.escape(v.attribute) + r": ([^;]+?)(?:;|\.$|$)", text)
                if match:
                    found[v.name] = match.group(1).strip()
                    break
        return found

    def _survey(self, user: str, sample: int) -> str:
        found = self.treatments_in(user)
        if not found:
            return "NA, nothing in the conversation tells me."
        # a cause this experiment does not vary stays at its first (baseline) value
        treatments = {v.name: found.get(v.name, v.values[0]) for v in self.hypothesis.treatments}
        return self.answer(treatments, sample)


__all__ = ["HiddenWorld", "coded_values", "outcome_range", "stable_identity"]
