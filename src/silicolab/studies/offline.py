"""An offline laboratory: every role of a study played by scripted test doubles.

The scientist rebuilds a known target hypothesis step by step (:mod:`.scripted`) and
answers the prediction steps it has no script for with schema-valid values drawn from a
seeded generator (so predictions run, and are as good as guesses); the subjects and the
coordinator are the hidden-SCM world (:mod:`.world`). With it the whole pipeline —
hypothesis, runs, survey, fit, predictions, follow-on — runs without a server, which is
what ``silicolab demo``, ``silicolab study run --subjects world`` and the end-to-end tests
use. Nothing here is a language model.

One builder serves them all: :func:`offline_study_models` (the models by role) over
:func:`offline_world` (the hidden SCM, whose :meth:`~.world.HiddenWorld.truth` is what the
fit should find), with :func:`default_effects` when no effects are given.

>>> from silicolab.studies import load_example
>>> world = offline_world(load_example("mug"))
>>> sorted(world.truth()["effects"])
['buyer_budget', 'seller_attachment', 'seller_min_price']
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.seeding import rng
from silicolab.llm import load_model
from silicolab.llm.backends.scripted import example_from_schema
from silicolab.llm.base import LanguageModel
from silicolab.llm.types import Request
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import StudyModels
from silicolab.studies.scripted import scripted_scientist, step_of
from silicolab.studies.world import HiddenWorld, coded_values, stable_identity

#: Relative strength and sign of the causes' default effects, in the hypothesis' order:
#: the first matters most, the second half as much the other way, the rest not at all (so
#: a fit has something to find, in both directions, and something not to).
DEFAULT_WEIGHTS = (1.0, -0.5)
#: The share of a bounded outcome's range (a probability's 0..1, an ordinal's 1..k) the
#: default effects move its expected value across, centred in the range.
DEFAULT_SPAN = 0.8


def offline_scientist(
    target: Hypothesis, seed: int = 0, *, follow_on: Hypothesis | None = None
) -> Callable[[Request], str]:
    """The scripted scientist of ``target``, with seeded schema-valid guesses for the
    steps it has no script for (the predictions). ``follow_on``, a hypothesis with the
    causes the scientist should propose next, answers what ``target`` cannot (new causes
    for the follow-on experiment and their construction)."""
    scripts = [scripted_scientist(h) for h in (target, follow_on) if h is not None]

    def reply(request: Request) -> str:
        for script in scripts:
            try:
                text = script(request)
            except (InputError, KeyError):  # a step or subject this script cannot answer
                continue
            if json.loads(text).get("causes") != []:
                return text
        else:
            if request.json_schema is None:
                return "I cannot say."
            step, subject, _ = step_of(request)
            guess = rng(seed, "offline-scientist", step, subject, request.sample_index)
            answer = example_from_schema(dict(request.json_schema), guess)
            if step == "predict_beta":  # one guess per path, as the schema's validator asks
                paths = _path_names(request.json_schema)
                answer["paths"] = [
                    {"path": p, "estimate": float(guess.normal()), "significant": bool(i % 2)}
                    for i, p in enumerate(paths)
                ]
            return json.dumps(answer)

    return stable_identity(reply, target, follow_on, seed)


def _path_names(schema: Mapping[str, Any]) -> list[str]:
    """The path labels a predict-β schema enumerates."""
    for definition in schema.get("$defs", {}).values():
        path = definition.get("properties", {}).get("path", {})
        if "enum" in path:
            return list(path["enum"])
        if "const" in path:
            return [path["const"]]
    return []


def default_effects(hypothesis: Hypothesis) -> dict[str, float]:
    """The offline world's hidden effects when none are given, per unit of each cause's
    numeric coding. The causes (nominal ones left out) are weighted by
    :data:`DEFAULT_WEIGHTS` in order. A binary or ordinal outcome's effects together move
    its expected value across :data:`DEFAULT_SPAN` of its range over the design (each
    cause its weight's share, spread over its own range of values), so the outcome varies
    and stays inside its range; a continuous or count outcome gets the weights themselves
    per unit (1 for the first cause, -0.5 for the second)."""
    causes = [v for v in hypothesis.treatments if v.type != "nominal"]
    weights = [DEFAULT_WEIGHTS[i] if i < len(DEFAULT_WEIGHTS) else 0.0 for i in range(len(causes))]
    outcome = hypothesis.outcome
    if outcome.type not in ("binary", "ordinal", "nominal"):
        return {v.name: w for v, w in zip(causes, weights, strict=True)}
    room = 1.0 if outcome.type == "binary" else len(outcome.levels) - 1.0
    total = sum(abs(w) for w in weights) or 1.0
    effects = {}
    for v, w in zip(causes, weights, strict=True):
        values = coded_values(v)
        spread = max(values) - min(values)
        effects[v.name] = DEFAULT_SPAN * room * (w / total) / spread if w and spread else 0.0
    return effects


def offline_world(
    hypothesis: Hypothesis,
    *,
    seed: int = 0,
    effects: Mapping[str, float] | None = None,
    intercept: float | None = None,
    noise_sd: float = 1.0,
    rounds: int = 1,
) -> HiddenWorld:
    """The hidden-SCM world of ``hypothesis`` with ``effects`` (default:
    :func:`default_effects`) and an ``intercept`` that centres the outcome in its range
    when not given; its agents speak ``rounds`` times each. See
    :class:`~.world.HiddenWorld`."""
    chosen = default_effects(hypothesis) if effects is None else effects
    return HiddenWorld(
        hypothesis, chosen, intercept=intercept, noise_sd=noise_sd, seed=seed, rounds=rounds
    )


def offline_study_models(
    hypothesis: Hypothesis,
    *,
    seed: int = 0,
    effects: Mapping[str, float] | None = None,
    cache_path: str | Path | None = None,
    world: HiddenWorld | None = None,
    scientist: LanguageModel | None = None,
    follow_on: Hypothesis | None = None,
) -> StudyModels:
    """Scientist, subjects and coordinator for an offline study of ``hypothesis``.

    The subjects and the coordinator are ``world`` (default: :func:`offline_world` of
    ``hypothesis`` with ``seed`` and ``effects``); the scientist is ``scientist`` if given
    (the CLI keeps the configured one), else the scripted scientist of ``hypothesis``
    whose follow-on proposals come from ``follow_on``. Every scripted model caches its
    replies in ``cache_path`` (none by default)."""
    if world is None:
        world = offline_world(hypothesis, seed=seed, effects=effects)
    if scientist is None:
        scientist = load_model(
            "scripted:scientist",
            fn=offline_scientist(hypothesis, seed, follow_on=follow_on),
            cache_path=cache_path,
        )
    subjects = load_model("scripted:world", fn=world, cache_path=cache_path)
    return StudyModels(scientist=scientist, subject=subjects, coordinator=subjects)


def offline_models(
    target: Hypothesis,
    effects: Mapping[str, float],
    *,
    intercept: float | None = None,
    noise_sd: float = 1.0,
    seed: int = 0,
    cache_path: str | Path | None = None,
) -> StudyModels:
    """:func:`offline_study_models` with the world's intercept and noise given (the
    older spelling, kept for callers that set them)."""
    world = HiddenWorld(target, effects, intercept=intercept, noise_sd=noise_sd, seed=seed)
    return offline_study_models(target, seed=seed, world=world, cache_path=cache_path)


def truth_rows(estimation: Mapping[str, Any], truth: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Each path and the intercept of a fit's main model (``record["estimation"]``) beside
    its true value (:meth:`~.world.HiddenWorld.truth`) and whether the fitted confidence
    interval covers it (``None`` when the fit gave no interval)."""
    rows = []
    for p in (estimation.get("main") or {}).get("params", []):
        if p.get("op") not in ("~", "~1") or p.get("lhs") != truth["outcome"]:
            continue
        true = truth["intercept"] if p["op"] == "~1" else truth["effects"].get(p["rhs"])
        low, high = p.get("ci_low"), p.get("ci_high")
        bounded = None not in (true, low, high)
        rows.append(
            {
                "term": "(intercept)" if p["op"] == "~1" else p["rhs"],
                "est": p.get("est"),
                "ci_low": low,
                "ci_high": high,
                "truth": true,
                "covered": bool(low <= true <= high) if bounded else None,
            }
        )
    return rows


__all__ = [
    "DEFAULT_SPAN",
    "DEFAULT_WEIGHTS",
    "default_effects",
    "offline_models",
    "offline_scientist",
    "offline_study_models",
    "offline_world",
    "truth_rows",
]
