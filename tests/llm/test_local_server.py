"""``silicolab serve local`` and the ``local`` spec, with a real llama.cpp server.

The tiny random-weight GGUF of :mod:`tests.support.tiny_gguf` keeps these fast; the
bundled SmolLM2 is served by ``tests/real_model``. Every test uses a private state folder
(``SILICOLAB_LOCAL_DIR``) and stops what it started.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from tests.support.cli import strict_json
from tests.support.llamacpp import llamacpp_available
from tests.support.tiny_gguf import build_tiny_gguf

from silicolab.core.errors import ConfigError
from silicolab.llm import load_model, local

pytestmark = [
    pytest.mark.llamacpp,
    pytest.mark.skipif(
        not llamacpp_available(),
        reason="llama-cpp-python and gguf are not installed (pip install 'silicolab[local]')",
    ),
]


@pytest.fixture(scope="module")
def gguf(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return build_tiny_gguf(tmp_path_factory.mktemp("gguf") / "tiny.gguf", seed=0)


@pytest.fixture
def state(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A private record folder; any server left in it is stopped at the end."""
    folder = tmp_path / "local"
    monkeypatch.setenv("SILICOLAB_LOCAL_DIR", str(folder))
    yield folder
    for record in local.running_servers():
        local.stop_server(record)


def alive(pid: int) -> bool:
    """Whether ``pid`` runs (a zombie waiting for its new parent to reap it does not)."""
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return False
    return stat.rpartition(")")[2].split()[0] != "Z"


def silicolab(*args: str, **options: Any) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "silicolab.cli.app", *args],
        capture_output=True,
        text=True,
        timeout=180,
        check=False,
        **options,
    )


def test_the_installed_build_is_safe_to_run() -> None:
    """No AMX in the build (its first instruction faults where AMX state is not granted)."""
    info = local.check_build()
    assert "AVX2 = 1" in info and "AMX" not in info


def test_serve_in_the_background_then_reuse_and_stop(gguf: Path, state: Path) -> None:
    started = silicolab("serve", "local", "--model", str(gguf), "--n-ctx", "2048", "--background",
                        "--json")  # fmt: skip
    assert started.returncode == 0, started.stderr
    info = strict_json(started.stdout)
    assert info["spec"] == f"local:{gguf.resolve()}" and info["model"] == "tiny"
    assert info["base_url"].startswith("http://127.0.0.1:")
    status = strict_json(silicolab("serve", "status", "--json").stdout)
    assert [s["pid"] for s in status["servers"]] == [info["pid"]]
    again = strict_json(silicolab("serve", "local", "--model", str(gguf), "--json").stdout)
    assert again["status"] == "already running" and again["pid"] == info["pid"]

    model = load_model(info["spec"], cache_path=None)  # reuses the server: no new process
    backend = model.inner.inner.inner
    assert backend.base_url == info["base_url"] and backend.json_mode == "json_object"
    assert model.inner.max_concurrency == 1 and backend.timeout_s == 600.0
    reply = model.generate("Hi", max_tokens=4, temperature=0.0, seed=1)
    assert reply.usage.output_tokens > 0
    assert model.spec == info["spec"]
    assert [r.pid for r in local.running_servers()] == [info["pid"]]

    stopped = strict_json(silicolab("serve", "stop", "--json").stdout)
    assert stopped == {"stopped": ["tiny"]}
    assert local.running_servers() == [] and not (state / "server-tiny.json").exists()
    assert not alive(info["pid"])


def test_the_local_spec_starts_a_server_when_none_runs(gguf: Path, state: Path) -> None:
    model = load_model(f"local:{gguf}", cache_path=None)
    (record,) = local.running_servers()
    assert record.alias == "tiny" and model.inner.inner.inner.base_url == record.base_url
    assert model.generate("Hi", max_tokens=2, temperature=0.0).usage.output_tokens > 0
    # the cache key names the model file, not the port of this particular server
    assert model.inner.inner.inner.identity()["file"] == "tiny.gguf"
    assert local.ensure_server(gguf).pid == record.pid  # reused, not restarted


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_serve_in_the_foreground_stops_cleanly(gguf: Path, state: Path, signum: int) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "silicolab.cli.app", "serve", "local", "--model", str(gguf),
         "--n-ctx", "1024"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 120
        while not local.running_servers():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, "the server did not start"
            time.sleep(0.2)
        (record,) = local.running_servers()
        proc.send_signal(signum)
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 0, err
    assert "--model local:" in out and "stopped" in err
    assert local.running_servers() == [] and not alive(record.pid)


def test_a_model_file_that_does_not_load_is_a_clear_error(tmp_path: Path, state: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF not really")
    with pytest.raises(ConfigError, match="exited with code"):
        local.start_server(broken, startup_timeout_s=60)
    assert local.running_servers() == []
