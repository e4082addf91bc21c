"""Emotions from outcomes, the participant's words: the template sentence and the prompts that
ask a language model to voice a set of ratings (see
:mod:`~silicolab.envs.boxinggym.participant_text` for how either is chosen and recorded)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from silicolab.envs.boxinggym.emotion._model import EMOTIONS, WheelDesign


def template_sentence(ratings: Sequence[int]) -> str:
    """A plain sentence naming the strongest feelings without numbers."""
    order = np.argsort(-np.asarray(ratings), kind="stable")
    strong = [EMOTIONS[i] for i in order[:2]]
    weak = EMOTIONS[int(order[-1])]
    level = "a lot of" if ratings[int(order[0])] >= 7 else "some"
    return (
        f"The player might be feeling {level} {strong[0]} and some {strong[1]}, with hardly "
        f"any {weak}, because of how the spin turned out compared with what they expected."
    )


PARTICIPANT_SYSTEM = (
    "You are watching someone play a game in which a wheel with three possible prizes is spun. "
    "You will be told how likely each prize was, which prize the wheel landed on, and how "
    "strongly you believe the player feels each of eight emotions. Put those feelings into "
    "words. Feelings depend on the prize itself, on how it compares with what the player "
    "expected, and on how big that surprise was."
)


def participant_prompt(design: WheelDesign, ratings: Sequence[int]) -> str:
    """The user prompt asking the participant model to voice ``ratings``."""
    lines = "\n".join(f"{e.capitalize()}: {r}/9" for e, r in zip(EMOTIONS, ratings, strict=True))
    return (
        f"Prize: probability\n{design.wheel_text()}\n"
        f"The wheel landed on {design.prizes[design.win]:g}.\n"
        f"How you think the player feels (1 = not at all, 9 = very much):\n{lines}\n"
        "Write one short sentence without any numbers, mentioning only the strongest "
        "feelings, starting with 'The player might be feeling' and giving a reason."
    )
