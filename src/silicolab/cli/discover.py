"""``silicolab discover``: one causal-discovery method on a bundled dataset or a CSV.

The work is :func:`silicolab.api.discovery.discover` (``sl.discover``), which writes the
run directory; this module checks the one thing only the command line can get wrong (both
or neither of ``--dataset`` and ``--data``) and prints the returned result.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from silicolab.cli.flow import emit
from silicolab.cli.resume_target import resume_target
from silicolab.core.errors import InputError


def run_discover(
    *,
    dataset: str | None,
    data: Path | None,
    truth_edges: Path | None,
    method: str,
    params: list[str],
    resume: bool = False,
    retry_failed: bool = False,
    json_out: bool,
    **options: Any,
) -> dict[str, Any]:
    """Run the method through :func:`silicolab.api.discovery.discover` and print its
    edges and scores (or, with ``json_out``, its ``to_dict()`` as one JSON object); a
    degraded run exits 3 after printing. ``resume``/``retry_failed`` continue the run
    named after ``--resume``, else the newest unfinished discover run (with its stored
    data, so neither ``--dataset`` nor ``--data`` is needed). ``options``: the facade's
    own (``require``, ``forbid``, ``model``, ``base_url``, ``api_key_env``, ``seed``,
    ``explicit``, ``runs_dir``, ``config``), passed on as given. Returns what ``--json``
    prints."""
    from silicolab.api.discovery import discover

    resuming = resume or retry_failed
    given = (dataset is not None) + (data is not None)
    if given == 2 or (given == 0 and not resuming):  # a resume reads its stored data
        raise InputError("give exactly one of --dataset NAME or --data PATH.csv")
    result = discover(
        data, method, dataset=dataset, truth=truth_edges, params=params,
        resume=resume_target(resuming), retry_failed=retry_failed, **options,
    )  # fmt: skip
    out = result.to_dict()
    show = lambda: _print(result)  # noqa: E731
    emit(out, json_out=json_out, show=show, status=result.status, health=result.health)
    return out


def _print(result: Any) -> None:
    from silicolab.api.discovery import edge_lines, scored
    from silicolab.report import print_lines, print_table

    found = result.record["result"]
    warning, scores, heading = scored(result.record, found["method"])
    print_lines(
        [
            f"{found['method']} on {result.dataset} ({result.rows} rows, "
            f"{len(result.nodes)} variables) in {found['runtime_s']:.3f} s",
            *([warning] if warning else []),
        ]
    )
    rows = [{"cause": a, "edge": mark, "effect": b} for a, mark, b in edge_lines(result.edges)]
    print_table(rows, [("cause", "cause"), ("edge", "edge"), ("effect", "effect")], title="edges")
    if scores:
        print_table(
            [{"metric": k, "value": v} for k, v in scores.items()],
            [("metric", "metric"), ("value", "value")],
            title=heading,
        )
    footer = [f"note: {note}" for note in found.get("notes") or ()]
    if result.health is not None:
        footer.append(f"model health: {result.health.summary_line()}")
    print_lines([*footer, f"run directory: {result.run_dir}"])
