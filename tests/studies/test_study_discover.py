"""``study discover RUN_DIR --method ges|pc`` (paper §5): causal discovery on a finished
study's data, compared with the hypothesized graph, on studies run offline here (the
bail study on the scripted hidden-SCM world, the auction with rule-based bidders)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from silicolab.api.study_discover import discovery_frame, hypothesized_graph
from silicolab.cli.study._discover import discover_study_command
from silicolab.core.errors import InputError
from silicolab.discovery.registry import discover
from silicolab.discovery.result import GraphResult, graph_edges
from silicolab.discovery.scoring import score
from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.scm.graph import CausalGraph
from silicolab.scm.metrics import binary_edges, shd_cpdag
from silicolab.studies import load_example
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.study import run_study
from silicolab.studies.world import HiddenWorld
from tests.support.cli import strict_json

BAIL_VARIABLES = ["criminal_history", "judge_cases_today", "remorse", "bail_amount"]


@pytest.fixture(scope="module")
def bail_run(tmp_path_factory: pytest.TempPathFactory) -> Run:
    """The bail study (245 conditions) on a world where only the defendant's criminal
    history moves the bail amount: the setting of the paper's Figure 8."""
    root = tmp_path_factory.mktemp("bail")
    hypothesis = load_example("bail")
    effects = {"criminal_history": 500.0, "judge_cases_today": 0.0, "remorse": 0.0}
    world = HiddenWorld(hypothesis, effects, intercept=20_000.0, noise_sd=2000.0, seed=1)
    model = load_model("scripted", fn=world, cache_path=root / "cache.sqlite")
    with Run.create(root, kind="study", slug="bail") as run:
        run_study(
            hypothesis, StudyOptions(jobs=8), run=run, models=StudyModels(model, model, model)
        )
    assert run.status == "finished"
    return run


def _auction_run(root, conditions: int) -> Run:
    with Run.create(root, kind="study", slug="auction") as run:
        options = StudyOptions(subjects="rule", conditions=conditions, seed=3)
        run_study(load_example("auction"), options, run=run)
    return run


def test_ges_on_bail_matches_the_project_metrics(bail_run: Run, capsys) -> None:
    summary = discover_study_command(bail_run.path, method="ges", json_out=True)
    printed = strict_json(capsys.readouterr().out, source="study discover --json")
    path = bail_run.path / "discovery-ges.json"
    written = strict_json(path.read_text(encoding="utf-8"), source=str(path))
    assert printed == written | {"path": str(path.resolve())} and printed == summary

    hypothesis = load_example("bail")
    expected = [[cause, "bail_amount"] for cause in hypothesis.outcome.causes]
    assert sorted(written["hypothesized_edges"]) == sorted(expected)
    assert written["variables"] == BAIL_VARIABLES and written["rows"] == 245

    # the same method on the same columns of data.csv finds the same graph
    data = pd.read_csv(bail_run.path / "data.csv")[BAIL_VARIABLES].astype(float)
    again = discover(data, "ges")
    assert written["found_edges"] == graph_edges(again.graph)

    # the metrics are the project's functions on the written graphs
    truth = CausalGraph(BAIL_VARIABLES, [tuple(e) for e in written["hypothesized_edges"]])
    found = GraphResult.from_dict(
        {"method": "ges", "nodes": BAIL_VARIABLES, "edges": written["found_edges"]}
    ).graph
    assert written["metrics"] == {**score(found, truth), "shd_cpdag": shd_cpdag(truth, found)}

    # Figure 8: the one real effect is found, but with nothing to orient it (no collider)
    rows = {r["edge"]: r for r in written["edges"]}
    history = rows["criminal_history -> bail_amount"]
    assert history["status"] == "both" and history["direction"] == "unoriented"
    assert history["found"] == "criminal_history -- bail_amount"
    for cause in ("judge_cases_today", "remorse"):
        assert rows[f"{cause} -> bail_amount"]["status"] == "hypothesized"
    # every node pair adjacent in either graph has exactly one row
    adjacent = {frozenset(e) for e in binary_edges(truth) | binary_edges(found)}
    assert len(written["edges"]) == len(adjacent)


