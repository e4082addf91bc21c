"""The random designer: designs from the environment's random-design distribution.

It draws each design with ``env.sample_design`` (the distribution EI regret compares
against) and, by default, answers like the reference scientist, from the exact posterior
given the data it gathered. It therefore differs from :class:`BayesianScientist` only in
how it chooses designs, which is what a design-quality baseline should isolate.
``answer="prior"`` answers with the goal's prior-mean baseline instead.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Literal

from silicolab.core.errors import InputError
from silicolab.scientists.boxinggym.llm import Answer, Proposal
from silicolab.scientists.boxinggym.reference import PosteriorAnswerer

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question


class RandomDesigner(PosteriorAnswerer):
    """Random designs; posterior (default) or prior-mean answers (module docstring)."""

    agent = "random"

    def __init__(
        self,
        *,
        answer: Literal["posterior", "prior"] = "posterior",
        n_posterior: int = 2000,
        seed: int | None = 0,
    ):
        if answer not in ("posterior", "prior"):
            raise InputError(f"answer must be 'posterior' or 'prior', got {answer!r}")
        super().__init__(n_posterior=n_posterior, seed=seed)
        self.answer_mode = answer

    async def astart(self, env: BoxingEnv) -> None:
        """Begin an episode on ``env``."""
        self._start(env, "random")

    async def apropose(self, feedback: str | None, *, retry: bool = False) -> Proposal:
        """One design drawn from the environment's random-design distribution."""
        return Proposal(self.env.format_design(self.env.sample_design(self._rng)))

    async def aanswer(self, question: Question, prefix: str) -> Answer:
        """The posterior Bayes answer, or the prior-mean baseline with ``answer="prior"``."""
        if self.answer_mode == "prior":
            prediction = self.env.goal.prior_mean_answer(question)
            return Answer(prediction, text=str(prediction))
        return await super().aanswer(question, prefix)
