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

``make test`` runs the suite on two pytest-xdist workers (``-n 2 --dist loadgroup``). The
folders whose session fixtures are expensive or exclusive (:data:`GROUPS`: the llama.cpp
server, the Ray cluster, the report's runs and browser) each run on one worker; each
worker checks its own base temp folder at its end and hands what it found to the
controller, which fails the run as a serial run would.
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


#: Test folders that run on one xdist worker each, by group name: their session fixtures
#: (a llama.cpp server, a Ray cluster, every report run and a browser) cost minutes and
#: would otherwise be built once per worker.
GROUPS = {"real_model": "llama", "scale": "ray", "report": "report"}
_TESTS = Path(__file__).resolve().parent


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "nonstrict_json: the test writes non-strict JSON (NaN/Infinity) on purpose; its "
        "tmp_path is left out of the strict JSON check",
    )
    # pytest-xdist registers it too; without xdist the mark must still be known
    config.addinivalue_line("markers", "xdist_group(name): run these tests on one worker")


@pytest.hookimpl(tryfirst=True)  # before xdist reads the marks
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Put each test of a :data:`GROUPS` folder in its folder's xdist group."""
    for item in items:
        path = Path(str(item.path)).resolve()
        if path.is_relative_to(_TESTS):
            group = GROUPS.get(path.relative_to(_TESTS).parts[0])
            if group:
                item.add_marker(pytest.mark.xdist_group(group))


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


def _xdist_controller(config: pytest.Config) -> bool:
    """Whether this process hands the tests to xdist workers (it runs none itself)."""
    return not hasattr(config, "workerinput") and config.getoption("dist", "no") != "no"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Check every JSON file under the session's base temp directory; fail the run if
    one is not strict (the files are listed in the terminal summary). Under xdist each
    worker checks its own folder and hands its findings to the controller
    (:func:`pytest_testnodedown`): the controller runs no test, so it cannot know which
    folders the workers' ``nonstrict_json`` tests exempted."""
    config = session.config
    if not _xdist_controller(config):
        factory = getattr(config, "_tmp_path_factory", None)
        root = getattr(factory, "_basetemp", None)  # set once a test asked for a temp folder
        if root is not None:  # else no test made one (asking for it now would create one)
            _SESSION_PROBLEMS.extend(_report(json_problems(root, skip=_EXEMPT)))
        if hasattr(config, "workeroutput"):
            config.workeroutput["strict_json_problems"] = list(_SESSION_PROBLEMS)
            return
    if _SESSION_PROBLEMS and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED  # an interrupted run keeps its own


@pytest.hookimpl(optionalhook=True)  # an xdist hook: only called when xdist is installed
def pytest_testnodedown(node: Any, error: object | None) -> None:
    """In the xdist controller: collect a finished worker's strict JSON findings."""
    output = getattr(node, "workeroutput", None) or {}
    _SESSION_PROBLEMS.extend(output.get("strict_json_problems", ()))


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
