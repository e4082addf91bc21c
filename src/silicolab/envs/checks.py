"""``check_env``: run an environment through the contract every environment keeps.

In the spirit of Gymnasium's ``check_env`` and scikit-learn's ``check_estimator``: a
family author calls ``check_env(make("coin", seed=1), act=..., refuse=...)`` in a test and
gets ``None`` or one :class:`~silicolab.envs.errors.ContractError` naming the first rule
broken and how to fix it. The rules, in the order they are checked (``docs/architecture.md``,
"Checking your env/family", lists them):

``protocol`` the :class:`~silicolab.envs.Env` members exist; ``fidelity`` is one of
:data:`~silicolab.envs.FIDELITIES`; ``describe`` returns non-empty text; ``record``:
``to_record()`` is a dict that is strict JSON through :func:`silicolab.core.files.dumps`
(no object written as its ``str``); ``reset``: ``reset(seed)`` sets ``env.seed`` and
gives the same record every time, ``reset()`` keeps the seed; ``spec``: the
:class:`~silicolab.envs.EnvSpec` of an env built by ``make`` has a title, goals with
unique names and known kinds, and a scientists path that resolves; ``options``: the
factory takes ``seed`` and ``fidelity`` and refuses an unknown option by name;
``seeding``: a fresh instance with the same options is the same episode; with ``act``,
``actions``: accepted actions leave a strict-JSON record and replay identically after
``reset``; with ``refuse``, ``refusal``: garbage raises
:class:`~silicolab.envs.InvalidAction` with a message and changes nothing.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from functools import partial
from typing import Any, NoReturn

from silicolab.core.errors import InputError
from silicolab.core.files import dumps
from silicolab.envs.base import FIDELITIES, Env, EnvSpec
from silicolab.envs.errors import ContractError, InvalidAction
from silicolab.envs.registry import make, remake, resolve

#: An option no factory takes: ``make`` must refuse it by name.
UNKNOWN_OPTION = "check_env_unknown_option"
#: The texts ``refuse`` receives, one at a time: each must be an invalid action.
GARBAGE: tuple[str, ...] = ("", "hello", "[[[")
GOAL_KINDS = ("error", "accuracy")


def _refuse_unknown(value: Any) -> Any:
    raise TypeError(f"a {type(value).__name__} ({value!r:.60})")


def strict_json(value: Any) -> str:
    """``value`` as strict JSON text through :func:`~silicolab.core.files.dumps` (NaN and
    infinities become ``null``), but refusing, with a :class:`TypeError` naming the type,
    any object ``dumps`` would otherwise write as its ``str``."""
    return dumps(value, default=_refuse_unknown, sort_keys=True)


def unknown_option_problem(build: Callable[..., Any], option: str, call: str) -> str:
    """``""`` when ``build(option=1)`` is refused with an error naming ``option``, else
    what went wrong (``call`` names the call in that text). A contract rule of both
    checkers: an unknown option is refused by name, never silently ignored."""
    try:
        build(**{option: 1})
    except (InputError, TypeError) as err:
        return (
            ""
            if option in str(err)
            else f"{call} refused an unknown option without its name: {err}"
        )
    return f"{call} with {option}=1 was accepted"


class _Checker:
    """One ``check_env`` call: ``fail`` raises the :class:`ContractError` of a rule."""

    def __init__(self, env: Any) -> None:
        self.env = env
        made = getattr(env, "spec", None)
        self.spec = made if isinstance(made, EnvSpec) else None
        self.subject = self.spec.id if self.spec else type(env).__name__

    def fail(self, rule: str, problem: str, fix: str) -> NoReturn:
        raise ContractError("check_env", self.subject, rule, problem, fix)

    def record(self, rule: str = "record", when: str = "") -> str:
        """The env's record as strict JSON text (compared as text: no aliasing)."""
        record = self.env.to_record()
        if not isinstance(record, dict):
            self.fail(
                rule,
                f"to_record(){when} returned a {type(record).__name__}",
                "return a dict describing the episode (truth included)",
            )
        try:
            return strict_json(record)
        except (TypeError, ValueError) as err:
            self.fail(
                rule,
                f"to_record(){when} is not strict JSON: it holds {err}",
                "keep only str, int, float, bool, None, lists and dicts with str keys",
            )

    def protocol(self) -> None:
        for name in ("reset", "describe", "to_record"):
            if not callable(getattr(self.env, name, None)):
                self.fail("protocol", f"it has no method {name}()", f"define {name}() (see Env)")
        for name in ("fidelity", "seed"):
            if not hasattr(self.env, name):
                self.fail("protocol", f"it has no attribute {name!r}", f"set self.{name}")
        if self.env.fidelity not in FIDELITIES:
            self.fail(
                "fidelity",
                f"fidelity is {self.env.fidelity!r}",
                f"use one of {list(FIDELITIES)} (silicolab.envs.check_fidelity checks it)",
            )
        text = self.env.describe()
        if not isinstance(text, str) or not text.strip():
            self.fail(
                "describe",
                f"describe() returned {text!r:.60}",
                "return the task text a scientist starts from, as a non-empty str",
            )
        self.record()

    def reset(self, seed: int) -> str:
        self.env.reset(seed)
        if self.env.seed != seed:
            self.fail(
                "reset",
                f"after reset({seed}) env.seed is {self.env.seed!r}",
                "store the seed reset() is given in self.seed",
            )
        first = self.record("reset", f" after reset({seed})")
        self.env.reset(seed)
        if self.record("reset") != first:
            self.fail(
                "reset",
                f"two reset({seed}) calls gave different records",
                "draw everything random from the seed (silicolab.core.seeding.rng)",
            )
        self.env.reset()
        if self.env.seed != seed or self.record("reset") != first:
            self.fail(
                "reset",
                "reset() with no seed did not replay the current seed's episode",
                "let reset(None) keep self.seed",
            )
        return first

    def registration(self, seed: int) -> None:
        spec = self.spec
        assert spec is not None
        names = [goal.name for goal in spec.goals]
        if not spec.title or not names or len(set(names)) != len(names):
            self.fail(
                "spec",
                f"the spec has title {spec.title!r} and goals {names}",
                "register(..., title=..., goals=(GoalSpec(name=...), ...)) with unique names",
            )
        for goal in spec.goals:
            if goal.kind not in GOAL_KINDS:
                self.fail("spec", f"goal {goal.name!r} has kind {goal.kind!r}", f"use {GOAL_KINDS}")
        if spec.scientists:
            try:
                family = resolve(spec.scientists)
            except (ImportError, AttributeError) as err:
                family, reason = None, f"{type(err).__name__}: {err}"
            else:
                reason = f"it names a {type(family).__name__}"
            if not callable(getattr(family, "play", None)):
                self.fail(
                    "spec",
                    f"scientists={spec.scientists!r} does not resolve to a Family ({reason})",
                    "pass scientists='package.module:FAMILY' naming a silicolab.scientists.Family",
                )
        for fidelity in FIDELITIES:
            try:
                other = remake(self.env, seed=seed, fidelity=fidelity)
            except InputError as err:
                self.fail(
                    "options",
                    f"make(seed=, fidelity=) was refused: {err}",
                    "let the factory take the keyword options seed and fidelity",
                )
            if (other.seed, other.fidelity) != (seed, fidelity):
                self.fail(
                    "options",
                    f"make(seed={seed}, fidelity={fidelity!r}) built seed={other.seed!r}, "
                    f"fidelity={other.fidelity!r}",
                    "pass the seed and fidelity options on to the environment",
                )
        problem = unknown_option_problem(partial(remake, self.env), UNKNOWN_OPTION, "make(...)")
        if problem:
            self.fail(
                "options",
                problem,
                "give the factory explicit keyword parameters (make names an unknown one)",
            )

    def seeding(self, seed: int, first: str) -> None:
        fresh = remake(self.env, seed=seed, fidelity=self.env.fidelity)
        if strict_json(fresh.to_record()) != first:
            self.fail(
                "seeding",
                f"two instances made with seed={seed} start different episodes",
                "draw everything random from the seed (silicolab.core.seeding.rng)",
            )

    def actions(self, act: Callable[[Any, Any], None], seed: int, first: str) -> None:
        import numpy as np

        def play() -> str:
            rng = np.random.default_rng(0)
            for _ in range(2):
                act(self.env, rng)
            return self.record("actions", " after two actions")

        played = play()
        self.env.reset(seed)
        if self.record("actions") != first:
            self.fail(
                "actions",
                "reset() after actions did not give the initial record back",
                "clear every piece of episode state in reset()",
            )
        if play() != played:
            self.fail(
                "actions",
                "the same actions after reset() gave a different episode",
                "restart every random stream from the seed in reset()",
            )

    def refusal(self, refuse: Callable[[Any, str], Any], garbage: Iterable[str]) -> None:
        before = self.record("refusal")
        for text in garbage:
            try:
                refuse(self.env, text)
            except InvalidAction as err:
                if not err.message:
                    self.fail("refusal", f"{text!r} was refused with no message", "say why")
            except Exception as err:
                self.fail(
                    "refusal",
                    f"{text!r} raised {type(err).__name__}: {err}",
                    "raise silicolab.envs.InvalidAction(message the agent sees) for it",
                )
            else:
                self.fail("refusal", f"{text!r} was accepted as an action", "validate actions")
            if self.record("refusal") != before:
                self.fail(
                    "refusal",
                    f"refusing {text!r} changed the episode",
                    "validate an action before it spends budget or changes state",
                )


