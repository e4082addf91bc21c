"""SCP's LLM knowledge-based causal inference (LLM-KBCI), the baseline rows "PC LLM-KBCI",
"ES LLM-KBCI" and "DirectLiNGAM LLM-KBCI" of MAC's Table 2 (SCP: Takayama et al.,
"Integrating large language models in causal discovery: a statistical causal approach",
arXiv 2402.01454; code mas-takayama/LLM-and-SCD).

Four steps, as SCP runs them:

1. run the statistical algorithm on the data;
2. for every ordered pair ``(c, e)`` ask the model, with the algorithm's findings in the
   prompt ("statistical causal prompting"), whether ``c`` causes ``e``; ``samples``
   answers per pair (SCP: 5, temperature 0.7) give the probability ``P(c -> e)`` as the
   fraction of *valid* answers that are "yes" (a reply that stays invalid after the repair
   loop is a parse failure and is left out; a pair with no valid answer has no probability
   and no constraint);
3. turn the probabilities into background knowledge with SCP's thresholds:
   ``P < forbid_below`` (0.05) forbids ``c -> e``, ``P > require_above`` (0.95) requires it;
4. run the algorithm again with that knowledge (causal-learn ``BackgroundKnowledge`` for
   PC, DirectLiNGAM ``prior_knowledge``, and for Exact Search only the super-graph of
   allowed edges, as SCP did; :class:`~silicolab.discovery.knowledge.Knowledge` does the
   encoding).

Where we differ from SCP, on purpose: SCP's probability is the mean over samples of the
first token's "yes" probability (log-probs, which many servers do not return) after a
free-text knowledge-generation turn; ours is the share of "yes" among structured answers
in one turn. SCP asks about a "direct or indirect impact"; we ask about a *direct* effect,
because the knowledge is read as edges by PC and Exact Search. Required edges that would
close a cycle (SCP removes them by BIC in its "transformation A") are dropped greedily,
least probable first, and named in the notes; so are forbidden edges whose "no path"
constraints would make DirectLiNGAM's causal order cyclic (:func:`lingam_consistent`).

Orientation: probabilities are recorded row = cause (``probability[c][e] = P(c -> e)``),
silicolab's convention. SCP's matrices are row = effect, and SCP passed them to Exact
Search's ``super_graph`` (row = cause) untransposed while reading its output as row =
effect; ``exact_llm_kbci`` does it the correct way, ``exact_scp_llm_kbci`` reproduces SCP
(both steps run :func:`~silicolab.discovery.statistical.exact_scp`), and only the latter is
compared with the published "ES LLM-KBCI" row.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import networkx as nx
import numpy as np
import pandas as pd

from silicolab.core.errors import InputError, ParseFailure
from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.sync import sync_twin
from silicolab.discovery import statistical
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.common import (
    Meter,
    Pair,
    check_data,
    check_model,
    edge_sentence,
    fixed_pairs,
    variable_lines,
)
from silicolab.discovery.mac.panel import DebateSettings
from silicolab.discovery.mac.schemas import QuestionAnswer
from silicolab.discovery.mac.templates import render
from silicolab.discovery.result import GraphResult, graph_edges
from silicolab.llm import LanguageModel
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph

MODULE = "llm_kbci"

#: The statistical algorithm of each variant and whether it takes required edges (SCP gave
#: Exact Search only the super-graph of allowed edges).
ALGORITHMS: dict[str, tuple[Callable[..., GraphResult], bool]] = {
    "pc": (statistical.pc, True),
    "exact": (statistical.exact, False),
    "exact_scp": (statistical.exact_scp, False),
    "direct_lingam": (statistical.direct_lingam, True),
}

ALGORITHM_NAMES = {
    "pc": "PC",
    "exact": "Exact Search",
    "exact_scp": "Exact Search",
    "direct_lingam": "DirectLiNGAM",
}


def finding_lines(graph: CausalGraph | PartialGraph) -> list[str]:
    """The edges of a statistical result as prompt lines (what step 2 shows the model)."""
    edges = graph_edges(graph)
    lines = [f"{c} -> {e}" for c, e in edges["directed"]]
    lines += [f"{a} -- {b} (direction undetermined)" for a, b in edges["undirected"]]
    lines += [f"{a} <-> {b} (a hidden common cause)" for a, b in edges["bidirected"]]
    lines += [
        f"{m['u']} and {m['v']} are linked (ends {m['mark_u']}/{m['mark_v']})"
        for m in edges.get("marked", ())
    ]
    return lines


def yes_fraction(answers: Sequence[str | None]) -> float | None:
    """``P(yes)`` among the valid answers (``None`` marks a parse failure); ``None`` when
    none is valid."""
    valid = [a for a in answers if a is not None]
    return sum(a == "yes" for a in valid) / len(valid) if valid else None


def knowledge_from_probabilities(
    probability: Mapping[Pair, float | None],
    *,
    forbid_below: float = 0.05,
    require_above: float = 0.95,
    use_required: bool = True,
    user: Knowledge | None = None,
) -> tuple[Knowledge, list[str]]:
    """SCP's step 3: ``P(c -> e) < forbid_below`` forbids ``c -> e``, ``> require_above``
    requires it (when ``use_required``), ``None`` or anything between leaves it open. Required
    edges that would close a cycle (with ``user``'s required edges and the more probable
    ones kept before) are dropped and named in the returned notes. ``user`` knowledge is
    kept as given and wins over the model."""
    user = user or Knowledge()
    known = {p: v for p, v in probability.items() if v is not None}
    forbidden = sorted(p for p, v in known.items() if v < forbid_below)
    candidates = sorted(
        ((v, p) for p, v in known.items() if use_required and v > require_above),
        key=lambda item: (-item[0], item[1]),
    )
    kept = nx.DiGraph(user.required)
    required, dropped = [], []
    for _, (cause, effect) in candidates:
        if kept.has_node(effect) and kept.has_node(cause) and nx.has_path(kept, effect, cause):
            dropped.append(f"{cause} -> {effect}")
            continue
        kept.add_edge(cause, effect)
        required.append((cause, effect))
    notes = (
        [f"required edge(s) dropped because they would close a cycle: {', '.join(dropped)}"]
        if dropped
        else []
    )
    knowledge = Knowledge(
        required=(*user.required, *required),
        forbidden=(*user.forbidden, *forbidden),
        tiers=user.tiers,
    )
    return knowledge, notes


async def _ask_pair(
    settings: DebateSettings,
    *,
    pair: Pair,
    context: Mapping[str, Any],
    samples: int,
    max_tokens: int | None,
) -> dict[str, Any]:
    """``samples`` structured answers about ``pair``; its JSON-ready record."""
    cause, effect = pair
    turn = render(
        "kbci_question",
        cause=cause,
        effect=effect,
        pair_finding=edge_sentence(context["graph"], cause, effect),
        **{k: v for k, v in context.items() if k != "graph"},
    )
    system = render("kbci_expert")
    answers: list[str | None] = []
    failures: list[dict[str, Any]] = []
    thoughts: list[str] = []
    for k in range(samples):
        sample = DebateSettings(
            model=settings.model,
            tag_prefix=settings.tag_prefix,
            module=settings.module,
            temperature=settings.temperature,
            replicate=settings.replicate * samples + k,
            seed=settings.seed,
        )
        try:
            reply = await sample.structured(
                "expert", system, turn, QuestionAnswer, max_tokens=max_tokens
            )
        except ParseFailure as err:
            answers.append(None)
            failures.append({"sample": k, "message": str(err), "raw": err.raw})
            continue
        answers.append(reply["answer"])
        thoughts.append(reply["thought"])
    return {
        "cause": cause,
        "effect": effect,
        "answers": answers,
        "thoughts": thoughts,
        "failures": failures,
        "probability": yes_fraction(answers),
    }


def probability_matrix(nodes: Sequence[str], pairs: Sequence[Mapping[str, Any]]) -> list[list]:
    """``matrix[i][j] = P(nodes[i] -> nodes[j])`` (row = cause); ``None`` on the diagonal,
    for pairs not asked (fixed by the user's knowledge) and pairs with no valid answer."""
    index = {name: i for i, name in enumerate(nodes)}
    matrix: list[list[float | None]] = [[None] * len(nodes) for _ in nodes]
    for record in pairs:
        p = record["probability"]
        if p is not None:
            matrix[index[record["cause"]]][index[record["effect"]]] = p
    return matrix


def _check_options(algorithm: str, samples: Any, forbid_below: float, require_above: float) -> None:
    """Refuse, before any work, an unknown algorithm, a bad sample count or thresholds out
    of order."""
    if algorithm not in ALGORITHMS:
        raise InputError(f"algorithm must be one of {sorted(ALGORITHMS)}, got {algorithm!r}")
    if isinstance(samples, bool) or not isinstance(samples, int) or samples < 1:
        raise InputError(f"samples must be a positive integer (e.g. samples=5), got {samples!r}")
    if not 0.0 <= forbid_below <= require_above <= 1.0:
        raise InputError(
            f"need 0 <= forbid_below <= require_above <= 1, got {forbid_below} and "
            f"{require_above} (SCP: 0.05 and 0.95)"
        )


def _prompt_context(
    first: GraphResult,
    algorithm: str,
    description: str,
    variables: Sequence[tuple[str, str]],
) -> dict[str, Any]:
    """What every pair's prompt shows besides the pair: the step-1 graph and its edges."""
    return {
        "graph": first.graph,
        "algorithm": ALGORITHM_NAMES[algorithm],
        "found": finding_lines(first.graph),
        "description": description,
        "variables": variables,
    }


def lingam_orders(pk: np.ndarray, nodes: Sequence[str]) -> nx.DiGraph:
    """The causal-order constraints DirectLiNGAM reads from ``prior_knowledge`` (an edge
    ``a -> b`` puts ``a`` before ``b``): a path ``c ~> e`` (``pk[e, c] = 1``) puts ``c``
    first; "no path ``c ~> e``" alone (``pk[e, c] = 0``, ``pk[c, e] != 0``) puts ``e``
    first; two-way "no path" orders nothing. A cycle here leaves DirectLiNGAM no variable to
    pick first (it fails with an empty ``argmax``)."""
    orders = nx.DiGraph()
    orders.add_nodes_from(nodes)
    for e, effect in enumerate(nodes):
        for c, cause in enumerate(nodes):
            if c == e:
                continue
            if pk[e, c] == 1:
                orders.add_edge(cause, effect)
            elif pk[e, c] == 0 and pk[c, e] != 0:
                orders.add_edge(effect, cause)
    return orders


def lingam_consistent(
    knowledge: Knowledge,
    probability: Mapping[Pair, float | None],
    nodes: Sequence[str],
) -> tuple[Knowledge, list[str]]:
    """``knowledge`` with the model's forbidden edges that would make DirectLiNGAM's order
    constraints cyclic dropped, least confident (highest ``P``) first, one per cycle; the
    notes name them. Constraints not in ``probability`` (the user's) are never dropped."""
    forbidden, dropped = list(knowledge.forbidden), []
    while True:
        current = Knowledge(knowledge.required, tuple(forbidden), knowledge.tiers)
        try:
            cycle = nx.find_cycle(lingam_orders(current.to_lingam(nodes), nodes))
        except nx.NetworkXNoCycle:
            break
        # an order edge a -> b from "no path b ~> a" comes from the forbidden edge (b, a)
        culprits = [(b, a) for a, b, *_ in cycle if probability.get((b, a)) is not None]
        culprits = [p for p in culprits if p in forbidden]
        if not culprits:
            break  # the user's own constraints: DirectLiNGAM will say so
        worst = max(culprits, key=lambda p: (probability[p], p))
        forbidden.remove(worst)
        dropped.append(f"{worst[0]} -> {worst[1]}")
    notes = (
        [
            "forbidden edge(s) dropped because DirectLiNGAM's causal order would be cyclic: "
            + ", ".join(dropped)
        ]
        if dropped
        else []
    )
    return current, notes


async def _ask_pairs(
    settings: DebateSettings,
    asked: Sequence[Pair],
    context: Mapping[str, Any],
    samples: int,
    max_tokens: int | None,
    jobs: int,
) -> list[dict[str, Any]]:
    """The records of every ``asked`` pair (in order), at most ``jobs`` pairs at a time."""
    gate = asyncio.Semaphore(max(1, jobs))

    async def ask(pair: Pair) -> dict[str, Any]:
        async with gate:
            return await _ask_pair(
                settings, pair=pair, context=context, samples=samples, max_tokens=max_tokens
            )

    return list(await asyncio.gather(*(ask(p) for p in asked)))


async def allm_kbci(
    data: pd.DataFrame,
    *,
    model: LanguageModel,
    algorithm: str,
    knowledge: Knowledge | None = None,
    description: str = "",
    variables: Mapping[str, str] | None = None,
    samples: int = 5,
    temperature: float = 0.7,
    forbid_below: float = 0.05,
    require_above: float = 0.95,
    jobs: int = 4,
    max_tokens: int | None = None,
    tag_prefix: str = "kbci",
    replicate: int = 0,
    seed: int | None = None,
) -> GraphResult:
    """SCP's LLM-KBCI with the statistical ``algorithm`` (see the module docstring)."""
    _check_options(algorithm, samples, forbid_below, require_above)
    nodes = check_data(data)
    model = check_model(model)
    run, use_required = ALGORITHMS[algorithm]
    name = f"{algorithm}_llm_kbci"
    meter = Meter(model, tag_prefix)
    fixed = fixed_pairs(knowledge, nodes)
    first = await asyncio.to_thread(run, data, knowledge=knowledge)
    context = _prompt_context(first, algorithm, description, variable_lines(nodes, variables))
    settings = DebateSettings(
        model, tag_prefix, "kbci", temperature, replicate=replicate, seed=seed
    )
    asked = [(c, e) for c in nodes for e in nodes if c != e and (c, e) not in fixed]
    pairs = await _ask_pairs(settings, asked, context, samples, max_tokens, int(jobs))
    probability = {(r["cause"], r["effect"]): r["probability"] for r in pairs}
    derived, notes = knowledge_from_probabilities(
        probability,
        forbid_below=forbid_below,
        require_above=require_above,
        use_required=use_required,
        user=knowledge,
    )
    if algorithm == "direct_lingam":
        derived, more = lingam_consistent(derived, probability, nodes)
        notes += more
    final = await asyncio.to_thread(run, data, knowledge=derived)
    undecided = [f"{r['cause']} -> {r['effect']}" for r in pairs if r["probability"] is None]
    if undecided:
        notes.append(f"{len(undecided)} pair(s) had no valid answer (no constraint)")
    matrix = probability_matrix(nodes, pairs)
    return meter.result(
        name,
        final.graph,
        raw={
            "schema_version": SCHEMA_VERSION,
            "module": MODULE,
            "algorithm": algorithm,
            "first": first.to_dict(),
            "pairs": pairs,
            "probability": {"nodes": nodes, "matrix": matrix, "convention": "row = cause"},
            "knowledge": derived.to_dict(),
        },
        params={
            "algorithm": algorithm,
            "samples": samples,
            "temperature": temperature,
            "forbid_below": forbid_below,
            "require_above": require_above,
            "jobs": int(jobs),
            "tag_prefix": tag_prefix,
            "replicate": int(replicate),
            "seed": seed,
            "probability": matrix,
            "knowledge": derived.to_dict(),
            "undecided": undecided,
        },
        notes=list(dict.fromkeys([*first.notes, *notes, *final.notes])),
    )


def _variant(algorithm: str) -> Callable[..., Any]:
    """``allm_kbci`` with ``algorithm`` fixed, as a named coroutine function whose signature
    lacks ``algorithm`` (so the registry refuses ``algorithm=`` and names the rest)."""

    async def method(data: pd.DataFrame, **kwargs: Any) -> GraphResult:
        return await allm_kbci(data, algorithm=algorithm, **kwargs)

    full = inspect.signature(allm_kbci)
    method.__signature__ = full.replace(  # type: ignore[attr-defined]
        parameters=[p for n, p in full.parameters.items() if n != "algorithm"]
    )
    method.__name__ = method.__qualname__ = f"a{algorithm}_llm_kbci"
    method.__doc__ = f"LLM-KBCI with {algorithm} (see :func:`allm_kbci`)."
    return method


apc_llm_kbci = _variant("pc")
aexact_llm_kbci = _variant("exact")
aexact_scp_llm_kbci = _variant("exact_scp")
adirect_lingam_llm_kbci = _variant("direct_lingam")
pc_llm_kbci = sync_twin(apc_llm_kbci)
exact_llm_kbci = sync_twin(aexact_llm_kbci)
exact_scp_llm_kbci = sync_twin(aexact_scp_llm_kbci)
direct_lingam_llm_kbci = sync_twin(adirect_lingam_llm_kbci)

#: (registry name, sync method, description) of every variant.
METHODS: tuple[tuple[str, Callable[..., Any], str], ...] = (
    ("pc_llm_kbci", pc_llm_kbci, "SCP LLM-KBCI: PC rerun with LLM-derived background knowledge"),
    (
        "exact_llm_kbci",
        exact_llm_kbci,
        "SCP LLM-KBCI: Exact Search rerun within the LLM's super-graph (correct orientation)",
    ),
    (
        "exact_scp_llm_kbci",
        exact_scp_llm_kbci,
        "SCP LLM-KBCI with Exact Search read as SCP did (edges reversed): the published row",
    ),
    (
        "direct_lingam_llm_kbci",
        direct_lingam_llm_kbci,
        "SCP LLM-KBCI: DirectLiNGAM rerun with LLM-derived prior knowledge",
    ),
)

__all__ = [
    "ALGORITHMS",
    "METHODS",
    "allm_kbci",
    "knowledge_from_probabilities",
    "probability_matrix",
    "yes_fraction",
]
