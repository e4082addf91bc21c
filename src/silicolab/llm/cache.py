"""The exact-prompt cache: SQLite, safe for concurrent threads and processes.

The key is the SHA-256 of the canonical JSON of the model's identity (backend, model,
server), the answer-determining parameters, the messages, the JSON schema and the
``sample_index``. Credentials are never part of it (the identity excludes them by
construction). A hit answers without touching the network or the rate limits; identical
requests in flight at the same time share one network call. A call made inside
:func:`silicolab.core.fresh.fresh_calls` (a unit that ``--retry-failed`` reruns) skips the
lookup and the sharing, reaches the model, and its answer replaces the cached one.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
import threading
import time
from pathlib import Path
from typing import Any

from silicolab.core.errors import ConfigError
from silicolab.core.files import canonical_json
from silicolab.core.fresh import wants_fresh
from silicolab.llm.base import LanguageModel, ModelWrapper
from silicolab.llm.cache_repair import ensure_usable
from silicolab.llm.types import Completion, Request, Usage

_SCHEMA = """
CREATE TABLE IF NOT EXISTS completions (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    text TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    finish_reason TEXT,
    created REAL NOT NULL,
    hits INTEGER NOT NULL DEFAULT 0
);
"""


def cache_key(identity: dict[str, Any], request: Request) -> str:
    """The cache key of ``request`` sent to the model described by ``identity``."""
    payload = {"model": identity, "params": request.params(), "messages": request.messages}
    return hashlib.sha256(canonical_json(payload).encode("utf-8")).hexdigest()


class SQLiteCache:
    """A completion store in one SQLite file (WAL mode, one connection per thread). A
    damaged file is moved aside and replaced by an empty cache with one warning line
    (:mod:`silicolab.llm.cache_repair`): a cache only saves calls."""

    def __init__(self, path: str | Path):
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as err:
            raise ConfigError(
                f"cannot create the cache folder {self.path.parent}: {err}; "
                "set cache_path to a writable location"
            ) from err
        self._local = threading.local()
        ensure_usable(self.path)  # a damaged cache is moved aside and rebuilt, with a warning
        self._connect()  # fail early on an unusable path

    def _connect(self) -> sqlite3.Connection:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            try:
                conn = sqlite3.connect(self.path, timeout=30.0, isolation_level=None)
                conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")
                conn.executescript(_SCHEMA)
            except sqlite3.DatabaseError as err:
                raise ConfigError(
                    f"the cache file {self.path} is not a usable SQLite database ({err}); "
                    "delete it or point cache_path elsewhere"
                ) from err
            self._local.conn = conn
        return conn

    def get(self, key: str) -> Completion | None:
        row = (
            self._connect()
            .execute(
                "SELECT model, text, input_tokens, output_tokens, finish_reason "
                "FROM completions WHERE key = ?",
                (key,),
            )
            .fetchone()
        )
        if row is None:
            return None
        model, text, input_tokens, output_tokens, finish_reason = row
        return Completion(
            text=text,
            usage=Usage(input_tokens, output_tokens),
            model=model,
            cached=True,
            latency_s=0.0,
            attempts=0,
            finish_reason=finish_reason,
        )

    def put(self, key: str, completion: Completion) -> None:
        self._connect().execute(
            "INSERT OR REPLACE INTO completions "
            "(key, model, text, input_tokens, output_tokens, finish_reason, created) "
            "VALUES (?, ?, ?, ?, ?, ?, ?)",
            (
                key,
                completion.model,
                completion.text,
                completion.usage.input_tokens,
                completion.usage.output_tokens,
                completion.finish_reason,
                time.time(),
            ),
        )

    def stats(self) -> dict[str, Any]:
        """Entries, stored tokens and file size, for ``silicolab cache stats``."""
        entries, tokens_in, tokens_out = (
            self._connect()
            .execute(
                "SELECT COUNT(*), COALESCE(SUM(input_tokens), 0), COALESCE(SUM(output_tokens), 0) "
                "FROM completions"
            )
            .fetchone()
        )
        files = [self.path.with_name(self.path.name + end) for end in ("", "-wal", "-shm")]
        size = sum(p.stat().st_size for p in files if p.is_file())  # not the damaged copies
        models = dict(
            self._connect()
            .execute("SELECT model, COUNT(*) FROM completions GROUP BY model ORDER BY model")
            .fetchall()
        )
        return {
            "path": str(self.path),
            "entries": entries,
            "input_tokens": tokens_in,
            "output_tokens": tokens_out,
            "bytes": size,
            "by_model": models,
        }

    def clear(self) -> int:
        """Delete every entry; returns how many there were."""
        conn = self._connect()
        (count,) = conn.execute("SELECT COUNT(*) FROM completions").fetchone()
        conn.execute("DELETE FROM completions")
        conn.execute("VACUUM")
        return count

    def close(self) -> None:
        conn = getattr(self._local, "conn", None)
        if conn is not None:
            conn.close()
            self._local.conn = None


class CachedModel(ModelWrapper):
    """Answers repeated requests from a :class:`SQLiteCache` instead of the network."""

    def __init__(self, inner: LanguageModel, cache: SQLiteCache):
        super().__init__(inner)
        self.cache = cache
        self._inflight: dict[str, asyncio.Future[Completion]] = {}

    async def acomplete(self, request: Request) -> Completion:
        key = cache_key(self.inner.identity(), request)
        fresh = wants_fresh()  # a retried unit: its cached answers are the failed ones
        hit = None if fresh else self.cache.get(key)
        if hit is not None:
            return hit
        pending = None if fresh else self._inflight.get(key)
        if pending is not None:
            # An identical request is on the wire: share its answer as a cache hit. If it
            # fails or is cancelled, fall through and make our own call.
            await asyncio.wait({pending})
            if not pending.cancelled() and pending.exception() is None:
                return _as_hit(pending.result())
        future: asyncio.Future[Completion] = asyncio.get_running_loop().create_future()
        self._inflight[key] = future
        try:
            completion = await self.inner.acomplete(request)
            self.cache.put(key, completion)
        except BaseException as err:
            if isinstance(err, asyncio.CancelledError):
                future.cancel()
            else:
                future.set_exception(err)
                future.exception()  # mark retrieved: sharers decide for themselves
            raise
        finally:
            if self._inflight.get(key) is future:
                del self._inflight[key]
        future.set_result(completion)
        return completion

    async def aclose(self) -> None:
        self.cache.close()
        await self.inner.aclose()


def _as_hit(completion: Completion) -> Completion:
    return Completion(
        text=completion.text,
        usage=completion.usage,
        model=completion.model,
        cached=True,
        latency_s=0.0,
        attempts=0,
        finish_reason=completion.finish_reason,
    )
