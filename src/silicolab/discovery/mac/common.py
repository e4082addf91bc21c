"""Helpers shared by the MAC modules: input checks, usage accounting, verdict graphs.

Usage is measured as the difference of the model's ledger before and after a method, so
calls a shared model made earlier (or for another prefix) do not count. Tags are
``"<prefix>/<module>/<role>"``; the usage record groups them per module (``meta``,
``coding``, ``single``) and per role (``affirmative``, ``negative``, ``judge``,
``executor``, ``agent``; the plan debate's ``plan-*`` roles count under their base role).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from silicolab.core.errors import InputError
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.result import GraphResult
from silicolab.llm import LanguageModel
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph

Pair = tuple[str, str]
_COUNTERS = ("calls", "cache_hits", "input_tokens", "output_tokens", "cost", "retries", "errors")


def check_data(data: Any) -> list[str]:
    """The column names of ``data``, after checking it is a usable DataFrame."""
    if not isinstance(data, pd.DataFrame):
        raise InputError(
            f"data must be a pandas DataFrame (one column per variable), got {type(data).__name__}"
        )
    names = [str(c) for c in data.columns]
    if len(names) < 2:
        raise InputError("data needs at least two columns (variables) for causal discovery")
    if len(set(names)) != len(names):
        raise InputError(f"data has repeated column names {names}; rename them")
    return names


def variable_lines(
    nodes: Sequence[str], variables: Mapping[str, str] | None
) -> list[tuple[str, str]]:
    """``(name, description)`` per node, in column order (empty text when undescribed)."""
    variables = dict(variables or {})
    unknown = sorted(set(variables) - set(nodes))
    if unknown:
        raise InputError(
            f"variables describes {unknown}, which are not columns of the data {list(nodes)}"
        )
    return [(name, str(variables.get(name, ""))) for name in nodes]


def check_model(model: Any) -> LanguageModel:
    """``model`` if it is a :class:`LanguageModel`, else an :class:`InputError` with the fix."""
    if not isinstance(model, LanguageModel):
        raise InputError(
            "MAC methods need model=<a silicolab LanguageModel>, e.g. "
            "model=load_model('openai:gpt-4o-mini') or load_model('scripted', fn=...)"
        )
    return model


# -- usage -------------------------------------------------------------------------------


def ledger_snapshot(model: LanguageModel) -> dict[str, Any] | None:
    """The model's ledger summary, or ``None`` for a bare model without a ledger."""
    try:
        return model.ledger.summary()
    except AttributeError:
        return None


def _zero() -> dict[str, float]:
    return dict.fromkeys(_COUNTERS, 0)


def _add(into: dict[str, float], tally: Mapping[str, Any], sign: int = 1) -> None:
    for key in _COUNTERS:
        into[key] += sign * tally.get(key, 0)


def usage_between(
    before: Mapping[str, Any] | None, after: Mapping[str, Any] | None, prefix: str
) -> dict[str, Any]:
    """The usage record of the calls tagged ``<prefix>/...`` between two snapshots."""
    total, by_module, by_role = _zero(), {}, {}
    if before is None or after is None:
        return {"total": total, "by_module": by_module, "by_role": by_role, "metered": False}
    old = before.get("by_tag", {})
    for tag, tally in after.get("by_tag", {}).items():
        if not tag.startswith(f"{prefix}/"):
            continue
        delta = _zero()
        _add(delta, tally)
        _add(delta, old.get(tag, {}), -1)
        if not any(delta.values()):
            continue
        parts = tag[len(prefix) + 1 :].split("/")
        module = parts[0]
        role = parts[-1].removeprefix("plan-") if len(parts) > 1 else module
        for bucket in (
            total,
            by_module.setdefault(module, _zero()),
            by_role.setdefault(role, _zero()),
        ):
            _add(bucket, delta)
    for bucket in (total, *by_module.values(), *by_role.values()):
        bucket["cost"] = round(bucket["cost"], 8)
    return {"total": total, "by_module": by_module, "by_role": by_role, "metered": True}


@dataclass
class Meter:
    """The clock and the ledger of one MAC method call, started when it is made: every
    method reports how long it took and the usage of its own ``<tag_prefix>/...`` calls."""

    model: LanguageModel
    tag_prefix: str
    started: float = field(default_factory=time.perf_counter)
    before: dict[str, Any] | None = None

    def __post_init__(self) -> None:
        self.before = ledger_snapshot(self.model)

    def result(
        self,
        method: str,
        graph: CausalGraph | PartialGraph,
        *,
        raw: Any,
        params: dict[str, Any],
        notes: Sequence[str],
    ) -> GraphResult:
        """The method's result, timed and metered up to now."""
        usage = usage_between(self.before, ledger_snapshot(self.model), self.tag_prefix)
        return GraphResult.since(
            self.started, method, graph, raw=raw, usage=usage, params=params, notes=notes
        )


