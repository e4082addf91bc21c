"""Kill anywhere, resume, and get the uninterrupted run: ``demo`` and a ``study run``
whose subjects are a model served over HTTP are each killed with SIGKILL at 20 moments
drawn from a seeded generator, resumed after each kill, and finished by a last
``--resume``. Then every unit is in ``events.jsonl`` exactly once, the record is
byte-identical to an uninterrupted run's, the reports and figures exist, and the counting
test server never got a request of a unit that was finished when the process was killed.

How the 20 moments are placed. A run takes its kills one after another: start, kill,
``--resume``, kill again at a later moment, ... and a last ``--resume`` finishes it, so
every resume but the first starts from a run that was itself killed and resumed. Two such
runs per kind (:data:`CHAINS`), 10 moments each, go side by side on the machine's two
cores: 20 moments for about the price of one run plus a process start per kill, in
half the wall time. A run's moments spread over its whole life:

- start-up (``start``): a random delay after the process began, before or while it
  opens the run and reads its events;
- work (``events``): the moment ``events.jsonl`` holds ``k`` complete lines (at least one
  more than when this process started), plus a small random delay; the ``k`` are drawn
  from all the units, the last unit always among them (a kill right after it);
- the final writes, after the last unit event: ``record.json``, ``report.md``, a figure
  and ``report.html`` freshly written by this process, each plus a small random delay
  (the last falls between ``report.html`` and ``run.json`` saying ``finished``); the
  four are shared out between the two runs, as each costs a resume's whole tail.

The moments are triggered by what appears on disk, not by long sleeps, so they fall
where they should on a slow or busy machine too. A moment that comes after the process
has finished (a final write that was its last) kills nothing; each run must have all
but its last moment land in an unfinished run.
"""

from __future__ import annotations

import json
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from silicolab.runs import Run
from tests.support.cli import EXE, private_cache_env
from tests.support.openai_server import FakeLLMServer

#: Runs killed side by side per kind, and the moments each is killed at (20 in all).
CHAINS = 2
KILLS = 10
#: Kills timed from the process start (seconds: before the run is opened, and after).
START_DELAYS = (0.3, 1.2)
#: The final writes, in the order a run makes them; each a moment after the last event.
FINAL = ("record.json", "report.md", "figures", "report.html")
#: Moments timed from the process start; the rest are event counts.
EARLY = 1
DEMO = ["demo", "--conditions", "20", "--jobs", "2", "--json"]
STUDY = [
    "study", "run", "lawyer", "--conditions", "16", "--jobs", "2", "-y", "--json",
    "--model", "openai:fake-model",
]  # fmt: skip


@dataclass(frozen=True)
class Moment:
    """When to kill: ``what`` is ``start``, ``events`` (``count`` lines) or a final
    write (a name of :data:`FINAL`); ``delay`` seconds after it."""

    what: str
    delay: float
    count: int = 0


def moments(rng: random.Random, n_units: int, finals: tuple[str, ...]) -> list[Moment]:
    """The :data:`KILLS` moments of one run, in the order a run reaches them, ending
    with the final writes ``finals``."""
    n_events = KILLS - EARLY - len(finals)
    counts = sorted({n_units, *rng.sample(range(1, n_units), n_events - 1)})
    work = [Moment("events", rng.uniform(0, 0.02), k) for k in counts]
    for _ in range(EARLY):  # start-up moments fall anywhere before the final writes
        work.insert(rng.randrange(len(work) + 1), Moment("start", rng.uniform(*START_DELAYS)))
    return work + [Moment(name, rng.uniform(0, 0.005)) for name in finals]


class Watch:
    """What a process has done in a run directory since ``since`` (a ``time_ns``):
    complete lines in ``events.jsonl`` and the final files it wrote."""

    def __init__(self, runs: Path, since: int) -> None:
        self.runs, self.since = runs, since
        self._seen = (-1, 0)  # (size of events.jsonl, its lines): read again on growth

    def folder(self) -> Path | None:
        found = [p for p in self.runs.iterdir() if p.is_dir()] if self.runs.is_dir() else []
        return found[0] if found else None

    def lines(self) -> int:
        folder = self.folder()
        path = folder / "events.jsonl" if folder else None
        if path is None or not path.exists():
            return 0
        size = path.stat().st_size
        if size != self._seen[0]:
            self._seen = (size, path.read_bytes().count(b"\n"))
        return self._seen[1]

    def wrote(self, name: str) -> bool:
        folder = self.folder()
        if folder is None:
            return False
        target = folder / name
        paths = list(target.iterdir()) if target.is_dir() else [target]
        return any(p.exists() and p.stat().st_mtime_ns >= self.since for p in paths)


