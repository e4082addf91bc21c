"""Every LLM pipeline of silicolab, run small against a real model (issue 14).

Each runner plays one pipeline against the local llama.cpp server with the bundled
SmolLM2-135M-Instruct and returns a :class:`Measure`: the pipeline's own output (for the
tests' invariants) and the figures of ``benchmarks/bench_real_model.py``'s table (calls,
tokens, wall time, parse failures, repairs, the score). Sizes are small so that the whole
set stays within a few minutes on two cores; the MAC runs go through the command line
(``--model local``), the others through the Python API, which takes the step and length
caps the command line does not offer.
"""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.support.cli import strict_json

#: The model spec every pipeline uses: the local server with the bundled SmolLM2.
SPEC = "local"
MAC_METHODS = ("mac_meta_debate", "mac_debate_coding")


@dataclass
class Measure:
    """One pipeline's run: its figures and its raw output."""

    pipeline: str
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    wall_s: float = 0.0
    steps: int = 0
    parse_failures: int = 0
    repairs: int = 0
    score_name: str = ""
    score: float | None = None
    status: str = "finished"
    output: Any = field(default=None, repr=False)

    def row(self) -> dict[str, Any]:
        """The benchmark table's row."""
        rate = lambda n: round(n / self.steps, 3) if self.steps else None  # noqa: E731
        score = None if self.score is None or math.isnan(self.score) else round(self.score, 3)
        return {
            "pipeline": self.pipeline,
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "wall_s": round(self.wall_s, 1),
            "steps": self.steps,
            "parse_failure_rate": rate(self.parse_failures),
            "repair_rate": rate(self.repairs),
            "score": f"{self.score_name} {score}" if self.score_name else "",
            "status": self.status,
        }


def load_local(cache_path: Path | None) -> Any:
    """The local model as the pipelines get it from ``--model local``."""
    from silicolab.llm import load_model

    return load_model(SPEC, cache_path=cache_path)


def _ledger(measure: Measure, summary: dict[str, Any]) -> None:
    measure.calls = int(summary.get("calls", 0))
    measure.input_tokens = int(summary.get("input_tokens", 0))
    measure.output_tokens = int(summary.get("output_tokens", 0))


def run_cli(args: list[str], env: dict[str, str]) -> tuple[int, dict[str, Any], str]:
    """``silicolab ARGS --json`` in a subprocess, as a user runs it: exit code, the JSON
    object it printed, its stderr."""
    done = subprocess.run(
        [sys.executable, "-m", "silicolab.cli.app", *args, "--json"],
        capture_output=True,
        text=True,
        env={**os.environ, **env},
        timeout=1800,
        check=False,
    )
    try:
        out = strict_json(done.stdout.strip().splitlines()[-1]) if done.stdout.strip() else {}
    except ValueError:
        out = {}
    return done.returncode, out, done.stderr


def mac(method: str, runs_dir: Path, env: dict[str, str]) -> Measure:
    """MAC on Auto MPG through ``silicolab discover --model local``: one round of debate,
    short speeches (and, for debate-coding, one repair of the executor's code)."""
    # the judge's verdict is not capped: a cut-off JSON verdict costs a forced one (measured:
    # with 96 tokens, 24 calls in 191 s instead of 15 in 101 s)
    params = ["-p", "max_rounds=1", "-p", "debater_max_tokens=64"]
    if method == "mac_debate_coding":
        params += ["-p", "max_repairs=1", "-p", "executor_max_tokens=384"]
    args = ["discover", "--dataset", "auto_mpg", "--method", method, "--model", SPEC]
    start = time.perf_counter()
    code, out, err = run_cli([*args, *params, "--seed", "0", "--runs-dir", str(runs_dir)], env)
    measure = Measure(method, wall_s=time.perf_counter() - start, output=(code, out, err))
    _ledger(measure, out.get("usage") or {})
    totals = ((out.get("health") or {}).get("totals")) or {}
    measure.steps = int(totals.get("steps", 0))
    measure.parse_failures = int(totals.get("parse_failures", 0))
    if method == "mac_debate_coding" and out.get("run_dir"):
        # no debate questions: the steps are the plan's verdict and the executor's attempts
        record = json.loads((Path(out["run_dir"]) / "record.json").read_text(encoding="utf-8"))
        params = record["result"]["params"]
        attempts = int(params.get("attempts", 0))
        measure.steps = 1 + attempts
        failed = attempts if params.get("fallback") else max(0, attempts - 1)
        measure.parse_failures = int(bool(params.get("plan_forced"))) + failed
        measure.repairs = max(0, attempts - 1)
    measure.score_name, measure.score = "SHD", (out.get("scores") or {}).get("shd")
    measure.status = str(out.get("status", f"exit {code}"))
    return measure


