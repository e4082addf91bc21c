"""The CausaLab benchmark: table rows beside the paper's anchors, resume, LLM agent."""

from __future__ import annotations

import json
import math

import pytest

from silicolab.bench.causalab import (
    PUBLISHED,
    comparison_model,
    find_anchor,
    published_model,
    published_table,
    run_causalab_bench,
)
from silicolab.core.errors import InputError
from silicolab.runs import Run


def _episode_events(run: Run) -> list[dict]:
    lines = run.events_path.read_text().splitlines()
    return [json.loads(line) for line in lines if line.strip()]


def test_reference_rows_and_resume(tmp_path) -> None:
    run = Run.create(tmp_path, kind="bench", slug="causalab")
    table = run_causalab_bench(["3nodes"], "reference", episodes=5, jobs=2, run=run)
    assert list(table["suite"]) == ["3nodes"]
    row = table.iloc[0]
    assert row["episodes"] == 5 and row["errors"] == 0 and row["solvable"] == 5
    assert row["accuracy"] == 100.0 and row["all_edge_f1"] == 1.0 and row["shd"] == 0.0
    assert row["weight_f1"] == 1.0 and row["budget_used"] == 2.0
    assert row["consistency_success"] == 100.0 and math.isnan(row["consistency_failure"])
    # beside it, the strongest published model on 3 nodes
    assert row["published_model"] == "gpt-5.2-high"
    assert row["published_accuracy"] == 100 and row["published_shd"] == 0.1
    events = _episode_events(run)
    assert len(events) == 5 and all(e["status"] == "ok" for e in events)
    record = events[0]["data"]["record"]
    assert record["schema_version"] == "1" and record["steps"] and record["metrics"]

    again = run_causalab_bench(["3nodes"], "reference", episodes=7, jobs=2, run=Run.open(run.path))
    assert len(_episode_events(run)) == 7  # only the 2 new episodes ran
    assert again.iloc[0]["episodes"] == 7 and again.iloc[0]["accuracy"] == 100.0


def test_random_agent_in_process(tmp_path) -> None:
    table = run_causalab_bench(["4nodes", "4nodes_quad_hard"], "random", episodes=3, jobs=1)
    assert list(table["suite"]) == ["4nodes", "4nodes_quad_hard"]
    assert (table["errors"] == 0).all() and (table["episodes"] == 3).all()
    assert table.iloc[1]["published_model"] == "gpt-5-mini"
    assert table.iloc[1]["published_accuracy"] == 24


def test_react_agent_with_a_scripted_model() -> None:
    """A model that only WAITs: every episode ends at the step cap, nothing fails."""
    reply = json.dumps(
        {
            "memory": "",
            "thought": "",
            "past_data": [],
            "hypothesis": {"edges": [], "freq_equation": "", "coefficients": {}},
            "experiment": {},
            "action": "WAIT",
        }
    )
    from silicolab.llm import load_model

    model = load_model("scripted:gpt-5-mini-double", replies=[reply])
    table = run_causalab_bench(
        ["3nodes"], "llm", model=model, episodes=2, jobs=2, verify="before_commit"
    )
    row = table.iloc[0]
    assert row["errors"] == 0 and row["accuracy"] == 0.0
    assert row["llm_calls"] > 0 and row["verify"] == "before_commit"
    assert row["published_model"] == "gpt-5-mini"
    assert table.attrs["usage"]["calls"] == 2 * row["llm_calls"]


def test_published_anchors_present() -> None:
    assert len(PUBLISHED) > 50 and not published_table().empty
    assert find_anchor("4nodes", "gpt-5-mini", "accuracy").value == 48
    assert find_anchor("7nodes", "gpt-5.2-high", "shd").value == 4.761
    assert find_anchor("6nodes", "gpt-5.2-high", "accuracy").value == 80
    assert find_anchor("4nodes_quad_hard", "gpt-5-mini", "weight_f1").value == 0.251
    assert find_anchor("4nodes", "gpt-5-mini", "accuracy", "verification").value == 60
    assert find_anchor("4nodes_golden", "gpt-5-mini", "accuracy").value == 90
    hidden = find_anchor("4nodes_hidden_n2", "gpt-5-mini", "accuracy")
    assert (hidden.value, hidden.high) == (40, 54)
    assert published_model("openai:gpt-5-mini") == "gpt-5-mini"
    assert published_model("openai:gpt-5.2") == "gpt-5.2-high"
    assert comparison_model("5nodes", "") == "gpt-5.2-high"


def test_bad_arguments() -> None:
    with pytest.raises(InputError):
        run_causalab_bench("3nodes", "reference")
    with pytest.raises(InputError):
        run_causalab_bench(["3nodes"], "oracle")
    with pytest.raises(InputError):
        run_causalab_bench(["3nodes"], "llm")
