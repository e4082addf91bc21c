"""``sl.replicate_study`` and ``silicolab study replicate``: the same run directory and
numbers, the wordings kept beside the original, the plan multiplied by the variants, and
refusals before any run directory."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import silicolab as sl
from silicolab.core.errors import InputError
from tests.cli.test_cli import run
from tests.support.cli import strict_json

OPTIONS = {"subjects": "world", "models": ["a", "b"], "seeds": 2, "conditions": 12}


def test_python_and_the_command_line_give_the_same_replication(tmp_path: Path) -> None:
    notes: list[str] = []
    result = sl.replicate_study("mug", wordings=2, runs_dir=tmp_path / "py", notify=notes.append,
                                **OPTIONS)  # fmt: skip
    assert notes[0].startswith("plan: 8 variants x 12 conditions")
    cli = run(["study", "replicate", "mug", "--subjects", "world", "--models", "a,b",
               "--seeds", "2", "--conditions", "12", "--wordings", "2", "--runs-dir", "cli",
               "--json"], tmp_path)  # fmt: skip
    assert cli.returncode == 0, cli.stderr
    printed = strict_json(cli.stdout)
    assert printed["paths"] == result.to_dict()["paths"]
    assert set(result.verdicts) == {p["path"] for p in result.paths} and len(result.paths) == 3
    for name in ("record.json", "report.md", "report.html", "hypothesis.yaml",
                 "figures/forest-0.png", "figures/decomposition.png"):  # fmt: skip
        assert (result.run_dir / name).is_file(), name
    wordings = result.record["wordings"]
    assert [w["index"] for w in wordings] == [0, 1]
    assert wordings[1]["texts"]["scenario"] != wordings[0]["texts"]["scenario"]
    report = (result.run_dir / "report.md").read_text()
    assert wordings[1]["texts"]["scenario"] in report and "## Verdicts and their rules" in report
    assert sl.ReplicationResult.from_run(result.run_dir).paths == result.paths
    loaded = sl.load_run(result.run_dir)  # the one reader of every finished run
    assert type(loaded) is sl.ReplicationResult and loaded.record == result.record
    assert len(result.record["variants"]) == 8 and len(result.record["rows"]) == 8 * 3


def test_researcher_wordings_from_a_file(tmp_path: Path) -> None:
    path = tmp_path / "w.yaml"
    text = "Two neighbours bargain over a mug."
    path.write_text(f"- {{scenario: {text}}}\n")
    result = sl.replicate_study("mug", wordings=path, runs_dir=tmp_path / "runs", **OPTIONS)
    assert result.record["wordings"][1]["texts"] == {"scenario": text}
    info = json.loads((result.run_dir / "run.json").read_text())
    assert info["config"]["wordings"] == str(path)


def test_bad_requests_are_refused_before_any_run(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="models="):
        sl.replicate_study("mug", runs_dir=tmp_path)
    with pytest.raises(InputError, match="seeds="):
        sl.replicate_study("mug", seeds=0, runs_dir=tmp_path, subjects="world")
    with pytest.raises(InputError, match="wordings="):
        sl.replicate_study("mug", wordings=0, runs_dir=tmp_path, subjects="world")
    assert not any(tmp_path.iterdir())


def test_the_plan_is_multiplied_by_the_variants_and_held_to_max_cost(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-used")  # refused before any call
    notes: list[str] = []
    kw = {"models": ["openai:gpt-4o-mini", "openai:gpt-4.1-mini"], "seeds": 2, "conditions": 4,
          "runs_dir": tmp_path / "runs", "notify": notes.append}  # fmt: skip
    with pytest.raises(InputError, match=r"planned cost may reach \$") as err:
        sl.replicate_study("mug", max_cost=0.01, **kw)
    assert notes[0].startswith("plan: 4 variants x 4 conditions")
    per_variant = float(notes[0].split("$")[-1].split(" ")[0])  # the first model's high end
    assert float(str(err.value).split("$")[1].split(",")[0]) >= 4 * per_variant - 0.01
    assert not (tmp_path / "runs").exists()
    with pytest.raises(InputError, match="max_cost= is held on this machine only"):
        sl.replicate_study("mug", max_cost=5.0, executor="ray", **kw)
    assert not (tmp_path / "runs").exists()  # refused before Ray is even asked


def _interrupted(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A replication whose every unit finished but whose analysis crashed: the run stays
    unfinished, for ``resume=``."""
    from silicolab.studies.replication import run as replication_run

    def crash(rows: object) -> None:
        raise RuntimeError("the analysis crashed")

    with monkeypatch.context() as patch:
        patch.setattr(replication_run, "meta_analyze", crash)
        with pytest.raises(RuntimeError, match="the analysis crashed"):
            sl.replicate_study("mug", runs_dir=tmp_path, notify=lambda line: None, **OPTIONS)
    (folder,) = [p for p in tmp_path.iterdir() if p.is_dir()]
    return folder


