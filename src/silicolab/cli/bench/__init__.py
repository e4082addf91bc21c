"""``silicolab bench ...``: the typer wiring (``_app``) and the one flow every bench
command runs over :func:`silicolab.api.run_bench`, printing its result (``_run``)."""

from silicolab.cli.bench._app import bench_app

__all__ = ["bench_app"]
