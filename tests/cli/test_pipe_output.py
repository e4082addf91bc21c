"""What a newcomer sees when the CLI's output goes to a pipe (issue 26, item 8): progress
lines on stderr during long work, library warnings summarized in one line per kind, and a
JSON error object on stdout with ``--json``. Every command runs as a real subprocess whose
stdout and stderr are pipes, exactly as in a CI log or ``silicolab ... | tee``."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from tests.support.cli import EXE, cli_env, strict_json

from silicolab.cli.signals import RESUME_HINT

#: A progress line as a pipe shows it: ``boxinggym: 1/2 done, 0s elapsed, ETA 1s``.
PROGRESS = re.compile(r"^(\S[^:]*): (\d+)/(\d+) done, \S+ elapsed, ETA \S+")


def _cli(args: list[str], cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=cli_env(env), capture_output=True, text=True, timeout=600
    )


def test_bench_in_a_pipe_prints_progress_lines_on_stderr_only(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--suite", "3nodes", "--episodes", "2", "--json",
            "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    out = _cli(args, tmp_path, SILICOLAB_PROGRESS_INTERVAL="0.01")
    assert out.returncode == 0, out.stderr
    strict_json(out.stdout)  # nothing but the one JSON object on stdout
    lines = [m for m in map(PROGRESS.match, out.stderr.splitlines()) if m]
    assert lines, out.stderr
    description, done, total = lines[-1].group(1, 2, 3)
    assert description == "causalab" and done == total and int(total) > 0, lines[-1].group()


def test_a_fast_command_in_a_pipe_prints_no_progress(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--suite", "3nodes", "--episodes", "2",
            "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    out = _cli(args, tmp_path)  # the default interval: 10 s, longer than this bench
    assert out.returncode == 0, out.stderr
    assert not [line for line in out.stderr.splitlines() if PROGRESS.match(line)], out.stderr


def test_one_discovery_method_in_a_pipe_has_a_heartbeat(tmp_path: Path) -> None:
    args = ["discover", "--dataset", "sachs", "--method", "pc", "--json",
            "--runs-dir", str(tmp_path / "runs")]  # fmt: skip
    out = _cli(args, tmp_path, SILICOLAB_PROGRESS_INTERVAL="0.01")
    assert out.returncode == 0, out.stderr
    assert strict_json(out.stdout)["method"] == "pc"
    assert "discover pc on sachs: still running, " in out.stderr, out.stderr
    assert "discover pc on sachs: done in " in out.stderr, out.stderr


def test_a_bad_progress_interval_is_one_error_line(tmp_path: Path) -> None:
    args = ["discover", "--dataset", "sachs", "--runs-dir", str(tmp_path / "runs")]
    out = _cli(args, tmp_path, SILICOLAB_PROGRESS_INTERVAL="soon")
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        "error: SILICOLAB_PROGRESS_INTERVAL='soon' is not a number of seconds above 0; "
        "set it to e.g. 10 or unset it"
    ]


#: The real entry point with one more command that warns as statsmodels does in a study:
#: 500 RuntimeWarnings from 500 places (each shown by the default filters) and one other.
_WARNING_SCRIPT = """
import sys, warnings
from silicolab.cli.app import app, main

@app.command("warn-a-lot")
def warn_a_lot(json_out: bool = __import__("typer").Option(False, "--json")) -> None:
    for line in range(500):
        warnings.warn_explicit("divide by zero encountered in log", RuntimeWarning,
                               "/x/site-packages/statsmodels/regression/linear_model.py", line)
    warnings.warn_explicit("the default will change", FutureWarning,
                           "/x/site-packages/pandas/core/frame.py", 7)
    print('{"ok": true}' if json_out else "done")

