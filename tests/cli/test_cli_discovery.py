"""``silicolab discover`` and ``silicolab bench discovery`` as real subprocesses."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
from tests.cli.test_cli import run
from tests.discovery.mac_fakes import Oracle
from tests.support.cli import strict_json

from silicolab.discovery import load


def test_discover_pc_on_bundled_dataset_reproduces_published_scores(tmp_path: Path) -> None:
    out = run(["discover", "--dataset", "auto_mpg", "--method", "pc", "--json"], tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert (summary["scores"]["shd"], summary["scores"]["nhd_truncated"]) == (8, 0.48)
    run_dir = tmp_path / summary["run_dir"]
    record = json.loads((run_dir / "record.json").read_text())
    assert record["result"]["method"] == "pc" and record["scores"]["shd"] == 8
    assert "| shd | 8 |" in (run_dir / "report.md").read_text()


def test_discover_own_csv_with_knowledge_and_truth(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    a = rng.uniform(-1, 1, 2000)
    b = 2 * a + rng.uniform(-1, 1, 2000)
    c = -1.5 * b + rng.uniform(-1, 1, 2000)
    pd.DataFrame({"a": a, "b": b, "c": c}).to_csv(tmp_path / "mine.csv", index=False)
    (tmp_path / "truth.csv").write_text("cause,effect\na,b\nb,c\n")
    out = run(
        [
            "discover",
            "--data",
            "mine.csv",
            "--truth-edges",
            "truth.csv",
            "--method",
            "direct_lingam",
            "--forbid",
            "c->a",
            "--json",
        ],
        tmp_path,
    )
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert summary["scores"]["shd"] == 0
    assert sorted(map(tuple, summary["edges"]["directed"])) == [("a", "b"), ("b", "c")]


def test_discover_bad_input_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "bad.csv").write_text("x,y\n1,a\n2,b\n")
    cases = [
        (["discover", "--dataset", "nope"], "nope"),
        (["discover", "--dataset", "auto_mpg", "--method", "magic"], "unknown discovery method"),
        (["discover", "--data", "bad.csv"], "non-numeric"),
        (["discover", "--dataset", "auto_mpg", "--param", "alfa=0.1"], "alfa"),
        (["discover", "--dataset", "auto_mpg", "--require", "Weight=>Mpg"], "cause->effect"),
        (["discover", "--dataset", "auto_mpg", "--require", "Wait->Mpg"], "Wait"),
        (["discover"], "exactly one of --dataset"),
        (
            [
                "discover",
                "--dataset",
                "auto_mpg",
                "--method",
                "mac_meta_debate",
                "--model",
                "scripted",
                "--param",
                "bogus=1",
            ],
            "does not accept parameter(s) ['bogus']",
        ),
        (
            ["bench", "discovery", "--methods", "mac_meta_debate", "--datasets", "auto_mpg"],
            "need a language model",
        ),
    ]
    for args, fragment in cases:
        out = run(args, tmp_path)
        assert out.returncode == 2, (args, out.stderr)
        lines = out.stderr.strip().splitlines()
        assert len(lines) == 1 and fragment in lines[0], (args, out.stderr)


def test_bench_discovery_prints_ours_beside_published_and_resumes(tmp_path: Path) -> None:
    args = [
        "bench",
        "discovery",
        "--methods",
        "pc,direct_lingam",
        "--datasets",
        "auto_mpg,dwd_climate",
        "--json",
    ]
    out = run(args, tmp_path)
    assert out.returncode == 0, out.stderr
    rows = strict_json(out.stdout)["rows"]
    assert len(rows) == 4
    assert all(row["match"] for row in rows), rows
    again = run([*args, "--resume"], tmp_path)
    assert again.returncode == 0, again.stderr
    assert strict_json(again.stdout)["rows"] == rows


def test_discover_llm_method_through_an_openai_compatible_server(llm_server_factory, tmp_path):
    oracle = Oracle(load("auto_mpg").truth.edges)
    server = llm_server_factory(reply=oracle.http, faults=["500"])
    args = [
        "discover",
        "--dataset",
        "auto_mpg",
        "--method",
        "mac_meta_debate",
        "--model",
        "openai:oracle",
        "--base-url",
        server.base_url,
        "--json",
    ]
    out = run(args, tmp_path)
    assert out.returncode == 0, out.stderr
    summary = strict_json(out.stdout)
    assert summary["scores"]["shd"] == 0  # the oracle judge knows the truth
    assert summary["usage"]["calls"] >= 15 and summary["usage"]["input_tokens"] > 0
    assert server.stats.faults_by_kind == {"500": 1}  # retried, not fatal
    bench = run(
        [
            "bench",
            "discovery",
            "--methods",
            "pc,mac_single_agent",
            "--datasets",
            "auto_mpg",
            "--model",
            "openai:oracle",
            "--base-url",
            server.base_url,
            "--json",
        ],
        tmp_path,
    )
    assert bench.returncode == 0, bench.stderr
    rows = {r["method"]: r for r in strict_json(bench.stdout)["rows"]}
    assert rows["mac_single_agent"]["shd"] == 0 and rows["mac_single_agent"]["tokens"] > 0


def test_a_failed_coding_agent_is_reported_as_its_fallback_and_degraded(tmp_path: Path) -> None:
    """The scripted model writes no code: every attempt fails and GES runs instead."""
    coding = ["--model", "scripted", "--json"]
    bench = run(
        ["bench", "discovery", "--methods", "mac_debate_coding", "--datasets", "auto_mpg", *coding],
        tmp_path,
    )
    assert bench.returncode == 3, bench.stderr
    assert bench.stderr.startswith("DEGRADED: 1 of 1 units")
    out = strict_json(bench.stdout)
    (row,) = out["rows"]
    assert out["status"] == "degraded"
    assert row["shd"] is None and row["f1"] is None and "FAILED" in row["error"]
    assert (row["fallback"], row["fallback_shd"]) == ("ges", 4)
    assert "FAILED" in row["null_reasons"]["shd"]
    found = run(
        ["discover", "--dataset", "auto_mpg", "--method", "mac_debate_coding", *coding], tmp_path
    )
    assert found.returncode == 3, found.stderr
    assert "DEGRADED" in found.stderr and "coding executor" in found.stderr
    summary = strict_json(found.stdout)
    assert summary["status"] == "degraded" and summary["scores"] is None
    assert summary["fallback"]["algorithm"] == "ges" and summary["fallback"]["scores"]["shd"] == 4
    assert summary["health"]["degraded"] is True
