"""Hypothesis files a researcher edits: YAML (or JSON) in, errors naming field and line out.

``study hypothesis`` writes the file, the researcher edits it, ``study run --hypothesis
FILE`` reads it back. A bad edit must say where it is: validation errors from the model
are mapped back to the line of the offending key through the YAML node tree.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import ValidationError

from silicolab.core.errors import InputError
from silicolab.core.files import atomic_write_text, dumps, read_user_text
from silicolab.studies.hypothesis import FieldProblem, Hypothesis

_HEADER = (
    "# silicolab study hypothesis: edit any field, then run\n"
    "#   silicolab study run --hypothesis {name}\n"
    "# Types: continuous, ordinal, nominal, binary, count. Aggregations: min, max, mean,\n"
    "# mode, median, sum. Protocols: ordered, random, central_ordered, central_random,\n"
    "# coordinator_before, coordinator_after. A 'decisions' entry records why the\n"
    "# scientist model chose what it did; editing it changes nothing else.\n"
)


def write_hypothesis(hypothesis: Hypothesis, path: str | Path) -> Path:
    """Write ``hypothesis`` as commented YAML (``.json`` suffix: JSON) atomically."""
    path = Path(path)
    data = hypothesis.to_dict()
    if path.suffix == ".json":
        return atomic_write_text(path, dumps(data, indent=2, ensure_ascii=False) + "\n")
    text = yaml.safe_dump(data, sort_keys=False, allow_unicode=True, width=96)
    return atomic_write_text(path, _HEADER.format(name=path.name) + text)


def read_hypothesis(path: str | Path) -> Hypothesis:
    """Read and validate a hypothesis file; any problem is an :class:`InputError` that
    names the file, the line and the field."""
    path = Path(path)
    text = read_user_text(
        path,
        what="hypothesis file",
        missing="write one with 'silicolab study hypothesis' or list the built-in ones "
        "with 'silicolab study list-examples'",
    )
    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        where = f" line {mark.line + 1}" if mark is not None else ""
        problem = getattr(exc, "problem", None) or str(exc).splitlines()[0]
        raise InputError(f"{path}{where}: not valid YAML/JSON ({problem})") from None
    if not isinstance(data, dict):
        raise InputError(f"{path}: expected a mapping with 'scenario', 'agents', 'variables'")
    return hypothesis_from_data(data, source=str(path), root=root)


def hypothesis_from_data(
    data: dict[str, Any], *, source: str = "hypothesis", root: Any = None
) -> Hypothesis:
    """Validate ``data`` into a :class:`Hypothesis`, with errors naming the field (and the
    line when ``root``, the YAML node tree, is given)."""
    try:
        return Hypothesis.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        loc = [p for p in first["loc"] if not isinstance(p, str) or not p.startswith("function")]
        cause = (first.get("ctx") or {}).get("error")
        if isinstance(cause, FieldProblem):  # a cross-field check that knows its field
            loc += list(cause.loc)
        field = _dotted(loc, data)
        line = _line_of(root, loc)
        where = f" line {line}" if line else ""
        message = first["msg"].removeprefix("Value error, ")
        more = f" (and {len(exc.errors()) - 1} more problems)" if len(exc.errors()) > 1 else ""
        raise InputError(
            f"{source}{where}, field {field or '(top level)'}: {message}{more}"
        ) from None


def _dotted(loc: list[Any], data: Any) -> str:
    """``['variables', 2, 'type']`` -> ``variables[2](price).type``: the name helps."""
    out = ""
    node = data
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
            node = node[part] if isinstance(node, list) and part < len(node) else None
            if isinstance(node, dict) and "name" in node:
                out += f"({node['name']})"
        else:
            out += ("." if out else "") + str(part)
            node = node.get(part) if isinstance(node, dict) else None
    return out


def _line_of(root: Any, loc: list[Any]) -> int | None:
    """The 1-based line of the deepest YAML node on ``loc`` that exists."""
    node, line = root, None
    for part in loc:
        if node is None:
            break
        line = node.start_mark.line + 1
        if isinstance(node, yaml.MappingNode):
            match = [(k, v) for k, v in node.value if k.value == part]
            if not match:
                break
            key, node = match[0]
            line = key.start_mark.line + 1
        elif isinstance(node, yaml.SequenceNode) and isinstance(part, int):
            node = node.value[part] if part < len(node.value) else None
        else:
            break
    if node is not None and loc:
        line = node.start_mark.line + 1 if not isinstance(node, yaml.MappingNode) else line
    return line


def same_study(run_dir: Path, stored: Hypothesis, typed: Hypothesis) -> None:
    """Refuse ``study run NAME --resume`` when NAME (or ``--hypothesis FILE``) is not the
    study stored in ``run_dir``; the same study is resumed (the interrupted command with
    ``--resume`` added works)."""
    if typed.to_dict() != stored.to_dict():
        raise InputError(
            f"resume= continues {run_dir}, a study of {stored.name!r}, but you named "
            f"{typed.name!r}; drop the study name to resume it, or start a new run without "
            "resume=",
            params=("resume",),
        )


__all__ = ["hypothesis_from_data", "read_hypothesis", "same_study", "write_hypothesis"]
