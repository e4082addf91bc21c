"""The frequency-equation grammar of the CausaLab DSL (spec §5.4 rule 3), parsed with ``ast``.

An equation is ``resonanceFreq = <expr>`` or a bare ``<expr>``. The expression may use only
``+ - * / **`` (``^`` is accepted and rewritten to ``**``), unary signs, parentheses, numbers
and identifiers. Identifiers are either *variables* (declared properties) or *coefficients*
(``base``, ``c_<var>``, and in the quadratic family ``c_<var>_1`` / ``c_<var>_2``). Each
term must also lie in the episode's declared family (linear or quadratic), checked by
:func:`~silicolab.envs.causalab.dsl._family.family_errors`.

The expression is never passed to ``eval``: :func:`evaluate` walks the checked AST, so an
LLM-written string can only ever do arithmetic.
"""

from __future__ import annotations

import ast
import difflib
import math
import operator
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from silicolab.envs.causalab.dsl._family import family_errors
from silicolab.envs.causalab.suite import TARGET

_BINARY: dict[type[ast.operator], Callable[[float, float], float]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.Pow: operator.pow,
}
_UNARY: dict[type[ast.unaryop], Callable[[float], float]] = {
    ast.UAdd: operator.pos,
    ast.USub: operator.neg,
}
_FREQ_ALIASES = frozenset(
    {"freq", "frequency", "resonancefreq", "resonancefrequency", "resonancefrequency(hz)"}
)


def normalize_name(name: str) -> str:
    """Map the frequency aliases to ``TARGET``; return every other name unchanged.

    ``freq``, ``frequency``, ``resonanceFrequency``, ``resonance_freq`` (any case, ignoring
    spaces, underscores and hyphens) and the display name ``Resonance Frequency (Hz)`` are
    aliases (spec §5.1). Other names are matched exactly and case-sensitively, as the
    original scorer does, so ``Density`` is *not* ``density``.
    """
    text = str(name)
    compact = "".join(ch for ch in text if not ch.isspace() and ch not in "_-").lower()
    return TARGET if compact in _FREQ_ALIASES else text


def suggest(name: str, choices: Sequence[str]) -> str:
    """A ``" (did you mean 'x'?)"`` hint for a misspelt name, or ``""``."""
    lowered = {c.lower(): c for c in choices}
    if name.lower() in lowered:
        return f" (did you mean {lowered[name.lower()]!r}? names are case-sensitive)"
    close = difflib.get_close_matches(name, list(choices), n=1, cutoff=0.6)
    return f" (did you mean {close[0]!r}?)" if close else ""


@dataclass(frozen=True)
class Equation:
    """A checked right-hand side: its AST plus the identifiers it uses, by role."""

    expr: str
    tree: ast.Expression
    variables: frozenset[str]
    coefficients: frozenset[str]


def split_equation(text: str) -> tuple[str | None, str, list[str]]:
    """Split ``lhs = rhs`` (``^`` -> ``**``). Returns (lhs or None, rhs, errors)."""
    text = text.replace("^", "**")
    parts = text.split("=")
    if len(parts) > 2:
        message = (
            f"freq_equation {text!r} contains more than one '='; write it as "
            f"'{TARGET} = base + c_X*X + ...'"
        )
        return None, text, [message]
    if len(parts) == 1:
        return None, parts[0].strip(), []
    return parts[0].strip(), parts[1].strip(), []


def _error(message: str) -> tuple[str, str | None, str | None]:
    return "error", None, message


def classify(
    name: str, properties: Sequence[str], family: str
) -> tuple[str, str | None, str | None]:
    """Classify one identifier as ``("variable", name)``, ``("coefficient", var-or-None)``
    or an error. Returns (kind, variable, error); ``variable`` is the property a coefficient
    belongs to (None for ``base``)."""
    if name in properties:
        return "variable", name, None
    if name == "base":
        return "coefficient", None, None
    if normalize_name(name) == TARGET:
        return _error(
            f"freq_equation uses {name!r} on the right-hand side; the frequency cannot depend "
            "on itself, so remove that term"
        )
    allowed = "'base' or 'c_<property>'"
    if family == "quadratic":
        allowed = "'base', 'c_<property>_1' (squared term) or 'c_<property>_2' (linear term)"
    if name.startswith("c_"):
        rest = name[2:]
        if rest in properties:
            return "coefficient", rest, None
        if rest[-2:] in ("_1", "_2") and rest[:-2] in properties:
            if family == "quadratic":
                return "coefficient", rest[:-2], None
            return _error(
                f"coefficient {name!r} uses the quadratic naming, but this task is linear; "
                f"name it 'c_{rest[:-2]}'"
            )
        return _error(
            f"coefficient {name!r} refers to {rest!r}, which is not a declared property"
            f"{suggest(rest, properties)}; coefficients must be named {allowed}; the "
            f"properties are: {', '.join(properties)}"
        )
    return _error(
        f"freq_equation uses the name {name!r}, which is neither a declared property nor a "
        f"coefficient{suggest(name, properties)}; use property names "
        f"({', '.join(properties)}) and coefficients named {allowed}"
    )


