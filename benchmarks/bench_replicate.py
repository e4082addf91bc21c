"""Benchmark of a replication's throughput: the mug study under models x wordings x seeds.

Run ``.venv/bin/python benchmarks/bench_replicate.py [--quick]`` from the repository root.
It prints a table and writes ``benchmarks/results/bench_replicate.json`` (``--quick``:
``bench_replicate_quick.json``). Issue 28 asks
that 3 subject models x 3 wordings x 2 seeds of the mug study (405 conditions each, 7,290
(variant, condition) units) at 200 ms of server latency and a concurrency of 64 run within
1.2x of the ideal wall time for the calls made, with under 5 ms of client CPU per unit
outside the LLM calls. ``--quick`` runs 2 models x 2 wordings x 2 seeds of 40 conditions.

Every call goes to :class:`tests.support.openai_server.FakeLLMServer` in its own process on
127.0.0.1 (as in ``bench_sim.py``), so the server's work is not billed to the client. Its
reply function plays two parts: a paraphrase request (the scientist's, user message
``Step: paraphrase``) gets the scripted paraphraser's answer
(:func:`~silicolab.studies.replication.scripted_wordings.scripted_paraphraser`); every
other request is answered by the mug study's hidden-SCM world
(:func:`~silicolab.studies.offline.offline_world`), so the subjects' answers parse and each
variant's fit has something to find. The run goes through the front door,
``sl.replicate_study(..., subjects="llm", base_url=<server>)``, with a ``silicolab.yaml``
the benchmark writes: every role's ``max_concurrency`` is 64 and the LLM cache is a fresh
file (cold: every call reaches the server).

Figures: the wall time; the LLM calls the server answered (by model); the ideal wall time,
the larger of the throughput bound and the critical path. Each subject model is its own
client with its own limit of 64 (``_subject_models`` loads one per spec), so the
throughput bound is ``max over models of calls(model) x latency / 64``; the bound with ONE
shared limit of 64 (``calls x latency / 64``) is reported beside it. The critical path is
one round of paraphrases plus the longest chain of one condition (its calls go one after
another: statements, the coordinator's choices, the one survey question). CPU per unit is
the client's process CPU time (``time.process_time``) over the run, divided by the
(variant, condition) units; "net" subtracts the CPU the client spends on the HTTP calls
themselves, measured on the same server with bare ``agenerate`` calls through the same
wrappers. Nothing asserts on timing: the targets are reported, never enforced.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import platform
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from tests.support.server_process import ServerProcess  # noqa: E402

import silicolab as sl  # noqa: E402
from silicolab.runs import Run  # noqa: E402

RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_replicate.json"
QUICK_RESULTS_PATH = RESULTS_PATH.with_name("bench_replicate_quick.json")
KEY_ENV = "SILICOLAB_BENCH_KEY"
LATENCY_S = 0.2
CONCURRENCY = 64
RATIO_TARGET = 1.2
CPU_MS_TARGET = 5.0
FULL = {"models": 3, "wordings": 3, "seeds": 2, "conditions": None}
QUICK = {"models": 2, "wordings": 2, "seeds": 2, "conditions": 40}

# The server process: paraphrase requests get the scripted paraphraser's reply, every other
# request the mug world's. Commands on stdin: "stats" prints the counters (and the calls by
# model) as one JSON line, "reset" zeroes them, end of input stops the server.
_SERVER_SCRIPT = """
import json, sys
from collections import Counter
from types import SimpleNamespace
sys.path.insert(0, sys.argv[1])
from tests.support.openai_server import FakeLLMServer
from silicolab.llm import load_model
from silicolab.studies import load_example
from silicolab.studies.offline import offline_world
from silicolab.studies.replication.scripted_wordings import scripted_paraphraser
from silicolab.studies.replication.wordings import paraphrase as paraphrased

mug = load_example("mug")
paraphrase = scripted_paraphraser()
# the wordings the client's scientist will get (the paraphraser is deterministic), and the
# hidden world of each: a subject reads its wording's attribute labels, so the world that
# answers it is the one whose labels its prompt holds
wordings = paraphrased(mug, load_model("scripted", fn=paraphrase), int(sys.argv[3]))
worlds = [offline_world(w.apply(mug)) for w in wordings]
labels = [[v.attribute for v in w.hypothesis.treatments] for w in worlds]
by_model = Counter()

