"""Wording variants of a study: apply, check, paraphrase (scripted model), load from a file."""

from __future__ import annotations

import json

import pytest

from silicolab.core.errors import InputError, ParseFailure
from silicolab.llm import Request, load_model
from silicolab.studies import load_example
from silicolab.studies.hypothesis import Hypothesis
from silicolab.studies.replication.scripted_wordings import reword, scripted_paraphraser
from silicolab.studies.replication.wordings import (
    REPAIRS,
    Wording,
    check_wording,
    load_wordings,
    paraphrase,
    sample_identity,
    wording_fields,
)

QUESTION = "variables.deal.questions.0.text"


def _priced_mug() -> Hypothesis:
    """The mug study with a treatment value in the scenario and the levels in the question."""
    mug = load_example("mug")
    data = mug.model_dump(mode="json")
    data["scenario"] = "Two people bargaining over a mug that usually sells for $10."
    data["variables"][0]["questions"][0]["text"] = (
        "Did the buyer and the seller agree on a price? Answer yes or no."
    )
    data["agents"][1]["attributes"] = {"personality": "You are patient and friendly."}
    return Hypothesis.model_validate(data)


def _structure(h: Hypothesis) -> dict:
    """Everything of a hypothesis but its wording."""
    data = h.model_dump(mode="json")
    for path in wording_fields(h):
        node, *rest = path.split(".")
        target = data[node]
        if node == "scenario":
            data["scenario"] = None
            continue
        name, *keys = rest
        item = next(x for x in target if x["name"] == name)
        *parents, last = keys
        for key in parents:
            item = item[int(key)] if key.isdigit() else item[key]
        item[last] = None
    return data


def test_wording_fields_lists_every_text_by_path_and_skips_empty_ones():
    h = _priced_mug()
    fields = wording_fields(h)
    assert fields["scenario"] == h.scenario
    assert fields["agents.seller.goal"] == h.agents[1].goal
    assert fields["agents.seller.attributes.personality"] == "You are patient and friendly."
    assert fields[QUESTION] == h.outcome.questions[0].text
    assert fields["variables.buyer_budget.attribute"] == "your budget for the mug"
    # empty texts (no operationalization of a cause, no public name) have nothing to reword
    assert "variables.buyer_budget.public_name" not in fields
    assert "variables.buyer_budget.operationalization" not in fields
    # structure is never a path
    assert not any(p.endswith((".name", ".values", ".levels", ".causes")) for p in fields)


def test_apply_replaces_only_texts_and_keeps_the_structure():
    h = _priced_mug()
    new = {path: f"{text} (reworded)" for path, text in wording_fields(h).items()}
    new[QUESTION] = "Did buyer and seller settle on a price? Answer yes or no."
    wording = Wording(index=1, texts=new, source="test")
    changed = wording.apply(h)
    assert _structure(changed) == _structure(h)
    assert wording_fields(changed) == new
    assert changed.agents[1].attributes == {
        "personality": new["agents.seller.attributes.personality"]
    }
    assert [v.values for v in changed.variables] == [v.values for v in h.variables]
    assert changed.treatments[0].attribute == "your budget for the mug (reworded)"
    assert h.scenario == "Two people bargaining over a mug that usually sells for $10."  # a copy
    # JSON round trip of the wording itself
    assert Wording.from_dict(json.loads(json.dumps(wording.to_dict()))) == wording


def test_apply_refuses_an_unknown_path():
    with pytest.raises(InputError, match=r"unknown paths \['agents.bob.goal'\]"):
        Wording(index=1, texts={"agents.bob.goal": "Win."}).apply(load_example("mug"))


def test_check_accepts_a_faithful_paraphrase():
    h = _priced_mug()
    wording = Wording(
        index=1,
        texts={
            "scenario": "Two persons haggle over a mug that normally costs $10.",
            QUESTION: "Did the two settle on a price? Answer Yes or no.",
        },
    )
    assert check_wording(h, wording) == []


