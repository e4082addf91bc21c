"""``sl.discover`` from Python (a Jupyter cell: inside a running event loop) against
``silicolab discover`` as a real subprocess: the same run directory, the same numbers."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import silicolab as sl
from silicolab.api.discovery import DiscoveryResult
from silicolab.core.errors import InputError
from silicolab.discovery import load
from tests.cli.test_cli import run
from tests.support.cli import strict_json


def _without_run_dir(out: dict) -> dict:
    return {k: v for k, v in out.items() if k not in ("run_dir", "runtime_s")}


def _binary_f1(edges: dict, truth: set[tuple[str, str]]) -> float:
    """F1 of the binarized directed entries, computed here from the edges alone: an
    undirected edge counts in both directions."""
    found = {tuple(e) for e in edges["directed"]}
    found |= {(u, v) for a, b in edges["undirected"] for u, v in ((a, b), (b, a))}
    hits = len(found & truth)
    precision, recall = hits / len(found), hits / len(truth)
    return 2 * precision * recall / (precision + recall) if hits else 0.0


def test_discover_in_a_running_loop_equals_the_command_line(tmp_path: Path) -> None:
    async def cell() -> DiscoveryResult:
        return sl.discover("sachs", "pc", runs_dir=tmp_path / "py")

    result = asyncio.run(cell())
    args = ["discover", "--dataset", "sachs", "--method", "pc", "--runs-dir", "cli", "--json"]
    cli = run(args, tmp_path)
    assert cli.returncode == 0, cli.stderr
    printed = strict_json(cli.stdout)
    assert _without_run_dir(result.to_dict()) == _without_run_dir(printed)
    scores = result.scores
    assert (scores["shd"], scores["nhd"], scores["f1"]) == (
        printed["scores"]["shd"], printed["scores"]["nhd"], printed["scores"]["f1"],
    )  # fmt: skip
    truth = set(load("sachs").truth.edges)
    assert scores["f1"] == pytest.approx(_binary_f1(result.edges, truth))
    folders = (result.run_dir, Path(printed["run_dir"]))
    for folder in folders:
        for name in ("run.json", "events.jsonl", "record.json", "report.md", "report.html"):
            assert (folder / name).is_file(), (folder, name)
    configs = [json.loads((d / "run.json").read_text())["config"] for d in folders]
    assert configs[0] == configs[1]
    assert result.record == json.loads((result.run_dir / "record.json").read_text())


def test_an_llm_method_in_a_running_loop_equals_the_command_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The meta-debate's model calls are async: in a cell they run on a worker thread.
    Each side has its own folder, so neither reads the other's answers from the cache."""
    for name in [n for n in os.environ if n.startswith("SILICOLAB_")]:
        monkeypatch.delenv(name)
    (tmp_path / "py").mkdir()
    (tmp_path / "cli").mkdir()
    monkeypatch.chdir(tmp_path / "py")

    async def cell() -> DiscoveryResult:
        return sl.discover("auto_mpg", "mac_meta_debate", model="scripted")

    result = asyncio.run(cell())
    args = ["discover", "--dataset", "auto_mpg", "--method", "mac_meta_debate", "--model",
            "scripted", "--json"]  # fmt: skip
    cli = run(args, tmp_path / "cli")
    assert cli.returncode == 0, cli.stderr
    printed = strict_json(cli.stdout)
    assert _without_run_dir(result.to_dict()) == _without_run_dir(printed)
    assert result.usage["calls"] > 0 and result.usage["cache_hits"] == 0
    assert result.record["debates"] and result.run_dir.parent == (tmp_path / "py" / "runs")


def _chain(n: int = 2000) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, n)
    b = 2 * a + rng.uniform(-1, 1, n)
    c = -1.5 * b + rng.uniform(-1, 1, n)
    return pd.DataFrame({"a": a, "b": b, "c": c})


