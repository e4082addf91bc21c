"""The declared equation family of a CausaLab episode, applied to the agent's freq_equation.

Each episode declares its family (spec §3.3): in a *linear* episode the frequency is
``base + Σ w_p·p`` over its parents, in a *quadratic* one ``base + Σ (u_p·p² + w_p·p)``.
The paper checks the hypothesis against the episode's schema, so an equation outside the
declared family (a square in a linear episode, a division by a property, a product of two
properties) is refused with the offending term and the family named, instead of being
scored as if it were the mechanism.

The check reads each top-level term (``a + b - c`` has the terms ``a``, ``b``, ``-c``) as a
polynomial in the declared properties, treating coefficients and numbers as constants:
a term is inside the family when every monomial it expands to holds one property, to a
power of at most 1 (linear) or 2 (quadratic). The same reading, with the coefficients
given as 0 set to zero, tells which properties the equation *really* uses: a term whose
coefficient is 0 contributes nothing, as in upstream's scoring, where only the edges count.
"""

from __future__ import annotations

import ast
import math
from collections.abc import Iterable
from dataclasses import dataclass, field

#: The canonical form of each family, shown in the refusal so the agent can rewrite.
FAMILY_FORMS: dict[str, str] = {
    "linear": "a coefficient times one property (base + c_X*X + c_Y*Y + ...)",
    "quadratic": (
        "a coefficient times one property or its square "
        "(base + c_X_1*X**2 + c_X_2*X + c_Y_1*Y**2 + c_Y_2*Y + ...)"
    ),
}
MAX_POWER: dict[str, int] = {"linear": 1, "quadratic": 2}
_SHOWN_PROBLEMS = 3  # reasons quoted per refused term; the rest are counted
_POWER_CAP = 8  # a power of higher degree is outside every family and is not expanded

#: A monomial: sorted (property, power) pairs; ``()`` is a constant.
Monomial = tuple[tuple[str, int], ...]


@dataclass
class _Reading:
    """A term read as a polynomial: its monomials, plus why it is not a polynomial."""

    monomials: frozenset[Monomial]
    problems: list[str] = field(default_factory=list)


def _times(a: Monomial, b: Monomial) -> Monomial:
    powers: dict[str, int] = dict(a)
    for name, power in b:
        powers[name] = powers.get(name, 0) + power
    return tuple(sorted(powers.items()))


def _product(left: frozenset[Monomial], right: frozenset[Monomial]) -> frozenset[Monomial]:
    return frozenset(_times(a, b) for a in left for b in right)


def _names(monomials: Iterable[Monomial]) -> list[str]:
    return sorted({name for m in monomials for name, _power in m})


def _whole_exponent(node: ast.expr) -> int | float | None:
    """The exponent's number when it is a literal (signed) number, else None."""
    sign = 1
    while isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        sign = -sign if isinstance(node.op, ast.USub) else sign
        node = node.operand
    if isinstance(node, ast.Constant) and isinstance(node.value, int | float):
        return sign * node.value
    return None


class _Reader:
    """Reads an expression tree as a polynomial in ``properties`` (see the module doc)."""

    def __init__(self, properties: Iterable[str], zeros: Iterable[str] = ()) -> None:
        self.properties = frozenset(properties)
        self.zeros = frozenset(zeros)

    def read(self, node: ast.AST) -> _Reading:
        """The monomials of ``node``; ``problems`` says where it stops being a polynomial."""
        if isinstance(node, ast.Expression):
            return self.read(node.body)
        if isinstance(node, ast.Constant):
            return _Reading(frozenset() if node.value == 0 else frozenset({()}))
        if isinstance(node, ast.Name):
            if node.id in self.properties:
                return _Reading(frozenset({((node.id, 1),)}))
            return _Reading(frozenset() if node.id in self.zeros else frozenset({()}))
        if isinstance(node, ast.UnaryOp):
            return self.read(node.operand)
        if isinstance(node, ast.BinOp):
            return self._binary(node)
        return _Reading(frozenset({()}), [f"contains {ast.unparse(node)!r}"])

    def _binary(self, node: ast.BinOp) -> _Reading:
        left, right = self.read(node.left), self.read(node.right)
        problems = [*left.problems, *right.problems]
        if isinstance(node.op, ast.Add | ast.Sub):
            return _Reading(left.monomials | right.monomials, problems)
        if isinstance(node.op, ast.Mult):
            return _Reading(_product(left.monomials, right.monomials), problems)
        if isinstance(node.op, ast.Div):
            divisors = _names(right.monomials)
            if divisors:
                problems.append(f"it divides by {' and '.join(divisors)}")
            return _Reading(left.monomials, problems)
        return self._power(node, left, problems)

    def _power(self, node: ast.BinOp, base: _Reading, problems: list[str]) -> _Reading:
        in_exponent = _names(self.read(node.right).monomials)
        if in_exponent:
            problems.append(f"it has {' and '.join(in_exponent)} in an exponent")
        properties = _names(base.monomials)
        if not properties:
            return _Reading(base.monomials, problems)
        exponent = _whole_exponent(node.right)
        if (
            exponent is None
            or not math.isfinite(exponent)
            or exponent != int(exponent)
            or exponent < 0
        ):
            shown = ast.unparse(node.right)
            problems.append(f"it raises {' and '.join(properties)} to the power {shown}")
            return _Reading(base.monomials, problems)
        power = int(exponent)
        degree = max(sum(p for _name, p in m) for m in base.monomials)
        if degree * power > _POWER_CAP:  # outside every family; not expanded
            problems.append(f"it raises {' and '.join(properties)} to the power {power}")
            return _Reading(base.monomials, problems)
        result: frozenset[Monomial] = frozenset({()})
        for _ in range(power):
            result = _product(result, base.monomials)
        return _Reading(result, problems)


