"""The Ray executor on a real two-node local cluster (conftest): the same results as the
local executors, one event per unit however workers die, and one limit, cache and
ledger for every worker's LLM calls."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from silicolab.bench.boxinggym import run_boxinggym_bench
from silicolab.bench.causalab import CausaLabBench, arun_causalab
from silicolab.bench.episodes import EpisodesBench, arun_episodes
from silicolab.bench.harness import ExecutorChoice, sync
from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor, RayExecutor
from tests.scale import units
from tests.support.cli import strict_json

pytestmark = pytest.mark.ray
RAY = ExecutorChoice("ray")


@pytest.fixture(autouse=True)
def _ship_test_units(ray_cluster: Any) -> None:
    """Workers cannot import the tests package: send its unit functions by value."""
    from ray import cloudpickle

    cloudpickle.register_pickle_by_value(units)


def _events(run: Run) -> list[dict[str, Any]]:
    lines = run.events_path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def _without_timing(table: pd.DataFrame) -> pd.DataFrame:
    timing = [c for c in table.columns if "runtime" in c or "latency" in c]
    return table.drop(columns=timing).reset_index(drop=True)


@pytest.mark.parametrize("unit", [units.square_or_die, units.async_square_or_die])
def test_a_killed_worker_loses_nothing_and_records_once(unit: Any, tmp_path: Any) -> None:
    run = Run.create(tmp_path, kind="bench")
    marker = tmp_path / "killed"
    items = [(n, str(marker)) for n in range(8)]
    results = RayExecutor(4, progress=False).map(
        unit, items, key=lambda i: f"u{i[0]}", run=run, on_error="record"
    )
    assert marker.exists()  # unit 3's worker was killed mid-unit, then retried by Ray
    assert [r.error for r in results] == [None] * 8
    assert [r.value["square"] for r in results] == [n * n for n in range(8)]
    events = _events(run)
    assert sorted(e["unit"] for e in events) == sorted(f"u{n}" for n in range(8))
    assert {e["status"] for e in events} == {"ok"}
    again = RayExecutor(4, progress=False).map(unit, items, key=lambda i: f"u{i[0]}", run=run)
    assert all(r.cached for r in again) and len(_events(run)) == 8  # resume: nothing rerun


def test_a_local_run_resumes_on_ray(tmp_path: Any) -> None:
    run = Run.create(tmp_path, kind="bench")
    items = [(n, str(tmp_path / "unused")) for n in range(6) if n != 3]
    AsyncExecutor(2, progress=False).map(units.async_square_or_die, items[:2], run=run, key=str)
    results = RayExecutor(2, progress=False).map(units.square_or_die, items, run=run, key=str)
    assert [r.cached for r in results] == [True, True, False, False, False]
    assert [r.value["square"] for r in results] == [0, 1, 4, 16, 25]
    assert len(_events(run)) == 5


def test_causalab_bench_equals_the_process_pool(tmp_path: Any) -> None:
    bench = CausaLabBench(suites=("3nodes",), episodes=4, jobs=2)
    local_run, ray_run = Run.create(tmp_path / "a", kind="b"), Run.create(tmp_path / "b", kind="b")
    local = sync(arun_causalab(bench, run=local_run), twin="arun_causalab")
    remote = sync(arun_causalab(replace(bench, executor=RAY), run=ray_run), twin="arun_causalab")
    pd.testing.assert_frame_equal(_without_timing(local), _without_timing(remote))
    assert [e["unit"] for e in _events(local_run)] != []
    assert sorted(e["unit"] for e in _events(ray_run)) == sorted(
        e["unit"] for e in _events(local_run)
    )


def test_boxinggym_bench_equals_the_process_pool(tmp_path: Any) -> None:
    small = {"n_candidates": 20, "n_outer": 100, "n_inner": 100, "n_posterior": 300}
    fast = {"steps": 2, "regret_random": 10, "regret_nmc": (100, 100), "options": small}
    pairs = [("death_process", "direct")]
    local = run_boxinggym_bench(pairs, "reference", seeds=2, jobs=2, **fast)
    remote = run_boxinggym_bench(pairs, "reference", seeds=2, jobs=2, executor=RAY, **fast)
    pd.testing.assert_frame_equal(_without_timing(local), _without_timing(remote))


def test_llm_bench_shares_one_limit_cache_and_ledger(
    llm_server_factory: Any, tmp_path: Any
) -> None:
    server = llm_server_factory(latency_s=0.02)

    def play(executor: ExecutorChoice, cache: str) -> tuple[pd.DataFrame, dict[str, Any]]:
        model = load_model(
            "openai:fake-model",
            base_url=server.base_url,
            cache_path=tmp_path / cache,
            max_concurrency=2,
        )
        bench = EpisodesBench(envs=("causalab",), agent="llm", seeds=(1, 2), jobs=4)
        table = sync(arun_episodes(replace(bench, executor=executor), model=model), twin="x")
        return table, model.ledger.summary()

    local, _ = play(ExecutorChoice(), "local.sqlite")
    server.reset_stats()
    remote, ledger = play(RAY, "ray.sqlite")
    stats = server.stats
    pd.testing.assert_frame_equal(_without_timing(local), _without_timing(remote))
    assert ledger["calls"] > 0 and ledger["cache_hits"] == 0 and ledger["errors"] == 0
    assert stats.ok == stats.requests == ledger["calls"]  # the ledger counts what the server saw
    assert (stats.prompt_tokens, stats.completion_tokens) == (
        ledger["input_tokens"],
        ledger["output_tokens"],
    )
    assert 1 <= stats.max_in_flight <= 2  # one limit for both nodes' workers
    server.reset_stats()
    again, ledger = play(RAY, "ray.sqlite")  # every worker reads the one cache
    assert server.stats.requests == 0 and ledger["cache_hits"] == ledger["calls"] > 0
    pd.testing.assert_frame_equal(_without_timing(local), _without_timing(again))


def test_a_killed_driver_resumes_from_the_run_directory(ray_cluster: Any, tmp_path: Any) -> None:
    code = "import sys; from silicolab.cli.app import main; main(sys.argv[1:])"
    args = [sys.executable, "-c", code, "bench", "causalab", "--suite", "3nodes,4nodes"]
    args += ["--episodes", "50", "--jobs", "1", "--runs-dir", str(tmp_path), "--json"]
    args += ["--executor", "ray", "--ray-address", ray_cluster.address]
    driver = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                              start_new_session=True)  # fmt: skip
    deadline = time.monotonic() + 180
    events: list[Path] = []
    while time.monotonic() < deadline and driver.poll() is None:
        events = list(tmp_path.glob("*/events.jsonl"))
        if events and len(events[0].read_text().splitlines()) >= 3:
            break
        time.sleep(0.2)
    os.killpg(driver.pid, signal.SIGKILL)
    driver.wait(timeout=30)
    assert events, "the driver recorded no unit before it was killed"
    before = events[0].read_text().splitlines()
    assert 3 <= len(before) < 100  # killed mid-run
    resumed = subprocess.run([*args[:3], *args[3:], "--resume"], capture_output=True, text=True,
                             timeout=600, check=False)  # fmt: skip
    assert resumed.returncode == 0, resumed.stderr
    after = events[0].read_text().splitlines()
    assert after[: len(before)] == before  # finished units were kept, not rerun
    recorded = [json.loads(line) for line in after]
    assert len({e["unit"] for e in recorded}) == len(recorded) == 100
    assert strict_json(resumed.stdout)["status"] == "finished"


def test_a_runner_killed_mid_call_gives_its_slot_back_at_once(
    llm_server_factory: Any, tmp_path: Any
) -> None:
    import functools

    import ray

    server = llm_server_factory(latency_s=0.5)
    model = load_model("openai:fake-model", base_url=server.base_url, max_concurrency=1)
    marker = tmp_path / "killed"
    items = [(n, str(marker)) for n in range(6)]
    unit = functools.partial(units.ask_or_die, model=model)
    # one slot in all: had the dead runner's slot waited for its lease (minutes), no
    # other unit could have run; the feeder tells the service the runner died instead
    results = RayExecutor(6, progress=False).map(unit, items, key=lambda i: f"u{i[0]}")
    assert marker.exists()
    assert [r.value["n"] for r in results] == list(range(6))
    assert all(r.value["text"] for r in results)
    service = ray.get(model._ray_service[1].summary.remote())
    assert service["slots_held"] == 0 and service["max_concurrent_calls"] == 1
    assert server.stats.max_in_flight == 1  # the limit held while the slot was reclaimed
    assert model.ledger.summary()["calls"] == 6  # one per unit; the dead call is not one
    assert server.stats.ok >= 6


def test_tasks_reuse_the_jobs_workers_when_every_node_imports_silicolab() -> None:
    import ray

    from silicolab.runtime.ray._executor import runtime_env_for

    # the test nodes start with this source tree on PYTHONPATH (tests/support/ray_cluster)
    assert runtime_env_for(ray) == {}
    results = RayExecutor(2, progress=False).map(units.square_or_die, [(5, "unused")])
    assert results[0].value["square"] == 25


def test_a_coroutine_units_own_error_is_recorded_or_raised_as_it_was(tmp_path: Any) -> None:
    run = Run.create(tmp_path, kind="bench")
    results = RayExecutor(3, progress=False).map(
        units.fail_on_two, range(5), run=run, on_error="record"
    )
    assert [r.value for r in results] == [0, 1, None, 3, 4]
    assert results[2].error == "KeyError: 'no unit 2'"
    assert sorted((e["unit"], e["status"]) for e in _events(run)) == [
        ("0", "ok"), ("1", "ok"), ("2", "error"), ("3", "ok"), ("4", "ok")
    ]  # fmt: skip
    with pytest.raises(KeyError, match="no unit 2"):
        RayExecutor(3, progress=False).map(units.fail_on_two, range(5))
    again = RayExecutor(3, progress=False).map(units.fail_on_two, [0, 1], key=str)
    assert [r.value for r in again] == [0, 1]  # the runners serve the next batch


WARM_DRIVER = """
import json, sys
import cloudpickle, ray
from silicolab.runtime import ExecutorChoice, RayExecutor
from silicolab.runtime.ray import _executor as ray_executor
from tests.scale import units
cloudpickle.register_pickle_by_value(units)
ExecutorChoice("ray", sys.argv[1]).check()
job = ray.get_runtime_context().get_job_id()
started = len(ray_executor._WARMING[job])
results = RayExecutor(2, progress=False).map(units.square_or_die, [(n, "-") for n in (1, 2, 4, 5)])
seen = {
    "started": started, "nodes": sum(n["Alive"] for n in ray.nodes()),
    "left": job in ray_executor._WARMING, "env": ray_executor._ENVS[job],
    "squares": [r.value["square"] for r in results],
    "pids": sorted({r.value["pid"] for r in results}),
}
ray_executor.leave_cluster()  # what the CLI does when a command ends
print(json.dumps({**seen, "joined_after": ray.is_initialized()}))
"""


def test_check_starts_one_worker_per_node_that_the_first_batch_reuses(ray_cluster: Any) -> None:
    """A command's ``check()`` joins the cluster and starts each node's worker without
    waiting; the first batch reads their answers and runs in those processes (one per
    one-CPU node: no process was started for a runtime_env of the tasks' own)."""
    from tests.support.cli import cli_env

    done = subprocess.run(
        [sys.executable, "-c", WARM_DRIVER, ray_cluster.address],
        env=cli_env({"RAY_AUTH_MODE": "disabled", "PYTHONPATH": os.pathsep.join(sys.path)}),
        capture_output=True, text=True, timeout=180, check=True,
    )  # fmt: skip
    seen = strict_json(done.stdout.splitlines()[-1])
    assert seen["started"] == seen["nodes"] == 2
    assert seen["left"] is False and seen["env"] == {}
    assert seen["squares"] == [1, 4, 16, 25]
    assert len(seen["pids"]) <= seen["nodes"]
    assert seen["joined_after"] is False


def test_leave_cluster_keeps_a_connection_it_did_not_make() -> None:
    """The test session joined the cluster itself (not through ``connect``): a command's
    ``leave_cluster`` in this process must not cut it."""
    import ray

    from silicolab.runtime.ray._executor import leave_cluster

    assert ray.is_initialized()
    leave_cluster()
    assert ray.is_initialized()
    assert RayExecutor(1, progress=False).map(abs, [-3])[0].value == 3


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    moments = sorted([(s, 1) for s, _ in spans] + [(e, -1) for _, e in spans])
    running = most = 0
    for _, step in moments:
        running += step
        most = max(most, running)
    return most


@pytest.mark.parametrize("concurrency", [1, 8])
def test_plain_units_never_run_more_than_concurrency_or_the_cpus_at_once(
    concurrency: int,
) -> None:
    """With ``concurrency`` at least the cluster's CPU slots, twice the slots are queued
    (each worker has its next unit at hand) but Ray still runs one unit per CPU."""
    results = RayExecutor(concurrency, progress=False).map(units.timed_nap, range(12))
    spans = [r.value for r in results]
    assert len(spans) == 12 and all(end > start for start, end in spans)
    assert _most_at_once(spans) <= min(concurrency, 2)  # the test cluster: two 1-CPU nodes


def test_every_node_keeps_getting_units_batch_after_batch() -> None:
    """Two one-CPU nodes, two units at a time: each node runs a fair share of every batch.
    With Ray's default placement one node often stopped receiving units for the rest of a
    batch (it ran 0 to 50 of 250) once a driver had run a few batches."""
    from collections import Counter

    for _ in range(8):
        results = RayExecutor(2, progress=False).map(units.busy_on_node, range(120))
        shares = Counter(r.value for r in results)
        assert len(shares) == 2 and min(shares.values()) >= 120 * 0.3, shares
