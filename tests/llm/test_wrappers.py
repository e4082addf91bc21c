"""Ledger prices, token-bucket limits and the SQLite cache under concurrent processes."""

from __future__ import annotations

import asyncio
import multiprocessing
import sqlite3
import time
from pathlib import Path

import pytest

from silicolab.core.errors import ConfigError
from silicolab.llm import Completion, Prices, SQLiteCache, Usage, cache_key, load_model
from silicolab.llm.base import make_request
from silicolab.llm.limits import TokenBucket


def test_ledger_cost_from_prices_and_per_tag_breakdown() -> None:
    model = load_model("scripted", default="a b c", prices={"input": 2.0, "output": 10.0})
    model.generate("one two", tag="subject")  # 2 in, 3 out
    model.generate("x", tag="judge")  # 1 in, 3 out
    summary = model.ledger.summary()
    assert (summary["input_tokens"], summary["output_tokens"]) == (3, 6)
    assert summary["cost"] == pytest.approx((3 * 2.0 + 6 * 10.0) / 1e6)
    assert summary["by_tag"]["subject"]["cost"] == pytest.approx((2 * 2.0 + 3 * 10.0) / 1e6)
    with pytest.raises(ConfigError, match="unknown price keys"):
        Prices.parse({"prompt": 1.0})


def test_cache_hits_cost_nothing(tmp_path: Path) -> None:
    model = load_model(
        "scripted",
        default="a b",
        prices={"input": 1e6, "output": 0},
        cache_path=tmp_path / "c.sqlite",
    )
    model.generate("p q r")
    model.generate("p q r")
    summary = model.ledger.summary()
    assert summary["calls"] == 2 and summary["cache_hits"] == 1
    assert summary["cost"] == pytest.approx(3.0)


async def test_token_bucket_waits_for_refill() -> None:
    bucket = TokenBucket(per_minute=60)  # one unit a second, burst of 60
    await bucket.acquire(59.7)
    start = time.perf_counter()
    await bucket.acquire(1)  # needs ~0.7 s of refill
    waited = time.perf_counter() - start
    assert 0.5 < waited < 1.5
    bucket.adjust(-10)  # unused reservation returned
    start = time.perf_counter()
    await bucket.acquire(5)
    assert time.perf_counter() - start < 0.1


async def test_requests_per_minute_limit_delays_the_call_beyond_the_burst() -> None:
    model = load_model("scripted", requests_per_minute=120)  # burst 120, then 2 per second
    start = time.perf_counter()
    await asyncio.gather(*(model.agenerate(f"q{i}") for i in range(121)))
    assert time.perf_counter() - start > 0.3


def test_cache_key_ignores_tag_but_not_parameters() -> None:
    ident = {"backend": "x"}
    base = make_request("hi", temperature=0.0)
    assert cache_key(ident, base) == cache_key(ident, make_request("hi", temperature=0.0, tag="t"))
    for other in (
        make_request("hi", temperature=0.5),
        make_request("hi", temperature=0.0, seed=1),
        make_request("hi", temperature=0.0, sample_index=2),
        make_request("hi", temperature=0.0, json_schema={"type": "object"}),
    ):
        assert cache_key(ident, other) != cache_key(ident, base)
    assert cache_key({"backend": "y"}, base) != cache_key(ident, base)


def _writer(path: str, worker: int, n: int) -> None:
    cache = SQLiteCache(path)
    for i in range(n):
        key = f"k{i % 50}"
        cache.put(key, Completion(text=f"w{worker}-{i}", usage=Usage(1, 1), model="m"))
        assert cache.get(key) is not None


def test_cache_is_safe_for_concurrent_processes(tmp_path: Path) -> None:
    path = str(tmp_path / "shared.sqlite")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(path, w, 200)) for w in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
    assert [p.exitcode for p in procs] == [0, 0, 0, 0]
    assert SQLiteCache(path).stats()["entries"] == 50
    assert sqlite3.connect(path).execute("PRAGMA integrity_check").fetchone() == ("ok",)


def test_a_file_that_is_not_sqlite_is_moved_aside_and_the_cache_rebuilt(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.sqlite"
    bad.write_bytes(b"this is not a database" * 100)
    assert SQLiteCache(bad).stats()["entries"] == 0
    (aside,) = tmp_path.glob("bad.sqlite.damaged-*")
    assert aside.read_bytes() == b"this is not a database" * 100
    assert f"moved it to {aside}" in capsys.readouterr().err


def test_a_cache_path_sqlite_cannot_open_is_a_clear_config_error(tmp_path: Path) -> None:
    (tmp_path / "a_folder.sqlite").mkdir()
    with pytest.raises(ConfigError, match="not a usable SQLite database"):
        SQLiteCache(tmp_path / "a_folder.sqlite")
    assert not list(tmp_path.glob("*.damaged-*"))  # not damage: nothing is moved
