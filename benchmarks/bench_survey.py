"""Benchmark of a survey's wall time: 50 agents x 3 questions at 1 s of server latency.

Run ``.venv/bin/python benchmarks/bench_survey.py [--latency 1.0]`` from the repository
root. It prints a table and writes ``benchmarks/results/bench_survey.json``. Every call goes
to :class:`tests.support.openai_server.FakeLLMServer` in its own process on 127.0.0.1 (as in
``bench_llm.py``), so the client does not share its interpreter with the server.

Issue 28 measured, for this workload with the defaults, 10.1 s through silicolab against
3.9 s through EDSL. Two things decide it: whether one agent's three questions go one after
another (``aask_survey(concurrent=False)``, the default) or at once (``concurrent=True``),
and how many calls the client lets into flight (``max_concurrency``: 16 by default when
issue 28 was measured, 64 since, with the limit backing off on 429s and timeouts). The ideal
of a configuration is ``max(rounds, ceil(calls / max_concurrency)) * latency`` where
``rounds`` is 3 when the questions go in turn and 1 when they go at once.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from silicolab.llm import load_model  # noqa: E402
from silicolab.sim import GenerativeAgent, Identity  # noqa: E402
from silicolab.sim.survey import SurveyQuestion, aask_survey  # noqa: E402

RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_survey.json"
N_AGENTS, QUESTIONS = 50, ("price", "offers", "minutes")
#: (label, max_concurrency, concurrent)
CONFIGS = (
    ("before: old default 16, questions in turn", 16, False),
    ("old default 16, questions at once", 16, True),
    ("default 64, questions in turn", 64, False),
    ("default 64, questions at once", 64, True),
    ("concurrency 150, questions at once", 150, True),
)

_SERVER_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import FakeLLMServer
def reply(body):
    return "7, that is my best estimate."
server = FakeLLMServer(latency_s=float(sys.argv[2]), reply=reply, log_limit=10).start()
print(server.base_url, flush=True)
sys.stdin.read()
"""


def questions() -> list[SurveyQuestion]:
    return [
        SurveyQuestion(q, f"How many {q} did the deal take?", "count", addressee=f"agent{i}")
        for i in range(N_AGENTS)
        for q in QUESTIONS
    ]


async def run_survey(
    base_url: str, limit: int, concurrent: bool, *, latency: float, key: str
) -> dict[str, Any]:
    """One survey of fresh agents (their own ``sample_key``: no request repeats another)."""
    model = load_model("openai:fake-model", base_url=base_url, max_concurrency=limit)
    people = {
        f"agent{i}": GenerativeAgent(
            f"agent{i}", model, [Identity("{name} bought a mug.")], sample_key=key
        )
        for i in range(N_AGENTS)
    }
    started = time.perf_counter()
    answers = await aask_survey(
        people, questions(), context="A mug was sold.", concurrent=concurrent
    )
    elapsed = time.perf_counter() - started
    await model.aclose()
    calls = model.ledger.summary()["calls"]
    rounds = 1 if concurrent else len(QUESTIONS)
    ideal = max(rounds, math.ceil(calls / limit)) * latency
    assert all(a.value == 7 for a in answers), "every answer parses to 7"
    return {"calls": calls, "elapsed_s": elapsed, "ideal_s": ideal, "ratio": elapsed / ideal}


async def _main(latency: float) -> dict[str, Any]:
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER_SCRIPT, str(REPO_ROOT), str(latency)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        rows = {}
        for n, (label, limit, concurrent) in enumerate(CONFIGS):
            row = await run_survey(base_url, limit, concurrent, latency=latency, key=f"run{n}")
            rows[label] = {"max_concurrency": limit, "concurrent": concurrent, **row}
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(10)
    return rows


def main(argv: list[str] | None = None) -> int:
    """Run every configuration once, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--latency", type=float, default=1.0, help="server latency (s)")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    args = parser.parse_args(argv)
    os.environ.setdefault("OPENAI_API_KEY", "bench-key-not-secret")
    rows = asyncio.run(_main(args.latency))
    print(f"{N_AGENTS} agents x {len(QUESTIONS)} questions at {args.latency:g} s latency")
    print(f"{'configuration':40} {'calls':>5} {'wall s':>7} {'ideal s':>7} {'ratio':>6}")
    for label, row in rows.items():
        print(
            f"{label:40} {row['calls']:5d} {row['elapsed_s']:7.2f} "
            f"{row['ideal_s']:7.2f} {row['ratio']:6.2f}"
        )
    print("issue 28 reference: silicolab (old defaults) 10.1 s, EDSL 3.9 s")
    results = {
        "python": platform.python_version(),
        "latency_s": args.latency,
        "agents": N_AGENTS,
        "questions": len(QUESTIONS),
        "configurations": rows,
    }
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"wrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
