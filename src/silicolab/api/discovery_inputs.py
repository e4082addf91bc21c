"""The inputs of ``sl.discover`` checked and loaded before a run directory exists: the
data (a bundled dataset's name, a CSV file or a DataFrame), its truth, the method's
parameters, the background knowledge and the scientist's model.

The settings stored in ``run.json`` are the command line's (``dataset``, ``data`` as a
path, ``truth_edges``, ``param`` as ``name=value`` strings, ``require``/``forbid`` as
``cause->effect`` strings, the model options); a DataFrame adds ``frame`` (its shape,
columns and a hash, so a resume can check it was given the same table) and a truth given
as edges adds ``truth``.
"""

from __future__ import annotations

import hashlib
import inspect
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from silicolab.core.config import load_settings
from silicolab.core.errors import InputError

_EDGE = re.compile(r"^\s*([^-<>\s][^<>]*?)\s*->\s*([^-<>\s].*?)\s*$")
#: The name a DataFrame's run is filed under (its slug and ``dataset`` in the record).
FRAME_NAME = "dataframe"


def parse_params(items: Sequence[str]) -> dict[str, Any]:
    """``["alpha=0.01", "stable=false"]`` -> ``{"alpha": 0.01, "stable": False}`` (JSON
    values where they parse, strings otherwise)."""
    params: dict[str, Any] = {}
    for item in items:
        key, sep, value = str(item).partition("=")
        if not sep or not key.strip():
            raise InputError(
                f"params= item {item!r} must look like name=value (e.g. 'alpha=0.01'); from "
                "Python a dict works too",
                params=("params",),
            )
        try:
            params[key.strip()] = json.loads(value)
        except json.JSONDecodeError:
            params[key.strip()] = value
    return params


def param_items(params: Mapping[str, Any] | Sequence[str] | None) -> list[str]:
    """Method parameters as the stored ``name=value`` strings: a dict's values as JSON
    (read back by :func:`parse_params`), strings as they are."""
    if params is None:
        return []
    if isinstance(params, Mapping):
        return [f"{k}={json.dumps(v)}" for k, v in params.items()]
    if isinstance(params, str):
        return [params]
    return [str(item) for item in params]


def edge_items(edges: Any, param: str) -> list[str]:
    """Edges (``"a->b"`` strings or ``(cause, effect)`` pairs) as ``cause->effect``."""
    if edges is None:
        return []
    if isinstance(edges, str):
        edges = [edges]
    out = []
    for item in edges:
        if isinstance(item, str):
            out.append(item)
        elif isinstance(item, Sequence) and len(item) == 2:
            out.append(f"{item[0]}->{item[1]}")
        else:
            raise InputError(
                f"{param}= edge {item!r} must be 'cause->effect' or a (cause, effect) pair",
                params=(param,),
            )
    return out


def parse_edges(items: Sequence[str], param: str) -> tuple[tuple[str, str], ...]:
    """``["a->b"]`` -> ``(("a", "b"),)``; a clear error naming ``param`` otherwise."""
    edges = []
    for item in items:
        match = _EDGE.match(item)
        if not match:
            raise InputError(
                f"{param}= edge {item!r} must look like cause->effect (e.g. 'Weight->Mpg')",
                params=(param,),
            )
        edges.append((match.group(1), match.group(2)))
    return tuple(edges)


def truth_edges_of(truth: Any) -> list[list[str]]:
    """A truth given from Python as edges: a ``CausalGraph``/networkx graph, an
    adjacency DataFrame (``A.loc[cause, effect] = 1``), ``(cause, effect)`` pairs or
    ``"cause->effect"`` strings."""
    if isinstance(truth, pd.DataFrame):
        return [
            [str(c), str(e)]
            for c in truth.index
            for e in truth.columns
            if c != e and truth.loc[c, e] not in (0, False)
        ]
    if hasattr(truth, "edges"):
        edges = truth.edges() if callable(truth.edges) else truth.edges
        return [[str(c), str(e)] for c, e in edges]
    return [list(pair) for pair in parse_edges(edge_items(truth, "truth"), "truth")]


def frame_fingerprint(data: pd.DataFrame) -> dict[str, Any]:
    """A DataFrame's shape, columns and a hash of its values (stored for a resume)."""
    digest = hashlib.sha256(pd.util.hash_pandas_object(data, index=False).values.tobytes())
    return {
        "rows": len(data),
        "columns": [str(c) for c in data.columns],
        "sha256": digest.hexdigest(),
    }


def scientist_model(
    model: str | None, base_url: str | None, api_key_env: str | None, config: Path | None
) -> Any:
    """The scientist-role model (the one discovery methods play), with the overrides that
    were given."""
    from silicolab.llm.roles import role_model

    return role_model(
        "scientist", load_settings(config), spec=model, base_url=base_url, api_key_env=api_key_env
    )


