"""One BoxingGym episode: experiment loop, checkpoint evaluations, communication, EI regret.

The loop follows spec §1.3: ``steps`` experiment steps; at each the scientist proposes a
design, the environment runs it or rejects it (``InvalidDesign``), and a rejected design is
sent back with the environment's message for at most :data:`MAX_TRIES` attempts per step (a
reply with no usable ``<observe>`` block counts as a rejected attempt); a step whose attempts
all fail is skipped but still counts. After 0 steps and after each step in ``checkpoints``
the scientist answers the goal's questions (the same questions every time, their truths from
the true parameters) and the goal scores them. With ``communicate`` the scientist then writes
an explanation, cut to :data:`COMM_LIMIT` words, and a novice that sees only that explanation
(after the goal's naive system message) answers the same questions. In ``fixed`` fidelity the
novice is not shown the scientist's last observation; ``faithful`` reproduces that leak
(spec §15.14). EI regret replays the recorded designs and outcomes through
``eig.ei_regret`` (spec §2.3; faithful regret re-simulates, as upstream did).

Answers that do not parse are counted per checkpoint (``n_unparsed``); a checkpoint where
fewer than :data:`MIN_PARSED_FRACTION` of them parsed is ``degraded`` and reports no score.
A model call that fails for good (``LLMError``, ``ParseFailure``) ends the episode early but
keeps it: the record holds the checkpoints finished before it and ``model_error`` says why
(its health marks it unusable, so the run ends degraded and ``--retry-failed`` reruns it).
"""

from __future__ import annotations

import asyncio
import functools
import math
import time
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any, Protocol

from silicolab.core.errors import InputError, LLMError, ParseFailure
from silicolab.core.seeding import child_seed
from silicolab.core.seeding import rng as derive_rng
from silicolab.core.sync import sync_twin
from silicolab.envs.errors import InvalidAction
from silicolab.llm import LanguageModel
from silicolab.scientists.boxinggym.llm import Answer, LLMNovice, Proposal, render, truncate_words
from silicolab.scientists.boxinggym.record import (
    BoxingRecord,
    CheckpointScore,
    DesignAttempt,
    Outcome,
    jsonable,
)

if TYPE_CHECKING:
    from silicolab.envs.boxinggym.base import BoxingEnv, Question

MAX_TRIES = 3
COMM_LIMIT = 200
#: A checkpoint needs at least this share of its answers parsed to be scored (5 of 10; the
#: one question of a parameter goal must parse).
MIN_PARSED_FRACTION = 0.5
CHECKPOINTS = (0, 1, 3, 5, 7, 10)


class BoxingScientist(Protocol):
    """What :func:`aplay_episode` needs of a scientist."""

    agent: str
    model_label: str

    async def astart(self, env: BoxingEnv) -> None:
        """Begin an episode on ``env`` (reset, its data empty)."""

    async def apropose(self, feedback: str | None, *, retry: bool = False) -> Proposal:
        """The next design (see :meth:`LLMScientist.apropose`)."""

    async def aanswer(self, question: Question, prefix: str) -> Answer:
        """Answer one evaluation question."""

    async def aexplain(self, prompt: str, word_limit: int = COMM_LIMIT) -> str:
        """An explanation of the environment for a novice."""


class Novice(Protocol):
    """What the communication phase needs of a novice."""

    model_label: str

    async def astart(self, goal: Any, explanation: str, *, include_prior: bool) -> None:
        """Brief the novice with the explanation."""

    async def aanswer(self, question: Question, prefix: str) -> Answer:
        """Answer one evaluation question."""


