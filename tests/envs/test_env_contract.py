"""The contract every registered environment keeps, whatever its family.

:func:`silicolab.envs.check_env` runs each id in the registry, at both fidelities, through
the contract (``make`` builds an :class:`~silicolab.envs.Env` carrying its spec; the same
seed gives the same episode and ``reset`` replays it; random actions are accepted and
garbage is refused with :class:`~silicolab.envs.InvalidAction`, a message, no budget spent;
the record is strict JSON); the family-specific facts (the spec's goals agree with the
environment's own, BoxingGym's designs round-trip as text) are checked here.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, get_args

import numpy as np
import pytest

from silicolab.envs import FIDELITIES, Env, InvalidAction, check_env, make, registered, specs
from silicolab.envs.registry import BoxingGymId

IDS = [s.id for s in specs() if s.family in ("causalab", "boxinggym")]


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


@pytest.mark.parametrize("fidelity", FIDELITIES)
@pytest.mark.parametrize("env_id", IDS)
def test_every_registered_env_passes_check_env(env_id: str, fidelity: str) -> None:
    env = make(env_id, fidelity=fidelity, seed=3)
    act, garbage = ACTIONS[env.spec.family]
    check_env(env, act=act, refuse=garbage)  # None, or a ContractError naming the rule
    assert isinstance(env, Env) and env.spec.kwargs == {"fidelity": fidelity, "seed": 3}
    assert env.fidelity == fidelity and env.seed == 3


@pytest.mark.parametrize("env_id", IDS)
def test_the_spec_agrees_with_the_environment(env_id: str) -> None:
    env = make(env_id, seed=1)
    spec = env.spec  # check_env checked the title and goals; every built-in has scientists
    assert spec.scientists
    if spec.family == "boxinggym":
        assert [g.name for g in spec.goals] == list(type(env).goals)
        for goal in spec.goals:
            built = make(env_id, goal=goal.name, seed=1).goal
            assert built.kind == goal.kind, (env_id, goal.name)
        assert spec.participants_speak == (spec.name in ("emotion", "moral_machines"))


def test_the_typed_boxinggym_ids_are_the_registered_ones() -> None:
    assert set(get_args(BoxingGymId)) == set(registered("boxinggym"))


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
