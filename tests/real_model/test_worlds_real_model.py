"""Every built-in simulation world played to its end with a real model (issue 27).

The people and the game master of each world in :func:`silicolab.sim.worlds.world_names` are
played by SmolLM2-135M-Instruct through the session's local llama.cpp server (the
``tests/real_model`` fixtures). A 135M model answers badly; these tests assert only that a
world either finishes (every step played, a complete log, the model really called) or stops
with a silicolab ``ParseFailure``/``LLMError`` that carries the episode's log so far, never
any other exception. ``make test`` plays each world's first step in short statements (a
135M model on two loaded cores takes about a minute a step in the longer worlds); with
``SILICOLAB_REAL_WORLDS_FULL=1`` every world runs whole (measured: 7 worlds in 705 s, all
passing). One more test runs ``silicolab sim run FILE.yaml --model local`` on the election.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from silicolab.core.errors import LLMError, ParseFailure
from silicolab.sim.worlds import load_world, world_names
from tests.real_model import pipelines

pytestmark = [pytest.mark.slow, pytest.mark.llamacpp]

ACTION_KINDS = {"action", "rejected", "survey", "statement"}
FULL = os.environ.get("SILICOLAB_REAL_WORLDS_FULL") == "1"
STEPS = None if FULL else 1
RULE_PREFABS = {"rule", "scripted"}


def _played(sim: Any) -> Any:
    """The world as the tests play it: whole, or its first :data:`STEPS` steps with
    short statements (at most 48 tokens, conversations of at most 4 statements)."""
    if STEPS is None:
        return sim
    gm, _ = sim.build(seed=0)
    params = dict(sim.game_master.params)
    if "scenes" in params:
        params["scenes"] = [
            {**s, "max_tokens": 48, "max_statements": min(s.get("max_statements", 8), 4)}
            for s in params["scenes"]
        ]
    master = sim.game_master.model_copy(update={"params": params})
    return sim.model_copy(update={"max_steps": min(STEPS, sim.steps(gm)), "game_master": master})


def _uses_a_model(sim: Any) -> bool:
    """Whether any entity is a language-model person (rule-only worlds call no model)."""
    return any(e.prefab not in RULE_PREFABS for e in sim.entities)


def _length(sim: Any) -> int:
    """The world's number of steps, from a game master built on its offline script."""
    gm, _ = sim.build(seed=0)
    return sim.steps(gm)


def _check_log(rows: list[dict[str, Any]], who: set[str], length: int) -> None:
    """Invariants of an episode log: known authors, steps within the episode (the log
    numbers them from 0, a row may be logged as the step ends: up to ``length``)."""
    for row in rows:
        assert row["who"] in who, row
        assert 0 <= row["step"] <= length, row


@pytest.mark.parametrize("world", world_names())
async def test_world_runs_to_its_end_with_the_real_model(world: str, model: Any) -> None:
    sim = _played(load_world(world))
    length = _length(sim)
    names = {e.name for e in sim.entities}
    who = names | {sim.game_master.name}
    before = model.ledger.summary()["calls"]
    try:
        outcome = await sim.arun(model=model, seed=0)
    except (ParseFailure, LLMError) as err:
        log = err.episode_log  # type: ignore[attr-defined]
        assert log is not None
        _check_log(log.to_list(), who, length)
        return
    called = model.ledger.summary()["calls"] > before
    assert called == _uses_a_model(sim), "a model world that never called it, or the reverse"
    assert outcome.name == world and outcome.seed == 0
    assert outcome.steps <= length and (outcome.steps == length or sim.name == "auction")
    rows = outcome.log.to_list()
    _check_log(rows, who, length)
    acted = {r["who"] for r in rows if r["kind"] in ACTION_KINDS}
    assert acted and acted <= names
    if outcome.steps == length:  # a game that ended itself (the auction) stops early
        assert max(r["step"] for r in rows) >= length - 1  # the last step was played
    assert {p["entity"] for p in outcome.per_entity} == names


def test_sim_run_election_through_the_cli(cli_env: dict[str, str], tmp_path: Path) -> None:
    env = {**cli_env, "SILICOLAB_CACHE": str(tmp_path / "cli-cache.sqlite")}  # no cached replies
    runs = tmp_path / "runs"
    world = tmp_path / "election.yaml"
    _played(load_world("election")).save(world)
    args = ["sim", "run", str(world), "--model", pipelines.SPEC, "--runs-dir", str(runs)]
    code, out, err = pipelines.run_cli(args, env)
    assert "Traceback" not in err, err
    assert out.get("status") in ("finished", "degraded"), (code, out, err)
    assert (code == 0) == (out["status"] == "finished"), (code, err)
    run_dir = Path(out["run_dir"])
    record = json.loads((run_dir / "record.json").read_text(encoding="utf-8"))
    assert record
    if out["status"] == "finished":
        assert out["simulation"] == "election" and out["steps"] == (STEPS or 4)
        assert "local" in out["model"]
        entities = {"Alice", "Bob", "Carol", "Dan", "Erin"}
        assert {p["entity"] for p in out["per_entity"]} == entities
