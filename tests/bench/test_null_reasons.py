"""An empty published cell of a CausaLab row says whether the paper is silent or the bench
withholds its number (issue 25): a run in a scaling regime withholds the main results."""

from __future__ import annotations

from silicolab.bench.causalab import run_causalab_bench
from silicolab.cli.bench._run import table_rows


def test_a_regime_run_says_its_main_anchors_are_withheld() -> None:
    # before: "the published tables have no value for this row", though the paper has 94
    table = run_causalab_bench(
        ["4nodes"], "reference", episodes=1, jobs=1, observations=3, interventions=0
    )
    (row,) = table_rows(table)
    assert row["published_accuracy"] is None
    why = row["null_reasons"]["published_accuracy"]
    assert why.startswith("withheld: this run is the paper's observation-only regime")
    assert "docs/causalab.md" in why
    main = table_rows(run_causalab_bench(["4nodes"], "reference", episodes=1, jobs=1))[0]
    assert main["published_accuracy"] == 94
    # a metric the paper gives no number for, in the main setting: the paper is silent
    assert main["null_reasons"]["published_weight_f1"] == (
        "the published tables have no value for this row"
    )