def _start(args: list[str], cwd: Path) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        [*EXE, *args, "--runs-dir", "runs"],
        cwd=cwd,
        env=private_cache_env(cwd),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        start_new_session=True,  # the kill takes the process's whole group
    )


def _trigger(moment: Moment, watch: Watch, n_units: int) -> Callable[[], bool]:
    """When ``moment`` has come for the process ``watch`` follows. An event count the
    run has passed already means the next line; with every unit done, the first final
    write."""
    began = time.monotonic()
    if moment.what == "start":
        return lambda: time.monotonic() - began >= moment.delay
    target = max(moment.count, watch.lines() + 1)
    if moment.what == "events" and target <= n_units:
        return lambda: watch.lines() >= target
    name = FINAL[0] if moment.what == "events" else moment.what
    return lambda: watch.wrote(name)


def _kill_at(args: list[str], cwd: Path, moment: Moment, n_units: int) -> bool:
    """Start (or resume) the run and kill its process group at ``moment``; True when
    the kill found the process alive (the run unfinished)."""
    watch = Watch(cwd / "runs", time.time_ns())
    proc = _start(args, cwd)
    ready = _trigger(moment, watch, n_units)
    deadline = time.monotonic() + 120
    while proc.poll() is None and not ready():
        assert time.monotonic() < deadline, f"{moment} never came"
        time.sleep(0.001)
    if moment.what != "start":
        time.sleep(moment.delay)
    alive = proc.poll() is None
    if alive:
        os.killpg(proc.pid, signal.SIGKILL)
    _, err = proc.communicate()
    assert alive or proc.returncode == 0, err.decode()
    return alive


