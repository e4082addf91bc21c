"""The apprentice's programs run in the sandbox: fits, scores, predictions, containment."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from tests.scientists.apprentice_support import (
    DUGONG_PROGRAM,
    TINY,
    WRONG_PROGRAM,
    require_pymc,
)

from silicolab.scientists.boxinggym import make_env
from silicolab.scientists.boxinggym.apprentice import frames
from silicolab.scientists.boxinggym.apprentice.execute import build_job, run_program
from silicolab.scientists.boxinggym.apprentice.statistician import fit_job

require_pymc()


def dugongs(n: int = 10):
    """A dugongs environment after ``n`` random experiments."""
    env = make_env("dugongs", seed=4)
    rng = np.random.default_rng(0)
    for _ in range(n):
        env.run(env.format_design(env.sample_design(rng)))
    return env


def test_a_correct_program_scores_better_than_a_wrong_one_and_predicts() -> None:
    env = dugongs()
    questions = env.goal.questions(4, np.random.default_rng(1))
    job = fit_job(env, questions, TINY)
    right = run_program(DUGONG_PROGRAM, job, TINY)
    wrong = run_program(WRONG_PROGRAM, job, TINY)
    assert right.ok and wrong.ok, (right.report, wrong.report)
    assert right.elpd_loo > wrong.elpd_loo + 10
    assert right.elpd_waic is not None and len(right.ppc) == 10
    assert set(right.posterior_means) == {"alpha", "beta", "lam", "sigma"}
    assert set(right.phases) == {"sample_s", "log_likelihood_s", "ppc_s"}
    truths = np.array([q.truth for q in questions])
    right_error = np.abs(np.array(right.predictions) - truths).mean()
    assert right_error < 0.5
    assert right_error < np.abs(np.array(wrong.predictions) - truths).mean()
    again = run_program(DUGONG_PROGRAM, job, TINY)
    assert again.elpd_loo == right.elpd_loo  # seeds are fixed: same program, same fit
    assert again.predictions == right.predictions


def test_prior_mode_predicts_the_prior_predictive_mean() -> None:
    env = make_env("dugongs", seed=4)
    questions = env.goal.questions(3, np.random.default_rng(1))
    job = fit_job(env, questions, TINY)
    assert job["mode"] == "prior" and job["data"] == []
    run = run_program(DUGONG_PROGRAM, job, TINY)
    assert run.ok, run.report
    assert run.elpd_loo is None and len(run.predictions) == 3
    assert all(0.5 < p < 2.5 for p in run.predictions)


BROKEN = {
    "syntax": ("def build_model(data)\n    return None\n", None, "SyntaxError"),
    "never finishes": ("while True:\n    pass\n", "timeout", "time limit"),
    "socket": (
        "import socket\nsocket.create_connection(('127.0.0.1', 9))\n",
        "network",
        "network access is not allowed",
    ),
}


@pytest.mark.parametrize("case", sorted(BROKEN))
def test_broken_programs_are_contained_and_reported(case: str) -> None:
    program, violation, text = BROKEN[case]
    settings = TINY if case != "never finishes" else type(TINY)(timeout_s=8)
    job = build_job("prior", ["x"], "Y", [], [[1.0]], settings)
    run = run_program(program, job, settings)
    assert not run.ok and run.predictions is None
    assert run.violation == violation
    assert text in run.report


def test_a_write_outside_the_working_directory_is_refused(tmp_path: Path) -> None:
    target = tmp_path / "escaped.txt"
    program = f"open({str(target)!r}, 'w').write('x')\n"
    run = run_program(program, build_job("prior", ["x"], "Y", [], [[1.0]], TINY), TINY)
    assert not run.ok and run.violation == "filesystem"
    assert "outside the working directory" in run.report
    assert not target.exists()


def test_every_environment_has_its_published_columns() -> None:
    expected = {
        "dugongs": (["x", "Y"], ["x", "Y"]),
        "peregrines": (["year", "C"], ["x1", "y"]),
        "hyperbolic_temporal_discount": (["ir", "dr", "days", "Choice"], ["x1", "x2", "x3", "y"]),
        "lotka_volterra": (["t", "prey", "predator"], ["t", "y1", "y2"]),
    }
    rng = np.random.default_rng(0)
    for name in frames.COLUMNS:
        speaking = name in ("emotion", "moral_machines")  # prior condition only
        for prior in (True,) if speaking else (True, False):
            env = make_env(name, prior=prior, seed=1)
            env.run(env.format_design(env.sample_design(rng)))
            frame = frames.data_frame(env)
            assert list(frame.columns) == frames.columns(env)
            assert frame.index[0] == "True Observation 0" and frame.notna().all().all()
            question = env.goal.questions(1, rng)[0]
            width = len(frame.columns) - frames.n_outputs(env)
            assert len(frames.question_features(env, question)) == width
            if name in expected:
                assert frames.columns(env) == expected[name][0 if prior else 1]


def test_a_program_cannot_reach_the_environment_or_the_package() -> None:
    """Issue 25: an apprentice program that imports silicolab's environments (their hidden
    parameters) or opens the package's files is refused, and the run fails."""
    job = build_job("prior", ["x"], "Y", [], [[1.0]], TINY)
    package = Path(make_env.__code__.co_filename).resolve().parent
    attempts = {
        "import": "from silicolab.scientists.boxinggym import make_env\n",
        "open": f"print(open({str(package / '__init__.py')!r}).read())\n",
    }
    for how, cheat in attempts.items():
        run = run_program(cheat + DUGONG_PROGRAM, job, TINY)
        assert not run.ok and run.predictions is None, how
        assert run.violation == "read", (how, run.report)
        assert "reading files outside the working directory" in run.message, how
