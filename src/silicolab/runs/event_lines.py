"""One event of a run as its line of ``events.jsonl``, with secret values scrubbed.

The encoding half of writing events, kept apart from :mod:`silicolab.runs.run_dir` (the
file, its lock and its fsync) so that an executor can encode on its event loop and hand
only the write to a thread (:meth:`silicolab.runs.Run.encode_events`).
"""

from __future__ import annotations

import json
from typing import Any

from silicolab.core.files import jsonl_line
from silicolab.core.secrets import scrub_strings, scrub_text


def event_line(
    unit: str, data: dict[str, Any] | None, status: str, time: str, secrets: list[str]
) -> str:
    """The line of one event (``data`` stored as JSON; non-JSON values become strings),
    with every value of ``secrets`` replaced by ``"***"``."""
    event = {"unit": unit, "status": status, "time": time, "data": {} if data is None else data}
    line = jsonl_line(event)
    clean = scrub_text(line, secrets)
    if clean == line:
        return line
    try:
        return jsonl_line(json.loads(clean))
    except json.JSONDecodeError:  # a secret overlapped JSON syntax: scrub string by string
        return jsonl_line(scrub_strings(json.loads(line), secrets))


__all__ = ["event_line"]
