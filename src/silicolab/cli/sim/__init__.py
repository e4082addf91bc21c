"""``silicolab sim ...``: the typer wiring (``_app``) and ``sim run`` over
:func:`silicolab.api.run_sim`, printing its result (``_run``)."""

from silicolab.cli.sim._app import sim_app

__all__ = ["sim_app"]
