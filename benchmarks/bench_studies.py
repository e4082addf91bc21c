"""Benchmark of ``silicolab.studies``: the auction against theory, and a mug study over HTTP.

Run ``.venv/bin/python benchmarks/bench_studies.py [--quick]`` from the repository root. It
prints the figures and writes ``benchmarks/results/bench_studies.json``. No network beyond
127.0.0.1.

1. **Auction, rule-based bidders** (343 conditions): the largest absolute difference between
   the pipeline's fitted SCM (paths, intercept, SEs, R²) and an OLS fit to the theory prices
   computed here independently (second-highest budget), for both price rules. Target 1e-9.
2. **Mug study with LLM subjects** (405 conditions, 100 with ``--quick``) against the local
   fake OpenAI server in its own process, answering as the scripted hidden-SCM world
   (3 rounds of statements per conversation), 200 ms latency, ``max_concurrency=64``:
   - wall time against the ideal ``max(calls x 0.2 s / 64, longest condition chain x 0.2 s)``
     (target 1.2x);
   - LLM calls per statement, coordinator included (target <= 2);
   - a rerun in a new run directory: server requests (target 0, all from the cache);
   - client CPU per condition over the whole run (process time, HTTP client and cache
     included).
3. **Pipeline CPU outside LLM calls** per condition (target < 5 ms): the mug study on the
   in-process scripted world, minus the CPU of replaying the same requests through the
   same model stack.
Nothing here asserts on timing; the targets are reported, never enforced.
"""

from __future__ import annotations

import argparse
import json
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import numpy as np  # noqa: E402

from silicolab.llm import load_model  # noqa: E402
from silicolab.runs import Run  # noqa: E402
from silicolab.studies import load_example, make_design  # noqa: E402
from silicolab.studies.pipeline import StudyModels, StudyOptions  # noqa: E402
from silicolab.studies.study import run_study  # noqa: E402

LATENCY_S = 0.2
CONCURRENCY = 64
ROUNDS = 3
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_studies.json"

_SERVER_SCRIPT = """
import json, sys
from types import SimpleNamespace
sys.path.insert(0, sys.argv[1] + "/src"); sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import FakeLLMServer
from silicolab.studies import load_example
from silicolab.studies.offline import offline_world

mug = load_example("mug")
world = offline_world(mug, noise_sd=0.0, rounds=int(sys.argv[3]))
server = FakeLLMServer(reply=lambda body: world(SimpleNamespace(messages=body["messages"])),
                       latency_s=float(sys.argv[2]), models=("fake",)).start()
print(server.base_url, flush=True)
for line in sys.stdin:
    if line.strip() == "stats":
        s = server.stats
        print(json.dumps({"requests": s.requests, "ok": s.ok, "max_in_flight": s.max_in_flight}),
              flush=True)
server.stop()
"""


def auction_against_theory() -> dict[str, float]:
    """Max |pipeline fit - theory fit| over paths, SEs, intercept and R², per price rule."""
    import statsmodels.api as sm

    hypothesis = load_example("auction")
    design = make_design(hypothesis)
    budgets = np.array(
        [
            [float(c.treatments[f"budget_{k}"].strip("$")) for k in (1, 2, 3)]
            for c in design.conditions
        ]
    )
    out = {}
    for rule in ("second_dropout", "next_increment"):
        ordered = np.sort(budgets, axis=1)
        theory = (
            ordered[:, 1]
            if rule == "second_dropout"
            else np.minimum(ordered[:, 1] + 50.0, ordered[:, 2])
        )
        ols = sm.OLS(theory, sm.add_constant(budgets)).fit()
        ml_se = ols.bse * np.sqrt((len(theory) - 4) / len(theory))
        with tempfile.TemporaryDirectory() as tmp, Run.create(tmp, kind="study") as run:
            started = time.perf_counter()
            record = run_study(
                hypothesis,
                StudyOptions(subjects="rule", rule_options={"price_rule": rule}),
                run=run,
            )
            elapsed = time.perf_counter() - started
        params = record["estimation"]["main"]["params"]
        fitted = [p for p in params if p["op"] in ("~1", "~")]
        diffs = [abs(p["est"] - ols.params[i]) for i, p in enumerate(fitted)]
        diffs += [abs(p["se"] - ml_se[i]) for i, p in enumerate(fitted)]
        diffs.append(abs(record["estimation"]["main"]["r2"]["final_price"] - ols.rsquared))
        out[rule] = {"max_abs_diff": max(diffs), "seconds": round(elapsed, 3)}
    return out


