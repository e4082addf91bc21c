"""Benchmark of ``silicolab.sim`` conversations against the local fake LLM server.

Run ``.venv/bin/python benchmarks/bench_sim.py [--quick]`` from the repository root. It prints a
table and writes ``benchmarks/results/bench_sim.json``. No network beyond 127.0.0.1 is used: every
model call goes to :class:`tests.support.openai_server.FakeLLMServer`, started in its own process
(as in ``benchmarks/bench_llm.py``) so the server does not share the client's interpreter and GIL.

What is measured, and why: a simulation study runs many conversations at once through one shared
model, so the question is whether the conversation layer keeps the model's concurrency limit busy
and how many LLM calls each statement costs. 200 two-agent conversations (50 with ``--quick``) of
20 statements each, protocol ``"ordered"``, are launched together with :func:`asyncio.gather`
through ONE ``load_model("openai:fake", max_concurrency=64, cache_path=None)`` shared by every
:class:`~silicolab.sim.GenerativeAgent` (components: Identity + Observation), with 100 ms of
injected server latency. Two passes:

1. no coordinator: one call per statement;
2. a coordinator (a ``GenerativeAgent`` too) that decides continue/stop after each statement; the
   server always answers "continue", so every conversation still reaches the 20-statement cap.

Reported per pass: elapsed wall time; the ideal wall time, ``max(total calls x 0.1 s / 64,
calls per conversation x 0.1 s)`` (the concurrency limit is the bottleneck unless one
conversation's sequential chain of calls is longer); the ratio elapsed/ideal (target 1.15x); LLM
calls per agent statement (target <= 2, coordinator included); and the ledger's token totals
against the server's counts (they must agree). Nothing here asserts on timing: the targets are
reported, never enforced, because wall time depends on the machine's load.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import sys
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.support.server_process import ServerProcess  # noqa: E402

from silicolab.llm import load_model  # noqa: E402
from silicolab.sim import GenerativeAgent, Identity, Observation  # noqa: E402
from silicolab.sim.conversation import Conversation, arun_conversation  # noqa: E402

KEY_ENV = "SILICOLAB_BENCH_KEY"
MODEL_SPEC = "openai:fake"
LATENCY_S = 0.1
CONCURRENCY = 64
STATEMENTS = 20
RATIO_TARGET = 1.15
CALLS_PER_STATEMENT_TARGET = 2.0
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_sim.json"

# The server process: structured requests (the coordinator's continue/stop choice) get option 1,
# "continue"; everything else gets a short statement. Commands on stdin: "stats" prints the
# counters as one JSON line, "reset" zeroes them, end of input stops the server.
_SERVER_SCRIPT = """
import json, sys
sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import FakeLLMServer

def reply(body):
    if body.get("response_format"):
        return json.dumps({"choice": 1})
    return "I would offer a fair price for the mug, perhaps five euros if it is in good shape."

server = FakeLLMServer(reply=reply, latency_s=float(sys.argv[2]), models=("fake",)).start()
print(server.base_url, flush=True)
for line in sys.stdin:
    command = line.strip()
    if command == "stats":
        s = server.stats
        print(json.dumps({"requests": s.requests, "ok": s.ok, "faults": s.faults,
                          "errors": s.errors, "prompt_tokens": s.prompt_tokens,
                          "completion_tokens": s.completion_tokens,
                          "max_in_flight": s.max_in_flight}), flush=True)
    elif command == "reset":
        server.reset_stats()
        print("ok", flush=True)
