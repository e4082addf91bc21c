"""GroupCommit: concurrent units' events share writes and fsyncs, and none is lost."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path
from typing import Any

import pytest

from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor
from silicolab.runtime.group_commit import GroupCommit


class FsyncCount:
    """Counts the fsyncs of ``events.jsonl`` (by its file descriptor's path)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, path: Path) -> None:
        self.count = 0
        real = os.fsync

        def fsync(fd: int) -> None:
            if os.readlink(f"/proc/self/fd/{fd}") == str(path):
                self.count += 1
            real(fd)

        monkeypatch.setattr(os, "fsync", fsync)


async def test_each_append_returns_once_its_event_is_on_disk(tmp_path: Path) -> None:
    run = Run.create(tmp_path, kind="bench")
    commit = GroupCommit(run)
    seen_after: dict[str, bool] = {}

    async def unit(i: int) -> None:
        await asyncio.sleep(0.001 * (i % 7))
        await commit.append(f"u{i}", {"i": i})
        # read back from the file by a fresh reader, not from anything in memory
        seen_after[f"u{i}"] = f"u{i}" in Run.open(run.path).finished_units()

    await asyncio.gather(*(unit(i) for i in range(200)))
    await commit.aclose()

    assert all(seen_after.values()) and len(seen_after) == 200
    events = Run.open(run.path).events()
    assert sorted(e["data"]["i"] for e in events) == list(range(200))
    assert commit.events == 200
    assert commit.batches < 200  # events that arrived during a write shared the next one


async def test_a_batch_of_units_needs_fewer_fsyncs_than_units(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run = Run.create(tmp_path, kind="bench")
    fsyncs = FsyncCount(monkeypatch, run.events_path.resolve())

    async def unit(x: int) -> int:
        await asyncio.sleep(0.002)
        return x

    results = await AsyncExecutor(64).amap(unit, range(500), run=run)

    assert [r.value for r in results] == list(range(500))
    assert Run.open(run.path).finished_units() == {str(x) for x in range(500)}
    assert 0 < fsyncs.count < 500


class FailingOnce:
    """An event log whose second write fails with a disk error."""

    def __init__(self) -> None:
        self.written: list[str] = []
        self.writes = 0

    def encode_events(self, events: Any) -> str:
        return "".join(f"{unit}\n" for unit, _, _ in events)

    def append_encoded(self, text: str) -> None:
        self.writes += 1
        if self.writes == 2:
            raise OSError(28, "No space left on device")
        self.written += text.split()


async def test_a_write_error_reaches_the_units_of_that_write_and_later_ones_go_on() -> None:
    log = FailingOnce()
    commit = GroupCommit(log)

    await commit.append("a", None)
    with pytest.raises(OSError, match="No space left"):
        await commit.append("b", None)
    await commit.append("c", None)
    await commit.aclose()

    assert log.written == ["a", "c"]


async def test_a_unit_cancelled_while_waiting_still_has_its_event_written(
    tmp_path: Path,
) -> None:
    run = Run.create(tmp_path, kind="bench")
    commit = GroupCommit(run)
    waiting = [asyncio.create_task(commit.append(f"u{i}", None)) for i in range(20)]
    await asyncio.sleep(0)  # every append is queued
    for task in waiting:
        task.cancel()
    await asyncio.gather(*waiting, return_exceptions=True)
    await commit.aclose()

    assert Run.open(run.path).finished_units() == {f"u{i}" for i in range(20)}


async def test_aclose_with_nothing_queued_returns_at_once(tmp_path: Path) -> None:
    commit = GroupCommit(Run.create(tmp_path, kind="bench"))
    await commit.aclose()
    assert (commit.batches, commit.events) == (0, 0)


async def test_events_encoded_on_the_loop_are_scrubbed_of_secrets(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    secret = 'sk-group"commit\\secret-77'
    monkeypatch.setenv("SILICOLAB_TEST_API_KEY", secret)
    run = Run.create(tmp_path, kind="bench")
    commit = GroupCommit(run)
    await asyncio.gather(*(commit.append(f"u{i}", {"error": f"key {secret}"}) for i in range(30)))
    await commit.aclose()

    text = run.events_path.read_text()
    assert secret not in text and json.dumps(secret)[1:-1] not in text
    assert {e["data"]["error"] for e in Run.open(run.path).events()} == {"key ***"}