def make_env(
    env_id: str,
    *,
    goal: str = "direct",
    prior: bool = True,
    fidelity: str = "fixed",
    seed: int | None = 1,
    options: Mapping[str, Any] | None = None,
) -> BoxingEnv:
    """A BoxingGym environment from the registry (``options`` are extra factory keywords).

    ``llm=`` (the simulated participant's model) reaches only the environments whose
    participants speak (their spec says so), so one bench-wide option serves all.
    """
    from silicolab.envs import make, spec

    env_id = env_id if env_id.startswith("boxinggym/") else f"boxinggym/{env_id}"
    options = dict(options or {})
    if not spec(env_id).participants_speak:
        options.pop("llm", None)
    return make(env_id, goal=goal, prior=prior, fidelity=fidelity, seed=seed, **options)


def _novice_for(novice: Novice | LanguageModel | str | None, scientist: BoxingScientist) -> Novice:
    if novice is None:
        model = getattr(scientist, "model", None)
        if model is None:
            raise InputError(
                f"communicate=True with the {scientist.agent!r} scientist needs novice= "
                "(a model spec such as 'openai:gpt-4o', a loaded model or a novice object)"
            )
        chat = getattr(scientist, "chat", None)
        options = {} if chat is None else {"temperature": chat.temperature}
        return LLMNovice(model, **options)
    if isinstance(novice, str | LanguageModel):
        return LLMNovice(novice)
    return novice


async def _evaluate(
    agent: BoxingScientist | Novice,
    goal: Any,
    questions: Sequence[Question],
    prefix: str,
    n_experiments: int,
) -> CheckpointScore:
    many = getattr(agent, "aanswer_many", None)  # one fit answers every question at once
    if many is not None:
        answers = list(await many(list(questions), prefix))
    else:
        answers = [await agent.aanswer(q, prefix) for q in questions]
    predictions = [a.prediction for a in answers]
    score = goal.score(predictions, questions)
    unparsed = sum(p is None for p in predictions)
    degraded = too_few_parsed(len(predictions) - unparsed, len(predictions))
    raw, raw_std, standardized = (
        (math.nan, math.nan, math.nan)
        if degraded
        else (score.raw, score.raw_std, score.standardized)
    )
    return CheckpointScore(
        n_experiments=n_experiments,
        raw=float(raw),
        raw_std=float(raw_std),
        standardized=float(standardized),
        n=int(score.n),
        n_missing=int(score.n_missing),
        n_unparsed=unparsed,
        degraded=degraded,
        questions=[q.text for q in questions],
        truths=jsonable([q.truth for q in questions]),
        predictions=jsonable(predictions),
        answers=[a.text for a in answers],
        format_retries=sum(a.format_retries for a in answers),
    )


def too_few_parsed(parsed: int, asked: int) -> bool:
    """True when fewer than :data:`MIN_PARSED_FRACTION` of the ``asked`` answers parsed:
    such a checkpoint is degraded and its score is not reported (a mean over 1 of 10
    answers is not the agent's score on the questions asked)."""
    return asked > 0 and parsed < MIN_PARSED_FRACTION * asked


def regret_env_seed(seed: int | None) -> int:
    """The seed of the fresh environment faithful regret re-simulates from: derived from
    the episode's ``seed`` but not equal to it, so its hidden parameters are new ones, as
    in the published regret script (same seed, same new parameters on every rerun)."""
    derived = child_seed(0 if seed is None else seed, "boxinggym", "faithful-regret-env")
    return int(derived or 0)


