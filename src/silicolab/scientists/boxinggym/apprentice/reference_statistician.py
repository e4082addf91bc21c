"""The reference statistician: the environment's own model family, fitted like the
apprentice's programs, with no language model (an upper bound for the apprentice).

Designs come from the reference (greedy-EIG) scientist; every evaluation fits the true
model family of the environment -- its likelihood and priors, written here as PyMC
programs with the same ``build_model(data)`` contract -- through the same sandbox, sampler
and predictive-mean answers as :class:`~.statistician.ApprenticeScientist`. Columns are
read by position, so the programs serve the prior and the no-prior tables alike. Dugongs
uses a normal likelihood (the environment folds it at 0, which at lengths near 2 and noise
0.25 makes no difference); predator-prey and emotions are not covered (two and eight
outputs; the paper leaves them out too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError
from silicolab.scientists.boxinggym.apprentice.execute import FitSettings, ProgramRun, arun_program
from silicolab.scientists.boxinggym.apprentice.program_answers import (
    ProgramAnswers,
    answers_from_means,
)
from silicolab.scientists.boxinggym.apprentice.statistician import fit_job, problem
from silicolab.scientists.boxinggym.llm import Answer
from silicolab.scientists.boxinggym.reference import BayesianScientist

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question

_HEAD = """import numpy as np
import pymc as pm
import pytensor.tensor as pt

TARGET = "{target}"


def col(data, i):
    return data.iloc[:, i].to_numpy().astype(float)


def observed(data):
    return data[TARGET].to_numpy() if TARGET in data else None
"""

_BODIES = {
    "dugongs": """
def build_model(data):
    with pm.Model() as model:
        x = pm.Data("x0", col(data, 0))
        alpha = pm.Normal("alpha", 2.0, 0.2)
        beta = pm.Normal("beta", 1.5, 0.5)
        lam = pm.Normal("lam", 0.4, 0.5)
        pm.Normal("y_obs", alpha - beta * pt.abs(lam) ** x, 0.25, observed=observed(data),
                  shape=x.shape)
    return model
""",
    "peregrines": """
def build_model(data):
    with pm.Model() as model:
        t = pm.Data("x0", col(data, 0))
        a = pm.Normal("alpha", 4.5, 0.1)
        b1 = pm.Normal("beta1", 1.2, 0.1)
        b2 = pm.Normal("beta2", 0.07, 0.01)
        b3 = pm.Normal("beta3", -0.24, 0.05)
        rate = pt.exp(a + b1 * t + b2 * t**2 + b3 * t**3)
        pm.Poisson("y_obs", rate, observed=observed(data), shape=t.shape)
    return model
""",
    "death_process": """
def build_model(data):
    with pm.Model() as model:
        x = pm.Data("x0", col(data, 0))
        theta = pm.TruncatedNormal("theta", mu=1.0, sigma=1.0, lower=0.0, upper=2.0)
        pm.Binomial("y_obs", n=50, p=1 - pt.exp(-theta * x), observed=observed(data),
                    shape=x.shape)
    return model
""",
    "hyperbolic_temporal_discount": """
def build_model(data):
    with pm.Model() as model:
        ir = pm.Data("x0", col(data, 0))
        dr = pm.Data("x1", col(data, 1))
        days = pm.Data("x2", col(data, 2))
        log_k = pm.Normal("log_k", -4.25, 0.5)
        alpha = pm.HalfNormal("alpha", 2.0)
        v1 = dr / (1 + pt.exp(log_k) * days)
        z = (v1 - ir) / alpha
        p = 0.01 + 0.98 * 0.5 * (1 + pt.erf(z / np.sqrt(2)))
        pm.Bernoulli("y_obs", p=p, observed=observed(data), shape=ir.shape)
    return model
""",
    "irt": """
