"""The scientist chain's journal: every accepted step on disk as it is taken.

``study hypothesis -o rent.yaml`` asks the scientist model some fifty small questions. Each
accepted reply is appended (flushed and fsynced) to ``rent.steps.jsonl`` beside the output
file, so a reply that stays invalid at step N keeps steps 1..N-1, their decisions and
explanations. ``study hypothesis --resume rent.yaml`` replays the accepted replies without a
single model call (the chain is deterministic given its replies) and asks again only from
the first missing step; a step that failed before is asked with a fresh sample identity
(``<seed>:<step>#<k>``), since the exact-prompt cache would return the same bad reply.

File layout, one JSON object per line::

    {"kind": "silicolab-hypothesis-steps", "version": 1, "scenario": ..., "n_causes": 3,
     "seed": 0, "temperature": 0.4, "name": null, "model": "openai:..."}
    {"step": "agents", "reply": {"explanation": ..., "agents": [...]}}
    {"step": "deal.units", "failed": "ParseFailure: ...", "raw": "the reply's start"}
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from silicolab.core.errors import InputError
from silicolab.core.files import append_jsonl, read_jsonl
from silicolab.runs.health import cut

KIND = "silicolab-hypothesis-steps"
VERSION = 1
#: The settings a resume takes from the journal (they decide which steps are asked).
SETTINGS = ("scenario", "n_causes", "seed", "temperature", "name")


def journal_path(out: str | Path) -> Path:
    """The journal of the hypothesis file ``out``: ``rent.yaml`` -> ``rent.steps.jsonl``; a
    journal path is its own journal."""
    out = Path(out)
    if out.name.endswith(".steps.jsonl"):
        return out
    return out.with_name(f"{out.stem if out.suffix else out.name}.steps.jsonl")


@dataclass
class StepJournal:
    """The accepted replies and failed attempts of one scientist chain, by step identity
    (``agents``, ``deal.units``...), backed by an append-only JSONL file."""

    path: Path
    settings: dict[str, Any]
    replies: dict[str, dict[str, Any]] = field(default_factory=dict)
    failures: dict[str, int] = field(default_factory=dict)

    @classmethod
    def create(cls, path: str | Path, **settings: Any) -> StepJournal:
        """A new, empty journal at ``path`` (an old one there is replaced)."""
        path = Path(path)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("", encoding="utf-8")
        header = {"kind": KIND, "version": VERSION, **settings}
        append_jsonl(path, header)
        return cls(path, dict(settings))

    @classmethod
    def open(cls, path: str | Path) -> StepJournal:
        """The journal at ``path`` (or the journal of the hypothesis file ``path``)."""
        path = journal_path(path)
        if not path.is_file():
            raise InputError(
                f"no scientist journal {path} to resume: it is written by 'silicolab study "
                "hypothesis -o FILE' beside FILE; pass the same FILE to --resume"
            )
        lines = read_jsonl(path)
        header = lines[0] if lines else {}
        if not isinstance(header, dict) or header.get("kind") != KIND:
            raise InputError(f"{path} is not a scientist journal (its first line has no kind)")
        settings = {k: v for k, v in header.items() if k not in ("kind", "version")}
        journal = cls(path, settings)
        for line in lines[1:]:
            step = line.get("step") if isinstance(line, dict) else None
            if not isinstance(step, str):
                continue
            if "reply" in line:
                journal.replies[step] = line["reply"]
            elif "failed" in line:
                journal.failures[step] = journal.failures.get(step, 0) + 1
        return journal

    def reply(self, step: str) -> dict[str, Any] | None:
        """The accepted reply of ``step``, if any."""
        return self.replies.get(step)

    def attempt(self, step: str) -> int:
        """How many times ``step`` failed before: its next sample identity's suffix."""
        return self.failures.get(step, 0)

    def accept(self, step: str, reply: dict[str, Any]) -> None:
        self.replies[step] = reply
        append_jsonl(self.path, {"step": step, "reply": reply})

    def fail(self, step: str, error: BaseException) -> None:
        self.failures[step] = self.failures.get(step, 0) + 1
        raw = str(getattr(error, "raw", "") or "")
        line = {"step": step, "failed": f"{type(error).__name__}: {cut(str(error), 400)}"}
        append_jsonl(self.path, {**line, "raw": cut(raw, 400)})

    @property
    def accepted(self) -> int:
        return len(self.replies)


def open_chain(
    out: str | Path,
    *,
    resume: str | Path | None,
    model: str,
    scenario: str | None = None,
    n_causes: int | None = None,
    seed: int | None = None,
    temperature: float | None = None,
) -> StepJournal:
    """The journal of a new chain for ``scenario`` written beside ``out`` (settings left
    ``None`` take the chain's defaults), or with ``resume`` the journal to continue, whose
    stored settings win: a setting given here that contradicts one is refused."""
    if resume is not None:
        journal = StepJournal.open(resume)
        text = scenario.strip() if scenario is not None else None
        given = {"scenario": text, "n_causes": n_causes, "seed": seed}
        differences = same_settings(journal, **given, temperature=temperature)
        if differences:
            raise InputError(
                f"--resume continues {journal.path} with its stored settings, but you gave "
                f"{'; '.join(differences)}; drop those, or start anew without --resume"
            )
        journal.settings.setdefault("out", str(out))
        return journal
    if scenario is None or len(scenario.strip()) < 10:
        raise InputError(
            "the scenario is empty or too short; describe it in a sentence (or continue a "
            "failed chain with --resume FILE)"
        )
    return StepJournal.create(
        journal_path(out),
        scenario=scenario.strip(),
        n_causes=3 if n_causes is None else n_causes,
        seed=0 if seed is None else seed,
        temperature=0.4 if temperature is None else float(temperature),
        name=None,
        model=model,
        out=str(out),
    )


async def ajournaled_hypothesis(journal: StepJournal, model: Any) -> Any:
    """Run (or continue) the scientist chain of ``journal`` with ``model``; a step that
    fails names itself, a sample reply, what is kept and the resume command. The journal
    is removed once the hypothesis is complete (the hypothesis file holds every
    decision)."""
    from silicolab.core.errors import LLMError, ParseFailure
    from silicolab.studies.scientist._generate import agenerate_hypothesis

    s = journal.settings
    try:
        hypothesis = await agenerate_hypothesis(
            s["scenario"],
            model,
            n_causes=int(s["n_causes"]),
            seed=int(s["seed"]),
            temperature=float(s["temperature"]),
            name=s.get("name"),
            journal=journal,
        )
    except (ParseFailure, LLMError) as exc:
        kept = (
            f"; the {journal.accepted} accepted steps are kept in {journal.path}: continue "
            f"with 'silicolab study hypothesis --resume {s.get('out') or journal.path}'"
        )
        if isinstance(exc, ParseFailure):
            raise ParseFailure(f"{exc}{kept}", raw=exc.raw, attempts=exc.attempts) from exc
        raise LLMError(f"{exc}{kept}", attempts=exc.attempts, status=exc.status) from exc
    return hypothesis


def same_settings(journal: StepJournal, **given: Any) -> list[str]:
    """The settings in ``given`` (not ``None``) that differ from the journal's."""
    out = []
    for name, value in given.items():
        stored = journal.settings.get(name)
        if value is not None and json.dumps(value) != json.dumps(stored):
            out.append(f"{name}={value!r} (journal: {stored!r})")
    return out


__all__ = [
    "KIND",
    "SETTINGS",
    "StepJournal",
    "ajournaled_hypothesis",
    "journal_path",
    "open_chain",
    "same_settings",
]
