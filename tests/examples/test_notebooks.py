"""Every notebook in ``examples/`` runs, top to bottom, in a real Jupyter kernel, offline.

Each notebook is executed by :mod:`nbclient` in an IPython kernel started from this venv's
Python (a kernel spec written to the test's temp folder; nothing is registered with the
user's Jupyter), with this checkout's source first on ``PYTHONPATH`` and the notebook's runs,
LLM cache and Jupyter/IPython state in the temp folder. The kernel runs an event loop while
a cell executes, so every synchronous ``sl.*`` call in a notebook also proves that the sync
twins work inside a running loop, as they must in Jupyter.

A notebook checks itself: its last cells ``assert`` the invariants of what it computed; a
cell tagged ``shows-html`` must display a rich result (``text/html`` with a table, from the
result's ``_repr_html_``). Any error output fails the test. The committed notebooks carry
no outputs (they are run here, not stored run).
"""

from __future__ import annotations

import json
import os
import re
import sys
from pathlib import Path
from typing import Any

import pytest

import silicolab

nbformat = pytest.importorskip("nbformat")  # the dev extra: nbclient, nbformat, ipykernel
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")
from jupyter_client.kernelspec import KernelSpecManager  # noqa: E402
from jupyter_client.manager import KernelManager  # noqa: E402

REPO = Path(__file__).resolve().parents[2]
EXAMPLES = REPO / "examples"
NOTEBOOKS = sorted(EXAMPLES.glob("*.ipynb"))
#: the source tree the tests import (a worktree's ``src`` when PYTHONPATH points there)
SRC = Path(silicolab.__file__).resolve().parent.parent
KERNEL = "silicolab-tests"
CELL_TIMEOUT_S = 300
HTML_TAG = "shows-html"
_NOWHERE = "http://127.0.0.1:9"  # the discard port: nothing listens, a request fails at once
_ANSI = re.compile(r"\x1b\[[0-9;]*m")  # IPython colours its tracebacks


def _kernel_spec(folder: Path) -> KernelSpecManager:
    """A kernel spec for this interpreter in ``folder`` (nothing installed globally)."""
    spec_dir = folder / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    spec = {
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "silicolab (tests)",
        "language": "python",
    }
    (spec_dir / "kernel.json").write_text(json.dumps(spec))
    return KernelSpecManager(kernel_dirs=[str(folder / "kernels")])


def _kernel_env(folder: Path) -> dict[str, str]:
    """The kernel's environment: no user settings (``SILICOLAB_*`` removed), this source
    first on the path (and the checkout's root, for ``tests.support``), runs and the LLM
    cache in ``folder``, Jupyter's and IPython's state in ``folder`` too. Offline: no API
    keys, and HTTP(S) beyond 127.0.0.1 goes to a proxy that is not there (a closed port)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("SILICOLAB_") and not k.endswith("_API_KEY")
    }
    env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(SRC), str(REPO), env.get("PYTHONPATH", "")) if p
    )
    env.update(
        SILICOLAB_RUNS_DIR=str(folder / "runs"),
        SILICOLAB_CACHE=str(folder / "llm-cache.sqlite"),
        IPYTHONDIR=str(folder / "ipython"),
        JUPYTER_RUNTIME_DIR=str(folder / "jupyter-runtime"),
        MPLBACKEND="Agg",
    )
    for name in ("http_proxy", "https_proxy", "all_proxy"):  # clients read either case
        env[name] = env[name.upper()] = _NOWHERE
    env["no_proxy"] = env["NO_PROXY"] = "127.0.0.1,localhost"
    return env


def _source_check() -> Any:
    """A first cell (added to the executed copy only): the kernel imports the tests' source."""
    return nbformat.v4.new_code_cell(
        "import pathlib, silicolab\n"
        f"assert pathlib.Path(silicolab.__file__).resolve().is_relative_to({str(SRC)!r}), "
        "silicolab.__file__"
    )


