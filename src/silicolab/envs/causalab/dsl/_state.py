"""State carried between agent steps, and the repair prompt (spec §5.2, §5.4 rule 7, §4.4).

The controller shows the model its own previous ``past_data``, ``hypothesis`` and
``memory`` (each truncated to 4000 characters) and the history of its *own* previous
action JSONs, newest first, within a 16384-character budget. Environment observations are
not replayed; only the current screen is shown, by the caller.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from silicolab.envs.causalab.dsl._record import DSLRecord

STATE_FIELD_CHARS = 4000
HISTORY_CHARS = 16384
EMPTY_HYPOTHESIS: dict[str, Any] = {"edges": [], "freq_equation": "", "coefficients": {}}


def truncate_field(text: str, limit: int = STATE_FIELD_CHARS) -> str:
    """The first ``limit`` characters, marked when something was cut."""
    return text if len(text) <= limit else text[:limit] + " …[truncated]"


def dump_json(value: Any) -> str:
    """``value`` as one line of JSON, non-ASCII kept (what the agent reads)."""
    return json.dumps(value, ensure_ascii=False)


def repair_message(errors: Sequence[str]) -> str:
    """The re-prompt sent after an invalid reply: numbered errors plus the instruction to
    return the full corrected JSON (spec §5.4 rule 7)."""
    lines = [
        "Your previous reply could not be accepted because of these problems:",
        *(f"{i}. {error}" for i, error in enumerate(errors, start=1)),
        "",
        "Return the full corrected JSON object (memory, thought, past_data, hypothesis, "
        "experiment and the action fields), and nothing else.",
    ]
    return "\n".join(lines)


@dataclass
class DSLState:
    """The "Previous State" and action history one agent carries across steps.

    ``update`` is called with each validated record; ``record_action`` alone when a step
    failed validation but its action (or a WAIT) was still executed, so the previous
    memory, past_data and hypothesis carry forward unchanged (spec §5.2).
    """

    memory: str = ""
    past_data: list[dict] = field(default_factory=list)
    hypothesis: dict[str, Any] = field(default_factory=lambda: dict(EMPTY_HYPOTHESIS))
    action_history: list[dict] = field(default_factory=list)

    def update(self, record: DSLRecord) -> None:
        """Adopt the record's memory, past_data and hypothesis; log its action."""
        self.memory = record.memory
        self.past_data = list(record.past_data)
        self.hypothesis = record.hypothesis.to_dict()
        self.record_action(record.action)

    def record_action(self, action: dict) -> None:
        """Append one executed action (own actions only; observations are never replayed)."""
        self.action_history.append(dict(action))

    def render_history(self) -> str:
        """Own previous actions as JSON lines, newest first, within 16384 characters."""
        lines: list[str] = []
        used = 0
        for action in reversed(self.action_history):
            line = dump_json(action)
            if used + len(line) + 1 > HISTORY_CHARS:
                break
            lines.append(line)
            used += len(line) + 1
        return "\n".join(lines) if lines else "(none yet)"

    def render(self) -> str:
        """The "Previous State" and "History of action-observations" prompt blocks."""
        return "\n".join(
            [
                "Previous State:",
                f"past_data: {truncate_field(dump_json(self.past_data))}",
                f"hypothesis: {truncate_field(dump_json(self.hypothesis))}",
                f"memory: {truncate_field(self.memory)}",
                "",
                "History of action-observations (your own previous actions, newest first):",
                self.render_history(),
            ]
        )
