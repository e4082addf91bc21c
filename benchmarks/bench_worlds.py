"""Benchmark of every built-in ``silicolab.sim`` world against the local fake LLM server.

Run ``.venv/bin/python benchmarks/bench_worlds.py [--quick]`` from the repository root. It prints
a table and writes ``benchmarks/results/bench_worlds.json``. No network beyond 127.0.0.1 is used:
every model call goes to :class:`tests.support.openai_server.FakeLLMServer`, started in its own
process (as in ``benchmarks/bench_sim.py``) so the server does not share the client's GIL.

What is measured, and why (issue 27, "What it must show"): each world of
:func:`silicolab.sim.worlds.world_names` is played once with ``Simulation.arun(model=M, seed=0)``
where ``M = load_model("openai:fake-model", max_concurrency=64, cache_path=None)`` talks to the
server with 200 ms of injected latency (50 ms with ``--quick``). The server answers validly: a
choice schema gets ``{"choice": 1}``, a number schema ``{"value": n}`` within its bounds, a
narrator asked for JSON gets ``{"event": ..., "updates": {}}``, anything else a short sentence.
A world whose run makes no model call is reported as rule-only.

Reported per world:

- ``calls``: LLM calls in total (the model's ledger; checked against the server's count);
- ``agent calls`` / ``gm calls``: the ledger's ``by_tag`` split; the game master tags its calls
  ``gm``, every other tag (``scene:<name>``, ``survey``, ``parser``) is an entity's call;
- ``actions``: agent actions, the log rows of kind ``action``, ``rejected``, ``survey`` or
  ``statement`` (a conversation's) whose ``who`` is an entity;
- ``calls/action``: (agent calls + gm calls) / actions, the game master's resolution included
  (goal <= 2; Concordia spends about 12 calls per statement);
- ``wall``: elapsed time of ``arun``;
- ``ideal``: the critical path of the calls as they ran, ``waves x latency``. The server
  records when each call starts (it then sleeps ``latency`` before answering). Calls are sorted
  by start; a wave opens with the earliest call not yet in one and takes every call that starts
  before that call ends (start + latency), i.e. every call that overlapped it. Calls of one wave
  ran together, so the run could not have been shorter than one latency per wave. This measure
  takes the engine's order as given (the sequential engine plays actors one after another): it
  does not ask whether more calls could have overlapped, it shows what the run costs beyond
  its own unavoidable waiting, that is the client's overhead (prompt building, HTTP, parsing,
  the engine's bookkeeping);
- ``wall/ideal``: goal within 1.2x. Nothing here asserts on timing: targets are reported only.
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
from silicolab.sim.worlds import load_world, world_names  # noqa: E402

KEY_ENV = "SILICOLAB_BENCH_KEY"
MODEL_SPEC = "openai:fake-model"
CONCURRENCY = 64
RATIO_TARGET = 1.2
CALLS_PER_ACTION_TARGET = 2.0
ACTION_KINDS = ("action", "rejected", "survey", "statement")
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_worlds.json"

# The server process. reply() answers per the request: a JSON schema with "choice" gets option
# 1, one with "value" a number within its bounds, a narrator asked for JSON an event without
# updates, anything else a sentence. It records each call's start (the server sleeps the
# latency before calling reply). Commands on stdin: "starts" prints the starts since the last
# reset as one JSON line, "stats" the counters, "reset" zeroes both; end of input stops it.
_SERVER_SCRIPT = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import FakeLLMServer, message_text

LATENCY = float(sys.argv[2])
STARTS = []

def _number(prop):
    lo = prop.get("minimum", prop.get("exclusiveMinimum"))
    hi = prop.get("maximum", prop.get("exclusiveMaximum"))
    value = 1 if lo is None else lo + 1
    if hi is not None:
        value = min(value, hi)
    return int(value) if prop.get("type") == "integer" else float(value)

def reply(body):
    STARTS.append(time.monotonic() - LATENCY)
    fmt = body.get("response_format") or {}
    schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema") or {}
    props = schema.get("properties", {})
    messages = body.get("messages", [])
    users = [m for m in messages if m.get("role") == "user"]
    last = message_text(users[-1].get("content")) if users else ""
    if "choice" in props or "Options:" in last:
        return json.dumps({"choice": 1})
    if "value" in props:
        return json.dumps({"value": _number(props["value"])})
    if any("Reply with only JSON" in message_text(m.get("content")) for m in messages):
        return json.dumps({"event": "The plan goes ahead as described.", "updates": {}})
    return "I talk to my neighbours and make my case calmly."

server = FakeLLMServer(reply=reply, latency_s=LATENCY, models=("fake-model",)).start()
print(server.base_url, flush=True)
for line in sys.stdin:
    command = line.strip()
    if command == "starts":
        print(json.dumps(STARTS), flush=True)
    elif command == "stats":
        s = server.stats
        print(json.dumps({"ok": s.ok, "errors": s.errors, "faults": s.faults,
                          "max_in_flight": s.max_in_flight}), flush=True)
    elif command == "reset":
        server.reset_stats()
        STARTS.clear()
        print("ok", flush=True)
server.stop()
"""