def execute(notebook: Path, folder: Path) -> Any:
    """Run ``notebook`` in a fresh kernel with cwd ``folder``; return the executed copy.
    A cell that raises fails with the cell's source and traceback."""
    nb = nbformat.read(notebook, as_version=4)
    nb.cells.insert(0, _source_check())
    work = folder / "cwd"
    work.mkdir(parents=True)
    km = KernelManager(kernel_name=KERNEL, kernel_spec_manager=_kernel_spec(folder))
    client = nbclient.NotebookClient(
        nb,
        km=km,
        timeout=CELL_TIMEOUT_S,
        startup_timeout=120,
        resources={"metadata": {"path": str(work)}},
    )
    try:
        client.execute(env=_kernel_env(folder))
    except nbclient.exceptions.CellExecutionError as err:
        pytest.fail(f"{notebook.name}: a cell failed:\n{_ANSI.sub('', str(err))}", pytrace=False)
    finally:  # nbclient leaves a kernel it was handed running: each would live (and hold
        if km.has_kernel:  # its memory) until the test session ends
            km.shutdown_kernel(now=True)
    return nb


def _problems(nb: Any) -> list[str]:
    """Error outputs, tracebacks on stderr, and ``shows-html`` cells without rich HTML."""
    problems = []
    for index, cell in enumerate(nb.cells):
        if cell.cell_type != "code":
            continue
        outputs = cell.get("outputs", [])
        for out in outputs:
            if out.output_type == "error":
                problems.append(f"cell {index}: {out.ename}: {out.evalue}")
            elif out.output_type == "stream" and "Traceback" in out.text:
                problems.append(f"cell {index}: a traceback on {out.name}: {out.text[-300:]}")
        if HTML_TAG in cell.metadata.get("tags", []):
            html = [
                o.data["text/html"]
                for o in outputs
                if o.output_type in ("execute_result", "display_data") and "text/html" in o.data
            ]
            if not any("<table" in h for h in html):
                problems.append(f"cell {index} ({cell.source[:40]!r}) shows no HTML table")
    return problems


@pytest.mark.slow
@pytest.mark.parametrize("notebook", NOTEBOOKS, ids=[p.stem for p in NOTEBOOKS])
def test_notebook_runs_in_a_kernel_and_checks_itself(notebook: Path, tmp_path: Path) -> None:
    nb = execute(notebook, tmp_path)
    assert _problems(nb) == []
    ran = [c for c in nb.cells if c.cell_type == "code"]
    assert all(c.execution_count is not None for c in ran)  # every cell ran, in order
    assert [c.execution_count for c in ran] == sorted(c.execution_count for c in ran)


def test_examples_are_committed_clean_and_check_themselves() -> None:
    assert NOTEBOOKS, f"no notebooks in {EXAMPLES}"
    for path in NOTEBOOKS:
        nb = nbformat.read(path, as_version=4)
        nbformat.validate(nb)
        code = [c for c in nb.cells if c.cell_type == "code"]
        assert nb.cells[0].cell_type == "markdown", f"{path.name}: start with its story"
        for cell in code:
            assert not cell.outputs and cell.execution_count is None, f"{path.name}: outputs"
        assert any(line.startswith("assert ") for line in code[-1].source.splitlines()), (
            f"{path.name}: the last code cell asserts what the notebook computed"
        )


def test_a_failing_cell_fails_the_notebook(tmp_path: Path) -> None:
    """The harness is not blind: a notebook whose assert fails is reported with its cell."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_markdown_cell("# broken"),
        nbformat.v4.new_code_cell("import os\nrunning = os.environ['SILICOLAB_RUNS_DIR']"),
        nbformat.v4.new_code_cell("assert running == 'elsewhere', running"),
    ]
    path = tmp_path / "broken.ipynb"
    nbformat.write(nb, path)
    with pytest.raises(pytest.fail.Exception) as failed:
        execute(path, tmp_path / "run")
    assert "AssertionError" in str(failed.value)
    assert str(tmp_path / "run" / "runs") in str(failed.value)  # the kernel saw our env


def test_a_result_cell_without_its_html_table_is_reported() -> None:
    out = nbformat.v4.new_output
    shown = nbformat.v4.new_code_cell("r", metadata={"tags": [HTML_TAG]})
    shown.outputs = [out("execute_result", {"text/plain": "R()"}, execution_count=1)]
    ok = nbformat.v4.new_code_cell("r", metadata={"tags": [HTML_TAG]})
    ok.outputs = [out("display_data", {"text/html": "<div><table></table></div>"})]
    nb = nbformat.v4.new_notebook(cells=[shown, ok])
    assert _problems(nb) == ["cell 0 ('r') shows no HTML table"]
