"""Game-master prefabs for economic games whose rules are exact Python, not narration.

* ``game_theoretic`` — two-player matrix games (prisoner's dilemma, stag hunt, battle of
  the sexes): after every round of a ``choice`` scene the joint choice is looked up in the
  file's ``payoffs`` matrix, each player's payoff is added to the grounded ``score`` and
  each player is told what the other chose and earned. Choices stay private until the
  round ends, as in a simultaneous-move game.
* ``public_goods`` — the linear public-goods game, optionally with costly punishment:
  each round everyone receives an ``endowment`` and secretly puts part of it into a pot;
  the pot is multiplied by ``multiplier`` and shared equally; then (with ``punishment``)
  each player may fine one other player, paying ``cost`` to take ``fine`` from them.

Calls to action may say ``{round}`` and ``{rounds}`` (the round of the scene and how many
it has), so an offline script or a model knows where in the game it is.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import Field, model_validator

from silicolab.core.errors import InputError
from silicolab.sim.entity import ActionSpec
from silicolab.sim.game_master import Attempt, Resolution
from silicolab.sim.grounded import GroundedState
from silicolab.sim.prefabs.base import BuildContext, Params, Prefab, register
from silicolab.sim.prefabs.game_masters import (
    ScenedParams,
    VariableParams,
    grounded_state,
    scened_options,
)
from silicolab.sim.prefabs.scened import ScenedGameMaster
from silicolab.sim.prefabs.scenes import SceneParams

Joint = tuple[str, ...]


def _ledger(
    state: GroundedState,
    name: str,
    players: Sequence[str],
    start: float,
    minimum: float | None = None,
) -> None:
    """Declare ``name`` (entity -> number, every player at ``start``, never below
    ``minimum``) unless the file declared it; a declared one must hold a number for every
    player."""
    if name not in state:
        state.add(_variable(name, {p: float(start) for p in players}, minimum=minimum))
        return
    value = state[name]
    bad = [p for p in players if not isinstance(value, Mapping) or not _is_number(value.get(p))]
    if bad:
        raise InputError(
            f"grounded variable {name!r} must map every player to a number; it has none for "
            f"{bad} (leave it out of variables= and it is declared with 0 for everyone)"
        )


def _variable(name: str, value: Any, *, minimum: float | None) -> Any:
    (var,) = grounded_state(
        [VariableParams(name=name, value=value, minimum=minimum)]
    ).variables.values()
    return var


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool)


def _tidy(amount: float) -> float:
    """``amount`` rounded to 9 decimals, so the float noise of a multiplied pot
    (32.60000000000001) never reaches the state, the events or a comparison."""
    return round(amount, 9)


def _round_text(spec: ActionSpec, rnd: int, rounds: int) -> ActionSpec:
    text = spec.call_to_action.replace("{round}", str(rnd + 1)).replace("{rounds}", str(rounds))
    return dataclasses.replace(spec, call_to_action=text)


# -- game_theoretic ------------------------------------------------------------------------
def joint_of(key: str) -> Joint:
    """A payoff key ``"cooperate,defect"`` as the joint choice ``("cooperate", "defect")``."""
    return tuple(part.strip() for part in key.split(","))


class GameTheoreticParams(ScenedParams):
    """Scenes plus ``payoffs`` (``"choice of the first, choice of the second"`` -> the two
    payoffs, in participant order) and the grounded ``score`` the payoffs add to."""

    payoffs: dict[str, list[float]] = Field(..., min_length=1)
    score: str = Field("score", min_length=1)

    @model_validator(mode="after")
    def _complete(self) -> GameTheoreticParams:
        needed: dict[Joint, str] = {}
        for scene in self.scenes:
            if scene.kind != "choice":
                continue
            if scene.participants is not None and len(scene.participants) != 2:
                raise ValueError(
                    f"scene {scene.name!r} has {len(scene.participants)} participants; a "
                    f"payoff matrix is for two players: list exactly two"
                )
            commas = [o for o in scene.options if "," in o]
            if commas:
                raise ValueError(f"options {commas} of scene {scene.name!r} contain a comma")
            for joint in itertools.product(scene.options, repeat=2):
                needed.setdefault(joint, scene.name)
        if not needed:
            raise ValueError("the game_theoretic game master needs at least one choice scene")
        given: dict[Joint, str] = {}
        for key, pay in self.payoffs.items():
            if len(pay) != 2:
                raise ValueError(f"payoffs[{key!r}] must be two numbers, got {pay}")
            if joint_of(key) in given:
                raise ValueError(f"payoffs {given[joint_of(key)]!r} and {key!r} are the same pair")
            given[joint_of(key)] = key
        missing = [j for j in needed if j not in given]
        if missing:
            j = missing[0]
            more = f" (and {len(missing) - 1} more)" if len(missing) > 1 else ""
            raise ValueError(
                f"payoffs has no entry for {','.join(j)!r}{more}: scene {needed[j]!r} needs "
                f"every pair of its options, the first player's choice first"
            )
        unknown = [given[j] for j in given if j not in needed]
        if unknown:
            raise ValueError(f"payoffs {unknown} are no pair of any choice scene's options")
        return self


class PayoffGameMaster(ScenedGameMaster):
    """Plays two-player choice scenes and pays them by a payoff matrix (see module)."""

    def __init__(
        self, *, payoffs: Mapping[Joint, Sequence[float]], score: str, **options: Any
    ) -> None:
        super().__init__(**options)
        self.payoffs = {joint: tuple(pay) for joint, pay in payoffs.items()}
        self.score = score

    def _spec(self, name: str) -> ActionSpec:
        scene, rnd = self.scene(self._current)
        return _round_text(super()._spec(name), rnd, scene.rounds)

    def resolve_answer(self, attempt: Attempt) -> Resolution | None:
        """A choice is seen only by its maker until the round ends."""
        resolution = super().resolve_answer(attempt)
        if resolution is not None and self.scene(attempt.step)[0].kind == "choice":
            return dataclasses.replace(resolution, observers=(attempt.actor,))
        return resolution

    def players(self, scene: SceneParams) -> list[str]:
        """The scene's two players in participant order."""
        return list(scene.participants or self.entity_names)

    def round_end(
        self, scene: SceneParams, rnd: int, answers: Mapping[str, str], step: int
    ) -> None:
        """Pay the round's joint choice to both players and tell each what happened."""
        if scene.kind != "choice":
            return
        players = self.players(scene)
        head = f"{scene.name} round {rnd + 1}"
        missing = [p for p in players if p not in answers]
        if missing:
            event = f"{head}: nobody is paid, {' and '.join(missing)} made no valid choice."
            self.events.append(event)
            self.broadcast(event, players)
            return
        joint = tuple(answers[p] for p in players)
        gains = self.payoffs[joint]
        scores = dict(self.state[self.score])
        for player, gain in zip(players, gains, strict=True):
            scores[player] = scores.get(player, 0) + gain
        chose = ", ".join(f"{p} {c}" for p, c in zip(players, joint, strict=True))
        paid = ", ".join(f"{p} +{g:g}" for p, g in zip(players, gains, strict=True))
        event = f"{head}: {chose}; {paid}."
        self.state.apply({self.score: scores}, step=step, cause=event)
        self.events.append(event)
        for i, player in enumerate(players):
            other = players[1 - i]
            self.tell(
                player,
                f"{head}: you chose {joint[i]} and {other} chose {joint[1 - i]}; you earned "
                f"{gains[i]:g} and your {self.score} is now {scores[player]:g}.",
            )


