"""Digital actions: typed Python functions a game master offers agents as tools.

A :class:`Tool` is a documented function (its docstring's first line is the agents'
manual); :func:`parse_tool_call` finds a call to one in an agent's intent or a model's
reply (``name(k=v)`` or JSON ``{"tool", "args"}``), accepting only literal arguments.
"""

from __future__ import annotations

import ast
import inspect
import json
import re
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from silicolab.core.errors import InputError

if TYPE_CHECKING:
    from silicolab.sim.game_master import GameMaster, Resolution


@dataclass(frozen=True)
class Tool:
    """A Python function offered to agents as a digital action.

    The docstring's first line is the description. Parameters named ``actor`` and ``gm`` are
    injected by the game master; the others are the tool's arguments. The function returns
    an event statement or a :class:`Resolution`.
    """

    name: str
    fn: Callable[..., Any]
    description: str

    @classmethod
    def from_function(cls, fn: Callable[..., Any], name: str | None = None) -> Tool:
        doc = inspect.getdoc(fn)
        if not doc:
            raise InputError(f"tool {fn.__name__!r} needs a docstring: it is the agents' manual")
        return cls(name or fn.__name__, fn, doc.strip().splitlines()[0])

    @property
    def arguments(self) -> list[str]:
        sig = inspect.signature(self.fn)
        return [p for p in sig.parameters if p not in ("actor", "gm")]

    def usage(self) -> str:
        """One line for prompts, e.g. ``bid(amount: float) - Place a bid.``."""
        sig = inspect.signature(self.fn)
        args = ", ".join(
            str(p).replace("'", "") for n, p in sig.parameters.items() if n not in ("actor", "gm")
        )
        return f"{self.name}({args}) - {self.description}"

    def call(self, gm: GameMaster, actor: str, kwargs: Mapping[str, Any]) -> Resolution | str:
        """Run the tool; bad arguments raise :class:`InputError` with the usage line."""
        params = inspect.signature(self.fn).parameters
        full = dict(kwargs)
        if "actor" in params:
            full["actor"] = actor
        if "gm" in params:
            full["gm"] = gm
        try:
            inspect.signature(self.fn).bind(**full)
        except TypeError as err:
            raise InputError(f"bad call to {self.name}: {err}. Usage: {self.usage()}") from None
        return self.fn(**full)


def parse_tool_call(text: str, tools: Mapping[str, Tool]) -> tuple[Tool, dict[str, Any]] | None:
    """Find a tool call in an intent: a JSON ``{"tool", "args"}`` object or ``name(k=v)``.

    Only literal arguments are accepted (``ast.literal_eval``); nothing is executed.
    """
    if not tools:
        return None
    brace = text.find("{")
    if brace >= 0:
        try:
            obj = json.loads(text[brace : text.rfind("}") + 1])
        except ValueError:
            obj = None
        if isinstance(obj, dict) and obj.get("tool") in tools:
            args = obj.get("args") or {}
            if not isinstance(args, dict):
                raise InputError(f"tool call args must be an object, got {args!r}")
            return tools[obj["tool"]], args
    names = "|".join(re.escape(n) for n in sorted(tools, key=len, reverse=True))
    for match in re.finditer(rf"\b({names})\s*\(", text):
        end = text.find(")", match.end())
        while end >= 0:
            try:
                node = ast.parse(text[match.start() : end + 1], mode="eval").body
            except SyntaxError:
                end = text.find(")", end + 1)
                continue
            if isinstance(node, ast.Call) and not node.args:
                try:
                    kwargs = {k.arg: ast.literal_eval(k.value) for k in node.keywords if k.arg}
                except ValueError:
                    raise InputError("tool arguments must be literal values") from None
                return tools[match.group(1)], kwargs
            if isinstance(node, ast.Call):
                raise InputError(f"call {match.group(1)} with keyword arguments, e.g. name=value")
            break
    return None


__all__ = ["Tool", "parse_tool_call"]
