"""Lazy package exports: a package's names are imported on first use, not with the package.

A package ``__init__`` that imports every submodule makes ``import silicolab.scm.graph``
pay for pandas and statsmodels-sized neighbours it never uses; on a Ray worker or a
process-pool worker that cost is paid once per process, before the first unit runs. A
package instead writes its imports inside ``if TYPE_CHECKING:`` (so type checkers, linters
and readers see ordinary imports), keeps its literal ``__all__``, and calls
:func:`lazy_exports`, which reads that block from the package's own source and imports a
name's module the first time the name is looked up (PEP 562). The block and ``__all__``
must name the same things: a package where they differ fails on import. A name that is
also a submodule's name (``silicolab.llm.structured``, function and module) is bound at
once, since importing that submodule would set the package's attribute to the module.
"""

from __future__ import annotations

import ast
import importlib
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any


def _type_checking_imports(source: str) -> dict[str, tuple[str, str]]:
    """``{public name: (module, name in that module)}`` from the ``if TYPE_CHECKING:``
    blocks of ``source``."""
    found: dict[str, tuple[str, str]] = {}
    for node in ast.parse(source).body:
        if not (isinstance(node, ast.If) and isinstance(node.test, ast.Name)):
            continue
        if node.test.id != "TYPE_CHECKING":
            continue
        for stmt in node.body:
            if isinstance(stmt, ast.ImportFrom) and stmt.module and stmt.level == 0:
                for alias in stmt.names:
                    found[alias.asname or alias.name] = (stmt.module, alias.name)
    return found


def lazy_exports(
    package: str, init_file: str, public: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``(__getattr__, __dir__)`` for the package ``package`` whose ``__init__`` is
    ``init_file`` and whose ``__all__`` is ``public``: every name imported in its
    ``if TYPE_CHECKING:`` block is imported from its module on first access and then kept
    in the package's namespace."""
    exports = _type_checking_imports(Path(init_file).read_text(encoding="utf-8"))
    if set(exports) != set(public):
        raise ImportError(
            f"{package}: __all__ and the TYPE_CHECKING imports differ "
            f"(only in __all__: {sorted(set(public) - set(exports))}; "
            f"only imported: {sorted(set(exports) - set(public))})"
        )
    namespace = importlib.import_module(package).__dict__
    here = Path(init_file).parent
    for name, (module, attribute) in exports.items():
        if (here / f"{name}.py").exists() or (here / name / "__init__.py").exists():
            # importing the submodule of that name would set the package's attribute to
            # the module, hiding the export from __getattr__: bind the export now
            namespace[name] = getattr(importlib.import_module(module), attribute)

    def __getattr__(name: str) -> Any:
        try:
            module, attribute = exports[name]
        except KeyError:
            raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        value = getattr(importlib.import_module(module), attribute)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return sorted({*namespace, *exports})

    return __getattr__, __dir__


__all__ = ["lazy_exports"]
