"""Test-support code shared by silicolab's test suite and benchmarks."""