@register
class GameTheoretic(Prefab):
    name = "game_theoretic"
    kind = "game_master"
    description = "two-player matrix games: choice rounds paid by a payoff table"
    Params = GameTheoreticParams

    @classmethod
    def build(cls, name: str, params: GameTheoreticParams, ctx: BuildContext) -> PayoffGameMaster:
        for scene in params.scenes:
            if scene.kind == "choice" and scene.participants is None and len(ctx.entity_names) != 2:
                raise InputError(
                    f"scene {scene.name!r} is a two-player game but the simulation has "
                    f"{len(ctx.entity_names)} entities: list the scene's two participants"
                )
        options = scened_options(name, params, ctx)
        _ledger(options["state"], params.score, ctx.entity_names, 0)
        payoffs = {joint_of(k): v for k, v in params.payoffs.items()}
        return PayoffGameMaster(model=ctx.gm_model, payoffs=payoffs, score=params.score, **options)


# -- public_goods --------------------------------------------------------------------------
NOBODY = "nobody"

_CONTRIBUTE = (
    "Round {round} of {rounds}: you have received {endowment}. How much of it does {name} "
    "put into the common pot (a number from 0 to {endowment})?"
)
_PUNISH = (
    "Round {round} of {rounds}: you may punish one player. Punishing costs you {cost} and "
    "takes {fine} from the one you punish. Whom does {name} punish?"
)


