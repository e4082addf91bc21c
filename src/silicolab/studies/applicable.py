"""Which study options can apply: refuse the ones that cannot, before any run starts.

An option that would be stored and then silently do nothing (``--follow-on`` with
rule-based subjects, ``--aggregate-replicates`` with one replicate, ``--price-rule`` with
language-model subjects) is refused in one line naming the fix. Where part of an option
can apply, that part runs and a note says what did not: ``--predict`` without a scientist
model runs the model-free leave-one-out and leaves predict-y, predict-β and the model's
leave-one-out out.
"""

from __future__ import annotations

from collections.abc import Iterable

from silicolab.core.errors import InputError
from silicolab.studies.pipeline import StudyOptions

#: Options that only language-model subjects use (``--subjects llm`` or ``world``).
LLM_ONLY = {"agent_names": "--agent-names", "statement_tokens": "--statement-tokens"}


def check_applicable(
    options: StudyOptions, *, typed: Iterable[str] = (), scientist: bool
) -> list[str]:
    """Raise :class:`InputError` for an option in ``options`` that cannot apply; return the
    notes on options that apply only in part.

    ``typed`` names the options the user gave explicitly (a default never refuses a run);
    ``scientist`` says whether a usable scientist model is at hand (not the offline
    ``scripted`` test double)."""
    typed = set(typed)
    rule = options.subjects == "rule"
    if rule and options.follow_on:
        raise InputError(
            "--follow-on needs language-model subjects: the rule-based subjects play only "
            "this study's own causes, not the new ones a follow-on adds; use --subjects "
            "llm or world, or drop --follow-on"
        )
    if options.follow_on and not scientist:
        raise InputError(
            "--follow-on needs a scientist model to plan the next experiment and the "
            "scientist role is the offline 'scripted' test double: pass --model SPEC (or "
            "configure the scientist role in silicolab.yaml), or drop --follow-on"
        )
    if rule and options.replicates > 1:
        raise InputError(
            f"--replicates {options.replicates} with rule-based subjects would repeat "
            "identical runs (they are deterministic); drop --replicates"
        )
    if rule:
        given = [flag for name, flag in LLM_ONLY.items() if name in typed]
        if given:
            raise InputError(
                f"{', '.join(given)} only apply to language-model subjects; drop "
                f"{'them' if len(given) > 1 else 'it'} or use --subjects llm or world"
            )
    if not rule and ("rule_options" in typed or "price_rule" in typed):
        raise InputError("--price-rule applies to --subjects rule only; drop it")
    if options.aggregate_replicates and options.replicates < 2:
        raise InputError(
            "--aggregate-replicates fits on the mean of each condition's replicates: add "
            "--replicates R (R >= 2), or drop it"
        )
    if options.predict_conditions is not None and not options.predict:
        raise InputError(
            f"--predict-conditions {options.predict_conditions} sets how many conditions "
            "the scientist predicts: add --predict, or drop it"
        )
    if options.predict_conditions is not None and options.predict_conditions < 1:
        raise InputError(
            f"--predict-conditions must be at least 1, got {options.predict_conditions}"
        )
    if options.scientist_temperature is not None:
        if not (options.predict or options.follow_on):
            raise InputError(
                "--scientist-temperature applies to the scientist's predictions and "
                "follow-on plan: add --predict or --follow-on, or drop it"
            )
        if not 0 <= options.scientist_temperature <= 2:
            raise InputError(
                "--scientist-temperature must be between 0 and 2, got "
                f"{options.scientist_temperature}"
            )
    notes = []
    if options.predict and not scientist:
        notes.append(
            "--predict without a scientist model runs the mechanical leave-one-out only; "
            "predict-y, predict-beta and the model's leave-one-out need --model SPEC"
        )
    return notes


__all__ = ["LLM_ONLY", "check_applicable"]
