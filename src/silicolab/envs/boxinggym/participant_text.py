"""The simulated participant's sentence: a numeric latent response put into words.

The Emotions and Moral Machines environments draw a numeric response (eight Likert ratings,
or a binary choice) from their latent model; the agent only ever sees a sentence. That
sentence comes from a language model when one is configured, otherwise from a plain
template, and every caller records which of the two produced it (``"llm"`` or
``"template"``). This module is the only place in the BoxingGym environments that calls a
language model (architecture rule: ``envs`` never call an LLM except the two speaking
participants).

The environment API is synchronous (``BoxingEnv.run``), so :func:`participant_sentence`
runs its async twin to completion with :func:`~silicolab.core.sync.run_sync` (as the
model's synchronous ``generate`` does; inside a running event loop, on a worker thread);
async callers should use :func:`aparticipant_sentence` instead. Calls pass a
``sample_index`` derived from the call's logical identity (environment, seed, step,
design), so reruns and resumed runs hit the exact-prompt cache rather than paying for the
same sentence twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal, NotRequired, TypedDict, Unpack

from silicolab.core.seeding import stable_hash
from silicolab.core.sync import run_sync
from silicolab.envs.boxinggym.base import BoxingEnv
from silicolab.llm.base import LanguageModel

Source = Literal["llm", "template"]

#: Sampling settings of the participant model (the published runs used temperature 0.7).
PARTICIPANT_TEMPERATURE = 0.7
PARTICIPANT_MAX_TOKENS = 200


@dataclass(frozen=True)
class Utterance:
    """A participant's sentence and what produced it."""

    text: str
    source: Source


def sample_index_for(*identity: object) -> int:
    """A stable, non-negative ``sample_index`` for the call named by ``identity``.

    Derived from the logical identity of the call (env name, seed, step, design text), not
    from call order, so a rerun of the same episode reuses cached sentences.
    """
    return stable_hash("|".join(str(part) for part in identity)) % (2**31)


def _messages(system: str, user: str) -> list[dict[str, str]]:
    return [{"role": "system", "content": system}, {"role": "user", "content": user}]


def _clean(text: str, fallback: str) -> Utterance:
    text = text.strip()
    if not text:  # an empty reply would leave the agent with nothing to read
        return Utterance(fallback, "template")
    return Utterance(text, "llm")


class SentenceRequest(TypedDict):
    """What a participant is asked: the ``system`` and ``user`` messages, the ``template``
    sentence used without a model, the call's ``sample_index`` and its ledger ``tag``."""

    system: str
    user: str
    template: str
    sample_index: int
    tag: NotRequired[str]


def participant_sentence(
    llm: LanguageModel | None, **request: Unpack[SentenceRequest]
) -> Utterance:
    """The participant's sentence: ``llm``'s reply to (``system``, ``user``), or
    ``template`` when no model is configured (or the model answers with nothing).

    Synchronous (see the module docstring).
    """
    if llm is None:  # no event loop needed: a template works inside a running one too
        return Utterance(request["template"], "template")
    sentence: Utterance = run_sync(aparticipant_sentence(llm, **request))
    return sentence


async def aparticipant_sentence(
    llm: LanguageModel | None, **request: Unpack[SentenceRequest]
) -> Utterance:
    """The async twin of :func:`participant_sentence`."""
    if llm is None:
        return Utterance(request["template"], "template")
    reply = await llm.agenerate(
        _messages(request["system"], request["user"]),
        temperature=PARTICIPANT_TEMPERATURE,
        max_tokens=PARTICIPANT_MAX_TOKENS,
        tag=request.get("tag", "participant"),
        sample_index=request["sample_index"],
    )
    return _clean(reply.text, request["template"])


def participant_record(utterances: Sequence[Any], llm: Any) -> dict[str, Any]:
    """The record fields of an environment whose participant speaks: every utterance with
    its source, and which model (or "template") produced them."""
    return {
        "utterances": list(utterances),
        "participant": llm.spec if llm is not None else "template",
    }


class SpeakingParticipantEnv(BoxingEnv):
    """An environment whose outcome a simulated participant voices (emotions, moral
    machines): the sentence comes from ``llm`` (else a template), every utterance is kept
    with its source for the record, and only the prior condition exists (the participant's
    story is the prior)."""

    def __init__(self, *, llm: LanguageModel | None = None, **kwargs: Any) -> None:
        if not kwargs.get("include_prior", True):
            raise ValueError(f"the {self.name} environment supports only the prior condition")
        self.llm = llm
        self.utterances: list[dict[str, Any]] = []
        super().__init__(**kwargs)

    def reset(self, seed: int | None = None) -> None:
        """A new true θ, no data and no utterances."""
        super().reset(seed)
        self.utterances = []

    def voice(self, design: Any, outcome: Any, *, system: str, user: str, template: str) -> str:
        """Record ``(design, outcome)`` as the next data point and return the participant's
        sentence for it (from ``system`` and ``user``, or ``template``), recorded as an
        utterance of that step; its ``sample_index`` names the env, seed, step and design."""
        step = len(self.data)
        self.data.append((design, outcome))
        said = participant_sentence(
            self.llm,
            system=system,
            user=user,
            template=template,
            sample_index=sample_index_for(self.name, self.seed, step, self.format_design(design)),
            tag="participant",
        )
        self.utterances.append({"step": step, "text": said.text, "source": said.source})
        return said.text

    def to_record(self) -> dict[str, Any]:
        """The environment's record with the utterances and who spoke them."""
        return {**super().to_record(), **participant_record(self.utterances, self.llm)}