def reply(body):
    request = SimpleNamespace(messages=body["messages"], sample_index=0)
    by_model[body.get("model")] += 1
    text = "\\n".join(str(m.get("content")) for m in body["messages"])
    if any(m["role"] == "user" and str(m.get("content")).startswith("Step: paraphrase")
           for m in body["messages"]):
        return paraphrase(request)
    hits = [sum(label in text for label in own) for own in labels]
    return worlds[hits.index(max(hits))](request)

server = FakeLLMServer(reply=reply, latency_s=float(sys.argv[2]), log_limit=10).start()
print(server.base_url, flush=True)
for line in sys.stdin:
    command = line.strip()
    if command == "stats":
        counters = {**server.stats.as_dict(), "by_model": dict(by_model)}
        print(json.dumps(counters, default=sorted), flush=True)
    elif command == "reset":
        server.reset_stats()
        by_model.clear()
        print("ok", flush=True)
server.stop()
"""


def write_config(folder: Path) -> Path:
    """A ``silicolab.yaml`` with every role at ``max_concurrency`` 64, the key in
    :data:`KEY_ENV` and a fresh cache file."""
    role = f"{{spec: openai:fake-scientist, max_concurrency: {CONCURRENCY}, "
    role += f"api_key_env: {KEY_ENV}}}"
    roles = ("default", "scientist", "subject", "coordinator")
    lines = ["models:", *(f"  {r}: {role}" for r in roles)]
    lines += [f"cache_path: {folder / 'cache.sqlite'}", f"runs_dir: {folder / 'runs'}"]
    path = folder / "silicolab.yaml"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


async def _bare_calls(base_url: str, config: Path, n: int) -> float:
    """Client CPU seconds per bare call through the subject role's wrapped model (ledger,
    cache, limits, retry, the SDK): what one LLM call costs the client by itself."""
    from silicolab.core.config import load_settings
    from silicolab.llm.roles import model_for_role

    model = model_for_role("subject", load_settings(config), spec="openai:fake-bare",
                           base_url=base_url)  # fmt: skip
    prompt = "Say OK, call {i}."
    await asyncio.gather(*(model.agenerate(prompt.format(i=-i - 1)) for i in range(CONCURRENCY)))
    started = time.process_time()
    await asyncio.gather(*(model.agenerate(prompt.format(i=i), max_tokens=16) for i in range(n)))
    cpu = time.process_time() - started
    await model.aclose()
    return cpu / n


def _units_seen(run_dir: Path) -> dict[str, float]:
    """The calls of one condition from the run's events (mean, longest; they go one after
    another)."""
    events = Run.open(run_dir).events()
    calls = [int(e["data"]["calls"]) for e in events if "calls" in (e.get("data") or {})]
    if not calls:
        return {}
    return {"mean": sum(calls) / len(calls), "max": max(calls), "units": len(calls)}


class EventClock:
    """Wall and process CPU time at each write to the run's events (a wrapper around
    ``Run.append_encoded``, which ``append_event`` and the executors' group commit use,
    for the benchmark's duration): the unit phase runs from the wordings event to the last
    unit's, without the plan before it and the analysis, reports and figures after it."""

    def __init__(self) -> None:
        self.marks: list[tuple[float, float]] = []
        self.inside_s = 0.0  # wall time inside append_encoded (its writes and fsyncs)
        self.writes = self.events = 0
        self._original = Run.append_encoded

    def __enter__(self) -> EventClock:
        original, marks = self._original, self.marks

        def append_encoded(run: Run, text: str) -> None:
            started = time.perf_counter()
            original(run, text)
            marks.append((time.perf_counter(), time.process_time()))
            self.inside_s += marks[-1][0] - started
            self.writes += 1
            self.events += text.count("\n")

        Run.append_encoded = append_encoded  # type: ignore[method-assign]
        return self

    def __exit__(self, *exc: object) -> None:
        Run.append_encoded = self._original  # type: ignore[method-assign]

    def phase(self) -> dict[str, float]:
        """Wall and CPU seconds from the first event to the last, and the event writes."""
        if len(self.marks) < 2:
            return {"wall_s": math.nan, "cpu_s": math.nan, "append_event_s": math.nan}
        (w0, c0), (w1, c1) = self.marks[0], self.marks[-1]
        return {"wall_s": w1 - w0, "cpu_s": c1 - c0, "append_event_s": self.inside_s,
                "event_writes": self.writes, "events": self.events}  # fmt: skip


