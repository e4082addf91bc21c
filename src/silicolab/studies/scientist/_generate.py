"""The language model as scientist: from a scenario to a hypothesized SCM.

:func:`agenerate_hypothesis` runs the chain of small, typed prompts of Manning, Zhu &
Horton (2024, §6.1-6.3): the participants; an outcome, its operationalization, type,
units, levels and survey questions; ``n_causes`` causes, each checked for timing (fixed
before the run: a treatment with scope, proxy attribute, values and visibility; realised
during it: a mediator with causes of its own); each agent's goal, constraint and
background attributes; the attribute-overlap cross-check; the conversation protocol.
Every step's choice and the model's explanation land in ``Hypothesis.decisions``.

>>> from silicolab.llm import load_model
>>> from silicolab.studies import load_example
>>> from silicolab.studies.scripted import scripted_scientist
>>> mug = load_example("mug")
>>> model = load_model("scripted", fn=scripted_scientist(mug))
>>> h = generate_hypothesis(mug.scenario, model, n_causes=3)
>>> [v.name for v in h.treatments]
['buyer_budget', 'seller_min_price', 'seller_attachment']
"""

from __future__ import annotations

from collections.abc import Callable

from pydantic import ValidationError

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.sync import sync_twin
from silicolab.llm import LanguageModel
from silicolab.studies.hypothesis import Decision, Hypothesis
from silicolab.studies.scientist._agents import (
    build_profiles,
    choose_protocol,
    cross_check,
    propose_agents,
)
from silicolab.studies.scientist._journal import StepJournal
from silicolab.studies.scientist._schemas import OutcomeReply
from silicolab.studies.scientist._steps import Scientist, slug, unique
from silicolab.studies.scientist._variables import build_measured


async def agenerate_hypothesis(
    scenario: str,
    model: LanguageModel,
    *,
    n_causes: int = 3,
    temperature: float = 0.4,
    seed: int = 0,
    on_step: Callable[[Decision], None] | None = None,
    name: str | None = None,
    journal: StepJournal | None = None,
) -> Hypothesis:
    """Ask ``model`` (as scientist) for a complete, validated :class:`Hypothesis` of
    ``scenario`` with ``n_causes`` causes of the outcome.

    ``on_step`` is called with each :class:`Decision` as it is taken (for progress
    display). Step prompts are cached by their identity and ``seed``, so a rerun is free.
    A reply that stays invalid raises :class:`~silicolab.core.errors.ParseFailure` naming
    the step; a chain whose pieces do not fit together raises one too (exit 3: the model's
    output is at fault, not the user's input).

    ``journal`` (a :class:`~silicolab.studies.scientist._journal.StepJournal`) receives
    every accepted step as it is taken, and its accepted steps are replayed without a
    model call: a failed chain continues from its first missing step.
    """
    if len(scenario.strip()) < 10:
        raise InputError("describe the scenario in at least a sentence, e.g. 'Two people "
                         "bargaining over a mug.'")  # fmt: skip
    if not 1 <= n_causes <= 10:
        raise InputError(f"n_causes must be between 1 and 10, got {n_causes}")
    sci = Scientist(model, scenario.strip(), temperature, seed, on_step, journal=journal)
    sci.agents = await propose_agents(sci)
    sci.taken.update(a.name for a in sci.agents)
    outcome = (await sci.ask("outcome", OutcomeReply)).outcomes[0]
    outcome_name = unique(slug(outcome.name), sci.taken)
    variables = await build_measured(
        sci, outcome_name, outcome, role="outcome", depth=0, n_causes=n_causes
    )
    agents = await build_profiles(sci, variables)
    agents, variables = await cross_check(sci, agents, variables)
    protocol, order, central = await choose_protocol(sci)
    data = {
        "name": name or _study_name(scenario),
        "scenario": sci.scenario,
        "agents": [a.model_dump() for a in agents],
        "variables": [v.model_dump() for v in variables],
        "protocol": protocol,
        "order": order,
        "central": central,
        "decisions": [d.model_dump() for d in sci.decisions],
    }
    try:
        return Hypothesis.model_validate(data)
    except ValidationError as exc:
        problem = exc.errors()[0]["msg"].removeprefix("Value error, ")
        raise ParseFailure(  # the model's output, not the user's input, is at fault: exit 3
            f"the scientist's answers do not form a valid hypothesis: {problem}; rerun with "
            "another seed, or write the hypothesis file by hand",
            raw=str(data),
        ) from None


generate_hypothesis = sync_twin(agenerate_hypothesis)


def _study_name(scenario: str) -> str:
    """A short study name from the scenario's first words."""
    return "_".join(slug(scenario).split("_")[:4])


__all__ = ["agenerate_hypothesis", "generate_hypothesis"]
