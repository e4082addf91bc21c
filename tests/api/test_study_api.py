"""``sl.run_study`` from Python, as a notebook cell calls it (inside a running event loop):
the same run directory and the same numbers as ``silicolab study run``, read back equal by
``sl.load_run``, a short repr and an inline figure, Python names in errors (flags on the
command line), and a degraded study returned, not raised."""

from __future__ import annotations

import asyncio
import subprocess
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import silicolab as sl
from silicolab.core.errors import InputError
from tests.support.cli import EXE, private_cache_env, strict_json


def _cli(args: list[str], tmp_path: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [*EXE, *args], cwd=tmp_path, env=private_cache_env(tmp_path), capture_output=True,
        text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture
def here(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """This process as the CLI's subprocess runs: no user settings, a cache of its own,
    ``tmp_path`` as the working folder."""
    import os

    for name in [n for n in os.environ if n.startswith("SILICOLAB_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("SILICOLAB_CACHE_PATH", str(tmp_path / "python-cache.sqlite"))
    monkeypatch.chdir(tmp_path)
    return tmp_path


@pytest.fixture(scope="module")
def lawyer_cli(tmp_path_factory: pytest.TempPathFactory) -> dict:
    """``silicolab study run lawyer --yes --json`` (the command's defaults)."""
    folder = tmp_path_factory.mktemp("cli")
    out = _cli(["study", "run", "lawyer", "--yes", "--json", "--runs-dir", "runs"], folder)
    # without a model the default subjects are the scripted test double: some answers
    # cannot be read, so the run ends degraded (exit 3) with a fit on the usable rows
    assert out.returncode == 3, out.stderr
    return strict_json(out.stdout)


def _rounded(value: float) -> float:
    """A number as ``--json`` prints a path's figures (4 significant digits)."""
    return float(f"{value:.4g}")


def test_a_notebook_cell_gets_the_cli_numbers(here: Path, lawyer_cli: dict) -> None:
    async def cell() -> sl.StudyResult:  # a Jupyter cell runs inside the kernel's loop
        return sl.run_study("lawyer", runs_dir="runs")

    result = asyncio.run(cell())
    assert isinstance(result, sl.StudyResult)
    assert result.fit is not None and result.fit.r2 == lawyer_cli["r2"]
    assert result.fit.n == lawyer_cli["n"] == 55
    fitted = result.fit.table
    assert list(fitted.rhs) == [p["rhs"] for p in lawyer_cli["paths"]]
    assert [_rounded(e) for e in fitted.estimate] == [p["est"] for p in lawyer_cli["paths"]]
    assert [_rounded(e) for e in fitted.std_error] == [p["se"] for p in lawyer_cli["paths"]]
    assert result.status == lawyer_cli["status"] == "degraded"
    summary = result.to_dict()
    for key in ("study", "conditions", "n", "r2", "paths", "problems", "na_counts", "plan"):
        assert summary[key] == lawyer_cli[key], key
    for run_dir in (result.run_dir, Path(lawyer_cli["run_dir"])):
        assert (run_dir / "report.html").is_file() and (run_dir / "record.json").is_file()
        assert (run_dir / "report.md").is_file() and (run_dir / "figures" / "scm.png").is_file()
    # the fit is OLS of the outcome on the causes over the table's usable rows
    table = result.table.dropna(subset=["measured.hired"])
    causes = ["treatment.passed_bar", "treatment.friendliness", "treatment.height_cm"]
    design = np.column_stack([np.ones(len(table)), table[causes].to_numpy(float)])
    beta = np.linalg.lstsq(design, table["measured.hired"].to_numpy(float), rcond=None)[0]
    np.testing.assert_allclose(fitted.estimate.to_numpy(), beta[1:], rtol=1e-9, atol=1e-12)


def test_load_run_reads_the_cli_run_back_equal(here: Path, lawyer_cli: dict) -> None:
    loaded = sl.load_run(lawyer_cli["run_dir"])
    assert isinstance(loaded, sl.StudyResult)
    fresh = sl.run_study("lawyer", runs_dir="runs")
    pd.testing.assert_frame_equal(loaded.fit.table, fresh.fit.table)
    pd.testing.assert_frame_equal(loaded.table, fresh.table)
    assert loaded.fit.r2 == fresh.fit.r2 and loaded.status == fresh.status
    assert loaded.record["data"] == fresh.record["data"]
    assert loaded.health == fresh.health
    again = sl.load_run(fresh.run_dir)
    assert again.to_dict() == {**fresh.to_dict(), "plan": None, "notes": []}


def test_the_table_prefixes_each_column_by_its_origin(here: Path, lawyer_cli: dict) -> None:
    result = sl.load_run(lawyer_cli["run_dir"])
    table = result.table
    assert list(table.columns) == [
        "run.condition_id", "run.replicate", "treatment.passed_bar",
        "treatment.friendliness", "treatment.height_cm", "measured.hired",
        "run.stop_reason", "run.n_statements", "run.calls", "run.unusable",
        "run.parse_failures",
    ]  # fmt: skip
    data = pd.read_csv(result.run_dir / "data.csv")
    assert len(table) == len(data) == 80
    np.testing.assert_array_equal(table["measured.hired"], data["hired"])
    # a run is unusable exactly when its outcome could not be read
    assert (table["run.unusable"] == table["measured.hired"].isna()).all()
    assert table["run.unusable"].sum() == 25


def test_repr_is_short_and_the_html_shows_the_path_diagram(here: Path, lawyer_cli: dict) -> None:
    result = sl.load_run(lawyer_cli["run_dir"])
    text = repr(result)
    assert len(text) < 300 and text.startswith("StudyResult(study='lawyer', conditions=80")
    assert "status='degraded'" in text and "r2=0.04575" in text
    page = result._repr_html_()
    assert "<img" in page and "data:image/svg+xml;base64," in page and "lawyer" in page


def test_a_bad_option_names_the_python_parameter_and_the_cli_the_flag(here: Path) -> None:
    with pytest.raises(InputError, match=r"conditions=0 must be") as failure:
        sl.run_study("lawyer", conditions=0, runs_dir="runs")
    assert failure.value.params == ("conditions",) and "--" not in str(failure.value)
    with pytest.raises(InputError, match=r"follow_on=True needs language-model subjects"):
        sl.run_study("auction", subjects="rule", follow_on=True, runs_dir="runs")
    with pytest.raises(InputError, match=r"jobs=100000 is above") as failure:
        sl.run_study("lawyer", jobs=100_000, runs_dir="runs")  # the CLI's --jobs bound too
    assert failure.value.params == ("jobs",)
    assert not (here / "runs").exists()
    out = _cli(["study", "run", "lawyer", "--conditions", "0", "--runs-dir", "runs"], here)
    assert out.returncode == 2 and "--conditions" in out.stderr
    out = _cli(["study", "run", "auction", "--subjects", "rule", "--follow-on"], here)
    assert out.returncode == 2
    assert "error: --follow-on needs language-model subjects" in out.stderr
    assert "use --subjects llm or --subjects world, or drop --follow-on" in out.stderr


def test_a_degraded_study_is_returned_and_the_cli_exits_3(here: Path) -> None:
    # 4 conditions cannot fit an intercept and 3 causes with their standard errors
    result = sl.run_study("lawyer", subjects="world", conditions=4, runs_dir="runs")
    assert result.status == "degraded" and result.fit is None
    assert any("could not be fitted" in p for p in result.health["problems"])
    assert result.r2 is None and len(result.table) == 4
    assert "status='degraded'" in repr(result)
    out = _cli(["study", "run", "lawyer", "--subjects", "world", "--conditions", "4",
                "--json"], here)  # fmt: skip
    assert out.returncode == 3, out.stderr
    summary = strict_json(out.stdout)
    assert summary["status"] == "degraded" and summary["paths"] == []
    assert summary["fit_problems"] == result.to_dict()["fit_problems"]


def test_nothing_on_stdout_and_a_finished_run_is_not_resumed(here: Path, capsys) -> None:
    result = sl.run_study("lawyer", subjects="world", runs_dir="runs")
    shown = capsys.readouterr()
    assert shown.out == "" and shown.err.startswith("plan: 80 conditions")
    assert result.status == "finished" and result.fit is not None
    assert len(result.table) == 80 and result.notes == []
    with pytest.raises(InputError, match="is finished"):
        sl.run_study(resume=result.run_dir, runs_dir="runs")


def _scientist_server():
    from types import SimpleNamespace

    from silicolab.studies import load_example
    from silicolab.studies.scripted import scripted_scientist
    from tests.support.openai_server import FakeLLMServer

    script = scripted_scientist(load_example("mug"))
    return FakeLLMServer(reply=lambda body: script(SimpleNamespace(messages=body["messages"])))


def test_generate_hypothesis_is_the_cli_s_hypothesis(here: Path) -> None:
    from silicolab.studies import load_example, read_hypothesis

    scenario = load_example("mug").scenario
    with _scientist_server() as server:
        model = {"model": "openai:fake-scientist", "base_url": server.base_url}

        async def cell() -> object:
            return sl.generate_hypothesis(scenario, out="py.yaml", **model)

        made = asyncio.run(cell())
        bare = sl.generate_hypothesis(scenario, **model)  # no file: only the object
        out = _cli(["study", "hypothesis", scenario, "-o", "cli.yaml", "--json", "--model",
                    model["model"], "--base-url", server.base_url], here)  # fmt: skip
    assert out.returncode == 0, out.stderr
    assert strict_json(out.stdout)["causes"] == [v.name for v in made.treatments]
    written = read_hypothesis(here / "cli.yaml")
    assert read_hypothesis(here / "py.yaml").to_dict() == written.to_dict() == made.to_dict()
    assert bare.to_dict() == made.to_dict()
    assert sorted(p.name for p in here.glob("*.yaml")) == ["cli.yaml", "py.yaml"]
    assert not list(here.glob("*.steps.jsonl"))  # the journals are gone once complete


def test_generate_hypothesis_without_a_scientist_names_the_parameter(here: Path) -> None:
    with pytest.raises(InputError, match=r"pass model=SPEC") as failure:
        sl.generate_hypothesis("A landlord and a tenant negotiate a rent increase.")
    assert "model" in failure.value.params
    out = _cli(["study", "hypothesis", "A landlord and a tenant negotiate a rent increase."],
               here)  # fmt: skip
    assert out.returncode == 2 and "pass --model SPEC" in out.stderr


def test_load_run_refuses_what_it_cannot_read(here: Path) -> None:
    from silicolab.runs import Run

    odd = Run.create(here / "runs", kind="weird", slug="x")
    with pytest.raises(InputError, match=r"is a 'weird' run, which no result reads"):
        sl.load_run(odd.path)
    unfinished = Run.create(here / "runs", kind="study", slug="lawyer")  # no record yet
    with pytest.raises(InputError, match="not a study run whose main study finished"):
        sl.load_run(unfinished.path)
    with pytest.raises(InputError, match="does not exist"):
        sl.load_run(here / "nowhere")


def test_a_paid_plan_asks_the_confirm_callback_and_max_cost_holds(here: Path) -> None:
    (here / "silicolab.yaml").write_text(
        "models:\n  default:\n    spec: openai:gpt-4o-mini\n    base_url: http://127.0.0.1:9\n"
        "    prices: {input: 0.15, output: 0.6}\n"
    )
    asked = []

    def no(plan: object) -> bool:
        asked.append(plan)
        return False

    with pytest.raises(InputError, match="cancelled; nothing was run"):
        sl.run_study("mug", confirm=no, runs_dir="runs")
    assert [p.conditions for p in asked] == [405] and asked[0].cost_usd[1] > 0.01
    with pytest.raises(InputError, match=r"above max_cost=0\.01") as failure:
        sl.run_study("mug", max_cost=0.01, confirm=lambda plan: True, runs_dir="runs")
    assert failure.value.params == ("max_cost", "conditions")
    assert not (here / "runs").exists()
