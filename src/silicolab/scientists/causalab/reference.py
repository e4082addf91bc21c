"""The reference interventional scientist: recovers the crystal's SCM from its own
interventions, with no language model, through the lab's typed tools.

**Linear family.** One intervention per controllable property X moves X by a large step
``D`` (values are not clamped) and, the equations being linear, moves every other node Z by
``TE(X, Z) * D``: a row of total effects. Non-descendants do not move. Total effects are
sums over directed paths, so for each node Z with ancestors A (those with a non-zero total
effect on Z) the direct weights solve ``TE[A, A] @ w = TE[A, Z]`` (the matrix is unit
triangular in a topological order). With integer weights the total effects are integers,
so they are snapped to the nearest integer. A hidden disturbance H shifts the affected nodes
and, through them, their descendants by up to a few hundred times |H|; a step of 10 000
keeps that below a few hundredths of a total effect even for H = ±50, so the snap removes
it (with a step of 1000 it does not: see ``benchmarks/bench_causalab.py``). The base of
the frequency equation follows from any noise-free record, and the reactor shows every
non-target property, so ``f* = base + Σ w_p p``. It uses k−1 of its 4(k−1) interventions.

**Quadratic family.** Each property is set to three levels; for each node Z the smallest
set of its ancestors whose terms ``u p² + w p`` (plus one intercept per period between
interventions on Z) reproduce every observed value of Z is taken as its parent set.

**No budget** (Golden, observation-only): a least-squares fit of the frequency on all
properties over the records, weights snapped to integers.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import numpy as np

from silicolab.envs.causalab.dsl import Hypothesis
from silicolab.envs.causalab.suite import TARGET
from silicolab.scientists.causalab.episode import (
    EpisodeTrace,
    StepRecord,
    hypothesis_to_dict,
    panel_text,
)

if TYPE_CHECKING:
    from silicolab.envs.causalab.lab import CrystalLab

Effects = dict[str, dict[str, float]]
#: Levels of the quadratic design (the range the reactor's crystals are drawn from).
QUAD_LEVELS = (15.0, 50.0, 85.0)


def snap(value: float, tol: float = 0.2) -> float:
    """``value`` rounded to the nearest integer when within ``tol`` of one, else to 2 dp:
    linear CausaLab weights (and so total effects) are integers."""
    nearest = round(value)
    return float(nearest) if abs(value - nearest) <= tol else round(value, 2)


def direct_weights(effects: Effects, nodes: Sequence[str]) -> dict[tuple[str, str], float]:
    """Direct linear weights from a table of total effects ``effects[x][z]``.

    Only intervened properties (the keys of ``effects``) can be causes. For each node Z
    the ancestors A are the causes with a non-zero total effect on Z, and the direct
    weights solve ``TE[A, A] @ w = TE[A, Z]`` with ``TE[a, a] = 1``."""
    causes = list(effects)
    weights: dict[tuple[str, str], float] = {}
    for z in nodes:
        anc = [x for x in causes if x != z and abs(effects[x].get(z, 0.0)) > 1e-9]
        if not anc:
            continue
        m = np.array([[1.0 if a == b else effects[a].get(b, 0.0) for b in anc] for a in anc])
        t = np.array([effects[a][z] for a in anc])
        try:
            w = np.linalg.solve(m, t)
        except np.linalg.LinAlgError:
            w = np.linalg.lstsq(m, t, rcond=None)[0]
        for a, value in zip(anc, w, strict=True):
            value = snap(float(value))
            if abs(value) >= 0.05:
                weights[(a, z)] = value
    return weights


def _fmt(value: float) -> str:
    return repr(float(value)) if value != int(value) else str(int(value))


def linear_hypothesis(weights: Mapping[tuple[str, str], float], base: float | None) -> Hypothesis:
    """The DSL hypothesis of recovered linear weights (coefficients named ``c_<parent>``)."""
    parents = [(a, w) for (a, z), w in weights.items() if z == TARGET]
    terms = " + ".join(f"c_{a}*{a}" for a, _ in parents)
    coefficients: dict[str, float | None] = {"base": None if base is None else round(base, 2)}
    coefficients.update({f"c_{a}": w for a, w in parents})
    equation = f"{TARGET} = base" + (f" + {terms}" if terms else "")
    return Hypothesis(edges=tuple(weights), freq_equation=equation, coefficients=coefficients)


def quadratic_hypothesis(
    edges: Sequence[tuple[str, str]], terms: Mapping[str, tuple[float, float]], base: float
) -> Hypothesis:
    """The DSL hypothesis of a quadratic frequency equation (``c_P_1`` squared term,
    ``c_P_2`` linear term, spec §3.7.4)."""
    parts = " + ".join(f"c_{p}_1*{p}**2 + c_{p}_2*{p}" for p in terms)
    coefficients: dict[str, float | None] = {"base": round(base, 6)}
    for p, (u, w) in terms.items():
        coefficients[f"c_{p}_1"] = round(u, 6)
        coefficients[f"c_{p}_2"] = round(w, 6)
    equation = f"{TARGET} = base" + (f" + {parts}" if parts else "")
    return Hypothesis(edges=tuple(edges), freq_equation=equation, coefficients=coefficients)


def predict(h: Hypothesis, props: Mapping[str, float]) -> float | None:
    """The hypothesis' frequency for ``props`` (DSL evaluator, then our own as fallback)."""
    value = h.predict(props)
    return None if value is None else float(value)


