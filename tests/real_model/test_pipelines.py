"""Every LLM pipeline end to end against a real model (SmolLM2-135M-Instruct, llama.cpp).

A 135M model is a weak scientist: these tests assert the pipelines' invariants — records
complete, every unit once, parse failures counted rather than hidden, real token usage,
no crash — never the quality of its answers. ``benchmarks/bench_real_model.py`` prints
the same runs as a table of figures.
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

from tests.real_model import pipelines

pytestmark = [pytest.mark.slow, pytest.mark.llamacpp]

AUTO_MPG = {"Mpg", "Cylinders", "Displacement", "Horsepower", "Weight", "Acceleration"}


def test_the_local_spec_reaches_the_served_model(model: Any, local_server: Any) -> None:
    """``load_model("local")`` reuses the session's server: one slot, json_object, a
    cache identity that names the model file (not the port)."""
    limits = model.inner.inner  # ledger -> cache -> limits
    assert limits.max_concurrency == 1
    backend = limits.inner.inner
    assert backend.base_url == local_server.base_url and backend.json_mode == "json_object"
    assert backend.identity()["file"] == "SmolLM2-135M-Instruct.Q4_1.gguf"
    reply = model.generate("Say hello.", max_tokens=8, temperature=0.0, seed=1)
    assert reply.text.strip() and 0 < reply.usage.output_tokens <= 8


@pytest.mark.parametrize("method", ["mac_meta_debate", "mac_debate_coding"])
def test_mac_on_auto_mpg(method: str, cli_env: dict[str, str], tmp_path: Path) -> None:
    measure = pipelines.mac(method, tmp_path / "runs", cli_env)
    code, out, err = measure.output
    assert code in (0, 3), err[-2000:]  # 3: a degraded run, reported as such
    assert out["status"] in ("finished", "degraded") and out["method"] == method
    edges = out["edges"]
    nodes = {n for kind in ("directed", "undirected", "bidirected") for e in edges[kind] for n in e}
    assert nodes <= AUTO_MPG
    scores, fallback = out["scores"], out["fallback"]
    if fallback and fallback["graph_is_fallback"]:  # every coding attempt failed
        assert scores is None and code == 3 and out["status"] == "degraded"
        scores = fallback["scores"]  # the statistical fallback's, reported as such
    assert isinstance(scores["shd"], int) and scores["shd"] >= 0
    assert measure.calls > 0 and measure.input_tokens > 0 and measure.output_tokens > 0
    record = json.loads((Path(out["run_dir"]) / "record.json").read_text(encoding="utf-8"))
    assert record["result"]["method"] == method
    if method == "mac_meta_debate":
        health = out["health"]
        totals = health["totals"]
        # every question once (one unit each), each decided in a round or by a forced verdict
        assert totals["units"] == len({u["unit"] for u in health["units"]}) > 0
        assert totals["steps"] >= totals["units"]
        assert 0 <= totals["parse_failures"] <= totals["steps"]
        assert measure.calls >= 15  # 5 debates x (affirmative, negative, judge)


async def test_causalab_episode_with_the_react_scientist(model: Any) -> None:
    measure = await pipelines.causalab(model)
    episode = measure.output
    assert episode.family == "causalab" and episode.scientist == "llm"
    assert episode.model == "local"
    assert 1 <= episode.steps <= 4  # pipelines.causalab: max_steps=4
    steps = episode.detail["steps"]
    assert all(s["parse_failure"] == (s["hypothesis"] is None) or s["refused"] for s in steps)
    assert episode.health.parse_failures == sum(s["parse_failure"] for s in steps)
    assert set(episode.scores) >= {"success"} and episode.scores["success"] in (0.0, 1.0)
    assert episode.usage["calls"] == measure.calls >= episode.steps
    assert measure.output_tokens > 0


async def test_boxinggym_episode_with_the_llm_scientist_and_novice(model: Any) -> None:
    measure = await pipelines.boxinggym(model)
    episode = measure.output
    assert episode.family == "boxinggym" and episode.steps == 2
    detail = episode.detail
    assert [s["n_experiments"] for s in detail["scores"]] == [0, 2]
    for score in [*detail["scores"], detail["novice"]]:
        assert len(score["predictions"]) == 2  # an unparsed answer is None, never coerced
        assert score["n_missing"] == sum(p is None for p in score["predictions"])
        if score["n_missing"] < 2:
            assert math.isfinite(score["standardized"])
    assert detail["explanation"] is not None
    assert set(detail["usage"]) == {"scientist", "novice"}
    assert detail["usage"]["novice"]["calls"] >= 2


def test_bargaining_simulation(model: Any) -> None:
    measure = pipelines.bargaining(model)
    result = measure.output
    assert 1 <= len(result.transcript) <= 4
    assert {t["speaker"] for t in result.transcript} <= {"Seller", "Buyer"}
    assert all(a != b for a, b in zip(result.transcript, result.transcript[1:], strict=False))
    assert len(result.survey) == 4 and all(a.raw is not None for a in result.survey)
    assert result.deal in (True, False, None)
    assert measure.calls >= len(result.transcript) + 4


def test_study_pipeline(model: Any, tmp_path: Path) -> None:
    measure = pipelines.study(model, tmp_path)
    run, record = measure.output
    assert run.status in ("finished", "degraded")
    assert len(record["runs"]) == 2 and len({r["condition_id"] for r in record["runs"]}) == 2
    for condition in record["runs"]:
        assert condition["error"] is None or condition["health"]["unusable"]
        assert condition["stop_reason"] in ("coordinator", "cap", "error")
        if condition["error"] is None:
            assert 1 <= len(condition["statements"]) <= 2
            assert condition["survey"] and condition["survey"][0]["raw"] is not None
    totals = record["health"]["totals"]
    assert totals["units"] == 2 and totals["steps"] >= 2
    assert measure.calls >= totals["steps"] and measure.output_tokens > 0
    assert (run.path / "record.json").is_file()