def check_env(
    env: Env | str,
    *,
    act: Callable[[Any, Any], None] | None = None,
    refuse: Callable[[Any, str], Any] | None = None,
    garbage: Iterable[str] = GARBAGE,
    seed: int = 3,
) -> None:
    """Check ``env`` (an environment, or an id made with ``seed``) against the contract.

    Returns ``None`` when every rule holds; raises one
    :class:`~silicolab.envs.errors.ContractError` for the first rule broken (its ``rule``,
    ``problem`` and ``fix``; the module docstring lists the rules). ``act(env, rng)``
    takes one accepted action chosen with the NumPy generator ``rng`` (the checker takes
    two, then replays them); ``refuse(env, text)`` turns each ``garbage`` text into an
    action that must be refused. The registration rules run only on an env built by
    :func:`silicolab.envs.make`. The env is left reset to ``seed``.
    """
    checked: Env = make(env, seed=seed) if isinstance(env, str) else env
    checker = _Checker(checked)
    checker.protocol()
    first = checker.reset(seed)
    if checker.spec is not None:
        checker.registration(seed)
        checker.seeding(seed, first)
    if act is not None:
        checker.actions(act, seed, first)
    if refuse is not None:
        checked.reset(seed)
        checker.refusal(refuse, garbage)
    checked.reset(seed)


__all__ = ["GARBAGE", "UNKNOWN_OPTION", "check_env", "strict_json", "unknown_option_problem"]