def _check_nodes(tree: ast.AST, expr: str) -> list[str]:
    errors: list[str] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Expression | ast.Name | ast.Load | ast.operator | ast.unaryop):
            continue
        if isinstance(node, ast.BinOp):
            if type(node.op) not in _BINARY:
                errors.append(
                    f"freq_equation {expr!r} uses an operator other than + - * / ** "
                    f"({ast.unparse(node)!r}); only those operators are allowed"
                )
            continue
        if isinstance(node, ast.UnaryOp):
            if type(node.op) not in _UNARY:
                errors.append(f"freq_equation {expr!r} uses an unsupported unary operator")
            continue
        if isinstance(node, ast.Constant):
            value = node.value
            if isinstance(value, bool) or not isinstance(value, int | float):
                errors.append(
                    f"freq_equation {expr!r} contains the constant {value!r}; only numbers "
                    "are allowed"
                )
            continue
        what = type(node).__name__
        snippet = ast.unparse(node) if isinstance(node, ast.expr) else what
        errors.append(
            f"freq_equation {expr!r} contains {snippet!r} ({what}); only numbers, names, "
            "parentheses and + - * / ** are allowed (no function calls, comparisons or "
            "attributes)"
        )
    return errors


def parse_equation(
    text: str, properties: Sequence[str], family: str = "linear"
) -> tuple[Equation | None, list[str]]:
    """Check one ``freq_equation`` string against the grammar, the declared names and the
    episode's equation ``family`` (:mod:`~silicolab.envs.causalab.dsl._family`).

    Returns the parsed :class:`Equation` (None on any error) and the error sentences.
    """
    lhs, rhs, errors = split_equation(text)
    if errors:
        return None, errors
    if lhs is not None and normalize_name(lhs) != TARGET:
        errors.append(
            f"freq_equation must define {TARGET}, but its left-hand side is {lhs!r}; write "
            f"'{TARGET} = base + c_X*X + ...'"
        )
    if not rhs:
        return None, [*errors, f"freq_equation {text!r} has an empty right-hand side"]
    try:
        tree = ast.parse(rhs, mode="eval")
    except SyntaxError as exc:
        return None, [
            *errors,
            f"freq_equation {text!r} is not a valid arithmetic expression ({exc.msg}); use "
            "explicit '*' between coefficient and property, e.g. 'base + c_density*density'",
        ]
    errors.extend(_check_nodes(tree, rhs))
    variables: set[str] = set()
    coefficients: set[str] = set()
    called = {id(n.func) for n in ast.walk(tree) if isinstance(n, ast.Call)}
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and id(node) not in called:
            kind, _var, error = classify(node.id, properties, family)
            if error:
                errors.append(error)
            elif kind == "variable":
                variables.add(node.id)
            else:
                coefficients.add(node.id)
    if not errors:
        errors = family_errors(tree, rhs, properties, family)
    if errors:
        return None, list(dict.fromkeys(errors))
    return Equation(rhs, tree, frozenset(variables), frozenset(coefficients)), []


@lru_cache(maxsize=512)
def _compile(text: str) -> ast.Expression | None:
    """The AST of an equation's right-hand side, or None if it does not parse."""
    _lhs, rhs, errors = split_equation(text)
    if errors or not rhs:
        return None
    try:
        tree = ast.parse(rhs, mode="eval")
    except SyntaxError:
        return None
    return None if _check_nodes(tree, rhs) else tree


def _walk(node: ast.AST, env: Mapping[str, float]) -> float:
    if isinstance(node, ast.Expression):
        return _walk(node.body, env)
    if isinstance(node, ast.Constant):
        return float(node.value)
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp):
        return _UNARY[type(node.op)](_walk(node.operand, env))
    if isinstance(node, ast.BinOp):
        return _BINARY[type(node.op)](_walk(node.left, env), _walk(node.right, env))
    raise TypeError(f"unsupported node {type(node).__name__}")  # excluded by _check_nodes


def evaluate(
    text: str, coefficients: Mapping[str, float | None], props: Mapping[str, float]
) -> float | None:
    """Value of the equation ``text`` for ``props``, or None when it cannot be computed.

    None is returned when the equation is empty or malformed, a coefficient it uses is
    missing or null, a property it uses is missing, or the arithmetic fails (division by
    zero, overflow, a complex power).
    """
    tree = _compile(text) if text and text.strip() else None
    if tree is None:
        return None
    env: dict[str, float] = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.Name) or node.id in env:
            continue
        value = coefficients[node.id] if node.id in coefficients else props.get(node.id)
        if value is None or isinstance(value, bool):
            return None
        try:
            env[node.id] = float(value)
        except (TypeError, ValueError):
            return None
    try:
        result = _walk(tree, env)
    except (ZeroDivisionError, OverflowError, ValueError, TypeError, KeyError):
        return None
    if isinstance(result, complex) or not math.isfinite(result):
        return None
    return float(result)
