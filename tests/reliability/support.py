"""Shared helpers of the fault-injection suite: the CLI as a subprocess, a local model
server with scripted behaviour, and the process tree of a command."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from silicolab.runs import Run
from silicolab.sim.examples.bargaining import scripted_bargainer
from tests.support.cli import EXE, cli_env


def cli(args: list[str], cwd: Path, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """Run ``silicolab ARGS`` in ``cwd`` and wait for it."""
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=cli_env(), capture_output=True, text=True, timeout=timeout
    )


def start(args: list[str], cwd: Path) -> subprocess.Popen[str]:
    """Start ``silicolab ARGS`` in ``cwd`` without waiting."""
    return subprocess.Popen(
        [*EXE, *args],
        cwd=cwd,
        env=cli_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def use_server(folder: Path, base_url: str, *, timeout_s: float = 5.0) -> None:
    """Point the scientist and subject roles of ``folder``'s silicolab.yaml at ``base_url``
    as model ``openai:fake`` (pass ``--model openai:fake``), without retries: discovery
    commands use the scientist role, ``sim run`` the subject role."""
    folder.mkdir(parents=True, exist_ok=True)
    role = (
        "    spec: openai:fake\n"
        f"    base_url: {base_url}\n    timeout_s: {timeout_s}\n    max_retries: 0\n"
    )
    (folder / "silicolab.yaml").write_text(f"models:\n  scientist:\n{role}  subject:\n{role}")


def bargainer_reply(body: dict[str, Any]) -> str:
    """The offline bargainers, served over HTTP: a well-behaved model."""
    return scripted_bargainer(SimpleNamespace(messages=body["messages"]))


def wait_for(condition: Any, proc: subprocess.Popen[str], what: str, limit: float = 60) -> None:
    deadline = time.monotonic() + limit
    while not condition():
        if proc.poll() is not None:
            raise AssertionError(f"the command ended before {what}: {proc.communicate()}")
        assert time.monotonic() < deadline, f"no {what} within {limit} s"
        time.sleep(0.02)


def only_run(runs: Path) -> Run:
    folders = [p for p in runs.iterdir() if p.is_dir()] if runs.is_dir() else []
    assert len(folders) == 1, folders
    return Run.open(folders[0])


def one_line(stderr: str) -> str:
    lines = [line for line in stderr.splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    return lines[0]


def ok_units(run: Run) -> list[str]:
    return [e["unit"] for e in Run.open(run.path).events() if e["status"] == "ok"]


def record(run: Run) -> dict[str, Any]:
    return json.loads((run.path / "record.json").read_text())


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` in the process tree (Linux /proc)."""
    children: dict[int, list[int]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            stat = Path(f"/proc/{entry}/stat").read_text()
        except OSError:
            continue
        parent = int(stat.rsplit(")", 1)[1].split()[1])
        children.setdefault(parent, []).append(int(entry))
    found, todo = [], [pid]
    while todo:
        for child in children.get(todo.pop(), []):
            found.append(child)
            todo.append(child)
    return found


def alive(pid: int) -> bool:
    """True while ``pid`` exists and is not a zombie."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rsplit(")", 1)[1].split()[0] != "Z"
