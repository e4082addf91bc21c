"""Study options as a user types them: refused in one line before any run directory when
they cannot apply, the applicable part run when only part can, stored for resume, and a
fit that cannot be made ends degraded with the reason."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from silicolab.runs import Run
from tests.support.cli import EXE, strict_json
from tests.support.cli import private_cache_env as _env


def silicolab(args: list[str], tmp_path: Path, timeout: float = 300) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXE, *args], cwd=tmp_path, env=_env(tmp_path), capture_output=True, text=True,
        timeout=timeout,
    )  # fmt: skip


RULE = ["study", "run", "auction", "--subjects", "rule", "--yes"]
WORLD = ["study", "run", "mug", "--subjects", "world", "--yes"]


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ([*RULE, "--follow-on"], "--follow-on needs language-model subjects"),
        ([*RULE, "--replicates", "2"], "would repeat identical runs"),
        ([*RULE, "--agent-names", "random"], "--agent-names only apply"),
        ([*RULE, "--statement-tokens", "50"], "--statement-tokens only apply"),
        ([*WORLD, "--price-rule", "next_increment"], "--price-rule applies to --subjects rule"),
        ([*WORLD, "--aggregate-replicates"], "add --replicates R"),
        ([*WORLD, "--predict-conditions", "5"], "add --predict"),
        ([*WORLD, "--scientist-temperature", "0.5"], "add --predict or --follow-on"),
        (["study", "run", "mug", "--follow-on", "--yes"], "--follow-on needs a scientist model"),
        ([*WORLD, "--predict", "--scientist-temperature", "3"], "--scientist-temperature"),
    ],
)
def test_options_that_cannot_apply_are_refused_before_any_run(tmp_path, args, message):
    out = silicolab(args, tmp_path)
    assert out.returncode == 2, (out.stdout, out.stderr)
    assert message in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1 and "Traceback" not in out.stderr
    assert not (tmp_path / "runs").exists() or not any((tmp_path / "runs").iterdir())


def test_rule_subjects_with_predict_run_the_mechanical_loo(tmp_path):
    out = silicolab([*RULE, "--conditions", "30", "--predict", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "note: --predict without a scientist model runs the mechanical" in out.stderr
    summary = strict_json(out.stdout)
    assert summary["predictions"]["loo_mechanical"] is not None
    assert summary["stages"]["predictions"]["status"] == "done"
    record = strict_json((Path(summary["run_dir"]) / "record.json").read_text())
    assert len(record["predictions"]["conditions"]) == 30
    assert record["options"]["predict"] is True


def test_a_fit_that_cannot_be_made_ends_degraded_with_the_reason(tmp_path):
    # the command 'make demo' suggests: 4 rows for 4 coefficients
    out = silicolab([*WORLD, "--conditions", "4", "--json"], tmp_path)
    assert out.returncode == 3, out.stderr
    summary = strict_json(out.stdout)
    assert summary["status"] == "degraded" and summary["paths"] == []
    assert "not estimable" in summary["fit_error"]
    assert summary["fit_problems"] and summary["fit_problems"][0]["equation"] == "deal"
    assert "DEGRADED" in out.stderr and "could not be fitted" in out.stderr
    run = Run.open(summary["run_dir"])
    assert run.status == "degraded"
    record = strict_json(run.record_path.read_text())
    assert record["fit_problems"] == summary["fit_problems"]
    assert (run.path / "data.csv").is_file()


def test_replicates_reach_the_fit_and_are_stored_for_resume(tmp_path):
    base = ["study", "run", "bail", "--subjects", "world", "--yes", "--json",
            "--conditions", "8", "--replicates", "3"]  # fmt: skip
    every = silicolab(base, tmp_path)
    assert every.returncode == 0, every.stderr
    rows = strict_json(every.stdout)
    assert rows["conditions"] == 24 and rows["n"] == 24
    means = silicolab([*base, "--aggregate-replicates"], tmp_path)
    assert means.returncode == 0, means.stderr
    summary = strict_json(means.stdout)
    assert summary["conditions"] == 24 and summary["n"] == 8
    config = Run.open(summary["run_dir"]).config
    assert config["replicates"] == 3 and config["aggregate_replicates"] is True
    assert config["agent_names"] == "roles" and config["predict_conditions"] is None
    # the fit on condition means equals OLS on the means computed here
    data = pd.read_csv(Path(summary["run_dir"]) / "data.csv")
    assert len(data) == 24
    causes = ["criminal_history", "judge_cases_today", "remorse"]
    grouped = data.groupby("condition_id")[[*causes, "bail_amount"]].mean()
    design = np.column_stack([np.ones(len(grouped)), grouped[causes].to_numpy()])
    beta = np.linalg.lstsq(design, grouped["bail_amount"].to_numpy(), rcond=None)[0]
    paths = {p["rhs"]: p["est"] for p in summary["paths"]}
    for cause, estimate in zip(causes, beta[1:], strict=True):
        assert paths[cause] == pytest.approx(estimate, rel=1e-3, abs=1e-6)


def test_fit_another_outcome_column(tmp_path):
    run = silicolab([*RULE, "--conditions", "60", "--json"], tmp_path)
    run_dir = Path(strict_json(run.stdout)["run_dir"])
    out = silicolab(["study", "fit", str(run_dir), "--outcome", "n_statements", "--json"],
                    tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    refit = strict_json(out.stdout)
    assert refit["outcome"] == "n_statements"
    assert Path(refit["path"]).name == "fit-n_statements.json"
    data = pd.read_csv(run_dir / "data.csv")
    causes = ["budget_1", "budget_2", "budget_3"]
    design = np.column_stack([np.ones(len(data)), data[causes].to_numpy()])
    beta = np.linalg.lstsq(design, data["n_statements"].to_numpy(float), rcond=None)[0]
    paths = {p["rhs"]: p["est"] for p in refit["paths"] if p["lhs"] == "n_statements"}
    for cause, estimate in zip(causes, beta[1:], strict=True):
        assert paths[cause] == pytest.approx(estimate, rel=1e-3, abs=1e-6)
    unknown = silicolab(["study", "fit", str(run_dir), "--outcome", "nosuch"], tmp_path)
    assert unknown.returncode == 2 and "nosuch" in unknown.stderr


def test_study_fit_predict_and_follow_on_accept_the_demo_run(tmp_path):
    demo = silicolab(["demo", "--conditions", "20", "--json"], tmp_path)
    assert demo.returncode == 0, demo.stderr
    run_dir = strict_json(demo.stdout)["run_dir"]
    assert Run.open(tmp_path / run_dir).kind == "demo"
    fit = silicolab(["study", "fit", run_dir, "--json"], tmp_path)
    assert fit.returncode == 0, fit.stderr
    refit = strict_json(fit.stdout)
    shown = {p["rhs"]: p["est"] for p in strict_json(demo.stdout)["paths"]}
    assert {p["rhs"]: p["est"] for p in refit["paths"]} == shown  # the demo's own fit
    # without a model the demo's own scripted scientist answers, as in the demo
    predict = silicolab(["study", "predict", run_dir, "--predict-conditions", "5", "--json"],
                        tmp_path)  # fmt: skip
    assert predict.returncode == 0, predict.stderr
    written = strict_json((tmp_path / run_dir / "predictions.json").read_text())
    assert len(written["llm_conditions"]) == 5 and written["mse"]["predict_y"] is not None
    follow = silicolab(["study", "follow-on", run_dir, "-o", "next.yaml", "--json"], tmp_path)
    assert follow.returncode == 0, follow.stderr
    plan = strict_json(follow.stdout)
    assert plan["added"] and set(plan["added"]) <= {"buyer_hurry", "mug_condition"}
    assert (tmp_path / "next.yaml").is_file()


def test_prediction_options_reach_the_scientist_and_the_record(tmp_path):
    out = silicolab(["study", "run", "bail", "--subjects", "world", "--yes", "--json",
                     "--conditions", "10", "--predict", "--predict-conditions", "3",
                     "--scientist-temperature", "0.9", "--agent-names", "random"],
                    tmp_path)  # fmt: skip
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert "(7 of them the scientist's)" in out.stderr  # 3 predict-y, 3 LOO, 1 predict-beta
    record = strict_json((Path(summary["run_dir"]) / "record.json").read_text())
    assert record["options"]["scientist_temperature"] == 0.9
    assert record["options"]["agent_names"] == "random"
    predictions = record["predictions"]
    assert predictions["temperature"] == 0.9 and len(predictions["llm_conditions"]) == 3
    assert predictions["model"] == record["models"]["scientist"]
    config = Run.open(summary["run_dir"]).config
    assert config["predict_conditions"] == 3 and config["scientist_temperature"] == 0.9
