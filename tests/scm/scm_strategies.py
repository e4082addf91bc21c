"""Shared strategies for the scm tests."""

from __future__ import annotations

from hypothesis import strategies as st

from silicolab.scm import CausalGraph


@st.composite
def dags(draw: st.DrawFn, min_nodes: int = 1, max_nodes: int = 6) -> CausalGraph:
    """A random DAG: edges go forward in a random permutation of x0..x{n-1}."""
    n = draw(st.integers(min_nodes, max_nodes))
    names = [f"x{i}" for i in range(n)]
    order = draw(st.permutations(names))
    pairs = [(order[i], order[j]) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    return CausalGraph(names, [p for p, keep in zip(pairs, chosen, strict=True) if keep])


@st.composite
def dags_on(draw: st.DrawFn, names: list[str]) -> CausalGraph:
    """A random DAG over exactly ``names``."""
    order = draw(st.permutations(names))
    pairs = [(order[i], order[j]) for i in range(len(names)) for j in range(i + 1, len(names))]
    chosen = draw(st.lists(st.booleans(), min_size=len(pairs), max_size=len(pairs)))
    return CausalGraph(names, [p for p, keep in zip(pairs, chosen, strict=True) if keep])


@st.composite
def dag_triples(draw: st.DrawFn, max_nodes: int = 6) -> tuple[CausalGraph, ...]:
    """Three random DAGs over the same nodes."""
    n = draw(st.integers(1, max_nodes))
    names = [f"x{i}" for i in range(n)]
    return tuple(draw(dags_on(names)) for _ in range(3))
