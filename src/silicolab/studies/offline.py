"""An offline laboratory: every role of a study played by scripted test doubles.

The scientist rebuilds a known target hypothesis step by step (:mod:`.scripted`) and
answers the prediction steps it has no script for with schema-valid values drawn from a
seeded generator (so predictions run, and are as good as guesses); the subjects and the
coordinator are the hidden-SCM world (:mod:`.world`). With it the whole pipeline —
hypothesis, runs, survey, fit, predictions, follow-on — runs without a server, which is
what ``silicolab demo`` and the end-to-end tests use. Nothing here is a language model.
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
from silicolab.llm.types import Request
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import StudyModels
from silicolab.studies.scripted import scripted_scientist, step_of
from silicolab.studies.world import HiddenWorld, stable_identity


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


def offline_models(
    target: Hypothesis,
    effects: Mapping[str, float],
    *,
    intercept: float = 0.0,
    noise_sd: float = 1.0,
    seed: int = 0,
    cache_path: str | Path | None = None,
) -> StudyModels:
    """Scientist, subjects and coordinator for an offline study of ``target`` whose
    outcome follows ``effects`` (see :class:`HiddenWorld`)."""
    world = HiddenWorld(target, effects, intercept=intercept, noise_sd=noise_sd, seed=seed)
    scientist = load_model(
        "scripted:scientist", fn=offline_scientist(target, seed), cache_path=cache_path,
    )  # fmt: skip
    subjects = load_model("scripted:world", fn=world, cache_path=cache_path)
    return StudyModels(scientist=scientist, subject=subjects, coordinator=subjects)


__all__ = ["offline_models", "offline_scientist"]
