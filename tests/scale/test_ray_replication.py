"""``sl.replicate_study(..., executor="ray")`` on the real two-node cluster (conftest):
every (variant, condition) runs once as one batch on the cluster, its model calls go
through one limit and cache per subject model, and the record equals a local run's."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

import silicolab as sl
from silicolab.runs import Run
from silicolab.studies import load_example
from silicolab.studies.world import HiddenWorld
from tests.support.openai_server import FakeLLMServer
from tests.support.world_server import world_server

pytestmark = pytest.mark.ray
MODELS = ["openai:fake-a", "openai:fake-b"]
LIMIT = 3  # each subject model's concurrency limit


def _server() -> FakeLLMServer:
    world = HiddenWorld(load_example("lawyer"), {"passed_bar": 0.6}, intercept=0.2, noise_sd=0.5)
    return world_server(world, latency_s=0.02)


def _replicate(tmp_path: Path, name: str, url: str, **where: Any) -> sl.ReplicationResult:
    config = tmp_path / f"{name}.yaml"  # a cache of its own: each run meets the server
    config.write_text(
        f"cache_path: {tmp_path / name}.sqlite\nmodels:\n"
        f"  subject: {{spec: {MODELS[0]}, max_concurrency: {LIMIT}}}\n",
        encoding="utf-8",
    )
    return sl.replicate_study(
        "lawyer", models=MODELS, seeds=2, conditions=6, jobs=8, base_url=url, config=config,
        runs_dir=tmp_path / name, notify=lambda line: None, **where,
    )  # fmt: skip


def _units(result: sl.ReplicationResult) -> list[str]:
    return [e["unit"] for e in Run.open(result.run_dir).events() if e["status"] == "ok"]


def test_a_replication_on_ray_equals_the_local_one(ray_cluster: Any, tmp_path: Path) -> None:
    with _server() as server:
        local = _replicate(tmp_path, "local", server.base_url)
        asked_locally = server.stats.requests
        server.reset_stats()
        remote = _replicate(tmp_path, "ray", server.base_url, executor="ray",
                            ray_address=ray_cluster.address)  # fmt: skip
        stats = server.stats
    assert remote.status == local.status == "finished"
    units = _units(remote)
    assert not [u for u, n in Counter(units).items() if n > 1]  # every unit once
    assert sorted(units) == sorted(_units(local)) and len(units) == 1 + 2 * 2 * 6
    # the same calls, answered alike: the same estimates, meta-analysis and verdicts
    assert stats.requests == asked_locally and stats.errors == 0
    assert json.dumps(remote.record["rows"]) == json.dumps(local.record["rows"])
    assert remote.paths == local.paths
    # one limit per subject model for the whole cluster: two models, LIMIT each
    assert 1 < stats.max_in_flight <= 2 * LIMIT
