"""Deterministic stand-ins for the MAC agents, shared by the MAC tests.

:class:`Oracle` plays every MAC role from a known true graph: debaters reply in free
text, judges answer the batched questions exactly as the truth says (reading the
numbered questions from the prompt, so the test also checks that the prompt lists the
right pairs), the plan judge picks a fixed algorithm and the executor replies with
scripted code. It works both as a :class:`~silicolab.llm.ScriptedModel` ``fn`` (through
:meth:`Oracle.scripted`) and as the reply callable of the local OpenAI-compatible test
server (:meth:`Oracle.http`), where the role is recognised from the system prompt.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

QUESTION = re.compile(r"^Q(\d+): Does (.+?) directly cause (.+?)\?", re.M)
ROLE_SIGNS = (
    ("You are the affirmative debater in a panel that decides", "affirmative"),
    ("You are the negative debater in a panel that decides", "negative"),
    ("You are the affirmative debater in a panel that chooses", "plan-affirmative"),
    ("You are the negative debater in a panel that chooses", "plan-negative"),
    ("You are the judge of a debate between", "judge"),
    ("You are the judge of a debate in which", "plan-judge"),
    ("You are a causal-inference programmer", "executor"),
    ("You are an expert in causal inference and in the domain", "agent"),
)

PC_BAD = """Here is the script.
```python
import pandas as pd
from causallearn.search.ConstraintBased.PC import pc
df = pd.read_csv("data.csv")
cg = pc(df)
```"""

PC_GOOD = """Fixed: causal-learn needs a numpy array.
```python
import json
import pandas as pd
from causallearn.search.ConstraintBased.PC import pc
df = pd.read_csv("data.csv")
cg = pc(df.to_numpy(dtype=float), show_progress=False, node_names=list(df.columns))
result = {"nodes": list(df.columns), "matrix": cg.G.graph.tolist(), "convention": "causallearn"}
with open("result.json", "w") as fh:
    json.dump(result, fh)
```"""

PC_WITH_KNOWLEDGE = """```python
import json
import pandas as pd
from causallearn.search.ConstraintBased.PC import pc
from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge
from causallearn.graph.GraphNode import GraphNode
df = pd.read_csv("data.csv")
REQUIRED
FORBIDDEN
bk = BackgroundKnowledge()
for c, e in required:
    bk.add_required_by_node(GraphNode(c), GraphNode(e))
for c, e in forbidden:
    bk.add_forbidden_by_node(GraphNode(c), GraphNode(e))
cg = pc(df.to_numpy(dtype=float), show_progress=False, node_names=list(df.columns),
        background_knowledge=bk)
json.dump({"nodes": list(df.columns), "matrix": cg.G.graph.tolist(),
           "convention": "causallearn"}, open("result.json", "w"))
```"""

NAME_ERROR = "```python\nprint(undefined_variable)\n```"


def role_of(messages: Sequence[dict[str, Any]]) -> str:
    """The MAC role a request belongs to, from its system prompt."""
    for message in messages:
        if message["role"] != "system":
            continue
        for sign, role in ROLE_SIGNS:
            if message["content"].startswith(sign):
                return role
    raise AssertionError(f"no MAC role in {messages[0]['content'][:80]!r}")


@dataclass
class Oracle:
    """Answers like perfect MAC agents that know ``truth`` (see the module docstring).

    ``follow_up_rounds``: the meta judge asks a follow-up on every open question in the
    first that many rounds. ``judge_text``: the meta judge replies with this (invalid) text
    instead. ``executor``: replies per executor attempt (the last one repeats), or a
    callable of the request's messages.
    """

    truth: Iterable[tuple[str, str]]
    follow_up_rounds: int = 0
    algorithm: str = "pc"
    plan_follow_up: bool = False
    judge_text: str | None = None
    executor: Sequence[str] | Callable[[Sequence[dict[str, Any]]], str] = (PC_GOOD,)
    seen: list[tuple[str, list[dict[str, Any]]]] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.truth = set(self.truth)

    def prompts(self, role: str) -> list[str]:
        """The last user message of every request of ``role``, in arrival order."""
        return [msgs[-1]["content"] for r, msgs in self.seen if r == role]

    def scripted(self, request: Any) -> str:
        """A ``ScriptedModel`` fn."""
        return self.answer(list(request.messages), request.json_schema)

    def http(self, body: dict[str, Any]) -> str:
        """A ``FakeLLMServer`` reply callable."""
        fmt = body.get("response_format") or {}
        schema = (fmt.get("json_schema") or {}).get("schema") or fmt.get("schema")
        return self.answer(body["messages"], schema)

    def answer(self, messages: list[dict[str, Any]], schema: dict[str, Any] | None) -> str:
        role = role_of(messages)
        self.seen.append((role, messages))
        user = messages[-1]["content"]
        if role in ("affirmative", "negative"):
            return (
                f"Question 1\nThought: as the {role} side I checked confounders.\nFinal answer: Yes"
            )
        if role in ("plan-affirmative", "plan-negative"):
            return f"Thought: the data are continuous.\nFinal answer: Algorithm: {self.algorithm}"
        if role in ("judge", "agent"):
            return self._verdicts(role, user, schema)
        if role == "plan-judge":
            out: dict[str, Any] = {
                "thought": "The affirmative plan fits the data.",
                "winner": "affirmative",
                "algorithm": self.algorithm,
                "plan": ["Read data.csv", f"Run {self.algorithm}", "Write result.json"],
            }
            if "decision" in schema["properties"]:
                follow = self.plan_follow_up
                out["decision"] = "follow_up" if follow else "decide"
                out["follow_up"] = "Is the data Gaussian?" if follow else ""
            return json.dumps(out)
        attempt = sum(m["role"] == "assistant" for m in messages)
        if callable(self.executor):
            return self.executor(messages)
        return self.executor[min(attempt, len(self.executor) - 1)]

    def _verdicts(self, role: str, user: str, schema: dict[str, Any]) -> str:
        if self.judge_text is not None and role == "judge":
            return self.judge_text
        questions = {int(n): (c, e) for n, c, e in QUESTION.findall(user)}
        round_no = re.search(r"Round (\d+) is over", user)
        out: dict[str, Any] = {}
        for key, spec in schema["properties"].items():
            word = "yes" if questions[int(key[1:])] in self.truth else "no"
            if role == "agent":
                out[key] = {"thought": "domain knowledge", "answer": word}
            elif "enum" in spec:  # the forced final verdict
                out[key] = word
            elif round_no and int(round_no.group(1)) <= self.follow_up_rounds:
                out[key] = {
                    "thought": "unclear",
                    "decision": "follow_up",
                    "follow_up": f"What confounds {key}?",
                }
            else:
                out[key] = {"thought": "settled", "decision": word, "follow_up": ""}
        return json.dumps(out)
