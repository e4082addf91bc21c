"""What the two program-guided scientists share: the record of every fit of an episode,
and answers read off a fitted program's predictive means.

:class:`~.statistician.ApprenticeScientist` (an LLM's programs) and
:class:`~.reference_statistician.ReferenceStatistician` (the environment's own model
family) both answer a checkpoint's questions with one fit, then post-process each
predictive mean the published way (:func:`.frames.to_answer`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from silicolab.scientists.boxinggym.apprentice import frames
from silicolab.scientists.boxinggym.llm import Answer

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question


def answers_from_means(
    env: BoxingEnv, means: Sequence[float | None] | None, n_questions: int
) -> list[Answer]:
    """One :class:`Answer` per question from the fit's predictive ``means`` (none when
    the fit failed: every question is then unanswered)."""
    values = list(means) if means else [None] * n_questions
    return [
        Answer(None, None) if m is None else Answer(frames.to_answer(env, m), f"{m:.6g}")
        for m in values
    ]


class ProgramAnswers:
    """Mixin: ``fits`` holds the episode's fits (each with ``to_dict``); one question is
    answered as a checkpoint of its own through ``aanswer_many``."""

    fits: list[Any]

    @property
    def programs(self) -> list[dict[str, Any]]:
        """Every fit of this episode (for the record)."""
        return [fit.to_dict() for fit in self.fits]

    async def aanswer_many(self, questions: list[Question], prefix: str) -> list[Answer]:
        raise NotImplementedError

    async def aanswer(self, question: Question, prefix: str) -> Answer:
        """One question (a fit of its own; prefer :meth:`aanswer_many`)."""
        return (await self.aanswer_many([question], prefix))[0]


__all__ = ["ProgramAnswers", "answers_from_means"]
