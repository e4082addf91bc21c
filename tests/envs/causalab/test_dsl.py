"""Tests of the CausaLab DSL: extraction (§5.2), validation and repair (§5.4), state (§5.2)."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from silicolab.core.errors import InputError
from silicolab.envs.causalab.dsl import (
    DSLState,
    Hypothesis,
    extract_json,
    normalize_name,
    parse_record,
    repair_message,
)
from silicolab.envs.causalab.dsl._state import HISTORY_CHARS, STATE_FIELD_CHARS
from silicolab.envs.causalab.suite import TARGET

PROPS = ["quantumSize", "density", "moisture"]
VARIABLES = [TARGET, *PROPS]


def good_record(**changes: Any) -> dict[str, Any]:
    """A valid record for the 4nodes_0 graph; ``changes`` override hypothesis keys."""
    hypothesis: dict[str, Any] = {
        "edges": [
            {"from": "density", "to": TARGET},
            {"from": "moisture", "to": TARGET},
            {"from": "density", "to": "quantumSize"},
        ],
        "freq_equation": f"{TARGET} = base + c_density*density + c_moisture*moisture",
        "coefficients": {"base": 25, "c_density": 1, "c_moisture": None},
    }
    hypothesis.update(changes)
    return {
        "memory": "two observations so far",
        "thought": "moisture's weight is unknown; intervene on it",
        "past_data": [{"id": "1/2", "props": {"density": 14, "moisture": 3}, "freq": 42.0}],
        "hypothesis": hypothesis,
        "experiment": {"target_prop": "moisture", "target_value": 50},
        "action": "TALK",
        "arg1": "manipulator-uuid",
    }


def parse(record: dict[str, Any], family: str = "linear"):
    return parse_record(json.dumps(record), variables=VARIABLES, family=family)


# -- extraction -----------------------------------------------------------------------------


def test_extract_prefers_first_json_fence_after_think() -> None:
    text = '<think>maybe {"a": 0}</think> Here:\n```json\n{"a": 1}\n```\nand ```json\n{"a": 2}\n```'
    assert extract_json(text) == {"a": 1}


def test_extract_partial_fence_whole_text_and_last_balanced() -> None:
    assert extract_json('```json\n{"a": 1, "b": [1, 2]}\n') == {"a": 1, "b": [1, 2]}
    assert extract_json('  {"a": 3}  ') == {"a": 3}
    assert extract_json('I think {"a": 1} but finally {"b": {"c": 2}} ok') == {"b": {"c": 2}}
    assert extract_json("no json here") is None
    assert extract_json("[1, 2]") is None


def test_extract_handles_unopened_think_close() -> None:
    assert extract_json('reasoning {"x": 1} </think>{"y": 2}') == {"y": 2}


def test_broken_json_gives_a_decode_error() -> None:
    outcome = parse_record('```json\n{"memory": "x",, }\n```', variables=VARIABLES)
    assert outcome.record is None and outcome.raw_json is None
    assert "could not be decoded" in outcome.errors[0]
    assert "no JSON object" in parse_record("hello", variables=VARIABLES).errors[0]


# -- valid records --------------------------------------------------------------------------


def test_valid_record_parses() -> None:
    outcome = parse(good_record())
    assert outcome.ok and outcome.errors == [] and outcome.warnings == []
    record = outcome.record
    assert record.action == {"action": "TALK", "arg1": "manipulator-uuid"}
    assert record.hypothesis.parents() == ("density", "moisture")
    assert record.hypothesis.coefficients == {"base": 25.0, "c_density": 1.0, "c_moisture": None}
    assert record.experiment["target_prop"] == "moisture"


def test_alias_names_bare_expression_and_caret() -> None:
    record = good_record(
        edges=[{"from": "density", "to": "Resonance_Frequency"}],
        freq_equation="base + c_density * density ^ 1",
        coefficients={"base": 20, "c_density": 2},
    )
    outcome = parse(record)
    assert outcome.ok, outcome.errors
    h = outcome.record.hypothesis
    assert h.edges == (("density", TARGET),)
    assert h.freq_equation == f"{TARGET} = base + c_density * density ** 1"
    assert h.predict({"density": 10}) == 40.0


def test_quadratic_family_names() -> None:
    record = good_record(
        edges=[{"from": "density", "to": TARGET}],
        freq_equation=f"{TARGET} = base + c_density_1*density^2 + c_density_2*density",
        coefficients={"base": 100, "c_density_1": 0.01, "c_density_2": -1},
    )
    outcome = parse(record, family="quadratic")
    assert outcome.ok, outcome.errors
    assert outcome.record.hypothesis.predict({"density": 50}) == pytest.approx(75.0)
    linear = parse(record)
    assert any("quadratic naming" in e for e in linear.errors)


def test_repairable_warnings_do_not_block() -> None:
    record = good_record(coefficients={"base": "25", "c_density": "1.5", "c_moisture": None})
    record["value_note"] = "extra key"
    record = {"thought": record.pop("thought"), **record}  # wrong key order
    record["past_data"].append({"id": "2/2", "props": "oops"})
    outcome = parse(record)
    assert outcome.ok, outcome.errors
    text = " | ".join(outcome.warnings)
    for fragment in ("order", "'value_note'", "'c_density' was the string", "entry 2"):
        assert fragment in text
    assert outcome.record.hypothesis.coefficients["c_density"] == 1.5


def test_other_action_forms() -> None:
    for fields, expected in (
        ({"chosen_dialog_option_int": 2}, {"chosen_dialog_option_int": 2}),
        ({"chosen_dialog_option_int": "3"}, {"chosen_dialog_option_int": 3}),
        ({"value": 50}, {"value": 50}),
        ({"value": "12.5"}, {"value": 12.5}),
    ):
        record = good_record()
        del record["action"], record["arg1"]
        record.update(fields)
        outcome = parse(record)
        assert outcome.ok, outcome.errors
        assert outcome.record.action == expected


def test_empty_hypothesis_is_valid_and_empty_equation_only_warns() -> None:
    outcome = parse(good_record(edges=[], freq_equation="", coefficients={}))
    assert outcome.ok and outcome.record.hypothesis == Hypothesis.EMPTY
    outcome = parse(good_record(freq_equation="", coefficients={}))
    assert outcome.ok and any("freq_equation is empty" in w for w in outcome.warnings)


# -- invalid records: (description, mutation, expected error fragment) ---------------------


def _drop(key: str):
    def mutate(r: dict) -> None:
        del r[key]

    return mutate


def _hyp(**changes: Any):
    def mutate(r: dict) -> None:
        r["hypothesis"].update(changes)

    return mutate


def _edges(*pairs: tuple[Any, Any]):
    return _hyp(edges=[{"from": a, "to": b} for a, b in pairs])


def _set(key: str, value: Any):
    def mutate(r: dict) -> None:
        r[key] = value

    return mutate


def _no_action(r: dict) -> None:
    del r["action"], r["arg1"]


BAD = [
    ("missing key", _drop("past_data"), "missing the key(s) past_data"),
    ("no action", _no_action, "the reply has no action"),
    ("two action forms", _set("value", 3), "mixes the action forms 'action' and 'value'"),
    ("bad dialog option", _set("chosen_dialog_option_int", 1.5), "chosen_dialog_option_int"),
    ("empty action", _set("action", ""), '"action" must be a non-empty string'),
    ("hypothesis not object", _set("hypothesis", "a -> b"), "hypothesis must be an object"),
    ("past_data not list", _set("past_data", {}), "past_data must be a list"),
    ("experiment not object", _set("experiment", "none"), "experiment must be an object"),
    (
        "misspelt node",
        _edges(("densty", TARGET)),
        "edge 1 names 'densty', which is not a declared property (did you mean 'density'?)",
    ),
    ("wrong case", _edges(("Density", TARGET)), "names are case-sensitive"),
    ("self loop", _edges(("density", "density")), "edge 1 is a self-loop"),
    (
        "duplicate",
        _edges(("density", TARGET), ("moisture", TARGET), ("density", TARGET)),
        "edge 3 repeats density -> resonanceFreq (edge 1)",
    ),
    (
        "cycle",
        _edges(
            ("density", TARGET),
            ("moisture", TARGET),
            ("density", "moisture"),
            ("moisture", "density"),
        ),
        "directed cycle",
    ),
    ("edge not object", _hyp(edges=[["density", TARGET]]), 'edge 1 must be an object {"from"'),
    ("equation not string", _hyp(freq_equation=3), "freq_equation must be a string"),
    (
        "wrong lhs",
        _hyp(freq_equation="y = base + c_density*density + c_moisture*moisture"),
        "left-hand side is 'y'",
    ),
    ("two equals", _hyp(freq_equation="a = b = c"), "more than one '='"),
    ("syntax", _hyp(freq_equation="base + c_density density"), "not a valid arithmetic expression"),
    (
        "function call",
        _hyp(freq_equation="base + c_density*density + c_moisture*abs(moisture)"),
        "no function calls",
    ),
    (
        "unknown name",
        _hyp(freq_equation="base + k*density + c_moisture*moisture"),
        "uses the name 'k'",
    ),
    (
        "bad coefficient name",
        _hyp(freq_equation="base + c_dens*density + c_moisture*moisture"),
        "coefficient 'c_dens' refers to 'dens'",
    ),
    (
        "target on rhs",
        _hyp(freq_equation="base + c_density*density + c_moisture*moisture + freq"),
        "cannot depend on itself",
    ),
    (
        "term without edge",
        _hyp(
            freq_equation="base + c_density*density + c_moisture*moisture"
            " + c_quantumSize*quantumSize",
            coefficients={"base": 1, "c_density": 1, "c_moisture": 1, "c_quantumSize": 1},
        ),
        "uses 'quantumSize', but edges contain no edge quantumSize -> resonanceFreq",
    ),
    (
        "edge without term",
        _hyp(freq_equation="base + c_density*density", coefficients={"base": 1, "c_density": 1}),
        "edges list moisture -> resonanceFreq, but freq_equation has no moisture term",
    ),
    (
        "missing coefficient",
        _hyp(coefficients={"base": 25, "c_density": 1}),
        "'c_moisture' is used in freq_equation but missing",
    ),
    (
        "extra coefficient",
        _hyp(coefficients={"base": 25, "c_density": 1, "c_moisture": 2, "c_ph": 3}),
        "'c_ph' = 3, but freq_equation does not use it",
    ),
    (
        "text coefficient",
        _hyp(coefficients={"base": 25, "c_density": "two", "c_moisture": 1}),
        "value 'two', which is not a number",
    ),
    (
        "bool coefficient",
        _hyp(coefficients={"base": 25, "c_density": True, "c_moisture": 1}),
        "which is a boolean",
    ),
    ("coefficients not object", _hyp(coefficients=[1, 2]), "coefficients must be an object"),
]


@pytest.mark.parametrize(("mutate", "fragment"), [b[1:] for b in BAD], ids=[b[0] for b in BAD])
def test_invalid_records(mutate, fragment: str) -> None:
    record = copy.deepcopy(good_record())
    mutate(record)
    outcome = parse(record)
    assert outcome.record is None
    assert outcome.raw_json == record
    assert any(fragment in e for e in outcome.errors), outcome.errors
    assert fragment.split("'")[0] in repair_message(outcome.errors)


def test_action_survives_hypothesis_errors() -> None:
    """§5.4 rule 7: after the retries the controller may still execute valid action fields."""
    record = good_record(coefficients={"base": 25, "c_density": "two", "c_moisture": 1})
    outcome = parse(record)
    assert outcome.record is None and outcome.action == {
        "action": "TALK",
        "arg1": "manipulator-uuid",
    }


def test_repair_message_lists_errors_and_asks_for_full_json() -> None:
    text = repair_message(["first problem", "second problem"])
    assert "1. first problem" in text and "2. second problem" in text
    assert "full corrected JSON" in text


def test_unknown_family_is_an_input_error() -> None:
    with pytest.raises(InputError):
        parse_record("{}", variables=VARIABLES, family="cubic")


# -- Hypothesis -------------------------------------------------------------------------------


def test_predict_and_graph() -> None:
    h = parse(good_record()).record.hypothesis
    assert h.predict({"density": 14, "moisture": 3}) is None  # c_moisture is null
    full = Hypothesis(h.edges, h.freq_equation, {**h.coefficients, "c_moisture": 1.0})
    assert full.predict({"density": 14, "moisture": 3, TARGET: 999}) == 42.0
    assert full.predict({"density": 14}) is None  # missing property
    assert full.graph().parents(TARGET) == ("density", "moisture")
    assert Hypothesis((("a", "b"), ("b", "a")), "", {}).graph() is None
    assert Hypothesis.EMPTY.predict({"density": 1}) is None
    assert Hypothesis((), f"{TARGET} = base / c_d", {"base": 1.0, "c_d": 0.0}).predict({}) is None


def test_predict_never_evaluates_code() -> None:
    h = Hypothesis((), "__import__('os').system('true')", {})
    assert h.predict({}) is None


def test_hypothesis_round_trip() -> None:
    h = parse(good_record()).record.hypothesis
    again = parse(good_record(**h.to_dict())).record.hypothesis
    assert again == h
    assert Hypothesis.from_dict(json.loads(json.dumps(h.to_dict()))) == h


def test_from_dict_is_lenient() -> None:
    h = Hypothesis.from_dict(
        {"edges": [{"from": "a", "to": "freq"}, "junk", ["b", "a"]], "coefficients": {"c_a": "x"}}
    )
    assert h.edges == (("a", TARGET), ("b", "a")) and h.coefficients == {"c_a": None}
    assert Hypothesis.from_dict(None) == Hypothesis.EMPTY


@given(
    base=st.integers(-100, 100),
    weights=st.lists(st.integers(1, 3), min_size=3, max_size=3),
    values=st.lists(st.integers(0, 100), min_size=3, max_size=3),
)
def test_predict_matches_linear_formula(base: int, weights: list[int], values: list[int]) -> None:
    terms = " + ".join(f"c_{p}*{p}" for p in PROPS)
    record = good_record(
        edges=[{"from": p, "to": TARGET} for p in PROPS],
        freq_equation=f"{TARGET} = base + {terms}",
        coefficients={"base": base, **{f"c_{p}": w for p, w in zip(PROPS, weights, strict=True)}},
    )
    h = parse(record).record.hypothesis
    props = dict(zip(PROPS, values, strict=True))
    assert h.predict(props) == base + sum(w * v for w, v in zip(weights, values, strict=True))


def test_normalize_name() -> None:
    for alias in ("freq", "Frequency", "resonance_freq", "resonance-frequency", "RESONANCE FREQ"):
        assert normalize_name(alias) == TARGET
    assert normalize_name("Density") == "Density"


# -- state carry-over -----------------------------------------------------------------------


def test_state_update_and_render() -> None:
    state = DSLState()
    record = parse(good_record()).record
    state.update(record)
    assert state.memory == record.memory and state.past_data == record.past_data
    assert state.hypothesis == record.hypothesis.to_dict()
    state.record_action({"action": "WAIT"})
    text = state.render()
    assert text.index('{"action": "WAIT"}') < text.index('"arg1": "manipulator-uuid"')
    assert "Previous State:" in text and "History of action-observations" in text


def test_state_truncation_and_history_budget() -> None:
    state = DSLState(memory="m" * 10_000)
    state.past_data = [{"id": str(i), "props": {"x": i}, "freq": i} for i in range(1000)]
    for i in range(2000):
        state.record_action({"action": "TALK", "arg1": f"obj-{i}"})
    text = state.render()
    memory_line = next(line for line in text.splitlines() if line.startswith("memory: "))
    assert memory_line.count("m") <= STATE_FIELD_CHARS + 2 and "[truncated]" in memory_line
    history = text.split("newest first):\n", 1)[1]
    assert len(history) <= HISTORY_CHARS
    assert history.splitlines()[0] == '{"action": "TALK", "arg1": "obj-1999"}'
    assert 'obj-0"' not in history


def test_unnamed_coefficient_and_late_action_key_warn() -> None:
    record = good_record(
        edges=[{"from": "density", "to": TARGET}], freq_equation="freq = 25 + 2*density"
    )
    record["hypothesis"]["coefficients"] = {}
    record = {"action": record.pop("action"), **record}
    outcome = parse(record)
    assert outcome.ok, outcome.errors
    assert outcome.record.hypothesis.predict({"density": 10}) == 45.0
    text = " | ".join(outcome.warnings)
    assert "then the action fields" in text and "no named coefficient" in text
