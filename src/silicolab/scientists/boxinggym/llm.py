"""The LLM scientist and the novice of BoxingGym (spec §13, prompts written for silicolab).

The scientist keeps one stateful chat: the environment's system message, then alternating
user and assistant turns. A design is the text inside the first ``<observe>…</observe>``
block of a reply and an answer the text inside ``<answer>…</answer>``; a block counts only
if it contains a digit and not the word "done", otherwise the model is re-prompted (at most
``max_format_retries`` times, then the turn yields ``None``). Evaluation turns (question,
repairs, answer) are cut from the history after each answer, so being tested never teaches
the scientist anything. The explanation for the novice is asked within the full history and
cut to ``word_limit`` words (the cut is recorded). The novice is a fresh chat whose system
message is the goal's naive message followed by the explanation, and nothing else.

Every call is tagged ``"scientist"`` or ``"novice"`` for the model's ledger; each chat also
counts its own calls, because concurrent episodes share one model and its ledger.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from silicolab.core.sync import sync_twin
from silicolab.llm import LanguageModel, load_model
from silicolab.scientists.templates import render_template

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question

PROMPTS = Path(__file__).parent / "prompts"
#: Upstream's sampling settings for the scientist and the novice (spec §1.1).
TEMPERATURE = 0.0
MAX_TOKENS = 512


def render(name: str, **values: Any) -> str:
    """Render the prompt template ``name`` (a missing variable is an error)."""
    return render_template(PROMPTS, name, keep_trailing_newline=False, **values)


def extract_tag(text: str, tag: str) -> str | None:
    """The stripped text of the first ``<tag>…</tag>`` block of ``text`` if it contains a
    digit and not the word "done" (spec §13's validity rule), else None."""
    match = re.search(rf"<{tag}>(.*?)</{tag}>", text, re.DOTALL)
    if match is None:
        return None
    inner = match.group(1).strip()
    if not re.search(r"\d", inner) or "done" in inner.lower():
        return None
    return inner


def truncate_words(text: str, limit: int) -> tuple[str, int, bool]:
    """``text`` cut to its first ``limit`` whitespace-separated words, its original word
    count, and whether it was cut (the communication limit counts words, spec §15.15)."""
    words = text.split()
    if len(words) <= limit:
        return text.strip(), len(words), False
    return " ".join(words[:limit]), len(words), True


@dataclass
class Proposal:
    """One design proposal: the parsed design text (None when the reply stayed
    unparseable), the last raw reply and the number of format re-prompts it took."""

    text: str | None
    raw: str = ""
    format_retries: int = 0


@dataclass
class Answer:
    """One answer: the goal-parsed prediction (None = unparseable), the text inside the
    answer tags, the raw reply and the format re-prompts."""

    prediction: Any
    text: str | None = None
    raw: str = ""
    format_retries: int = 0


@dataclass
class Chat:
    """A stateful chat with one model; counts its own usage (see the module docstring)."""

    model: LanguageModel
    tag: str
    temperature: float | None = TEMPERATURE
    max_tokens: int | None = MAX_TOKENS
    seed: int | None = None
    max_format_retries: int = 3
    messages: list[dict[str, str]] = field(default_factory=list)
    usage: dict[str, int] = field(
        default_factory=lambda: {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cache_hits": 0}
    )

    def reset(self, system: str) -> None:
        """Start over with ``system`` as the system message."""
        self.messages = [{"role": "system", "content": system}]

    async def say(self, text: str) -> str:
        """Send one user turn and keep the reply in the history."""
        self.messages.append({"role": "user", "content": text})
        completion = await self.model.agenerate(
            self.messages,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
            tag=self.tag,
        )
        self.usage["calls"] += 1
        self.usage["input_tokens"] += int(completion.usage.input_tokens)
        self.usage["output_tokens"] += int(completion.usage.output_tokens)
        self.usage["cache_hits"] += int(bool(completion.cached))
        self.messages.append({"role": "assistant", "content": completion.text})
        return completion.text

    async def ask_tagged(self, text: str, tag: str, repair: str) -> tuple[str | None, str, int]:
        """Send ``text`` and re-prompt with ``repair`` until the reply has a valid ``tag``
        block: (parsed block or None, last raw reply, re-prompts used)."""
        raw = await self.say(text)
        for retry in range(self.max_format_retries + 1):
            parsed = extract_tag(raw, tag)
            if parsed is not None or retry == self.max_format_retries:
                return parsed, raw, retry
            raw = await self.say(repair)
        raise AssertionError("unreachable")  # pragma: no cover

    async def answer(self, question: Question, prefix: str, goal: Any) -> Answer:
        """Ask one evaluation question and cut the exchange from the history again."""
        keep = len(self.messages)
        prompt = render("question.j2", prefix=prefix, question=question.text)
        try:
            text, raw, retries = await self.ask_tagged(prompt, "answer", render("repair_answer.j2"))
        finally:
            del self.messages[keep:]
        prediction = None if text is None else goal.parse_answer(text)
        return Answer(prediction, text, raw, retries)


def _as_model(model: LanguageModel | str) -> LanguageModel:
    return load_model(model) if isinstance(model, str) else model


class _ChatAgent:
    """A language model in one stateful :class:`Chat` (the scientist and the novice):
    ``model`` is a loaded :class:`LanguageModel` or a spec for :func:`load_model`;
    ``temperature``/``max_tokens`` default to upstream's 0.0 and 512; ``tag`` labels its
    calls in the model's ledger."""

    agent = ""
    tag = ""

    def __init__(
        self,
        model: LanguageModel | str,
        *,
        temperature: float | None = TEMPERATURE,
        max_tokens: int | None = MAX_TOKENS,
        seed: int | None = None,
        max_format_retries: int = 3,
        tag: str | None = None,
    ):
        self.model = _as_model(model)
        self.model_label = self.model.spec
        self.chat = Chat(
            self.model, tag or self.tag, temperature, max_tokens, seed, max_format_retries
        )
        self.goal: Any = None

    @property
    def usage(self) -> dict[str, int]:
        """This agent's calls and tokens since it was made."""
        return dict(self.chat.usage)

    async def aanswer(self, question: Question, prefix: str) -> Answer:
        """Answer one evaluation question (the exchange is not kept in the history)."""
        return await self.chat.answer(question, prefix, self.goal)

    answer = sync_twin(aanswer)


class LLMScientist(_ChatAgent):
    """A language model running BoxingGym experiments through text (module docstring)."""

    agent = "llm"
    tag = "scientist"

    @property
    def messages(self) -> list[dict[str, str]]:
        """The current conversation (system message first)."""
        return list(self.chat.messages)

    async def astart(self, env: BoxingEnv) -> None:
        """Begin an episode on ``env``: its description becomes the system message."""
        self.goal = env.goal
        self.chat.reset(env.describe())

    async def apropose(self, feedback: str | None, *, retry: bool = False) -> Proposal:
        """The next design. ``feedback`` is the previous result (None before the first
        step) or, with ``retry``, the environment's message rejecting the last design."""
        if retry:
            prompt = render("retry_design.j2", message=feedback or "")
        elif feedback is None:
            prompt = render("first_design.j2")
        else:
            prompt = render("next_design.j2", result=feedback)
        text, raw, retries = await self.chat.ask_tagged(
            prompt, "observe", render("repair_observe.j2")
        )
        return Proposal(text, raw, retries)

    async def aexplain(self, prompt: str, word_limit: int = 200) -> str:
        """The raw explanation for a novice, asked within the whole conversation (the
        protocol cuts it to ``word_limit`` words)."""
        return await self.chat.say(prompt)

    propose = sync_twin(apropose)


class LLMNovice(_ChatAgent):
    """A fresh model that answers from an explanation alone (spec §1.4): its system
    message is the goal's naive message followed by the explanation."""

    agent = "novice"
    tag = "novice"

    @property
    def system_message(self) -> str:
        """What the novice was told (empty before :meth:`astart`)."""
        return self.chat.messages[0]["content"] if self.chat.messages else ""

    async def astart(self, goal: Any, explanation: str, *, include_prior: bool) -> None:
        """Brief the novice: the goal's naive system message, then the explanation."""
        self.goal = goal
        naive = goal.naive_system_message(include_prior)
        separator = "" if not naive or naive.endswith(("\n", " ")) else "\n"
        self.chat.reset(
            render(
                "novice_system.j2", naive_system=naive, separator=separator, explanation=explanation
            )
        )
