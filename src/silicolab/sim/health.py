"""How well an episode's agents behaved, as :class:`silicolab.runs.UnitHealth` per entity.

Two kinds of step can be checked without knowing what an agent meant: a survey answer
(it parses into a typed value, or it stayed unreadable even for the parser — a parse
failure) and an attempted action a game master resolved (it happened, or it was rejected
as impossible — an invalid action). Each entity is one unit; free-text statements are not
counted, since nothing can tell a good one from a bad one. An entity whose every checked
step failed (say, a model that echoes its prompt and never gives a readable answer) makes
the run degraded.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from silicolab.runs import RunHealth, UnitHealth


def episode_health(
    log: Iterable[Mapping[str, Any]], survey: Iterable[Mapping[str, Any]] = ()
) -> RunHealth:
    """The health of one episode from its log (``EpisodeLog.to_list()``) and its survey
    answers (``SurveyAnswer.to_dict()`` each)."""
    units: dict[str, UnitHealth] = {}

    def unit(name: str) -> UnitHealth:
        return units.setdefault(name, UnitHealth(unit=name))

    for step in log:
        if step.get("kind") in ("action", "rejected"):
            health = unit(str(step["who"]))
            health.steps += 1
            if step["kind"] == "rejected":
                health.note_failure("invalid_actions", str(step.get("output", "")))
    for answer in survey:
        health = unit(str(answer["addressee"]))
        health.steps += 1
        if answer.get("parse_failed"):
            health.note_failure("parse_failures", str(answer.get("raw", "")))
    return RunHealth.of(units.values())


__all__ = ["episode_health"]