def compute_regret(
    env: BoxingEnv,
    *,
    data: Sequence[tuple[Any, Any]],
    n_random: int = 100,
    estimator: str | None = None,
    nmc: tuple[int, int] | None = None,
) -> dict[str, Any]:
    """EI regret of the designs in ``data`` (spec §2.3) via ``eig.ei_regret``: per step,
    the best EIG of ``n_random`` random designs minus the EIG of the agent's design, under
    the posterior given the earlier steps (``nmc`` = (N outer, M inner), default the env's).
    Fresh copies of ``env`` (built by :func:`silicolab.envs.make`) are made with its options;
    the faithful estimator re-simulates the outcomes from one with new hidden parameters
    (seed :func:`regret_env_seed`), as the published script did.
    Returns ``eig.ei_regret``'s dict (``eigs_regret``, ``regret_mean``, ``eigs``, ...)."""
    from silicolab.envs import remake
    from silicolab.envs.boxinggym.eig import ei_regret

    n_outer, n_inner = nmc if nmc is not None else (None, None)
    factory = functools.partial(remake, env)
    if (estimator or env.fidelity) == "faithful":
        factory = functools.partial(remake, env, seed=regret_env_seed(env.seed))
    return dict(
        ei_regret(
            factory,
            [d for d, _ in data],
            [y for _, y in data],
            n_random=n_random,
            seed=0 if env.seed is None else env.seed,
            estimator=estimator or env.fidelity,
            n_outer=n_outer,
            n_inner=n_inner,
        )
    )


async def aplay_episode(
    env: BoxingEnv,
    scientist: BoxingScientist,
    *,
    steps: int = 10,
    checkpoints: Sequence[int] = CHECKPOINTS,
    n_questions: int | None = None,
    communicate: bool = False,
    novice: Novice | LanguageModel | str | None = None,
    regret: bool = True,
    regret_random: int = 100,
    regret_estimator: str | None = None,
    regret_nmc: tuple[int, int] | None = None,
) -> BoxingRecord:
    """Play one episode of ``scientist`` on ``env``, a fresh environment from
    :func:`make_env` or :func:`silicolab.envs.make` (module docstring).

    ``n_questions`` defaults to the goal's ``num_evals``; ``regret_random`` random designs
    per step, ``regret_estimator`` (default: the env's fidelity) and ``regret_nmc`` (N
    outer, M inner; default the environment's) configure the regret.
    """
    if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
        raise InputError(f"steps must be a non-negative integer, got {steps!r}")
    points = sorted(set(int(c) for c in checkpoints))
    if any(c < 0 or c > steps for c in points):
        raise InputError(f"checkpoints must lie in [0, steps={steps}], got {list(checkpoints)}")
    the_novice = _novice_for(novice, scientist) if communicate else None
    goal = env.goal
    n = int(goal.num_evals if n_questions is None else n_questions)
    rng = derive_rng(env.seed, "boxinggym", env.name, goal.name, "questions")
    questions = goal.questions(n, rng)
    start = time.perf_counter()
    record = _new_record(env, scientist, steps, points)
    try:
        await scientist.astart(env)
        last = await _experiment(env, scientist, record, questions, points)
        if the_novice is not None:
            await _communicate(record, scientist, the_novice, goal, questions, last)
    except (LLMError, ParseFailure) as err:
        # a model call failed for good: keep what finished, mark the episode partial
        record.model_error = f"{type(err).__name__}: {err}"
    record.runtime_s = time.perf_counter() - start
    record.usage = {"scientist": dict(getattr(scientist, "usage", {}) or {})}
    if the_novice is not None:
        record.usage["novice"] = dict(getattr(the_novice, "usage", {}) or {})
    record.transcript = list(getattr(scientist, "messages", []) or [])
    record.programs = list(getattr(scientist, "programs", []) or [])
    record.truth = jsonable(env.to_record())
    if regret and record.partial:
        record.regret_error = "not computed: the episode stopped early (model_error)"
    elif regret:
        _add_regret(record, env, regret_random, regret_estimator, regret_nmc)
    return record


def _new_record(
    env: BoxingEnv, scientist: BoxingScientist, steps: int, points: list[int]
) -> BoxingRecord:
    return BoxingRecord(
        env=env.name,
        goal=env.goal.name,
        prior=bool(env.include_prior),
        seed=env.seed,
        fidelity=env.fidelity,
        agent=scientist.agent,
        model=scientist.model_label,
        steps=steps,
        checkpoints=points,
        scores=[],
        designs=[],
        outcomes=[],
    )


