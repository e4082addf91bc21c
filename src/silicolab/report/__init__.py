"""Tables and reports: how results look on a terminal, in a pipe and in ``report.md``.

The CLI only calls this package; no command renders a table itself. See
:func:`silicolab.report.tables.print_table` (a rich table on a terminal, Markdown in a pipe
or a file, so nothing is cut at 80 columns) and :func:`markdown_table`.
"""

from silicolab.report.tables import (
    Column,
    format_cell,
    markdown_table,
    print_lines,
    print_table,
    table_cells,
)

__all__ = [
    "Column",
    "format_cell",
    "markdown_table",
    "print_lines",
    "print_table",
    "table_cells",
]
