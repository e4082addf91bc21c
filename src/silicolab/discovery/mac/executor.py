"""The Debate-Coding executor: write code, run it in the sandbox, repair, read the graph.

The executor agent gets the judged plan and causal-learn API notes for the chosen
algorithm, and replies with a whole Python script (```python block). The script runs in
:func:`silicolab.runtime.sandbox.arun_python` with ``data.csv`` in its working directory
(time/memory limits, no network) and must write ``result.json``::

    {"nodes": [...], "matrix": [[...]], "convention": "cause_row" | "effect_row" | "causallearn"}

A crash, a sandbox violation, a missing or malformed ``result.json`` is reported back
(message, stderr/stdout tails) and the agent repairs, at most ``max_repairs`` times. The
matrix is converted to silicolab's convention here, explicitly: ``effect_row`` is
transposed; in ``cause_row``/``effect_row`` a pair non-zero in both directions is an
undirected edge (``2`` at both = bidirected); ``causallearn`` endpoint marks go through
:func:`silicolab.scm.from_causallearn_graph`. Unlike the paper's stateful IPython kernel,
each attempt runs the full script from scratch, so a repair cannot depend on old state.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from silicolab.core.errors import InputError
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.mac.algorithms import algorithm_info
from silicolab.discovery.mac.common import knowledge_lines
from silicolab.discovery.mac.panel import DebateSettings
from silicolab.discovery.mac.templates import render
from silicolab.scm.conventions import from_causallearn_graph
from silicolab.scm.graph import CausalGraph
from silicolab.scm.partial_graph import PartialGraph

CONVENTIONS = ("cause_row", "effect_row", "causallearn")
RESULT_FILE = "result.json"
_CODE = re.compile(r"```(?:python|py)[^\n]*\n(.*?)```", re.DOTALL | re.IGNORECASE)
_ANY_CODE = re.compile(r"```[^\n]*\n(.*?)```", re.DOTALL)
_STDERR_CHARS = 2500
_STDOUT_CHARS = 800


@dataclass(frozen=True)
class ExecutorLimits:
    """How far the executor may go: ``max_repairs`` attempts after the first, the
    sandbox's time and memory per run, and the length of each reply."""

    max_repairs: int = 3
    timeout_s: float = 120.0
    memory_mb: int = 2048
    max_tokens: int | None = 2048


class ResultError(ValueError):
    """``result.json`` does not follow the contract; the message is shown to the agent."""


def extract_code(reply: str) -> str | None:
    """The Python code of a reply: its ```python blocks joined in order (an untagged
    block if there is none), or ``None`` when the reply holds no code block."""
    blocks = _CODE.findall(reply) or _ANY_CODE.findall(reply)
    code = "\n\n".join(b.strip("\n") for b in blocks if b.strip())
    return code or None


def _from_cause_row(array: np.ndarray, names: Sequence[str]) -> CausalGraph | PartialGraph:
    directed, undirected, bidirected = [], [], []
    n = len(names)
    for i in range(n):
        for j in range(i + 1, n):
            a, b = array[i, j], array[j, i]
            if a == 0 and b == 0:
                continue
            if b == 0:
                directed.append((names[i], names[j]))
            elif a == 0:
                directed.append((names[j], names[i]))
            elif a == b == 2:
                bidirected.append((names[i], names[j]))
            elif {a, b} == {-1.0, 1.0}:
                raise ResultError(
                    f"entries {a:g} and {b:g} for {names[i]}/{names[j]} look like causal-learn "
                    'endpoint marks: write G.graph unchanged with "convention": "causallearn"'
                )
            else:
                undirected.append((names[i], names[j]))
    return PartialGraph(
        names, directed=directed, undirected=undirected, bidirected=bidirected
    ).simplest()


def parse_result(payload: Any, columns: Sequence[str]) -> CausalGraph | PartialGraph:
    """The graph in ``result.json``'s ``payload``, over ``columns`` in silicolab's
    convention; :class:`ResultError` says what is wrong otherwise."""
    if not isinstance(payload, dict):
        raise ResultError('it must hold one JSON object with "nodes", "matrix", "convention"')
    convention = payload.get("convention")
    if convention not in CONVENTIONS:
        raise ResultError(f'"convention" is {convention!r}; use one of {list(CONVENTIONS)}')
    nodes = payload.get("nodes")
    if not isinstance(nodes, list) or sorted(map(str, nodes)) != sorted(columns):
        raise ResultError(f'"nodes" must list exactly the data columns {list(columns)}')
    nodes = [str(n) for n in nodes]
    try:
        array = np.asarray(payload.get("matrix"), dtype=float)
    except (TypeError, ValueError) as err:
        raise ResultError(f'"matrix" is not a numeric n x n list of lists ({err})') from None
    n = len(columns)
    if array.shape != (n, n) or not np.isfinite(array).all():
        raise ResultError(f'"matrix" must be {n} x {n} finite numbers; got shape {array.shape}')
    order = [nodes.index(c) for c in columns]
    array = array[np.ix_(order, order)]
    if np.any(np.diag(array) != 0):
        raise ResultError('"matrix" has non-zero diagonal entries; a variable cannot cause itself')
    if convention == "causallearn":
        if not np.isin(array, (-1, 0, 1, 2)).all():
            raise ResultError('a "causallearn" matrix may hold only the marks -1, 0, 1, 2')
        try:
            return from_causallearn_graph(array.astype(int), list(columns))
        except InputError as err:
            raise ResultError(str(err)) from None
    return _from_cause_row(array.T if convention == "effect_row" else array, list(columns))


