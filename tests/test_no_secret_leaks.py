"""An API key must never land in a run directory, a cache, a record, a report or a log."""

from __future__ import annotations

import logging

import pytest

from silicolab.core.errors import LLMError
from silicolab.llm import load_model
from silicolab.runs import Run
from silicolab.runtime import AsyncExecutor

KEY = "sk-leak-check-7c1f0e9a5b2d4c3e"


def test_api_key_never_appears_under_run_dir_cache_or_logs(
    llm_server_factory, tmp_path, monkeypatch
):
    monkeypatch.setenv("SILICOLAB_LEAK_TEST_KEY", KEY)

    def reply(body: dict) -> str:
        # a hostile server that echoes the key back in its reply
        return f"answer to {body['messages'][-1]['content']} with key {KEY}"

    server = llm_server_factory(reply=reply, faults=["500", "429", "drop"])
    log_file = tmp_path / "run-logs.txt"
    handler = logging.FileHandler(log_file)
    logging.getLogger("silicolab").addHandler(handler)
    logging.getLogger("silicolab").setLevel(logging.DEBUG)
    try:
        model = load_model(
            "openai:leaky",
            base_url=server.base_url,
            api_key_env="SILICOLAB_LEAK_TEST_KEY",
            cache_path=tmp_path / "cache" / "llm.sqlite",
            max_retries=2,
            timeout_s=2.0,
        )
        run = Run.create(
            tmp_path / "runs",
            kind="leak",
            config={
                "model": {
                    "spec": "openai:leaky",
                    "api_key": KEY,
                    "api_key_env": "SILICOLAB_LEAK_TEST_KEY",
                },
                "headers": {"Authorization": f"Bearer {KEY}"},
            },
        )

        async def ask(i: int) -> dict:
            completion = await model.agenerate(f"question {i}", tag="subject")
            return {"completion": completion.to_dict(), "model": repr(model.inner)}

        with run:
            results = AsyncExecutor(2).map(ask, range(6), key=str, run=run, on_error="record")
            errors = [r.error for r in results if r.error]
            run.write_record(
                {
                    "results": [r.value for r in results],
                    "errors": errors,
                    "ledger": model.ledger.summary(),
                }
            )
            run.write_report(f"# report\n\n{errors}\n")
        server.script_faults(["500"] * 3)  # three more failures exhaust max_retries=2
        with pytest.raises(LLMError) as info:
            model.generate("final question")
        assert KEY not in str(info.value)
    finally:
        logging.getLogger("silicolab").removeHandler(handler)
        handler.close()
    # the key did travel where it belongs: in the Authorization header to the server
    assert f"Bearer {KEY}" in server.stats.auth_headers_seen
    assert log_file.read_text()  # retries were logged
    scanned = 0
    for path in tmp_path.rglob("*"):
        if path.is_file():
            scanned += 1
            assert KEY.encode() not in path.read_bytes(), f"API key leaked into {path}"
    assert scanned >= 6  # run.json, events.jsonl, record.json, report.md, cache, log