class PunishmentParams(Params):
    """Costly punishment: the punisher pays ``cost`` to take ``fine`` from the target."""

    cost: float = Field(..., gt=0)
    fine: float = Field(..., gt=0)


class PublicGoodsParams(Params):
    """The public-goods game (see the module docstring): ``rounds``, the ``endowment``
    every player receives each round, the pot's ``multiplier``, the grounded ``money``
    variable and its ``start_money``, optional ``punishment`` and the calls to action
    (``{round}``, ``{rounds}``, ``{endowment}``, ``{cost}``, ``{fine}`` and ``{name}``
    are filled in). Every entity plays."""

    rounds: int = Field(3, ge=1)
    endowment: float = Field(..., gt=0)
    multiplier: float = Field(..., gt=0)
    money: str = Field("money", min_length=1)
    start_money: float = Field(0, ge=0)
    punishment: PunishmentParams | None = None
    contribute_prompt: str = _CONTRIBUTE
    punish_prompt: str = _PUNISH
    variables: list[VariableParams] = Field(default_factory=list)
    history: int = Field(20, ge=1)

    def fill(self, text: str, rnd: int) -> str:
        """``text`` with everything but ``{name}`` filled in for round ``rnd`` (1-based)."""
        cost = self.punishment.cost if self.punishment else 0
        fine = self.punishment.fine if self.punishment else 0
        values = {"round": rnd, "rounds": self.rounds, "endowment": self.endowment}
        for key, value in (values | {"cost": cost, "fine": fine}).items():
            text = text.replace("{" + key + "}", f"{value:g}")
        return text

    def scenes(self, players: Sequence[str]) -> list[SceneParams]:
        """A secret contribution round, then (with punishment) a secret punishment round,
        ``rounds`` times."""
        n = len(players)
        rules = (
            f"Each round every player receives {self.endowment:g} and secretly puts part of "
            f"it into a common pot; the pot is multiplied by {self.multiplier:g} and shared "
            f"equally among the {n} players, and each keeps what they did not put in."
        )
        scenes = []
        for r in range(1, self.rounds + 1):
            scenes.append(
                SceneParams(
                    name=f"contribute_{r}",
                    kind="float",
                    call_to_action=self.fill(self.contribute_prompt, r),
                    announce=rules if r == 1 else "",
                    record="contributed",
                    rule="add",
                    secret=True,
                )
            )
            if self.punishment is not None:
                scenes.append(
                    SceneParams(
                        name=f"punish_{r}",
                        kind="choice",
                        call_to_action=self.fill(self.punish_prompt, r),
                        options=[*players, NOBODY],
                        secret=True,
                    )
                )
        return scenes


