"""Timings of the scm hot paths: sampling and path estimation.

Run: ``.venv/bin/python benchmarks/bench_scm.py``. Prints the best of a few repeats; it
asserts nothing, because timings depend on the machine.
"""

from __future__ import annotations

import time
from collections.abc import Callable

from silicolab.scm import (
    Noise,
    RandomSCMSpec,
    estimate_paths,
    imec_size,
    mec_size,
    random_dag,
    random_scm,
)


def best_of(repeats: int, work: Callable[[], object]) -> float:
    """The fastest of ``repeats`` wall-clock timings of ``work()``, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    spec = RandomSCMSpec(
        n_nodes=10,
        n_edges=20,
        weight_range=(0.2, 1.5),
        negative_weights=True,
        noise=Noise.normal(0, 1),
    )
    scm = random_scm(spec, seed=0)
    print(f"10-node linear SCM with {len(scm.graph.edges)} edges")

    seconds = best_of(3, lambda: scm.sample(1_000_000, seed=1))
    print(f"sample 1,000,000 rows x 10 variables: {seconds:.3f} s")

    data = scm.sample(100_000, seed=2)
    estimate_paths(data, scm)  # warm-up: imports statsmodels and scipy once
    seconds = best_of(3, lambda: estimate_paths(data, scm))
    print(f"estimate_paths on 100,000 rows x 10 variables: {seconds:.3f} s")

    seconds = best_of(3, lambda: estimate_paths(data, scm, interactions=True))
    print(f"estimate_paths with all pairwise interactions: {seconds:.3f} s")

    graphs = [random_dag(RandomSCMSpec.causalab(7), seed=s) for s in range(50)]
    seconds = best_of(3, lambda: [mec_size(g) for g in graphs])
    print(f"mec_size of 50 random 7-node CausaLab graphs: {seconds:.3f} s")
    seconds = best_of(1, lambda: [imec_size(g, g.nodes[1:3]) for g in graphs])
    print(f"imec_size (2 targets) of the same 50 graphs: {seconds:.3f} s")


if __name__ == "__main__":
    main()
