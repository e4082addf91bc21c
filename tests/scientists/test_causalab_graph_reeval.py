"""The paper's graph re-evaluation (spec §6.7 Task-2, issue 25): in faithful mode, after the
episode, a new chat shows the model its final hypothesis and asks for the final graph; the
edge, SHD and weight metrics score *that answer*, the final hypothesis's stay beside them as
``*_source_only``. Fixed mode makes no such call. The model is the scripted oracle of
``test_causalab_react`` with a Task-2 answer the test chooses."""

from __future__ import annotations

import json
from typing import Any

from tests.scientists.test_causalab_react import Oracle

from silicolab.envs import make
from silicolab.llm import load_model
from silicolab.scientists.causalab import ReactScientist, play_episode


class Reasker(Oracle):
    """The oracle (its final hypothesis is the true graph) whose Task-2 answer is
    ``graph_answer`` (a JSON object, or raw text); the Task-2 prompts are kept."""

    def __init__(self, lab: Any, graph_answer: Any):
        super().__init__(lab)
        self.graph_answer = graph_answer
        self.graph_prompts: list[list[dict[str, str]]] = []

    def answer(self, messages: list[dict[str, str]]) -> str:
        if "<final_hypothesis>" in messages[0]["content"]:
            self.graph_prompts.append(messages)
            answer = self.graph_answer
            return answer if isinstance(answer, str) else json.dumps(answer)
        if messages[0]["role"] == "system":  # the root re-evaluation (Task-1)
            return json.dumps({"root_nodes": [], "frequency_formula": "0"})
        return super().answer(messages)


def play(fidelity: str, graph_answer: Any) -> tuple[Any, Reasker]:
    lab = make("causalab", suite="4nodes", index=0, seed=0, fidelity=fidelity)
    oracle = Reasker(lab, graph_answer)
    record = play_episode(lab, ReactScientist(load_model("scripted", fn=oracle.scripted)))
    return record, oracle


def test_faithful_graph_scores_come_from_the_reasked_graph() -> None:
    lab = make("causalab", suite="4nodes", index=0, seed=0)
    true_edges = list(lab.config.edges)
    n = len(true_edges)
    assert n >= 3
    first, second = true_edges[0], true_edges[1]
    # the answer keeps one true edge, reverses another and drops the rest
    answer = {
        "edges": [{"from": first[0], "to": first[1]}, {"from": second[1], "to": second[0]}],
        "freq_equation": "resonanceFreq = base",
        "coefficients": {"base": 20},
    }
    record, oracle = play("faithful", answer)
    assert record.success
    (asked,) = oracle.graph_prompts  # re-asked once, in a new chat of one user turn
    assert len(asked) == 1 and asked[0]["role"] == "user"
    shown = asked[0]["content"]
    assert "preserve directions, equation and coefficients" in shown
    final = shown.split("<final_hypothesis>")[1].split("</final_hypothesis>")[0]
    assert json.loads(final) == record.final_hypothesis  # the final hypothesis, whole
    m = record.metrics
    # scored by hand: predicted {first, reversed second}; true has n edges
    assert m["all_edge_precision"] == 0.5 and m["all_edge_recall"] == 1 / n
    assert m["all_edge_f1"] == 2 * 0.5 * (1 / n) / (0.5 + 1 / n)
    assert (m["shd"], m["shd_reversed"], m["shd_missing"]) == (n - 1, 1, n - 2)
    assert m["n_pred_edges"] == 2
    # the final hypothesis (the true graph) stays beside, as the source-only scores
    assert m["all_edge_f1_source_only"] == 1.0 and m["shd_source_only"] == 0
    assert m["weight_f1_source_only"] == 1.0 and m["weight_f1"] == 0.0  # no c_<p> answered
    assert (m["graph_source"], m["reeval_graph_status"]) == ("exact_context_reeval", "ok")
    assert record.reeval_graph["hypothesis"] == answer
    assert record.usage["reeval_graph_calls"] == 1


def test_an_unusable_graph_answer_scores_as_an_empty_graph() -> None:
    record, _ = play("faithful", "I believe the graph is the same as before.")
    m = record.metrics
    n = len(make("causalab", suite="4nodes", index=0, seed=0).config.edges)
    assert m["reeval_graph_status"] == "parse_error" and record.reeval_graph["hypothesis"] is None
    assert m["all_edge_f1"] == 0.0 and m["shd"] == n and m["all_edge_f1_source_only"] == 1.0


def test_fixed_mode_makes_no_graph_reevaluation() -> None:
    record, oracle = play("fixed", {"edges": []})
    assert record.success and not oracle.graph_prompts
    assert record.reeval_graph is None and "reeval_graph_calls" not in record.usage
    assert record.metrics["all_edge_f1"] == 1.0 and "graph_source" not in record.metrics
