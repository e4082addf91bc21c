"""A real local Ray cluster for tests and benchmarks: a head and more nodes on 127.0.0.1.

Each node is a separate ``ray start`` process (``cpus`` CPUs, a 100 MB object store)
started with this process's environment plus the silicolab source on ``PYTHONPATH``, so
workers import the same code; :func:`local_cluster` joins it as the driver and stops it
with ``ray stop --force`` (which stops every Ray node of this machine's user).
"""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Cluster:
    """A running cluster: its address and a scratch folder (removed when it stops)."""

    address: str
    scratch: Path


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _ray_cli() -> list[str]:
    found = Path(sys.executable).with_name("ray")
    return [str(found)] if found.exists() else [shutil.which("ray") or "ray"]


@contextlib.contextmanager
def local_cluster(nodes: int = 2, cpus: int = 1) -> Iterator[Cluster]:
    """Start ``nodes`` Ray nodes of ``cpus`` CPUs here, join as driver, stop at the end."""
    import ray

    import silicolab

    scratch = Path(tempfile.mkdtemp(prefix="slray-"))  # short: Ray's socket paths live here
    src = str(Path(silicolab.__file__).resolve().parents[1])
    env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
    # Ray >= 2.59 turns token authentication on for a head started where ~/.ray/auth_token
    # exists (any private ray.init() writes one), while `ray start --address` sends no
    # token unless RAY_AUTH_MODE=token: the second node would be refused. A loopback test
    # cluster needs no token; saying so on every node makes it independent of ~/.ray.
    env["RAY_AUTH_MODE"] = "disabled"
    env["PYTHONPATH"] = os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p)
    port = _free_port()
    address = f"127.0.0.1:{port}"
    node = [f"--num-cpus={cpus}", "--object-store-memory=100000000", "--node-ip-address=127.0.0.1"]
    cli = _ray_cli()

    def ray_cmd(*args: str) -> None:
        subprocess.run([*cli, *args], env=env, check=True, capture_output=True, timeout=180)

    try:
        ray_cmd("start", "--head", f"--port={port}", "--include-dashboard=false",
                f"--temp-dir={scratch / 'ray'}", "--disable-usage-stats", *node)  # fmt: skip
        for _ in range(nodes - 1):
            ray_cmd("start", f"--address={address}", "--disable-usage-stats", *node)
        handlers = {sig: signal.getsignal(sig) for sig in (signal.SIGINT, signal.SIGTERM)}
        ray.init(address=address, log_to_driver=False, configure_logging=False)
        for sig, handler in handlers.items():  # Ray's would outlive the cluster's users
            if handler is not None:
                signal.signal(sig, handler)
        deadline = time.monotonic() + 60
        while sum(n["Alive"] for n in ray.nodes()) < nodes and time.monotonic() < deadline:
            time.sleep(0.5)
        if sum(n["Alive"] for n in ray.nodes()) < nodes:
            raise RuntimeError(f"only {sum(n['Alive'] for n in ray.nodes())} Ray nodes joined")
        yield Cluster(address, scratch)
    finally:
        if ray.is_initialized():
            ray.shutdown()
        subprocess.run([*cli, "stop", "--force"], env=env, capture_output=True, timeout=120)
        shutil.rmtree(scratch, ignore_errors=True)


__all__ = ["Cluster", "local_cluster"]
