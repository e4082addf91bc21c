"""Adding an environment family takes one module and one registration line: the toy coin
family (tests/envs/coin_family.py) runs through run_episode, the bench and the CLI."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pytest
from tests.support.cli import strict_json
from typer.testing import CliRunner

from silicolab.bench.episodes import run_episodes_bench
from silicolab.envs import Env, check_env, make, register
from silicolab.scientists import check_family, make_scientist, run_episode


@pytest.fixture(scope="module", autouse=True)
def coin_registered() -> None:
    register(
        "coin",
        "tests.envs.coin_family:make_coin",
        scientists="tests.envs.coin_family:FAMILY",
        title="Coin",
    )


def _flip(lab: Any, rng: np.random.Generator) -> None:
    lab.flip(int(rng.integers(1, 4)))


def _flip_text(lab: Any, text: str) -> None:
    lab.flip(len(text) * 100)  # far beyond the budget


def test_the_toy_keeps_the_env_and_family_contracts() -> None:
    check_env(make("coin", seed=4), act=_flip, refuse=_flip_text)
    check_family("coin")


def test_the_toy_is_an_env_and_plays_an_episode() -> None:
    lab = make("coin", seed=4)
    assert isinstance(lab, Env) and lab.spec.family == "coin"
    record = run_episode(lab, make_scientist(lab, "reference"))
    assert record.env == "coin" and record.scientist == "reference" and record.seed == 4
    assert record.scores["error"] < 0.3 and record.detail["flips"] == 20


def test_the_toy_runs_through_the_bench(tmp_path: Path) -> None:
    from silicolab.runs import Run

    run = Run.create(tmp_path, kind="bench-episodes", slug="coin")
    table = run_episodes_bench(["coin"], "reference", seeds=4, run=run)
    row = table.iloc[0]
    assert (row["env"], row["episodes"], row["errors"]) == ("coin", 4, 0)
    assert row["score_error"] < 0.3 and not table.attrs["health"].degraded
    random = run_episodes_bench(["coin"], "random", seeds=4)
    assert random.iloc[0]["score_error"] > row["score_error"]


def test_the_toy_runs_through_the_cli(tmp_path: Path) -> None:
    from silicolab.cli.app import app

    args = ["bench", "episodes", "--env", "coin", "--seeds", "3", "--runs-dir", str(tmp_path)]
    out = CliRunner().invoke(app, [*args, "--json"])
    assert out.exit_code == 0, out.output
    summary = strict_json(out.stdout.strip().splitlines()[-1])
    (row,) = summary["rows"]
    assert row["env"] == "coin" and row["episodes"] == 3 and summary["status"] == "finished"
    events = (Path(summary["run_dir"]) / "events.jsonl").read_text().splitlines()
    assert len(events) == 3
