"""Structured episode logs: one :class:`StepLog` per act or event, rendered to HTML.

Users debug simulations by reading what each agent saw, so every step keeps the context
each component contributed, and :meth:`EpisodeLog.to_html` renders a self-contained,
escaped transcript that opens in any browser.
"""

from __future__ import annotations

import html
from dataclasses import asdict, dataclass, field
from typing import Any


@dataclass(frozen=True)
class StepLog:
    """One logged step: who produced ``output`` for which ``kind`` of action, with context.

    ``context`` maps a component key (or ``"call_to_action"``) to the text it contributed;
    ``event`` is the resolved event statement, when a game master produced one.
    """

    step: int
    who: str
    kind: str
    output: str
    context: dict[str, str] = field(default_factory=dict)
    event: str | None = None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready copy."""
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> StepLog:
        """Rebuild a step from :meth:`to_dict` output."""
        return cls(
            step=int(data["step"]),
            who=str(data["who"]),
            kind=str(data["kind"]),
            output=str(data["output"]),
            context={str(k): str(v) for k, v in (data.get("context") or {}).items()},
            event=data.get("event"),
        )


_CSS = """
body{font-family:system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;
color:#222;background:#fafafa}
.step{border:1px solid #ddd;border-radius:6px;margin:.6rem 0;padding:.5rem .8rem;background:#fff}
.head{font-size:.85rem;color:#666}.who{font-weight:600;color:#124}
.out{white-space:pre-wrap;margin:.3rem 0}.event{white-space:pre-wrap;color:#142;
border-left:3px solid #7a7;padding-left:.5rem}
details{font-size:.85rem;color:#444}pre{white-space:pre-wrap;background:#f3f3f3;padding:.4rem}
"""


def keep_log(err: BaseException, log: EpisodeLog) -> BaseException:
    """Attach the episode's log so far to ``err`` (as ``err.episode_log``) unless an inner
    frame already did, so whoever catches a failed episode can still save its transcript."""
    if getattr(err, "episode_log", None) is None:
        err.episode_log = log  # type: ignore[attr-defined]
    return err


class EpisodeLog:
    """An append-only list of :class:`StepLog` entries for one episode."""

    def __init__(self, steps: list[StepLog] | None = None):
        self.steps: list[StepLog] = list(steps or [])

    def add(self, entry: StepLog) -> None:
        """Append one step."""
        self.steps.append(entry)

    def __len__(self) -> int:
        return len(self.steps)

    def to_list(self) -> list[dict[str, Any]]:
        """All steps as JSON-ready dictionaries, in order."""
        return [s.to_dict() for s in self.steps]

    @classmethod
    def from_list(cls, rows: list[dict[str, Any]]) -> EpisodeLog:
        """Rebuild a log from :meth:`to_list` output."""
        return cls([StepLog.from_dict(r) for r in rows])

    def to_html(self, title: str = "Episode") -> str:
        """A self-contained HTML transcript (inline CSS, no scripts; all text escaped)."""
        esc = html.escape
        parts = [
            "<!DOCTYPE html>",
            '<html lang="en"><head><meta charset="utf-8">',
            f"<title>{esc(title)}</title><style>{_CSS}</style></head><body>",
            f"<h1>{esc(title)}</h1>",
            f"<p>{len(self.steps)} steps</p>",
        ]
        for s in self.steps:
            parts.append('<div class="step">')
            parts.append(
                f'<div class="head">step {s.step} · <span class="who">{esc(s.who)}</span>'
                f" · {esc(s.kind)}</div>"
            )
            parts.append(f'<div class="out">{esc(s.output)}</div>')
            if s.event is not None:
                parts.append(f'<div class="event">{esc(s.event)}</div>')
            if s.context:
                parts.append("<details><summary>context</summary>")
                for key, text in s.context.items():
                    parts.append(f"<b>{esc(key)}</b><pre>{esc(text)}</pre>")
                parts.append("</details>")
            parts.append("</div>")
        parts.append("</body></html>")
        return "\n".join(parts)
