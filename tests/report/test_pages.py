"""Each page builder on real runs made in the test, and the files the report writes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from silicolab.report.html import build_report
from silicolab.report.html.blocks import Figure, Fold, Searchable, Table
from silicolab.report.html.build import build_page
from silicolab.report.html.graphs import compare_edges
from tests.report.runs import COMMANDS


def _walk(blocks):
    """Every block, nested ones included."""
    for block in blocks:
        yield block
        if block.kind in ("fold", "columns"):
            yield from _walk(block.blocks)
        elif block.kind == "searchable":
            yield from _walk(block.items)


def _blocks(page, anchor=None):
    sections = [s for s in page.sections if anchor is None or s.anchor == anchor]
    assert sections, f"no section {anchor!r}"
    return list(_walk([b for s in sections for b in s.blocks]))


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_every_command_writes_its_report_html(run_dirs: dict[str, Path], name: str) -> None:
    html = (run_dirs[name] / "report.html").read_text(encoding="utf-8")
    assert html.startswith("<!DOCTYPE html>") and "</html>" in html
    # self-contained: no external script, style, font or image
    assert not re.search(r"""(src|href)=["'](https?:)?//""", html)
    assert "@import" not in html and "url(http" not in html


def test_study_page(run_dirs: dict[str, Path]) -> None:
    run_dir = run_dirs["study"]
    record = json.loads((run_dir / "record.json").read_text())
    page = build_page(run_dir, save_figures=False)
    anchors = [s.anchor for s in page.sections]
    for anchor in ("hypothesis", "variables", "design", "conditions", "fit", "predictions",
                   "follow-on", "cost"):  # fmt: skip
        assert anchor in anchors
    (listing,) = [b for b in _blocks(page, "conditions") if isinstance(b, Searchable)]
    assert len(listing.items) == len(record["runs"]) == 8
    first = record["runs"][0]
    assert listing.items[0].anchor == f"condition-{first['condition_id']}"
    said = next(b for b in _walk(listing.items[0].blocks) if b.kind == "chat").statements
    assert [t for _, t in said] == [s["text"] for s in first["statements"]]
    fit = next(b for b in _blocks(page, "fit") if isinstance(b, Table))
    paths = [p for p in record["estimation"]["main"]["params"] if p["op"] == "~"]
    assert {r["rhs"] for r in fit.rows if r["op"] == "~"} == {p["rhs"] for p in paths}
    assert any(r["stars"] for r in fit.rows)  # the demo's hidden SCM has real effects
    figures = {b.name for b in _blocks(page) if isinstance(b, Figure)}
    assert {"scm", "predictions", "follow_on_scm"} <= figures
    # the scientist's explanations are on the page, grouped by variable
    folds = {b.anchor: b for b in _blocks(page, "variables") if isinstance(b, Fold) and b.anchor}
    own = [d for d in record["decisions"] if d["step"].startswith("buyer_budget.")]
    assert own and [f.summary for f in folds["decisions-buyer_budget"].blocks] == [
        d["step"] for d in own
    ]
    html = build_report(run_dir)
    assert record["decisions"][0]["explanation"] in html