class PublicGoodsGameMaster(ScenedGameMaster):
    """Plays the public-goods game by its rules (see module); every number is checked."""

    def __init__(self, *, rules: PublicGoodsParams, **options: Any) -> None:
        super().__init__(**options)
        self.rules = rules

    def _spec(self, name: str) -> ActionSpec:
        spec = super()._spec(name)
        if spec.kind != "choice":
            return spec
        return dataclasses.replace(spec, options=tuple(o for o in spec.options if o != name))

    def resolve_answer(self, attempt: Attempt) -> Resolution | None:
        """Refuse a contribution outside 0..endowment and a punishment the punisher cannot
        pay for; otherwise record the answer (privately) as every scened game master does."""
        scene, _ = self.scene(attempt.step)
        money = self.state[self.rules.money][attempt.actor]
        if scene.kind == "float":
            amount = float(attempt.action)
            if not (math.isfinite(amount) and 0 <= amount <= self.rules.endowment):
                return Resolution(
                    f"{attempt.actor} must put between 0 and {self.rules.endowment:g} into "
                    f"the pot, not {attempt.action}",
                    rejected=True,
                )
        elif scene.kind == "choice" and attempt.action != NOBODY:
            cost = self.rules.punishment.cost  # type: ignore[union-attr]
            if attempt.action == attempt.actor:
                return Resolution(f"{attempt.actor} cannot punish themself", rejected=True)
            if money < cost:
                return Resolution(
                    f"{attempt.actor} cannot pay {cost:g} to punish {attempt.action} "
                    f"(has {money:g})",
                    rejected=True,
                )
        return super().resolve_answer(attempt)

    def round_end(
        self, scene: SceneParams, rnd: int, answers: Mapping[str, str], step: int
    ) -> None:
        """Share the pot after a contribution round; fine after a punishment round."""
        if scene.kind == "float":
            self._share(scene, answers, step)
        else:
            self._punish(scene, answers, step)

    def _share(self, scene: SceneParams, answers: Mapping[str, str], step: int) -> None:
        rules, players = self.rules, self.entity_names
        given = {p: float(answers[p]) if p in answers else 0.0 for p in players}
        pot = sum(given.values())
        share = pot * rules.multiplier / len(players)
        money = dict(self.state[rules.money])
        for p in players:
            money[p] = _tidy(money[p] + rules.endowment - given[p] + share)
        put = ", ".join(f"{p} {given[p]:g}" for p in players)
        idle = [p for p in players if p not in answers]
        note = f" ({' and '.join(idle)} gave no valid amount: 0)" if idle else ""
        event = (
            f"{scene.name}: {put}{note}; the pot of {pot:g} becomes "
            f"{pot * rules.multiplier:g} and each player gets {share:g}."
        )
        self._settle(event, {rules.money: money}, step)

    def _punish(self, scene: SceneParams, answers: Mapping[str, str], step: int) -> None:
        punishment, players = self.rules.punishment, self.entity_names
        assert punishment is not None  # punishment scenes exist only with punishment
        money = dict(self.state[self.rules.money])
        fined = dict(self.state["fined"])
        pairs = [(p, answers[p]) for p in players if answers.get(p, NOBODY) != NOBODY]
        for punisher, _ in pairs:  # affordable: checked when the choice was made
            money[punisher] = _tidy(money[punisher] - punishment.cost)
        lines = []
        for punisher, target in pairs:  # a fine takes at most what the target has left
            taken = min(punishment.fine, money[target])
            money[target] = _tidy(money[target] - taken)
            fined[target] = _tidy(fined[target] + taken)
            lines.append(f"{punisher} fined {target} {taken:g} (cost {punishment.cost:g})")
        event = f"{scene.name}: {'; '.join(lines) if lines else 'nobody punished anyone'}."
        self._settle(event, {self.rules.money: money, "fined": fined}, step)

    def _settle(self, event: str, updates: Mapping[str, Any], step: int) -> None:
        """Apply ``updates`` (checked), record ``event`` and tell each player their money."""
        self.state.apply(updates, step=step, cause=event)
        self.events.append(event)
        money = self.state[self.rules.money]
        for p in self.entity_names:
            self.tell(p, f"{event} You now have {money[p]:g}.")


@register
class PublicGoods(Prefab):
    name = "public_goods"
    kind = "game_master"
    description = "public-goods game: secret contributions, a multiplied pot, punishment"
    Params = PublicGoodsParams

    @classmethod
    def build(cls, name: str, params: PublicGoodsParams, ctx: BuildContext) -> Any:
        players = ctx.entity_names
        if len(players) < 2 or NOBODY in players:
            raise InputError(
                f"the public_goods game needs two or more entities, none named {NOBODY!r} "
                f"(got {list(players)})"
            )
        state = grounded_state(params.variables)
        _ledger(state, params.money, players, params.start_money, minimum=0)
        _ledger(state, "contributed", players, 0)
        if params.punishment is not None:
            _ledger(state, "fined", players, 0)
        return PublicGoodsGameMaster(
            rules=params,
            scenes=params.scenes(players),
            model=ctx.gm_model,
            state=state,
            clock=ctx.clock,
            premise=ctx.premise,
            name=name,
            history_window=params.history,
        )
