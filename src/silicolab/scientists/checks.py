"""``check_family``: run a scientist family through the contract every family keeps.

The partner of :func:`silicolab.envs.check_env`, in the spirit of scikit-learn's
``check_estimator``: ``check_family("coin")`` returns ``None`` or raises one
:class:`~silicolab.envs.errors.ContractError` naming the first rule broken and how to fix
it. The rules, in the order they are checked:

``family`` a :class:`~silicolab.scientists.Family` with a name, a coroutine ``play`` and a
``record_type`` with ``from_dict``; ``names``: its scientists start with
:data:`~silicolab.scientists.SCIENTISTS`, its aliases name them, ``llm`` needs a model;
``env``: an environment of the family exists (registered, or passed); ``scientist``: each
scientist checked is a :class:`~silicolab.scientists.Scientist` whose ``agent`` is its
name, and an unknown option is refused by name; ``episode``: playing it on the reset
environment ends (within ``timeout_s``) with a record; ``record``: the record's
``to_dict()`` is strict JSON through :func:`silicolab.core.files.dumps` and
``record_type.from_dict`` rebuilds it; ``summary``: ``summary()`` gives ``steps`` (an
int), ``scores`` (name -> number) and ``health`` (:class:`~silicolab.runs.UnitHealth`
counters); ``seeding``: the same scientist seed on the same environment seed scores the
same.
"""

from __future__ import annotations

import asyncio
import inspect
import json
from collections.abc import Iterable, Mapping
from functools import partial
from numbers import Real
from typing import Any, NoReturn

from silicolab.envs.checks import strict_json, unknown_option_problem
from silicolab.envs.errors import ContractError
from silicolab.llm.base import run_sync
from silicolab.runs.health import UnitHealth
from silicolab.scientists.base import SCIENTISTS, Family, Scientist, family_of

#: An option no scientist takes: ``Family.make`` must refuse it by name.
UNKNOWN_OPTION = "check_family_unknown_option"


