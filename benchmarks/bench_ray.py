"""Benchmark of the Ray executor on a local two-node cluster, and a simulation of the plan.

Run ``.venv/bin/python benchmarks/bench_ray.py [--quick]`` from the repository root. It
starts a head and a second node on 127.0.0.1 (one CPU each, as ``tests/scale`` does),
prints what it measures and writes ``benchmarks/results/bench_ray.json``:

1. **CPU-bound units** - 250 reference CausaLab episodes (50 of each main suite), 2 at a
   time, through the process pool (2 workers) and through Ray (2 one-CPU nodes). First as
   a user's commands, each in a fresh Python process, alternating, three of each
   (medians): ``silicolab bench causalab --jobs 2 [--executor ray] --json`` itself (run
   directory, events and HTML report included), then what it does without its report:
   that command's wall time (interpreter, imports, exit) and its batch (from the executor
   check, so joining the cluster and starting the job's worker processes, to the table);
   target: Ray within 1.5x of the pool. Then in this process:
   the pool, Ray's first batch of this driver and again once its workers are up (the
   warm ratio), and the overhead per unit with no-op units.
2. **LLM-bound units** - 1,000 units of one call each against the fake OpenAI server at
   200 ms latency, through Ray's unit runners on both nodes with a global limit of 64
   calls in flight, after a first batch of 128 units has started the runners and the
   LLM service (its time is shown apart); the ideal is ``ceil(1000 / 64) * 0.2 s``
   (target within 1.2x), the server's maximum concurrency (must be <= 64) and
   its request count (must equal the ledger's), and the messages the LLM service
   received per call (workers batch their begins and ends). Also the round trip to the
   LLM service.
3. **The plan in docs/scale.md** - a discrete-event simulation (``simulate_plan``) of a
   10,000-condition study on 100 nodes against a provider's limits, using the measured
   service costs.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import json
import math
import os
import statistics
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

from benchmarks.ray_plan import Plan, simulate_plan  # noqa: E402
from tests.support.openai_server import FakeLLMServer  # noqa: E402
from tests.support.ray_cluster import local_cluster  # noqa: E402

from silicolab.bench.causalab import CausaLabBench, arun_causalab  # noqa: E402
from silicolab.bench.harness import ExecutorChoice, sync  # noqa: E402
from silicolab.llm import load_model  # noqa: E402
from silicolab.runtime import RayExecutor  # noqa: E402

RESULTS = REPO_ROOT / "benchmarks" / "results" / "bench_ray.json"
SUITES = ("3nodes", "4nodes", "5nodes", "6nodes", "7nodes")


def noop(item: int) -> int:
    """A unit that does nothing: what is left is the executor's overhead."""
    return item


async def one_call(item: int, model: Any) -> str:
    """An LLM-bound unit: one distinct call."""
    return (await model.agenerate(f"question {item}", tag="bench")).text


def causalab_bench(episodes: int, executor: ExecutorChoice) -> CausaLabBench:
    """The CPU-bound batch: ``episodes`` reference episodes of each main suite, 2 at once."""
    return CausaLabBench(suites=SUITES, episodes=episodes, jobs=2, executor=executor)


def one_command(kind: str, episodes: int) -> None:
    """What ``silicolab bench causalab --jobs 2 [--executor ray]`` does, without its report
    (the same for both executors): check the executor, run; prints the time from the check
    to the table (joining the cluster and the job's worker processes included) and the
    accuracies."""
    start = time.perf_counter()
    executor = ExecutorChoice(kind).check()
    table = sync(arun_causalab(causalab_bench(episodes, executor)), twin="arun_causalab")
    batch = round(time.perf_counter() - start, 3)
    print(json.dumps({"batch_s": batch, "accuracy": table.accuracy.tolist()}))
    if kind == "ray":  # as the CLI does when a command ends
        from silicolab.runtime.ray import leave_cluster

        leave_cluster()


def driver_env(address: str) -> dict[str, str]:
    """This process's environment for a fresh driver of the test cluster at ``address``."""
    return {**os.environ, "RAY_ADDRESS": address, "RAY_AUTH_MODE": "disabled"}


