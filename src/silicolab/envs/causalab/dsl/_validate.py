"""Field checks of the CausaLab DSL record (spec §5.4 rules 1, 2, 4, 5 and 6).

Every check appends full sentences to ``errors`` (blocking; sent back in the repair prompt)
or ``warnings`` (non-blocking, logged) and returns the cleaned value, or None when the
field is unusable. The sentences name the item (``edge 2``, ``coefficient 'c_ph'``), what
is wrong with it and how to fix it, so an LLM can act on them directly.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any

from silicolab.core.errors import InputError
from silicolab.envs.causalab.dsl._equation import Equation, classify, normalize_name, suggest
from silicolab.envs.causalab.dsl._family import effective_properties
from silicolab.envs.causalab.suite import TARGET
from silicolab.scm import CausalGraph

DSL_KEYS: tuple[str, ...] = ("memory", "thought", "past_data", "hypothesis", "experiment")
ACTION_KEYS: tuple[tuple[str, ...], ...] = (
    ("action", "arg1", "arg2"),
    ("chosen_dialog_option_int",),
    ("value",),
)


def _number(value: Any) -> tuple[float | None, str | None]:
    """(number, problem): numbers pass, numeric strings coerce (problem 'coerced')."""
    if isinstance(value, bool):
        return None, "a boolean"
    if isinstance(value, int | float):
        return (float(value), None) if math.isfinite(value) else (None, "not finite")
    if isinstance(value, str):
        try:
            number = float(value.strip())
        except ValueError:
            return None, "not a number"
        return (number, "coerced") if math.isfinite(number) else (None, "not finite")
    return None, f"a {type(value).__name__}"


def check_action(
    data: Mapping[str, Any], properties: Sequence[str], errors: list[str], warnings: list[str]
) -> dict | None:
    """Rule 1: exactly one action form; returns the action fields only."""
    forms = [form for form in ACTION_KEYS if any(k in data for k in form)]
    if not forms:
        errors.append(
            'the reply has no action: add "action" (with "arg1"/"arg2" as needed), or '
            '"chosen_dialog_option_int" when a dialog is open, or "value" when a number is '
            "asked for"
        )
        return None
    if len(forms) > 1:
        names = " and ".join(repr(form[0]) for form in forms)
        errors.append(f"the reply mixes the action forms {names}; give exactly one of them")
        return None
    form = forms[0]
    if form[0] == "action":
        name = data.get("action")
        if not isinstance(name, str) or not name.strip():
            errors.append('"action" must be a non-empty string naming the action, e.g. "TALK"')
            return None
        return {k: data[k] for k in form if k in data}
    if form[0] == "chosen_dialog_option_int":
        raw = data["chosen_dialog_option_int"]
        number, problem = _number(raw)
        if number is None or number != int(number):
            errors.append(
                f'"chosen_dialog_option_int" must be a whole number (the option to pick); '
                f"got {raw!r}"
            )
            return None
        if problem or not isinstance(raw, int):
            warnings.append(f'"chosen_dialog_option_int" {raw!r} was read as {int(number)}')
        return {"chosen_dialog_option_int": int(number)}
    raw = data["value"]
    number, problem = _number(raw)
    if number is None:
        errors.append(f'"value" must be a number (the value to enter); got {raw!r}')
        return None
    if problem == "coerced":
        warnings.append(f'"value" {raw!r} was a string and was read as the number {number}')
        return {"value": number}
    return {"value": raw}


def check_past_data(value: Any, errors: list[str], warnings: list[str]) -> list[dict] | None:
    """Rule 6: past_data is a list; malformed entries are only warnings."""
    if not isinstance(value, list):
        errors.append(
            "past_data must be a list of entries like "
            '{"id": "1/N", "props": {...}, "freq": 123}; copy the previous list and append'
        )
        return None
    for i, entry in enumerate(value, start=1):
        if not isinstance(entry, Mapping):
            warnings.append(f"past_data entry {i} is not an object")
            continue
        if not isinstance(entry.get("props"), Mapping):
            warnings.append(f"past_data entry {i} has no 'props' object")
        freq, _problem = _number(entry.get("freq"))
        if freq is None:
            warnings.append(f"past_data entry {i} has no numeric 'freq'")
    return list(value)


def check_experiment(
    value: Any, properties: Sequence[str], errors: list[str], warnings: list[str]
) -> dict | None:
    """The planned experiment: an object (``{}`` if none); odd contents are warnings."""
    if not isinstance(value, Mapping):
        errors.append(
            'experiment must be an object like {"target_prop": "density", "target_value": 50} '
            "or {} when no intervention is planned"
        )
        return None
    prop = value.get("target_prop")
    if prop is not None and normalize_name(str(prop)) not in properties:
        warnings.append(
            f"experiment target_prop {prop!r} is not a controllable property"
            f"{suggest(str(prop), properties)}"
        )
    if "target_value" in value and _number(value["target_value"])[0] is None:
        warnings.append(f"experiment target_value {value['target_value']!r} is not a number")
    return dict(value)


def check_edges(
    value: Any, properties: Sequence[str], errors: list[str]
) -> list[tuple[str, str]] | None:
    """Rule 2: objects with string from/to, names in V, no self-loops/duplicates, acyclic."""
    if not isinstance(value, list):
        errors.append('hypothesis.edges must be a list of {"from": A, "to": B} objects')
        return None
    names = [*properties, TARGET]
    listing = f"the properties are: {', '.join(properties)} (and {TARGET})"
    edges: list[tuple[str, str]] = []
    count = len(errors)
    for i, edge in enumerate(value, start=1):
        if (
            not isinstance(edge, Mapping)
            or not isinstance(edge.get("from"), str)
            or not isinstance(edge.get("to"), str)
        ):
            errors.append(f'edge {i} must be an object {{"from": A, "to": B}} with string names')
            continue
        pair = (normalize_name(edge["from"].strip()), normalize_name(edge["to"].strip()))
        bad = [n for n in dict.fromkeys(pair) if n not in names]
        for name in bad:
            errors.append(
                f"edge {i} names {name!r}, which is not a declared property"
                f"{suggest(name, names)}; {listing}"
            )
        if bad:
            continue
        if pair[0] == pair[1]:
            errors.append(f"edge {i} is a self-loop {pair[0]} -> {pair[1]}; remove it")
        elif pair in edges:
            first = edges.index(pair) + 1
            errors.append(f"edge {i} repeats {pair[0]} -> {pair[1]} (edge {first}); remove it")
        else:
            edges.append(pair)
    if len(errors) > count:
        return None
    try:
        CausalGraph(names, edges)
    except InputError as exc:
        errors.append(f"hypothesis.edges: {exc}")
        return None
    return edges


def zero_coefficients(value: Any) -> frozenset[str]:
    """The coefficient names given as a number equal to 0 (``0``, ``0.0``, ``"0"``)."""
    if not isinstance(value, Mapping):
        return frozenset()
    return frozenset(str(k) for k, v in value.items() if v is not None and _number(v)[0] == 0)


def check_coefficients(
    value: Any,
    used: set[str] | None,
    properties: Sequence[str],
    errors: list[str],
    warnings: list[str],
    family: str = "linear",
) -> dict[str, float | None] | None:
    """Rule 5: numbers or null; coerced numeric strings warn; extra non-zero keys are errors.

    ``used`` is the set of coefficient names in the equation (None when there is no
    equation yet): each must be present. Zero values are accepted, as upstream accepts and
    scores them (its prompt asks to leave them out, so they warn): a zero key the equation
    does not use is kept as written, since upstream's weight score counts every ``c_`` key.
    """
    if not isinstance(value, Mapping):
        errors.append(
            'hypothesis.coefficients must be an object like {"base": 20, "c_density": 2, '
            '"c_moisture": null}'
        )
        return None
    count = len(errors)
    result: dict[str, float | None] = {}
    for key, raw in value.items():
        name = str(key)
        if raw is None:
            result[name] = None
            continue
        number, problem = _number(raw)
        if number is None:
            errors.append(
                f"coefficient {name!r} has the value {raw!r}, which is {problem}; give a number, "
                "or null if it is still unknown"
            )
            continue
        if problem == "coerced":
            warnings.append(f"coefficient {name!r} was the string {raw!r}; read as {number}")
        result[name] = number
    if used is None:
        for name in result:
            _check_name(name, properties, family, errors)
        return None if len(errors) > count else result
    for name in sorted(used - set(value)):
        errors.append(
            f"coefficient {name!r} is used in freq_equation but missing from coefficients; add "
            "it (a number, or null if unknown)"
        )
    for name in [k for k in result if k not in used]:
        if result[name] is None or (name == "base" and result[name] == 0):
            warnings.append(f"coefficient {name!r} is not used in freq_equation and was dropped")
            del result[name]
        elif result[name] == 0:
            if _check_name(name, properties, family, errors):
                warnings.append(
                    f"coefficient {name!r} is 0 and freq_equation does not use it; it is kept "
                    "as written (scored as a predicted weight), though the task asks to leave "
                    "zero coefficients out"
                )
        else:
            errors.append(
                f"coefficients has {name!r} = {result[name]:g}, but freq_equation does not use "
                "it; remove it or add its term to the equation"
            )
    return None if len(errors) > count else result


def _check_name(name: str, properties: Sequence[str], family: str, errors: list[str]) -> bool:
    """True when ``name`` is a coefficient name of ``family``; else one error sentence."""
    kind, _var, error = classify(name, properties, family)
    if error or kind != "coefficient":
        errors.append(
            f"coefficients has the key {name!r}, which is not a valid coefficient name; "
            "use 'base' or 'c_<property>'"
        )
        return False
    return True


def check_terms(
    equation: Equation,
    parents: set[str],
    zeros: frozenset[str],
    properties: Sequence[str],
    errors: list[str],
    warnings: list[str],
) -> None:
    """Rule 4: the equation's terms are exactly the parents of TARGET in the edges.

    A term whose coefficient is 0 adds nothing, so it needs no edge (a warning only); an
    edge whose term is zero is kept, as upstream scores the edges as written.
    """
    effective = effective_properties(equation.tree, properties, zeros)
    for var in sorted(equation.variables - parents):
        if var in effective:
            errors.append(
                f"freq_equation uses {var!r}, but edges contain no edge {var} -> {TARGET}; add "
                "that edge or remove the term (the equation lists exactly the direct parents)"
            )
        else:
            warnings.append(
                f"the {var} term of freq_equation has a zero coefficient, so it adds nothing "
                "and needs no edge; the task asks to leave zero terms out"
            )
    for var in sorted(parents - equation.variables):
        errors.append(
            f"edges list {var} -> {TARGET}, but freq_equation has no {var} term; add "
            f"c_{var}*{var} (coefficient null if unknown) or remove the edge"
        )
    for var in sorted((parents & equation.variables) - effective):
        warnings.append(
            f"edges list {var} -> {TARGET}, but its freq_equation term has a zero coefficient; "
            "the edge still counts as a parent when scored"
        )
    for var in sorted(equation.variables):
        if not {f"c_{var}", f"c_{var}_1", f"c_{var}_2"} & equation.coefficients:
            warnings.append(
                f"the {var} term of freq_equation has no named coefficient; write "
                f"c_{var}*{var} and give c_{var} in coefficients so it can be tracked"
            )
