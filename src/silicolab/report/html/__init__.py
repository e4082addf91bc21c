"""``report.html``: one self-contained page per run directory (works from ``file://``, makes
no network request), with its figures also saved as PNG and SVG under ``figures/``.

:func:`build_report` renders a run directory, :func:`write_report` writes the page (and
links the figures from ``report.md``), :func:`write_report_safely` is what the CLI calls
when a run ends: a failure to render is logged, never raised. Libraries and pages:
``docs/report.md``.
"""

from silicolab.report.html.build import build_report, write_report, write_report_safely

__all__ = ["build_report", "write_report", "write_report_safely"]
