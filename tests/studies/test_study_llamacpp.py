"""A whole study against a real llama.cpp server (a tiny random-weight GGUF the test builds).

The model's words are noise: the test asserts the pipeline's invariants — a complete
record, every condition once, failures counted in the health and never a crash."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.studies import load_example
from silicolab.studies.pipeline import StudyModels, StudyOptions
from silicolab.studies.study import run_study
from tests.support.llamacpp import LlamaCppServer, llamacpp_available
from tests.support.tiny_gguf import build_tiny_gguf

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(
        not llamacpp_available(),
        reason="llama-cpp-python and gguf are not installed (pip install 'silicolab[local]')",
    ),
]
KEY_ENV = "SILICOLAB_LLAMACPP_KEY"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[LlamaCppServer]:
    model_path = build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", seed=0)
    with LlamaCppServer(model_path, n_ctx=8192) as srv:
        yield srv


def test_study_runs_end_to_end_on_llamacpp(server, tmp_path, monkeypatch) -> None:
    monkeypatch.setenv(KEY_ENV, "sk-dummy-llamacpp")
    hypothesis = load_example("lawyer").model_copy(update={"max_statements": 2})
    model = load_model(
        "openai:tiny", base_url=server.base_url, api_key_env=KEY_ENV, json_mode="json_object",
        max_concurrency=1, cache_path=tmp_path / "cache.sqlite",
    )  # fmt: skip
    options = StudyOptions(conditions=2, jobs=2, statement_tokens=16)
    with Run.create(tmp_path, kind="study", slug="lawyer") as run:
        record = run_study(hypothesis, options, run=run, models=StudyModels(model, model, model))
    assert run.status in ("finished", "degraded")
    assert len(record["runs"]) == 2 and len({r["condition_id"] for r in record["runs"]}) == 2
    for condition in record["runs"]:
        assert condition["error"] is None or condition["health"]["unusable"]
        assert condition["stop_reason"] in ("coordinator", "cap", "error")
        assert condition["health"]["steps"] >= 1
        if condition["error"] is None:
            assert 1 <= len(condition["statements"]) <= 2
            assert condition["survey"] and condition["survey"][0]["raw"] is not None
    totals = record["health"]["totals"]
    assert totals["units"] == 2 and totals["steps"] >= 2
    ledger = run.info["llm_ledger"]["scientist"]  # run.json: process accounting
    assert ledger["calls"] >= totals["steps"] and ledger["output_tokens"] > 0
    assert (run.path / "data.csv").is_file()
