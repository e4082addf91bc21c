"""A scripted "world" for offline studies: subjects whose answers follow a hidden SCM.

This is a test double, not a language model. Plugged into the ``scripted`` backend it
plays every subject and the coordinator of a study:

* a subject's statement states the attributes in its own prompt (its treatment values);
* the coordinator lets the conversation end once every agent has spoken ``rounds`` times;
* a survey answer about the outcome is computed from the treatment values found in the
  transcript (a cause the experiment does not vary stays at its first value) through
  the hidden linear SCM ``y = intercept + sum(effect * x) + noise``
  (noise seeded by the treatment values, so answers do not depend on call order); a
  binary outcome is drawn with that probability (a linear probability model).

Because the truth is known, a study run on this world must recover ``effects`` within
the fitted confidence intervals: the end-to-end check of the pipeline's data handling.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Callable, Mapping
from typing import Any

from silicolab.core.seeding import rng
from silicolab.llm.types import Request
from silicolab.studies.hypothesis import Hypothesis

_LINE = re.compile(r"^\d+\. ([^:\n]+): (.*)$", re.MULTILINE)
_OPTIONS = re.compile(r"^(\d+)\. (.+)$", re.MULTILINE)


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


class HiddenWorld:
    """The reply function of the world (see the module docstring); call it with a request."""

    def __init__(
        self,
        hypothesis: Hypothesis,
        effects: Mapping[str, float],
        *,
        intercept: float = 0.0,
        noise_sd: float = 1.0,
        seed: int = 0,
        rounds: int = 1,
    ) -> None:
        unknown = set(effects) - {v.name for v in hypothesis.treatments}
        if unknown:
            raise ValueError(f"effects name unknown causes {sorted(unknown)}")
        self.hypothesis = hypothesis
        self.effects = dict(effects)
        self.intercept = intercept
        self.noise_sd = noise_sd
        self.seed = seed
        self.rounds = rounds

    def __repr__(self) -> str:
        # The scripted backend keys its cache on this text: it must name everything that
        # changes an answer, and nothing that changes between processes (no memory address).
        return (
            f"HiddenWorld({_digest(self.hypothesis)}, effects={sorted(self.effects.items())}, "
            f"intercept={self.intercept!r}, noise_sd={self.noise_sd!r}, seed={self.seed}, "
            f"rounds={self.rounds})"
        )

    def __call__(self, request: Request) -> str:
        user = _text(request, "user")
        if "Survey question:" in user:
            return self._survey(user)
        if "Options:\n" in user:
            return self._choose(user)
        if "Write what you say next" in user:
            pairs = _attributes(_text(request, "system"))
            said = "; ".join(f"{name}: {value}" for name, value in pairs)
            return f"Hello. {said}." if said else "Hello, let us begin."
        return "OK"

    def _choose(self, user: str) -> str:
        options = dict(_OPTIONS.findall(user.split("Options:\n", 1)[1]))
        by_text = {text.strip(): int(number) for number, text in options.items()}
        said = [m.group(1) for m in _LINE.finditer(user)]
        spoken = set(said)
        everyone = all(said.count(a.name) >= self.rounds for a in self.hypothesis.agents)
        if "stop" in by_text and "continue" in by_text:
            return json.dumps({"choice": by_text["stop" if everyone else "continue"]})
        if everyone and "STOP" in by_text:
            return json.dumps({"choice": by_text["STOP"]})
        fresh = [n for t, n in by_text.items() if t not in spoken and t != "STOP"]
        return json.dumps({"choice": (fresh or list(by_text.values()))[0]})

    def treatments_in(self, transcript: str) -> dict[str, str]:
        """The treatment values stated in ``transcript``, by cause name."""
        found: dict[str, str] = {}
        lines = _LINE.findall(transcript)
        for v in self.hypothesis.treatments:
            for speaker, text in lines:
                if v.scope == "individual" and speaker.strip() != v.agent:
                    continue
                match = re.search(re.escape(v.attribute) + r": ([^;]+?)(?:;|\.$|$)", text)
                if match:
                    found[v.name] = match.group(1).strip()
                    break
        return found

    def outcome(self, treatments: Mapping[str, str]) -> float:
        """The hidden SCM's outcome for these treatment values (with its seeded noise)."""
        key = json.dumps(treatments, sort_keys=True)
        noise = rng(self.seed, "world", key).normal(0.0, self.noise_sd)
        y = self.intercept + noise
        for v in self.hypothesis.treatments:
            if v.name in self.effects:
                y += self.effects[v.name] * float(v.numeric(treatments[v.name]))
        return y

    def _survey(self, user: str) -> str:
        found = self.treatments_in(user)
        if not found:
            return "NA, nothing in the conversation tells me."
        # a cause this experiment does not vary stays at its first (baseline) value
        treatments = {v.name: found.get(v.name, v.values[0]) for v in self.hypothesis.treatments}
        outcome = self.hypothesis.outcome
        y = self.outcome(treatments)
        if outcome.type == "binary":
            key = json.dumps(treatments, sort_keys=True)
            yes = rng(self.seed, "draw", key).random() < min(max(y, 0.0), 1.0)
            return f"{outcome.levels[int(yes)]}. That is how it went."
        if outcome.type == "count":
            return f"{max(round(y), 0)}. That is how it went."
        return f"{y:.6f}. That is how it went."


__all__ = ["HiddenWorld", "stable_identity"]
