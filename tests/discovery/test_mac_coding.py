"""MAC Debate-Coding: plan debate, executor code in the real sandbox, repairs, fallback.

The agents are scripted (:class:`tests.discovery.mac_fakes.Oracle`); the code they
"write" really runs in :mod:`silicolab.runtime.sandbox` with causal-learn, and the
graph is compared with :func:`silicolab.discovery.statistical.pc` on the same data.
"""

from __future__ import annotations

import json

import numpy as np
import pytest
from tests.discovery.mac_fakes import NAME_ERROR, PC_BAD, PC_GOOD, Oracle

from silicolab.discovery import statistical
from silicolab.discovery.datasets import load
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac import adebate_coding, debate_coding
from silicolab.discovery.mac.executor import (
    ResultError,
    extract_code,
    knowledge_code,
    parse_result,
)
from silicolab.llm import load_model
from silicolab.scm import CausalGraph, PartialGraph

KEY_ENV = "SILICOLAB_TEST_MAC_KEY"


@pytest.fixture(scope="module")
def auto():
    return load("auto_mpg")


@pytest.fixture(scope="module")
def pc_graph(auto):
    return statistical.pc(auto.data).graph


def test_failed_code_is_repaired_and_matches_causallearn_pc(auto, pc_graph) -> None:
    oracle = Oracle(auto.truth.edges, executor=(PC_BAD, PC_GOOD))
    model = load_model("scripted", fn=oracle.scripted)
    result = debate_coding(auto.data, model=model, description=auto.description)
    assert result.graph == pc_graph
    assert result.params["algorithm"] == "pc" and result.params["fallback"] is False
    attempts = result.raw["execution"]["attempts"]
    assert [a["attempt"] for a in attempts] == [1, 2]
    assert attempts[0]["sandbox"]["ok"] is False
    assert "Input data must be a numpy array" in attempts[0]["problem"]
    assert attempts[1]["sandbox"]["ok"] is True and attempts[1]["result"]["convention"]
    repair_prompt = oracle.prompts("executor")[1]
    assert "Attempt 1 failed" in repair_prompt
    assert "AssertionError: Input data must be a numpy array" in repair_prompt
    first_prompt = oracle.prompts("executor")[0]
    assert "Read data.csv" in first_prompt and "Algorithm: pc" in first_prompt
    # plan debaters saw the algorithm cards and df.head()
    plan_prompt = oracle.prompts("plan-affirmative")[0]
    assert "Displacement" in plan_prompt and "392 rows" in plan_prompt
    assert result.raw["plan_debate"]["decision"]["algorithm"] == "pc"
    by_tag = {t: v["calls"] for t, v in model.ledger.summary()["by_tag"].items()}
    assert by_tag == {
        "mac/coding/plan-affirmative": 1,
        "mac/coding/plan-negative": 1,
        "mac/coding/plan-judge": 1,
        "mac/coding/executor": 2,
    }
    assert set(result.usage["by_role"]) == {"affirmative", "negative", "judge", "executor"}
    assert result.usage["by_module"]["coding"]["calls"] == 5
    json.dumps(result.raw), json.dumps(result.to_dict())


def test_all_attempts_fail_falls_back_and_says_so(auto, pc_graph) -> None:
    oracle = Oracle(auto.truth.edges, executor=(NAME_ERROR,))
    model = load_model("scripted", fn=oracle.scripted)
    result = debate_coding(auto.data, model=model, max_repairs=1)
    assert result.params["fallback"] is True
    assert result.params["attempts"] == 2
    assert any("FALLBACK" in note for note in result.notes)
    assert result.graph == pc_graph
    assert all("NameError" in a["problem"] for a in result.raw["execution"]["attempts"])


def test_plan_follow_up_is_bounded_then_forced(auto) -> None:
    oracle = Oracle(auto.truth.edges, plan_follow_up=True, algorithm="ges", executor=("no code",))
    model = load_model("scripted", fn=oracle.scripted)
    result = debate_coding(auto.data, model=model, max_rounds=2, max_repairs=0)
    plan = result.raw["plan_debate"]
    assert [r["round"] for r in plan["rounds"]] == [1, 2]
    assert plan["decision"]["forced"] is True and plan["decision"]["algorithm"] == "ges"
    assert "Is the data Gaussian?" in oracle.prompts("plan-affirmative")[1]
    assert result.raw["execution"]["attempts"][0]["problem"].startswith("the reply had no")
    assert result.params["fallback"] is True
    assert result.graph == statistical.ges(auto.data).graph


# -- the result.json contract ----------------------------------------------------------


def test_parse_result_conventions() -> None:
    cols = ["x", "y", "z"]
    chain = CausalGraph.from_edges([("x", "y"), ("y", "z")], nodes=cols)
    cause_row = [[0, 1, 0], [0, 0, 1], [0, 0, 0]]
    assert (
        parse_result({"nodes": cols, "matrix": cause_row, "convention": "cause_row"}, cols) == chain
    )
    lingam_b = (0.7 * np.array(cause_row).T).tolist()  # row = effect, weighted
    assert (
        parse_result({"nodes": cols, "matrix": lingam_b, "convention": "effect_row"}, cols) == chain
    )
    # nodes listed in another order are mapped back to the data's columns
    perm = {"nodes": ["z", "y", "x"], "matrix": [[0, 0, 0], [1, 0, 0], [0, 1, 0]]}
    assert parse_result(perm | {"convention": "cause_row"}, cols) == chain
    undirected = parse_result(
        {"nodes": cols, "matrix": [[0, -1, 0], [-1, 0, 1], [0, 0, 0]], "convention": "cause_row"},
        cols,
    )
    assert isinstance(undirected, PartialGraph)
    assert undirected.undirected_edges() == (("x", "y"),)
    assert undirected.directed_edges() == (("y", "z"),)
    marks = [[0, -1, 0], [1, 0, -1], [0, 1, 0]]  # causal-learn: x -> y -> z
    assert (
        parse_result({"nodes": cols, "matrix": marks, "convention": "causallearn"}, cols) == chain
    )