def test_check_catches_a_dropped_value_a_dropped_level_an_empty_text_and_an_unknown_path():
    h = _priced_mug()
    problems = check_wording(
        h,
        Wording(
            index=1,
            texts={
                "scenario": "Two persons haggle over a mug that normally costs ten dollars.",
                QUESTION: "Did the two settle on a price? Answer yes or not.",
                "agents.buyer.goal": "  ",
                "agents.bob.goal": "Win.",
            },
        ),
    )
    assert len(problems) == 4
    assert problems[0].startswith("scenario:") and "'$10'" in problems[0]
    assert problems[1].startswith(QUESTION) and "'no'" in problems[1] and "'yes'" not in problems[1]
    assert problems[2].startswith("agents.buyer.goal:") and "empty" in problems[2]
    assert problems[3].startswith("agents.bob.goal: unknown path")


def test_check_a_value_counts_only_as_a_whole_term():
    h = _priced_mug()
    wording = Wording(index=1, texts={"scenario": "Two people bargain over a mug sold for $100."})
    assert "'$10'" in check_wording(h, wording)[0]


def test_check_keeps_the_type_of_a_question():
    mug = load_example("mug")
    not_yes_no = Wording(index=1, texts={QUESTION: "Tell me about the price they reached."})
    assert "no longer a yes/no question" in check_wording(mug, not_yes_no)[0]
    still = Wording(index=1, texts={QUESTION: "Say whether the two agreed on a price."})
    assert check_wording(mug, still) == []
    bail = load_example("bail")
    path = next(p for p in wording_fields(bail) if p.endswith("questions.0.text"))
    no_number = Wording(index=1, texts={path: "Describe the bail you set for the defendant."})
    assert "no longer asks for a number" in check_wording(bail, no_number)[0]
    number = Wording(index=1, texts={path: "How much bail did you set for the defendant?"})
    assert check_wording(bail, number) == []


def test_check_refuses_two_causes_with_one_label():
    mug = load_example("mug")
    same = Wording(
        index=1, texts={"variables.seller_min_price.attribute": "your budget for the mug"}
    )
    (problem,) = check_wording(mug, same)
    assert problem.startswith("variables.seller_min_price.attribute:")
    assert "variables.buyer_budget.attribute" in problem


def _model():
    return load_model("scripted", fn=scripted_paraphraser())


def test_paraphrase_gives_k_valid_wordings_with_the_original_first():
    h = _priced_mug()
    model = _model()
    wordings = paraphrase(h, model, 3, seed=4)
    assert [w.index for w in wordings] == [0, 1, 2]
    assert wordings[0].texts == wording_fields(h) and wordings[0].source == "original"
    assert wordings[0].apply(h) == h
    for w in wordings[1:]:
        assert w.source == "model"
        assert set(w.texts) == set(wording_fields(h))
        assert check_wording(h, w) == []
        changed = w.apply(h)
        assert _structure(changed) == _structure(h)
        assert changed.scenario != h.scenario and "$10" in changed.scenario
    assert wordings[1].texts != wordings[2].texts
    # deterministic: a second run, in a fresh model, gives the same wordings
    assert paraphrase(h, _model(), 3, seed=4) == wordings


def test_paraphrase_calls_once_per_wording_with_a_fixed_sample_identity():
    h = load_example("mug")
    seen: list[Request] = []
    inner = scripted_paraphraser()

    def counting(request: Request) -> str:
        seen.append(request)
        return inner(request)

    assert len(paraphrase(h, load_model("scripted", fn=counting), 1)) == 1
    assert seen == []  # the original needs no call
    paraphrase(h, load_model("scripted", fn=counting), 3, seed=7)
    assert sorted(r.sample_index for r in seen) == sorted(sample_identity(7, i) for i in (1, 2))
    assert sample_identity(7, 1) != sample_identity(8, 1) != sample_identity(7, 2)


def test_paraphrase_hits_the_cache_on_a_rerun(tmp_path):
    h = load_example("mug")
    calls: list[int] = []
    inner = scripted_paraphraser()

    def counting(request: Request) -> str:
        calls.append(request.sample_index)
        return inner(request)

    first = paraphrase(h, load_model("scripted", fn=counting, cache_path=tmp_path / "c.db"), 3)
    again = paraphrase(h, load_model("scripted", fn=counting, cache_path=tmp_path / "c.db"), 3)
    assert again == first and len(calls) == 2


