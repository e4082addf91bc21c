"""``sl.replicate_study`` and ``silicolab study replicate``: the same run directory and
numbers, the wordings kept beside the original, the plan multiplied by the variants, and
refusals before any run directory."""

from __future__ import annotations

import json
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