class _Checker:
    def __init__(self, family: Any) -> None:
        self.family = family
        self.subject = str(getattr(family, "name", "") or type(family).__name__)

    def fail(self, rule: str, problem: str, fix: str) -> NoReturn:
        raise ContractError("check_family", self.subject, rule, problem, fix)

    def shape(self) -> None:
        family = self.family
        if not isinstance(family, Family) or not family.name:
            self.fail("family", f"got a {type(family).__name__}", "publish a named Family(...)")
        if not inspect.iscoroutinefunction(family.play):
            self.fail(
                "family",
                f"play is {family.play!r:.60}, not a coroutine function",
                "define the episode player as 'async def play(env, scientist, **options)'",
            )
        if not callable(getattr(family.record_type, "from_dict", None)):
            self.fail(
                "family",
                f"record_type {family.record_type!r:.60} has no from_dict()",
                "pass record_type=, the record class with a from_dict classmethod",
            )
        names = tuple(family.scientists)
        if names[: len(SCIENTISTS)] != SCIENTISTS:
            self.fail(
                "names",
                f"its scientists are {list(names)}",
                f"offer {list(SCIENTISTS)} first, in that order, then any of your own",
            )
        for old, new in family.aliases.items():
            if new not in family.scientists or old in family.scientists:
                self.fail("names", f"alias {old!r} -> {new!r}", "map an old name to a current one")
        if "llm" not in family.needs_model or not family.needs_model <= set(names):
            self.fail(
                "names",
                f"needs_model is {sorted(family.needs_model)}",
                "list the scientists that need model= (at least 'llm'), and only those",
            )

    def environment(self, env: Any, seed: int) -> Any:
        from silicolab.envs import registry

        if isinstance(env, str):
            return registry.make(env, seed=seed)
        if env is not None:
            return env
        for made in registry.specs():
            if made.scientists and registry.resolve(made.scientists) is self.family:
                return registry.make(made.id, seed=seed)
        self.fail(
            "env",
            "no registered environment names this family",
            "register(env_id, factory, scientists='package.module:FAMILY') or pass env=",
        )

    def scientist(self, name: str, seed: int) -> Any:
        made = self.family.make(name, seed=seed)
        if not isinstance(made, Scientist) or made.agent != name:
            self.fail(
                "scientist",
                f"make({name!r}) gave {made!r:.60} (agent {getattr(made, 'agent', None)!r})",
                f"give it agent = {name!r} and model_label = '' (no model)",
            )
        if not isinstance(made.model_label, str):
            self.fail("scientist", f"{name}.model_label is {made.model_label!r}", "use a str")
        build = partial(self.family.make, name, seed=seed)
        problem = unknown_option_problem(build, UNKNOWN_OPTION, f"make({name!r})")
        if problem:
            self.fail(
                "scientist",
                problem,
                "pass **options on to the scientist's class, which refuses unknown ones",
            )
        return made

    def episode(
        self, env: Any, name: str, seed: int, options: Mapping[str, Any], timeout_s: float
    ) -> Any:
        env.reset(seed)
        scientist = self.scientist(name, seed)

        async def play() -> Any:
            return await asyncio.wait_for(self.family.play(env, scientist, **options), timeout_s)

        try:
            record = run_sync(play())
        except TimeoutError:
            self.fail(
                "episode",
                f"the {name} scientist's episode did not end within {timeout_s:g} s",
                "end the episode when the budget or the step limit is spent",
            )
        except Exception as err:
            raise ContractError(
                "check_family",
                self.subject,
                "episode",
                f"the {name} scientist's episode raised {type(err).__name__}: {err}",
                "an episode of a registered scientist on a reset environment must finish",
            ) from err
        return record

    def record(self, record: Any, name: str) -> str:
        for method in ("to_dict", "summary"):
            if not callable(getattr(record, method, None)):
                self.fail("record", f"play returned {record!r:.60}", f"give the record {method}()")
        try:
            text = strict_json(record.to_dict())
        except (TypeError, ValueError) as err:
            self.fail(
                "record",
                f"the {name} episode's to_dict() is not strict JSON: it holds {err}",
                "keep only str, int, float, bool, None, lists and dicts with str keys",
            )
        rebuilt = self.family.record_type.from_dict(json.loads(text))
        if strict_json(rebuilt.to_dict()) != text:
            self.fail(
                "record",
                "record_type.from_dict(record.to_dict()) is not the same record",
                "rebuild every field in from_dict (as dataclasses.asdict writes them)",
            )
        return self.summary(record.summary(), name)

    def summary(self, summary: Any, name: str) -> str:
        fix = "return {'steps': int, 'scores': {name: float}, 'health': {counter: int}}"
        if not isinstance(summary, dict):
            self.fail("summary", f"summary() returned a {type(summary).__name__}", fix)
        steps, scores = summary.get("steps"), summary.get("scores")
        if not isinstance(steps, int) or isinstance(steps, bool) or steps < 0:
            self.fail("summary", f"steps is {steps!r}", fix)
        if not isinstance(scores, dict) or not all(
            isinstance(k, str) and isinstance(v, Real) and not isinstance(v, bool)
            for k, v in scores.items()
        ):
            self.fail("summary", f"scores is {scores!r:.80}", fix)
        try:
            UnitHealth(unit=name, **summary.get("health", {}))
        except TypeError as err:
            self.fail("summary", f"health is not UnitHealth counters: {err}", fix)
        return strict_json({"steps": steps, "scores": scores})


def check_family(
    family: Family | str,
    *,
    env: Any = None,
    scientists: Iterable[str] | None = None,
    options: Mapping[str, Any] | None = None,
    seed: int = 3,
    timeout_s: float = 600.0,
) -> None:
    """Check ``family`` (a :class:`Family`, a family name or an environment id).

    Returns ``None`` when every rule holds; raises one
    :class:`~silicolab.envs.errors.ContractError` for the first rule broken (the module
    docstring lists the rules). Each of ``scientists`` (default: the shared names that
    need no model, ``reference`` and ``random``) plays two episodes, with ``seed``, on
    ``env`` (an environment or an id; default: the first registered environment of the
    family), ``options`` going to ``play`` (e.g. BoxingGym's ``steps=1`` for a quick
    check). Runs the episodes with the synchronous runner, so call it from a script or a
    test.
    """
    if isinstance(family, str):
        family = family_of(family)
    checker = _Checker(family)
    checker.shape()
    played = checker.environment(env, seed)
    names = [n for n in SCIENTISTS if n not in family.needs_model]
    for name in names if scientists is None else scientists:
        first = checker.record(checker.episode(played, name, seed, options or {}, timeout_s), name)
        again = checker.record(checker.episode(played, name, seed, options or {}, timeout_s), name)
        if again != first:
            checker.fail(
                "seeding",
                f"two {name} episodes with seed={seed} scored {first} and {again}",
                "draw every random choice of the scientist and the player from the seeds",
            )


__all__ = ["UNKNOWN_OPTION", "check_family"]