def test_pc_on_the_auction_orients_the_collider(tmp_path, capsys) -> None:
    run = _auction_run(tmp_path, conditions=60)
    summary = discover_study_command(run.path, method="pc", json_out=False)
    out = capsys.readouterr().out
    # the price is a function of all three independent budgets: a collider PC can orient
    assert summary["metrics"]["shd"] == 0 and summary["metrics"]["f1"] == 1.0
    assert [r["direction"] for r in summary["edges"]] == ["same"] * 3
    for i in (1, 2, 3):
        assert f"| budget_{i} -> final_price | both | budget_{i} -> final_price | same |" in out
    assert "SHD 0" in out and str(run.path / "discovery-pc.json") in out
    assert strict_json((run.path / "discovery-pc.json").read_text())["method"] == "pc"


def test_bad_input_is_refused_with_the_fix(tmp_path, bail_run: Run) -> None:
    with pytest.raises(InputError, match=r"method='fci' is not supported here; use one of"):
        discover_study_command(bail_run.path, method="fci", json_out=False)
    (tmp_path / "empty").mkdir()
    with pytest.raises(InputError, match="not a run directory"):
        discover_study_command(tmp_path / "empty", method="ges", json_out=False)
    small = _auction_run(tmp_path / "small", conditions=8)
    with pytest.raises(InputError, match=r"only 8 complete rows .* at least 10: run the study"):
        discover_study_command(small.path, method="pc", json_out=False)
    assert not (small.path / "discovery-pc.json").exists()


def test_constant_and_dependent_columns_are_refused(bail_run: Run) -> None:
    hypothesis = load_example("bail")
    data = pd.read_csv(bail_run.path / "data.csv")
    with pytest.raises(InputError, match=r"bail_amount \(20000 in every row\) does not vary"):
        discovery_frame(hypothesis, data.assign(bail_amount=20_000.0))
    with pytest.raises(InputError, match="subjects whose answers vary"):
        discovery_frame(hypothesis, data.assign(bail_amount=20_000.0))
    with pytest.raises(InputError, match="run more conditions so every treatment takes two"):
        discovery_frame(hypothesis, data.assign(remorse=2.0))
    summed = data.assign(bail_amount=data.criminal_history + 2 * data.judge_cases_today)
    with pytest.raises(InputError, match="exact linear combinations"):
        discovery_frame(hypothesis, summed)


def test_missing_and_capped_rows_are_left_out_with_notes(bail_run: Run) -> None:
    hypothesis = load_example("bail")
    data = pd.read_csv(bail_run.path / "data.csv")
    data.loc[[0, 5], "bail_amount"] = np.nan
    data.loc[[1, 2, 3], "stop_reason"] = "cap"
    frame, groups, notes = discovery_frame(hypothesis, data, drop_capped=True)
    assert len(frame) == 245 - 3 - 2 and list(frame.columns) == BAIL_VARIABLES
    assert "3 capped conversations left out, as in the fit" in notes
    assert "2 rows with a missing value left out" in notes
    assert groups == {v: [v] for v in BAIL_VARIABLES}


def test_a_nominal_variable_is_dummy_coded() -> None:
    data = load_example("bail").to_dict()
    remorse = next(v for v in data["variables"] if v["name"] == "remorse")
    remorse["type"] = "nominal"
    levels = remorse["levels"] or remorse["values"]
    hypothesis = Hypothesis.model_validate(data)
    rng = np.random.default_rng(0)
    n = 40
    table = pd.DataFrame(
        {
            "criminal_history": rng.integers(0, 5, n).astype(float),
            "judge_cases_today": rng.integers(1, 10, n).astype(float),
            "remorse": [levels[i % len(levels)] for i in range(n)],
            "bail_amount": rng.normal(20_000, 2000, n),
        }
    )
    frame, groups, notes = discovery_frame(hypothesis, table)
    dummies = [f"remorse={level}" for level in levels[1:]]
    assert groups["remorse"] == dummies
    for name, level in zip(dummies, levels[1:], strict=True):
        assert frame[name].tolist() == [float(r == level) for r in table.remorse]
    assert any(n.startswith("remorse (nominal) dummy-coded against its first level") for n in notes)
    graph = hypothesized_graph(hypothesis, groups)
    assert set(graph.parents("bail_amount")) == {"criminal_history", "judge_cases_today", *dummies}
