"""Lazy package exports (silicolab.core.lazy): names load on first use, and a worker that
runs CPU-bound units never imports what only the driver needs."""

from __future__ import annotations

import importlib
import json
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from tests.support.cli import cli_env

from silicolab.core.lazy import lazy_exports

LAZY_PACKAGES = ("silicolab.scm", "silicolab.llm")


def _printed(code: str) -> str:
    """The last line ``code`` prints in a fresh interpreter."""
    done = subprocess.run(
        [sys.executable, "-c", code], env=cli_env(), capture_output=True, text=True, check=True
    )
    return done.stdout.splitlines()[-1]


def _modules_after(code: str) -> set[str]:
    """The modules a fresh interpreter has imported after running ``code``."""
    return set(
        json.loads(_printed(code + "\nimport json, sys\nprint(json.dumps(sorted(sys.modules)))"))
    )


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_public_name_resolves_to_its_defining_module(package: str) -> None:
    module = importlib.import_module(package)
    assert module.__all__, package
    for name in module.__all__:
        value = getattr(module, name)
        assert value is not None
        assert name in vars(module)  # kept after the first lookup
    assert set(module.__all__) <= set(dir(module))


def test_names_are_the_objects_of_their_modules() -> None:
    import silicolab.scm as scm
    from silicolab.scm.model import SCM
    from silicolab.scm.variables import Variable

    assert scm.SCM is SCM
    assert scm.Variable is Variable
    from silicolab.scm import shd  # the from-import form goes through __getattr__ too

    assert shd is importlib.import_module("silicolab.scm.metrics").shd


def test_an_unknown_name_is_an_attribute_error_naming_the_package() -> None:
    import silicolab.scm as scm

    with pytest.raises(AttributeError, match=r"'silicolab\.scm' has no attribute 'nope'"):
        _ = scm.nope
    with pytest.raises(ImportError):
        exec("from silicolab.scm import nope", {})


def test_a_package_whose_all_and_imports_differ_fails_on_import(tmp_path: Path) -> None:
    package = tmp_path / "lazypkg_mismatch"
    package.mkdir()
    (package / "part.py").write_text("def one():\n    return 1\n\n\ndef two():\n    return 2\n")
    (package / "__init__.py").write_text(
        textwrap.dedent(
            """
            from typing import TYPE_CHECKING

            from silicolab.core.lazy import lazy_exports

            if TYPE_CHECKING:
                from lazypkg_mismatch.part import one

            __all__ = ["one", "two"]
            __getattr__, __dir__ = lazy_exports(__name__, __file__, __all__)
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        with pytest.raises(ImportError, match=r"only in __all__: \['two'\]"):
            importlib.import_module("lazypkg_mismatch")
    finally:
        sys.path.remove(str(tmp_path))
        sys.modules.pop("lazypkg_mismatch", None)


def test_lazy_exports_reads_aliases_and_ignores_other_blocks(tmp_path: Path) -> None:
    init = tmp_path / "__init__.py"
    init.write_text(
        textwrap.dedent(
            """
            import os
            from typing import TYPE_CHECKING
            if TYPE_CHECKING:
                from json import dumps as to_json
            if os.name:
                from json import loads
            """
        )
    )
    sys.modules["fake_lazy_pkg"] = type(sys)("fake_lazy_pkg")
    try:
        getter, lister = lazy_exports("fake_lazy_pkg", str(init), ["to_json"])
        assert getter("to_json") is json.dumps
        assert "to_json" in lister()
        with pytest.raises(AttributeError):
            getter("loads")
    finally:
        sys.modules.pop("fake_lazy_pkg", None)


def test_a_graph_import_loads_neither_pandas_nor_the_estimators() -> None:
    loaded = _modules_after("import silicolab.scm.graph, silicolab.scm")
    assert "pandas" not in loaded
    assert "silicolab.scm.estimation" not in loaded
    assert "silicolab.llm.backends.scripted" not in _modules_after("import silicolab.llm")


def test_a_worker_playing_a_causalab_episode_imports_no_driver_only_library() -> None:
    """What a Ray or process-pool worker imports for a reference CausaLab unit: it must
    play the episode without pandas (the driver's tables), jinja2 (LLM prompts) or any
    language-model backend; each is a fixed cost every worker process pays once."""
    loaded = _modules_after(
        textwrap.dedent(
            """
            import asyncio
            from silicolab.bench.causalab import CausaLabBench, _aplay
            unit = CausaLabBench(suites=("3nodes",), episodes=1, jobs=1).units()[0]
            record = asyncio.run(_aplay(unit))
            assert record["record"]["success"] in (True, False)
            """
        )
    )
    assert "silicolab.envs.causalab" in loaded  # the episode really ran
    assert not {"pandas", "jinja2", "silicolab.llm.backends.scripted"} & loaded


def test_an_export_named_like_its_submodule_stays_the_function() -> None:
    """``silicolab.llm.structured`` is a module and the package's ``structured`` a function:
    importing the module (as any caller of its helpers does) must not replace the export."""
    assert _printed(_SAME_NAME).split() == ["function", "function"]


_SAME_NAME = """
import silicolab.llm.structured, silicolab.scm.random_scm
from silicolab.llm import structured
from silicolab.scm import random_scm
print(type(structured).__name__, type(random_scm).__name__)
"""