def test_a_reply_that_drops_a_value_is_re_asked_then_fails_naming_the_problem():
    h = _priced_mug()
    seen: list[Request] = []
    inner = scripted_paraphraser()

    def careless(request: Request) -> str:
        seen.append(request)
        texts = json.loads(inner(request))
        texts["scenario"] = texts["scenario"].replace("$10", "ten dollars")
        return json.dumps(texts)

    with pytest.raises(ParseFailure) as caught:
        paraphrase(h, load_model("scripted", fn=careless), 2)
    assert len(seen) == 1 + REPAIRS
    assert "paraphrase 1 stayed invalid after 2 repairs" in str(caught.value)
    assert "scenario: the original says '$10'" in str(caught.value)
    repair = seen[-1].messages[-1]["content"]
    assert "breaks the rules" in repair and "'$10'" in repair
    assert len(seen[-1].messages) == 2 + 2 * REPAIRS  # system, prompt, then each repair turn


def test_a_reply_fixed_after_one_repair_is_kept():
    h = _priced_mug()
    seen: list[Request] = []
    inner = scripted_paraphraser()

    def learns(request: Request) -> str:
        seen.append(request)
        texts = json.loads(inner(request))
        if len(request.messages) == 2:  # the first attempt drops the value
            texts["scenario"] = "Two people bargaining over a mug."
        return json.dumps(texts)

    (_, wording) = paraphrase(h, load_model("scripted", fn=learns), 2)
    assert len(seen) == 2 and "$10" in wording.texts["scenario"]


def test_paraphrase_refuses_k_below_one():
    with pytest.raises(InputError, match="k=0") as caught:
        paraphrase(load_example("mug"), _model(), 0)
    assert caught.value.params == ("k",)


def test_reword_never_touches_a_protected_string():
    text = "You want $10 and a High Want."
    out = reword(text, ["$10", "high want"], 1)
    assert out.endswith(" $10 and a High Want.") and not out.startswith("You want")
    assert reword(text, ["$10", "high want"], 2) != out  # another wording, another synonym


def test_load_wordings_reads_a_file_and_prepends_the_original(tmp_path):
    h = _priced_mug()
    path = tmp_path / "wordings.yaml"
    path.write_text(
        "- scenario: Two persons haggle over a mug that normally costs $10.\n"
        "  agents.seller.attributes.personality: You are calm and kind.\n"
        f"- {QUESTION}: Was a price agreed by the two? Answer yes or no.\n",
        encoding="utf-8",
    )
    wordings = load_wordings(path, h)
    assert [w.index for w in wordings] == [0, 1, 2]
    assert wordings[1].source == str(path)
    changed = wordings[1].apply(h)
    assert changed.agents[1].attributes["personality"] == "You are calm and kind."
    assert changed.outcome.questions == h.outcome.questions  # left out: kept
    assert wordings[2].apply(h).outcome.questions[0].text.startswith("Was a price agreed")


def test_load_wordings_names_the_file_the_wording_and_the_path(tmp_path):
    h = _priced_mug()
    path = tmp_path / "bad.yaml"
    path.write_text(
        "- scenario: Two persons haggle over a mug that normally costs $10.\n"
        "- agents.bob.goal: Win.\n"
        "  scenario: Two persons haggle over a mug.\n",
        encoding="utf-8",
    )
    with pytest.raises(InputError) as caught:
        load_wordings(path, h)
    message = str(caught.value)
    assert message.startswith(f"{path}: ")
    assert "wording 2, agents.bob.goal: unknown path" in message
    assert "wording 2, scenario: the original says '$10'" in message
    assert "wording 1" not in message


def test_load_wordings_refuses_a_file_that_is_not_a_list(tmp_path):
    path = tmp_path / "map.yaml"
    path.write_text("scenario: Two persons haggle.\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected a list of wordings"):
        load_wordings(path, load_example("mug"))
    path.write_text("- scenario: [not, text]\n", encoding="utf-8")
    with pytest.raises(InputError, match="wording 1: expected a mapping from paths to texts"):
        load_wordings(path, load_example("mug"))
