"""Benchmark of silicolab's language-model layer against the local fake LLM server.

Run ``.venv/bin/python benchmarks/bench_llm.py [--quick]`` from the repository root. It prints a
table and writes ``benchmarks/results/bench_llm.json``. No network beyond 127.0.0.1 is used: every
model call goes to :class:`tests.support.openai_server.FakeLLMServer`.

What is measured, and why:

1. **Fault tolerance** - 500 distinct calls at concurrency 32 against a server that faults 20 % of
   requests (429, 500, dropped connection, malformed body, hang past the client's 0.5 s timeout).
   Every call must succeed within 6 attempts (<= 5 retries), and the ledger's token totals, read
   from response ``usage``, must equal the server's totals over the responses it served. The same
   500 calls are then repeated and must all be cache hits (0 requests reach the server).
2. **Concurrency** - 256 calls with 200 ms server latency at concurrency 64; the ideal is
   ``ceil(256 / 64) * 0.2 s = 0.8 s`` (target: within 1.10x). The client's CPU per call is
   spent serially at each wave of completions, so it decides the ratio: the same workload
   through the bare SDK (httpx, ~1 ms of CPU per call) is shown beside the layer (its native
   HTTP/1.1 transport, ~0.1 ms per call) for comparison.
3. **Overhead** - sequential calls with no server latency through the raw ``openai.AsyncOpenAI``
   client versus through ``load_model`` (fresh cache, all misses), interleaved call by call so both
   see the same machine state; the per-call mean difference is the layer's cost (target < 1 ms).
   The same prompts are then repeated for the mean latency of a cache hit (target < 1 ms).

The process exits with status 1 when a *required* check fails (the fault-tolerance guarantees);
the latency targets are reported but do not change the exit status.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import math
import os
import platform
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

import openai  # noqa: E402
from tests.support.openai_server import FakeLLMServer  # noqa: E402

try:
    from silicolab.llm import Completion, load_model
except ImportError as _exc:  # the LLM layer is developed in parallel
    print(f"silicolab.llm is not importable yet ({_exc}); nothing to benchmark.", file=sys.stderr)
    raise SystemExit(2) from _exc

KEY_ENV = "SILICOLAB_BENCH_KEY"
MODEL_SPEC = "openai:fake-model"
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_llm.json"


def _messages(label: str, i: int) -> list[dict[str, str]]:
    """A distinct, deterministic prompt per call (distinct so that no call is a cache hit)."""
    return [
        {"role": "system", "content": "You are a careful causal scientist."},
        {"role": "user", "content": f"{label} call {i}: does variable X{i} cause Y{i}?"},
    ]


# --------------------------------------------------------------------------- 1. fault tolerance


async def bench_fault_tolerance(n_calls: int, cache_dir: Path) -> dict[str, Any]:
    """Many calls through random faults, then the same calls again from the cache."""
    server = FakeLLMServer(
        fault_rate=0.2,
        fault_kinds=("429", "500", "drop", "malformed", "timeout"),
        timeout_hang_s=10.0,
        seed=1234,
    )
    with server:
        model = load_model(
            MODEL_SPEC,
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            cache_path=cache_dir / "faults.sqlite",
            max_concurrency=32,
            max_retries=5,
            timeout_s=0.5,
        )
        try:

            async def run_all() -> list[Completion | BaseException]:
                calls = [
                    model.agenerate(
                        _messages("fault", i), temperature=0.0, max_tokens=32, tag="faults"
                    )
                    for i in range(n_calls)
                ]
                return await asyncio.gather(*calls, return_exceptions=True)

            started = time.perf_counter()
            first = await run_all()
            elapsed = time.perf_counter() - started
            served = server.stats
            ledger = model.ledger.summary()

            server.reset_stats()
            started = time.perf_counter()
            second = await run_all()
            elapsed_cached = time.perf_counter() - started
            served_again = server.stats
        finally:
            await model.aclose()

    ok = [r for r in first if isinstance(r, Completion)]
    failed = [r for r in first if not isinstance(r, Completion)]
    hits = [r for r in second if isinstance(r, Completion) and r.cached]
    return {
        "calls": n_calls,
        "successes": len(ok),
        "failures": len(failed),
        "failure_examples": [repr(e)[:200] for e in failed[:3]],
        "max_attempts": max((c.attempts for c in ok), default=0),
        "total_attempts": sum(c.attempts for c in ok),
        "server_requests": served.requests,
        "server_ok": served.ok,
        "server_faults_by_kind": dict(sorted(served.faults_by_kind.items())),
        "ledger_input_tokens": ledger["input_tokens"],
        "ledger_output_tokens": ledger["output_tokens"],
        "ledger_retries": ledger["retries"],
        "server_prompt_tokens": served.prompt_tokens,
        "server_completion_tokens": served.completion_tokens,
        "tokens_equal": (
            ledger["input_tokens"] == served.prompt_tokens
            and ledger["output_tokens"] == served.completion_tokens
        ),
        "elapsed_s": elapsed,
        "second_pass_server_requests": served_again.requests,
        "second_pass_cache_hits": len(hits),
        "second_pass_elapsed_s": elapsed_cached,
    }


# --------------------------------------------------------------------------- 2. concurrency


async def bench_concurrency(
    n_calls: int, concurrency: int, latency_s: float, repeats: int = 3
) -> dict[str, Any]:
    """Calls with server latency, bounded by the model's concurrency limit.

    The same workload is also run through the bare ``openai.AsyncOpenAI`` client under an
    ``asyncio.Semaphore``: the SDK's CPU cost per call (about a millisecond) is serialised
    within each wave of ``concurrency`` calls, which is why the layer sends through its own
    HTTP/1.1 transport; ``ratio_vs_raw_sdk`` shows the difference. Raw and
    layered runs alternate ``repeats`` times and the best of each is reported, because this
    benchmark shares two cores with whatever else is running.
    """
    with FakeLLMServer(latency_s=latency_s) as server:
        raw = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="bench-key", max_retries=0, timeout=30.0
        )
        model = load_model(
            MODEL_SPEC,
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            cache_path=None,
            max_concurrency=concurrency,
            max_retries=0,
            timeout_s=30.0,
        )
        gate = asyncio.Semaphore(concurrency)

        async def raw_call(label: str, i: int) -> None:
            async with gate:
                await raw.chat.completions.create(
                    model="fake-model",
                    messages=_messages(label, i),  # type: ignore[arg-type]
                    temperature=0.0,
                )

        raw_runs: list[float] = []
        layer_runs: list[float] = []
        cpu_runs: list[float] = []
        max_in_flight = 0
        successes = 0
        try:
            # One-time SDK set-up (lazy imports, model classes) stays out of the timing.
            await raw_call("warm-up", 0)
            await model.agenerate(_messages("warm-up", 0), temperature=0.0, tag="warm-up")
            for rep in range(repeats):
                started = time.perf_counter()
                await asyncio.gather(*(raw_call(f"raw{rep}", i) for i in range(n_calls)))
                raw_runs.append(time.perf_counter() - started)

                server.reset_stats()
                started = time.perf_counter()
                cpu_started = time.process_time()
                results = await asyncio.gather(
                    *(
                        model.agenerate(_messages(f"layer{rep}", i), temperature=0.0, tag="conc")
                        for i in range(n_calls)
                    )
                )
                layer_runs.append(time.perf_counter() - started)
                cpu_runs.append(time.process_time() - cpu_started)
                max_in_flight = max(max_in_flight, server.stats.max_in_flight)
                successes = len(results)
        finally:
            await raw.close()
            await model.aclose()
    ideal = math.ceil(n_calls / concurrency) * latency_s
    elapsed, raw_elapsed = min(layer_runs), min(raw_runs)
    return {
        "calls": n_calls,
        "concurrency": concurrency,
        "latency_s": latency_s,
        "repeats": repeats,
        "successes": successes,
        "server_max_in_flight": max_in_flight,
        "elapsed_s": elapsed,
        "elapsed_runs_s": layer_runs,
        "ideal_s": ideal,
        "ratio": elapsed / ideal,
        "process_cpu_s": min(cpu_runs),
        "raw_sdk_elapsed_s": raw_elapsed,
        "raw_sdk_runs_s": raw_runs,
        "raw_sdk_ratio": raw_elapsed / ideal,
        "ratio_vs_raw_sdk": elapsed / raw_elapsed,
    }


_SERVER_SCRIPT = """
import sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import FakeLLMServer
server = FakeLLMServer(latency_s=float(sys.argv[2])).start()
print(server.base_url, flush=True)
sys.stdin.read()
"""


async def bench_concurrency_separate_server(
    n_calls: int, concurrency: int, latency_s: float, repeats: int = 3
) -> dict[str, Any]:
    """The layered workload of :func:`bench_concurrency` against a server in its own
    process, as a real server would be: the client no longer shares the interpreter (and
    its GIL) with the server, so this is the figure that measures the client."""
    import subprocess

    proc = subprocess.Popen(
        [sys.executable, "-c", _SERVER_SCRIPT, str(REPO_ROOT), str(latency_s)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        base_url = proc.stdout.readline().strip()  # type: ignore[union-attr]
        model = load_model(
            MODEL_SPEC,
            base_url=base_url,
            api_key_env=KEY_ENV,
            cache_path=None,
            max_concurrency=concurrency,
            max_retries=0,
            timeout_s=30.0,
        )
        await model.agenerate(_messages("warm-up", 0), temperature=0.0)
        runs = []
        for rep in range(repeats):
            started = time.perf_counter()
            await asyncio.gather(
                *(
                    model.agenerate(_messages(f"sep{rep}", i), temperature=0.0)
                    for i in range(n_calls)
                )
            )
            runs.append(time.perf_counter() - started)
        await model.aclose()
    finally:
        proc.stdin.close()  # type: ignore[union-attr]
        proc.wait(10)
    ideal = math.ceil(n_calls / concurrency) * latency_s
    return {
        "elapsed_s": min(runs),
        "elapsed_runs_s": runs,
        "ideal_s": ideal,
        "ratio": min(runs) / ideal,
    }


# --------------------------------------------------------------------------- 3. overhead


async def bench_overhead(n_calls: int, cache_dir: Path, warmup: int = 20) -> dict[str, Any]:
    """Per-call cost of the layer over the bare SDK, and the latency of a cache hit."""
    with FakeLLMServer(latency_s=0.0) as server:
        raw = openai.AsyncOpenAI(
            base_url=server.base_url, api_key="bench-key", max_retries=0, timeout=30.0
        )
        cached_model = load_model(
            MODEL_SPEC,
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            cache_path=cache_dir / "overhead.sqlite",
            max_concurrency=32,
            timeout_s=30.0,
        )
        plain_model = load_model(
            MODEL_SPEC,
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            cache_path=None,
            max_concurrency=32,
            timeout_s=30.0,
        )
        raw_ms: list[float] = []
        layer_ms: list[float] = []
        nocache_ms: list[float] = []
        hit_ms: list[float] = []
        try:

            async def timed_raw(i: int) -> float:
                started = time.perf_counter()
                await raw.chat.completions.create(
                    model="fake-model",
                    messages=_messages("raw", i),  # type: ignore[arg-type]
                    temperature=0.0,
                    max_tokens=32,
                )
                return (time.perf_counter() - started) * 1e3

            async def timed_layer(model: Any, label: str, i: int) -> float:
                started = time.perf_counter()
                await model.agenerate(
                    _messages(label, i), temperature=0.0, max_tokens=32, tag="overhead"
                )
                return (time.perf_counter() - started) * 1e3

            for i in range(warmup):  # open connections, import lazily loaded modules
                await timed_raw(-1 - i)
                await timed_layer(cached_model, "warm", i)
                await timed_layer(plain_model, "warm", i)
            for i in range(n_calls):
                raw_ms.append(await timed_raw(i))
                layer_ms.append(await timed_layer(cached_model, "layer", i))
                nocache_ms.append(await timed_layer(plain_model, "nocache", i))
            misses_ok = cached_model.ledger.summary()["cache_hits"] == 0
            for i in range(n_calls):
                hit_ms.append(await timed_layer(cached_model, "layer", i))
            hits = cached_model.ledger.summary()["cache_hits"]
        finally:
            await raw.close()
            await cached_model.aclose()
            await plain_model.aclose()

    def mean(values: list[float]) -> float:
        return statistics.fmean(values)

    def median(values: list[float]) -> float:
        return statistics.median(values)

    return {
        "calls": n_calls,
        "raw_mean_ms": mean(raw_ms),
        "raw_median_ms": median(raw_ms),
        "layer_mean_ms": mean(layer_ms),
        "layer_median_ms": median(layer_ms),
        "layer_nocache_mean_ms": mean(nocache_ms),
        "overhead_mean_ms": mean(layer_ms) - mean(raw_ms),
        "overhead_median_ms": median(layer_ms) - median(raw_ms),
        "overhead_nocache_mean_ms": mean(nocache_ms) - mean(raw_ms),
        "first_pass_all_misses": misses_ok,
        "cache_hits": hits,
        "cache_hit_mean_ms": mean(hit_ms),
        "cache_hit_median_ms": median(hit_ms),
    }


# --------------------------------------------------------------------------- report


def _checks(results: dict[str, Any]) -> dict[str, dict[str, Any]]:
    faults, conc, over = results["fault_tolerance"], results["concurrency"], results["overhead"]
    return {
        "all calls succeed through faults": {
            "required": True,
            "ok": faults["successes"] == faults["calls"],
        },
        "max attempts per call <= 6": {"required": True, "ok": faults["max_attempts"] <= 6},
        "ledger tokens == server ok tokens": {"required": True, "ok": faults["tokens_equal"]},
        "repeat pass: 0 server requests": {
            "required": True,
            "ok": faults["second_pass_server_requests"] == 0
            and faults["second_pass_cache_hits"] == faults["calls"],
        },
        "concurrency: within 1.10x of the ideal (server in its own process)": {
            "required": False,
            "ok": conc["separate_server"]["ratio"] <= 1.1,
        },
        "concurrency: within 1.10x of the ideal (server in-process)": {
            "required": False,
            "ok": conc["ratio"] <= 1.1,
        },
        "layer overhead < 1 ms/call": {"required": False, "ok": over["overhead_mean_ms"] < 1.0},
        "cache hit < 1 ms": {"required": False, "ok": over["cache_hit_mean_ms"] < 1.0},
    }


def _print_report(results: dict[str, Any]) -> None:
    f, c, o = results["fault_tolerance"], results["concurrency"], results["overhead"]
    n_faults = sum(f["server_faults_by_kind"].values())
    rows = [
        ("#", "1. fault tolerance", ""),
        ("successes", f"{f['successes']} / {f['calls']}", "must equal calls"),
        ("max attempts per call", str(f["max_attempts"]), "<= 6 (<= 5 retries)"),
        (
            "server requests / faults",
            f"{f['server_requests']} / {n_faults}",
            json.dumps(f["server_faults_by_kind"]),
        ),
        (
            "input tokens ledger | server",
            f"{f['ledger_input_tokens']} | {f['server_prompt_tokens']}",
            "equal" if f["tokens_equal"] else "DIFFERENT",
        ),
        (
            "output tokens ledger | server",
            f"{f['ledger_output_tokens']} | {f['server_completion_tokens']}",
            "equal" if f["tokens_equal"] else "DIFFERENT",
        ),
        ("elapsed", f"{f['elapsed_s']:.2f} s", "client timeout 0.5 s, concurrency 32"),
        (
            "repeat pass: server requests",
            str(f["second_pass_server_requests"]),
            f"cache hits {f['second_pass_cache_hits']}, {f['second_pass_elapsed_s']:.3f} s",
        ),
        (
            "#",
            "2. concurrency",
            f"{c['calls']} calls x {c['latency_s'] * 1e3:.0f} ms latency @ {c['concurrency']}",
        ),
        (
            f"load_model elapsed (best of {c['repeats']})",
            f"{c['elapsed_s']:.3f} s",
            f"ideal {c['ideal_s']:.3f} s -> ratio {c['ratio']:.2f}x",
        ),
        (
            f"raw AsyncOpenAI elapsed (best of {c['repeats']})",
            f"{c['raw_sdk_elapsed_s']:.3f} s",
            f"ratio to ideal {c['raw_sdk_ratio']:.2f}x; layer/raw {c['ratio_vs_raw_sdk']:.2f}x",
        ),
        (
            "process CPU per load_model run",
            f"{c['process_cpu_s']:.3f} s",
            f"{c['process_cpu_s'] / c['calls'] * 1e3:.2f} ms/call client+server",
        ),
        ("server max in flight", str(c["server_max_in_flight"]), f"limit {c['concurrency']}"),
        (
            "load_model, server in its own process",
            f"{c['separate_server']['elapsed_s']:.3f} s",
            f"ideal {c['ideal_s']:.3f} s -> ratio {c['separate_server']['ratio']:.2f}x",
        ),
        ("#", "3. overhead", f"{o['calls']} sequential calls, 0 ms latency"),
        ("raw AsyncOpenAI mean", f"{o['raw_mean_ms']:.3f} ms", f"median {o['raw_median_ms']:.3f}"),
        (
            "load_model (cache miss) mean",
            f"{o['layer_mean_ms']:.3f} ms",
            f"median {o['layer_median_ms']:.3f}",
        ),
        (
            "overhead per call",
            f"{o['overhead_mean_ms']:+.3f} ms",
            f"target < 1 ms; without cache {o['overhead_nocache_mean_ms']:+.3f} ms",
        ),
        (
            "cache hit mean",
            f"{o['cache_hit_mean_ms']:.3f} ms",
            f"target < 1 ms; median {o['cache_hit_median_ms']:.3f}",
        ),
    ]
    width = max(len(r[0]) for r in rows) + 2
    print(f"silicolab LLM benchmark ({results['mode']})")
    for name, value, note in rows:
        if name == "#":
            print(f"\n{value}" + (f"  ({note})" if note else ""))
            continue
        print(f"  {name:<{width}}{value:>18}   {note}")
    print("\nchecks:")
    for name, check in results["checks"].items():
        kind = "required" if check["required"] else "target"
        print(f"  [{'PASS' if check['ok'] else 'FAIL'}] {name} ({kind})")
    for example in f["failure_examples"]:
        print(f"  failure: {example}")


async def _main(quick: bool) -> dict[str, Any]:
    os.environ.setdefault(KEY_ENV, "bench-key-not-secret")
    logging.getLogger("silicolab").setLevel(logging.ERROR)  # retries are expected here
    with tempfile.TemporaryDirectory(prefix="silicolab-bench-") as tmp:
        cache_dir = Path(tmp)
        faults = await bench_fault_tolerance(200 if quick else 500, cache_dir)
        conc = await bench_concurrency(256, 64, 0.2, repeats=2 if quick else 3)
        conc["separate_server"] = await bench_concurrency_separate_server(
            256, 64, 0.2, repeats=2 if quick else 3
        )
        over = await bench_overhead(100 if quick else 300, cache_dir)
    return {"fault_tolerance": faults, "concurrency": conc, "overhead": over}


def main(argv: list[str] | None = None) -> int:
    """Run every section, print the report, write the JSON; 1 if a required check fails."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (about half the time)")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    args = parser.parse_args(argv)

    results = asyncio.run(_main(args.quick))
    results = {
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "openai_sdk": openai.__version__,
        **results,
    }
    results["checks"] = _checks(results)
    _print_report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2, sort_keys=False) + "\n")
    print(f"\nwrote {args.output}")
    failed = [name for name, c in results["checks"].items() if c["required"] and not c["ok"]]
    return 1 if failed else 0


if __name__ == "__main__":
    raise SystemExit(main())