def replicate(server: ServerProcess, sizes: dict[str, Any], folder: Path, jobs: int | None) -> dict:
    """Run the replication once through ``sl.replicate_study``; time it and count."""
    config = write_config(folder)
    models = [f"openai:fake-{chr(ord('a') + i)}" for i in range(sizes["models"])]
    notes: list[str] = []
    server.reset()
    cpu0, wall0 = time.process_time(), time.perf_counter()
    with EventClock() as clock:
        result = sl.replicate_study(
            "mug", models=models, wordings=sizes["wordings"], seeds=sizes["seeds"],
            subjects="llm", conditions=sizes["conditions"], jobs=jobs,
            base_url=server.base_url, config=config, runs_dir=folder / "runs",
            notify=notes.append,
        )  # fmt: skip
    ended = time.perf_counter()
    wall, cpu = ended - wall0, time.process_time() - cpu0
    served = server.stats()
    # before the unit phase: imports, models, the plan, the paraphrases; after it: the fits,
    # the meta-analysis, the record, the reports and the figures
    edges = (clock.marks[0][0] - wall0, ended - clock.marks[-1][0]) if clock.marks else None
    variants = result.record["variants"]
    units = sum(v["conditions"] for v in variants)
    return {
        "plan": notes[0] if notes else "",
        "run_dir": str(result.run_dir),
        "status": result.status,
        "variants": len(variants),
        "units": units,
        "fit_errors": Counter(v["fit_error"] for v in variants if v["fit_error"]),
        "verdicts": result.verdicts,
        "wall_s": wall,
        "cpu_s": cpu,
        "server": served,
        "chain": _units_seen(result.run_dir),
        "unit_phase": clock.phase(),
        "before_units_s": edges[0] if edges else math.nan,
        "after_units_s": edges[1] if edges else math.nan,
    }


def figures(row: dict[str, Any], bare_cpu_s: float, latency: float) -> dict[str, Any]:
    """The ideal wall time, the ratios and CPU per unit of one run (module docstring)."""
    served, phase = row["server"], row["unit_phase"]
    calls = int(served["ok"])
    by_model = served.get("by_model") or {}
    subject_calls = [n for m, n in by_model.items() if m != "fake-scientist"]
    paraphrases = by_model.get("fake-scientist", 0)
    critical = (min(paraphrases, 1) + (row["chain"].get("max") or 0)) * latency
    per_model = max(subject_calls, default=0) * latency / CONCURRENCY
    shared = max(calls * latency / CONCURRENCY, critical)
    ideal = max(per_model, critical)
    units = max(row["units"], 1)
    net = phase["cpu_s"] - (calls - paraphrases) * bare_cpu_s
    return {
        "calls": calls,
        "calls_by_model": by_model,
        "calls_per_unit": (calls - paraphrases) / units,
        "ideal_per_model_limit_s": per_model,
        "ideal_shared_limit_s": shared,
        "critical_path_s": critical,
        "ideal_s": ideal,
        "ratio": row["wall_s"] / ideal,
        "ratio_unit_phase": phase["wall_s"] / ideal,
        "ratio_shared": row["wall_s"] / shared,
        "cpu_ms_per_unit": 1e3 * row["cpu_s"] / units,
        "unit_phase_cpu_ms_per_unit": 1e3 * phase["cpu_s"] / units,
        "bare_call_cpu_ms": 1e3 * bare_cpu_s,
        "net_cpu_ms_per_unit": 1e3 * net / units,
    }


