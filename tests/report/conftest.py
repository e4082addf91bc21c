"""Fixtures of the report tests: real run directories of every kind, made once per session."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.report.browser import launched, skip_or_fail, unavailable
from tests.report.runs import COMMANDS, make_run


@pytest.fixture(scope="session")
def run_dirs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """name -> run directory, for every command in :data:`tests.report.runs.COMMANDS`."""
    root = tmp_path_factory.mktemp("report-runs")
    return {name: make_run(name, root) for name in COMMANDS}


@pytest.fixture(scope="module")
def browser(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """A headless Chromium context (skips, or fails under SILICOLAB_REQUIRE_BROWSER=1,
    when there is no browser).

    One per module, closed when the module's tests end: while Playwright's sync API is
    open, asyncio sees a running loop in this thread, so any later test that calls
    ``asyncio.run`` itself would be refused (silicolab's synchronous calls would then run
    on a worker thread of :func:`silicolab.core.sync.run_sync`)."""
    reason = unavailable()
    if reason:
        skip_or_fail(reason)
    with launched(tmp_path_factory.mktemp("chromium-profile")) as context:
        yield context
