"""The paper's "exact-context re-evaluation" (spec §6.6-6.7): roots (Task-1), then the graph
(Task-2).

The paper's root-node scores do not come from the agent's final hypothesis: after the
episode, a new chat with the same model and settings shows the model the exact prompt of
its last exploration step (:func:`phase1_context`) and asks it to list the root nodes that
influence the frequency, with one formula from those roots (``prompts/root_reeval.j2``,
a system turn asking for one strict JSON object). The answer's ``root_nodes`` are scored
against the true ancestor roots (:func:`~silicolab.envs.causalab.metrics.root_prf_names`).
A reply cut at its token cap is asked again with a larger cap (1200, 2400, then 4000
tokens, as the paper's re-evaluation does).

:func:`apply_root_reeval` puts that score in the record's ``root_*`` metrics and keeps the
source-only score (roots of the final hypothesis) as ``root_*_source_only``; when the
re-evaluation reply held no usable ``root_nodes`` the root scores are 0, as upstream's
scorer gives an empty prediction, and the record says why.

Task-2 (:func:`graph_reeval`): a second new chat whose one user turn shows the final
hypothesis JSON and asks for "the final graph structure you currently believe in;
preserve directions, equation and coefficients", answered as one JSON object with exactly
``edges``, ``freq_equation`` and ``coefficients`` (``prompts/graph_reeval.j2``; the spec
names no system turn for it, so there is none), with the same escalating token caps.
:func:`apply_graph_reeval` scores *that* answer for the graph metrics (all-edge and
target-parent precision/recall/F1, SHD and its parts, weight F1 in both of our readings),
keeping the final hypothesis's as ``<metric>_source_only``; a reply without an ``edges``
list is scored as an empty graph, as for the roots, and the record says so.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from silicolab.envs.causalab.dsl import Hypothesis, extract_json
from silicolab.envs.causalab.metrics import formula_error, root_prf_names, structure_scores
from silicolab.envs.causalab.suite import TARGET
from silicolab.scientists.templates import render_template

if TYPE_CHECKING:
    from silicolab.envs.causalab.suite import GraphConfig
    from silicolab.llm import LanguageModel
    from silicolab.scientists.causalab.settings import AgentSettings

#: The token caps tried in turn while the reply is cut for length.
REEVAL_MAX_TOKENS = (1200, 2400, 4000)
PROMPTS = Path(__file__).parent / "prompts"
SYSTEM = "Answer with exactly one strict JSON object, with no Markdown and no other text."


def phase1_context(prompts: Sequence[str]) -> str:
    """The exploration prompt the re-evaluation shows (upstream's rule): the last prompt
    that is not a reactor-only screen and mentions the manipulator or the lab, else the
    first one holding the existing observations, else ``""``."""
    candidates = [
        text
        for text in prompts
        if not ("CRYSTAL REACTOR" in text and "PROPERTY MANIPULATOR" not in text)
        and ("PROPERTY MANIPULATOR" in text or "Causal Discovery" in text)
    ]
    if candidates:
        return candidates[-1]
    return next((text for text in prompts if "EXISTING OBSERVATIONS" in text), "")


def reeval_messages(phase1_prompt: str) -> list[dict[str, str]]:
    """The re-evaluation chat for the exploration prompt ``phase1_prompt``."""
    user = render_template(PROMPTS, "root_reeval.j2", phase1_prompt=phase1_prompt, target=TARGET)
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


async def _ask_escalating(
    model: LanguageModel,
    settings: AgentSettings,
    messages: list[dict[str, str]],
    *,
    seed: int | None,
    tag: str,
) -> list[Any]:
    """Ask ``messages``; while the reply is cut for length, again with the next cap of
    :data:`REEVAL_MAX_TOKENS`. Every completion made, the last one the answer."""
    completions = []
    for cap in REEVAL_MAX_TOKENS:
        completion = await model.agenerate(
            messages,
            temperature=settings.temperature,
            top_p=settings.top_p,
            max_tokens=cap,
            seed=seed,
            tag=tag,
        )
        completions.append(completion)
        if completion.finish_reason != "length":
            break
    return completions


def _outcome(text: str, completions: Sequence[Any], **extra: Any) -> dict[str, Any]:
    return {
        **extra,
        "raw_output": text[:8000],
        "max_tokens_used": REEVAL_MAX_TOKENS[len(completions) - 1],
    }


async def root_reeval(
    model: LanguageModel,
    settings: AgentSettings,
    phase1_prompt: str,
    *,
    seed: int | None,
    tag: str,
) -> tuple[dict[str, Any], list[Any]]:
    """Ask the re-evaluation question; the JSON-ready outcome and the completions made."""
    messages = reeval_messages(phase1_prompt)
    completions = await _ask_escalating(model, settings, messages, seed=seed, tag=f"{tag}/reeval")
    text = completions[-1].text
    parsed = extract_json(text)
    roots = parsed.get("root_nodes") if isinstance(parsed, Mapping) else None
    outcome = _outcome(text, completions, phase1_prompt_chars=len(phase1_prompt))
    if isinstance(roots, list):
        outcome["status"] = "ok"
        outcome["root_nodes"] = [str(r) for r in roots if r is not None]
        formula = parsed.get("frequency_formula") if isinstance(parsed, Mapping) else None
        outcome["frequency_formula"] = formula if isinstance(formula, str) else None
    else:
        outcome["status"] = "parse_error"
        outcome["root_nodes"] = []
    return outcome, completions


def graph_reeval_messages(final: Mapping[str, Any]) -> list[dict[str, str]]:
    """Task-2's chat: one user turn with the final hypothesis JSON ``final``."""
    user = render_template(
        PROMPTS, "graph_reeval.j2", hypothesis_json=json.dumps(dict(final), indent=2)
    )
    return [{"role": "user", "content": user}]


async def graph_reeval(
    model: LanguageModel,
    settings: AgentSettings,
    final: Mapping[str, Any],
    *,
    seed: int | None,
    tag: str,
) -> tuple[dict[str, Any], list[Any]]:
    """Ask Task-2 about the final hypothesis ``final`` (its DSL JSON); the JSON-ready
    outcome (``status``, the answered ``hypothesis`` or None, the raw reply) and the
    completions made."""
    messages = graph_reeval_messages(final)
    completions = await _ask_escalating(
        model, settings, messages, seed=seed, tag=f"{tag}/reeval_graph"
    )
    text = completions[-1].text
    parsed = extract_json(text)
    ok = isinstance(parsed, Mapping) and isinstance(parsed.get("edges"), list)
    hypothesis = None
    if ok:
        keys = ("edges", "freq_equation", "coefficients")
        hypothesis = {k: parsed[k] for k in keys if k in parsed}  # type: ignore[index]
    status = "ok" if ok else "parse_error"
    return _outcome(text, completions, status=status, hypothesis=hypothesis), completions


#: The metrics Task-2's graph gives (spec §6.7 step 5), the final hypothesis's kept beside.
GRAPH_METRICS = (
    *(
        f"{prefix}_{name}"
        for prefix in ("all_edge", "target_parent", "weight", "weight_terms")
        for name in ("precision", "recall", "f1")
    ),
    "shd",
    "shd_missing",
    "shd_extra",
    "shd_reversed",
    "n_pred_edges",
)


def apply_graph_reeval(
    metrics: dict[str, Any], reeval: Mapping[str, Any], config: GraphConfig
) -> None:
    """Score Task-2's graph into ``metrics`` (:data:`GRAPH_METRICS`), the final
    hypothesis's scores kept as ``<metric>_source_only``; an unusable reply is an empty
    graph (module docstring)."""
    answered = reeval.get("hypothesis") if reeval.get("status") == "ok" else None
    scores = structure_scores(Hypothesis.from_dict(answered), config)
    for name in GRAPH_METRICS:
        metrics[f"{name}_source_only"] = metrics.get(name)
        metrics[name] = scores[name]
    metrics["graph_source"] = "exact_context_reeval"
    metrics["reeval_graph_status"] = reeval.get("status")


def apply_root_reeval(
    metrics: dict[str, Any],
    reeval: Mapping[str, Any],
    config: GraphConfig,
    reactor_props: Mapping[str, float],
    target_frequency: float,
) -> None:
    """Score the re-evaluation's roots into ``metrics`` (module docstring), and its
    formula on the reactor's properties as ``reeval_formula_abs_error`` /
    ``reeval_formula_hit`` (within 5 Hz, inclusive, the paper's companion metric)."""
    scores = root_prf_names(list(reeval.get("root_nodes", [])), list(config.edges))
    for name in ("precision", "recall", "f1"):
        metrics[f"root_{name}_source_only"] = metrics.get(f"root_{name}")
        metrics[f"root_{name}"] = getattr(scores, name)
    metrics["root_source"] = "exact_context_reeval"
    metrics["reeval_status"] = reeval.get("status")
    formula = Hypothesis.from_dict(
        {"edges": [], "freq_equation": reeval.get("frequency_formula") or "", "coefficients": {}}
    )
    companion = formula_error(formula, reactor_props, target_frequency)
    metrics["reeval_formula_abs_error"] = companion["formula_abs_error"]
    metrics["reeval_formula_hit"] = companion["formula_hit"]
