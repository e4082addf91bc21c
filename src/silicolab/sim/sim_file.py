"""Simulation files: YAML in, :class:`~silicolab.sim.simulation.Simulation` out, and back.

A bad edit is refused with the file, the line and the field, e.g.::

    election.yaml, line 14 (entities.2.params.goal): Input should be a valid string

so a user editing a copied world (``silicolab sim run election --write my.yaml``) is told
exactly where the file went wrong. Locations come from the YAML node tree, so they are
exact for every mapping key and list item.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, NoReturn

import yaml
from pydantic import ValidationError

from silicolab.core.errors import InputError
from silicolab.core.files import read_user_text
from silicolab.sim.simulation import Simulation, prefab_problems

Location = tuple[Any, ...]


def _lines(node: yaml.Node, loc: Location, out: dict[Location, int]) -> None:
    """Record the 1-based line of every location under ``node``."""
    out[loc] = node.start_mark.line + 1
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            child = (*loc, key.value)
            out[child] = key.start_mark.line + 1
            _lines(value, child, out)
            out[child] = key.start_mark.line + 1
    elif isinstance(node, yaml.SequenceNode):
        for i, item in enumerate(node.value):
            _lines(item, (*loc, i), out)


def _line_of(loc: Location, lines: dict[Location, int]) -> int | None:
    while loc:
        if loc in lines:
            return lines[loc]
        loc = loc[:-1]
    return lines.get(())


def _refuse(
    source: str, problems: list[tuple[Location, str]], lines: dict[Location, int]
) -> NoReturn:
    shown = []
    for loc, msg in problems[:5]:
        line = _line_of(loc, lines)
        where = f", line {line}" if line else ""
        field = ".".join(str(p) for p in loc) or "(top)"
        shown.append(f"{source}{where} ({field}): {msg}")
    more = f" (and {len(problems) - 5} more)" if len(problems) > 5 else ""
    raise InputError("\n".join(shown) + more + ". Fix the file and run it again.")


def parse_simulation(text: str, source: str = "<string>") -> Simulation:
    """A :class:`Simulation` from YAML ``text``; errors name ``source``, line and field."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f", line {mark.line + 1}" if mark is not None else ""
        problem = getattr(err, "problem", None) or str(err)
        raise InputError(f"{source}{where}: not valid YAML ({problem})") from None
    if not isinstance(data, dict):
        raise InputError(f"{source}: a simulation file is a YAML mapping (name:, entities:, ...)")
    lines: dict[Location, int] = {}
    if node is not None:
        _lines(node, (), lines)
    try:  # the file's shape first, then each prefab's parameters, each with its location
        sim = Simulation.model_validate(data, context={"skip_prefabs": True})
    except ValidationError as err:
        _refuse(source, [(tuple(e["loc"]), e["msg"]) for e in err.errors()], lines)
    problems = prefab_problems(sim)
    if problems:
        _refuse(source, problems, lines)
    return sim


def load_simulation(path: str | Path) -> Simulation:
    """Read and check a simulation file."""
    path = Path(path)
    text = read_user_text(path, what="simulation file")
    return parse_simulation(text, path.name)


def dump_simulation(sim: Simulation) -> str:
    """The simulation as YAML, fields in their declared order, defaults left out."""
    data = sim.model_dump(mode="json", exclude_defaults=True)
    data = {"name": data.pop("name"), **data}
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=88)
