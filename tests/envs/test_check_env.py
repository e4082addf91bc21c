"""``check_env`` catches each broken rule: one small broken subclass of the documented toy
coin environment (tests/envs/coin_family.py) per rule, and the message names the rule,
what was seen and the fix, on one line."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from tests.envs.coin_family import CoinLab

from silicolab.core.seeding import rng
from silicolab.envs import ContractError, InvalidAction, check_env, make, register, registry


def _flip(lab: Any, generator: np.random.Generator) -> None:
    lab.flip(int(generator.integers(1, 4)))


def _flip_text(lab: Any, text: str) -> None:
    lab.flip(len(text) * 100)


class NoDescribe(CoinLab):
    describe = None  # type: ignore[assignment]


class BadFidelity(CoinLab):
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.fidelity = "exact"


class EmptyDescription(CoinLab):
    def describe(self) -> str:
        return "  "


class ListRecord(CoinLab):
    def to_record(self) -> Any:
        return list(super().to_record().items())


class ObjectInRecord(CoinLab):
    def to_record(self) -> dict[str, Any]:
        return {**super().to_record(), "generator": self._flips}


class ForgetsSeed(CoinLab):
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.seed = 0


_CLOCK = itertools.count()


class UnseededReset(CoinLab):
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        self.bias = float(rng(next(_CLOCK), "coin").uniform())


class ResetNoneRedraws(CoinLab):
    def reset(self, seed: int | None = None) -> None:
        super().reset(seed)
        if seed is None:
            self.seed = 99


class KeepsFlips(CoinLab):
    def reset(self, seed: int | None = None) -> None:
        kept = list(getattr(self, "heads", []))
        super().reset(seed)
        self.heads = kept


class AcceptsEverything(CoinLab):
    def flip(self, n: int) -> list[int]:
        return []


class CrashesOnGarbage(CoinLab):
    def flip(self, n: int) -> list[int]:
        if n > self.budget:
            raise ValueError("too many")
        return super().flip(n)


class SpendsOnRefusal(CoinLab):
    def flip(self, n: int) -> list[int]:
        if n > self.budget:
            self.heads.append(0)
            raise InvalidAction("Too many flips.")
        return super().flip(n)


class SilentRefusal(CoinLab):
    def flip(self, n: int) -> list[int]:
        if n > self.budget:
            raise InvalidAction("")
        return super().flip(n)


@pytest.mark.parametrize(
    ("lab", "rule", "seen"),
    [
        (NoDescribe(), "protocol", "no method describe()"),
        (BadFidelity(), "fidelity", "'exact'"),
        (EmptyDescription(), "describe", "describe() returned"),
        (ListRecord(), "record", "returned a list"),
        (ObjectInRecord(), "record", "not strict JSON: it holds a Generator"),
        (ForgetsSeed(), "reset", "env.seed is 0"),
        (UnseededReset(), "reset", "two reset(3) calls gave different records"),
        (ResetNoneRedraws(), "reset", "reset() with no seed"),
        (KeepsFlips(), "actions", "did not give the initial record back"),
        (AcceptsEverything(), "refusal", "'' was accepted"),
        (CrashesOnGarbage(), "refusal", "raised ValueError: too many"),
        (SpendsOnRefusal(), "refusal", "changed the episode"),
        (SilentRefusal(), "refusal", "refused with no message"),
    ],
    ids=lambda value: value if isinstance(value, str) else type(value).__name__,
)
def test_each_broken_rule_is_named(lab: CoinLab, rule: str, seen: str) -> None:
    with pytest.raises(ContractError) as info:
        check_env(lab, act=_flip, refuse=_flip_text)
    error = info.value
    assert (error.rule, error.checker) == (rule, "check_env") and seen in error.problem
    assert error.fix and "\n" not in str(error) and error.exit_code == 2
    assert str(error).startswith(f"check_env({type(lab).__name__}) breaks rule {rule!r}: ")


# -- the rules on what make() builds, through registered factories ---------------------


def _ignores_options(*, fidelity: str = "fixed", seed: int | None = 0, **_: Any) -> CoinLab:
    return CoinLab(fidelity=fidelity, seed=seed)


def _drops_fidelity(*, fidelity: str = "fixed", seed: int | None = 0) -> CoinLab:
    return CoinLab(seed=seed)


def _no_fidelity(*, seed: int | None = 0) -> CoinLab:
    return CoinLab(seed=seed)


_INSTANCES = itertools.count()


def _a_new_coin_each_time(*, fidelity: str = "fixed", seed: int | None = 0) -> CoinLab:
    class Drifting(CoinLab):
        offset = next(_INSTANCES)

        def reset(self, seed: int | None = None) -> None:
            super().reset(seed)
            self.bias += self.offset / 1000

    return Drifting(fidelity=fidelity, seed=seed)


@pytest.fixture
def registered_as() -> Iterator[Any]:
    def register_as(factory: Any, **facts: Any) -> Any:
        facts.setdefault("title", "Broken coin")
        register("broken-coin", factory, replace=True, **facts)
        return make("broken-coin", seed=3)

    yield register_as
    registry._REGISTRY.pop("broken-coin", None)  # leave the registry as it was
    registry._FACTORIES.pop("broken-coin", None)


@pytest.mark.parametrize(
    ("factory", "facts", "rule", "seen"),
    [
        (CoinLab, {"title": ""}, "spec", "title ''"),
        (CoinLab, {"goals": ()}, "spec", "goals []"),
        (CoinLab, {"scientists": "tests.envs.coin_family:Nothing"}, "spec", "AttributeError"),
        (_no_fidelity, {}, "options", "make(seed=, fidelity=) was refused"),
        (_drops_fidelity, {}, "options", "built seed=3, fidelity='fixed'"),
        (_ignores_options, {}, "options", "make(...) with check_env_unknown_option=1 was accepted"),
        (_a_new_coin_each_time, {}, "seeding", "start different episodes"),
    ],
    ids=["no-title", "no-goals", "bad-scientists", "no-fidelity", "drops", "kwargs", "unseeded"],
)
def test_broken_registrations_are_named(
    registered_as: Any, factory: Any, facts: dict[str, Any], rule: str, seen: str
) -> None:
    lab = registered_as(factory, **facts)
    with pytest.raises(ContractError) as info:
        check_env(lab)
    assert info.value.rule == rule and seen in info.value.problem, str(info.value)
    assert str(info.value).startswith("check_env(broken-coin) ")


def test_an_env_id_is_made_and_checked() -> None:
    assert check_env("causalab") is None