def knowledge_code(algorithm: str, knowledge: Knowledge, nodes: Sequence[str]) -> str:
    """The constraints as ready-to-paste Python literals in ``algorithm``'s encoding."""
    required = [list(p) for p in knowledge.required]
    forbidden = [list(p) for p in sorted(knowledge.forbidden_pairs())]
    if algorithm == "exact":
        super_graph, include = knowledge.to_exact_search(nodes)
        include_text = (
            "None  # nothing required"
            if include is None
            else f"np.array({json.dumps(include.tolist())})"
        )
        return (
            f"super_graph = np.array({json.dumps(super_graph.tolist())})\n"
            f"include_graph = {include_text}"
        )
    if algorithm == "direct_lingam":
        return f"prior_knowledge = np.array({json.dumps(knowledge.to_lingam(nodes).tolist())})"
    lines = [
        f"required = {json.dumps(required)}  # [cause, effect] pairs",
        f"forbidden = {json.dumps(forbidden)}  # [cause, effect] pairs",
    ]
    if algorithm == "cdnod":
        lines.append('alias = {name: f"X{i + 1}" for i, name in enumerate(df.columns)}')
    return "\n".join(lines)


def _tail(text: str, limit: int) -> str:
    text = text.strip()
    return text if len(text) <= limit else "..." + text[-limit:]


def _executor_messages(
    algorithm: str, plan: Sequence[str], data: pd.DataFrame, knowledge: Knowledge | None
) -> list[dict[str, str]]:
    """The executor's opening conversation: its instructions with the algorithm's API
    notes, then the task (plan, data shape, constraints and how to pass them)."""
    columns = [str(c) for c in data.columns]
    info = algorithm_info(algorithm)
    howto = ""
    if knowledge:
        howto = f"{info.knowledge}\n{knowledge_code(algorithm, knowledge, columns)}"
    task = render(
        "executor_task",
        algorithm=algorithm,
        plan=list(plan),
        n_rows=len(data),
        columns=columns,
        constraints=knowledge_lines(knowledge),
        knowledge_howto=howto,
    )
    return [
        {"role": "system", "content": render("executor", algorithm=info.as_prompt())},
        {"role": "user", "content": task},
    ]


async def _run_attempt(
    code: str,
    attempt: dict[str, Any],
    *,
    csv_bytes: bytes,
    columns: Sequence[str],
    timeout_s: float,
    memory_mb: int,
) -> tuple[str, Any]:
    """Run one script in the sandbox and read its ``result.json``: returns the problem to
    report back (empty on success) and the graph (``None`` on failure); the sandbox
    outcome and the payload go into ``attempt``."""
    from silicolab.runtime.sandbox import arun_python

    run = await arun_python(
        code,
        inputs={"data.csv": csv_bytes},
        timeout_s=timeout_s,
        memory_mb=memory_mb,
        collect=("*.json",),
    )
    attempt["sandbox"] = {
        "ok": run.ok,
        "returncode": run.returncode,
        "violation": run.violation,
        "message": run.message,
        "elapsed_s": run.elapsed_s,
        "stdout": _tail(run.stdout, _STDOUT_CHARS),
        "stderr": _tail(run.stderr, _STDERR_CHARS),
    }
    if not run.ok:
        return run.message or f"the script exited with status {run.returncode}", None
    if RESULT_FILE not in run.files:
        return f"the script ran but wrote no {RESULT_FILE} in the working directory", None
    try:
        payload = json.loads(run.files[RESULT_FILE].decode("utf-8"))
        graph = parse_result(payload, columns)
    except (ResultError, ValueError) as err:
        return f"{RESULT_FILE} is invalid: {err}", None
    attempt["result"] = payload
    return "", graph


async def run_executor(
    settings: DebateSettings,
    *,
    algorithm: str,
    plan: Sequence[str],
    data: pd.DataFrame,
    knowledge: Knowledge | None,
    limits: ExecutorLimits,
) -> dict[str, Any]:
    """Write-run-repair until ``result.json`` parses or the attempts run out.

    Returns a JSON-ready record: ``attempts`` (reply, code, sandbox outcome, problem) and,
    on success, ``graph`` (the parsed graph object, removed before the record is stored).
    """
    messages = _executor_messages(algorithm, plan, data, knowledge)
    columns = [str(c) for c in data.columns]
    csv_bytes = data.to_csv(index=False).encode("utf-8")
    attempts: list[dict[str, Any]] = []
    for number in range(1, int(limits.max_repairs) + 2):
        completion = await settings.model.agenerate(
            messages,
            temperature=settings.temperature,
            max_tokens=limits.max_tokens,
            seed=settings.seed,
            tag=settings.tag("executor"),
            sample_index=settings.replicate,
        )
        code = extract_code(completion.text)
        attempt: dict[str, Any] = {"attempt": number, "reply": completion.text, "code": code}
        if code is None:
            problem, graph = "the reply had no ```python code block", None
        else:
            problem, graph = await _run_attempt(
                code,
                attempt,
                csv_bytes=csv_bytes,
                columns=columns,
                timeout_s=limits.timeout_s,
                memory_mb=limits.memory_mb,
            )
        if graph is not None:
            attempts.append(attempt)
            return {"attempts": attempts, "ok": True, "graph": graph}
        attempt["problem"] = problem
        attempts.append(attempt)
        sandbox = attempt.get("sandbox", {})
        feedback = render(
            "executor_feedback",
            attempt=number,
            problem=problem,
            stderr=sandbox.get("stderr", ""),
            stdout=sandbox.get("stdout", ""),
        )
        messages += [
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": feedback},
        ]
    return {"attempts": attempts, "ok": False, "graph": None}
