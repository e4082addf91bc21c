"""Derived variables declared in the hypothesis file: the safe evaluator, validation with
file, line and field, and the lookups that used to be keyed on a study's name."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from silicolab.core.errors import InputError
from silicolab.studies import load_example, read_hypothesis, write_hypothesis
from silicolab.studies.derived import (
    derived_columns,
    evaluate,
    expression_names,
    parse_expression,
    theory_column,
)
from silicolab.studies.rule_worlds import RULE_WORLDS, auction_world, rule_world


@pytest.fixture
def columns() -> dict[str, np.ndarray]:
    gen = np.random.default_rng(5)
    return {name: gen.normal(size=50) * 100 for name in ("a", "b", "c", "d")}


def test_functions_and_arithmetic_match_numpy(columns: dict[str, np.ndarray]) -> None:
    a, b, c, d = (columns[k] for k in "abcd")
    stacked = np.vstack([a, b, c, d])
    ordered = np.sort(stacked, axis=0)
    cases = {
        "a + b * c - d / 4": a + b * c - d / 4,
        "(a + b) * -c": (a + b) * -c,
        "abs(a) ** 0.5 + 2 ** 3": np.abs(a) ** 0.5 + 8,
        "min(a, b, c, d)": stacked.min(axis=0),
        "max(a, b)": np.maximum(a, b),
        "mean(a, b, c)": (a + b + c) / 3,
        "median(a, b, c, d)": np.median(stacked, axis=0),
        "nth_largest(1, a, b, c, d)": ordered[-1],
        "nth_largest(3, a, b, c, d)": ordered[-3],
        "second_largest(a, b, c, d)": ordered[-2],
        "max(a, 0) - min(b, 0)": np.maximum(a, 0) - np.minimum(b, 0),
        "7": np.full(50, 7.0),
    }
    for text, expected in cases.items():
        assert np.allclose(evaluate(text, columns), expected), text


def test_numbers_are_floats_and_missing_values_propagate() -> None:
    values = {"a": np.array([1.0, np.nan, 3.0]), "b": np.array([0.0, 2.0, 5.0])}
    assert np.isnan(evaluate("second_largest(a, b)", values)).tolist() == [False, True, False]
    assert evaluate("second_largest(a, b)", values)[[0, 2]].tolist() == [0.0, 3.0]
    assert np.isinf(evaluate("a / b", values)[0])  # no ZeroDivisionError
    assert np.isinf(evaluate("10 ** 400 + a", values)[0])  # float64, never a huge integer


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("__import__('os').system('true')", "not an allowed function"),
        ("a.real", "not allowed"),
        ("a[0]", "not allowed"),
        ("(lambda: 1)()", "not an allowed function"),
        ("a if b else c", "not allowed"),
        ("a // 2", "operator"),
        ("a == b", "not allowed"),
        ("not a", "operator"),
        ("'a'", "not a number"),
        ("True + a", "not a number"),
        ("sorted(a)", "not an allowed function"),
        ("min", "is a function"),
        ("nth_largest(k, a, b)", "whole number"),
        ("nth_largest(3, a, b)", "whole number"),
        ("nth_largest(1.0, a, b)", "whole number"),
        ("abs(a, b)", "exactly 1"),
        ("second_largest(a)", "at least 2"),
        ("max(a, key=b)", "positional"),
        ("max(*a)", "positional"),
        ("a +", "not a valid expression"),
        ("", "empty"),
        ("a; b", "not a valid expression"),
    ],
)
def test_disallowed_expressions_are_refused(text: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        parse_expression(text)


def test_names_used() -> None:
    assert expression_names("second_largest(b, a, b) + max(c, 1)") == ["b", "a", "c"]
    with pytest.raises(ValueError, match="'z' in"):
        evaluate("a + z", {"a": np.ones(2)})


def test_auction_declares_its_derived_variable_theory_and_world() -> None:
    auction = load_example("auction")
    assert [d.name for d in auction.derived] == ["second_highest_budget"]
    assert auction.theory == "second_highest_budget" and auction.rule_world == "english_auction"
    gen = np.random.default_rng(0)
    budgets = gen.choice([50.0, 100.0, 150.0, 350.0], size=(30, 3))
    table = pd.DataFrame(budgets, columns=["budget_1", "budget_2", "budget_3"])
    table["final_price"] = 1.0
    out = derived_columns(auction, table)
    assert list(out.columns) == [*table.columns, "second_highest_budget"]
    expected = np.sort(budgets, axis=1)[:, 1]
    assert out.second_highest_budget.tolist() == expected.tolist()
    theory = theory_column(auction, table)
    assert theory is not None and theory.name == "second_highest_budget"
    assert theory.tolist() == expected.tolist()
    mug = load_example("mug")  # no new fields: defaults
    assert mug.derived == [] and mug.theory is None and mug.rule_world is None
    assert theory_column(mug, table) is None and derived_columns(mug, table) is table


def _auction_file(tmp_path, old: str, new: str):
    path = write_hypothesis(load_example("auction"), tmp_path / "auction.yaml")
    text = path.read_text()
    assert old in text, old
    path.write_text(text.replace(old, new))
    lines = path.read_text().splitlines()
    return path, lines


def _line_of(lines: list[str], needle: str) -> int:
    return next(i for i, text in enumerate(lines, start=1) if needle in text)


@pytest.mark.parametrize(
    ("new", "message"),
    [
        ("second_largest(budget_1, budget_2, budget_4)", "'budget_4' in"),
        ("second_largest(budget_1, budget_2,, budget_3)", "not a valid expression"),
        ("budget_1.__class__", "not allowed"),
        ("open(budget_1)", "not an allowed function"),
    ],
)
def test_bad_expression_names_file_line_and_field(tmp_path, new: str, message: str) -> None:
    old = "second_largest(budget_1, budget_2, budget_3)"
    path, lines = _auction_file(tmp_path, old, new)
    with pytest.raises(InputError) as err:
        read_hypothesis(path)
    text = str(err.value)
    assert str(path) in text
    assert f"line {_line_of(lines, 'expression:')}" in text
    assert "field derived[0](second_highest_budget).expression" in text
    assert message in text


def test_renaming_a_cause_without_the_expression_is_refused_at_load(tmp_path) -> None:
    path = write_hypothesis(load_example("auction"), tmp_path / "auction.yaml")
    text = path.read_text()
    assert text.count("- budget_1\n") == 1 and text.count("name: budget_1\n") == 1
    renamed = text.replace("- budget_1\n", "- budget_a\n").replace(
        "name: budget_1\n", "name: budget_a\n"
    )
    path.write_text(renamed)
    with pytest.raises(InputError) as err:
        read_hypothesis(path)
    message = str(err.value)
    line = _line_of(renamed.splitlines(), "expression:")
    assert f"line {line}, field derived[0](second_highest_budget).expression" in message
    assert "'budget_1'" in message and "budget_a" in message  # the unknown name, the choices


def test_theory_and_derived_names_are_checked(tmp_path) -> None:
    path, lines = _auction_file(tmp_path, "theory: second_highest_budget", "theory: highest_budget")
    with pytest.raises(InputError) as err:
        read_hypothesis(path)
    assert f"line {_line_of(lines, 'theory:')}, field theory:" in str(err.value)
    path, _ = _auction_file(tmp_path, "name: second_highest_budget", "name: budget_2")
    with pytest.raises(InputError, match=r"field derived\[0\]\(budget_2\)\.name"):
        read_hypothesis(path)


def test_rule_world_is_looked_up_by_the_hypothesis_field_not_the_name() -> None:
    assert {"english_auction": auction_world} == RULE_WORLDS
    renamed = load_example("auction").model_copy(update={"name": "gallery_sale"})
    assert rule_world(renamed) is auction_world
    nameless = load_example("auction").model_copy(update={"rule_world": None})
    with pytest.raises(InputError, match="has no rule-based subjects"):
        rule_world(nameless)
    unknown = load_example("auction").model_copy(update={"rule_world": "dutch_auction"})
    with pytest.raises(InputError, match=r"'dutch_auction'.*english_auction"):
        rule_world(unknown)
