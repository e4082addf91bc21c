"""MAC's two hybrids: statistical evidence in the debate, or debate verdicts as knowledge.

* Coding-Debating (:func:`acoding_then_debating`): Debate-Coding runs first; then every
  meta-debate question carries, in words, what that algorithm found for the pair. The
  words are produced from the graph *object* (:func:`~.common.edge_sentence`), never by
  indexing a matrix, so the paper's transposition pitfall (reading a row = effect matrix as
  row = cause) cannot happen.
* Debating-Coding (:func:`adebating_then_coding`): the meta-debate runs first; its verdicts
  become :class:`~silicolab.discovery.knowledge.Knowledge` (yes -> required, no ->
  forbidden, undecided -> none) for Debate-Coding, whose debaters and executor see the
  constraints and whose fallback uses them. A pair judged causal both ways and debate edges
  on a cycle are left unconstrained (a causal graph is acyclic; LiNGAM and Exact Search
  reject cyclic requirements), and the notes say which.

The result's ``usage`` covers both phases (``by_module`` has ``meta`` and ``coding``);
``raw`` holds both transcripts.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import networkx as nx
import pandas as pd

from silicolab.core.records import SCHEMA_VERSION
from silicolab.core.sync import sync_twin
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.algorithms import algorithm_info
from silicolab.discovery.mac.coding import DEFAULT_ALGORITHMS, adebate_coding
from silicolab.discovery.mac.common import (
    Meter,
    Pair,
    check_data,
    check_model,
    edge_sentence,
)
from silicolab.discovery.mac.debate import ameta_debate
from silicolab.discovery.result import GraphResult, graph_edges
from silicolab.llm import LanguageModel


def verdicts_to_knowledge(
    verdicts: Mapping[Pair, bool | None], base: Knowledge | None = None
) -> tuple[Knowledge, list[str]]:
    """Debate verdicts as :class:`Knowledge`, added to ``base``; returns it and notes on
    the verdicts left unconstrained (both-way pairs, debate-required cycles)."""
    verdicts = dict(verdicts)
    notes: list[str] = []
    both = sorted({tuple(sorted(p)) for p, v in verdicts.items() if v and verdicts.get(p[::-1])})
    for a, b in both:
        verdicts[(a, b)] = verdicts[(b, a)] = None
    if both:
        notes.append(f"pairs judged causal both ways left unconstrained: {[list(p) for p in both]}")
    base = base or Knowledge()
    user_required = set(base.required)
    while True:
        required = user_required | {p for p, v in verdicts.items() if v}
        try:
            cycle = nx.find_cycle(nx.DiGraph(list(required)))
        except nx.NetworkXNoCycle:
            break
        freed = [(u, v) for u, v in cycle if (u, v) not in user_required]
        for pair in freed:
            verdicts[pair] = None
        notes.append(f"debate edges on a cycle left unconstrained: {[list(p) for p in freed]}")
    debate = Knowledge.from_verdicts(verdicts)
    merged = Knowledge(
        required=(*base.required, *debate.required),
        forbidden=(*base.forbidden, *debate.forbidden),
        tiers=base.tiers,
    )
    return merged, notes


def _combine(
    method: str,
    first: tuple[str, GraphResult],
    second: tuple[str, GraphResult],
    graph: Any,
    *,
    meter: Meter,
    extra_raw: Mapping[str, Any],
    extra_notes: Sequence[str] = (),
) -> GraphResult:
    notes = [f"{name}: {note}" for name, result in (first, second) for note in result.notes]
    return meter.result(
        method,
        graph,
        raw={
            "schema_version": SCHEMA_VERSION,
            "module": method,
            "order": [first[0], second[0]],
            first[0]: first[1].raw,
            second[0]: second[1].raw,
            **extra_raw,
        },
        params={first[0]: first[1].params, second[0]: second[1].params},
        notes=(*notes, *extra_notes),
    )


def _split(kwargs: Mapping[str, Any]) -> tuple[dict[str, Any], dict[str, Any]]:
    """Split shared keyword arguments into the meta-debate's and the coding module's."""
    shared = {"tag_prefix", "temperature", "max_rounds", "debater_max_tokens",
              "judge_max_tokens", "replicate", "seed", "description", "variables",
              "fidelity"}  # fmt: skip
    meta_only = {"jobs"}
    coding_only = {"algorithms", "max_repairs", "timeout_s", "memory_mb", "executor_max_tokens"}
    unknown = set(kwargs) - shared - meta_only - coding_only
    if unknown:
        raise TypeError(f"unexpected keyword argument(s) {sorted(unknown)}")
    meta = {k: v for k, v in kwargs.items() if k in shared | meta_only}
    coding = {k: v for k, v in kwargs.items() if k in shared | coding_only}
    return meta, coding


async def acoding_then_debating(
    data: pd.DataFrame,
    *,
    model: LanguageModel,
    knowledge: Knowledge | None = None,
    tag_prefix: str = "mac",
    algorithms: Sequence[str] = DEFAULT_ALGORITHMS,
    **kwargs: Any,
) -> GraphResult:
    """Coding-Debating hybrid. Keyword arguments are those of :func:`.adebate_coding` and
    :func:`.ameta_debate` (each gets its own; shared ones such as ``max_rounds`` go to
    both)."""
    nodes = check_data(data)
    model = check_model(model)
    meta_kw, coding_kw = _split(kwargs | {"tag_prefix": tag_prefix, "algorithms": algorithms})
    meter = Meter(model, tag_prefix)
    coding = await adebate_coding(data, model=model, knowledge=knowledge, **coding_kw)
    name = coding.params["algorithm"]
    title = algorithm_info(name).title.split(",")[0]
    evidence = {
        (p, q): f"{title} on the data: {edge_sentence(coding.graph, p, q)}"
        for p in nodes
        for q in nodes
        if p != q
    }
    note = (
        f"Each question carries what the {title} algorithm found in the data. Statistical "
        "results can be wrong (violated assumptions, unorientable edges): weigh them against "
        "your expert knowledge and the checks below, do not simply copy them."
    )
    meta = await ameta_debate(
        data,
        model=model,
        knowledge=knowledge,
        evidence=evidence,
        evidence_note=note,
        method="mac_coding_debating",
        **meta_kw,
    )
    return _combine(
        "mac_coding_debating",
        ("coding", coding),
        ("meta", meta),
        meta.graph,
        meter=meter,
        extra_raw={"coding_graph": graph_edges(coding.graph), "evidence_algorithm": name},
    )


async def adebating_then_coding(
    data: pd.DataFrame,
    *,
    model: LanguageModel,
    knowledge: Knowledge | None = None,
    tag_prefix: str = "mac",
    **kwargs: Any,
) -> GraphResult:
    """Debating-Coding hybrid. Keyword arguments as for :func:`acoding_then_debating`."""
    check_data(data)
    model = check_model(model)
    meta_kw, coding_kw = _split(kwargs | {"tag_prefix": tag_prefix})
    meter = Meter(model, tag_prefix)
    meta = await ameta_debate(data, model=model, knowledge=knowledge, **meta_kw)
    verdicts = {
        (row["cause"], row["effect"]): row["verdict"]
        for row in meta.raw["verdicts"]
        if row["by"] == "debate"
    }
    prior, prior_notes = verdicts_to_knowledge(verdicts, knowledge)
    coding = await adebate_coding(
        data, model=model, knowledge=prior, method="mac_debating_coding", **coding_kw
    )
    return _combine(
        "mac_debating_coding",
        ("meta", meta),
        ("coding", coding),
        coding.graph,
        meter=meter,
        extra_raw={"prior_knowledge": prior.to_dict()},
        extra_notes=[f"prior knowledge: {n}" for n in prior_notes],
    )


coding_then_debating = sync_twin(acoding_then_debating)


debating_then_coding = sync_twin(adebating_then_coding)
