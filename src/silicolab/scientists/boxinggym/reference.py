"""The reference Bayesian scientist: greedy expected-information-gain designs, Bayes answers.

No language model. At each step it draws ``n_candidates`` designs from the environment's
random-design distribution (the same one EI regret compares against), estimates each one's
EIG under the exact posterior given the data so far (``eig.nmc_eig``) and proposes the best.
It answers every question with ``goal.bayes_answer`` over posterior samples
(``env.posterior_sample``): the answer minimising the goal's expected loss (posterior mean
for squared error, median for absolute error, majority vote for accuracy, …). It reads only
the data it has observed (``env.data``), never the true parameters. In the two environments
whose participants speak (emotion, moral machines) ``env.data`` holds the numeric response
behind the sentence, so this agent sees a little more than an LLM would; that is what makes
it a reference.

Its explanation for a novice is a summary of the posterior (mean ± sd of each parameter).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import numpy as np

from silicolab.core.seeding import rng as derive_rng
from silicolab.scientists.boxinggym.llm import Answer, Proposal, render, truncate_words

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question


def _fmt(value: float) -> str:
    return f"{value:.3g}"


def posterior_summary(theta: dict[str, np.ndarray], n_data: int, word_limit: int = 200) -> str:
    """A short text of each parameter's posterior mean ± sd (element-wise for arrays),
    cut to ``word_limit`` words."""
    lines = []
    for name, samples in theta.items():
        values = np.asarray(samples, dtype=float)
        if values.ndim == 0 or values.shape[0] == 0:
            continue
        mean, sd = values.mean(axis=0), values.std(axis=0)
        if mean.ndim == 0:
            lines.append(f"{name}: {_fmt(float(mean))} ± {_fmt(float(sd))}")
        else:
            flat = zip(mean.ravel(), sd.ravel(), strict=True)
            pairs = [f"{_fmt(m)} ± {_fmt(s)}" for m, s in flat]
            lines.append(f"{name} (shape {list(mean.shape)}): " + "; ".join(pairs))
    text = render("posterior_summary.j2", n_data=n_data, lines=lines)
    return truncate_words(text, word_limit)[0]


class PosteriorAnswerer:
    """Answers questions from posterior samples given the observed data (shared by the
    reference scientist and the random designer). Samples are cached per data state."""

    agent = "posterior"
    model_label = ""

    def __init__(self, *, n_posterior: int = 2000, seed: int | None = 0):
        self.n_posterior = n_posterior
        self.seed = seed
        self.env: Any = None
        self.usage: dict[str, int] = {}
        self._cache: tuple[int, dict[str, np.ndarray]] | None = None
        self.posterior_failures = 0
        self._rng = np.random.default_rng(0)

    def _start(self, env: BoxingEnv, role: str) -> None:
        self.env = env
        self._cache = None
        self.posterior_failures = 0
        self._rng = derive_rng(self.seed, "boxinggym", role, env.name, env.goal.name)

    def posterior(self) -> dict[str, np.ndarray]:
        """Posterior samples given ``env.data`` (the prior before any data).

        When the environment's sampler fails (faithful predator-prey after a trajectory
        diverged: no parameter reproduces the data), the last posterior that could be
        computed is kept and the failure counted in ``posterior_failures``."""
        n = len(self.env.data)
        if self._cache is None or self._cache[0] != n:
            try:
                theta = self.env.posterior_sample(self.n_posterior, self._rng, list(self.env.data))
            except (RuntimeError, ValueError, FloatingPointError):
                self.posterior_failures += 1
                if self._cache is None:
                    theta = self.env.prior_sample(self.n_posterior, self._rng)
                else:
                    theta = self._cache[1]
            self._cache = (n, theta)
        return self._cache[1]

    async def aanswer(self, question: Question, prefix: str) -> Answer:
        """The Bayes answer to ``question`` under the current posterior."""
        prediction = self.env.goal.bayes_answer(question, self.posterior(), self._rng)
        return Answer(prediction, text=str(prediction), raw="")

    async def aexplain(self, prompt: str, word_limit: int = 200) -> str:
        """A summary of the posterior for a novice (``prompt`` is not needed)."""
        return posterior_summary(self.posterior(), len(self.env.data), word_limit)


class BayesianScientist(PosteriorAnswerer):
    """Greedy-EIG designer answering from its posterior (module docstring).

    ``n_candidates`` random designs are scored per step; ``n_outer``/``n_inner`` and
    ``estimator`` go to ``eig.nmc_eig`` (None: the env's defaults; 500 × 500 by default
    here, which ranks candidates well since all candidates share their samples and noise,
    at a small fraction of the cost); ``n_posterior`` samples answer the questions."""

    agent = "reference"

    def __init__(
        self,
        *,
        n_candidates: int = 100,
        n_outer: int | None = 500,
        n_inner: int | None = 500,
        estimator: str | None = None,
        n_posterior: int = 2000,
        seed: int | None = 0,
    ):
        super().__init__(n_posterior=n_posterior, seed=seed)
        self.n_candidates = n_candidates
        self.n_outer, self.n_inner, self.estimator = n_outer, n_inner, estimator
        self.last_eig: float | None = None

    async def astart(self, env: BoxingEnv) -> None:
        """Begin an episode on ``env`` (fresh posterior cache and generator)."""
        self._start(env, "boed")

    async def apropose(self, feedback: str | None, *, retry: bool = False) -> Proposal:
        """The candidate design with the largest estimated EIG given the data so far."""
        from silicolab.envs.boxinggym.base import PosteriorUnavailable
        from silicolab.envs.boxinggym.eig import nmc_eig

        designs = [self.env.sample_design(self._rng) for _ in range(self.n_candidates)]
        if not getattr(self.env, "supports_eig", True):  # faithful predator-prey: no EIG
            self.last_eig = None
            return Proposal(self.env.format_design(designs[0]), raw="no EIG: random design")
        try:
            eig = nmc_eig(
                self.env,
                designs,
                data=list(self.env.data),
                n_outer=self.n_outer,
                n_inner=self.n_inner,
                estimator=self.estimator,  # type: ignore[arg-type]
                rng=self._rng,
            )
        except PosteriorUnavailable as err:  # e.g. faithful predator-prey after a blow-up
            self.posterior_failures += 1
            self.last_eig = None
            return Proposal(self.env.format_design(designs[0]), raw=f"random design: {err}")
        eig = np.asarray(eig, dtype=float)
        scores = np.where(np.isfinite(eig), eig, -np.inf)
        best = int(np.argmax(scores))
        self.last_eig = float(eig[best])
        return Proposal(self.env.format_design(designs[best]), raw=f"EIG estimate {eig[best]:.4g}")
