"""One real Ray cluster for the whole session: a head and a second node on 127.0.0.1,
one CPU each (:func:`tests.support.ray_cluster.local_cluster`). Without Ray the tests
skip with one line, unless ``SILICOLAB_REQUIRE_RAY=1`` (CI): then a missing Ray fails."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import pytest

from tests.support.ray_cluster import Cluster, local_cluster


def require_ray() -> Any:
    """The ray module; skip (or fail under ``SILICOLAB_REQUIRE_RAY=1``) without it."""
    try:
        import ray
    except ImportError:
        if os.environ.get("SILICOLAB_REQUIRE_RAY") == "1":
            pytest.fail("SILICOLAB_REQUIRE_RAY=1 but ray is not installed: pip install -e '.[ray]'")
        pytest.skip("ray is not installed (pip install 'silicolab[ray]')")
    return ray


@pytest.fixture(scope="session")
def ray_cluster() -> Iterator[Cluster]:
    require_ray()
    with local_cluster(nodes=2, cpus=1) as cluster:
        yield cluster
