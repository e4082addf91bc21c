"""The Ray backend's parts that need no cluster: the choice of executor, the errors a user
sees without Ray or without a reachable cluster, and the driver-side LLM service."""

from __future__ import annotations

import asyncio
import re
import socket
import subprocess
import sys
from typing import Any

import pytest

from silicolab.core.errors import InputError
from silicolab.llm.ledger import Ledger, Prices
from silicolab.llm.ray._service import LLMService
from silicolab.llm.types import Completion, Usage
from silicolab.runtime import ExecutorChoice
from silicolab.runtime.choice import LOCAL
from silicolab.runtime.executor import AsyncExecutor, ProcessExecutor
from tests.scale.conftest import require_ray


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_choice_makes_the_local_executors_and_checks_its_fields() -> None:
    assert isinstance(LOCAL.make(2, cpu_bound=True), ProcessExecutor)
    assert isinstance(LOCAL.make(2, cpu_bound=False), AsyncExecutor)
    with pytest.raises(InputError, match="use one of local, ray"):
        ExecutorChoice("dask")  # type: ignore[arg-type]
    with pytest.raises(InputError, match=re.escape("ray_address= needs executor='ray'")):
        ExecutorChoice("local", "127.0.0.1:6379")


def test_without_ray_the_executor_says_how_to_install_it(monkeypatch: Any) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # import ray now raises ImportError
    with pytest.raises(InputError, match=r"install silicolab\[ray\]"):
        ExecutorChoice("ray").check()


def _cli(args: list[str], *, hide_ray: bool = False) -> subprocess.CompletedProcess[str]:
    """``silicolab ARGS`` in a fresh interpreter (``hide_ray``: as if Ray were missing)."""
    hide = "sys.modules['ray'] = None; " if hide_ray else ""
    code = f"import sys; {hide}from silicolab.cli.app import main; main(sys.argv[1:])"
    command = [sys.executable, "-c", code, *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_cli_without_ray_prints_one_line_and_exits_2(tmp_path: Any) -> None:
    args = ["bench", "episodes", "--env", "causalab", "--seeds", "1", "--executor", "ray"]
    result = _cli([*args, "--runs-dir", str(tmp_path)], hide_ray=True)
    assert result.returncode == 2
    assert result.stderr.strip().count("\n") == 0 and "silicolab[ray]" in result.stderr
    assert not any(tmp_path.iterdir())  # refused before a run directory exists


def test_cli_with_an_unreachable_cluster_prints_one_line_and_exits_2(tmp_path: Any) -> None:
    require_ray()
    address = f"127.0.0.1:{_closed_port()}"
    args = ["study", "run", "auction", "--subjects", "rule", "--conditions", "2", "--yes"]
    result = _cli(
        [*args, "--executor", "ray", "--ray-address", address, "--runs-dir", str(tmp_path)]
    )
    assert result.returncode == 2
    assert "cannot reach the Ray cluster at " + address in result.stderr
    assert result.stderr.strip().count("\n") == 0


def test_a_replication_with_an_unreachable_cluster_says_so_before_any_run(tmp_path: Any) -> None:
    require_ray()
    address = f"127.0.0.1:{_closed_port()}"
    args = ["study", "replicate", "mug", "--subjects", "world", "--conditions", "2"]
    result = _cli(
        [*args, "--executor", "ray", "--ray-address", address, "--runs-dir", str(tmp_path)]
    )
    assert result.returncode == 2
    assert "cannot reach the Ray cluster at " + address in result.stderr
    assert result.stderr.strip().splitlines()[-1].startswith("error: cannot reach")
    assert not any(tmp_path.iterdir())  # refused before a run directory exists


def test_ledger_absorbs_another_ledgers_summary() -> None:
    here, there = Ledger(prices=Prices(1.0, 2.0)), Ledger(prices=Prices(1.0, 2.0))
    here.record("a", Completion("x", Usage(10, 5)))
    there.record("a", Completion("y", Usage(1, 1), attempts=2))
    there.record("b", Completion("z", Usage(3, 0), cached=True))
    here.absorb(there.summary())
    total = here.summary()
    assert (total["calls"], total["cache_hits"], total["retries"]) == (3, 1, 1)
    assert (total["input_tokens"], total["output_tokens"]) == (11, 6)
    assert total["by_tag"]["a"]["calls"] == 2 and total["by_tag"]["b"]["cache_hits"] == 1


def test_a_slot_lease_outlasts_any_call_with_its_retries() -> None:
    from silicolab.llm import load_model
    from silicolab.llm.ray._service import DEFAULT_LEASE_S, _layers, lease_for

    model = load_model("openai:m", base_url="http://127.0.0.1:9/v1", timeout_s=10, max_retries=2)
    assert lease_for(_layers(model)[2]) == 2 * (3 * 10 + 2 * 60)  # 3 attempts, 2 waits
    assert lease_for(_layers(load_model("scripted"))[2]) == DEFAULT_LEASE_S  # no timeout


def test_service_limits_caches_counts_and_reclaims_dead_slots(tmp_path: Any) -> None:
    async def scenario() -> None:
        service = LLMService(
            cache_path=str(tmp_path / "c.sqlite"),
            max_concurrency=1,
            requests_per_minute=None,
            tokens_per_minute=None,
            prices=Prices(),
            lease_s=0.2,
        )
        hit, lease = await service.begin("k1", "t", 0)
        assert hit is None and lease is not None
        waiter = asyncio.create_task(service.begin("k2", "t", 0))
        await asyncio.sleep(0.05)
        assert not waiter.done()  # the one slot is held
        # the holder's worker "dies" (never calls end): the lease expires and is reclaimed
        hit2, lease2 = await asyncio.wait_for(waiter, timeout=10)
        assert hit2 is None and lease2 != lease
        service.end("k2", "t", lease2, 0, Completion("two", Usage(2, 1)), None)
        hit3, _ = await service.begin("k2", "t", 0)
        assert hit3 is not None and hit3.text == "two" and hit3.cached
        summary = await service.summary()
        assert (summary["calls"], summary["cache_hits"], summary["max_concurrent_calls"]) == (
            2,
            1,
            1,
        )

    asyncio.run(scenario())


def test_tasks_queue_twice_the_cpu_slots_only_when_ray_bounds_them() -> None:
    from silicolab.runtime.ray._executor import RayExecutor, _Batch

    tasks = _Batch(box=[], task=object(), slots=2)
    assert RayExecutor(8)._in_flight(tasks) == 4  # Ray runs 2; 2 more wait at hand
    assert RayExecutor(2)._in_flight(tasks) == 4
    assert RayExecutor(1)._in_flight(tasks) == 1  # concurrency bounds it: no extra
    runners = _Batch(box=[])  # coroutine units: concurrency is the bound
    assert RayExecutor(8)._in_flight(runners) == 8
