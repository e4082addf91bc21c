"""Size and opening time of ``report.html`` for a large study (issue 15).

Run: ``.venv/bin/python benchmarks/bench_view.py [--statements 20] [--json]``.

A real run of the auction study with rule-based subjects (343 conditions, no LLM, a few
seconds) is made in a temporary folder; every condition's transcript is then replaced by
20 synthetic statements of about 160 characters (as a language-model conversation would
leave), the record is rewritten and ``report.html`` built. The figures: the file's size
(target < 15 MB), the time to build it, and the time headless Chromium takes to open it
from ``file://`` (navigation start to the load event; target < 2 s; median of 3 cold
tabs). It asserts nothing: timings depend on the machine. Chromium is launched as the
browser tests launch it (:mod:`tests.report.browser`: ``$SILICOLAB_CHROMIUM``, ``chromium``
on the PATH or ``/usr/bin/chromium``, driven by Playwright).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
if str(REPO_ROOT) not in sys.path:
    sys.path.insert(0, str(REPO_ROOT))

from tests.report.browser import launched  # noqa: E402

TARGET_MB = 15.0
TARGET_OPEN_S = 2.0
SENTENCE = (
    "I hear you, but given what I have seen today I could offer {n} dollars for it, "
    "which is fair for both of us if you think about the condition it is in."
)


def make_study(root: Path, statements: int) -> Path:
    """The 343-condition study with ``statements`` statements per transcript."""
    from silicolab.runs import Run

    out = subprocess.run(
        [sys.executable, "-m", "silicolab.cli.app", "study", "run", "auction", "--subjects",
         "rule", "--yes", "--json", "--runs-dir", str(root / "runs")],
        capture_output=True, text=True, check=True, cwd=root,
    )  # fmt: skip
    run = Run.open(json.loads(out.stdout)["run_dir"])
    record = run.read_record() or {}
    for condition in record["runs"]:
        speakers = [a["name"] for a in record["hypothesis"]["agents"]] or ["a", "b"]
        condition["statements"] = [
            {"speaker": speakers[i % len(speakers)], "text": SENTENCE.format(n=10 + i)}
            for i in range(statements)
        ]
    run.write_record(record)
    return run.path


def open_times(page_path: Path, repeats: int = 3) -> list[float]:
    """Seconds from navigation start to the load event, one fresh tab per repeat."""
    times = []
    with tempfile.TemporaryDirectory() as profile, launched(Path(profile)) as context:
        for _ in range(repeats):
            page = context.new_page()
            page.goto(page_path.resolve().as_uri(), wait_until="load", timeout=60_000)
            ms = page.evaluate(
                "() => { const n = performance.getEntriesByType('navigation')[0];"
                " return n.loadEventEnd || n.loadEventStart || n.duration; }"
            )
            times.append(float(ms) / 1000.0)
            page.close()
    return times


def main(argv: list[str] | None = None) -> dict[str, Any]:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--statements", type=int, default=20, help="Statements per condition.")
    parser.add_argument("--json", action="store_true", help="Print the figures as JSON.")
    args = parser.parse_args(argv)
    from silicolab.report.html import write_report

    with tempfile.TemporaryDirectory() as tmp:
        run_dir = make_study(Path(tmp), args.statements)
        started = time.perf_counter()
        page = write_report(run_dir)
        build_s = time.perf_counter() - started
        size_mb = page.stat().st_size / 1e6
        opened = open_times(page)
        conditions = len(json.loads((run_dir / "record.json").read_text())["runs"])
    figures = {
        "conditions": conditions,
        "statements_per_condition": args.statements,
        "size_mb": round(size_mb, 2),
        "size_target_mb": TARGET_MB,
        "build_s": round(build_s, 2),
        "open_s_median": round(statistics.median(opened), 3),
        "open_s_all": [round(t, 3) for t in opened],
        "open_target_s": TARGET_OPEN_S,
    }
    if args.json:
        print(json.dumps(figures))
    else:
        print(f"report.html of a {conditions}-condition study, {args.statements} statements each")
        print(f"  size        {size_mb:8.2f} MB   (target < {TARGET_MB:g} MB)")
        print(f"  build       {build_s:8.2f} s")
        print(
            f"  open (load) {figures['open_s_median']:8.3f} s    (target < {TARGET_OPEN_S:g} s; "
            f"runs {figures['open_s_all']})"
        )
    return figures


if __name__ == "__main__":
    main()
