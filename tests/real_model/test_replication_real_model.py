"""A replication whose subjects are a real model (issue 28): SmolLM2-135M-Instruct through
the session's local llama.cpp server (the ``tests/real_model`` fixtures).

The lawyer study, shortened to two statements of at most 32 tokens, runs under one subject
model (``local``), ``WORDINGS`` wordings (the original and, with 2, a researcher's own
from a file) and two seeds, ``CONDITIONS`` conditions each. A
135M model answers badly and a few conditions fit poorly, so the test asserts invariants
only: the replication ends (finished or degraded, never a crash), every (variant,
condition) unit ran once and called the model, and each hypothesized path ends with a
verdict stated with its rule, or with a named reason: a ``fit_error`` on every variant
that gave no estimate, or the reason each of its variant rows was excluded from pooling.
The verdicts and reasons it met are printed (``pytest -s``) for the benchmark notes.
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import silicolab as sl
from silicolab.runs import Run
from silicolab.studies import load_example
from silicolab.studies.replication.run import NO_ESTIMATE
from silicolab.studies.replication.verdict import RULES, VERDICTS
from tests.real_model import pipelines

pytestmark = [pytest.mark.slow, pytest.mark.llamacpp]

#: 2 in ``make test`` (too few rows to fit: every path ends with its named reason, which is
#: what a real model's run must never lose); the note's measurement used 4 and 8
CONDITIONS = int(os.environ.get("SILICOLAB_REAL_REPLICATION_CONDITIONS", "2"))
#: 1 in ``make test``; the note's 16-condition measurement used 2 (a wordings file)
WORDINGS = int(os.environ.get("SILICOLAB_REAL_REPLICATION_WORDINGS", "1"))
SEEDS = 2
#: The second wording of the lawyer study (every treatment value and level kept).
REWORDED = {
    "scenario": "A law firm is choosing whether to take on a new lawyer after an interview.",
}


def _replicate(tmp_path: Path) -> tuple[Any, float]:
    hypothesis = load_example("lawyer").model_copy(update={"max_statements": 2})
    config = tmp_path / "silicolab.yaml"  # a cold cache: the run meets the model
    config.write_text(f"cache_path: {tmp_path / 'cache.sqlite'}\n", encoding="utf-8")
    wordings: int | Path = 1
    if WORDINGS == 2:
        wordings = tmp_path / "wordings.yaml"
        wordings.write_text(json.dumps([REWORDED]), encoding="utf-8")  # JSON is YAML
    started = time.perf_counter()
    result = sl.replicate_study(
        hypothesis, models=[pipelines.SPEC], wordings=wordings, seeds=SEEDS, subjects="llm",
        conditions=CONDITIONS, jobs=2, statement_tokens=32, config=config,
        runs_dir=tmp_path / "runs", notify=lambda line: None,
    )  # fmt: skip
    return result, time.perf_counter() - started


def _reason(path: str, record: dict[str, Any]) -> str | None:
    """Why ``path`` has no verdict: the fit errors of the variants, when none gave a row."""
    errors = [v["fit_error"] for v in record["variants"] if v["fit_error"]]
    rows = [r for r in record["rows"] if r["path"] == path]
    return "; ".join(sorted(set(errors))) if not rows and errors else None


def test_a_real_model_replication_ends_with_a_verdict_or_a_reason_per_path(
    local_server: Any, tmp_path: Path
) -> None:
    result, wall = _replicate(tmp_path)
    record = result.record
    assert result.status in ("finished", "degraded")
    # every (variant, condition) once, each unit calling the model
    units = [e for e in Run.open(result.run_dir).events() if e["status"] == "ok"]
    keys = [e["unit"] for e in units]
    assert not [k for k, n in Counter(keys).items() if n > 1]
    conditions = [e for e in units if e["unit"] != "wordings"]
    ids = [f"m0w{w}s{s}" for w in range(WORDINGS) for s in range(SEEDS)]
    assert len(conditions) == len(ids) * CONDITIONS
    assert {k.split("/")[0] for k in keys} == {"wordings", *ids}
    assert all(e["data"]["calls"] > 0 for e in conditions)
    variants = record["variants"]
    assert [v["id"] for v in variants] == ids
    assert all(v["conditions"] == CONDITIONS and v["model"] == pipelines.SPEC for v in variants)
    for v in variants:  # estimates, or the reason there are none
        assert (v["paths"] > 0) != bool(v["fit_error"]), v
    # each hypothesized path: a verdict with its rule, or a named reason
    hypothesized = {f"{c} -> hired" for c in ("passed_bar", "friendliness", "height_cm")}
    judged = {p["path"]: p for p in record["paths"]}
    assert set(judged) == hypothesized  # a path no fit estimated is reported too
    seen = {}
    for path in sorted(hypothesized):
        verdict = judged[path]["verdict"]
        if verdict["name"] == NO_ESTIMATE:  # the reason: the variants' fit problems
            assert verdict["detail"] and _reason(path, record), f"{path}: no reason named"
            seen[path] = f"no verdict: {verdict['detail']}"
        else:
            assert verdict["name"] in VERDICTS and verdict["rule_text"] == RULES[verdict["name"]]
            seen[path] = verdict["name"]
    assert set(result.verdicts) == set(judged)
    summary = json.loads(json.dumps(result.to_dict()))  # what --json prints: JSON-ready
    assert [p["path"] for p in summary["paths"]] == list(judged)
    print(f"\nreplication with {pipelines.SPEC}: {wall:.0f} s, status {result.status}")
    for v in variants:
        print(f"  variant {v['id']}: {v['paths']} path rows, na {v['na']}, "
              f"fit_error {v['fit_error']}")  # fmt: skip
    for path, outcome in seen.items():
        print(f"  {path}: {outcome}")
