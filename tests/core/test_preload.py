"""preloading: modules imported in a background thread while a block runs."""

from __future__ import annotations

import importlib.util
import sys
import threading
from pathlib import Path

import pytest

from silicolab.core.preload import ANALYSIS_MODULES, preloading
from silicolab.report.kinds import BUILDERS, page_modules


def test_the_modules_are_imported_by_the_thread_before_the_block_ends(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "preload_probe_a.py").write_text(
        "import threading\nTHREAD = threading.current_thread().name\n"
    )
    (tmp_path / "preload_probe_b.py").write_text("VALUE = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in ("preload_probe_a", "preload_probe_b"):
        monkeypatch.delitem(sys.modules, name, raising=False)

    with preloading(["preload_probe_a", "preload_probe_b"]) as loading:
        pass  # the block's end joins the thread

    assert sys.modules["preload_probe_a"].THREAD == "silicolab-preload"
    assert threading.current_thread().name != sys.modules["preload_probe_a"].THREAD
    assert sys.modules["preload_probe_b"].VALUE == 2
    assert loading.failed == {}


def test_a_module_that_fails_to_import_is_noted_not_raised(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "preload_probe_broken.py").write_text("raise ValueError('broken on import')\n")
    monkeypatch.syspath_prepend(str(tmp_path))

    with preloading(["preload_probe_broken", "preload_no_such_module_xyz"]) as loading:
        pass

    assert loading.failed["preload_probe_broken"] == "ValueError: broken on import"
    assert loading.failed["preload_no_such_module_xyz"].startswith("ModuleNotFoundError")


def test_the_preloaded_modules_exist() -> None:
    """A renamed module would make the preload import nothing, silently: every name it
    uses must be a module that can be found."""
    names = {*ANALYSIS_MODULES, *(m for kind in BUILDERS for m in page_modules(kind))}
    missing = sorted(n for n in names if importlib.util.find_spec(n) is None)
    assert missing == []
    assert page_modules("replication")[-1] == "silicolab.report.html.replication"
    assert page_modules("no-such-kind") == ("silicolab.report.html",)
