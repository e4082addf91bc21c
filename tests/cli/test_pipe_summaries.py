"""The summaries a newcomer reads in a pipe (issue 26, item 8): Markdown tables, lines
never wrapped at 80 columns, a study's prediction MSEs, and run directories printed the
same way (absolute) by every command, in its summary and in ``--json``."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
from tests.support.cli import EXE, cli_env, strict_json

RUN_DIRECTORY = re.compile(r"^run directory: (\S+)", re.MULTILINE)


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=600
    )


def test_models_is_a_markdown_table_in_a_pipe(tmp_path: Path) -> None:
    out = _cli(["models"], tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.splitlines()
    assert lines[0] == "## models by role (config: defaults)"
    assert "| role | spec | from | server | key variable | key set |" in lines
    assert "| scientist | scripted | built-in | offline | - | not needed |" in lines
    assert not [line for line in lines if "━" in line or "┃" in line]  # no rich box drawing


def test_the_demo_prints_markdown_unwrapped_lines_and_an_absolute_run_dir(
    tmp_path: Path,
) -> None:
    out = _cli(["demo", "--conditions", "4", "--runs-dir", "runs"], tmp_path)
    assert out.returncode in (0, 3), out.stderr  # 4 conditions cannot fit: degraded
    lines = out.stdout.splitlines()
    heading = lines.index("## causal discovery on Auto MPG vs the MAC paper")
    assert lines[heading + 2] == "| method | SHD | NHD | F1 | paper |"
    (causalab,) = [line for line in lines if line.startswith("CausaLab 4-node lab")]
    # One line, not cut at 80 columns: it ends with the paper's number and its provenance.
    assert len(causalab) > 80 and "(paper's best" in causalab and causalab.endswith(")")
    (printed,) = RUN_DIRECTORY.findall(out.stdout)
    run_dir = (tmp_path / "runs").resolve() / Path(printed).name
    assert printed == str(run_dir) and run_dir.is_dir()
    assert f"'silicolab view {run_dir} --open'" in out.stdout


@pytest.mark.parametrize(
    "command",
    [
        ["discover", "--dataset", "auto_mpg", "--method", "pc"],
        ["sim", "run", "bargaining"],
        ["bench", "causalab", "--suite", "3nodes", "--episodes", "1"],
        ["study", "run", "auction", "--subjects", "rule", "--conditions", "8", "-y"],
    ],
    ids=" ".join,
)
def test_every_command_prints_its_run_directory_absolute_in_both_modes(
    command: list[str], tmp_path: Path
) -> None:
    args = [*command, "--runs-dir", "runs"]  # relative: printed resolved all the same
    shown = _cli(args, tmp_path)
    assert shown.returncode == 0, shown.stderr
    (printed,) = RUN_DIRECTORY.findall(shown.stdout)
    assert Path(printed).is_absolute() and Path(printed).is_dir(), printed
    assert Path(printed).parent == (tmp_path / "runs").resolve()
    as_json = _cli([*args, "--json"], tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    run_dir = Path(strict_json(as_json.stdout)["run_dir"])
    assert run_dir.is_absolute() and run_dir.parent == (tmp_path / "runs").resolve()


def test_study_run_with_predict_prints_the_prediction_mses(tmp_path: Path) -> None:
    args = ["study", "run", "auction", "--subjects", "rule", "--conditions", "8", "-y",
            "--predict", "--runs-dir", "runs"]  # fmt: skip
    as_json = _cli([*args, "--json"], tmp_path)
    assert as_json.returncode == 0, as_json.stderr
    mse = strict_json(as_json.stdout)["predictions"]
    assert mse and mse["loo_mechanical"] is not None
    shown = _cli(args, tmp_path)
    assert shown.returncode == 0, shown.stderr
    (line,) = [x for x in shown.stdout.splitlines() if x.startswith("prediction MSE: ")]
    assert f"loo_mechanical {mse['loo_mechanical']:.4g}" in line, line