def test_figures_are_saved_and_linked_from_report_md(run_dirs: dict[str, Path]) -> None:
    run_dir = run_dirs["study"]
    for name in ("scm", "predictions", "follow_on_scm"):
        assert (run_dir / "figures" / f"{name}.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert b"<svg" in (run_dir / "figures" / f"{name}.svg").read_bytes()[:600]
    markdown = (run_dir / "report.md").read_text()
    assert markdown.startswith("# ")  # the command's own report is kept
    assert "(figures/scm.png)" in markdown and "(figures/scm.svg)" in markdown
    assert markdown.count("## Figures") == 1


def test_rebuilding_is_deterministic_and_keeps_one_figure_list(run_dirs: dict[str, Path]) -> None:
    from silicolab.report.html import write_report

    run_dir = run_dirs["discover"]
    before = (run_dir / "figures" / "graphs.svg").read_bytes()
    first = (run_dir / "report.html").read_text()
    write_report(run_dir)
    assert (run_dir / "figures" / "graphs.svg").read_bytes() == before
    assert (run_dir / "report.html").read_text() == first
    assert (run_dir / "report.md").read_text().count("## Figures") == 1


def test_simulation_pages(run_dirs: dict[str, Path]) -> None:
    market = build_page(run_dirs["sim_market"], save_figures=False)
    record = json.loads((run_dirs["sim_market"] / "record.json").read_text())
    assert any(isinstance(b, Figure) and b.name == "grounded" for b in _blocks(market, "grounded"))
    (steps,) = [b for b in _blocks(market, "log") if isinstance(b, Searchable)]
    assert len(steps.items) == len(record["log"])
    # each component's contribution is folded inside its step
    acting = next(i for i, s in enumerate(record["log"]) if s["context"])
    inner = [b for b in steps.items[acting].blocks if isinstance(b, Fold)]
    assert [f.summary for f in inner] == [
        f"component: {k}" for k in record["log"][acting]["context"]
    ]
    talk = build_page(run_dirs["sim_bargaining"], save_figures=False)
    chats = [b for b in _blocks(talk, "outcome") if b.kind == "chat"]
    assert chats and len(chats[0].statements) == len(
        json.loads((run_dirs["sim_bargaining"] / "record.json").read_text())["transcript"]
    )


def test_discovery_page_marks_every_edge(run_dirs: dict[str, Path]) -> None:
    record = json.loads((run_dirs["discover"] / "record.json").read_text())
    page = build_page(run_dirs["discover"], save_figures=False)
    table = next(b for b in _blocks(page, "graphs") if isinstance(b, Table))
    truth = [tuple(e) for e in record["truth"]["edges"]]
    edges = record["result"]["edges"]
    classes = compare_edges(truth, map(tuple, edges["directed"]), map(tuple, edges["undirected"]))
    assert sorted((r["edge"], r["class"]) for r in table.rows) == sorted(
        (f"{u} -> {v}", k) for k, es in classes.items() for u, v in es
    )
    assert dict(page.facts)["SHD"] == record["scores"]["shd"]


def test_debate_page_lists_every_question(run_dirs: dict[str, Path]) -> None:
    record = json.loads((run_dirs["debate"] / "record.json").read_text())
    page = build_page(run_dirs["debate"], save_figures=False)
    debates = [b for b in _blocks(page, "debates") if isinstance(b, Fold) and b.anchor]
    assert len(debates) == len(record["debates"])
    questions = sum(len(d["questions"]) for d in record["debates"])
    assert sum(len(d.blocks) for d in debates) == questions


def test_causalab_trajectories(run_dirs: dict[str, Path]) -> None:
    page = build_page(run_dirs["causalab"], save_figures=False)
    (viewer,) = [b for b in _blocks(page, "trajectories") if isinstance(b, Searchable)]
    assert len(viewer.items) == 2
    steps = [b for b in viewer.items[0].blocks if isinstance(b, Fold)]
    assert steps and all(s.summary.startswith("step ") for s in steps)
    # each step shows the hypothesis beside the truth (same drawing reused when unchanged)
    assert all(any(isinstance(b, Figure) for b in _walk(s.blocks)) for s in steps)
    dsl = next(b.text for b in _walk(steps[-1].blocks) if b.kind == "code")
    assert "hypothesis:" in dsl and "->" in dsl and "action: submit" in dsl
    names = {b.name for b in _blocks(page) if isinstance(b, Figure)}
    assert {"steps_shd", "steps_f1", "accuracy"} <= names
    saved = build_page(run_dirs["causalab"]).figures  # saved for papers: not the step graphs
    assert {f.name for f in saved} == {"steps_shd", "steps_f1", "accuracy"}


def test_boxinggym_page(run_dirs: dict[str, Path]) -> None:
    page = build_page(run_dirs["boxinggym"], save_figures=False)
    names = {b.name for b in _blocks(page) if isinstance(b, Figure)}
    assert "budgets" in names
    assert {n.split("-")[0] for n in names} >= {"designs", "eig"}
    episodes = [b for b in _blocks(page, "episodes") if isinstance(b, Fold) and b.anchor]
    assert len(episodes) == 2


def test_bench_discovery_page_shows_the_anchors(run_dirs: dict[str, Path]) -> None:
    page = build_page(run_dirs["bench_discovery"], save_figures=False)
    table = next(b for b in _blocks(page, "results") if isinstance(b, Table))
    assert "published_shd" in table.highlight
    assert table.rows[0]["published_shd"] is not None


def test_boxinggym_page_compares_with_the_random_designer(run_dirs: dict[str, Path]) -> None:
    from silicolab.report.html.boxinggym import budget_curves, random_designer
    from silicolab.report.html.source import RunSource

    src = RunSource.load(run_dirs["boxinggym_reference"], save_figures=False)
    source, episodes = random_designer(src)
    assert source == run_dirs["boxinggym"].name and len(episodes) == 2
    assert {agent for _, agent in budget_curves(episodes)} == {"random"}
    page = build_page(run_dirs["boxinggym_reference"], save_figures=False)
    notes = [b.text for b in _blocks(page, "budgets") if b.kind == "text"]
    assert notes == [f"The random designer's curves come from the run {source}."]
    assert random_designer(RunSource.load(run_dirs["boxinggym"], save_figures=False)) == ("", [])


def test_an_unfinished_study_shows_its_finished_conditions(
    run_dirs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    from silicolab.report.html.build import BUILDERS
    from silicolab.runs import Run

    run_dir = shutil.copytree(run_dirs["study"], tmp_path / "running")
    (run_dir / "record.json").unlink()  # as while the conditions run
    page = build_page(run_dir, save_figures=False)
    (listing,) = [b for b in _blocks(page, "conditions") if isinstance(b, Searchable)]
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    assert len(listing.items) == len({e["unit"] for e in events if "condition_id" in e["data"]})
    for kind in [*BUILDERS, "something-new"]:  # no record at all: every page still draws
        assert "<h1" in build_report(Run.create(tmp_path / "empty", kind=kind).path)


def test_causalab_page_of_an_llm_scientist_shows_its_raw_output(run_dirs: dict[str, Path]) -> None:
    events = (run_dirs["causalab_llm"] / "events.jsonl").read_text().splitlines()
    step = json.loads(events[0])["data"]["record"]["steps"][0]
    assert step["raw_output"] and step["parse_failure"]
    page = build_page(run_dirs["causalab_llm"], save_figures=False)
    raw = [
        b for b in _blocks(page, "trajectories") if b.kind == "fold" and "raw output" in b.summary
    ]
    assert raw and raw[0].blocks[0].text == step["raw_output"]
    problems = [b.text for b in _blocks(page, "trajectories") if b.kind == "text"]
    assert any(t.startswith("parse: ") for t in problems)


def _cost_rows(run_dir: Path) -> list[dict]:
    page = build_page(run_dir, save_figures=False)
    table = next(b for b in _blocks(page, "cost") if isinstance(b, Table))  # calls by role
    return table.rows


def _tour_seconds(run_dir: Path) -> dict[str, object]:
    page = build_page(run_dir, save_figures=False)
    tables = [b for b in _blocks(page, "tour") if isinstance(b, Table)]
    return {r["method"]: r.get("runtime_s") for t in tables for r in t.rows if "method" in r}


def test_cost_and_timings_come_from_run_json_and_old_records_still_show_theirs(
    run_dirs: dict[str, Path], tmp_path: Path
) -> None:
    import shutil

    run_dir = shutil.copytree(run_dirs["study"], tmp_path / "run")
    info = json.loads((run_dir / "run.json").read_text())
    record = json.loads((run_dir / "record.json").read_text())
    assert "llm_ledger" not in record and "created_at" not in record  # the science only
    assert all("runtime_s" not in r for r in record["tour"]["discovery"]["rows"])
    rows = _cost_rows(run_dir)
    calls = {r["role"]: r["calls"] for r in rows if r["tag"] == "all"}
    assert calls == {role: entry["calls"] for role, entry in info["llm_ledger"].items()}
    seconds = _tour_seconds(run_dir)
    assert seconds == {m.split("/", 1)[1]: s for m, s in info["timings"].items()}
    # a run written before schema 2 kept both in its record: its page is the same
    record["llm_ledger"] = info.pop("llm_ledger")
    for row in record["tour"]["discovery"]["rows"]:
        row["runtime_s"] = info["timings"].pop(f"discovery/{row['method']}")
    (run_dir / "record.json").write_text(json.dumps(record))
    (run_dir / "run.json").write_text(json.dumps(info))
    assert _cost_rows(run_dir) == rows and _tour_seconds(run_dir) == seconds
