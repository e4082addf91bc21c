"""Benchmark harness: suites of units run in parallel and resumably, with result tables
beside the published anchors (``silicolab.bench.discovery`` for causal discovery)."""