def _print(results: dict[str, Any]) -> None:
    r, f, s = results["run"], results["figures"], results["sizes"]
    print(f"\nreplication of mug ({results['mode']}): {s['models']} models x {s['wordings']} "
          f"wordings x {s['seeds']} seeds, {results['conditions']} conditions each, "
          f"{results['latency_s'] * 1e3:.0f} ms latency, max_concurrency {CONCURRENCY}, "
          f"jobs {results['jobs']}")  # fmt: skip
    chain, phase = r["chain"], r["unit_phase"]
    rows = [
        ("status", r["status"]),
        ("variants / units", f"{r['variants']} / {r['units']}"),
        ("fit errors", dict(r["fit_errors"]) or "none"),
        ("verdicts", ", ".join(f"{p}: {v}" for p, v in r["verdicts"].items())),
        ("LLM calls (server ok)", f"{f['calls']:,} ({f['calls_per_unit']:.2f} per unit)"),
        ("calls by model", f["calls_by_model"]),
        (
            "server max in flight / errors",
            f"{r['server']['max_in_flight']} / {r['server']['errors']}",
        ),
        (
            "calls in one condition (mean / max)",
            f"{chain.get('mean', math.nan):.2f} / {chain.get('max')}",
        ),
        ("ideal: max calls of one model x lat / 64", f"{f['ideal_per_model_limit_s']:.1f} s"),
        ("ideal: critical path", f"{f['critical_path_s']:.1f} s"),
        ("wall time, whole call", f"{r['wall_s']:.1f} s  ({f['ratio']:.2f}x ideal)"),
        ("wall time, unit phase", f"{phase['wall_s']:.1f} s  ({f['ratio_unit_phase']:.2f}x ideal)"),
        (
            "wall time before / after the unit phase",
            f"{r['before_units_s']:.1f} s / {r['after_units_s']:.1f} s",
        ),
        (
            "(one shared limit: all calls x lat / 64)",
            f"{f['ideal_shared_limit_s']:.1f} s, whole call {f['ratio_shared']:.2f}x",
        ),
        (
            "events / writes (write+fsync), their wall time",
            f"{phase.get('events')} / {phase.get('event_writes')}, {phase['append_event_s']:.1f} s",
        ),
        ("client CPU, whole call / unit phase", f"{r['cpu_s']:.1f} s / {phase['cpu_s']:.1f} s"),
        ("CPU per unit, whole call", f"{f['cpu_ms_per_unit']:.2f} ms"),
        ("CPU per unit, unit phase", f"{f['unit_phase_cpu_ms_per_unit']:.2f} ms"),
        ("CPU per bare LLM call", f"{f['bare_call_cpu_ms']:.2f} ms"),
        ("CPU per unit outside LLM calls (< 5 ms)", f"{f['net_cpu_ms_per_unit']:.2f} ms"),
    ]
    width = max(len(label) for label, _ in rows)
    for label, value in rows:
        print(f"{label:<{width}}  {value}")


def main(argv: list[str] | None = None) -> int:
    """Run the replication once, print the table, write the JSON."""
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 x 2 x 2 variants, 40 conditions")
    parser.add_argument("--latency", type=float, default=LATENCY_S, help="server latency (s)")
    parser.add_argument("--jobs", type=int, default=None,
                        help="conditions in flight in all (default: replicate_study's, "
                        "16 per variant, at most 256)")  # fmt: skip
    parser.add_argument("--output", type=Path, default=None,
                        help="JSON results path (default: results/bench_replicate.json, "
                        "with --quick results/bench_replicate_quick.json)")  # fmt: skip
    args = parser.parse_args(argv)
    os.environ.setdefault(KEY_ENV, "bench-key-not-secret")
    sizes = QUICK if args.quick else FULL
    server = ServerProcess(
        _SERVER_SCRIPT, str(REPO_ROOT), str(args.latency), str(sizes["wordings"])
    )
    try:
        with tempfile.TemporaryDirectory(prefix="bench-replicate-") as tmp:
            folder = Path(tmp)
            bare = asyncio.run(_bare_calls(server.base_url, write_config(folder), 2000))
            run = replicate(server, sizes, folder, args.jobs)
    finally:
        server.close()
    results = {
        "mode": "quick" if args.quick else "full",
        "python": platform.python_version(),
        "platform": platform.platform(),
        "cpu_count": os.cpu_count(),
        "latency_s": args.latency,
        "max_concurrency": CONCURRENCY,
        "jobs": args.jobs,
        "sizes": sizes,
        "conditions": sizes["conditions"] or 405,
        "targets": {"ratio": RATIO_TARGET, "cpu_ms_per_unit": CPU_MS_TARGET},
        "run": run,
        "figures": figures(run, bare, args.latency),
    }
    _print(results)
    output = args.output or (QUICK_RESULTS_PATH if args.quick else RESULTS_PATH)
    output.parent.mkdir(parents=True, exist_ok=True)
    output.write_text(json.dumps(results, indent=2, default=str) + "\n")
    print(f"\nwrote {output}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