def build_model(data):
    with pm.Model() as model:
        s = pm.Data("x0", col(data, 0).astype("int64"))
        q = pm.Data("x1", col(data, 1).astype("int64"))
        ability = pm.Normal("ability", 0.0, 1.0, shape=6)
        difficulty = pm.Normal("difficulty", 0.0, 1.0, shape=6)
        discrimination = pm.Normal("discrimination", 0.0, 1.0, shape=6)
        logit = discrimination[q] * (ability[s] - difficulty[q])
        pm.Bernoulli("y_obs", logit_p=logit, observed=observed(data), shape=s.shape)
    return model
""",
    "survival": """
def build_model(data):
    with pm.Model() as model:
        m = pm.Data("x0", col(data, 0))
        t = pm.Data("x1", col(data, 1))
        lambda0 = pm.Gamma("lambda0", alpha=0.1, beta=0.1)
        beta = pm.HalfNormal("beta", 10.0)
        p = 1 - pt.exp(-t * lambda0 * pt.exp(beta * m))
        pm.Bernoulli("y_obs", p=pt.clip(p, 1e-9, 1 - 1e-9), observed=observed(data),
                     shape=t.shape)
    return model
""",
    "moral_machines": """
NAMES = ("b_count", "b_gender", "b_age", "b_social", "b_fitness", "b_species")
MEANS = (0.7, -0.3, 0.1, 0.1, 0.4, 0.6)


def build_model(data):
    with pm.Model() as model:
        eta = pm.Normal("intercept", 0.0, 0.3) + pm.Normal("b_group", 0.4, 0.1)
        for i, (name, mean) in enumerate(zip(NAMES, MEANS)):
            eta = eta + pm.Normal(name, mean, 0.1) * pm.Data(f"x{i}", col(data, i))
        iv = pm.Data("x6", col(data, 6))
        eta = eta + pm.Normal("b_intervention", -0.3, 0.1) * iv
        # choice is 1 when group 2 is saved: P = 1 - sigmoid(eta)
        pm.Bernoulli("y_obs", logit_p=-eta, observed=observed(data), shape=iv.shape)
    return model
""",
    "location_finding": """
def build_model(data):
    with pm.Model() as model:
        x1 = pm.Data("x0", col(data, 0))
        x2 = pm.Data("x1", col(data, 1))
        sources = pm.Normal("sources", 0.0, 1.0, shape=(3, 2))
        d2 = (x1[:, None] - sources[None, :, 0]) ** 2 + (x2[:, None] - sources[None, :, 1]) ** 2
        intensity = 0.1 + pt.sum(1.0 / (1e-4 + d2), axis=1)
        pm.Normal("y_obs", intensity, 0.5, observed=observed(data), shape=x1.shape)
    return model
""",
}

#: The environments the reference statistician covers (Table 2's eight).
ENVS = tuple(_BODIES)


def true_program(env: BoxingEnv) -> str:
    """The PyMC program of ``env``'s own model family (``build_model(data)`` contract)."""
    if env.name not in _BODIES:
        raise InputError(f"the reference statistician has no program for {env.name!r}")
    _, target = problem(env)
    return _HEAD.format(target=target) + _BODIES[env.name]


class ReferenceStatistician(ProgramAnswers, BayesianScientist):
    """Greedy-EIG designs; answers from the true model family fitted in the sandbox.

    ``settings`` configure the fits; other options go to :class:`BayesianScientist`.
    :attr:`fits` keeps every fit of the episode."""

    agent = "statistician"
    checkpoints = (0, 5, 10)

    def __init__(self, *, settings: FitSettings | None = None, **options: Any):
        super().__init__(**options)
        self.settings = settings or FitSettings()
        self.fits: list[ProgramRun] = []

    async def astart(self, env: BoxingEnv) -> None:
        """Begin an episode on ``env``."""
        true_program(env)
        await super().astart(env)
        self.fits = []

    async def aanswer_many(self, questions: list[Question], prefix: str) -> list[Answer]:
        """Fit the true model family to the data so far and answer with its predictive mean."""
        run = await arun_program(
            true_program(self.env), fit_job(self.env, list(questions), self.settings), self.settings
        )
        self.fits.append(run)
        return answers_from_means(self.env, run.predictions if run.ok else None, len(questions))