def top_level_terms(tree: ast.AST) -> list[ast.expr]:
    """The additive terms of an expression: ``a + b - c`` gives ``a``, ``b``, ``c``."""
    node = tree.body if isinstance(tree, ast.Expression) else tree
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add | ast.Sub):
        return [*top_level_terms(node.left), *top_level_terms(node.right)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.UAdd | ast.USub):
        inner = top_level_terms(node.operand)
        return inner if len(inner) > 1 else [node]
    return [node] if isinstance(node, ast.expr) else []


def _shape_problems(monomials: Iterable[Monomial], family: str) -> list[str]:
    problems: list[str] = []
    for monomial in sorted(monomials):
        if len(monomial) > 1:
            problems.append(f"it multiplies {' by '.join(name for name, _p in monomial)}")
        elif monomial and monomial[0][1] > MAX_POWER[family]:
            name, power = monomial[0]
            shape = f"squares {name}" if power == 2 else f"raises {name} to the power {power}"
            problems.append(f"it {shape}")
    return problems


def _owner(name: str, properties: frozenset[str]) -> str | None:
    """The property a coefficient name belongs to (``c_X``, ``c_X_1``, ``c_X_2``), or None."""
    if not name.startswith("c_"):
        return None
    rest = name[2:]
    if rest in properties:
        return rest
    if rest[-2:] in ("_1", "_2") and rest[:-2] in properties:
        return rest[:-2]
    return None


def family_errors(tree: ast.AST, source: str, properties: Iterable[str], family: str) -> list[str]:
    """One sentence per term of ``tree`` outside ``family`` or using another's coefficient.

    ``source`` is the text ``tree`` was parsed from, so a term is quoted as the agent wrote
    it. Each sentence names the term, why it is outside (the square, the division, the
    product of two properties ...) and the family's form, so the agent can rewrite it.
    """
    props = frozenset(properties)
    reader = _Reader(props)
    errors: list[str] = []
    for term in top_level_terms(tree):
        text = ast.get_source_segment(source, term) or ast.unparse(term)
        reading = reader.read(term)
        problems = list(
            dict.fromkeys(reading.problems + _shape_problems(reading.monomials, family))
        )
        if problems:
            if len(problems) > _SHOWN_PROBLEMS:
                more = len(problems) - _SHOWN_PROBLEMS
                problems = [*problems[:_SHOWN_PROBLEMS], f"and {more} more"]
            errors.append(
                f"freq_equation term {text!r} is outside this episode's {family} family "
                f"({'; '.join(problems)}); every term must be "
                f"{FAMILY_FORMS[family]}, so rewrite or remove it"
            )
            continue
        present = set(_names(reading.monomials))
        for node in ast.walk(term):
            owner = _owner(node.id, props) if isinstance(node, ast.Name) else None
            if owner is not None and owner not in present:
                errors.append(
                    f"freq_equation term {text!r} uses the coefficient {node.id!r} without "
                    f"the property {owner!r}; a coefficient multiplies its own property "
                    f"(c_{owner}*{owner})"
                )
    return errors


def effective_properties(
    tree: ast.AST, properties: Iterable[str], zeros: Iterable[str]
) -> frozenset[str]:
    """The properties the equation depends on once the coefficients named in ``zeros``
    (those given as 0) are zero: ``base + c_a*a + c_b*b`` with ``c_b = 0`` depends on
    ``a`` only.
    """
    return frozenset(_names(_Reader(properties, zeros).read(tree).monomials))
