"""BoxingGym data as tables with the published column names (spec §14).

Each environment's gathered data become rows of features then observations, named as the
published ``get_ordered_column_names`` did, with or without the prior (without it the
names carry no meaning: ``x1``, ``x2``, ``y``). Evaluation questions become feature rows the
same way, and a predictive mean becomes an answer by the published post-processing
(:func:`to_answer`). Moral Machines codes ``choice`` 0/1 (1 = group 2 saved), so the
published rule "2 if the mean is at least 0.5" applies; its six features are the group 1
minus group 2 differences of the environment's model.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from silicolab.envs.boxinggym.base import BoxingEnv, Question

_MORAL = tuple(
    f"group1_group2_{a}_diff" for a in ("count", "gender", "age", "social", "fitness", "species")
)
_EMOTIONS = ("happiness", "sadness", "anger", "surprise", "fear", "disgust", "contentment",
             "disappointment")  # fmt: skip
_EMOTION = ("prize_1", "prize_2", "prize_3", "prob_1", "prob_2", "prob_3", "win", *_EMOTIONS)

#: env -> (columns with the prior, columns without); the last ``n_outputs`` are observations.
COLUMNS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "location_finding": (("x1", "x2", "signal_strength"), ("x1", "x2", "y")),
    "hyperbolic_temporal_discount": (("ir", "dr", "days", "Choice"), ("x1", "x2", "x3", "y")),
    "death_process": (("x", "infection_num"), ("x1", "y")),
    "irt": (("student_id", "question_id", "correctness"), ("x1", "x2", "y")),
    "dugongs": (("x", "Y"), ("x", "Y")),
    "peregrines": (("year", "C"), ("x1", "y")),
    "survival": (("metastasized_status", "time_surgery", "outcome"), ("x1", "x2", "y")),
    "lotka_volterra": (("t", "prey", "predator"), ("t", "y1", "y2")),
    "emotion": (_EMOTION, _EMOTION),
    "moral_machines": ((*_MORAL, "intervention", "choice"), (*_MORAL, "intervention", "choice")),
}
N_OUTPUTS = {"lotka_volterra": 2, "emotion": len(_EMOTIONS)}

#: What each column means (shown to the statistician with the prior).
DESCRIPTIONS: dict[str, str] = {
    "location_finding": "x1, x2: the measurement location; signal_strength: the noisy signal "
    "measured there",
    "hyperbolic_temporal_discount": "ir: the immediate reward; dr: the delayed reward; days: "
    "the delay in days; Choice: 1 if the person chose the delayed reward, else 0",
    "death_process": "x: the time of the measurement; infection_num: how many of the 50 "
    "individuals were infected then",
    "irt": "student_id, question_id: which student answered which question (ids 0-5); "
    "correctness: 1 if the answer was correct, else 0",
    "dugongs": "x: the dugong's age; Y: its length",
    "peregrines": "year: the time of the count; C: the number of peregrine falcons counted",
    "survival": "metastasized_status: 1 if the cancer metastasized, else 0; time_surgery: "
    "time since surgery; outcome: 1 if the patient died, else 0",
    "lotka_volterra": "t: the time; prey, predator: the two populations at that time",
    "emotion": "prize_1..3: the prizes of the wheel; prob_1..3: their probabilities; win: the "
    "prize won; the eight emotions: the player's ratings from 1 to 9",
    "moral_machines": "group1_group2_*_diff: group 1 minus group 2 in the number of humans, "
    "gender (female -1), age (children +1, elderly -1), social status, fitness and species "
    "(pets -1, humans +1); intervention: +1 if saving group 1 needs a swerve, -1 if it "
    "needs staying on course; choice: 1 if the participant saved group 2, 0 if group 1",
}


def columns(env: BoxingEnv) -> list[str]:
    """The published column names of ``env``'s table (features, then observations)."""
    try:
        with_prior, without = COLUMNS[env.name]
    except KeyError:
        raise InputError(f"no data-frame columns are defined for {env.name!r}") from None
    return list(with_prior if env.include_prior else without)


