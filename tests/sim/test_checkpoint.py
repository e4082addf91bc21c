"""Checkpoint and resume of an episode mid-way (engines + silicolab.sim.checkpoint)."""

from __future__ import annotations

import hashlib
import json
import random
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from silicolab.core.errors import InputError
from silicolab.llm import load_model
from silicolab.llm.backends.scripted import ScriptedModel
from silicolab.llm.types import Request
from silicolab.sim.agents import GenerativeAgent, RuleAgent
from silicolab.sim.checkpoint import load_checkpoint, rng_state, set_rng_state
from silicolab.sim.components import Identity, MemoryRetrieval, Observation
from silicolab.sim.engines import run_sequential, run_simultaneous
from silicolab.sim.entity import Entity
from silicolab.sim.game_master import GameMaster, Resolution
from silicolab.sim.grounded import GroundedState, GroundedVariable, at_least
from silicolab.sim.memory import AssociativeMemory

NAMES = ("Ann", "Ben", "Cid")


class Crash(RuntimeError):
    """Stands in for the process being killed."""


def script(request: Request) -> str:
    """Agents: buy/sell/wait from a hash of the prompt. GM: a tool call or an event."""
    system = request.messages[0]["content"]
    user = request.messages[-1]["content"]
    if system.startswith("You are the game master"):
        actor = re.search(r"Actor: (\w+)", user).group(1)  # type: ignore[union-attr]
        action = user.rsplit("Attempted action: ", 1)[1].strip()
        if action in ("buy", "sell"):
            return json.dumps({"tool": "trade", "args": {"side": action}})
        return f"{actor} watches the market."
    digest = hashlib.sha256((system + user).encode()).digest()
    return ("buy", "sell", "wait")[digest[0] % 3]


def trade(side: str, actor: str, gm: GameMaster) -> Resolution:
    """Buy or sell one unit at the current price."""
    price = gm.state["price"]
    new = price + 1.0 if side == "buy" else price - 1.0
    return Resolution(
        f"{actor} {side}s at {price:g}; the price is now {new:g}.",
        updates={
            "price": new,
            "trades": gm.state["trades"] + 1,
            "traders": gm.state["traders"] | {actor},
            "last": (actor, side),
        },
    )


def random_schedule(gm: GameMaster, entities: Sequence[Entity], step: int) -> Sequence[Entity]:
    """A seeded random subset of the entities (so the RNG state matters on resume)."""
    return gm.rng.sample(list(entities), gm.rng.randint(1, len(entities)))


def build(backend: ScriptedModel, cache: Path) -> tuple[GameMaster, list[Entity]]:
    """Fresh GM and agents sharing one cached scripted model."""
    model = load_model(backend, cache_path=cache)
    state = GroundedState.of(
        GroundedVariable("price", 10.0, float, validator=at_least(10, "the price")),
        GroundedVariable("trades", 0, int),
        GroundedVariable("traders", set(), set),
        GroundedVariable("last", ("nobody", "none"), tuple),
    )
    gm = GameMaster(
        state=state,
        model=model,
        tools=[trade],
        schedule=random_schedule,
        premise="A small market opens; the price is 10.",
    )
    agents: list[Entity] = [
        GenerativeAgent(
            n,
            model,
            [Identity("{name} is a trader."), MemoryRetrieval(k=3), Observation(n=4)],
            memory=AssociativeMemory(),
        )
        for n in NAMES
    ]
    return gm, agents


def snapshot(gm: GameMaster, agents: Sequence[Entity], log: Any) -> dict[str, Any]:
    """Everything that must match between two runs."""
    return {
        "log": log.to_list(),
        "gm": gm.state_dict(),
        "agents": [a.state_dict() for a in agents],  # type: ignore[attr-defined]
    }


def crashing(after: int) -> ScriptedModel:
    """A scripted backend that raises :class:`Crash` on its ``after``-th call."""
    backend = ScriptedModel(fn=script)
    real = backend.answer

    def answer(request: Request) -> str:
        if len(backend.calls) >= after:
            raise Crash("killed")
        return real(request)

    backend.answer = answer  # type: ignore[method-assign]
    return backend


@pytest.mark.parametrize("engine", [run_sequential, run_simultaneous])
def test_stop_and_resume_matches_uninterrupted(tmp_path: Path, engine: Any) -> None:
    gm, agents = build(ScriptedModel(fn=script), tmp_path / "a.sqlite")
    full = snapshot(gm, agents, engine(gm, agents, max_steps=10, seed=7))
    assert gm.state["trades"] > 2 and gm.rejections  # the episode exercises state and rules

    ckpt = tmp_path / "episode.json"
    gm, agents = build(ScriptedModel(fn=script), tmp_path / "b.sqlite")
    engine(gm, agents, max_steps=4, seed=7, checkpoint=ckpt)
    assert load_checkpoint(ckpt)["step"] == 4
    gm, agents = build(ScriptedModel(fn=script), tmp_path / "b.sqlite")
    log = engine(gm, agents, max_steps=10, seed=7, checkpoint=ckpt, resume=True)
    assert snapshot(gm, agents, log) == full
    assert load_checkpoint(ckpt)["step"] == 10