def waves(starts: list[float], latency_s: float) -> list[int]:
    """The sizes of the call waves (see the module docstring): each wave opens with the
    earliest call not yet in one and takes every call that starts before that call ends."""
    sizes: list[int] = []
    opened = None
    for start in sorted(starts):
        if opened is None or start >= opened + latency_s:
            opened = start
            sizes.append(0)
        sizes[-1] += 1
    return sizes


async def bench_world(name: str, model: Any, server: ServerProcess, latency_s: float) -> dict:
    """Play world ``name`` once; its calls, actions, wall time and ideal time."""
    sim = load_world(name)
    model.ledger.reset()
    server.reset()
    started = time.perf_counter()
    outcome = await sim.arun(model=model, seed=0)
    wall = time.perf_counter() - started
    ledger = model.ledger.summary()
    served = server.stats()
    wave_sizes = waves(server.command("starts"), latency_s)
    by_tag = {tag: int(t["calls"]) for tag, t in ledger.get("by_tag", {}).items()}
    gm_calls = by_tag.get("gm", 0)
    calls = int(ledger["calls"])
    entities = {e.name for e in sim.entities}
    rows = outcome.log.to_list()
    actions = sum(1 for r in rows if r["kind"] in ACTION_KINDS and r["who"] in entities)
    ideal = len(wave_sizes) * latency_s
    return {
        "world": name,
        "rule_only": calls == 0,
        "steps": outcome.steps,
        "calls": calls,
        "agent_calls": calls - gm_calls,
        "gm_calls": gm_calls,
        "by_tag": by_tag,
        "actions": actions,
        "calls_per_action": calls / actions if actions else None,
        "wall_s": wall,
        "waves": len(wave_sizes),
        "max_wave": max(wave_sizes, default=0),
        "ideal_s": ideal,
        "ratio": wall / ideal if ideal else None,
        "server": served,
        "calls_match": calls == served["ok"],
        "ledger_errors": ledger.get("errors"),
        "ledger_retries": ledger.get("retries"),
    }


async def _main(worlds: list[str], latency_s: float) -> list[dict[str, Any]]:
    os.environ.setdefault(KEY_ENV, "bench-key-not-secret")
    server = ServerProcess(_SERVER_SCRIPT, str(REPO_ROOT), str(latency_s))
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
            await asyncio.gather(*(model.agenerate(f"warm-up {i}", max_tokens=4) for i in range(8)))
            return [await bench_world(name, model, server, latency_s) for name in worlds]
        finally:
            await model.aclose()
    finally:
        server.close()


def _fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def _print_report(results: dict[str, Any]) -> None:
    print(
        f"silicolab.sim built-in worlds ({results['mode']}): seed 0, "
        f"{results['latency_s'] * 1e3:.0f} ms server latency, max_concurrency "
        f"{results['max_concurrency']}, server in its own process"
    )
    head = (
        f"{'world':<22}{'steps':>6}{'calls':>7}{'agent':>7}{'gm':>5}{'actions':>8}"
        f"{'calls/act':>10}{'waves':>7}{'wall s':>8}{'ideal s':>8}{'wall/ideal':>11}"
    )
    print("\n" + head)
    for r in results["worlds"]:
        if r["rule_only"]:
            print(f"{r['world']:<22}{r['steps']:>6}  rule-only (no model call)")
            continue
        print(
            f"{r['world']:<22}{r['steps']:>6}{r['calls']:>7}{r['agent_calls']:>7}"
            f"{r['gm_calls']:>5}{r['actions']:>8}{_fmt(r['calls_per_action'], '.2f'):>10}"
            f"{r['waves']:>7}{r['wall_s']:>8.2f}{r['ideal_s']:>8.2f}"
            f"{_fmt(r['ratio'], '.2f') + 'x':>11}"
        )
    print(
        f"\ntargets: calls/action <= {CALLS_PER_ACTION_TARGET} (Concordia ~12 per statement), "
        f"wall/ideal <= {RATIO_TARGET}x; ideal = waves x latency (see the docstring)"
    )
    bad = [r["world"] for r in results["worlds"] if not r["calls_match"] or r["ledger_errors"]]
    print("ledger = server call counts, no errors:", "yes" if not bad else f"NO: {bad}")


def main(argv: list[str] | None = None) -> int:
    """Play every built-in world, print the table and write the JSON results."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="50 ms latency instead of 200 ms")
    parser.add_argument("--world", action="append", help="only this world (repeatable)")
    parser.add_argument("--output", type=Path, default=RESULTS_PATH, help="JSON results path")
    args = parser.parse_args(argv)

    latency_s = 0.05 if args.quick else 0.2
    worlds = args.world or world_names()
    rows = asyncio.run(_main(worlds, latency_s))
    results = {
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "latency_s": latency_s,
        "max_concurrency": CONCURRENCY,
        "worlds": rows,
    }
    _print_report(results)
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwrote {args.output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
