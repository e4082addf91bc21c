"""A bundled dataset shows itself briefly: a one-line repr, and in Jupyter its description,
its ground truth's size and its first rows (not 7,466 rows of numbers)."""

from __future__ import annotations

from silicolab.discovery.datasets import load


def test_repr_is_one_short_line_with_the_tables_size() -> None:
    ds = load("sachs")
    text = repr(ds)
    assert "\n" not in text and len(text) < 120
    assert f"rows={len(ds.data)}" in text and f"variables={ds.data.shape[1]}" in text
    assert f"truth_edges={len(ds.truth.edges)}" in text


def test_html_shows_the_description_and_only_the_first_rows() -> None:
    ds = load("auto_mpg")
    page = ds._repr_html_()
    assert "<table" in page and "Auto MPG" in page
    assert page.count("<tr") == 1 + 5  # the header and the first five rows
