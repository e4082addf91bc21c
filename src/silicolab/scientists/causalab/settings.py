"""How the LLM scientist talks to its model, per fidelity, and the record of it.

``faithful`` is the paper's agent (spec §4.4, §7.1, §8): sampling at temperature 0.1,
top-p 0.95 and at most 8192 tokens; the history block replays the agent's full previous
records (the whole JSON reply of each step, not only its action), oldest first, keeping
the newest ones that fit the controller's 16384-character budget; the controller prompt
carries the paper's content and none of our hints; after the episode the paper's
"exact-context re-evaluation" asks the model for the root nodes (spec §6.7), and the
root scores come from that answer.

``fixed`` is silicolab's agent: greedy sampling (temperature 0, so a rerun gives the same
episode and the cache can replay it) with the same 8192-token cap and the server's top-p;
a compact history of the agent's own actions, newest first; the controller prompt with our
hints (how to read interventions, how to get the base); roots scored from the final
hypothesis (the paper's source-only mode), with no extra model call.

Like the paper's client, both modes send no temperature or top-p to models that refuse
them (OpenAI's ``gpt-5*`` and ``o1``/``o3``/``o4`` reasoning models); the record says so.
Every record carries :meth:`AgentSettings.to_dict` as ``agent_settings``.
"""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, replace
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError
from silicolab.envs.causalab.dsl import dump_json, truncate_field

if TYPE_CHECKING:
    from silicolab.envs.causalab.dsl import DSLState

#: Characters of the paper's controller input (task, previous state and history together).
PAPER_PROMPT_CHARS = 16384
#: Models whose API refuses temperature and top-p; the paper's client drops both for them.
NO_SAMPLING_MODELS = re.compile(r"^(gpt-5|o1|o3|o4)", re.IGNORECASE)
#: The two history formats.
HISTORY_FULL_OLDEST_FIRST = "full_records_oldest_first"
HISTORY_ACTIONS_NEWEST_FIRST = "actions_newest_first"


@dataclass(frozen=True)
class AgentSettings:
    """The sampling, history, prompt and root-scoring choices of one LLM scientist.

    ``prompt_variant`` is ``"paper"`` (``controller_paper.j2``) or ``"silicolab"``
    (``controller.j2``); ``root_reeval`` says whether the post-episode root query runs;
    ``sampling_note`` explains a dropped temperature/top-p."""

    fidelity: str
    temperature: float | None
    max_tokens: int | None
    top_p: float | None
    history: str
    prompt_variant: str
    root_reeval: bool
    sampling_note: str = ""

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready form kept in every record."""
        return asdict(self)


PAPER = AgentSettings(
    fidelity="faithful",
    temperature=0.1,
    max_tokens=8192,
    top_p=0.95,
    history=HISTORY_FULL_OLDEST_FIRST,
    prompt_variant="paper",
    root_reeval=True,
)
SILICOLAB = AgentSettings(
    fidelity="fixed",
    temperature=0.0,
    max_tokens=8192,
    top_p=None,
    history=HISTORY_ACTIONS_NEWEST_FIRST,
    prompt_variant="silicolab",
    root_reeval=False,
)


def agent_settings(
    fidelity: str,
    model_name: str,
    *,
    temperature: float | None = None,
    max_tokens: int | None = None,
    top_p: float | None = None,
) -> AgentSettings:
    """The settings for ``fidelity`` (``"faithful"`` or ``"fixed"``) and a model named
    ``model_name``; an explicit ``temperature``/``max_tokens``/``top_p`` overrides the
    mode's value (and is recorded as used)."""
    if fidelity not in ("faithful", "fixed"):
        raise InputError(f"fidelity must be 'faithful' or 'fixed', got {fidelity!r}")
    base = PAPER if fidelity == "faithful" else SILICOLAB
    chosen = replace(
        base,
        temperature=base.temperature if temperature is None else float(temperature),
        max_tokens=base.max_tokens if max_tokens is None else int(max_tokens),
        top_p=base.top_p if top_p is None else float(top_p),
    )
    if NO_SAMPLING_MODELS.match(model_name) and (chosen.temperature, chosen.top_p) != (None,) * 2:
        note = (
            f"temperature {chosen.temperature} and top_p {chosen.top_p} not sent: "
            f"{model_name} accepts neither (the paper's client drops them too)"
        )
        chosen = replace(chosen, temperature=None, top_p=None, sampling_note=note)
    return chosen


def history_entry(raw_json: dict[str, Any] | None, action: dict[str, Any]) -> str:
    """One step of the paper's history: the model's whole JSON record as it was sent
    (``"Task:"`` spelled ``"Task :"`` so it never reads as the task header), or, when the
    reply held no JSON object, the WAIT that replaced it."""
    if raw_json is None:
        raw_json = {**action, "thought": "No valid JSON found in output"}
    text = json.dumps(raw_json, ensure_ascii=False).replace("Task:", "Task :")
    return "Action:\n```json\n" + text + "\n```\n\n"


def render_full_history(entries: list[str], budget: int) -> str:
    """The paper's history block: the newest ``entries`` whose total length fits
    ``budget`` characters, printed oldest first."""
    kept: list[str] = []
    used = 0
    for entry in reversed(entries):
        used += len(entry)
        if used > budget:
            break
        kept.append(entry)
    return "".join(reversed(kept))


def render_paper_state(state: DSLState, entries: list[str], task: str) -> str:
    """The paper's "Previous State" and history blocks: the last past_data, hypothesis and
    memory (4000 characters each), then the full previous records, oldest first, within
    what is left of :data:`PAPER_PROMPT_CHARS` after the task and the previous state."""
    head = "\n".join(
        [
            "## Previous State (the base of your incremental update)",
            "Last past_data:",
            "```json",
            truncate_field(dump_json(state.past_data)),
            "```",
            "",
            "Last hypothesis:",
            "```json",
            truncate_field(dump_json(state.hypothesis)),
            "```",
            "",
            "Last memory:",
            truncate_field(state.memory) or "(empty)",
            "",
            "History of action-observations (your previous records, oldest first):",
            "",
        ]
    )
    budget = PAPER_PROMPT_CHARS - len(task) - len(head)
    return head + (render_full_history(entries, budget) or "(none yet)")
