"""Which module of :mod:`silicolab.report.html` draws the page of each kind of run.

A module of its own, outside that package and light to import, so a command can name the
modules its report will need before the run starts (:func:`page_modules`) without
importing them."""

from __future__ import annotations

#: run kind -> module of its page builder (``build(RunSource) -> Page``) in
#: :mod:`silicolab.report.html`.
BUILDERS: dict[str, str] = {
    "study": "study",
    "demo": "study",
    "sim": "sim",
    "discover": "discovery",
    "bench-causalab": "causalab",
    "bench-boxinggym": "boxinggym",
    "bench-discovery": "bench",
    "bench-episodes": "bench",
    "replication": "replication",
}


def page_modules(kind: str) -> tuple[str, ...]:
    """The modules drawing a ``kind`` run's page imports: the page package (with its
    template engine) and the kind's builder."""
    module = BUILDERS.get(kind)
    return ("silicolab.report.html", *([f"silicolab.report.html.{module}"] if module else []))


__all__ = ["BUILDERS", "page_modules"]
