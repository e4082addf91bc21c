"""The contract every registered environment keeps, whatever its family.

One parametrized test per promise, over every id in the registry and both fidelities:
``make`` builds an :class:`~silicolab.envs.Env` carrying its spec; the same seed gives the
same episode and ``reset`` replays it; random actions are accepted and garbage is refused
with :class:`~silicolab.envs.InvalidAction` (a message, no budget spent, never a crash);
the record is JSON-ready; the spec's goal facts agree with the environment's own.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

from silicolab.envs import FIDELITIES, Env, InvalidAction, make, specs

IDS = [s.id for s in specs() if s.family in ("causalab", "boxinggym")]
GARBAGE = ("", "hello", "[[[")


def _boxinggym_act(env: Any, rng: np.random.Generator) -> None:
    # Faithful emotion keeps upstream's exact float test of sum(probs) == 1, which rejects
    # some printed random designs (upstream passed them as numbers, never as text).
    for _ in range(20):
        try:
            env.run(env.format_design(env.sample_design(rng)))
            return
        except InvalidAction as err:
            assert err.message == "Probabilities should sum to 1.", err.message
    raise AssertionError("no random design was accepted")


def _boxinggym_garbage(env: Any, text: str) -> None:
    env.run(text)


def _causalab_act(lab: Any, rng: np.random.Generator) -> None:
    props = sorted(lab.observe())
    props.remove("resonanceFreq")
    lab.intervene(props[int(rng.integers(len(props)))], float(rng.integers(0, 100)))


def _causalab_garbage(lab: Any, text: str) -> None:
    lab.intervene(text or "nothing", 1.0)


#: family -> (one random accepted action, one action built from garbage text)
ACTIONS: dict[str, tuple[Callable[..., None], Callable[[Any, str], None]]] = {
    "boxinggym": (_boxinggym_act, _boxinggym_garbage),
    "causalab": (_causalab_act, _causalab_garbage),
}


def _episode(env_id: str, fidelity: str, seed: int) -> tuple[Any, dict[str, Any]]:
    env = make(env_id, fidelity=fidelity, seed=seed)
    act, _ = ACTIONS[env.spec.family]
    rng = np.random.default_rng(0)
    for _ in range(2):
        act(env, rng)
    return env, json.loads(json.dumps(env.to_record()))


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("env_id", IDS)
def test_make_gives_an_env_with_its_spec(env_id: str, fidelity: str) -> None:
    env = make(env_id, fidelity=fidelity, seed=3)
    assert isinstance(env, Env)
    assert env.spec.id == env_id and env.spec.kwargs == {"fidelity": fidelity, "seed": 3}
    assert env.fidelity == fidelity and env.seed == 3
    assert isinstance(env.describe(), str) and env.describe().strip()


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("env_id", IDS)
def test_same_seed_same_episode_and_reset_replays(env_id: str, fidelity: str) -> None:
    a, record_a = _episode(env_id, fidelity, 7)
    _, record_b = _episode(env_id, fidelity, 7)
    assert record_a == record_b  # JSON-ready and deterministic
    a.reset(7)
    act, _ = ACTIONS[a.spec.family]
    rng = np.random.default_rng(0)
    for _ in range(2):
        act(a, rng)
    assert json.loads(json.dumps(a.to_record())) == record_a


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("env_id", IDS)
def test_garbage_is_refused_with_a_message_and_costs_nothing(env_id: str, fidelity: str) -> None:
    env = make(env_id, fidelity=fidelity, seed=3)
    _, garbage = ACTIONS[env.spec.family]
    before = json.dumps(env.to_record())
    for text in GARBAGE:
        with pytest.raises(InvalidAction) as info:
            garbage(env, text)
        assert info.value.message and info.value.exit_code == 2
    assert json.dumps(env.to_record()) == before


@pytest.mark.parametrize("env_id", IDS)
def test_the_spec_agrees_with_the_environment(env_id: str) -> None:
    env = make(env_id, seed=1)
    spec = env.spec
    assert spec.title and spec.scientists and spec.goals
    if spec.family == "boxinggym":
        assert [g.name for g in spec.goals] == list(type(env).goals)
        for goal in spec.goals:
            built = make(env_id, goal=goal.name, seed=1).goal
            assert built.kind == goal.kind, (env_id, goal.name)
        assert spec.participants_speak == (spec.name in ("emotion", "moral_machines"))


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("env_id", [i for i in IDS if i.startswith("boxinggym/")])
def test_boxinggym_random_designs_round_trip_as_text(env_id: str, fidelity: str) -> None:
    """Every BoxingGym environment accepts the text of its own random designs."""
    env = make(env_id, fidelity=fidelity, seed=3)
    rng = np.random.default_rng(0)
    allowed = {"Probabilities should sum to 1."} if env.spec.name == "emotion" else set()
    for _ in range(50):
        text = env.format_design(env.sample_design(rng))
        try:
            env.validate(text)
        except InvalidAction as err:
            assert err.message in allowed and fidelity == "faithful", (text, err.message)
