"""``sl.run_episode``: one episode from Python, checked against the library's episode
runner called independently and against ``silicolab bench episodes``."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import silicolab as sl
from silicolab.core.errors import InputError
from silicolab.envs import make
from silicolab.scientists import EpisodeRecord, arun_episode, make_scientist
from tests.cli.test_cli import run
from tests.support.cli import strict_json


def _independent(seed: int, **env_kw: object) -> EpisodeRecord:
    env = make("causalab", seed=seed, **env_kw)
    return asyncio.run(arun_episode(env, make_scientist(env, "reference", seed=seed)))


def test_run_episode_in_a_running_loop_matches_the_episode_runner() -> None:
    async def cell() -> sl.EpisodeResult:  # a notebook cell: an event loop is running
        return sl.run_episode("causalab", "reference", seed=2, suite="3nodes", index=1)

    result = asyncio.run(cell())
    expected = _independent(2, suite="3nodes", index=1)
    assert result.scores == expected.scores and result.steps == expected.steps
    assert result.record.health.to_dict() == expected.health.to_dict()
    assert (result.env_id, result.scientist, result.seed) == ("causalab", "reference", 2)
    assert result.run_dir is None and result.status == "ok"
    # the headline score is the family record's own metric
    detail = result.record.family_record()
    assert result.scores["success"] == float(detail.metrics["success"])


def test_run_episode_gives_the_number_of_bench_episodes(tmp_path: Path) -> None:
    out = run(["bench", "episodes", "--env", "causalab", "--seeds", "1", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    (row,) = strict_json(out.stdout)["rows"]
    episode = sl.run_episode("causalab", seed=1)  # bench episodes runs seeds 1..n
    scores = {k.removeprefix("score_"): v for k, v in row.items() if k.startswith("score_")}
    assert scores == pytest.approx(episode.scores) and row["steps"] == episode.steps


def test_run_episode_with_runs_dir_writes_a_bench_episodes_run(tmp_path: Path) -> None:
    result = sl.run_episode("causalab", seed=3, suite="3nodes", runs_dir=tmp_path)
    assert result.run_dir is not None and (result.run_dir / "report.html").is_file()
    info = json.loads((result.run_dir / "run.json").read_text())
    assert info["kind"] == "bench-episodes"
    assert info["config"]["seed"] == 3 and info["config"]["env_options"] == {"suite": "3nodes"}
    assert result.scores == _independent(3, suite="3nodes").scores
    again = sl.EpisodeResult.from_run(result.run_dir)
    assert again.to_dict() == result.to_dict()
    json.dumps(result.to_dict(), allow_nan=False)


def test_episode_env_and_record_reprs_are_short() -> None:
    result = sl.run_episode("causalab", seed=1, suite="3nodes")
    for text in (repr(result), repr(result.record)):
        assert len(text) < 300 and "success" in text, text
    assert repr(result).startswith("EpisodeResult(env='causalab', scientist='reference'")
    page = result._repr_html_()
    assert "<table" in page and "budget_used" in page  # every score, not only the first
    lab = make("causalab", suite="3nodes", index=0, seed=1)
    assert repr(lab) == (
        "CrystalLab(id='causalab', graph='3nodes_0', suite='3nodes', nodes=3, "
        "fidelity='fixed', seed=1, budget=8)"
    )
    dugongs = make("boxinggym/dugongs", seed=4)
    assert repr(dugongs) == (
        "Dugongs(id='boxinggym/dugongs', goal='direct', prior=True, fidelity='fixed', seed=4)"
    )


def test_run_episode_errors_name_python_parameters() -> None:
    with pytest.raises(InputError, match="scientist='llm' needs model=") as err:
        sl.run_episode("causalab", "llm")
    assert "model" in err.value.params
    with pytest.raises(InputError, match="env_id='quidditch' is not a registered") as err:
        sl.run_episode("quidditch")
    assert err.value.params == ("env_id",) and "boxinggym/dugongs" in str(err.value)
