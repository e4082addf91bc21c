"""One real Ray cluster for the whole session: a head and a second node on 127.0.0.1.

Each node is a separate ``ray start`` process with one CPU and a 100 MB object store,
started with this test process's environment (so workers import the same silicolab) and
stopped with ``ray stop --force`` at the end. Without Ray the tests skip with one line,
unless ``SILICOLAB_REQUIRE_RAY=1`` (CI), where a missing Ray is a failure.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

NODE = ["--num-cpus=1", "--object-store-memory=100000000", "--node-ip-address=127.0.0.1"]


def require_ray() -> Any:
    """The ray module; skip (or fail under ``SILICOLAB_REQUIRE_RAY=1``) without it."""
    try:
        import ray
    except ImportError:
        if os.environ.get("SILICOLAB_REQUIRE_RAY") == "1":
            pytest.fail("SILICOLAB_REQUIRE_RAY=1 but ray is not installed: pip install -e '.[ray]'")
        pytest.skip("ray is not installed (pip install 'silicolab[ray]')")
    return ray


@dataclass(frozen=True)
class Cluster:
    """The session's cluster: its address and a scratch folder."""

    address: str
    scratch: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_cli() -> list[str]:
    found = Path(sys.executable).with_name("ray")
    return [str(found)] if found.exists() else [shutil.which("ray") or "ray"]


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Cluster]:
    ray = require_ray()
    import silicolab

    scratch = Path(tempfile.mkdtemp(prefix="slray-"))  # short: Ray's socket paths live here
    src = str(Path(silicolab.__file__).resolve().parents[1])
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    address = f"127.0.0.1:{_free_port()}"
    port = address.rsplit(":", 1)[1]
    cli = _ray_cli()

    def ray_cmd(*args: str) -> None:
        subprocess.run([*cli, *args], env=env, check=True, capture_output=True, timeout=180)

    try:
        ray_cmd("start", "--head", f"--port={port}", "--include-dashboard=false",
                f"--temp-dir={scratch / 'ray'}", "--disable-usage-stats", *NODE)  # fmt: skip
        ray_cmd("start", f"--address={address}", "--disable-usage-stats", *NODE)
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        deadline = time.monotonic() + 60
        while sum(n["Alive"] for n in ray.nodes()) < 2 and time.monotonic() < deadline:
            time.sleep(0.5)
        assert sum(n["Alive"] for n in ray.nodes()) == 2, "the second Ray node did not join"
        yield Cluster(address, scratch)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([*cli, "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)
