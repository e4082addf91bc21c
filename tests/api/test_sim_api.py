"""``sl.run_sim`` from Python (a Jupyter cell: inside a running event loop) against
``silicolab sim run`` as a real subprocess: the same run directory, the same numbers."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

import silicolab as sl
from silicolab.api.sim import SimResult
from silicolab.core.errors import InputError
from tests.cli.test_cli import run
from tests.support.cli import strict_json


def _in_a_cell(**kw) -> SimResult:
    """What a notebook cell does: the facade called while an event loop runs."""

    async def cell() -> SimResult:
        return sl.run_sim(**kw)

    return asyncio.run(cell())


def _without_run_dir(out: dict) -> dict:
    return {k: v for k, v in out.items() if k != "run_dir"}


def test_run_sim_in_a_running_loop_equals_the_command_line(tmp_path: Path) -> None:
    result = _in_a_cell(simulation="auction", runs_dir=tmp_path / "py")
    cli = run(["sim", "run", "auction", "--runs-dir", "cli", "--json"], tmp_path)
    assert cli.returncode == 0, cli.stderr
    printed = strict_json(cli.stdout)
    assert _without_run_dir(result.to_dict()) == _without_run_dir(printed)
    # truthful bidders in an English clock auction: the highest budget wins and pays the
    # second-highest (budgets 150, 300, 250 -> Bidder 2 at 250)
    assert (result.summary["winner"], result.summary["price"]) == ("Bidder 2", 250.0)
    assert result.status == "finished" and result.name == "auction"
    assert result.run_dir.parent == (tmp_path / "py").resolve()
    for folder in (result.run_dir, Path(printed["run_dir"])):
        for name in ("run.json", "events.jsonl", "record.json", "report.md", "transcript.html"):
            assert (folder / name).is_file(), (folder, name)
        assert "<html" in (folder / "report.html").read_text(encoding="utf-8").lower()
    settings = [json.loads((d / "run.json").read_text())["config"] for d in
                (result.run_dir, Path(printed["run_dir"]))]  # fmt: skip
    assert settings[0] == settings[1]
    assert result.record == json.loads((result.run_dir / "record.json").read_text())


def test_a_language_model_example_runs_in_a_cell_and_reads_back(tmp_path: Path) -> None:
    result = _in_a_cell(simulation="bargaining", runs_dir=tmp_path)
    summary = result.summary
    assert summary["deal"] is True
    assert summary["seller_value"] <= summary["price"] <= summary["buyer_value"]
    assert result.transcript[-1] == {
        "speaker": "Seller",
        "text": f"Deal at ${summary['price']:.2f}.",
    }
    assert len(result.steps) == len(result.record["log"]) > 0
    back = SimResult.from_run(result.run_dir)
    assert back.to_dict() == result.to_dict()
    assert back.health.summary_line() == result.health.summary_line()
    text = repr(result)
    assert len(text) < 300 and text.startswith("SimResult(name='bargaining'")
    page = result._repr_html_()
    assert page.startswith("<div>") and "<table>" in page and "deal" in page


def test_the_figure_of_a_run_with_one_is_inline(tmp_path: Path) -> None:
    auction = sl.run_sim("auction", runs_dir=tmp_path)  # grounded variables: a figure
    figure = auction.run_dir / "figures" / "grounded.svg"
    assert figure.is_file() and auction._figure() == figure
    assert '<img src="data:image/svg+xml;base64,' in auction._repr_html_()
    bargaining = sl.run_sim("bargaining", runs_dir=tmp_path)  # none: the table only
    assert bargaining._figure() is None and "<img" not in bargaining._repr_html_()


def test_bad_input_names_python_parameters_and_the_command_line_its_flags(tmp_path) -> None:
    with pytest.raises(InputError) as bad:
        sl.run_sim("quidditch", runs_dir=tmp_path)
    assert "simulation=" in str(bad.value) and bad.value.params == ("simulation",)
    with pytest.raises(InputError) as needless:
        sl.run_sim("auction", model="scripted", runs_dir=tmp_path)
    assert str(needless.value).startswith("model= applies to bargaining")
    assert not list(tmp_path.iterdir())  # checked before any run directory exists
    cli = run(["sim", "run", "auction", "--model", "scripted"], tmp_path)
    assert cli.returncode == 2 and "--model applies to bargaining" in cli.stderr
    cli = run(["sim", "run", "quidditch"], tmp_path)
    assert cli.returncode == 2 and "'quidditch' (NAME)" in cli.stderr


def test_from_run_refuses_another_kind_of_run(tmp_path: Path) -> None:
    result = sl.discover("auto_mpg", "pc", runs_dir=tmp_path)
    with pytest.raises(InputError, match="is a discover run, not a sim run"):
        SimResult.from_run(result.run_dir)


def test_resume_of_a_finished_run_is_refused(tmp_path: Path) -> None:
    result = sl.run_sim("auction", runs_dir=tmp_path)
    with pytest.raises(InputError, match="is finished"):
        sl.run_sim("auction", runs_dir=tmp_path, resume=result.run_dir)


def test_resume_by_run_dir_continues_with_the_stored_settings(tmp_path: Path) -> None:
    first = sl.run_sim("market", seed=3, runs_dir=tmp_path)
    run_json = first.run_dir / "run.json"
    info = json.loads(run_json.read_text())
    info["status"] = "interrupted"  # as a killed run leaves it
    run_json.write_text(json.dumps(info))
    with pytest.raises(InputError, match=r"name=auction \(stored: market\)"):
        sl.run_sim("auction", runs_dir=tmp_path, resume=first.run_dir)
    again = sl.run_sim("market", runs_dir=tmp_path, resume=first.run_dir)
    assert again.run_dir == first.run_dir and again.seed == 3
    assert again.to_dict() == first.to_dict()


def test_a_simulation_edited_in_python_runs_and_keeps_its_edit(tmp_path: Path) -> None:
    world = sl.Simulation.load(Path(sl.api.sim.__file__).parents[1] / "sim/worlds/election.yaml")
    scenes = [dict(s) for s in world.game_master.params["scenes"]]
    scenes[0]["rounds"] = 1  # one campaign day instead of two
    gm = world.game_master.model_copy(update={"params": {**world.game_master.params,
                                                        "scenes": scenes}})  # fmt: skip
    edited = world.model_copy(update={"game_master": gm})
    result = _in_a_cell(simulation=edited, runs_dir=tmp_path)
    assert result.status == "finished" and result.summary["steps"] == 3
    assert {r["entity"]: r.get("votes") for r in result.outcome[:2]} == {"Alice": 2, "Bob": 1}
    stored = json.loads((result.run_dir / "run.json").read_text())["config"]["simulation"]
    assert sl.Simulation.from_yaml(stored) == edited
    assert sl.SimResult.from_run(result.run_dir).summary == result.summary
    with pytest.raises(InputError, match="simulation="):
        sl.run_sim(42, runs_dir=tmp_path)  # type: ignore[arg-type]