def _finish(args: list[str], cwd: Path) -> None:
    out = subprocess.run(
        [*EXE, *args, "--runs-dir", "runs"],
        cwd=cwd,
        env=private_cache_env(cwd),
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads(out.stdout)["status"] == "finished"


def _run_dir(cwd: Path) -> Path:
    folders = [p for p in (cwd / "runs").iterdir() if p.is_dir()]
    assert len(folders) == 1, folders
    return folders[0]


def _ok_units(path: Path) -> list[str]:
    return [e["unit"] for e in Run.open(path).events() if e["status"] == "ok"]


def _reference(args: list[str], cwd: Path) -> tuple[bytes, list[str]]:
    """An uninterrupted run: its record's bytes and its finished units."""
    cwd.mkdir()
    _finish(args, cwd)
    path = _run_dir(cwd)
    return (path / "record.json").read_bytes(), _ok_units(path)


@dataclass
class Chain:
    """One run killed at its :data:`KILLS` moments, then finished: how many kills found
    it unfinished, and after each kill ``(requests the server had, units finished)``."""

    folder: Path
    landed: int = 0
    marks: list[tuple[int, set[str]]] = field(default_factory=list)
    requests: list[str] = field(default_factory=list)


def _kill_chain(
    args: list[str], folder: Path, n_units: int, index: int, server: FakeLLMServer | None = None
) -> Chain:
    """Start the ``index``-th run of a kind and kill it at its moments (the final writes
    are shared out among the runs), each time resuming it; then finish it."""
    folder.mkdir()
    chain = Chain(folder)
    finals = FINAL[index::CHAINS]
    for moment in moments(random.Random(f"kill-{index}"), n_units, finals):
        started = _has_run(folder)
        if started and Run.open(_run_dir(folder)).status == "finished":
            break  # the previous moment came after the last write
        chain.landed += _kill_at([*args, *(["--resume"] * started)], folder, moment, n_units)
        if server is not None:
            finished = set(_ok_units(_run_dir(folder))) if _has_run(folder) else set()
            chain.marks.append((len(server.stats.requests_log), finished))
    if Run.open(_run_dir(folder)).status != "finished":
        _finish([*args, "--resume"], folder)
    if server is not None:
        chain.requests = [_text(body["messages"]) for body in server.stats.requests_log]
    return chain


def _has_run(folder: Path) -> bool:
    """Whether the chain's run exists (a killed start-up may not have made it yet)."""
    runs = folder / "runs"
    return runs.is_dir() and any((p / "run.json").is_file() for p in runs.iterdir())


def _side_by_side(make: Callable[[int], Chain]) -> list[Chain]:
    """:data:`CHAINS` chains at once (each mostly waits on its own subprocess)."""
    with ThreadPoolExecutor(CHAINS) as pool:
        return list(pool.map(make, range(CHAINS)))


def _assert_complete(chain: Chain, record: bytes, units: list[str]) -> None:
    assert chain.landed >= KILLS - 1, f"{chain.folder}: only {chain.landed} kills landed"
    path = _run_dir(chain.folder)
    run = Run.open(path)
    assert run.status == "finished", run.info
    for name in ("report.md", "report.html", "run.json"):
        assert (path / name).is_file(), f"finished without {name}"
    assert list((path / "figures").iterdir()), "finished without its figures"
    done = _ok_units(path)
    repeated = sorted({u for u in done if done.count(u) > 1})
    assert not repeated, f"units finished more than once: {repeated}"
    assert sorted(done) == sorted(units), "a unit is missing or foreign"
    assert (path / "record.json").read_bytes() == record, f"{path}: the record differs"


@pytest.mark.slow
def test_demo_killed_at_twenty_moments_resumes_to_the_uninterrupted_record(
    tmp_path: Path,
) -> None:
    record, units = _reference(DEMO, tmp_path / "whole")
    chains = _side_by_side(lambda i: _kill_chain(DEMO, tmp_path / f"killed-{i}", len(units), i))
    for chain in chains:
        _assert_complete(chain, record, units)


# -- the study, its model served over HTTP ----------------------------------------------


def _requests_by_unit(path: Path) -> dict[str, set[str]]:
    """Every request (its messages as text) each condition of the run makes, found by
    running each condition alone, in-process, against the same scripted world."""
    from silicolab.llm import load_model
    from silicolab.llm.base import run_sync
    from silicolab.studies.design import make_design
    from silicolab.studies.files import read_hypothesis
    from silicolab.studies.pipeline import (
        HYPOTHESIS_FILE,
        StudyModels,
        StudyOptions,
        _condition_runner,
    )

    hypothesis = read_hypothesis(path / HYPOTHESIS_FILE)
    options = StudyOptions.from_dict(Run.open(path).config)
    world = _world(hypothesis)
    out: dict[str, set[str]] = {}
    for condition in make_design(hypothesis, conditions=options.conditions).conditions:
        seen: set[str] = set()

        def fn(request: Any, seen: set[str] = seen) -> str:
            seen.add(_text(request.messages))
            return world(request)

        model = load_model("scripted", fn=fn)
        run_one = _condition_runner(hypothesis, options, StudyModels(model, model, model))
        run_sync(run_one(condition))
        out[condition.unit_id] = seen
    return out


def _world(hypothesis: Any) -> Any:
    from silicolab.studies.world import HiddenWorld

    return HiddenWorld(hypothesis, {"passed_bar": 0.6}, intercept=0.2, noise_sd=0.0)


def _text(messages: Any) -> str:
    return json.dumps(messages, sort_keys=True)


@contextmanager
def _server() -> Iterator[FakeLLMServer]:
    """A counting server whose replies are the lawyer study's scripted world."""
    from silicolab.studies import load_example

    world = _world(load_example("lawyer"))

    def reply(body: dict[str, Any]) -> str:
        return world(SimpleNamespace(messages=body["messages"]))

    with FakeLLMServer(reply=reply, latency_s=0.005, log_limit=1_000_000) as server:
        yield server


def _study_chain(folder: Path, n_units: int, index: int) -> Chain:
    with _server() as server:
        return _kill_chain([*STUDY, "--base-url", server.base_url], folder, n_units, index, server)


def _assert_no_finished_unit_asked_again(
    chain: Chain, requests: dict[str, set[str]], units: list[str]
) -> None:
    """After each kill, until the next, every request is one of a unit unfinished at
    that kill (the cache answers the ones already answered)."""
    ends = [m[0] for m in chain.marks[1:]] + [len(chain.requests)]
    for (start, finished), end in zip(chain.marks, ends, strict=True):
        unfinished = set().union(*(requests[u] for u in units if u not in finished))
        again = [text for text in chain.requests[start:end] if text not in unfinished]
        assert not again, f"a request of a finished unit was sent again: {again[0][:300]}"
    assert len(chain.requests) > chain.marks[0][0], "nothing was asked after the first kill"


@pytest.mark.slow
def test_study_killed_at_twenty_moments_repeats_no_request_of_a_finished_unit(
    tmp_path: Path,
) -> None:
    with _server() as server:
        record, units = _reference([*STUDY, "--base-url", server.base_url], tmp_path / "whole")
    requests = _requests_by_unit(_run_dir(tmp_path / "whole"))
    assert set(requests) == set(units)
    chains = _side_by_side(lambda i: _study_chain(tmp_path / f"killed-{i}", len(units), i))
    for chain in chains:
        _assert_complete(chain, record, units)
        _assert_no_finished_unit_asked_again(chain, requests, units)