def test_a_resumed_replication_keeps_its_settings_and_refuses_contradictions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _interrupted(tmp_path, monkeypatch)
    events = (folder / "events.jsonl").read_text().splitlines()
    assert len(events) == 1 + 4 * 12  # the wordings unit and every (variant, condition)
    with pytest.raises(InputError, match=re.escape("models=a,c (stored: a,b)")):
        sl.replicate_study(resume=folder, models=["a", "c"], subjects="world", runs_dir=tmp_path)
    with pytest.raises(InputError, match=re.escape("conditions=5 (stored: 12)")):
        sl.replicate_study(resume=True, conditions=5, subjects="world", runs_dir=tmp_path)
    with pytest.raises(InputError, match="a study of 'mug', but you named 'bail'"):
        sl.replicate_study("bail", resume=folder, subjects="world", runs_dir=tmp_path)
    # the interrupted call with resume= added, and resume= alone (the stored settings)
    again = sl.replicate_study("mug", resume=True, runs_dir=tmp_path, **OPTIONS)
    assert again.status == "finished" and again.run_dir == folder.resolve()
    assert (folder / "events.jsonl").read_text().splitlines() == events  # nothing rerun
    assert len(again.record["variants"]) == 4 and len(again.paths) == 3


def test_the_command_resumes_with_resume_alone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = _interrupted(tmp_path / "runs", monkeypatch)
    refused = run(["study", "replicate", "--resume", "--seeds", "3", "--runs-dir", "runs"],
                  tmp_path)  # fmt: skip
    assert refused.returncode == 2 and "seeds=0,1,2 (stored: 0,1)" in refused.stderr
    done = run(["study", "replicate", "--resume", "--runs-dir", "runs", "--json"], tmp_path)
    assert done.returncode == 0, done.stderr
    printed = strict_json(done.stdout)
    assert Path(printed["run_dir"]).resolve() == folder.resolve()
    assert printed["status"] == "finished" and len(printed["variants"]) == 4


def test_the_tables_beside_the_record_pool_as_statsmodels_does(tmp_path: Path) -> None:
    import numpy as np
    import pandas as pd
    from statsmodels.stats.meta_analysis import combine_effects

    result = sl.replicate_study("mug", runs_dir=tmp_path, notify=lambda line: None, **OPTIONS)
    estimates = pd.read_csv(result.run_dir / "estimates.csv")
    paths = pd.read_csv(result.run_dir / "paths.csv")
    pd.testing.assert_frame_equal(estimates, result.estimates, check_dtype=False)
    pd.testing.assert_frame_equal(paths, result.summary, check_dtype=False)
    assert len(estimates) == 4 * 3 and list(paths["path"]) == list(result.verdicts)
    assert list(paths["verdict"]) == list(result.verdicts.values())
    for _, line in paths.iterrows():  # the CSVs alone reproduce the pooled estimates
        rows = estimates[estimates["path"] == line["path"]]
        effect, variance = rows["estimate"].to_numpy(), rows["se"].to_numpy() ** 2
        pooled = combine_effects(effect, variance, method_re="dl")
        assert line["k"] == len(rows)
        assert np.isclose(line["fixed_estimate"], pooled.mean_effect_fe, rtol=1e-9)
        assert np.isclose(line["q"], pooled.q, rtol=1e-9)
        # DerSimonian-Laird truncates tau^2 at 0; statsmodels leaves it negative when
        # Q < k-1 (and its random-effects mean then weights by 1/(v + tau^2 < v))
        tau2 = max(0.0, pooled.tau2)
        assert np.isclose(line["tau2"], tau2, rtol=1e-9, atol=1e-15)
        weights = 1 / (variance + tau2)
        assert np.isclose(line["random_estimate"], (weights * effect).sum() / weights.sum())
        if pooled.tau2 >= 0:
            assert np.isclose(line["random_estimate"], pooled.mean_effect_re, rtol=1e-9)
        shares = line[["share_model", "share_wording", "share_seed", "share_residual"]]
        assert np.isclose(shares.sum(), 1.0)  # a balanced grid: the shares add up