def timed_command(kind: str, episodes: int, address: str) -> dict[str, Any]:
    """:func:`one_command` in a fresh Python process: its wall time (interpreter start,
    imports and exit included), its batch time and accuracies."""
    env = driver_env(address)
    argv = [sys.executable, __file__, "--one-command", kind, "--episodes", str(episodes)]
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
    wall = round(time.perf_counter() - start, 3)
    return {"command_s": wall, **json.loads(done.stdout.splitlines()[-1])}


def timed_cli(kind: str, episodes: int, address: str) -> dict[str, Any]:
    """``silicolab bench causalab --jobs 2 --executor KIND --json`` as a user runs it, in a
    fresh process with a run directory of its own: its wall time and accuracies."""
    env = driver_env(address)
    with tempfile.TemporaryDirectory(prefix="bench-ray-") as runs_dir:
        options = ["--jobs", "2", "--episodes", str(episodes), "--executor", kind]
        argv = [sys.executable, "-m", "silicolab.cli.app", "bench", "causalab", *options]
        argv += ["--runs-dir", runs_dir, "--json"]
        start = time.perf_counter()
        done = subprocess.run(argv, env=env, capture_output=True, text=True, check=True)
        wall = round(time.perf_counter() - start, 3)
    rows = json.loads(done.stdout)["rows"]
    return {"cli_s": wall, "accuracy": [row["accuracy"] for row in rows]}


def cpu_bound(episodes: int, address: str, repeats: int = 3) -> dict[str, Any]:
    """Fresh drivers, as a user's commands (``repeats`` of each, alternating; medians),
    then batches in this process once its Ray workers are up."""
    out: dict[str, Any] = {"units": episodes * len(SUITES), "repeats": repeats}
    runs: dict[str, list[dict[str, Any]]] = {"local": [], "ray": []}
    for _ in range(repeats):
        for kind in runs:
            cli = timed_cli(kind, episodes, address)
            command = timed_command(kind, episodes, address)
            runs[kind].append({**command, "cli_s": cli["cli_s"], "cli_accuracy": cli["accuracy"]})
    accuracies = [r[f] for kind in runs for r in runs[kind] for f in ("accuracy", "cli_accuracy")]
    for field in ("cli_s", "command_s", "batch_s"):
        pool = statistics.median(r[field] for r in runs["local"])
        ray = statistics.median(r[field] for r in runs["ray"])
        name = field.removesuffix("_s")
        out[f"{name}_pool_s"], out[f"{name}_ray_s"] = pool, ray
        out[f"{name}_ratio"] = round(ray / pool, 3)
        out[f"{name}_ray_runs_s"] = [r[field] for r in runs["ray"]]
        out[f"{name}_pool_runs_s"] = [r[field] for r in runs["local"]]
    local, ray_choice = ExecutorChoice(), ExecutorChoice("ray")
    for name, executor in (("pool", local), ("ray_first", ray_choice), ("ray_warm", ray_choice)):
        start = time.perf_counter()
        bench = causalab_bench(episodes, executor.check())
        table = sync(arun_causalab(bench), twin="arun_causalab")
        out[f"{name}_s"] = round(time.perf_counter() - start, 3)
        accuracies.append(table.accuracy.tolist())
    out["warm_ratio"] = round(out["ray_warm_s"] / out["pool_s"], 3)  # workers already up
    units = 500
    start = time.perf_counter()
    RayExecutor(64, progress=False).map(noop, range(units))
    out["noop_overhead_per_unit_ms"] = round((time.perf_counter() - start) / units * 1e3, 3)
    out["same_results"] = all(a == accuracies[0] for a in accuracies)
    return out


def llm_bound(units: int, limit: int, latency: float) -> dict[str, Any]:
    out: dict[str, Any] = {"units": units, "limit": limit, "latency_s": latency}
    with FakeLLMServer(latency_s=latency) as server:
        model = load_model("openai:fake-model", base_url=server.base_url, max_concurrency=limit)
        executor = RayExecutor(2 * limit, progress=False)
        fn = functools.partial(one_call, model=model)
        start = time.perf_counter()
        executor.map(fn, range(-2 * limit, 0), key=str)  # starts the runners and the service
        out["first_batch_s"] = round(time.perf_counter() - start, 3)
        server.reset_stats()
        model.ledger.reset()
        before = service_messages(model)
        start = time.perf_counter()
        results = executor.map(fn, range(units), key=str)
        wall = time.perf_counter() - start
        stats = server.stats
        ledger = model.ledger.summary()
        out["service_messages_per_call"] = round((service_messages(model) - before) / units, 3)
    ideal = math.ceil(units / limit) * latency
    out.update(wall_s=round(wall, 3), ideal_s=round(ideal, 3), ratio=round(wall / ideal, 3))
    out.update(server_max_concurrency=stats.max_in_flight, server_requests=stats.ok)
    out.update(ledger_calls=ledger["calls"], errors=sum(not r.ok for r in results))
    out.update(service=service_round_trip())
    return out


