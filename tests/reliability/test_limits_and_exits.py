"""Bounds, cycles, example files and exit codes, as a new user meets them (issue 24).

Each case runs the real CLI as a subprocess: ``list-examples --write`` onto a file and
over a researcher's edits, a cyclic hypothesis, ``--jobs`` and ``--seeds`` far too large,
and every model-calling command against an endpoint that never answers. A refusal is one
line, no traceback, the documented exit code, and no run directory left behind.
"""

from __future__ import annotations

import shlex
import socket
import subprocess
from pathlib import Path
from typing import Any

import pytest
import yaml

from silicolab.cli import bounds
from silicolab.core.errors import InputError, LLMError, ParseFailure
from silicolab.scm.graph import find_cycle
from silicolab.studies.examples import EXAMPLES, example_text
from silicolab.studies.files import hypothesis_from_data
from tests.reliability.support import one_line, use_server
from tests.support.cli import EXE, cli_env
from tests.support.openai_server import FakeLLMServer, Fault


def _cli(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """``silicolab ARGS`` with no terminal on stdin (as in a script or CI)."""
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=cli_env(), capture_output=True, text=True,
        timeout=timeout, stdin=subprocess.DEVNULL,
    )  # fmt: skip


def _refused(out: subprocess.CompletedProcess[str], code: int = 2) -> str:
    """The one error line of a command that exited ``code`` without a traceback."""
    assert out.returncode == code, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    return one_line(out.stderr)


def _no_runs(folder: Path) -> None:
    runs = folder / "runs"
    assert not runs.exists() or not any(runs.iterdir()), list(runs.iterdir())


# -- list-examples --write ------------------------------------------------------------------


def test_list_examples_write_onto_a_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("mine\n")
    line = _refused(_cli(["study", "list-examples", "--write", "notes.txt"], tmp_path))
    assert line == "error: --write takes a folder; notes.txt is a file: name a folder"
    assert (tmp_path / "notes.txt").read_text() == "mine\n"


def test_list_examples_keeps_edited_files_unless_forced(tmp_path: Path) -> None:
    write = ["study", "list-examples", "--write", "ex"]
    assert _cli(write, tmp_path).returncode == 0
    files = {name: tmp_path / "ex" / f"{name}.yaml" for name in EXAMPLES}
    assert all(files[n].read_text() == example_text(n) for n in EXAMPLES)

    again = _cli(write, tmp_path)  # identical files: rewritten silently
    assert again.returncode == 0 and again.stderr == "", again.stderr

    edited = example_text("mug").replace("Two people", "Two students")
    files["mug"].write_text(edited)
    files["bail"].write_text("# my own bail study\n")
    files["lawyer"].unlink()  # a missing file is simply written
    line = _refused(_cli(write, tmp_path))
    assert "edited example files (mug.yaml, bail.yaml)" in line and "--force" in line, line
    assert files["mug"].read_text() == edited  # nothing was written
    assert files["bail"].read_text() == "# my own bail study\n"
    assert not files["lawyer"].exists()

    forced = _cli([*write, "--force"], tmp_path)
    assert forced.returncode == 0, forced.stderr
    assert all(files[n].read_text() == example_text(n) for n in EXAMPLES)


# -- cyclic hypotheses ----------------------------------------------------------------------


def test_find_cycle_names_the_loop_in_order() -> None:
    assert find_cycle([("x", "m"), ("m", "y"), ("y", "m")]) == ["m", "y", "m"]
    assert find_cycle([("a", "b"), ("b", "c"), ("c", "a")]) == ["a", "b", "c", "a"]
    assert find_cycle([("a", "a")]) == ["a", "a"]
    assert find_cycle([("x", "m"), ("m", "y"), ("x", "y")]) is None
    assert find_cycle([]) is None


def _cyclic_mug() -> dict[str, Any]:
    """The mug study with a mediator ``rapport`` caused by the outcome and causing it:
    buyer_budget -> rapport -> deal -> rapport."""
    data = yaml.safe_load(example_text("mug"))
    deal = data["variables"][0]
    deal["causes"].append("rapport")
    data["variables"].append(
        {
            "name": "rapport",
            "role": "mediator",
            "type": "continuous",
            "questions": [{"addressee": "buyer", "text": "How warm was the talk, 0-10?"}],
            "causes": ["buyer_budget", "deal"],
        }
    )
    return data


def test_the_validator_refuses_a_cycle_naming_it_and_its_field() -> None:
    with pytest.raises(InputError) as info:
        hypothesis_from_data(_cyclic_mug(), source="cyclic.yaml")
    message = str(info.value)
    assert "field variables[0](deal).causes" in message, message  # where the loop closes
    assert "the hypothesis has a cycle: deal -> rapport -> deal" in message, message
    assert "a structural causal model must be acyclic: remove one of these paths" in message
    acyclic = _cyclic_mug()
    acyclic["variables"][4]["causes"] = ["buyer_budget"]
    assert hypothesis_from_data(acyclic).equations()["deal"][-1] == "rapport"


def test_study_run_refuses_a_cyclic_hypothesis_before_any_run(tmp_path: Path) -> None:
    (tmp_path / "cyclic.yaml").write_text(yaml.safe_dump(_cyclic_mug(), sort_keys=False))
    out = _cli(["study", "run", "--hypothesis", "cyclic.yaml", "--subjects", "world"], tmp_path)
    line = _refused(out)
    assert line.startswith("error: cyclic.yaml line "), line
    assert "the hypothesis has a cycle: deal -> rapport -> deal" in line, line
    _no_runs(tmp_path)


# -- bounds on numeric options ----------------------------------------------------------