server.stop()
"""


def _agents(model: Any, i: int) -> list[GenerativeAgent]:
    """The two participants of conversation ``i`` (distinct names keep prompts distinct)."""
    seller = GenerativeAgent(
        f"Alice{i}", model, [Identity("{name} sells a second-hand mug."), Observation(n=10)]
    )
    buyer = GenerativeAgent(
        f"Bob{i}", model, [Identity("{name} wants a mug, cheaply."), Observation(n=10)]
    )
    return [seller, buyer]


def _coordinator(model: Any, i: int) -> GenerativeAgent:
    """A model-backed coordinator that decides continue/stop after each statement."""
    return GenerativeAgent(
        f"Coordinator{i}",
        model,
        [Identity("{name} moderates a sales conversation and ends it when it is over.")],
    )


async def bench_pass(
    model: Any, server: ServerProcess, n_conversations: int, with_coordinator: bool
) -> dict[str, Any]:
    """Run ``n_conversations`` conversations at once; time them and reconcile the counters."""
    model.ledger.reset()
    server.reset()
    opening = "Alice sells a mug; Bob may buy it."
    convs = [
        arun_conversation(
            _agents(model, i),
            protocol="ordered",
            opening=opening.replace("Alice", f"Alice{i}").replace("Bob", f"Bob{i}"),
            coordinator=_coordinator(model, i) if with_coordinator else None,
            max_statements=STATEMENTS,
            seed=i,
        )
        for i in range(n_conversations)
    ]
    cpu_started = time.process_time()
    started = time.perf_counter()
    results: list[Conversation] = await asyncio.gather(*convs)
    elapsed = time.perf_counter() - started
    cpu = time.process_time() - cpu_started
    ledger = model.ledger.summary()
    served = server.stats()

    statements = sum(len(c.statements) for c in results)
    entity_acts = sum(c.llm_calls for c in results)
    calls = int(ledger["calls"])
    calls_per_conversation = calls / n_conversations
    ideal_throughput = calls * LATENCY_S / CONCURRENCY
    ideal_chain = calls_per_conversation * LATENCY_S
    ideal = max(ideal_throughput, ideal_chain)
    return {
        "coordinator": with_coordinator,
        "conversations": n_conversations,
        "statements": statements,
        "stop_reasons": sorted({c.stop_reason for c in results}),
        "elapsed_s": elapsed,
        "process_cpu_s": cpu,
        "ideal_s": ideal,
        "ideal_throughput_s": ideal_throughput,
        "ideal_chain_s": ideal_chain,
        "ratio": elapsed / ideal,
        "ratio_target": RATIO_TARGET,
        "llm_calls": calls,
        "entity_acts": entity_acts,
        "calls_per_statement": calls / statements,
        "calls_per_statement_target": CALLS_PER_STATEMENT_TARGET,
        "ledger": {
            "calls": calls,
            "errors": ledger.get("errors"),
            "retries": ledger.get("retries"),
            "cache_hits": ledger.get("cache_hits"),
            "input_tokens": ledger["input_tokens"],
            "output_tokens": ledger["output_tokens"],
        },
        "server": served,
        "tokens_match": (
            ledger["input_tokens"] == served["prompt_tokens"]
            and ledger["output_tokens"] == served["completion_tokens"]
        ),
        "calls_match": calls == served["ok"],
    }


async def _main(quick: bool) -> dict[str, Any]:
    os.environ.setdefault(KEY_ENV, "bench-key-not-secret")
    n_conversations = 50 if quick else 200
    server = ServerProcess(_SERVER_SCRIPT, str(REPO_ROOT), str(LATENCY_S))
    try:
        model = load_model(
            MODEL_SPEC,
            base_url=server.base_url,
            api_key_env=KEY_ENV,
            max_concurrency=CONCURRENCY,
            cache_path=None,
        )
        try:
            # Warm-up: open connections and import lazily loaded modules before timing.
            await asyncio.gather(
                *(model.agenerate(f"warm-up {i}", max_tokens=4) for i in range(CONCURRENCY))
            )
            plain = await bench_pass(model, server, n_conversations, with_coordinator=False)
            coordinated = await bench_pass(model, server, n_conversations, with_coordinator=True)
        finally:
            await model.aclose()
    finally:
        server.close()
    return {
        "latency_s": LATENCY_S,
        "max_concurrency": CONCURRENCY,
        "statements_per_conversation": STATEMENTS,
        "passes": {"ordered": plain, "ordered+coordinator": coordinated},
    }


def _print_report(results: dict[str, Any]) -> None:
    print(
        f"silicolab.sim conversations ({results['mode']}): "
        f"{results['statements_per_conversation']} statements each, protocol 'ordered', "
        f"{results['latency_s'] * 1e3:.0f} ms server latency, "
        f"max_concurrency {results['max_concurrency']}, server in its own process"
    )
    rows = [
        ("conversations", lambda p: f"{p['conversations']}"),
        ("statements", lambda p: f"{p['statements']}"),
        ("stop reasons", lambda p: ",".join(p["stop_reasons"])),
        ("LLM calls (ledger)", lambda p: f"{p['llm_calls']}"),
        ("entity acts", lambda p: f"{p['entity_acts']}"),
        ("calls / statement (<= 2)", lambda p: f"{p['calls_per_statement']:.3f}"),
        ("elapsed", lambda p: f"{p['elapsed_s']:.2f} s"),
        ("ideal: calls x 0.1 s / 64", lambda p: f"{p['ideal_throughput_s']:.2f} s"),
        ("ideal: one chain", lambda p: f"{p['ideal_chain_s']:.2f} s"),
        ("ideal (max)", lambda p: f"{p['ideal_s']:.2f} s"),
        ("elapsed / ideal (1.15x)", lambda p: f"{p['ratio']:.2f}x"),
        ("client CPU", lambda p: f"{p['process_cpu_s']:.2f} s"),
        ("server max in flight", lambda p: f"{p['server']['max_in_flight']}"),
        ("server ok / errors", lambda p: f"{p['server']['ok']} / {p['server']['errors']}"),
        (
            "ledger retries / errors",
            lambda p: f"{p['ledger']['retries']} / {p['ledger']['errors']}",
        ),
        ("ledger input tokens", lambda p: f"{p['ledger']['input_tokens']}"),
        ("server prompt tokens", lambda p: f"{p['server']['prompt_tokens']}"),
        ("ledger output tokens", lambda p: f"{p['ledger']['output_tokens']}"),
        ("server completion tokens", lambda p: f"{p['server']['completion_tokens']}"),
        ("tokens match / calls match", lambda p: f"{p['tokens_match']} / {p['calls_match']}"),
    ]
    passes = results["passes"]
    names = list(passes)
    width = max(len(r[0]) for r in rows)
    print(f"\n{'':<{width}}  " + "  ".join(f"{n:>22}" for n in names))
    for label, fmt in rows:
        print(f"{label:<{width}}  " + "  ".join(f"{fmt(passes[n]):>22}" for n in names))


def main(argv: list[str] | None = None) -> int:
    """Run both passes, print the table and write the JSON results."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 conversations instead of 200")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    args = parser.parse_args(argv)

    results = asyncio.run(_main(args.quick))
    results = {
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        **results,
    }
    _print_report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