def service_messages(model: Any) -> int:
    """How many messages the model's LLM service has received from workers' channels."""
    import ray

    return int(ray.get(model._ray_service[1].summary.remote())["messages"])


def service_round_trip(calls: int = 300) -> dict[str, float]:
    """The LLM service actor's costs: the mean time of a begin+end pair made one after
    another from the driver (two round trips), the time per message when 2,000 pairs are
    sent at once (the actor saturated: what one message costs Ray and the service, an
    upper bound since the sender shares the CPUs), and the service's own Python per pair
    (in-process, without Ray)."""
    import ray

    from silicolab.llm.ledger import Prices
    from silicolab.llm.ray._service import LLMService
    from silicolab.llm.types import Completion, Usage

    config = {"cache_path": None, "max_concurrency": None, "requests_per_minute": None,
              "tokens_per_minute": None, "prices": Prices()}  # fmt: skip
    done = Completion("ok", Usage(10, 2))
    actor = ray.remote(LLMService).options(num_cpus=0).remote(**config)
    ray.get(actor.summary.remote())

    async def remote_pairs() -> float:
        start = time.perf_counter()
        for i in range(calls):
            _, lease = await actor.begin.remote(f"k{i}", "t", 0)
            await actor.end.remote(f"k{i}", "t", lease, 0, done, None)
        return (time.perf_counter() - start) / calls

    async def saturated(pairs: int = 2000) -> float:
        start = time.perf_counter()
        begun = [actor.begin.remote(f"s{i}", "t", 0) for i in range(pairs)]
        leases = [lease for _, lease in await asyncio.gather(*begun)]
        ended = [actor.end.remote(f"s{i}", "t", x, 0, done, None) for i, x in enumerate(leases)]
        await asyncio.gather(*ended)
        return (time.perf_counter() - start) / (2 * pairs)

    async def local_pairs() -> float:
        service = LLMService(**config)
        start = time.perf_counter()
        for i in range(calls * 10):
            _, lease = await service.begin(f"k{i}", "t", 0)
            service.end(f"k{i}", "t", lease, 0, done, None)
        return (time.perf_counter() - start) / (calls * 10)

    remote, busy = asyncio.run(remote_pairs()), asyncio.run(saturated())
    ray.kill(actor)
    return {
        "pair_ms": round(remote * 1e3, 3),
        "saturated_message_ms": round(busy * 1e3, 4),
        "service_python_pair_ms": round(asyncio.run(local_pairs()) * 1e3, 4),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer units (a smoke run)")
    parser.add_argument("--one-command", choices=("local", "ray"), help=argparse.SUPPRESS)
    parser.add_argument("--episodes", type=int, default=50, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one_command:
        one_command(args.one_command, args.episodes)
        return
    results: dict[str, Any] = {}
    with local_cluster(nodes=2, cpus=1) as cluster:
        results["cpu_bound"] = cpu_bound(10 if args.quick else 50, cluster.address)
        print("cpu-bound:", json.dumps(results["cpu_bound"]), flush=True)
        results["llm_bound"] = llm_bound(200 if args.quick else 1000, 64, 0.2)
        print("llm-bound:", json.dumps(results["llm_bound"]), flush=True)
    service = results["llm_bound"]["service"]
    plan = Plan(
        round_trip_s=service["pair_ms"] / 2e3, service_cpu_s=service["saturated_message_ms"] / 1e3
    )
    results["plan"] = simulate_plan(plan)
    print("plan:", json.dumps(results["plan"]), flush=True)
    RESULTS.parent.mkdir(parents=True, exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
    llm = results["llm_bound"]
    ok = (
        llm["server_max_concurrency"] <= llm["limit"]
        and llm["server_requests"] == llm["ledger_calls"]
    )
    sys.exit(0 if ok and results["cpu_bound"]["same_results"] else 1)


if __name__ == "__main__":
    main()