@pytest.mark.parametrize(
    ("payload", "message"),
    [
        ([1, 2], "one JSON object"),
        ({"nodes": ["x", "y", "z"], "matrix": [], "convention": "rows"}, "convention"),
        ({"nodes": ["x", "y"], "matrix": [[0]], "convention": "cause_row"}, "exactly the data"),
        ({"nodes": ["x", "y", "z"], "matrix": [[0, 1]], "convention": "cause_row"}, "3 x 3"),
        (
            {"nodes": ["x", "y", "z"], "matrix": np.eye(3).tolist(), "convention": "cause_row"},
            "diagonal",
        ),
        (
            {
                "nodes": ["x", "y", "z"],
                "matrix": [[0, -1, 0], [1, 0, 0], [0, 0, 0]],
                "convention": "cause_row",
            },
            "causallearn",
        ),
        (
            {
                "nodes": ["x", "y", "z"],
                "matrix": [[0, 0.5, 0], [0] * 3, [0] * 3],
                "convention": "causallearn",
            },
            "marks",
        ),
    ],
)
def test_parse_result_rejects_what_breaks_the_contract(payload, message) -> None:
    with pytest.raises(ResultError, match=message):
        parse_result(payload, ["x", "y", "z"])


def test_extract_code() -> None:
    assert extract_code("no code here") is None
    assert extract_code("a\n```python\nx = 1\n```\nb\n```python\nprint(x)\n```") == (
        "x = 1\n\nprint(x)"
    )
    assert extract_code("```\ny = 2\n```") == "y = 2"


async def test_debate_coding_over_http(auto, pc_graph, llm_server_factory, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-test-mac")
    oracle = Oracle(auto.truth.edges, executor=(PC_GOOD,))
    server = llm_server_factory(reply=oracle.http, faults=[None, "500"])
    model = load_model(
        "openai:fake-model", base_url=server.base_url, api_key_env=KEY_ENV, timeout_s=5
    )
    try:
        result = await adebate_coding(auto.data, model=model, algorithms=("pc", "ges"))
    finally:
        await model.aclose()
    assert result.graph == pc_graph
    assert result.params["attempts"] == 1 and not result.params["fallback"]
    assert server.stats.faults_by_kind == {"500": 1}
    assert result.usage["total"]["retries"] == 1
    assert result.usage["total"]["calls"] == 4
    assert result.usage["total"]["output_tokens"] == server.stats.completion_tokens


def test_knowledge_code_is_valid_python_in_each_encoding() -> None:
    knowledge = Knowledge(required=[("x", "y")], forbidden=[("z", "x")])
    cols = ["x", "y", "z"]
    scope: dict = {"np": np}
    exec(knowledge_code("exact", knowledge, cols), scope)
    assert scope["super_graph"][2, 0] == 0 and scope["include_graph"][0, 1] == 1
    exec(knowledge_code("exact", Knowledge(forbidden=[("z", "x")]), cols), scope)
    assert scope["include_graph"] is None
    exec(knowledge_code("direct_lingam", knowledge, cols), scope)
    assert scope["prior_knowledge"][1, 0] == 1 and scope["prior_knowledge"][0, 2] == 0
    exec(knowledge_code("pc", knowledge, cols), scope)
    assert scope["required"] == [["x", "y"]] and scope["forbidden"] == [["z", "x"]]


CHEAT = """I will read the answer key.
```python
import json
import pandas as pd
edges = []
try:
    from silicolab.discovery.datasets import load
    edges = [list(e) for e in load("auto_mpg").truth.edges]
except Exception as err:
    print("import failed:", err)
try:
    edges = pd.read_csv(TRUTH).values.tolist()
except Exception as err:
    print("read failed:", err)
nodes = list(pd.read_csv("data.csv").columns)
matrix = [[int([a, b] in edges) for b in nodes] for a in nodes]
with open("result.json", "w") as fh:
    json.dump({"nodes": nodes, "matrix": matrix, "convention": "cause_row"}, fh)
```"""


def test_a_program_that_reads_the_truth_is_a_failed_attempt(auto, pc_graph) -> None:
    """Issue 25: the executor's program cannot load the ground truth (import or file);
    catching the refusals and writing a graph anyway still fails the attempt."""
    from silicolab.discovery import datasets as module

    truth_file = module.__file__.replace("datasets.py", "data/auto_mpg_gt_edges.csv")
    cheat = CHEAT.replace("TRUTH", repr(truth_file))
    oracle = Oracle(auto.truth.edges, executor=(cheat,))
    model = load_model("scripted", fn=oracle.scripted)
    result = debate_coding(auto.data, model=model, max_repairs=0)
    (attempt,) = result.raw["execution"]["attempts"]
    assert attempt["sandbox"]["ok"] is False and attempt["sandbox"]["violation"] == "read"
    stdout = attempt["sandbox"]["stdout"]
    assert "import failed: [sandbox] importing silicolab is not allowed" in stdout
    assert "read failed: [sandbox] reading files outside" in stdout
    assert "reading files outside the working directory" in attempt["problem"]
    assert result.params["fallback"] is True and result.graph == pc_graph
    assert result.graph != auto.truth