def n_outputs(env: BoxingEnv) -> int:
    """How many observation columns ``env`` has (the apprentice handles one)."""
    return N_OUTPUTS.get(env.name, 1)


def description(env: BoxingEnv) -> str:
    """The column description (without the prior: inputs and an output of unknown meaning)."""
    if env.include_prior:
        return DESCRIPTIONS[env.name]
    names = columns(env)
    k = n_outputs(env)
    return f"{', '.join(names[:-k])}: inputs; {', '.join(names[-k:])}: the observed output"


def design_features(env: BoxingEnv, design: Any) -> list[float]:
    """The feature values of one design of ``env``."""
    name = env.name
    if name == "survival":
        pid = int(design)
        return [float(env.metastasized[pid]), float(env.times[pid])]  # type: ignore[attr-defined]
    if name == "moral_machines":
        from silicolab.envs.boxinggym.moral_machines import features

        f = features(design, env.fidelity)
        keys = ("count", "gender", "age", "social", "fitness", "species", "iv")
        return [float(f[k]) for k in keys]
    if name == "emotion":
        return [*map(float, design.prizes), *map(float, design.probs), float(design.value)]
    if isinstance(design, tuple | list) or getattr(design, "ndim", 0):
        return [float(v) for v in design]
    return [float(design)]


def question_features(env: BoxingEnv, question: Question) -> list[float]:
    """The feature values of an evaluation question's point."""
    if env.name == "survival":
        t, m = question.point
        return [float(m), float(t)]
    return design_features(env, question.point)


def outcome_values(env: BoxingEnv, outcome: Any) -> list[float]:
    """The observation values of one outcome (moral choice 1/2 becomes 0/1)."""
    if env.name == "moral_machines":
        return [float(int(outcome) - 1)]
    if isinstance(outcome, tuple | list):
        return [float(v) for v in outcome]
    return [float(outcome)]


def data_rows(env: BoxingEnv) -> list[list[float]]:
    """``env.data`` as table rows (features then observations)."""
    return [design_features(env, d) + outcome_values(env, y) for d, y in env.data]


def query_rows(env: BoxingEnv, questions: list[Question]) -> list[list[float]]:
    """The questions' feature rows."""
    return [question_features(env, q) for q in questions]


def data_frame(env: BoxingEnv) -> pd.DataFrame:
    """The gathered data as a pandas frame, rows indexed "True Observation i" (published)."""
    import pandas as pd

    rows = data_rows(env)
    index = [f"True Observation {i}" for i in range(len(rows))]
    return pd.DataFrame(rows, columns=columns(env), index=index)


def table_text(env: BoxingEnv, ppc: list[list[float]] | None = None) -> str:
    """The data table as text for a prompt; with ``ppc`` ([mean, std, median] per row) the
    program's posterior-predictive summary is shown beside each observation."""
    frame = data_frame(env)
    if frame.empty:
        return "(no data yet)"
    if ppc and len(ppc) == len(frame):
        for j, label in enumerate(("pred_mean", "pred_std", "pred_median")):
            frame[label] = [row[j] for row in ppc]
    return frame.to_string(float_format=lambda v: f"{v:.4g}")


def to_answer(env: BoxingEnv, mean: float) -> Any:
    """A predictive mean as the goal's prediction (spec §14's post-processing): IRT is
    thresholded at 0.5, moral machines answers 2 if the mean is at least 0.5 (else 1); other
    goals parse the mean as text, and in fixed fidelity the other binary goals (choice,
    survival) are thresholded at 0.5 too, where the published text would not parse."""
    goal = env.goal
    if env.name == "irt":
        return int(mean >= 0.5)
    if env.name == "moral_machines":
        return 2 if mean >= 0.5 else 1
    if goal.kind == "accuracy" and env.fidelity == "fixed":
        return int(mean >= 0.5)
    return goal.parse_answer(f"{mean:.6g}")
