"""Box's Apprentice: an LLM statistician whose programs guide an LLM scientist (spec §14).

:class:`Statistician` runs the model-discovery loop for the data an environment has
gathered: proposal (prior mode before any data, posterior mode after), execution in the
sandbox with bounded repairs, scoring by PSIS-LOO, selection of the best program, and the
critic. :class:`ApprenticeScientist` is the LLM scientist of :mod:`..llm` augmented with the
best program: at every evaluation the statistician fits a program to the data so far, the
program's predictive mean answers the questions (post-processed as published), and the
program with the critic's hypotheses extends the scientist's system message. For the
communication step it fits once more without the critic and passes the program and its
posterior means to the explanation prompt.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError, LLMError
from silicolab.llm import LanguageModel
from silicolab.scientists.boxinggym.apprentice import frames
from silicolab.scientists.boxinggym.apprentice.critic import Criticism, parse_criticism, render
from silicolab.scientists.boxinggym.apprentice.execute import (
    FitSettings,
    ProgramRun,
    arun_program,
    build_job,
)
from silicolab.scientists.boxinggym.apprentice.program_answers import (
    ProgramAnswers,
    answers_from_means,
)
from silicolab.scientists.boxinggym.apprentice.proposal import (
    MAX_TOKENS,
    TEMPERATURE,
    ProposalContext,
    apropose_program,
    as_previous,
)
from silicolab.scientists.boxinggym.apprentice.score import Candidate, best
from silicolab.scientists.boxinggym.llm import Answer, LLMScientist, _as_model

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question


@dataclass
class Discovery:
    """One pass of the loop after ``n_experiments``: the ``mode``, every candidate, the
    best one, the critic's reply and the predictions at the query rows."""

    n_experiments: int
    mode: str
    candidates: list[Candidate]
    best: Candidate | None
    criticism: Criticism | None = None
    predictions: list[float] | None = None

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready record."""
        return {
            "n_experiments": self.n_experiments,
            "mode": self.mode,
            "candidates": [c.to_dict() for c in self.candidates],
            "best": None if self.best is None else self.candidates.index(self.best),
            "criticism": None if self.criticism is None else self.criticism.to_dict(),
            "predictions": self.predictions,
        }


def problem(env: BoxingEnv) -> tuple[list[str], str]:
    """The input columns and the output column of ``env`` (one output only: the paper
    leaves out predator-prey and emotions, whose programs GPT-4o could not write)."""
    if frames.n_outputs(env) != 1:
        raise InputError(
            f"the apprentice models one observed output; {env.name} has {frames.n_outputs(env)}"
        )
    names = frames.columns(env)
    return names[:-1], names[-1]


def fit_job(env: BoxingEnv, questions: list[Question], settings: FitSettings) -> dict[str, Any]:
    """The sandbox job for ``env``'s data so far and ``questions``' rows."""
    inputs, target = problem(env)
    mode = "posterior" if env.data else "prior"
    rows = frames.data_rows(env)
    return build_job(mode, inputs, target, rows, frames.query_rows(env, questions), settings)


@dataclass
class Statistician:
    """The LLM statistician (``model``) with its loop settings: ``num_proposals`` programs
    per pass (published 1), ``max_repairs`` repairs per program, ``critic`` on or off, and
    the sandbox ``settings``. It keeps the programs of earlier passes and the last
    criticism, which the next proposal sees."""

    model: LanguageModel
    settings: FitSettings = field(default_factory=FitSettings)
    num_proposals: int = 1
    max_repairs: int = 2
    critic: bool = True
    temperature: float | None = TEMPERATURE
    max_tokens: int | None = MAX_TOKENS
    history: list[Candidate] = field(default_factory=list)
    criticism: Criticism = field(default_factory=Criticism)
    usage: dict[str, int] = field(
        default_factory=lambda: {"calls": 0, "input_tokens": 0, "output_tokens": 0, "cache_hits": 0}
    )

    def reset(self) -> None:
        """Forget earlier passes (a new episode)."""
        self.history, self.criticism = [], Criticism()

    async def ask(self, messages: list[dict[str, str]], tag: str = "statistician") -> str:
        """One call to the statistician's model (counted in :attr:`usage`)."""
        completion = await self.model.agenerate(
            messages, temperature=self.temperature, max_tokens=self.max_tokens, tag=tag
        )
        self.usage["calls"] += 1
        self.usage["input_tokens"] += int(completion.usage.input_tokens)
        self.usage["output_tokens"] += int(completion.usage.output_tokens)
        self.usage["cache_hits"] += int(bool(completion.cached))
        return completion.text

    async def adiscover(
        self, env: BoxingEnv, questions: list[Question], *, critic: bool | None = None
    ) -> Discovery:
        """One pass of the loop on ``env``'s data, predicting ``questions``."""
        job = fit_job(env, questions, self.settings)
        inputs, target = problem(env)
        mode = job["mode"]
        context = ProposalContext(
            mode=mode,
            dataset=env.describe(),
            column_description=frames.description(env),
            inputs=tuple(inputs),
            target=target,
            table=frames.table_text(env) if mode == "posterior" else "",
            previous=as_previous(self.history) if mode == "posterior" else (),
            hypotheses=self.criticism.hypotheses,
            synthesis=self.criticism.synthesis,
        )

        async def execute(program: str) -> ProgramRun:
            return await arun_program(program, job, self.settings)

        candidates = [
            await apropose_program(self.ask, execute, context, max_repairs=self.max_repairs)
            for _ in range(self.num_proposals)
        ]
        if mode == "posterior":
            self.history.extend(candidates)
        chosen = best(candidates)
        discovery = Discovery(len(env.data), mode, candidates, chosen)
        if chosen is not None and chosen.run is not None:
            discovery.predictions = chosen.run.predictions
        use_critic = self.critic if critic is None else critic
        if use_critic and mode == "posterior" and chosen is not None:
            discovery.criticism = await self.acriticise(env, chosen)
            self.criticism = discovery.criticism
        return discovery

    async def acriticise(self, env: BoxingEnv, candidate: Candidate) -> Criticism:
        """The critic's hypotheses and synthesis about ``candidate`` on ``env``'s data."""
        ppc = candidate.run.ppc if candidate.run is not None else None
        system = render(
            "critic_system.j2",
            dataset=env.describe(),
            column_description=frames.description(env),
        )
        user = render(
            "critic_user.j2",
            program=candidate.program,
            score=candidate.score_text(),
            table=frames.table_text(env, ppc),
        )
        messages = [{"role": "system", "content": system}, {"role": "user", "content": user}]
        try:
            reply = await self.ask(messages, "critic")
        except LLMError as err:  # no criticism this time; the loop goes on
            return Criticism(raw=f"model error: {err}")
        return parse_criticism(reply)


