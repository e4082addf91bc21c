"""Box's Apprentice with a scripted statistician: the loop, repairs, the episode, HTTP."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from tests.scientists.apprentice_support import DUGONG_PROGRAM, TINY, reply, require_pymc

from silicolab.llm import load_model
from silicolab.llm.base import run_sync
from silicolab.scientists.boxinggym import make_env, make_scientist, play_episode
from silicolab.scientists.boxinggym.apprentice import ApprenticeScientist, Statistician
from silicolab.scientists.boxinggym.apprentice.critic import parse_criticism
from silicolab.scientists.boxinggym.apprentice.proposal import extract_program

require_pymc()

BROKEN_PROGRAM = DUGONG_PROGRAM.replace("alpha - beta", "alpha - bta")
CRITIQUE = (
    "```Hypotheses\n1. The noise may grow with age.\n```\n"
    "```Synthesis\nTry an age-dependent sigma.\n```"
)


class Script:
    """A scripted apprentice: the scientist observes ages 0.5, 1.0, ...; the statistician
    first writes a broken program (unless ``broken_first`` is False) and repairs it when the
    error comes back (never, with ``never_runs``); the critic answers two blocks."""

    def __init__(self, *, broken_first: bool = True, never_runs: bool = False) -> None:
        self.broken_first, self.never_runs = broken_first, never_runs
        self.designs = 0
        self.requests: list[tuple[str, list[dict[str, str]]]] = []

    def reply(self, role: str, messages: list[dict[str, Any]]) -> str:
        self.requests.append((role, [dict(m) for m in messages]))
        last = messages[-1]["content"]
        if role == "critic":
            return CRITIQUE
        if role == "novice":
            return "<answer>1.8</answer>"
        if role == "statistician":
            repair = "did not run" in last
            if self.never_runs or (self.broken_first and not repair):
                return reply(BROKEN_PROGRAM)
            return reply(DUGONG_PROGRAM)
        if "explain" in last.lower():
            return "Dugongs grow fast when young and then level off."
        self.designs += 1
        return f"<thought>spread ages</thought> <observe>{0.5 * self.designs:.1f}</observe>"

    def scripted(self, request: Any) -> str:
        return self.reply(request.tag, list(request.messages))

    def http(self, body: dict[str, Any]) -> str:
        system = body["messages"][0]["content"]
        role = "scientist"
        if system.startswith("You are an expert statistician who criticises"):
            role = "critic"
        elif system.startswith("You are an expert statistician"):
            role = "statistician"
        return self.reply(role, body["messages"])


def dugongs(n: int):
    env = make_env("dugongs", seed=4)
    for x in np.linspace(0.3, 4.8, n):
        env.run(f"{x:.2f}")
    return env


def test_program_extraction_and_criticism_parsing() -> None:
    assert extract_program("text\n```python\nx = 1\n```\nmore") == "x = 1\n"
    assert extract_program("```\ny = 2\n```") == "y = 2\n"
    assert extract_program("no code here") is None
    criticism = parse_criticism(CRITIQUE)
    assert criticism.hypotheses == "1. The noise may grow with age."
    assert criticism.synthesis == "Try an age-dependent sigma."
    assert parse_criticism("nothing").hypotheses == ""


def test_the_repair_loop_fixes_a_program_whose_first_version_fails() -> None:
    script = Script()
    statistician = Statistician(load_model("scripted", fn=script.scripted), settings=TINY)
    env = dugongs(6)
    questions = env.goal.questions(3, np.random.default_rng(0))
    found = run_sync(statistician.adiscover(env, questions))
    (candidate,) = found.candidates
    assert found.mode == "posterior" and found.best is candidate and candidate.ok
    assert len(candidate.errors) == 1 and "NameError" in candidate.errors[0]
    assert "bta" in candidate.errors[0]
    assert candidate.program == DUGONG_PROGRAM and candidate.run.elpd_loo is not None
    repair_request = script.requests[1][1]
    assert repair_request[-1]["role"] == "user" and "NameError" in repair_request[-1]["content"]
    assert repair_request[-2]["content"] == reply(BROKEN_PROGRAM)  # the failed version
    assert "True Observation 5" in repair_request[0]["content"]  # the data table
    assert len(found.predictions) == 3
    assert found.criticism.synthesis == "Try an age-dependent sigma."
    assert [role for role, _ in script.requests] == ["statistician", "statistician", "critic"]
    assert statistician.usage["calls"] == 3


def test_a_program_that_never_runs_is_recorded_and_the_episode_goes_on() -> None:
    script = Script(never_runs=True)
    model = load_model("scripted", fn=script.scripted)
    scientist = ApprenticeScientist(model, settings=TINY, max_repairs=1)
    record = play_episode(make_env("dugongs", seed=4), scientist, steps=1, checkpoints=(1,),
                          regret=False)  # fmt: skip
    (fit,) = record.programs
    (candidate,) = fit["candidates"]
    assert fit["best"] is None and fit["predictions"] is None and not candidate["ok"]
    assert len(candidate["errors"]) == 2 and all("NameError" in e for e in candidate["errors"])
    score = record.scores[0]
    assert score.n == 0 and score.n_missing == len(score.questions) and len(record.outcomes) == 1
    assert "statistician colleague" not in scientist.messages[0]["content"]


def test_an_apprentice_episode_with_the_program_guiding_the_scientist() -> None:
    script = Script(broken_first=False)
    model = load_model("scripted:apprentice", fn=script.scripted)
    scientist = make_scientist("apprentice", model=model, settings=TINY)
    assert isinstance(scientist, ApprenticeScientist)
    record = play_episode(make_env("dugongs", seed=4), scientist, steps=2, checkpoints=(0, 2),
                          communicate=True, regret=False)  # fmt: skip
    prior_fit, posterior_fit = record.programs  # the explanation reuses the last fit
    assert prior_fit["mode"] == "prior" and prior_fit["criticism"] is None
    assert posterior_fit["mode"] == "posterior" and posterior_fit["n_experiments"] == 2
    assert posterior_fit["criticism"]["hypotheses"].startswith("1. The noise")
    assert [s.n_experiments for s in record.scores] == [0, 2]
    for score, fit in zip(record.scores, record.programs, strict=True):
        assert score.n_missing == 0 and len(fit["predictions"]) == score.n
        assert score.predictions == pytest.approx(fit["predictions"], rel=1e-5)
    system = record.transcript[0]["content"]
    assert "statistician colleague" in system and "def build_model" in system
    assert "age-dependent sigma" in system
    explain = next(
        m for role, ms in script.requests for m in ms[-1:] if "Posterior means" in m["content"]
    )
    assert "alpha = " in explain["content"]
    roles = [role for role, _ in script.requests]
    assert record.usage["scientist"]["calls"] == len(roles) - roles.count("novice") == 6
    assert record.novice is not None and record.novice.predictions == [1.8] * 10


async def test_the_apprentice_over_a_local_openai_compatible_server(llm_server_factory) -> None:
    from silicolab.scientists.boxinggym import aplay_episode

    script = Script()
    server = llm_server_factory(reply=script.http)
    model = load_model("openai:fake-apprentice", base_url=server.base_url, timeout_s=60)
    try:
        record = await aplay_episode(
            make_env("dugongs", seed=4),
            ApprenticeScientist(model, settings=TINY),
            steps=2,
            checkpoints=(2,),
            regret=False,
        )
    finally:
        await model.aclose()
    (fit,) = record.programs
    assert fit["candidates"][0]["ok"] and len(fit["candidates"][0]["errors"]) == 1
    assert record.scores[0].n_missing == 0 and len(record.outcomes) == 2
    assert record.usage["scientist"]["calls"] == server.stats.requests == 5


def test_the_bench_runs_the_apprentice_beside_table_2() -> None:
    from silicolab.bench.boxinggym import run_boxinggym_bench

    script = Script(broken_first=False)
    model = load_model("scripted:bench-apprentice", fn=script.scripted)
    table = run_boxinggym_bench(
        ["dugongs"],
        "apprentice",
        model=model,
        seeds=[1],
        steps=5,
        regret=False,
        jobs=1,
        options={"settings": TINY},
    )
    (row,) = table.to_dict("records")
    assert (row["agent"], row["model"], row["errors"]) == ("apprentice", model.spec, 0)
    assert (row["box_before"], row["box_after"]) == (0.26, -0.08)  # Table 2, dugongs
    assert np.isfinite(row["before"]) and np.isfinite(row["after"])
    statistician_calls = [r for r, _ in script.requests if r == "statistician"]
    assert len(statistician_calls) == 2  # checkpoints 0 and 5 only, as published


def test_ranking_puts_failures_last_and_falls_back_to_waic() -> None:
    from silicolab.scientists.boxinggym.apprentice.execute import ProgramRun
    from silicolab.scientists.boxinggym.apprentice.score import Candidate, best, rank

    def scored(loo: float | None, waic: float | None = None) -> Candidate:
        return Candidate("p", ProgramRun(ok=True, elpd_loo=loo, elpd_waic=waic))

    failed = Candidate("p", ProgramRun(ok=False))
    low, high, undefined = scored(-10.0), scored(-2.0), scored(float("nan"), -5.0)
    assert rank([failed, low, undefined, high]) == [high, undefined, low, failed]
    assert best([failed]) is None and best([low, failed]) is low
    assert undefined.elpd_loo == -5.0 and failed.elpd_loo == float("-inf")


def test_a_model_that_fails_is_recorded_not_raised() -> None:
    from silicolab.core.errors import LLMError

    def failing(request: Any) -> str:
        raise LLMError("the server is gone")

    statistician = Statistician(load_model("scripted", fn=failing), settings=TINY)
    found = run_sync(statistician.adiscover(dugongs(3), []))
    (candidate,) = found.candidates
    assert found.best is None and candidate.program is None
    assert candidate.errors == ["model error: the server is gone"]
