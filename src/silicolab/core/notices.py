"""One-line warnings for the person at the console, printed where the problem is found.

Some damage silicolab repairs instead of refusing (a damaged line of ``events.jsonl``, a
damaged LLM cache, a run folder whose ``run.json`` cannot be read while searching for the
run to resume). The command then carries on, and the user must still learn what was
skipped or moved: one ``warning: ...`` line on stderr, never on stdout (which ``--json``
keeps for its one object), printed once per process for the same problem however often
the file is read.
"""

from __future__ import annotations

import sys
import threading
from collections.abc import Hashable

_seen: set[Hashable] = set()
_guard = threading.Lock()


def warn(message: str, *, key: Hashable | None = None) -> None:
    """Print ``warning: MESSAGE`` as one line on stderr; with ``key``, only the first time
    this process warns with that key (a file read several times warns once)."""
    if key is not None:
        with _guard:
            if key in _seen:
                return
            _seen.add(key)
    sys.stderr.write(f"warning: {' '.join(message.split())}\n")
    sys.stderr.flush()


__all__ = ["warn"]
