"""Derived variables a hypothesis file declares: safe arithmetic over the treatments.

A derived variable is a named expression over the study's causes, e.g. the auction's
``second_highest_budget: second_largest(budget_1, budget_2, budget_3)``. It becomes a column
of the analysis table (:func:`derived_columns`), an alternative model's cause in the fit
and, named by the hypothesis' ``theory``, a theory's prediction of the outcome
(:func:`theory_column`). Nothing is keyed on a study's name: renaming a cause without
updating an expression is refused when the file is read, naming the field.

The expression language is deliberately tiny and is never passed to ``eval``: it is parsed
with :mod:`ast` and only these nodes are allowed: numbers, names (the causes), ``+ - * /
**``, unary ``-``/``+``, parentheses and calls of :data:`FUNCTIONS`:

* ``min(a, b, ...)``, ``max(...)``, ``mean(...)``, ``median(...)``: row by row across the
  arguments; ``abs(a)``;
* ``nth_largest(k, a, b, ...)``: the k-th largest argument (k a whole-number literal,
  1 = largest); ``second_largest(a, b, ...)`` is ``nth_largest(2, a, b, ...)``.

Evaluation is vectorised over a table's columns with NumPy in float64 (so ``10 ** 400`` is
``inf``, not a huge integer); a missing input gives a missing result.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterable, Mapping
from typing import TYPE_CHECKING, Any

import numpy as np

from silicolab.core.errors import InputError

if TYPE_CHECKING:
    import pandas as pd

    from silicolab.studies.hypothesis import Hypothesis

MAX_LENGTH = 500
_BINARY: dict[type, Callable[[Any, Any], Any]] = {
    ast.Add: np.add,
    ast.Sub: np.subtract,
    ast.Mult: np.multiply,
    ast.Div: np.divide,
    ast.Pow: np.power,
}
_UNARY: dict[type, Callable[[Any], Any]] = {ast.USub: np.negative, ast.UAdd: np.positive}


def _rowwise(reduce: Callable[..., Any]) -> Callable[..., Any]:
    def apply(*args: Any) -> Any:
        return reduce(np.stack(np.broadcast_arrays(*args)), axis=0)

    return apply


def _nth_largest(k: Any, *args: Any) -> Any:
    stacked = np.stack(np.broadcast_arrays(*args)).astype(float)
    out = np.sort(stacked, axis=0)[-int(k)]
    return np.where(np.isnan(stacked).any(axis=0), np.nan, out)


#: Function name -> (implementation, minimum arguments, maximum arguments or None).
FUNCTIONS: dict[str, tuple[Callable[..., Any], int, int | None]] = {
    "min": (_rowwise(np.min), 1, None),
    "max": (_rowwise(np.max), 1, None),
    "mean": (_rowwise(np.mean), 1, None),
    "median": (_rowwise(np.median), 1, None),
    "abs": (np.abs, 1, 1),
    "nth_largest": (_nth_largest, 2, None),
    "second_largest": (lambda *a: _nth_largest(2, *a), 2, None),
}


def _check_call(node: ast.Call) -> None:
    if not isinstance(node.func, ast.Name) or node.func.id not in FUNCTIONS:
        called = node.func.id if isinstance(node.func, ast.Name) else ast.unparse(node.func)
        raise ValueError(
            f"{called!r} is not an allowed function; use one of {', '.join(FUNCTIONS)}"
        )
    name = node.func.id
    if node.keywords or any(isinstance(a, ast.Starred) for a in node.args):
        raise ValueError(f"{name}() takes plain positional arguments only")
    _, low, high = FUNCTIONS[name]
    count = len(node.args)
    if count < low or (high is not None and count > high):
        wanted = f"exactly {low}" if high == low else f"at least {low}"
        raise ValueError(f"{name}() takes {wanted} argument(s), got {count}")
    if name == "nth_largest":
        k = node.args[0]
        value = k.value if isinstance(k, ast.Constant) else None
        if type(value) is not int or not 1 <= value <= count - 1:
            raise ValueError(
                "nth_largest(k, a, b, ...) needs k as a whole number from 1 to the number of "
                f"values ({count - 1}), e.g. nth_largest(2, a, b, c)"
            )


def _check_node(node: ast.AST) -> None:
    if isinstance(node, ast.Constant):
        if type(node.value) not in (int, float):
            raise ValueError(f"{node.value!r} is not a number; only numbers and names are allowed")
    elif isinstance(node, ast.Name):
        if node.id in FUNCTIONS:
            raise ValueError(f"{node.id!r} is a function; call it, e.g. {node.id}(a, b)")
    elif isinstance(node, ast.BinOp):
        if type(node.op) not in _BINARY:
            raise ValueError(f"operator {ast.unparse(node)!r} is not allowed; use + - * / **")
    elif isinstance(node, ast.UnaryOp):
        if type(node.op) not in _UNARY:
            raise ValueError(f"operator in {ast.unparse(node)!r} is not allowed; use - or +")
    elif isinstance(node, ast.Call):
        _check_call(node)
    elif not isinstance(node, ast.Expression | ast.Load | ast.operator | ast.unaryop):
        raise ValueError(
            f"{ast.unparse(node) if isinstance(node, ast.expr) else type(node).__name__!r} is "
            "not allowed; use numbers, cause names, + - * / **, parentheses and "
            f"{', '.join(FUNCTIONS)}"
        )


def parse_expression(text: str) -> ast.Expression:
    """The parsed, checked expression, or a ``ValueError`` saying what is wrong."""
    if not isinstance(text, str) or not text.strip():
        raise ValueError("the expression is empty; write e.g. 'second_largest(a, b, c)'")
    if len(text) > MAX_LENGTH:
        raise ValueError(f"the expression is longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text.strip(), mode="eval")
    except SyntaxError as exc:
        raise ValueError(f"{text.strip()!r} is not a valid expression ({exc.msg})") from None
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if id(node) not in called:  # a call's function is checked with its call
            _check_node(node)
    return tree


def expression_names(text: str) -> list[str]:
    """The variable names ``text`` uses, in order of first use (function names excluded)."""
    tree = parse_expression(text)
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    names = [n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and id(n) not in called]
    return list(dict.fromkeys(names))


def check_names(text: str, allowed: Iterable[str]) -> None:
    """A ``ValueError`` when ``text`` uses a name outside ``allowed``."""
    allowed = list(allowed)
    unknown = [n for n in expression_names(text) if n not in allowed]
    if unknown:
        raise ValueError(
            f"{', '.join(map(repr, unknown))} in {text.strip()!r} is not a cause of this study; "
            f"the expression can use {allowed} (rename it there too if you renamed a cause)"
        )


def _evaluate(node: ast.AST, columns: Mapping[str, Any]) -> Any:
    if isinstance(node, ast.Expression):
        return _evaluate(node.body, columns)
    if isinstance(node, ast.Constant):
        return np.float64(node.value)  # type: ignore[arg-type]  # a number: checked
    if isinstance(node, ast.Name):
        return np.asarray(columns[node.id], dtype=float)
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_evaluate(node.left, columns), _evaluate(node.right, columns))
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_evaluate(node.operand, columns))
    assert isinstance(node, ast.Call) and isinstance(node.func, ast.Name)  # parse checked it
    function = FUNCTIONS[node.func.id][0]
    if node.func.id == "nth_largest":
        first = node.args[0]
        assert isinstance(first, ast.Constant)
        return function(first.value, *(_evaluate(a, columns) for a in node.args[1:]))
    return function(*(_evaluate(a, columns) for a in node.args))


def evaluate(text: str, columns: Mapping[str, Any]) -> np.ndarray:
    """``text`` evaluated row by row over ``columns`` (name -> equal-length numbers)."""
    check_names(text, columns)
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        value = _evaluate(parse_expression(text), columns)
    size = len(next(iter(columns.values()))) if columns else 1
    return np.broadcast_to(np.asarray(value, dtype=float), (size,)).copy()


def derived_columns(hypothesis: Hypothesis, table: pd.DataFrame) -> pd.DataFrame:
    """``table`` plus one column per derived variable of ``hypothesis``."""
    if not hypothesis.derived:
        return table
    used = {n for d in hypothesis.derived for n in expression_names(d.expression)}
    missing = sorted(used - set(map(str, table.columns)))
    if missing:
        raise InputError(
            f"the table has no column for {missing}, which the derived variables "
            f"{[d.name for d in hypothesis.derived]} use; fit the table of this hypothesis"
        )
    columns = {name: table[name].to_numpy(dtype=float) for name in used}
    values = {d.name: evaluate(d.expression, columns) for d in hypothesis.derived}
    return table.assign(**values)


def theory_column(hypothesis: Hypothesis, table: pd.DataFrame) -> pd.Series | None:
    """The theory's prediction of the outcome per row (the derived variable that
    ``hypothesis.theory`` names), or ``None`` when the hypothesis declares no theory."""
    if hypothesis.theory is None:
        return None
    return derived_columns(hypothesis, table)[hypothesis.theory].rename(hypothesis.theory)


__all__ = [
    "FUNCTIONS",
    "check_names",
    "derived_columns",
    "evaluate",
    "expression_names",
    "parse_expression",
    "theory_column",
]
