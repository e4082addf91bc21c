"""``silicolab study ...``: the typer wiring (``_app``), what ``study run|hypothesis|
predict|follow-on`` do over :mod:`silicolab.api.study` (``_run``), ``study fit``
(``_fit``) and ``study discover`` (``_discover``)."""

from silicolab.cli.study import _replicate as _replicate
from silicolab.cli.study._app import study_app

__all__ = ["study_app"]