def estimate_base(
    weights: Mapping[tuple[str, str], float], records: Sequence[Mapping[str, float]]
) -> float | None:
    """The frequency intercept, ``f - Σ w p``, as the median over noise-free records."""
    parents = {a: w for (a, z), w in weights.items() if z == TARGET}
    values = [
        float(r[TARGET]) - sum(w * float(r[a]) for a, w in parents.items())
        for r in records
        if TARGET in r and all(a in r for a in parents)
    ]
    return float(np.median(values)) if values else None


def fit_equation(
    rows: Sequence[Mapping[str, float]], z: str, periods: Sequence[int], candidates: Sequence[str]
) -> tuple[tuple[str, ...], dict[str, tuple[float, float]], np.ndarray] | None:
    """The smallest parent set of ``z`` among ``candidates`` whose quadratic terms fit.

    ``periods[i]`` names the intercept period of row i (a new one after each intervention
    on ``z``). Returns (parents, {parent: (u, w)}, intercepts) or None without data."""
    if not rows:
        return None
    labels = sorted(set(periods))
    y = np.array([float(r[z]) for r in rows])
    dummies = np.array([[1.0 if p == label else 0.0 for label in labels] for p in periods])
    best = None
    for size in range(len(candidates) + 1):
        for subset in itertools.combinations(candidates, size):
            cols = [dummies]
            for p in subset:
                x = np.array([float(r[p]) for r in rows])
                cols.append(np.column_stack([x**2, x]))
            design = np.column_stack(cols)
            if design.shape[0] <= design.shape[1] and size:
                continue
            scale = np.maximum(np.abs(design).max(axis=0), 1e-12)
            coef, *_ = np.linalg.lstsq(design / scale, y, rcond=None)
            coef = coef / scale
            resid = float(np.max(np.abs(design @ coef - y)))
            if np.linalg.matrix_rank(design) < design.shape[1]:
                continue
            found = (resid, subset, coef)
            if best is None or resid < best[0] - 1e-9:
                best = found
            if resid <= 0.03:
                return _unpack(found, len(labels))
    return None if best is None else _unpack(best, len(labels))


def _unpack(
    found: tuple[float, tuple[str, ...], np.ndarray], n_periods: int
) -> tuple[tuple[str, ...], dict[str, tuple[float, float]], np.ndarray]:
    _, subset, coef = found
    terms = {
        p: (float(coef[n_periods + 2 * i]), float(coef[n_periods + 2 * i + 1]))
        for i, p in enumerate(subset)
    }
    return subset, terms, coef[:n_periods]


