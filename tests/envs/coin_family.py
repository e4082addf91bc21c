"""A whole environment family in one module: a coin of hidden bias, and its scientists.

The test registers it with one line (see ``docs/architecture.md``)::

    register("coin", "tests.envs.coin_family:make_coin",
             scientists="tests.envs.coin_family:FAMILY", title="Coin")

and then runs it through ``run_episode``, the episode bench and ``silicolab bench episodes``.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, field
from typing import Any

from silicolab.core.seeding import rng
from silicolab.envs import EnvSpec, InvalidAction, check_fidelity
from silicolab.scientists import Family


class CoinLab:
    """Flip a coin of hidden bias (at most ``budget`` flips), then estimate the bias."""

    spec: EnvSpec | None = None

    def __init__(self, *, budget: int = 20, fidelity: str = "fixed", seed: int | None = 0):
        self.budget, self.fidelity = budget, check_fidelity(fidelity)
        self.reset(seed)

    def reset(self, seed: int | None = None) -> None:
        self.seed = self.seed if seed is None and hasattr(self, "seed") else seed
        self.bias = float(rng(self.seed, "coin", "bias").uniform(0.1, 0.9))
        self._flips = rng(self.seed, "coin", "flips")
        self.heads: list[int] = []

    def describe(self) -> str:
        return (
            f"A coin lands heads with an unknown probability; you may flip it {self.budget} times."
        )

    def flip(self, n: int) -> list[int]:
        """Flip ``n`` times; refused (no flip spent) beyond the budget."""
        if not isinstance(n, int) or not 1 <= n <= self.budget - len(self.heads):
            raise InvalidAction(f"You can flip 1 to {self.budget - len(self.heads)} times.")
        new = [int(x) for x in self._flips.random(n) < self.bias]
        self.heads += new
        return new

    def to_record(self) -> dict[str, Any]:
        return {"env": "coin", "seed": self.seed, "bias": self.bias, "heads": list(self.heads)}


def make_coin(*, budget: int = 20, fidelity: str = "fixed", seed: int | None = 0) -> CoinLab:
    return CoinLab(budget=budget, fidelity=fidelity, seed=seed)


class Reference:
    """Spends the whole budget, answers with the posterior mean (uniform prior)."""

    agent, model_label = "reference", ""

    def __init__(self, seed: int | None = 0) -> None:
        self.seed = seed

    async def estimate(self, lab: CoinLab) -> float:
        heads = lab.flip(lab.budget)
        return (sum(heads) + 1) / (len(heads) + 2)


class Random(Reference):
    """One flip, then a guess at random."""

    agent = "random"

    async def estimate(self, lab: CoinLab) -> float:
        lab.flip(1)
        return float(rng(self.seed, "coin", "guess").uniform())


@dataclass
class CoinRecord:
    seed: int | None
    estimate: float
    bias: float
    flips: int
    usage: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> CoinRecord:
        return cls(**data)

    def summary(self) -> dict[str, Any]:
        error = abs(self.estimate - self.bias)
        return {"steps": 1, "scores": {"error": error}, "health": {"steps": 1}}


async def play(lab: CoinLab, scientist: Reference) -> CoinRecord:
    estimate = await scientist.estimate(lab)
    assert not math.isnan(estimate)
    return CoinRecord(lab.seed, estimate, lab.bias, len(lab.heads))


FAMILY = Family(
    name="coin",
    scientists={
        "reference": lambda *, model=None, seed=0: Reference(seed),
        "random": lambda *, model=None, seed=0: Random(seed),
        "llm": lambda *, model, seed=0: Reference(seed),  # a toy: no language model needed
    },
    play=play,
    record_type=CoinRecord,
)
