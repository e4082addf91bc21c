"""The interrupted message prints a command that works: for every command that writes a
run, the command as typed with ``--resume`` appended continues the interrupted run to its
end (``study run`` is checked in ``test_completion.py``)."""

from __future__ import annotations

import signal
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from silicolab.cli.signals import RESUME_HINT
from silicolab.runs import Run
from tests.reliability.support import (
    bargainer_reply,
    cli,
    ok_units,
    only_run,
    start,
    use_server,
    wait_for,
)
from tests.support.openai_server import FakeLLMServer

DEMO = ["demo", "--conditions", "20", "--json"]
BENCH = ["bench", "causalab", "--episodes", "10", "--jobs", "1", "--json"]
MAC = ["discover", "--dataset", "auto_mpg", "--method", "mac_meta_debate", "--model", "openai:fake"]
SIM = ["sim", "run", "bargaining", "--model", "openai:fake"]


@pytest.fixture
def server(request: pytest.FixtureRequest) -> Iterator[FakeLLMServer | None]:
    """A slow model server for the commands that call one (None for the offline ones)."""
    reply = {"sim": bargainer_reply, "discover": None}.get(request.node.callspec.id, "")
    if reply == "":
        yield None
        return
    with FakeLLMServer(reply=reply, latency_s=0.05) as fake:
        yield fake


def _first_event(folder: Path) -> Callable[[], bool]:
    def ready() -> bool:
        runs = folder / "runs"
        found = list(runs.glob("*/events.jsonl")) if runs.is_dir() else []
        return bool(found) and found[0].read_text().count("\n") >= 1

    return ready


CASES = {
    "demo": (DEMO, signal.SIGINT, 0),
    "bench": (BENCH, signal.SIGTERM, 0),
    "discover": (MAC, signal.SIGINT, 3),  # an echoing model: degraded, as uninterrupted
    "sim": (SIM, signal.SIGINT, 0),
}


@pytest.mark.parametrize("case", list(CASES), ids=list(CASES))
def test_the_typed_command_with_resume_added_finishes_the_run(
    tmp_path: Path, case: str, server: FakeLLMServer | None
) -> None:
    args, sig, exit_code = CASES[case]
    if server is not None:
        use_server(tmp_path, server.base_url)
        ready = lambda: server.stats.ok >= 3  # noqa: E731 - a few replies in
    else:
        ready = _first_event(tmp_path)
    proc = start(args, tmp_path)
    wait_for(ready, proc, "the work to start")
    proc.send_signal(sig)
    _, stderr = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, stderr
    assert stderr.strip().splitlines()[-1] == RESUME_HINT
    run = only_run(tmp_path / "runs")
    assert run.status == "interrupted", run.info
    done = ok_units(run)

    out = cli([*args, "--resume"], tmp_path)  # what the message says, literally
    assert out.returncode == exit_code, out.stderr
    assert not [line for line in out.stderr.splitlines() if line.startswith("error:")]
    run = Run.open(run.path)
    assert run.status == ("degraded" if exit_code == 3 else "finished")
    units = ok_units(run)
    assert units[: len(done)] == done and len(set(units)) == len(units)  # none redone