# -- knowledge and graphs ----------------------------------------------------------------


def fixed_pairs(knowledge: Knowledge | None, nodes: Sequence[str]) -> dict[Pair, bool]:
    """Pairs the user's knowledge already decides: required -> True, forbidden (explicitly
    or by tiers) -> False. The debates do not ask about them."""
    if not knowledge:
        return {}
    knowledge.validate(nodes)
    fixed: dict[Pair, bool] = dict.fromkeys(knowledge.forbidden_pairs(), False)
    fixed.update(dict.fromkeys(knowledge.required, True))
    return fixed


def graph_from_pairs(nodes: Sequence[str], yes: Iterable[Pair]) -> CausalGraph | PartialGraph:
    """The graph of ``yes`` pairs ``(p, q)`` meaning "p directly causes q".

    A pair decided yes in both directions becomes an undirected edge ``p -- q`` (its
    binarized matrix has both entries, as "both ways" does). The result is a
    :class:`CausalGraph` when every edge is one-way and there is no cycle, otherwise a
    :class:`PartialGraph` (whose directed edges may form a cycle: LLM verdicts can).
    """
    pairs = set(yes)
    directed = sorted(p for p in pairs if (p[1], p[0]) not in pairs)
    both = sorted({tuple(sorted(p)) for p in pairs if (p[1], p[0]) in pairs})
    return PartialGraph(nodes, directed=directed, undirected=both).simplest()


def edge_sentence(graph: CausalGraph | PartialGraph, cause: str, effect: str) -> str:
    """What ``graph`` says about ``cause -> effect``, in words (the hybrid's evidence)."""
    if isinstance(graph, CausalGraph):
        if graph.has_edge(cause, effect):
            return f"it found a direct causal relationship from {cause} to {effect}"
        if graph.has_edge(effect, cause):
            return f"it found a direct relationship in the other direction, {effect} to {cause}"
        return f"it found no direct causal relationship between {cause} and {effect}"
    marks = graph.marks(cause, effect)
    if marks is None:
        return f"it found no direct causal relationship between {cause} and {effect}"
    kinds = {
        ("tail", "arrow"): f"it found a direct causal relationship from {cause} to {effect}",
        ("arrow", "tail"): f"it found a direct relationship in the other direction, {effect} to "
        f"{cause}",
        ("tail", "tail"): f"it found a direct link between {cause} and {effect} but could not "
        "tell its direction",
        ("arrow", "arrow"): f"it found that {cause} and {effect} share a hidden common cause "
        "rather than one causing the other",
    }
    return kinds.get(
        marks,
        f"it found a link between {cause} and {effect} whose direction is undetermined",
    )


def knowledge_lines(knowledge: Knowledge | None) -> list[str]:
    """The constraints of ``knowledge`` as sentences for a prompt."""
    if not knowledge:
        return []
    lines = [f"{c} directly causes {e} (required edge)" for c, e in knowledge.required]
    lines += [f"{c} does not directly cause {e} (forbidden edge)" for c, e in knowledge.forbidden]
    for i, tier in enumerate(knowledge.tiers):
        lines.append(
            f"tier {i + 1}: {', '.join(tier)} (no variable of a later tier causes one of an "
            "earlier tier)"
        )
    return lines


def knowledge_violations(
    graph: CausalGraph | PartialGraph, knowledge: Knowledge | None
) -> list[str]:
    """Constraints of ``knowledge`` that ``graph`` breaks: a required edge it lacks (as a
    possible ``c -> e``) or a forbidden edge it has as a definite ``c -> e``."""
    if not knowledge:
        return []
    if isinstance(graph, CausalGraph):
        has_possible = has_definite = graph.has_edge
    else:
        directed = set(graph.directed_edges())

        def has_definite(c: str, e: str) -> bool:
            return (c, e) in directed

        def has_possible(c: str, e: str) -> bool:
            marks = graph.marks(c, e)
            return marks is not None and marks[0] != "arrow"

    out = [f"missing required {c} -> {e}" for c, e in knowledge.required if not has_possible(c, e)]
    out += [
        f"has forbidden {c} -> {e}"
        for c, e in sorted(knowledge.forbidden_pairs())
        if has_definite(c, e)
    ]
    return out