class ApprenticeScientist(ProgramAnswers, LLMScientist):
    """The LLM scientist guided by a statistician's programs (module docstring).

    ``model`` drives the scientist; ``statistician_model`` (default the same model) the
    statistician and critic; ``settings`` the sandbox fits; other options go to
    :class:`LLMScientist`. Evaluate it at :attr:`checkpoints` (0, 5, 10, as published):
    every evaluation is one pass of the loop.
    """

    agent = "apprentice"
    checkpoints = (0, 5, 10)

    def __init__(
        self,
        model: LanguageModel | str,
        *,
        statistician_model: LanguageModel | str | None = None,
        settings: FitSettings | None = None,
        critic: bool = True,
        num_proposals: int = 1,
        max_repairs: int = 2,
        **options: Any,
    ):
        super().__init__(model, **options)
        self.statistician = Statistician(
            _as_model(statistician_model) if statistician_model is not None else self.model,
            settings=settings or FitSettings(),
            num_proposals=num_proposals,
            max_repairs=max_repairs,
            critic=critic,
        )
        self.fits: list[Discovery] = []
        self.env: BoxingEnv | None = None
        self._system = ""

    @property
    def usage(self) -> dict[str, int]:
        """Calls and tokens of the scientist and the statistician together."""
        total = dict(self.chat.usage)
        for key, value in self.statistician.usage.items():
            total[key] = total.get(key, 0) + value
        return total

    async def astart(self, env: BoxingEnv) -> None:
        """Begin an episode on ``env`` (the statistician forgets earlier episodes)."""
        problem(env)
        await super().astart(env)
        self.env, self.fits, self._system = env, [], self.chat.messages[0]["content"]
        self.statistician.reset()

    async def aanswer_many(self, questions: list[Question], prefix: str) -> list[Answer]:
        """Fit a program to the data so far and answer every question with its
        predictive mean (spec §14's post-processing)."""
        env = self._env()
        discovery = await self.statistician.adiscover(env, list(questions))
        self.fits.append(discovery)
        self._augment(discovery)
        return answers_from_means(env, discovery.predictions, len(questions))

    async def aexplain(self, prompt: str, word_limit: int = 200) -> str:
        """The explanation, with the program and its posterior means in the prompt (a
        fit without the critic, unless the last pass already used all the data)."""
        env = self._env()
        last = self.fits[-1] if self.fits else None
        if last is None or last.n_experiments != len(env.data) or last.best is None:
            last = await self.statistician.adiscover(env, [], critic=False)
            self.fits.append(last)
        if last.best is not None and last.best.run is not None:
            means = ", ".join(f"{k} = {v}" for k, v in last.best.run.posterior_means.items())
            prompt = render(
                "explain_program.j2", prompt=prompt, program=last.best.program, means=means
            )
        return await self.chat.say(prompt)

    def _env(self) -> BoxingEnv:
        if self.env is None:
            raise InputError("call astart(env) before asking the apprentice anything")
        return self.env

    def _augment(self, discovery: Discovery) -> None:
        """Extend the system message with the best program and the last criticism."""
        if discovery.best is None or discovery.best.program is None:
            return
        criticism = self.statistician.criticism
        self.chat.messages[0] = {
            "role": "system",
            "content": render(
                "scientist_program.j2",
                system=self._system,
                program=discovery.best.program,
                hypotheses=criticism.hypotheses,
                synthesis=criticism.synthesis,
            ),
        }
