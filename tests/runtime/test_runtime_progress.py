"""The progress bar: shown on request or on a terminal, counts resumed units as done."""

from __future__ import annotations

import asyncio
import io
import threading
from pathlib import Path

import pytest

from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor, ProgressBar
from silicolab.runtime.progress import format_duration, progress_enabled


class FakeTTY(io.StringIO):
    """A text stream that reports being a terminal (what ``progress=None`` checks)."""

    def isatty(self) -> bool:
        return True


def test_progress_none_follows_whether_the_stream_is_a_terminal() -> None:
    assert progress_enabled(None, io.StringIO()) is False
    assert progress_enabled(None, FakeTTY()) is True
    assert progress_enabled(True, io.StringIO()) is True
    assert progress_enabled(False, FakeTTY()) is False


def test_resumed_units_count_as_done_from_the_start() -> None:
    out = io.StringIO()
    with ProgressBar(10, completed=7, description="episodes", enabled=True, file=out) as bar:
        pass
    assert "episodes" in out.getvalue() and "7/10" in out.getvalue()
    assert bar.completed == 7


def test_failures_are_counted_and_shown() -> None:
    out = io.StringIO()
    with ProgressBar(3, description="units", enabled=True, file=out) as bar:
        bar.advance()
        bar.advance(failed=True)
        bar.advance(failed=True)
    assert (bar.completed, bar.failed) == (3, 2)
    assert "3/3" in out.getvalue() and "2 failed" in out.getvalue()


def test_disabled_bar_prints_nothing_but_still_counts() -> None:
    out = io.StringIO()
    with ProgressBar(2, enabled=False, file=out) as bar:
        bar.advance()
    assert out.getvalue() == "" and bar.completed == 1


async def test_executor_draws_on_stderr_when_asked(capsys: pytest.CaptureFixture[str]) -> None:
    async def unit(x: int) -> int:
        await asyncio.sleep(0)
        return x

    await AsyncExecutor(4, progress=True, description="conditions").amap(unit, range(12))
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "conditions" in captured.err and "12/12" in captured.err


async def test_executor_is_silent_when_stderr_is_not_a_terminal(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    run = Run.create(tmp_path, kind="bench")
    await AsyncExecutor(4, description="quiet").amap(lambda x: x, range(5), run=run)
    assert capsys.readouterr().err == ""


def test_in_a_pipe_a_plain_line_per_interval_then_the_final_count(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("SILICOLAB_PROGRESS_INTERVAL", "0.01")
    out = io.StringIO()  # not a terminal: plain lines, no bar
    with ProgressBar(4, completed=1, description="boxinggym", file=out) as bar:
        bar.advance(failed=True)
        for _ in range(6000):  # until the ticker has written a line (never hangs)
            if "boxinggym: 2/4 done" in out.getvalue():
                break
            threading.Event().wait(0.01)
        bar.advance()
        bar.advance()
    lines = out.getvalue().splitlines()
    assert all(line.startswith("boxinggym: ") for line in lines), lines
    assert ", ETA " in lines[0] and "elapsed" in lines[0] and "1 failed" in lines[0]
    assert lines[-1].startswith("boxinggym: 4/4 done, ") and lines[-1].endswith("ETA 0s, 1 failed")


def test_in_a_pipe_fast_work_prints_nothing_and_false_prints_nothing_at_all() -> None:
    out = io.StringIO()
    with ProgressBar(2, description="fast", file=out) as bar:  # the 10 s default
        bar.advance()
        bar.advance()
    with ProgressBar(2, description="off", enabled=False, file=out):
        pass
    assert out.getvalue() == ""


def test_durations_read_as_people_write_them() -> None:
    assert [format_duration(s) for s in (4.4, 100, 3600 + 300)] == ["4s", "1m40s", "1h05m"]
