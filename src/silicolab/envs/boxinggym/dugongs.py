"""Dugongs: the length of a sea cow as a saturating function of its age (BoxingGym §7).

Hidden model (posteriordb "dugongs"): ``α ~ N(2, 0.2²)``, ``β ~ N(1.5, 0.5²)``,
``λ ~ N(0.4, 0.5²)``; the mean length at age ``x ∈ [0, 5]`` is ``m(x) = α − β |λ|^x`` and the
environment returns ``y = |N(m(x), 0.25²)|`` (the absolute value of the draw, as upstream).

Likelihood (fixed mode): the *folded* normal density of ``y``,
``φ((y − m)/σ)/σ + φ((y + m)/σ)/σ`` -- the model that actually generated the data.

Posterior (``posterior_sample``): adaptive importance sampling
(:func:`adaptive_importance`). Because the likelihood depends on λ only through ``ρ = |λ|``,
we sample ``(α, β, ρ)`` -- whose posterior is unimodal in practice -- and then the sign of λ
exactly from its conditional ``P(λ = ρ | ρ) ∝ φ_prior(ρ)``. Round 0 proposes from the prior;
while the effective sample size (ESS) of the weights is below target, the next round
proposes from a mixture of 90 % multivariate-t (5 d.o.f., moments of the current weighted
sample, covariance ×2) and 10 % prior (defensive), with exact weights prior × likelihood /
proposal; the final round is self-normalised and resampled. ``exact_eig`` is ``None``.

Fidelity: ``faithful`` conditions the posterior on a Normal likelihood *without* the fold
(as the published PyMC model) and uses ``log(pdf + 0.001)`` in the NMC
(:meth:`Dugongs.faithful_log_likelihood`); the fixed mode uses the folded normal everywhere.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from scipy import special, stats

from silicolab.envs.boxinggym import parsing
from silicolab.envs.boxinggym.base import (
    BoxingEnv,
    InvalidDesign,
    Question,
    SquaredErrorGoal,
    Theta,
    systematic_resample,
)

NOISE = 0.25
X_LOW, X_HIGH = 0.0, 5.0
_LOG_2PI_HALF = 0.5 * np.log(2 * np.pi)


def adaptive_importance(
    log_prior: Callable[[np.ndarray], np.ndarray],
    log_lik: Callable[[np.ndarray], np.ndarray],
    prior_draw: Callable[[int, np.random.Generator], np.ndarray],
    rng: np.random.Generator,
    *,
    n_draws: int = 40_000,
    target_ess: float = 3_000.0,
    rounds: int = 6,
) -> tuple[np.ndarray, np.ndarray, float]:
    """Draws ``(S, d)``, their normalised weights and ESS for ``prior × likelihood``.

    Round 0 proposes from the prior; each further round (while ESS < ``target_ess``) proposes
    from ``0.9 · t5(mean, 2·cov) + 0.1 · prior`` fitted to the previous weighted sample. Weights
    are exact (target / proposal density), so every round is a consistent estimator; the last
    one is returned. ``log_prior`` must be ``-inf`` outside the support.
    """
    x = prior_draw(n_draws, rng)
    log_w = log_lik(x)
    w, ess = _normalise(log_w)
    for _ in range(rounds):
        if ess >= target_ess:
            break
        mean = w @ x
        cov = np.atleast_2d(np.cov(x, rowvar=False, aweights=w)) if ess > 1.5 else None
        if cov is None or not np.all(np.isfinite(cov)):
            cov = np.atleast_2d(np.cov(x, rowvar=False)) / 4.0
        cov = 2.0 * cov + 1e-9 * np.eye(x.shape[1])
        t = stats.multivariate_t(loc=mean, shape=cov, df=5)
        n_t = int(0.9 * n_draws)
        x = np.concatenate(
            [
                np.atleast_2d(t.rvs(size=n_t, random_state=rng)).reshape(n_t, -1),
                prior_draw(n_draws - n_t, rng),
            ]
        )
        lp = log_prior(x)
        log_q = np.logaddexp(np.log(0.9) + t.logpdf(x), np.log(0.1) + lp)
        with np.errstate(invalid="ignore"):
            log_w = np.where(np.isfinite(lp), lp + log_lik(x) - log_q, -np.inf)
        w, ess = _normalise(log_w)
    return x, w, ess


def _normalise(log_w: np.ndarray) -> tuple[np.ndarray, float]:
    finite = np.isfinite(log_w)
    if not finite.any():
        raise FloatingPointError("every importance weight is zero: the data are impossible")
    w = np.where(finite, np.exp(log_w - log_w[finite].max()), 0.0)
    w /= w.sum()
    return w, float(1.0 / np.sum(w**2))


def mean_length(alpha: Any, beta: Any, lam: Any, x: Any) -> np.ndarray:
    """``m(x) = α − β |λ|^x`` (broadcasting)."""
    return np.asarray(alpha) - np.asarray(beta) * np.abs(np.asarray(lam)) ** np.asarray(x)


def folded_normal_logpdf(y: Any, m: Any, sigma: float = NOISE) -> np.ndarray:
    """``log(φ((y − m)/σ)/σ + φ((y + m)/σ)/σ)`` for ``y ≥ 0`` (``-inf`` for ``y < 0``)."""
    y = np.asarray(y, dtype=float)
    a = -0.5 * ((y - m) / sigma) ** 2
    b = -0.5 * ((y + m) / sigma) ** 2
    out = np.logaddexp(a, b) - np.log(sigma) - _LOG_2PI_HALF
    return np.where(y >= 0, out, -np.inf)


#: ``log1p(exp(-u)) < 4.3e-18`` beyond this: the fold term is dropped (a relative change of
#: the density below 1e-17, invisible in double precision).
_FOLD_CUTOFF = 40.0


def cross_folded_logpdf(y: np.ndarray, m: np.ndarray, sigma: float = NOISE) -> np.ndarray:
    """``out[i, j] = folded_normal_logpdf(y[i], m[j])`` for every pair, shape ``(len(y), len(m))``.

    For ``y >= 0``: ``log(φ((y - m)/σ) + φ((y + m)/σ)) - log σ = -(y - |m|)²/2σ² +
    log1p(exp(-2 y |m| / σ²)) - log σ - log √(2π)``. The Gaussian part takes three passes over
    the matrix; the fold term is computed only for the columns where ``2 y |m| / σ²`` can fall
    below :data:`_FOLD_CUTOFF` for some row (small lengths), elsewhere it is below 4.3e-18.
    """
    y = np.asarray(y, dtype=float).reshape(-1)
    size = np.abs(np.asarray(m, dtype=float).reshape(-1))
    scale = 1.0 / (np.sqrt(2.0) * sigma)
    out = np.subtract.outer(y * scale, size * scale)
    np.square(out, out=out)
    np.subtract(-(np.log(sigma) + _LOG_2PI_HALF), out, out=out)
    y_min = float(y.min()) if len(y) else 0.0
    rate = 2.0 / sigma**2
    if y_min > 0:
        cols = np.flatnonzero(size < _FOLD_CUTOFF / (rate * y_min))
    else:
        cols = np.arange(len(size))
    if len(cols):
        full = len(cols) > 0.5 * len(size)
        fold = np.multiply.outer(-rate * y, size if full else size[cols])
        np.clip(fold, -_FOLD_CUTOFF, 0.0, out=fold)  # in place throughout: no temporaries
        np.exp(fold, out=fold)
        np.log1p(fold, out=fold)
        if full:
            np.add(out, fold, out=out)
        else:
            out[:, cols] += fold
    if y_min < 0:
        out[y < 0] = -np.inf
    return out


def normal_logpdf(y: Any, m: Any, sigma: float = NOISE) -> np.ndarray:
    """Gaussian log density (the unfolded model the published PyMC code used)."""
    y = np.asarray(y, dtype=float)
    return -0.5 * ((y - m) / sigma) ** 2 - np.log(sigma) - _LOG_2PI_HALF


def folded_normal_mean(m: Any, sigma: float = NOISE) -> np.ndarray:
    """``E|N(m, σ²)| = σ √(2/π) exp(−m²/2σ²) + m (1 − 2Φ(−m/σ))``."""
    m = np.asarray(m, dtype=float)
    return sigma * np.sqrt(2 / np.pi) * np.exp(-0.5 * (m / sigma) ** 2) + m * (
        1 - 2 * special.ndtr(-m / sigma)
    )


class Dugongs(BoxingEnv):
    """The dugongs growth-curve environment (goal ``direct``)."""

    name = "dugongs"
    goals = ("direct",)
    goal_classes = ("LengthGoal",)

    def __init__(
        self,
        *,
        alpha_0: float = 2.0,
        beta_0: float = 1.5,
        lambda_0: float = 0.4,
        **kwargs: Any,
    ) -> None:
        self.prior_mean = np.array([float(alpha_0), float(beta_0), float(lambda_0)])
        self.prior_sd = np.array([0.2, 0.5, 0.5])
        super().__init__(**kwargs)

    def params(self) -> dict[str, Any]:
        """The configuration constants."""
        a, b, lam = self.prior_mean
        return {"alpha_0": a, "beta_0": b, "lambda_0": lam, "sigma": NOISE}

    # text interface ---------------------------------------------------------------------------
    def validate(self, design_text: str) -> float:
        """An age in [0, 5]; fixed mode also accepts ``[2]`` and a trailing ``(comment)``."""
        x = parsing.design_float(design_text, self.fidelity, "Input must be a float.")
        if x < X_LOW or x > X_HIGH:
            raise InvalidDesign("Input must be between 0 and 5.")
        return x

    def sample_design(self, rng: np.random.Generator) -> float:
        """The published random design, ``U(0, 5)``."""
        return float(rng.uniform(X_LOW, X_HIGH))

    def format_design(self, design: Any) -> str:
        """The age as text."""
        return parsing.format_number(float(design), 4)

    def format_outcome(self, y: Any) -> str:
        """The length as text (upstream returned the raw float)."""
        return str(float(y))

    # Bayesian model ---------------------------------------------------------------------------
    def prior_sample(self, n: int, rng: np.random.Generator) -> Theta:
        """Exact prior draws."""
        draws = self.prior_mean + self.prior_sd * rng.standard_normal((n, 3))
        return {"alpha": draws[:, 0], "beta": draws[:, 1], "lam": draws[:, 2]}

    def mean(self, theta: Theta, x: Any) -> np.ndarray:
        """``m(x)`` per sample."""
        return mean_length(theta["alpha"], theta["beta"], theta["lam"], float(x))

    def simulate(self, theta: Theta, design: Any, rng: np.random.Generator) -> np.ndarray:
        """``|N(m(x), 0.25²)|`` per sample."""
        m = self.mean(theta, design)
        return np.abs(m + NOISE * rng.standard_normal(m.shape))

    def log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """Folded-normal (fixed) or normal (faithful, the published model) log density."""
        m = self.mean(theta, design)
        if self.fidelity == "faithful":
            return normal_logpdf(y, m)
        return folded_normal_logpdf(y, m)

    def cross_log_likelihood(self, y: np.ndarray, theta: Theta, design: Any) -> np.ndarray:
        """``out[n, m] = log p(y[n] | θ[m])`` by broadcasting (:func:`cross_folded_logpdf`, or
        the plain normal in faithful mode)."""
        m = self.mean(theta, design)
        y = np.asarray(y, dtype=float).reshape(-1)
        if self.fidelity == "faithful":
            return normal_logpdf(y[:, None], m[None, :])
        return cross_folded_logpdf(y, m)

    def faithful_log_likelihood(
        self, y: np.ndarray, theta: Theta, design: Any, *, inner: bool
    ) -> np.ndarray:
        """The published NMC term ``log(N(y; m, σ) + 0.001)`` (outer and inner alike)."""
        return np.log(np.exp(normal_logpdf(y, self.mean(theta, design))) + 0.001)

    def _log_prior_rho(self, z: np.ndarray) -> np.ndarray:
        """Log prior density of ``(α, β, ρ = |λ|)`` rows (``-inf`` for ``ρ < 0``)."""
        mu, sd = self.prior_mean, self.prior_sd
        lp = stats.norm.logpdf(z[:, :2], mu[:2], sd[:2]).sum(axis=1)
        with np.errstate(divide="ignore"):
            rho = np.logaddexp(
                stats.norm.logpdf(z[:, 2], mu[2], sd[2]), stats.norm.logpdf(-z[:, 2], mu[2], sd[2])
            )
        return np.where(z[:, 2] >= 0, lp + rho, -np.inf)

    def sample_posterior(
        self, n: int, rng: np.random.Generator, data: Sequence[tuple[Any, Any]]
    ) -> Theta:
        """Exact prior draws without data, else adaptive importance sampling (module doc)."""
        x = np.array([float(d) for d, _ in data])
        y = np.array([float(v) for _, v in data])
        density = normal_logpdf if self.fidelity == "faithful" else folded_normal_logpdf

        def log_lik(z: np.ndarray) -> np.ndarray:
            with np.errstate(invalid="ignore"):
                m = z[:, :1] - z[:, 1:2] * np.abs(z[:, 2:3]) ** x[None, :]
            return np.nan_to_num(density(y[None, :], m).sum(axis=1), nan=-np.inf)

        def prior_draw(k: int, g: np.random.Generator) -> np.ndarray:
            draws = self.prior_mean + self.prior_sd * g.standard_normal((k, 3))
            draws[:, 2] = np.abs(draws[:, 2])
            return draws

        z, w, _ = adaptive_importance(self._log_prior_rho, log_lik, prior_draw, rng)
        z = z[systematic_resample(w, n, rng)]
        mu, sd = self.prior_mean[2], self.prior_sd[2]
        p_plus = special.expit(
            stats.norm.logpdf(z[:, 2], mu, sd) - stats.norm.logpdf(-z[:, 2], mu, sd)
        )
        sign = np.where(rng.uniform(size=n) < p_plus, 1.0, -1.0)
        return {"alpha": z[:, 0], "beta": z[:, 1], "lam": sign * z[:, 2]}


class LengthGoal(SquaredErrorGoal):
    """Predict the (noisy) length at an age; metric: squared error."""

    name = "direct"
    norm_mu = 0.9058681693402041
    norm_sigma = 9.234192516908691
    env: Dugongs
    last_number_fallback = ("fixed", "faithful")

    task_texts = (
        "Your goal is to predict the length of a dugong at a given age.",
        "Your goal is to predict the float response to a given float input.",
    )

    def system_message(self, include_prior: bool) -> str:
        """The scientist's prompt."""
        if include_prior:
            intro = (
                "Sea cows (dugongs) are different lengths at different ages. "
                f"{self.task_text(True)}\nYou observe by giving a single age, a real number "
                "between 0 and 5, and the environment returns the length of a dugong of that age."
            )
        else:
            intro = (
                f"You are observing a float response to a float input. {self.task_text(False)}\n"
                "You observe by giving a single real input between 0 and 5."
            )
        return self.scientist_prompt(intro, example="2")

    def questions(self, n: int, rng: np.random.Generator) -> list[Question]:
        """Ages ``4·Beta(2, 5)`` (rounded to 3 decimals in fixed mode, so the text shows the
        age asked about); the truth is a fresh noisy length from the true θ."""
        out: list[Question] = []
        for _ in range(n):
            age = float(4.0 * rng.beta(2.0, 5.0))
            if self.env.fidelity == "fixed":
                age = round(age, 3)
            truth = float(self.env.simulate(self.env.theta, age, rng)[0])
            if self.env.include_prior:
                text = f"Predict the length of a dugong at age {age}. Answer with a single float."
            else:
                text = f"Predict the float response to the input {age}. Answer with a float."
            out.append(Question(text, truth, age))
        return out

    def bayes_answer(self, question: Question, theta: Theta, rng: np.random.Generator) -> float:
        """The posterior-predictive mean length, ``E|N(m, σ²)|`` averaged over samples."""
        return float(folded_normal_mean(self.env.mean(theta, question.point)).mean())

    def prior_mean_answer(self, question: Question) -> float:
        """The prior-predictive mean length at the question's age (Monte Carlo, fixed seed)."""
        theta = self.env.prior_sample(100_000, np.random.default_rng(0))
        return self.bayes_answer(question, theta, np.random.default_rng(0))


#: The registry's factory (``prior`` is ``include_prior``; other keywords go to the class).
make_dugongs = Dugongs.factory