def test_a_dataframe_with_its_truth_and_the_graph_it_returns(tmp_path: Path) -> None:
    truth = pd.DataFrame(0, index=list("abc"), columns=list("abc"))
    truth.loc["a", "b"] = truth.loc["b", "c"] = 1
    result = sl.discover(_chain(), "direct_lingam", truth=truth, forbid=[("c", "a")],
                         runs_dir=tmp_path)  # fmt: skip
    assert result.dataset == "dataframe" and result.scores["shd"] == 0
    assert sorted(result.graph.edges) == [("a", "b"), ("b", "c")]
    assert result.adjacency.equals(truth)
    config = json.loads((result.run_dir / "run.json").read_text())["config"]
    assert config["forbid"] == ["c->a"] and config["truth"] == [["a", "b"], ["b", "c"]]
    assert config["frame"]["rows"] == 2000 and config["frame"]["columns"] == ["a", "b", "c"]
    same = sl.discover(_chain(), "direct_lingam", truth=["a->b", "b->c"], runs_dir=tmp_path)
    assert same.scores == result.scores and same.edges == result.edges
    (tmp_path / "truth.csv").write_text("cause,effect\na,b\nb,c\n")
    from_file = sl.discover(_chain(), "direct_lingam", truth=tmp_path / "truth.csv",
                            runs_dir=tmp_path)  # fmt: skip
    assert from_file.scores == result.scores and from_file.record["truth"] == {
        "edges": [["a", "b"], ["b", "c"]]
    }


def test_a_csv_file_gives_the_numbers_of_the_command_line(tmp_path: Path) -> None:
    _chain().to_csv(tmp_path / "mine.csv", index=False)
    (tmp_path / "truth.csv").write_text("cause,effect\na,b\nb,c\n")
    result = sl.discover(tmp_path / "mine.csv", "direct_lingam", truth=tmp_path / "truth.csv",
                         forbid=["c->a"], runs_dir=tmp_path / "py")  # fmt: skip
    args = ["discover", "--data", "mine.csv", "--truth-edges", "truth.csv", "--method",
            "direct_lingam", "--forbid", "c->a", "--runs-dir", "cli", "--json"]  # fmt: skip
    cli = run(args, tmp_path)
    assert cli.returncode == 0, cli.stderr
    printed = strict_json(cli.stdout)
    assert _without_run_dir(result.to_dict()) == _without_run_dir(printed)
    assert result.scores["shd"] == 0


def test_from_run_repr_and_html(tmp_path: Path) -> None:
    result = sl.discover("auto_mpg", "pc", runs_dir=tmp_path)
    back = DiscoveryResult.from_run(result.run_dir)
    assert back.to_dict() == result.to_dict() and back.graph.edges == result.graph.edges
    text = repr(result)
    assert len(text) < 300 and text.startswith("DiscoveryResult(method='pc', dataset='auto_mpg'")
    assert "shd=8" in text  # the published PC row on Auto MPG
    page = result._repr_html_()
    assert "<table>" in page and '<img src="data:image/svg+xml;base64,' in page
    assert result._figure() == result.run_dir / "figures" / "graphs.svg"


def test_a_bad_method_names_method_and_the_command_line_its_flag(tmp_path: Path) -> None:
    with pytest.raises(InputError) as bad:
        sl.discover("auto_mpg", "magic", runs_dir=tmp_path)
    assert "(method=)" in str(bad.value) and bad.value.params == ("method",)
    with pytest.raises(InputError) as data:
        sl.discover("nope", runs_dir=tmp_path)
    assert str(data.value).startswith("data='nope' is neither a bundled dataset")
    with pytest.raises(InputError) as model:
        sl.discover("auto_mpg", "pc", model="scripted", runs_dir=tmp_path)
    assert str(model.value).startswith("model= applies to LLM methods only")
    assert not tmp_path.exists() or not list(tmp_path.iterdir())
    cli = run(["discover", "--dataset", "auto_mpg", "--method", "magic"], tmp_path)
    assert cli.returncode == 2 and "unknown discovery method 'magic' (--method)" in cli.stderr


def test_resuming_a_dataframe_run_checks_the_table(tmp_path: Path) -> None:
    data = _chain(200)
    result = sl.discover(data, "pc", runs_dir=tmp_path)
    run_json = result.run_dir / "run.json"
    info = json.loads(run_json.read_text())
    info["status"] = "interrupted"  # as a killed run leaves it
    run_json.write_text(json.dumps(info))
    with pytest.raises(InputError, match="not the DataFrame this run was made from"):
        sl.discover(data * 2, "pc", runs_dir=tmp_path, resume=result.run_dir)
    again = sl.discover(data, "pc", runs_dir=tmp_path, resume=result.run_dir)
    assert again.run_dir == result.run_dir and again.edges == result.edges


def test_the_inner_graph_result_keeps_its_old_name_for_one_release() -> None:
    from silicolab.discovery import DiscoveryResult as Old
    from silicolab.discovery.result import GraphResult

    assert Old is GraphResult and sl.DiscoveryResult is DiscoveryResult