@dataclass(frozen=True)
class Job:
    """Everything a discover run needs, checked: the method, dataset, knowledge and the
    method's keyword arguments."""

    method: str
    ds: Any
    knowledge: Any
    kwargs: dict[str, Any]


def prepare(
    settings: dict[str, Any], seed: Any, config: Path | None, frame: pd.DataFrame | None
) -> Job:
    """Load and check every input of a discover run (no run directory yet); ``frame`` is
    the caller's DataFrame when the data is one."""
    from silicolab.discovery import registry
    from silicolab.discovery.knowledge import Knowledge

    method = settings["method"]
    if seed is not None and (not isinstance(seed, int) or isinstance(seed, bool) or seed < 0):
        raise InputError(f"seed={seed!r} must be an integer, 0 or more", params=("seed",))
    ds = _dataset(settings, frame)
    kwargs = parse_params(settings["param"])
    knowledge = None
    if settings["require"] or settings["forbid"] or settings.get("tiers"):
        knowledge = Knowledge(
            required=parse_edges(settings["require"], "require"),
            forbidden=parse_edges(settings["forbid"], "forbid"),
            tiers=tuple(tuple(t) for t in settings.get("tiers") or ()),
        )
        knowledge.validate(list(ds.data.columns))
    takes = inspect.signature(method_function(method)).parameters
    if seed is not None:
        for name in ("seed", "random_state"):
            if name in takes and name not in kwargs:
                kwargs[name] = seed
    registry.check_params(method, kwargs)
    if method in registry.available("llm"):
        kwargs.update(
            model=scientist_model(
                settings["model"], settings["base_url"], settings["api_key_env"], config
            ),
            description=ds.description,
            variables=ds.variables,
        )
    elif settings["model"]:
        raise InputError(
            f"model= applies to LLM methods only; {method!r} is statistical", params=("model",)
        )
    return Job(method, ds, knowledge, kwargs)


def method_function(method: Any) -> Any:
    """The registered function of ``method``; an unknown name names ``method=``."""
    from silicolab.discovery import registry

    if isinstance(method, str):
        try:
            return registry.get(method)
        except InputError:
            pass
    raise InputError(
        f"unknown discovery method {method!r} (method=); available: "
        f"{', '.join(registry.available())}",
        params=("method",),
    )


def _dataset(settings: Mapping[str, Any], frame: pd.DataFrame | None) -> Any:
    """The :class:`~silicolab.discovery.datasets.Dataset` the settings name."""
    from silicolab.discovery import datasets

    if settings.get("frame") is not None:
        return _frame_dataset(settings, frame)
    dataset, data = settings["dataset"], settings["data"]
    if (dataset is None) == (data is None):
        raise InputError(
            "give the data: data= a bundled dataset's name (auto_mpg, dwd_climate, sachs), "
            "a CSV file or a DataFrame",
            params=("data",),
        )
    if dataset is not None:  # an unknown name: the loader's message lists the names
        return datasets.load(dataset)
    truth = settings.get("truth")
    ds = datasets.load_csv(data, truth_edges=settings["truth_edges"])
    return ds if truth is None else _with_truth(ds, truth)


def _frame_dataset(settings: Mapping[str, Any], frame: pd.DataFrame | None) -> Any:
    from silicolab.discovery import datasets

    if frame is None:
        raise InputError(
            "this run was made from a DataFrame; pass the same table as data= to resume it",
            params=("data",),
        )
    datasets.check_data(frame, source="data=")
    if frame_fingerprint(frame) != settings["frame"]:
        raise InputError(
            "data= is not the DataFrame this run was made from (its shape, columns or values "
            "differ); pass the same table, or start a new run",
            params=("data",),
        )
    data = frame.copy()
    data.columns = [str(c) for c in data.columns]
    ds = datasets.Dataset(
        name=FRAME_NAME,
        data=data,
        truth=None,
        description=f"user data (a DataFrame): {len(data)} rows, {data.shape[1]} variables",
        variables={c: f"column {c!r}" for c in data.columns},
    )
    truth = settings.get("truth")
    return ds if truth is None else _with_truth(ds, truth)


def _with_truth(ds: Any, edges: list[list[str]]) -> Any:
    """``ds`` with the truth given as edges, each named variable checked."""
    from dataclasses import replace

    from silicolab.scm.graph import CausalGraph

    columns = list(ds.data.columns)
    unknown = sorted({n for e in edges for n in e} - set(columns))
    if unknown:
        raise InputError(
            f"truth= names variable(s) {unknown} that are not data columns {columns}; fix "
            "the spelling",
            params=("truth",),
        )
    return replace(ds, truth=CausalGraph(columns, [tuple(e) for e in edges]))


__all__ = [
    "FRAME_NAME",
    "Job",
    "edge_items",
    "frame_fingerprint",
    "method_function",
    "param_items",
    "parse_edges",
    "parse_params",
    "prepare",
    "scientist_model",
    "truth_edges_of",
]