async def _experiment(
    env: BoxingEnv,
    scientist: BoxingScientist,
    record: BoxingRecord,
    questions: Sequence[Question],
    points: list[int],
) -> str | None:
    """The experiment loop with its checkpoint evaluations; returns the last message."""
    if 0 in points:
        prefix = render("prefix_no_data.j2")
        record.scores.append(await _evaluate(scientist, env.goal, questions, prefix, 0))
    last: str | None = None
    for step in range(record.steps):
        feedback, done = last, False
        for attempt in range(MAX_TRIES):
            proposal = await scientist.apropose(feedback, retry=attempt > 0)
            ok, message = await _try_design(env, proposal)
            record.designs.append(
                DesignAttempt(
                    step=step,
                    attempt=attempt,
                    design=proposal.text,
                    ok=ok,
                    message=message,
                    raw=proposal.raw,
                    format_retries=proposal.format_retries,
                )
            )
            feedback = message
            if ok:
                design, value = env.data[-1]
                record.outcomes.append(
                    Outcome(step, str(proposal.text), jsonable(design), message, jsonable(value))
                )
                done = True
                break
        if not done:
            record.skipped_steps.append(step)
        last = feedback
        if step + 1 in points:
            prefix = render("prefix_result.j2", observation=last)
            record.scores.append(await _evaluate(scientist, env.goal, questions, prefix, step + 1))
    return last


def _add_regret(
    record: BoxingRecord,
    env: BoxingEnv,
    n_random: int,
    estimator: str | None,
    nmc: tuple[int, int] | None,
) -> None:
    from silicolab.envs.boxinggym.base import PosteriorUnavailable

    began = time.perf_counter()
    try:
        result = compute_regret(
            env, data=list(env.data), n_random=n_random, estimator=estimator, nmc=nmc
        )
    except (NotImplementedError, PosteriorUnavailable) as err:
        # no EIG here (faithful predator-prey), or no posterior for these data
        record.regret_error = f"{type(err).__name__}: {err}"
    else:
        record.regret = [float(r) for r in result["eigs_regret"]]
        record.regret_mean = float(result["regret_mean"])
        record.regret_detail = jsonable(result)
    record.regret_runtime_s = time.perf_counter() - began


async def _try_design(env: BoxingEnv, proposal: Proposal) -> tuple[bool, str]:
    """Run ``proposal`` on ``env``: (accepted, outcome text or the rejection message)."""
    if proposal.text is None:
        return False, render("format_failure.j2")
    try:
        # env.run is synchronous and may call a participant language model through its
        # sync twin: in a thread, so this loop keeps serving the other episodes meanwhile.
        if getattr(env.spec, "participants_speak", False):
            return True, await asyncio.to_thread(env.run, proposal.text)
        return True, env.run(proposal.text)
    except InvalidAction as err:
        return False, str(getattr(err, "message", "") or err)


async def _communicate(
    record: BoxingRecord,
    scientist: BoxingScientist,
    novice: Novice,
    goal: Any,
    questions: Sequence[Question],
    last: str | None,
) -> None:
    """The explanation, its word cut, and the novice's evaluation (module docstring)."""
    prior = record.prior
    prompt = goal.comm_prompt(prior, COMM_LIMIT)
    raw = await scientist.aexplain(prompt, COMM_LIMIT)
    text, words, cut = truncate_words(raw, COMM_LIMIT)
    record.comm_prompt = prompt
    record.explanation, record.explanation_words, record.explanation_truncated = text, words, cut
    await novice.astart(goal, text, include_prior=prior)
    if record.fidelity == "faithful" and last is not None:
        prefix = render("prefix_result.j2", observation=last)  # upstream's leak, §15.14
    else:
        prefix = render("prefix_novice.j2")
    record.novice = await _evaluate(novice, goal, questions, prefix, record.steps)
    record.novice_model = str(getattr(novice, "model_label", ""))
    record.novice_system = str(getattr(novice, "system_message", ""))


play_episode = sync_twin(aplay_episode)
