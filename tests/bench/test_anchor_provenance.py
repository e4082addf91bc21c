"""Honest anchors (issue 25, item 3): every published number a bench prints carries where
it comes from, the printed tables mark anything not read from a paper's table (with a
legend), ranges print as ranges, and a method is compared only with its own paper row."""

from __future__ import annotations

import pytest
from tests.discovery.mac_fakes import Oracle

from silicolab.bench.anchors import Kind, Provenance, count_kinds, mark_rows, marked
from silicolab.bench.boxinggym import PUBLISHED as BOXINGGYM
from silicolab.bench.causalab import PUBLISHED, find_anchor, run_causalab_bench
from silicolab.bench.causalab_anchors import BLOG
from silicolab.bench.discovery import PUBLISHED as MAC
from silicolab.bench.discovery import find_published, run_discovery_bench
from silicolab.discovery.datasets import load
from silicolab.llm import load_model
from silicolab.report.bench import causalab_view, discovery_view

LEGEND_LINES = (
    "≈ read off a figure (approximate)",
    "* stated in the paper's text, not read from a table",
    "† from another source than the paper (the authors' blog)",
)


def test_every_causalab_anchor_has_a_provenance_naming_where_it_is() -> None:
    for anchor in PUBLISHED:
        prov = anchor.provenance
        assert isinstance(prov, Provenance) and prov.kind in Kind and prov.where, anchor
        if prov.kind is Kind.TEXT:  # the paper's text: a section or the abstract
            assert prov.source == "paper" and ("§" in prov.where or "abstract" in prov.where)
        if prov.kind in (Kind.APPROXIMATE, Kind.OTHER):  # the blog's figures and text
            assert prov.source == BLOG, anchor
    with pytest.raises(TypeError):  # no anchor without provenance
        type(PUBLISHED[0])("4nodes", "gpt-5-mini", "accuracy", 48)


def test_causalab_counts_by_kind_match_the_spec() -> None:
    """Spec §11: the values marked ≈ are read off the blog's figures; the bold values are
    stated in the paper's text (32 of them); the early-commitment numbers are in the
    blog's text. The two Qwen-thinking ranges (≈36–38 at 5 nodes, ≈34–36 at 6) are one
    anchor each, no longer a range plus a single number."""
    kinds = count_kinds([a.provenance for a in PUBLISHED])
    assert kinds == {"table": 0, "text": 32, "approximate": 51, "other": 6, "derived": 0}
    assert sum(a.source == BLOG for a in PUBLISHED) == 51 + 6
    assert len(PUBLISHED) == 89 and not any(a.metric == "accuracy_range" for a in PUBLISHED)


def test_mac_and_boxinggym_cells_are_table_cells_with_their_row() -> None:
    for cell in MAC:
        prov = cell.provenance("SHD")
        assert prov.kind is Kind.TABLE and prov.where.startswith(f"Table {cell.table}, row ")
    for anchor in BOXINGGYM:
        prov = anchor.provenance
        assert prov.kind is Kind.TABLE and prov.where.startswith(f"Table {anchor.table}, row ")
    assert marked(0.28, None, MAC[0].provenance("NHD")) == "0.28"  # a table cell: no mark


def test_a_range_is_stored_as_low_high_and_prints_as_a_range() -> None:
    qwen = find_anchor("5nodes", "qwen3.5-thinking", "accuracy")
    assert qwen.bounds == (36, 38) and qwen.provenance.kind is Kind.APPROXIMATE
    hidden = find_anchor("4nodes_hidden_n2", "gpt-5-mini", "all_edge_f1")
    assert hidden.bounds == (0.61, 0.70)
    assert marked(hidden.value, hidden.high, hidden.provenance) == "0.61–0.7*"
    assert marked(qwen.value, qwen.high, qwen.provenance) == "≈36–38†"
    assert find_anchor("4nodes", "gpt-5-mini", "accuracy").bounds is None


def test_printed_causalab_table_marks_provenance_and_has_a_legend(capsys) -> None:
    table = run_causalab_bench(["4nodes", "4nodes_hidden_n1"], "reference", episodes=1, jobs=1)
    main, hidden = table.iloc[0], table.iloc[1]
    # the record keeps the number, a range as [low, high], and where each comes from
    assert main["published_accuracy"] == 94 and list(hidden["published_accuracy"]) == [40, 54]
    prov = hidden["published_provenance"]["published_all_edge_f1"]
    assert (prov["kind"], prov["low"], prov["high"]) == ("text", 0.61, 0.70)
    assert "Table 4" in prov["where"]
    assert main["published_provenance"]["published_accuracy"]["kind"] == "approximate"
    view = causalab_view(table, "reference", with_tokens=False)
    report = view.markdown(table)
    view.print(table, "runs/x")
    printed = capsys.readouterr().out
    for text in (report, printed):
        assert "| 4nodes | 1 | 100 | ≈94† |" in text
        assert "| 40–54* |" in text and "| 0.61–0.7* |" in text
        assert all(line in text for line in LEGEND_LINES)


def test_a_table_of_table_cells_needs_no_legend() -> None:
    rows, legend = mark_rows([{"published_shd": 8, "published_provenance": {}}])
    assert rows[0]["published_shd"] == 8 and legend == []


def test_mac_single_agent_is_compared_with_table_3_never_table_2_prompting_rows() -> None:
    expected = {"auto_mpg": (6, 0.28), "dwd_climate": (9, 0.361), "sachs": (24, 0.289)}
    for dataset, cell in expected.items():
        row = find_published("mac_single_agent", dataset, "openai:gpt-4o-mini")
        assert (row.shd, row.nhd, row.table) == (*cell, 3)
        assert row.row == "Table 3, row 'Our single-agent (GPT-4o mini)'"
    # Table 2's "Single-agent (GPT-4o / GPT-3.5)" rows are other authors' prompting methods
    for spec in ("openai:gpt-4o", "openai:gpt-3.5-turbo", "scripted:gpt-4o-mini-double", "x"):
        for dataset in expected:
            assert find_published("mac_single_agent", dataset, spec) is None, spec
    # an explicit model mapping, not a substring: a model the paper did not run has no row
    assert find_published("mac_meta_debate", "auto_mpg", "openai:my-gpt-4o-finetune") is None
    assert find_published("mac_meta_debate", "auto_mpg", "openai:gpt-4o-2024-08-06").shd == 5


def test_the_discovery_bench_puts_mac_single_agent_beside_table_3() -> None:
    auto = load("auto_mpg")
    oracle = Oracle(auto.truth.edges)
    model = load_model("scripted:gpt-4o-mini", fn=oracle.scripted)
    table = run_discovery_bench(["mac_single_agent"], ["auto_mpg"], model=model)
    row = table.iloc[0]
    assert (row.shd, row.published_shd, row.published_nhd) == (0, 6, 0.28)
    assert row.published_row == "Table 3, row 'Our single-agent (GPT-4o mini)'"
    assert row.published_provenance["published_shd"]["kind"] == "table"
    assert "Table 3" in discovery_view().markdown(table)
    other = load_model("scripted:gpt-4o", fn=Oracle(auto.truth.edges).scripted)
    again = run_discovery_bench(["mac_single_agent"], ["auto_mpg"], model=other)
    assert again.iloc[0].published_row == "" and again.iloc[0].match is None
