"""``silicolab demo``: the main job offline (``_run``) and the tour's figures beside the
papers' numbers (``_tour``)."""

from silicolab.cli.demo._run import run_demo

__all__ = ["run_demo"]