def test_check_jobs_bounds_processes_by_the_cpus_and_calls_by_a_constant() -> None:
    cpus = bounds.usable_cpus()
    workers = max(4 * cpus, 8)  # 4 per CPU; a bench's default 8 even on one CPU
    assert bounds.max_jobs(processes=True) == workers
    assert bounds.check_jobs(workers, processes=True) == workers
    with pytest.raises(InputError, match=f"above its bound {workers} .*{cpus} CPUs here"):
        bounds.check_jobs(workers + 1, processes=True)
    assert bounds.check_jobs(256, processes=False) == 256
    with pytest.raises(InputError, match="--jobs 257 is above its bound 256"):
        bounds.check_jobs(257, processes=False)


def test_confirm_units_shows_the_plan_and_asks(monkeypatch, capsys) -> None:
    bounds.confirm_units(1000, "small", yes=False)  # at the limit: nothing to ask
    bounds.confirm_units(5000, "5 x 1,000", yes=True)
    assert capsys.readouterr().err == "plan: 5 x 1,000\n"
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("typer.confirm", lambda *a, **k: False)
    with pytest.raises(InputError, match="cancelled; nothing was run"):
        bounds.confirm_units(5000, "5 x 1,000", yes=False)
    monkeypatch.setattr("typer.confirm", lambda *a, **k: True)
    bounds.confirm_units(5000, "5 x 1,000", yes=False)


@pytest.mark.parametrize(
    ("args", "bound"),
    [
        (["bench", "causalab", "--jobs", "100000"], bounds.max_jobs(processes=True)),
        (["bench", "discovery", "--jobs", "100000"], bounds.max_jobs(processes=True)),
        (["study", "run", "auction", "--subjects", "rule", "--jobs", "100000"], 256),
        (["demo", "--jobs", "100000"], 256),
    ],
    ids=["bench-processes", "bench-discovery", "study", "demo"],
)
def test_jobs_above_the_bound_is_refused_before_any_run(
    tmp_path: Path, args: list[str], bound: int
) -> None:
    line = _refused(_cli(args, tmp_path))
    assert line.startswith(f"error: --jobs 100000 is above its bound {bound} "), line
    assert f"use --jobs {bound} or less" in line
    _no_runs(tmp_path)


def test_llm_bench_jobs_are_calls_in_flight_not_processes(tmp_path: Path) -> None:
    args = ["bench", "episodes", "--agent", "llm", "--model", "openai:fake", "--jobs", "257"]
    assert "above its bound 256 (at most 256 units in flight)" in _refused(_cli(args, tmp_path))
    _no_runs(tmp_path)


@pytest.mark.parametrize(
    ("args", "plan"),
    [
        (["bench", "boxinggym", "--seeds", "100000"], "13 goals x 100,000 seeds"),
        (["bench", "episodes", "--seeds", "100000"], "1 environment x 100,000 seeds"),
    ],
)
def test_a_large_bench_needs_yes_without_a_terminal(
    tmp_path: Path, args: list[str], plan: str
) -> None:
    line = _refused(_cli(args, tmp_path))
    assert line.startswith("error: this runs "), line
    assert plan in line and "more than 1,000: add --yes" in line, line
    _no_runs(tmp_path)


# -- one exit code for a model that never answers ----------------------------------------


def _closed_port() -> str:
    """The base URL of a local port nothing listens on (connection refused at once)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"


#: Every command that calls a model, with the least work that reaches the model.
UNREACHABLE = {
    "ask": "ask 'Say hi' --role scientist",
    "discover": "discover --dataset auto_mpg --method mac_meta_debate",
    "sim run": "sim run bargaining",
    "study run": "study run mug --conditions 1 --yes",
    "study hypothesis": "study hypothesis 'Two people bargaining over a mug.'",
    "bench discovery": "bench discovery --methods mac_meta_debate --datasets auto_mpg",
    "bench causalab": "bench causalab --agent llm --suite 3nodes --episodes 1",
    "bench boxinggym": "bench boxinggym --agent llm --env dugongs --seeds 1",
    "bench episodes": "bench episodes --agent llm --seeds 1",
}


@pytest.mark.parametrize("command", list(UNREACHABLE))
def test_every_command_exits_3_when_the_model_is_unreachable(tmp_path: Path, command: str) -> None:
    base_url = _closed_port()
    use_server(tmp_path, base_url, timeout_s=2)
    args = shlex.split(UNREACHABLE[command])
    if command != "ask":  # ask uses the configured role's model
        args += ["--model", "openai:fake"]
    out = _cli([*args, "--base-url", base_url], tmp_path)
    assert out.returncode == 3, (out.returncode, out.stderr)
    assert "Traceback" not in out.stderr
    lines = [line for line in out.stderr.splitlines() if line.strip()]
    shown = [line for line in lines if not line.startswith(("plan: ", "note: "))]
    assert len(shown) == 1, out.stderr  # one line says why (a study's plan comes first)
    assert shown[0].startswith(("error: ", "DEGRADED: ")), shown
    assert "cannot reach 127.0.0.1" in shown[0], shown  # the endpoint, not something else


def test_a_server_that_always_fails_exits_3_too(tmp_path: Path) -> None:
    with FakeLLMServer(faults=[Fault("500")] * 10) as server:
        use_server(tmp_path, server.base_url)
        out = _cli(["ask", "Say hi", "--role", "scientist"], tmp_path)
    assert _refused(out, code=3).startswith("error: ")


def test_model_failures_share_the_exit_code_of_a_degraded_run() -> None:
    from silicolab.runs import DEGRADED_EXIT

    assert LLMError("x").exit_code == ParseFailure("x").exit_code == DEGRADED_EXIT == 3
