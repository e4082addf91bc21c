"""Discovery methods by name: ``discover(data, "pc")`` runs any registered method.

The statistical methods are registered here; the LLM methods register themselves when
:mod:`silicolab.discovery.mac` is imported, which :func:`get` and :func:`available` do
lazily (so the LLM stack is only loaded when someone asks for a method by name). If that
import fails, the statistical methods still work and the failure is named in the error for
an unknown method instead of being hidden.
"""

from __future__ import annotations

import importlib
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import pandas as pd

from silicolab.core.errors import InputError
from silicolab.discovery import statistical
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.result import GraphResult

Kind = Literal["statistical", "llm"]
KINDS: tuple[Kind, ...] = ("statistical", "llm")
LLM_MODULE = "silicolab.discovery.mac"


@dataclass(frozen=True)
class Entry:
    """One registered method."""

    name: str
    fn: Callable[..., GraphResult]
    kind: Kind
    description: str


_REGISTRY: dict[str, Entry] = {}
_llm_import_error: str | None = None
_llm_loaded = False


def register(name: str, fn: Callable[..., GraphResult], *, kind: Kind, description: str) -> None:
    """Make ``fn`` (signature ``fn(data, *, knowledge=None, **params) -> GraphResult``)
    available as ``name``. Re-registering the same function is a no-op (modules may be
    imported twice); giving the name to another function is an error."""
    if kind not in KINDS:
        raise InputError(f"kind must be one of {KINDS}; got {kind!r}")
    if not name or not name.replace("_", "").replace("-", "").isalnum():
        raise InputError(f"method name {name!r} must be letters, digits, '_' or '-'")
    existing = _REGISTRY.get(name)
    if existing is not None and existing.fn is not fn:
        same = getattr(existing.fn, "__qualname__", None) == getattr(fn, "__qualname__", "")
        if not (same and existing.fn.__module__ == fn.__module__):
            raise InputError(f"a discovery method named {name!r} is already registered")
    _REGISTRY[name] = Entry(name, fn, kind, description)


def _load_llm_methods() -> None:
    global _llm_loaded, _llm_import_error
    if _llm_loaded:
        return
    _llm_loaded = True
    try:
        importlib.import_module(LLM_MODULE)
    except ImportError as exc:
        _llm_import_error = f"{type(exc).__name__}: {exc}"


def get(name: str) -> Callable[..., GraphResult]:
    """The method registered as ``name``; an :class:`InputError` lists the names there are."""
    return entry(name).fn


def entry(name: str) -> Entry:
    """The full registry entry (function, kind, description) of ``name``."""
    if name not in _REGISTRY:
        _load_llm_methods()
    if name not in _REGISTRY:
        hint = (
            f" (LLM methods are unavailable: importing {LLM_MODULE} failed with "
            f"{_llm_import_error})"
            if _llm_import_error
            else ""
        )
        raise InputError(f"unknown discovery method {name!r}; available: {sorted(_REGISTRY)}{hint}")
    return _REGISTRY[name]


def kind_of(name: str) -> Kind:
    """``"statistical"`` or ``"llm"`` for a registered method."""
    return entry(name).kind


def available(kind: str | None = None) -> dict[str, str]:
    """``{name: description}`` of every registered method, or of one ``kind``."""
    if kind is not None and kind not in KINDS:
        raise InputError(f"kind must be one of {KINDS} or None; got {kind!r}")
    _load_llm_methods()
    return {
        name: e.description
        for name, e in sorted(_REGISTRY.items())
        if kind is None or e.kind == kind
    }


def discover(
    data: pd.DataFrame, method: str, *, knowledge: Knowledge | None = None, **params: Any
) -> GraphResult:
    """Run the method registered as ``method`` on ``data``.

    Parameters a method's signature cannot take are an :class:`InputError` naming them
    (methods that take ``**params`` check their own).
    """
    check_params(method, params)
    return get(method)(data, knowledge=knowledge, **params)


def check_params(method: str, params: dict[str, Any]) -> None:
    """Refuse, before any work, a parameter ``method`` cannot take or a value of the wrong
    type (``alpha="abc"``), naming it. Methods that take ``**params`` check the names of
    those themselves."""
    signature = inspect.signature(get(method))
    takes_any = any(p.kind is p.VAR_KEYWORD for p in signature.parameters.values())
    unknown = sorted(set(params) - set(signature.parameters))
    if unknown and not takes_any:
        named = sorted(
            n
            for n, p in signature.parameters.items()
            if p.kind is p.KEYWORD_ONLY and n != "knowledge"
        )
        raise InputError(
            f"{method} does not accept parameter(s) {unknown}; it takes {named}. Check the spelling"
        )
    for name, value in params.items():
        kind = _expected_type(signature.parameters.get(name), name)
        if kind is not None and not _fits(value, kind):
            raise InputError(
                f"{method}: parameter {name} must be {_TYPE_WORDS[kind]}, got {value!r} "
                f"(e.g. {name}={_example(kind)})"
            )


#: Expected types of the parameters methods take through ``**params`` (the backend's own
#: options), so a typo such as ``max_k="abc"`` is refused before the backend chokes on it.
EXTRA_PARAM_TYPES: dict[str, type] = {
    **dict.fromkeys(
        ("max_k", "uc_rule", "uc_priority", "depth", "max_path_length", "maxP", "k"), int
    ),
    **dict.fromkeys(("max_parents", "max_iter", "random_state", "seed", "replicate"), int),
    **dict.fromkeys(("verbose", "stable", "use_path_extension", "use_k_cycle_heuristic"), bool),
    "apply_prior_knowledge_softly": bool,
}
_TYPE_WORDS = {bool: "true or false", int: "an integer", float: "a number", str: "a string"}


def _expected_type(parameter: inspect.Parameter | None, name: str) -> type | None:
    default = parameter.default if parameter is not None else inspect.Parameter.empty
    for kind in (bool, int, float, str):  # bool first: it is also an int
        if default is not inspect.Parameter.empty and type(default) is kind:
            return kind
    return EXTRA_PARAM_TYPES.get(name)


def _fits(value: Any, kind: type) -> bool:
    if value is None:
        return True
    if kind is bool:
        return isinstance(value, bool)
    if kind is int:
        return isinstance(value, int) and not isinstance(value, bool)
    if kind is float:
        return isinstance(value, int | float) and not isinstance(value, bool)
    return isinstance(value, kind)


def _example(kind: type) -> str:
    return {bool: "true", int: "3", float: "0.05", str: "fisherz"}[kind]


for _name, _fn, _description in (
    ("pc", statistical.pc, "PC: constraint-based CPDAG from Fisher-z (or other) CI tests"),
    ("fci", statistical.fci, "FCI: constraint-based PAG that allows latent confounders"),
    ("ges", statistical.ges, "GES: greedy equivalence search with a BIC score (CPDAG)"),
    (
        "exact",
        statistical.exact,
        "Exact Search: BIC-optimal DAG by A*/DP (scp_orientation_quirk=True reproduces SCP)",
    ),
    (
        "exact_scp",
        statistical.exact_scp,
        "Exact Search read as SCP/MAC did (edges reversed): reproduces the published rows",
    ),
    ("direct_lingam", statistical.direct_lingam, "DirectLiNGAM: linear non-Gaussian DAG"),
    ("ica_lingam", statistical.ica_lingam, "ICA-LiNGAM: linear non-Gaussian DAG via FastICA"),
    ("cdnod", statistical.cdnod, "CD-NOD: PC with a context variable for distribution shifts"),
):
    register(_name, _fn, kind="statistical", description=_description)
