"""``check_family``: every registered family (the built-in ones and the documented toy coin
family) passes it, and one small broken variant of the coin family per rule is caught with
the rule's name, what was seen and the fix, on one line."""

from __future__ import annotations

import asyncio
import dataclasses
import itertools
from typing import Any

import pytest
from tests.envs.coin_family import FAMILY, CoinLab, CoinRecord, Random, Reference, play

from silicolab.envs import ContractError, make, register
from silicolab.scientists import Family, check_family

#: BoxingGym's quick episode: one experiment, one checkpoint's questions, no regret.
QUICK_BOXINGGYM = {"steps": 1, "checkpoints": (1,), "n_questions": 1, "regret": False}


@pytest.fixture(scope="module", autouse=True)
def coin_registered() -> None:
    coin = "tests.envs.coin_family"
    register("coin", f"{coin}:make_coin", scientists=f"{coin}:FAMILY", title="Coin")


@pytest.mark.parametrize(
    ("family", "env", "options"),
    [
        ("causalab", None, {}),
        ("boxinggym", None, QUICK_BOXINGGYM),
        ("boxinggym", "boxinggym/emotion", QUICK_BOXINGGYM),
        ("coin", None, {}),
    ],
)
def test_every_registered_family_passes(family: str, env: str | None, options: Any) -> None:
    assert check_family(family, env=env, options=options) is None


def _scientists(**overrides: Any) -> dict[str, Any]:
    return {**FAMILY.scientists, **overrides}


class Impostor(Reference):
    agent = "oracle"


class Unseeded(Random):
    _draws = itertools.count()

    async def estimate(self, lab: CoinLab) -> float:
        lab.flip(1)
        return next(self._draws) / 100


class Takes(Reference):
    def __init__(self, seed: int | None = 0, **ignored: Any) -> None:
        super().__init__(seed)


async def forever(lab: CoinLab, scientist: Any) -> CoinRecord:
    while True:
        await asyncio.sleep(0)


async def crashes(lab: CoinLab, scientist: Any) -> CoinRecord:
    raise RuntimeError("the coin fell off the table")


@dataclasses.dataclass
class ObjectRecord(CoinRecord):
    def to_dict(self) -> dict[str, Any]:
        return {**super().to_dict(), "lab": CoinLab()}


@dataclasses.dataclass
class ForgetfulRecord(CoinRecord):
    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CoinRecord:
        return cls(**{**data, "flips": 0})


@dataclasses.dataclass
class WordySummary(CoinRecord):
    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "steps": "one"}


@dataclasses.dataclass
class SickSummary(CoinRecord):
    def summary(self) -> dict[str, Any]:
        return {**super().summary(), "health": {"steps": 1, "fevers": 2}}


def _recording(record_type: type[CoinRecord]) -> Any:
    async def player(lab: CoinLab, scientist: Any) -> CoinRecord:
        made = await play(lab, scientist)
        return record_type(**dataclasses.asdict(made))

    return player


def _sync_play(lab: CoinLab, scientist: Any) -> CoinRecord:
    raise AssertionError("never called")


BROKEN = {
    "not-a-family": ("family", "got a dict", {}),
    "sync-play": ("family", "not a coroutine function", {"play": _sync_play}),
    "no-record-type": ("family", "has no from_dict()", {"record_type": None}),
    "order": (
        "names",
        "['random', 'reference', 'llm']",
        {"scientists": {k: FAMILY.scientists[k] for k in ("random", "reference", "llm")}},
    ),
    "alias": ("names", "alias 'old' -> 'gone'", {"aliases": {"old": "gone"}}),
    "needs-model": ("names", "needs_model is []", {"needs_model": frozenset()}),
    "impostor": (
        "scientist",
        "(agent 'oracle')",
        {"scientists": _scientists(reference=lambda *, model=None, seed=0: Impostor())},
    ),
    "kwargs": (
        "scientist",
        "make('reference') with check_family_unknown_option=1 was accepted",
        {"scientists": _scientists(reference=lambda *, model=None, seed=0, **kw: Takes(**kw))},
    ),
    "forever": ("episode", "did not end within 0.5 s", {"play": forever}),
    "crashes": ("episode", "raised RuntimeError: the coin fell off", {"play": crashes}),
    "object": ("record", "it holds a CoinLab", {"play": _recording(ObjectRecord)}),
    "forgetful": (
        "record",
        "from_dict(record.to_dict()) is not the same",
        {"play": _recording(ForgetfulRecord), "record_type": ForgetfulRecord},
    ),
    "wordy": ("summary", "steps is 'one'", {"play": _recording(WordySummary)}),
    "sick": ("summary", "'fevers'", {"play": _recording(SickSummary)}),
    "unseeded": (
        "seeding",
        "two random episodes with seed=3 scored",
        {"scientists": _scientists(random=lambda *, model=None, seed=0: Unseeded(seed))},
    ),
}


@pytest.mark.parametrize("case", list(BROKEN))
def test_each_broken_rule_is_named(case: str) -> None:
    rule, seen, changes = BROKEN[case]
    family: Any = {} if case == "not-a-family" else dataclasses.replace(FAMILY, **changes)
    with pytest.raises(ContractError) as info:
        check_family(family, env=make("coin", seed=3), timeout_s=0.5 if case == "forever" else 600)
    error = info.value
    assert (error.checker, error.rule) == ("check_family", rule), str(error)
    assert seen in error.problem and error.fix and "\n" not in str(error)


def test_a_family_without_an_environment_is_named() -> None:
    unregistered = Family(name="dice", scientists=FAMILY.scientists, play=play)
    with pytest.raises(ContractError, match="no registered environment names this family"):
        check_family(dataclasses.replace(unregistered, record_type=CoinRecord))
