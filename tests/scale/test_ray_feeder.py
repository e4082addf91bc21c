"""Feeding a unit runner in chunks (no cluster needed: the runner runs in-process behind a
stand-in actor handle): results per unit, the unit's own errors, and a restarted runner
whose unfinished units are submitted again."""

from __future__ import annotations

import asyncio
import threading
from typing import Any

import pytest

from silicolab.runtime.ray._runner import Feeder, UnitRunner
from tests.scale.conftest import require_ray
from tests.scale.test_ray_channel import _Handle


@pytest.fixture(autouse=True)
def _needs_ray() -> None:
    require_ray()  # results are checked with Ray's cloudpickle


class _Ref:
    """What a boxed Ray object ref offers a runner: ``hex()`` and ``await``."""

    def __init__(self, fn: Any):
        self.fn = fn

    def hex(self) -> str:
        return f"{id(self.fn):x}"

    def __await__(self) -> Any:
        async def value() -> Any:
            return self.fn

        return value().__await__()


async def _unit(item: int) -> Any:
    await asyncio.sleep(0.01 * (item % 3))
    if item == 4:
        raise ValueError("unit 4 fails")
    if item == 5:
        return threading.Lock()  # cannot be pickled to the driver
    return item * item


def test_units_come_back_one_by_one_with_their_own_errors() -> None:
    async def scenario() -> None:
        runner = _Handle(UnitRunner())  # type: ignore[arg-type]
        feeder = Feeder(runner, [_Ref(_unit)], max_retries=1)
        outcomes = await asyncio.gather(*(feeder.call(i) for i in range(8)), return_exceptions=True)
        assert [o for i, o in enumerate(outcomes) if i not in (4, 5)] == [0, 1, 4, 9, 36, 49]
        assert isinstance(outcomes[4], ValueError) and "unit 4 fails" in str(outcomes[4])
        assert isinstance(outcomes[5], RuntimeError) and "cannot be sent" in str(outcomes[5])
        assert runner.calls < 2 * 8  # submits and collects carry several units each
        feeder.close(cancel=False)

    asyncio.run(scenario())


def test_a_restarted_runner_gets_the_unfinished_units_again() -> None:
    async def scenario() -> None:
        started: list[int] = []
        gate = asyncio.Event()

        async def slow(item: int) -> int:
            started.append(item)
            await gate.wait()
            return item

        runner = UnitRunner()
        handle = _Handle(runner)  # type: ignore[arg-type]
        dead: list[str] = []
        feeder = Feeder(handle, [_Ref(slow)], max_retries=2, on_death=dead.append)
        calls = [asyncio.ensure_future(feeder.call(i)) for i in range(3)]
        while len(started) < 3:
            await asyncio.sleep(0.01)
        old = runner.incarnation
        for task in list(runner._tasks.values()):  # the runner "dies": its units are lost
            task.cancel()
        runner.incarnation = "restarted"  # Ray restarts it as a new process
        gate.set()
        assert await asyncio.wait_for(asyncio.gather(*calls), timeout=10) == [0, 1, 2]
        assert dead == [old] and sorted(started) == [0, 0, 1, 1, 2, 2]

    asyncio.run(scenario())
