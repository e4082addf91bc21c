"""Turning a data frame and a path model into numeric design columns.

Measurement rules (the paper's, made explicit): ordinal levels are scored 1..k in the
order given, binary levels 0/1, nominal variables become k-1 dummies ``<name>_<level>``
(first level is the reference), and interaction terms are raw products ``a:b`` (lavaan's
notation). A nominal *outcome* (or mediator) becomes k-1 indicator outcomes, one linear
probability equation each with the variable's causes; ``Design.groups`` keeps which
indicator equations belong to one nominal variable. Rows with a missing value in any model
column are dropped listwise and counted.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.scm.graph import CausalGraph
from silicolab.scm.variables import Variable

Equations = dict[str, list[str]]


@dataclass(frozen=True)
class Design:
    """Numeric columns, the regressors of each equation and the listwise-deletion count;
    ``groups`` maps a nominal endogenous variable to its indicator equations."""

    columns: pd.DataFrame
    equations: Equations
    n_dropped: int
    groups: dict[str, list[str]] = field(default_factory=dict)


def model_equations(model: Any) -> tuple[Equations, dict[str, Variable]]:
    """Parents of every endogenous variable, and the declared variables, from a
    :class:`CausalGraph`, an :class:`SCM` or a mapping ``{lhs: [parents]}``."""
    graph = getattr(model, "graph", model)
    if isinstance(graph, CausalGraph):
        equations = {
            n: list(graph.parents(n)) for n in graph.topological_order() if graph.parents(n)
        }
        variables = {v.name: v for v in graph.variables}
    elif isinstance(graph, Mapping):
        equations = {str(k): [str(p) for p in v] for k, v in graph.items() if len(v)}
        CausalGraph.from_edges([(p, k) for k, ps in equations.items() for p in ps])
        variables = {}
    else:
        raise InputError(
            f"estimate_paths needs a CausalGraph, an SCM or a mapping {{outcome: [causes]}}; "
            f"got {type(model).__name__}"
        )
    if not equations:
        raise InputError("the model has no edges, so there is nothing to estimate; add causes")
    return equations, variables


def _slug(text: str) -> str:
    return re.sub(r"[^0-9A-Za-z_]+", "_", str(text)).strip("_") or "level"


def _numeric(name: str, column: pd.Series, variable: Variable) -> pd.Series:
    if isinstance(column.dtype, pd.CategoricalDtype) and column.cat.ordered and not variable.levels:
        variable = variable.model_copy(
            update={"levels": tuple(map(str, column.cat.categories)), "type": "ordinal"}
        )
    if pd.api.types.is_bool_dtype(column):
        return column.astype(float)
    if pd.api.types.is_numeric_dtype(column) and not isinstance(column.dtype, pd.CategoricalDtype):
        return column.astype(float)
    scores = variable.score_levels()
    if variable.type in ("ordinal", "binary") and scores:
        mapped = column.map(lambda v: np.nan if pd.isna(v) else scores.get(str(v), "?"))
        unknown = column[mapped.eq("?")]
        if len(unknown):
            raise InputError(
                f"column {name!r} has value {unknown.iloc[0]!r}, which is not one of the levels "
                f"{list(scores)}; fix the data or the variable's levels"
            )
        return mapped.astype(float)
    example = column.dropna().iloc[0] if column.notna().any() else None
    raise InputError(
        f"column {name!r} is not numeric (e.g. {example!r}) but variable {name!r} is "
        f"{variable.type}; convert it to numbers, or declare Variable(name={name!r}, "
        "type='ordinal'|'binary'|'nominal', levels=[...]) so the levels can be scored"
    )


def _dummies(name: str, column: pd.Series, variable: Variable) -> pd.DataFrame:
    if variable.levels:
        levels = list(variable.levels)
    elif isinstance(column.dtype, pd.CategoricalDtype):
        levels = [str(c) for c in column.cat.categories]
    else:
        levels = sorted({str(v) for v in column.dropna()})
    text = column.map(lambda v: v if pd.isna(v) else str(v))
    unknown = text[text.notna() & ~text.isin(levels)]
    if len(unknown):
        raise InputError(
            f"nominal column {name!r} has value {unknown.iloc[0]!r}, not among the levels "
            f"{levels}; fix the data or the variable's levels"
        )
    missing = text.isna()
    frame = {}
    for level in levels[1:]:
        dummy = (text == level).astype(float)
        dummy[missing] = np.nan
        frame[f"{name}_{_slug(level)}"] = dummy
    return pd.DataFrame(frame, index=column.index)


def build_design(
    data: pd.DataFrame,
    equations: Equations,
    variables: Mapping[str, Variable],
    interactions: bool | Iterable[tuple[str, str]] = False,
) -> Design:
    """Numeric design columns for ``equations`` (see the module docstring for the rules)."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(f"data must be a pandas DataFrame; got {type(data).__name__}")
    used = list(dict.fromkeys([*equations, *(p for ps in equations.values() for p in ps)]))
    missing = [n for n in used if n not in data.columns]
    if missing:
        raise InputError(
            f"the data has no column for {missing}; the model needs {used} and the data has "
            f"{list(map(str, data.columns))}. Rename the columns or fix the model"
        )
    expanded: dict[str, list[str]] = {}
    parts = []
    for name in used:
        variable = variables.get(name, Variable(name=name))
        if variable.type == "nominal":
            block = _dummies(name, data[name], variable)
            if block.shape[1] == 0:
                raise InputError(
                    f"nominal variable {name!r} has a single level, so it has no dummy to "
                    "estimate; give it two or more levels or drop it from the model"
                )
        else:
            block = _numeric(name, data[name], variable).rename(name).to_frame()
        expanded[name] = list(block.columns)
        parts.append(block)
    columns = pd.concat(parts, axis=1)
    n_before = len(columns)
    columns = columns.dropna(axis=0, how="any").reset_index(drop=True)
    design_equations: Equations = {}
    groups = {lhs: expanded[lhs] for lhs in equations if expanded[lhs] != [lhs]}
    wanted = None if isinstance(interactions, bool) else {frozenset(p) for p in interactions}
    for lhs, parents in equations.items():
        terms = [t for p in parents for t in expanded[p]]
        if interactions is not False:
            for a, b in combinations(parents, 2):
                if wanted is not None and frozenset((a, b)) not in wanted:
                    continue
                for ta in expanded[a]:
                    for tb in expanded[b]:
                        term = f"{ta}:{tb}"
                        if term not in columns:
                            columns[term] = columns[ta] * columns[tb]
                        terms.append(term)
        for column in expanded[lhs]:
            design_equations[column] = list(terms)
    return Design(columns, design_equations, n_before - len(columns), groups)


def lavaan_syntax(equations: Mapping[str, Sequence[str]]) -> str:
    """The model in lavaan syntax: one regression line and one intercept line per outcome."""
    lines = []
    for lhs, terms in equations.items():
        lines.append(f"{lhs} ~ {' + '.join(terms)}")
        lines.append(f"{lhs} ~ 1")
    return "\n".join(lines)
