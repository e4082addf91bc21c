"""The BoxingGym parameter goals run only with the prior: refused in one line without it."""

from __future__ import annotations

from pathlib import Path

import pytest
from tests.cli.test_cli import run

from silicolab.bench.boxinggym import run_boxinggym_bench
from silicolab.core.errors import InputError
from silicolab.envs import make

PRIOR_ONLY = [
    ("location_finding", "source"),
    ("hyperbolic_temporal_discount", "discount"),
    ("death_process", "infection"),
]


@pytest.mark.parametrize(("env", "goal"), PRIOR_ONLY)
def test_a_parameter_goal_without_the_prior_is_refused(env: str, goal: str) -> None:
    # before: it ran, and the no-prior prompt stated the model's formula
    with pytest.raises(InputError, match="runs only with the prior"):
        make(f"boxinggym/{env}", goal=goal, prior=False)
    with pytest.raises(InputError, match="drop --no-prior"):
        run_boxinggym_bench([(env, goal)], "reference", prior=False, seeds=1)
    assert make(f"boxinggym/{env}", goal=goal, prior=True).goal.name == goal


def test_the_cli_refuses_it_in_one_line(tmp_path: Path) -> None:
    args = ["bench", "boxinggym", "--env", "death_process:infection", "--no-prior", "--seeds", "1"]
    out = run(args, tmp_path)
    assert out.returncode == 2, out.stderr
    assert "runs only with the prior" in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1
