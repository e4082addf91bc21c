"""``silicolab sim run NAME|FILE.yaml``: run one simulation and keep it in a run directory.

The work is :func:`silicolab.api.sim.run_sim` (``sl.run_sim``), which writes the run
directory (``record.json``, ``report.md``, ``transcript.html``, ``report.html``); this
module parses nothing but the resume target and prints the returned result.
"""

from __future__ import annotations

from typing import Any

from silicolab.cli.flow import emit
from silicolab.cli.resume_target import resume_target


def run_sim(
    name: str,
    *,
    resume: bool = False,
    retry_failed: bool = False,
    json_out: bool,
    **options: Any,
) -> dict[str, Any]:
    """Run the example ``name`` through :func:`silicolab.api.sim.run_sim` and print its
    summary (or, with ``json_out``, its ``to_dict()`` as one JSON object); a degraded run
    exits 3 after printing. ``resume`` and ``retry_failed`` continue the run named after
    ``--resume`` on the command line, else the newest unfinished sim run. ``options``:
    the facade's own (``model``, ``base_url``, ``api_key_env``, ``seed``, ``explicit``,
    ``runs_dir``, ``config``), passed on as given. Returns what ``--json`` prints."""
    from silicolab.api.sim import run_sim as simulate

    target = resume_target(resume or retry_failed)
    result = simulate(name, resume=target, retry_failed=retry_failed, **options)
    out = result.to_dict()
    show = lambda: _print_summary(result)  # noqa: E731
    emit(out, json_out=json_out, show=show, status=result.status, health=result.health)
    return out


def _print_summary(result: Any) -> None:
    from silicolab.api.sim import TRANSCRIPT_HTML, headline, outcome_columns, trade_lines
    from silicolab.report import print_lines, print_table

    summary, run_dir = result.summary, result.run_dir
    rows = [{"field": key, "value": value} for key, value in headline(summary)]
    print_table(rows, [("field", "field"), ("value", "value")], title=f"simulation: {result.name}")
    if result.outcome:
        print_table(result.outcome, outcome_columns(result.outcome), title="outcome per entity")
    lines = [f"{s['speaker']}: {s['text']}" for s in (summary.get("transcript") or [])[:12]]
    lines += trade_lines(summary)
    lines += [
        f"model health: {result.health.summary_line()}",
        f"run directory: {run_dir}  (transcript: {run_dir / TRANSCRIPT_HTML})",
    ]
    print_lines(lines)