async def causalab(model: Any, *, suite: str = "3nodes", max_steps: int = 4) -> Measure:
    """One CausaLab episode with the ReAct scientist (step and answer-length caps)."""
    from silicolab.envs import make
    from silicolab.scientists import arun_episode, make_scientist

    env = make("causalab", suite=suite, index=0, seed=0)
    scientist = make_scientist(
        env, "llm", model=model, max_steps=max_steps, max_tokens=192, max_repairs=1
    )
    start = time.perf_counter()
    episode = await arun_episode(env, scientist, seed=0)
    measure = Measure("causalab_react", wall_s=time.perf_counter() - start, output=episode)
    _ledger(measure, episode.usage)
    steps = [s for s in episode.detail.get("steps", []) if s.get("executed", True)]
    measure.steps = episode.health.steps
    measure.parse_failures = episode.health.parse_failures
    measure.repairs = sum(int(s.get("retries", 0)) for s in steps)
    measure.score_name, measure.score = "accuracy", episode.scores.get("success")
    measure.status = "degraded" if episode.health.all_failed else "finished"
    return measure


async def boxinggym(model: Any, *, env_id: str = "boxinggym/dugongs") -> Measure:
    """One BoxingGym episode with the LLM scientist and the novice: two experiments, two
    questions at each checkpoint, then the explanation and the novice's answers (replies
    of at most 192 tokens, one re-prompt for a reply without its tag)."""
    from silicolab.envs import make
    from silicolab.scientists import arun_episode, make_scientist
    from silicolab.scientists.boxinggym import LLMNovice

    env = make(env_id, seed=1)
    short = {"max_tokens": 192, "max_format_retries": 1}
    scientist = make_scientist(env, "llm", model=model, **short)
    start = time.perf_counter()
    episode = await arun_episode(
        env,
        scientist,
        seed=1,
        steps=2,
        checkpoints=(0, 2),
        n_questions=2,
        communicate=True,
        novice=LLMNovice(model, **short),  # the scientist's temperature, 0.0, by default
        regret=False,
    )
    measure = Measure("boxinggym_llm+novice", wall_s=time.perf_counter() - start, output=episode)
    _ledger(measure, episode.usage)
    record = episode.detail
    scores = list(record.get("scores") or [])
    novice = record.get("novice") or {}
    answers = [*scores, novice] if novice else scores
    # health counts each evaluation as one step; the measure counts its answers instead
    answered = sum(len(s.get("predictions") or []) for s in answers)
    measure.steps = episode.health.steps - len(answers) + answered
    degraded = sum(bool(s.get("degraded")) for s in answers)  # counted per answer below
    measure.parse_failures = (
        episode.health.parse_failures - degraded + sum(int(s.get("n_missing", 0)) for s in answers)
    )
    measure.repairs = sum(int(s.get("format_retries", 0)) for s in answers)
    measure.score_name = "std. error (novice)"
    measure.score = episode.scores.get("after_comm")
    measure.status = "degraded" if episode.health.all_failed else "finished"
    return measure


def bargaining(model: Any, *, max_statements: int = 4) -> Measure:
    """The bargaining simulation: a short conversation and the four-question survey."""
    from silicolab.sim.examples.bargaining import run_bargaining

    start = time.perf_counter()
    before = model.ledger.summary()
    result = run_bargaining(model, max_statements=max_statements, seed=0)
    measure = Measure("bargaining", wall_s=time.perf_counter() - start, output=result)
    after = model.ledger.summary()
    _ledger(measure, {k: after[k] - before[k] for k in ("calls", "input_tokens", "output_tokens")})
    measure.steps = len(result.transcript) + len(result.survey)
    measure.parse_failures = sum(bool(a.parse_failed) for a in result.survey)
    measure.score_name, measure.score = "deal", float(bool(result.deal))
    return measure


def study(model: Any, run_root: Path) -> Measure:
    """The study pipeline (lawyer): hypothesis, two conditions of two statements, survey,
    fit; every role played by the local model."""
    from silicolab.runs import Run
    from silicolab.studies import load_example
    from silicolab.studies.pipeline import StudyModels, StudyOptions
    from silicolab.studies.study import run_study

    hypothesis = load_example("lawyer").model_copy(update={"max_statements": 2})
    options = StudyOptions(conditions=2, jobs=1, statement_tokens=32)
    start = time.perf_counter()
    before = model.ledger.summary()
    with Run.create(run_root, kind="study", slug="lawyer") as run:
        record = run_study(hypothesis, options, run=run, models=StudyModels(model, model, model))
    measure = Measure("study_lawyer", wall_s=time.perf_counter() - start, output=(run, record))
    after = model.ledger.summary()
    _ledger(measure, {k: after[k] - before[k] for k in ("calls", "input_tokens", "output_tokens")})
    totals = record["health"]["totals"]
    measure.steps = int(totals.get("steps", 0))
    measure.parse_failures = int(totals.get("parse_failures", 0))
    measure.status = str(run.status)
    return measure
