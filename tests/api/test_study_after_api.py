"""What can be done with a finished study, from Python: ``refit``, ``predict``,
``plan_follow_on`` and ``discover`` on a :class:`StudyResult` give what ``silicolab study
fit|predict|follow-on|discover`` give on the same run, and refuse in Python's words what
the commands refuse in flags (a read-only run: tests/reliability/test_damaged_files.py,
through the same code)."""

from __future__ import annotations

import asyncio
import json
import subprocess
from pathlib import Path

import pytest

import silicolab as sl
from silicolab.core.errors import InputError
from tests.support.cli import EXE, private_cache_env, strict_json


def _cli(args: list[str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=private_cache_env(cwd), capture_output=True, text=True,
        timeout=600,
    )  # fmt: skip


@pytest.fixture(scope="module")
def study(tmp_path_factory: pytest.TempPathFactory) -> sl.StudyResult:
    """A small offline study (the hidden world answers), run from a notebook-like cell."""
    folder = tmp_path_factory.mktemp("after")

    async def cell() -> sl.StudyResult:
        return sl.run_study("lawyer", subjects="world", conditions=24, runs_dir=folder / "runs")

    result = asyncio.run(cell())
    assert result.status == "finished", result.health
    return result


def test_refit_is_the_commands_refit(study: sl.StudyResult, tmp_path: Path) -> None:
    mine = study.refit(interactions=True, out=tmp_path / "mine.json")
    out = _cli(["study", "fit", str(study.run_dir), "--interactions", "--json",
                "--out", str(tmp_path / "cli.json")], tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert mine.which == "interactions" and mine.path == tmp_path / "mine.json"
    assert json.loads(mine.path.read_text()) == json.loads((tmp_path / "cli.json").read_text())
    assert strict_json(out.stdout)["outcome"] == mine.outcome == "hired"


def test_predict_without_a_scientist_is_the_mechanical_loo_of_the_command(
    study: sl.StudyResult, tmp_path: Path
) -> None:
    mine = study.predict()
    assert mine.mechanical_only and mine.path == study.run_dir / "predictions.json"
    mse = mine.data["mse"]
    out = _cli(["study", "predict", str(study.run_dir), "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert strict_json(out.stdout)["mse"] == json.loads(json.dumps(mse))


def test_follow_on_without_a_scientist_names_model_in_python_and_the_flag_in_the_cli(
    study: sl.StudyResult, tmp_path: Path
) -> None:
    with pytest.raises(InputError, match=r"pass model=SPEC"):
        study.plan_follow_on(tmp_path / "next.yaml")
    out = _cli(["study", "follow-on", str(study.run_dir), "--out", "next.yaml"], tmp_path)
    assert out.returncode == 2 and "pass --model SPEC" in out.stderr
    assert not (tmp_path / "next.yaml").exists()


def test_discover_is_the_commands_discovery(study: sl.StudyResult, tmp_path: Path) -> None:
    mine = study.discover("pc")
    out = _cli(["study", "discover", str(study.run_dir), "--method", "pc", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    cli = strict_json(out.stdout)
    assert cli["metrics"] == json.loads(json.dumps(mine["metrics"]))
    assert cli["edges"] == json.loads(json.dumps(mine["edges"]))
    with pytest.raises(InputError, match=r"method='lingam' is not supported here"):
        study.discover("lingam")
