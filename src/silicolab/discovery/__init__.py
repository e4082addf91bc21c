"""Causal discovery: statistical algorithms (through causal-learn), LLM debate and coding
agents (MAC), their hybrids, the benchmark datasets, and scoring against ground truth.

Every method has one signature, ``method(data, *, knowledge=None, **params) ->
GraphResult``, and is found by name::

    from silicolab.discovery import discover, load
    ds = load("sachs")
    result = discover(ds.data, "pc", alpha=0.01)
    print(score(result, ds.truth))

LLM methods (``mac_*``) additionally take ``model=``. Graphs use the project convention
(``A[i, j] = 1`` means ``i -> j``); converters sit at each backend's boundary.
"""

from silicolab.discovery.datasets import Dataset, load, load_csv
from silicolab.discovery.knowledge import Knowledge
from silicolab.discovery.registry import available, discover, get, register
from silicolab.discovery.result import DiscoveryResult, GraphResult  # the first: deprecated
from silicolab.discovery.scoring import score

__all__ = [
    "Dataset",
    "DiscoveryResult",
    "GraphResult",
    "Knowledge",
    "available",
    "discover",
    "get",
    "load",
    "load_csv",
    "register",
    "score",
]
