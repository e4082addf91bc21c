"""Small real runs of every kind, made through the command line as a user makes them
(offline: scripted models, reference scientists, small settings; seconds each)."""

from __future__ import annotations

import subprocess
from pathlib import Path

from tests.support.cli import EXE, private_cache_env, strict_json

#: name -> the command that makes the run (all write a run directory and its report.html).
COMMANDS: dict[str, list[str]] = {
    "study": ["demo", "--conditions", "8", "--jobs", "4"],
    "sim_bargaining": ["sim", "run", "bargaining"],
    "sim_market": ["sim", "run", "market"],
    "discover": ["discover", "--dataset", "auto_mpg", "--method", "pc"],
    "debate": ["discover", "--dataset", "auto_mpg", "--method", "mac_meta_debate",
               "--model", "scripted"],
    "causalab": ["bench", "causalab", "--suite", "3nodes", "--episodes", "2"],
    "boxinggym": ["bench", "boxinggym", "--env", "dugongs", "--seeds", "2", "--agent", "random"],
    # after the random run: its page compares with the random designer's curve
    "boxinggym_reference": ["bench", "boxinggym", "--env", "dugongs", "--seeds", "2"],
    "bench_discovery": ["bench", "discovery", "--methods", "pc", "--datasets", "auto_mpg"],
    "episodes": ["bench", "episodes", "--env", "causalab", "--seeds", "2"],
    # an LLM scientist that never answers in the DSL: a degraded run still has its page
    "causalab_llm": ["bench", "causalab", "--suite", "3nodes", "--episodes", "1", "--agent",
                     "llm", "--model", "scripted"],
}  # fmt: skip


env = private_cache_env  # a test run's environment: no user settings, its own LLM cache


def cli(args: list[str], cwd: Path, timeout: float = 180) -> subprocess.CompletedProcess:
    """``silicolab ARGS`` in ``cwd``."""
    return subprocess.run(
        [*EXE, *args], cwd=cwd, env=env(cwd), capture_output=True, text=True, timeout=timeout
    )


def make_run(name: str, root: Path) -> Path:
    """Make the run ``name`` of :data:`COMMANDS` under ``root/runs``; its directory."""
    out = cli([*COMMANDS[name], "--runs-dir", str(root / "runs"), "--json"], root)
    assert out.returncode in (0, 3), out.stderr  # 3: a degraded run is still a run
    return Path(strict_json(out.stdout)["run_dir"]).resolve()
