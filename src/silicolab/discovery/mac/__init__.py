"""MAC: multi-agent causal discovery with language models (arXiv 2407.15073 v2).

Methods (async first; the plain names are synchronous twins, registered by name in
:mod:`silicolab.discovery.registry` when this package is imported):

=========================  =======================  ===========================================
``mac_meta_debate``        :func:`meta_debate`      affirmative/negative debaters + judge, one
                                                    debate per source variable
``mac_debate_coding``      :func:`debate_coding`    plan debate picks an algorithm, an executor
                                                    codes it in the sandbox (with repairs)
``mac_coding_debating``    :func:`coding_then_debating`  statistical graph as debate evidence
``mac_debating_coding``    :func:`debating_then_coding`  debate verdicts as prior knowledge
``mac_single_agent``       :func:`single_agent`     one structured call per source variable
``*_llm_kbci``             :func:`allm_kbci`        SCP's LLM-KBCI baseline: LLM-derived prior
                                                    knowledge for PC / Exact Search / LiNGAM
=========================  =======================  ===========================================

Every result is a :class:`~silicolab.discovery.result.GraphResult` in silicolab's
convention (``A[i, j] = 1`` means ``i -> j``) with ``usage`` per module and role and the
full transcript in ``raw``. See ``docs/mac.md``.
"""

from __future__ import annotations

from silicolab.discovery.mac.coding import adebate_coding, debate_coding
from silicolab.discovery.mac.debate import ameta_debate, meta_debate
from silicolab.discovery.mac.hybrids import (
    acoding_then_debating,
    adebating_then_coding,
    coding_then_debating,
    debating_then_coding,
    verdicts_to_knowledge,
)
from silicolab.discovery.mac.kbci import METHODS as KBCI_METHODS
from silicolab.discovery.mac.kbci import allm_kbci
from silicolab.discovery.mac.single import asingle_agent, single_agent
from silicolab.discovery.registry import register

#: The registered methods whose debaters take ``fidelity`` ("faithful": the paper's
#: instructions, "fixed": ours; :data:`~silicolab.discovery.mac.panel.DEBATER_INSTRUCTIONS`).
DEBATE_METHODS = frozenset(
    {"mac_meta_debate", "mac_debate_coding", "mac_coding_debating", "mac_debating_coding"}
)

__all__ = [
    "DEBATE_METHODS",
    "acoding_then_debating",
    "adebate_coding",
    "adebating_then_coding",
    "allm_kbci",
    "ameta_debate",
    "asingle_agent",
    "coding_then_debating",
    "debate_coding",
    "debating_then_coding",
    "meta_debate",
    "single_agent",
    "verdicts_to_knowledge",
]

for _name, _fn, _description in (
    ("mac_meta_debate", meta_debate, "MAC meta-debate: LLM debaters and a judge decide each edge"),
    (
        "mac_debate_coding",
        debate_coding,
        "MAC debate-coding: LLM plan debate, then LLM-written causal-learn code in a sandbox",
    ),
    (
        "mac_coding_debating",
        coding_then_debating,
        "MAC hybrid: debate-coding graph given as evidence to the meta-debate",
    ),
    (
        "mac_debating_coding",
        debating_then_coding,
        "MAC hybrid: meta-debate verdicts used as prior knowledge by debate-coding",
    ),
    ("mac_single_agent", single_agent, "MAC baseline: one LLM call per source variable"),
):
    register(_name, _fn, kind="llm", description=_description)
for _name, _fn, _description in KBCI_METHODS:
    register(_name, _fn, kind="llm", description=_description)
