"""The hypothesis model, its editable file (errors naming field and line), the design and
the aggregation rules."""

from __future__ import annotations

import statistics

import pytest

from silicolab.core.errors import InputError
from silicolab.studies import (
    EXAMPLES,
    load_example,
    make_design,
    read_hypothesis,
    write_hypothesis,
)
from silicolab.studies.aggregate import AGGREGATIONS, aggregate
from silicolab.studies.design import condition_id


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_built_in_examples_have_the_papers_design_sizes(name):
    hypothesis = load_example(name)
    design = make_design(hypothesis)
    assert len(design.conditions) == EXAMPLES[name] == design.full_size
    assert len({c.id for c in design.conditions}) == EXAMPLES[name]
    # every condition is one cell of the factorial, in factorial order
    assert [c.index for c in design.conditions] == list(range(EXAMPLES[name]))


def test_numeric_coding_of_treatments():
    mug = load_example("mug")
    budget = mug.variable("buyer_budget")
    attachment = mug.variable("seller_attachment")
    assert budget.numeric("$25") == 25.0
    assert attachment.numeric("no emotional attachment") == 1.0
    assert attachment.numeric("extreme emotional attachment") == 5.0
    lawyer = load_example("lawyer")
    assert lawyer.variable("passed_bar").numeric("passed") == 1.0


def test_file_round_trip(tmp_path):
    for name in EXAMPLES:
        path = write_hypothesis(load_example(name), tmp_path / f"{name}.yaml")
        assert read_hypothesis(path) == load_example(name)
    json_path = write_hypothesis(load_example("auction"), tmp_path / "auction.json")
    assert read_hypothesis(json_path) == load_example("auction")


def _edit(tmp_path, old: str, new: str, count: int = 1):
    path = write_hypothesis(load_example("mug"), tmp_path / "mug.yaml")
    text = path.read_text()
    assert old in text
    path.write_text(text.replace(old, new, count))
    return path, path.read_text().splitlines()


def test_unknown_type_names_field_and_line(tmp_path):
    path, lines = _edit(tmp_path, "type: continuous", "type: contiuous")
    line = next(i for i, text in enumerate(lines, start=1) if "contiuous" in text)
    with pytest.raises(InputError) as err:
        read_hypothesis(path)
    message = str(err.value)
    assert f"line {line}" in message
    assert "variables[1](buyer_budget).type" in message
    assert "contiuous" in message or "continuous" in message


def test_treatment_level_outside_its_type(tmp_path):
    path, _ = _edit(tmp_path, "- $25", "- twenty-five")
    with pytest.raises(InputError, match=r"buyer_budget.*must each state one number"):
        read_hypothesis(path)


def test_unknown_protocol_and_empty_scenario(tmp_path):
    path, _ = _edit(tmp_path, "protocol: ordered", "protocol: round_robin")
    with pytest.raises(InputError, match=r"field protocol"):
        read_hypothesis(path)
    path, _ = _edit(tmp_path, "scenario: Two people bargaining over a mug.", "scenario: ''")
    with pytest.raises(InputError, match=r"field scenario: .*sentence"):
        read_hypothesis(path)


def test_typo_in_a_key_is_an_error_not_ignored(tmp_path):
    path, _ = _edit(tmp_path, "aggregation: mean", "agregation: mean")
    with pytest.raises(InputError, match=r"agregation"):
        read_hypothesis(path)


def test_broken_yaml_and_missing_file(tmp_path):
    bad = tmp_path / "bad.yaml"
    bad.write_text("scenario: [unclosed\nagents: 3\n")
    with pytest.raises(InputError, match=r"bad.yaml line \d+: not valid YAML"):
        read_hypothesis(bad)
    with pytest.raises(InputError, match="does not exist"):
        read_hypothesis(tmp_path / "nope.yaml")


def test_condition_ids_stable_under_edits_that_keep_treatments():
    mug = load_example("mug")
    reworded = mug.model_copy(
        update={"agents": [a.model_copy(update={"goal": "Something else."}) for a in mug.agents]}
    )
    assert [c.id for c in make_design(mug).conditions] == [
        c.id for c in make_design(reworded).conditions
    ]
    assert condition_id({"a": "1", "b": "2"}) == condition_id({"b": "2", "a": "1"})


def test_random_subset_is_seeded_and_bounded():
    mug = load_example("mug")
    a = make_design(mug, conditions=40, seed=3)
    b = make_design(mug, conditions=40, seed=3)
    c = make_design(mug, conditions=40, seed=4)
    assert [x.id for x in a.conditions] == [x.id for x in b.conditions]
    assert [x.id for x in a.conditions] != [x.id for x in c.conditions]
    assert len(a.conditions) == 40 and a.kind == "random_subset"
    full = {x.id for x in make_design(mug).conditions}
    assert {x.id for x in a.conditions} <= full
    with pytest.raises(InputError, match="above max_conditions=100"):
        make_design(mug, max_conditions=100)


@pytest.mark.parametrize("rule", AGGREGATIONS)
def test_aggregation_rules_match_statistics(rule):
    values = [3.0, None, 1.0, 4.0, 1.0, 5.0]
    present = [v for v in values if v is not None]
    expected = {
        "min": min(present),
        "max": max(present),
        "mean": statistics.fmean(present),
        "median": statistics.median(present),
        "sum": sum(present),
        "mode": statistics.mode(present),
    }[rule]
    assert aggregate(values, rule) == expected
    assert aggregate([None, None], rule) is None


def test_nominal_aggregation_only_by_mode():
    assert aggregate(["red", "blue", "red"], "mode", "nominal") == "red"
    with pytest.raises(InputError, match="only be combined by 'mode'"):
        aggregate(["red", "blue"], "mean", "nominal")