class InterventionalScientist:
    """Recovers the SCM from its own interventions, then computes f* (module docstring).

    ``step`` is the size of each linear intervention; ``levels`` the settings of the
    quadratic design."""

    agent = "reference"
    model_label = ""
    verify = "none"

    def __init__(self, *, step: float = 10000.0, levels: Sequence[float] = QUAD_LEVELS):
        self.step = float(step)
        self.levels = tuple(float(v) for v in levels)

    async def arun(self, lab: CrystalLab, trace: EpisodeTrace) -> None:
        """Play one episode (synchronous work; the protocol is async)."""
        self.run(lab, trace)

    def run(self, lab: CrystalLab, trace: EpisodeTrace) -> None:
        """Experiment, recover the equations, open the reactor and submit."""
        names = list(lab.config.controllable)
        prior = [*trace.records]  # prior and Golden records: never disturbed
        panel = lab.observe()
        trace.note_panel(panel)
        clean = [*prior, panel]  # a hidden disturbance starts only with the first intervention
        if lab.config.family == "linear" and lab.budget_left >= len(names):
            hypothesis = self._linear(lab, trace, names, panel, clean)
        elif lab.config.family != "linear" and lab.budget_left >= len(names):
            hypothesis = self._quadratic(lab, trace, names, panel, prior)
        else:
            hypothesis = self._observational(names, trace.records)
        self._commit(lab, trace, hypothesis)

    def _step(
        self, lab: CrystalLab, trace: EpisodeTrace, prop: str, value: float, h: Hypothesis
    ) -> dict[str, float]:
        panel = lab.intervene(prop, value)
        trace.note_panel(panel)
        action = {"tool": "intervene", "prop": prop, "value": value}
        step = StepRecord(0, "manipulator", hypothesis_to_dict(h), action, panel_text(panel), 0)
        step.budget_used = int(lab.budget_used)
        trace.add_step(step, h)
        return panel

    def _linear(
        self,
        lab: CrystalLab,
        trace: EpisodeTrace,
        names: list[str],
        panel: dict[str, float],
        clean: list[dict[str, float]],
    ) -> Hypothesis:
        effects: Effects = {}
        nodes = [*names, TARGET]
        hypothesis = Hypothesis.EMPTY
        for x in names:
            before = panel
            value = round(float(before[x]) + self.step, 2)
            panel = self._step(lab, trace, x, value, hypothesis)
            delta = value - float(before[x])
            effects[x] = {
                z: snap((float(panel[z]) - float(before[z])) / delta) for z in nodes if z != x
            }
            weights = direct_weights(effects, nodes)
            hypothesis = linear_hypothesis(weights, estimate_base(weights, clean))
        trace.steps[-1].hypothesis = hypothesis_to_dict(hypothesis)
        trace.add_step(self._analysis_step(lab, hypothesis), hypothesis)
        return hypothesis

    def _quadratic(
        self,
        lab: CrystalLab,
        trace: EpisodeTrace,
        names: list[str],
        panel: dict[str, float],
        prior: list[dict[str, float]],
    ) -> Hypothesis:
        per_var = max(1, min(len(self.levels), lab.budget_left // len(names)))
        rows, epochs = [panel], [dict.fromkeys(names, 0)]
        descendants: dict[str, set[str]] = {x: set() for x in names}
        for x in names:
            for level in self.levels[:per_var]:
                value = level if abs(level - float(panel[x])) > 0.5 else level + 7.0
                before = panel
                panel = self._step(lab, trace, x, value, Hypothesis.EMPTY)
                moved = {z for z in panel if z != x and abs(panel[z] - before[z]) > 0.005}
                descendants[x] |= moved
                rows.append(panel)
                epochs.append({**epochs[-1], x: epochs[-1][x] + 1})
        edges: list[tuple[str, str]] = []
        freq_terms: dict[str, tuple[float, float]] = {}
        base = 0.0
        for z in [*names, TARGET]:
            candidates = [x for x in names if z in descendants[x]]
            if z == TARGET:  # the frequency's intercept is shared with the prior records
                z_rows, periods = [*rows, *prior], [0] * (len(rows) + len(prior))
            else:
                z_rows, periods = rows, [e[z] for e in epochs]
            fit = fit_equation(z_rows, z, periods, candidates)
            if fit is None:
                continue
            parents, terms, intercepts = fit
            edges += [(p, z) for p in parents]
            if z == TARGET:
                freq_terms, base = terms, float(intercepts[0])
        hypothesis = quadratic_hypothesis(edges, freq_terms, base)
        trace.add_step(self._analysis_step(lab, hypothesis), hypothesis)
        return hypothesis

    def _observational(self, names: list[str], records: list[dict[str, float]]) -> Hypothesis:
        rows = [r for r in records if TARGET in r and all(n in r for n in names)]
        if not rows:
            return Hypothesis.EMPTY
        design = np.column_stack([np.ones(len(rows))] + [[r[n] for r in rows] for n in names])
        coef = np.linalg.lstsq(design, np.array([r[TARGET] for r in rows]), rcond=None)[0]
        weights = {(n, TARGET): snap(float(c)) for n, c in zip(names, coef[1:], strict=True)}
        weights = {e: w for e, w in weights.items() if abs(w) >= 0.05}
        return linear_hypothesis(weights, estimate_base(weights, rows))

    def _analysis_step(self, lab: CrystalLab, h: Hypothesis) -> StepRecord:
        action = {"tool": "analyse"}
        return StepRecord(0, str(lab.phase), hypothesis_to_dict(h), action, "", lab.budget_used)

    def _commit(self, lab: CrystalLab, trace: EpisodeTrace, h: Hypothesis) -> None:
        props = lab.open_reactor()
        opened = StepRecord(
            0, "manipulator", hypothesis_to_dict(h), {"tool": "open_reactor"}, "", 0
        )
        opened.observation, opened.budget_used = panel_text(props), int(lab.budget_used)
        trace.add_step(opened, h)
        guess = predict(h, props)
        if guess is None:
            guess = 0.0
        result = lab.submit(guess)
        trace.submissions.append(float(result.frequency))
        action: dict[str, Any] = {"tool": "submit", "frequency": guess}
        step = StepRecord(0, "reactor", hypothesis_to_dict(h), action, result.message, 0)
        step.budget_used = int(lab.budget_used)
        trace.add_step(step, h)
        trace.stop_reason = "success" if lab.success else "submitted"