def mug_over_http(conditions: int) -> dict[str, Any]:
    """The LLM-subject mug study against the fake server (see the module docstring)."""
    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER_SCRIPT, str(REPO_ROOT), str(LATENCY_S), str(ROUNDS)],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert proc.stdin is not None and proc.stdout is not None
    base_url = proc.stdout.readline().strip()

    def stats() -> dict[str, Any]:
        proc.stdin.write("stats\n")
        proc.stdin.flush()
        return json.loads(proc.stdout.readline())

    hypothesis = load_example("mug")
    # more conditions in flight than the model's limit, so the limit is never idle
    subset = conditions if conditions < 405 else None
    options = StudyOptions(conditions=subset, jobs=4 * CONCURRENCY)
    try:
        with tempfile.TemporaryDirectory() as tmp:
            cache = Path(tmp) / "cache.sqlite"

            def models() -> StudyModels:
                m = load_model("openai:fake", base_url=base_url, max_concurrency=CONCURRENCY,
                               cache_path=cache)  # fmt: skip
                return StudyModels(m, m, m)

            with Run.create(tmp, kind="study") as run:
                cpu0, wall0 = time.process_time(), time.perf_counter()
                record = run_study(hypothesis, options, run=run, models=models())
                wall, cpu = time.perf_counter() - wall0, time.process_time() - cpu0
            first = stats()
            with Run.create(tmp, kind="study") as run:
                run_study(hypothesis, options, run=run, models=models())
            second = stats()
    finally:
        proc.stdin.close()
        proc.wait(10)
    runs = record["runs"]
    statements = sum(len(r["statements"]) for r in runs)
    calls = sum(r["calls"] for r in runs)
    talk = sum(r["conversation_calls"] for r in runs)
    chain = max(r["calls"] for r in runs)  # calls of one condition are sequential
    ideal = max(first["ok"] * LATENCY_S / CONCURRENCY, chain * LATENCY_S)
    return {
        "conditions": len(runs),
        "server_requests": first["ok"],
        "entity_calls": calls,
        "statements": statements,
        "calls_per_statement": round(talk / statements, 3),
        "wall_s": round(wall, 3),
        "ideal_s": round(ideal, 3),
        "ratio_to_ideal": round(wall / ideal, 3),
        "max_in_flight": first["max_in_flight"],
        "rerun_server_requests": second["ok"] - first["ok"],
        "client_cpu_ms_per_condition": round(1000 * cpu / len(runs), 3),
    }


def pipeline_cpu() -> dict[str, Any]:
    """CPU per condition of the pipeline outside LLM calls: a mug study on the in-process
    scripted world (no cache), minus the CPU of sending the very same requests straight
    through the same model stack afterwards."""
    from silicolab.llm.base import run_sync
    from silicolab.studies.offline import offline_world

    hypothesis = load_example("mug")
    world = offline_world(hypothesis, rounds=ROUNDS)
    requests: list[Any] = []

    def recording(request: Any) -> str:
        requests.append(request)
        return world(request)

    model = load_model("scripted", fn=recording)
    models = StudyModels(model, model, model)
    with tempfile.TemporaryDirectory() as tmp:
        with Run.create(tmp, kind="study") as warm:  # imports and caches warmed up
            run_study(hypothesis, StudyOptions(conditions=10), run=warm, models=models)
        requests.clear()
        with Run.create(tmp, kind="study") as run:
            cpu0 = time.process_time()
            record = run_study(hypothesis, StudyOptions(jobs=64), run=run, models=models)
            total = time.process_time() - cpu0
    replay = load_model("scripted", fn=world)

    async def resend() -> None:
        for r in requests:
            await replay.acomplete(r)

    cpu0 = time.process_time()
    run_sync(resend())
    llm = time.process_time() - cpu0
    n = len(record["runs"])
    return {
        "conditions": n,
        "llm_calls": len(requests),
        "total_cpu_ms_per_condition": round(1000 * total / n, 3),
        "llm_cpu_ms_per_condition": round(1000 * llm / n, 3),
        "pipeline_cpu_ms_per_condition": round(1000 * (total - llm) / n, 3),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 mug conditions, not 405")
    args = parser.parse_args()
    result = {
        "machine": platform.platform(),
        "auction_rule_based": auction_against_theory(),
        "mug_llm_http": mug_over_http(100 if args.quick else 405),
        "pipeline_cpu": pipeline_cpu(),
    }
    RESULTS_PATH.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_PATH.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps(result, indent=2))


if __name__ == "__main__":
    main()
