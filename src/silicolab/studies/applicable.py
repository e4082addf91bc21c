"""Which study options can apply: refuse the ones that cannot, before any run starts.

An option that would be stored and then silently do nothing (``follow_on`` with
rule-based subjects, ``aggregate_replicates`` with one replicate, ``price_rule`` with
language-model subjects) is refused in one line naming the fix. Where part of an option
can apply, that part runs and a note says what did not: ``predict`` without a scientist
model runs the model-free leave-one-out and leaves predict-y, predict-β and the model's
leave-one-out out.
"""

from __future__ import annotations

from collections.abc import Iterable

from silicolab.core.errors import InputError
from silicolab.studies.pipeline import StudyOptions

#: Options that only language-model subjects use (``subjects="llm"`` or ``"world"``).
LLM_ONLY = ("agent_names", "statement_tokens", "survey")
#: The other subjects, as a refusal of rule-based subjects suggests them.
OTHER_SUBJECTS = "subjects='llm' or subjects='world'"


def check_applicable(
    options: StudyOptions, *, typed: Iterable[str] = (), scientist: bool
) -> list[str]:
    """Raise :class:`InputError` for an option in ``options`` that cannot apply; return the
    notes on options that apply only in part.

    ``typed`` names the options the user gave explicitly (a default never refuses a run);
    ``scientist`` says whether a usable scientist model is at hand (not the offline
    ``scripted`` test double). Messages name the Python parameters (``follow_on=True``);
    the command line prints them as its flags."""
    typed = set(typed)
    _check_rule_subjects(options, typed)
    if options.follow_on and not scientist:
        raise InputError(
            "follow_on=True needs a scientist model to plan the next experiment and the "
            "scientist role is the offline 'scripted' test double: pass model=SPEC (or "
            "configure the scientist role in silicolab.yaml), or drop follow_on=True",
            params=("follow_on", "model"),
        )
    if options.subjects != "rule" and ("rule_options" in typed or "price_rule" in typed):
        raise InputError(
            "price_rule= applies to subjects='rule' only; drop it",
            params=("price_rule", "subjects"),
        )
    if options.aggregate_replicates and options.replicates < 2:
        raise InputError(
            "aggregate_replicates=True fits on the mean of each condition's replicates: add "
            "replicates=R (R >= 2), or drop it",
            params=("aggregate_replicates", "replicates"),
        )
    _check_scientist_options(options)
    notes = []
    if options.predict and not scientist:
        notes.append(
            "predict=True without a scientist model runs the mechanical leave-one-out only; "
            "predict-y, predict-beta and the model's leave-one-out need model=SPEC"
        )
    return notes


def _check_rule_subjects(options: StudyOptions, typed: set[str]) -> None:
    """Refuse what rule-based subjects cannot do: a follow-on, replicates, LLM options."""
    if options.subjects != "rule":
        return
    if options.follow_on:
        raise InputError(
            "follow_on=True needs language-model subjects: the rule-based subjects play "
            f"only this study's own causes, not the new ones a follow-on adds; use "
            f"{OTHER_SUBJECTS}, or drop follow_on=True",
            params=("follow_on", "subjects"),
        )
    if options.replicates > 1:
        raise InputError(
            f"replicates={options.replicates} with rule-based subjects would repeat "
            "identical runs (they are deterministic); drop replicates=",
            params=("replicates",),
        )
    given = [name for name in LLM_ONLY if name in typed]
    if given:
        raise InputError(
            f"{', '.join(f'{name}=' for name in given)} only apply to language-model "
            f"subjects; drop {'them' if len(given) > 1 else 'it'} or use {OTHER_SUBJECTS}",
            params=(*given, "subjects"),
        )


def _check_scientist_options(options: StudyOptions) -> None:
    """Refuse the scientist's options without the step they set, or out of range."""
    n = options.predict_conditions
    if n is not None and not options.predict:
        raise InputError(
            f"predict_conditions={n} sets how many conditions the scientist predicts: add "
            "predict=True, or drop it",
            params=("predict_conditions", "predict"),
        )
    if n is not None and n < 1:
        raise InputError(
            f"predict_conditions={n} must be at least 1", params=("predict_conditions",)
        )
    t = options.scientist_temperature
    if t is None:
        return
    if not (options.predict or options.follow_on):
        raise InputError(
            f"scientist_temperature={t} applies to the scientist's predictions and "
            "follow-on plan: add predict=True or follow_on=True, or drop it",
            params=("scientist_temperature", "predict", "follow_on"),
        )
    if not 0 <= t <= 2:
        raise InputError(
            f"scientist_temperature={t} must be between 0 and 2",
            params=("scientist_temperature",),
        )


__all__ = ["LLM_ONLY", "OTHER_SUBJECTS", "check_applicable"]
