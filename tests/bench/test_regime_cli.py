"""``silicolab bench causalab --regime``: the anchors of the paper's scaling regimes, marked,
in the console, ``report.md``, ``report.html`` and ``--json``, as a real subprocess."""

from __future__ import annotations

import html
from pathlib import Path

from tests.cli.test_cli import run
from tests.support.cli import strict_json

BENCH = ["bench", "causalab", "--suite", "4nodes_hidden_n1", "--episodes", "1", "--jobs", "1"]


def test_regime_anchors_are_shown_marked_with_whether_the_run_matches(tmp_path: Path) -> None:
    out = run([*BENCH, "--regime", "observation-only", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    regime = summary["regime"]
    assert regime["regime"] == "observation-only" and "does not match" in regime["match"]
    cells = {(a["suite"], a["model"], a["metric"]): a for a in regime["anchors"]}
    assert cells["6nodes", "gpt-5.2-high", "accuracy"]["published"] == 92
    mini = cells["4nodes", "gpt-5-mini", "accuracy"]
    assert mini["published"] == [74, 76]
    assert mini["published_provenance"]["published"]["kind"] == "approximate"
    # the main rows carry their provenance too
    row = summary["rows"][0]
    assert row["published_accuracy"] == [40, 54]
    assert row["published_provenance"]["published_accuracy"]["kind"] == "text"
    run_dir = tmp_path / summary["run_dir"]
    report = (run_dir / "report.md").read_text(encoding="utf-8")
    page = html.unescape((run_dir / "report.html").read_text(encoding="utf-8"))
    for text in (report, page):
        assert "40–54*" in text and "92*" in text and "≈74–76†" in text
        assert "stated in the paper's text, not read from a table" in text
        assert "read off a figure" in text and "does not match observation-only" in text

    shown = run([*BENCH, "--regime", "mixed"], tmp_path)  # the console (a pipe: Markdown)
    assert shown.returncode == 0, shown.stderr
    assert "the paper's mixed regime" in shown.stdout and "≈58†" in shown.stdout
    assert "| 4nodes_hidden_n1 | 1 |" in shown.stdout and "40–54*" in shown.stdout
    assert "our run is the mixed regime at the main budget" in shown.stdout


def test_intervention_only_has_no_numbers_and_a_bad_regime_is_one_line(tmp_path: Path) -> None:
    out = run([*BENCH, "--regime", "intervention-only"], tmp_path)
    assert out.returncode == 0, out.stderr
    assert "the paper gives no numbers for this regime" in out.stdout
    bad = run([*BENCH, "--regime", "interventions"], tmp_path)
    assert bad.returncode == 2 and len(bad.stderr.strip().splitlines()) == 1
    assert "--regime interventions: use one of" in bad.stderr and "observation-only" in bad.stderr


def test_a_scaling_setting_runs_and_is_compared_only_with_its_regime(tmp_path: Path) -> None:
    args = ["bench", "causalab", "--suite", "4nodes", "--episodes", "2", "--jobs", "1"]
    out = run([*args, "--observations", "3", "--interventions", "0", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    (row,) = summary["rows"]
    assert row["observations"] == 3 and row["interventions"] == 0
    assert row["budget_used"] == 0  # observation-only: no adjustment was possible
    assert row["published_accuracy"] is None  # not the main runs' setting: not compared
    assert row["published_setting"] == "observation-only (not the main runs)"
    regime = summary["regime"]  # its regime's points are shown without asking
    assert regime["regime"] == "observation-only"
    assert "3 prior records and 0 interventions" in regime["match"]
    assert "is in the observation-only regime" in regime["match"]
    stored = strict_json((tmp_path / summary["run_dir"] / "run.json").read_text())
    assert stored["config"]["observations"] == 3 and stored["config"]["interventions"] == 0

    other = run([*args, "--interventions", "4", "--regime", "observation-only", "--json"], tmp_path)
    assert other.returncode == 0, other.stderr
    assert (
        "is the mixed regime, not observation-only" in strict_json(other.stdout)["regime"]["match"]
    )

    (tmp_path / "none").mkdir()
    nothing = run([*args, "--observations", "0", "--interventions", "0"], tmp_path / "none")
    assert nothing.returncode == 2 and "nothing to learn from" in nothing.stderr
    assert not (tmp_path / "none" / "runs").exists()