def test_resume_after_a_crash_mid_step(tmp_path: Path) -> None:
    gm, agents = build(ScriptedModel(fn=script), tmp_path / "a.sqlite")
    full = snapshot(gm, agents, run_sequential(gm, agents, max_steps=10, seed=3))

    ckpt = tmp_path / "episode.json"
    gm, agents = build(crashing(after=15), tmp_path / "b.sqlite")
    with pytest.raises(Crash):
        run_sequential(gm, agents, max_steps=10, seed=3, checkpoint=ckpt, checkpoint_every=3)
    done = load_checkpoint(ckpt)["step"]
    assert 0 < done < 10 and done % 3 == 0

    gm, agents = build(ScriptedModel(fn=script), tmp_path / "b.sqlite")
    log = run_sequential(
        gm, agents, max_steps=10, seed=3, checkpoint=ckpt, checkpoint_every=3, resume=True
    )
    assert snapshot(gm, agents, log) == full
    assert isinstance(gm.state["traders"], set) and isinstance(gm.state["last"], tuple)


def test_same_seed_and_cache_give_the_same_episode_without_calls(tmp_path: Path) -> None:
    cache = tmp_path / "cache.sqlite"
    first_backend = ScriptedModel(fn=script)
    gm, agents = build(first_backend, cache)
    first = snapshot(gm, agents, run_sequential(gm, agents, max_steps=8, seed=11))
    assert len(first_backend.calls) > 0

    second_backend = ScriptedModel(fn=script)
    gm, agents = build(second_backend, cache)
    second = snapshot(gm, agents, run_sequential(gm, agents, max_steps=8, seed=11))
    assert second == first
    assert len(second_backend.calls) == 0  # every reply came from the exact-prompt cache


def test_checkpoint_killed_mid_write_leaves_no_torn_or_temp_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import silicolab.core.files as files

    ckpt = tmp_path / "episode.json"
    real_replace = files.os.replace
    writes = {"n": 0}

    def replace(src: str, dst: Any) -> None:
        writes["n"] += 1
        if writes["n"] == 3:
            raise KeyboardInterrupt  # killed between writing the temp file and the rename
        real_replace(src, dst)

    monkeypatch.setattr(files.os, "replace", replace)
    gm, agents = build(ScriptedModel(fn=script), tmp_path / "c.sqlite")
    with pytest.raises(KeyboardInterrupt):
        run_sequential(gm, agents, max_steps=6, seed=1, checkpoint=ckpt)
    assert load_checkpoint(ckpt)["step"] == 2  # the previous checkpoint is intact
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix == ".tmp") == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".episode.json.")]


def test_grounded_state_round_trip_keeps_types_and_history() -> None:
    state = GroundedState.of(
        GroundedVariable("who", {"a", "b"}, set),
        GroundedVariable("pair", (1, "x"), tuple),
        GroundedVariable("book", {"k": [1, 2]}, dict),
    )
    state.apply({"who": {"c"}, "pair": (2, "y")}, step=4, cause="moved")
    data = json.loads(json.dumps(state.state_dict()))
    fresh = GroundedState.of(
        GroundedVariable("who", set(), set),
        GroundedVariable("pair", (0, ""), tuple),
        GroundedVariable("book", {}, dict),
    )
    fresh.load_state(data)
    assert fresh.snapshot() == state.snapshot()
    assert fresh.history == state.history
    with pytest.raises(InputError):
        GroundedState.of(GroundedVariable("x", 1, int)).load_state(data)


@pytest.mark.parametrize("make", [random.Random, np.random.default_rng])
def test_rng_state_round_trip(make: Any) -> None:
    rng = make(5)
    rng.random()
    data = json.loads(json.dumps(rng_state(rng)))
    expected = [rng.random() for _ in range(3)]
    other = make(99)
    set_rng_state(other, data)
    assert [other.random() for _ in range(3)] == expected


def test_resume_checks(tmp_path: Path) -> None:
    agents = [RuleAgent("A", lambda a, s: "wait")]
    with pytest.raises(InputError, match="needs a checkpoint"):
        run_sequential(GameMaster(), agents, max_steps=2, resume=True)
    with pytest.raises(InputError, match="checkpoint_every"):
        run_sequential(GameMaster(), agents, max_steps=2, checkpoint_every=0)
    ckpt = tmp_path / "c.json"
    run_sequential(GameMaster(), agents, max_steps=2, checkpoint=ckpt)
    with pytest.raises(InputError, match="seed"):
        run_sequential(GameMaster(), agents, max_steps=4, seed=1, checkpoint=ckpt, resume=True)
    # a missing checkpoint with resume=True simply starts from the beginning
    log = run_sequential(
        GameMaster(), agents, max_steps=2, checkpoint=tmp_path / "new.json", resume=True
    )
    assert [s.output for s in log.steps if s.kind == "action"] == ["wait", "wait"]
