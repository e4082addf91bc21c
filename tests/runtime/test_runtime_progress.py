"""The progress bar: shown on request or on a terminal, counts resumed units as done."""

from __future__ import annotations

import asyncio
import io
from pathlib import Path

import pytest

from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor, ProgressBar
from silicolab.runtime.progress import progress_enabled


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
