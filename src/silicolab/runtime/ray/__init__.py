"""The Ray executor (optional extra ``silicolab[ray]``; docs/scale.md).

:class:`RayExecutor` runs a batch's units on a Ray cluster behind the same interface as the
local executors; the driver keeps all bookkeeping. The private modules: ``_executor`` (the
executor, joining and leaving the cluster, warming the workers) and ``_runner`` (the async
unit runner per node and the feeder that sends it units in chunks). Importing this package
does not import Ray; :func:`import_ray` does, with an install hint when it is missing.
"""

from __future__ import annotations

from silicolab.runtime.ray._executor import (
    INSTALL_HINT,
    RayExecutor,
    connect,
    import_ray,
    leave_cluster,
    warm_up,
)

__all__ = ["INSTALL_HINT", "RayExecutor", "connect", "import_ray", "leave_cluster", "warm_up"]
