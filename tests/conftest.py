"""Shared pytest fixtures for silicolab's test suite.

The fixtures here start :class:`tests.support.openai_server.FakeLLMServer` instances so tests can
exercise real HTTP clients against a local, scripted LLM API instead of the internet.

Every JSON file the suite writes must be strict JSON (no ``NaN``, ``Infinity``, ``-Infinity``):
after each test that used ``tmp_path``, every ``*.json`` file and every ``*.jsonl`` line in it
is parsed strictly and the test errors at teardown naming the file and the token; when the
session ends, the whole base temp directory (module- and session-scoped folders too) is
checked again and the run fails (exit 1, a "strict JSON" section in the summary) if any file
is left. A test that writes non-strict JSON on purpose says so with
``@pytest.mark.nonstrict_json`` (its ``tmp_path`` is then left out).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

# ``tests`` is a package; make sure the repository root is importable so test modules anywhere
# under ``tests/`` (even in sub-directories without ``__init__.py``) can do
# ``from tests.support.openai_server import FakeLLMServer`` when pytest runs from the repo root.
_REPO_ROOT = str(Path(__file__).resolve().parent.parent)
if _REPO_ROOT not in sys.path:
    sys.path.insert(0, _REPO_ROOT)

from tests.support.cli import json_problems  # noqa: E402
from tests.support.openai_server import FakeLLMServer  # noqa: E402

ServerFactory = Callable[..., FakeLLMServer]

#: tmp_path folders of tests marked ``nonstrict_json`` and files already reported.
_EXEMPT: set[Path] = set()
_REPORTED: set[str] = set()
_SESSION_PROBLEMS: list[str] = []


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "nonstrict_json: the test writes non-strict JSON (NaN/Infinity) on purpose; its "
        "tmp_path is left out of the strict JSON check",
    )


def _report(problems: list[str]) -> list[str]:
    fresh = [p for p in problems if p not in _REPORTED]
    _REPORTED.update(fresh)
    return fresh


@pytest.fixture(autouse=True)
def _strict_json_files(request: pytest.FixtureRequest) -> Iterator[None]:
    """After a test that used ``tmp_path``, fail it if a JSON file there is not strict."""
    uses = {"tmp_path", "tmpdir"} & set(request.fixturenames)
    folder = Path(str(request.getfixturevalue(sorted(uses)[0]))) if uses else None
    if folder is not None and request.node.get_closest_marker("nonstrict_json"):
        _EXEMPT.add(folder.resolve())
        folder = None
    yield
    if folder is None:
        return
    problems = _report(json_problems(folder))
    if problems:
        pytest.fail(
            "files written by this test are not strict JSON (JSON has no NaN or "
            "Infinity; write them with silicolab.core.files.dumps):\n  " + "\n  ".join(problems),
            pytrace=False,
        )


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Check every JSON file under the session's base temp directory; fail the run if
    one is not strict (the files are listed in the terminal summary)."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    root = getattr(factory, "_basetemp", None)  # set once a test asked for a temp folder
    if root is None:
        return  # no test made a temp folder (asking for it now would create one)
    problems = _report(json_problems(root, skip=_EXEMPT))
    if problems:
        _SESSION_PROBLEMS.extend(problems)
        if session.exitstatus == pytest.ExitCode.OK:  # an interrupted run keeps its status
            session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    """Name the files the end-of-session strict JSON check found."""
    if not _SESSION_PROBLEMS:
        return
    terminalreporter.write_sep(
        "=", "strict JSON: files the suite wrote with NaN/Infinity", red=True
    )
    for problem in _SESSION_PROBLEMS:
        terminalreporter.write_line(problem, red=True)
    terminalreporter.write_line(
        "JSON has no NaN or Infinity: write these files with silicolab.core.files.dumps",
        red=True,
    )


@pytest.fixture
def llm_server() -> Iterator[FakeLLMServer]:
    """A started :class:`FakeLLMServer` with default options (echo replies, no faults)."""
    with FakeLLMServer() as server:
        yield server


@pytest.fixture
def llm_server_factory() -> Iterator[ServerFactory]:
    """A callable ``make(**options) -> FakeLLMServer`` returning started servers.

    Options are :class:`FakeLLMServer`'s constructor arguments. Every server made is stopped at
    teardown, even when the test fails.
    """
    servers: list[FakeLLMServer] = []

    def make(**options: Any) -> FakeLLMServer:
        server = FakeLLMServer(**options)
        server.start()
        servers.append(server)
        return server

    yield make
    for server in reversed(servers):
        server.stop()