main(sys.argv[1:])
"""


def test_library_warnings_are_summarized_in_one_line_per_kind(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _WARNING_SCRIPT, "warn-a-lot", "--json"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert strict_json(out.stdout) == {"ok": True}  # no warning reaches stdout
    assert out.stderr.splitlines() == [
        "note: 500 warnings from statsmodels (RuntimeWarning: divide by zero encountered in "
        "log), first at statsmodels/regression/linear_model.py:0",
        "note: 1 warning from pandas (FutureWarning: the default will change), "
        "first at pandas/core/frame.py:7",
    ]


#: A command that warns, then is interrupted just after creating a coroutine it never
#: awaits (what a signal striking inside ``async with`` leaves behind).
_INTERRUPTED_SCRIPT = """
import sys, warnings
from silicolab.cli.app import app, main

async def exit_of_a_timeout():
    return None

@app.command("warn-then-stop")
def warn_then_stop() -> None:
    warnings.warn_explicit("the default will change", FutureWarning,
                           "/x/site-packages/pandas/core/frame.py", 7)
    struck = exit_of_a_timeout()
    del struck  # never awaited: Python warns when it is collected
    raise KeyboardInterrupt

main(sys.argv[1:])
"""


def test_after_an_interruption_the_resume_hint_is_the_last_line(tmp_path: Path) -> None:
    out = subprocess.run(
        [sys.executable, "-c", _INTERRUPTED_SCRIPT, "warn-then-stop"],
        cwd=tmp_path, env=cli_env(), capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert out.returncode == 130, out.stderr
    assert out.stderr.splitlines() == [
        "note: 1 warning from pandas (FutureWarning: the default will change), "
        "first at pandas/core/frame.py:7",
        RESUME_HINT,
    ]  # the interruption's own unawaited coroutine is not reported


def test_errors_with_json_are_a_json_object_on_stdout(tmp_path: Path) -> None:
    bad_input = _cli(["discover", "--dataset", "nope", "--json"], tmp_path)
    assert bad_input.returncode == 2
    error = strict_json(bad_input.stdout)
    assert error == {
        "error": "unknown dataset 'nope'; choose one of ['auto_mpg', 'dwd_climate', 'sachs']",
        "exit_code": 2,
        "kind": "input",
    }
    assert bad_input.stderr.strip() == "error: " + error["error"]  # still the one line
    usage = _cli(["discover", "--no-such-option", "--json"], tmp_path)
    assert usage.returncode == 2
    assert strict_json(usage.stdout) == {
        "error": "No such option: --no-such-option", "exit_code": 2, "kind": "usage"
    }  # fmt: skip
    config = _cli(["models", "--config", str(tmp_path / "missing.yaml"), "--json"], tmp_path)
    assert config.returncode == 2, config.stderr
    assert strict_json(config.stdout)["kind"] in {"config", "input"}
    plain = _cli(["discover", "--dataset", "nope"], tmp_path)  # without --json: no JSON
    assert plain.stdout == "" and plain.returncode == 2


#: A module the worker processes import: one unit warns as a library would, 200 times.
_WARNING_UNIT = """
import warnings

def noisy(item):
    for line in range(200):
        warnings.warn_explicit("divide by zero encountered in log", RuntimeWarning,
                               "/x/site-packages/statsmodels/regression/linear_model.py", line)
    return item
"""
_WORKER_SCRIPT = """
from noisy_unit import noisy
from silicolab.runtime import ProcessExecutor

if __name__ == "__main__":
    results = ProcessExecutor(2, progress=False).map(noisy, [1, 2, 3, 4])
    print(sorted(r.value for r in results))
"""


def test_worker_processes_show_each_kind_of_warning_once(tmp_path: Path) -> None:
    (tmp_path / "noisy_unit.py").write_text(_WARNING_UNIT)
    (tmp_path / "main.py").write_text(_WORKER_SCRIPT)
    env = cli_env({"PYTHONPATH": f"{tmp_path}{os.pathsep}{cli_env()['PYTHONPATH']}"})
    out = subprocess.run([sys.executable, "main.py"], cwd=tmp_path, env=env,
                         capture_output=True, text=True, timeout=300)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "[1, 2, 3, 4]"
    shown = [line for line in out.stderr.splitlines() if "RuntimeWarning" in line]
    assert 1 <= len(shown) <= 2, out.stderr  # at most once per worker, not 800 times
