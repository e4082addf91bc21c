"""Coverage of the study pipeline's 95 % intervals on the offline world, where the truth is
known.

Run ``.venv/bin/python benchmarks/bench_world_coverage.py [--seeds 20]`` from the
repository root. For each seed it runs the lawyer study (binary outcome: a linear
probability model) and the bail study (continuous outcome) end to end with
:func:`silicolab.studies.study.run_study` on the scripted hidden-SCM world of that seed
(default effects, :func:`silicolab.studies.offline.offline_world`), then checks whether
each true effect lies inside its fitted 95 % interval. It prints the share covered per
study and overall (expected about 95 %: the intervals are lavaan's, normal with ML
standard errors, so a little under 95 % at these sample sizes) with the binomial 95 %
range of that share, and writes ``benchmarks/results/bench_world_coverage.json``.
Nothing here asserts; ``tests/studies/test_offline_world.py`` checks a smaller run.
No network, no model.
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO_ROOT = Path(__file__).resolve().parent.parent
for _path in (REPO_ROOT / "src", REPO_ROOT):
    if str(_path) not in sys.path:
        sys.path.insert(0, str(_path))

from scipy import stats  # noqa: E402

from silicolab.runs import Run  # noqa: E402
from silicolab.studies import load_example  # noqa: E402
from silicolab.studies.offline import offline_study_models, offline_world, truth_rows  # noqa: E402
from silicolab.studies.pipeline import StudyOptions  # noqa: E402
from silicolab.studies.study import run_study  # noqa: E402

STUDIES = ("lawyer", "bail")
RESULTS_PATH = REPO_ROOT / "benchmarks" / "results" / "bench_world_coverage.json"


def study_coverage(name: str, seed: int, *, jobs: int = 16) -> list[dict[str, Any]]:
    """One study on the world of ``seed``: each fitted term beside its truth."""
    hypothesis = load_example(name)
    world = offline_world(hypothesis, seed=seed)
    models = offline_study_models(hypothesis, seed=seed, world=world)
    with tempfile.TemporaryDirectory() as tmp, Run.create(tmp, kind="study", slug=name) as run:
        record = run_study(hypothesis, StudyOptions(seed=seed, jobs=jobs), run=run, models=models)
    if record.get("estimation") is None:
        raise RuntimeError(f"{name}, seed {seed}: no fit ({record.get('fit_error')})")
    return [
        {"study": name, "seed": seed, **row}
        for row in truth_rows(record["estimation"], world.truth())
    ]


def share(rows: list[dict[str, Any]]) -> dict[str, Any]:
    """Covered / total, with the central 95 % binomial range of the count at p = 0.95."""
    n = len(rows)
    hits = sum(bool(r["covered"]) for r in rows)
    low, high = stats.binom.interval(0.95, n, 0.95) if n else (0, 0)
    return {
        "intervals": n,
        "covered": hits,
        "share": round(hits / n, 4) if n else None,
        "binomial_95_range_of_share_at_0.95": [round(low / n, 4), round(high / n, 4)]
        if n
        else None,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seeds", type=int, default=20)
    parser.add_argument("--jobs", type=int, default=16)
    args = parser.parse_args()
    start = time.perf_counter()
    rows = [
        row
        for seed in range(args.seeds)
        for name in STUDIES
        for row in study_coverage(name, seed, jobs=args.jobs)
    ]
    effects = [r for r in rows if r["term"] != "(intercept)"]
    result = {
        "seeds": args.seeds,
        "effects": {
            **{name: share([r for r in effects if r["study"] == name]) for name in STUDIES},
            "overall": share(effects),
        },
        "intercepts": share([r for r in rows if r["term"] == "(intercept)"]),
        "missed": [r for r in effects if not r["covered"]],
        "wall_s": round(time.perf_counter() - start, 1),
        "python": platform.python_version(),
        "machine": platform.machine(),
    }
    for name in (*STUDIES, "overall"):
        figures = result["effects"][name]
        print(
            f"{name:8s} {figures['covered']:3d}/{figures['intervals']:3d} true effects inside "
            f"their 95 % intervals = {figures['share']:.1%} (binomial 95 % range at 95 %: "
            f"{figures['binomial_95_range_of_share_at_0.95'][0]:.1%}-"
            f"{figures['binomial_95_range_of_share_at_0.95'][1]:.1%})"
        )
    print(f"intercepts {result['intercepts']['covered']}/{result['intercepts']['intervals']}")
    RESULTS_PATH.parent.mkdir(parents=True, exist_ok=True)
    RESULTS_PATH.write_text(json.dumps(result, indent=2) + "\n")
    print(f"written to {RESULTS_PATH.relative_to(REPO_ROOT)} in {result['wall_s']} s")


if __name__ == "__main__":
    main()
