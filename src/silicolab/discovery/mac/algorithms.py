"""What the MAC agents are told about each statistical algorithm.

Two texts per algorithm, written for silicolab: a ``card`` for the plan debaters
(assumptions, data it suits, what its output means) and ``api`` notes for the executor
(the causal-learn call, its input requirements and the exact encoding of its output, so
the executor writes a matrix we can convert without guessing), plus ``knowledge`` notes
on how prior knowledge is passed to it. The names match the functions of
:mod:`silicolab.discovery.statistical`, which the coding module falls back to.
"""

from __future__ import annotations

from dataclasses import dataclass

from silicolab.core.errors import InputError


@dataclass(frozen=True)
class AlgorithmInfo:
    """The prompt texts of one algorithm (see the module docstring)."""

    name: str
    title: str
    card: str
    api: str
    knowledge: str

    def as_prompt(self) -> dict[str, str]:
        return {"name": self.name, "title": self.title, "card": self.card, "api": self.api}


_CAUSALLEARN_MARKS = (
    "G.graph[i, j] is the mark at node i of the edge between i and j: -1 tail, 1 arrowhead, "
    "0 no edge. So i -> j is graph[i, j] == -1 and graph[j, i] == 1; both -1 is an "
    "undirected edge i -- j; both 1 is i <-> j."
)

_BACKGROUND = (
    "from causallearn.utils.PCUtils.BackgroundKnowledge import BackgroundKnowledge\n"
    "from causallearn.graph.GraphNode import GraphNode\n"
    "bk = BackgroundKnowledge()\n"
    'bk.add_required_by_node(GraphNode("A"), GraphNode("B"))   # requires A -> B\n'
    'bk.add_forbidden_by_node(GraphNode("A"), GraphNode("B"))  # forbids A -> B\n'
    "Nodes are matched by name: "
)

ALGORITHMS: dict[str, AlgorithmInfo] = {
    info.name: info
    for info in (
        AlgorithmInfo(
            name="pc",
            title="PC, constraint-based",
            card=(
                "starts from a complete graph, deletes edges between conditionally independent "
                "variables, then orients colliders and what follows from them. Assumes no hidden "
                "confounders and faithfulness; the Fisher-z test assumes roughly linear-Gaussian "
                "data (kci handles nonlinear data but is slow beyond a few hundred rows). Output: "
                "a CPDAG, so some edges may stay undirected. Accepts required/forbidden edges."
            ),
            api=(
                "from causallearn.search.ConstraintBased.PC import pc\n"
                'cg = pc(X, alpha=0.05, indep_test="fisherz", stable=True, '
                "background_knowledge=None, show_progress=False, node_names=list(df.columns))\n"
                "X must be a numpy array (a DataFrame fails an assertion). "
                f"Result: cg.G.graph (n x n ints). {_CAUSALLEARN_MARKS}\n"
                'Write {"nodes": list(df.columns), "matrix": cg.G.graph.tolist(), '
                '"convention": "causallearn"}.'
            ),
            knowledge=_BACKGROUND
            + "call pc(..., node_names=list(df.columns), background_knowledge=bk).",
        ),
        AlgorithmInfo(
            name="fci",
            title="FCI, constraint-based with latent confounders",
            card=(
                "like PC but allows hidden common causes and selection bias; outputs a PAG whose "
                "edge ends can be tails, arrowheads or circles (undetermined). Safer when "
                "unmeasured confounders are likely, less informative otherwise; accepts "
                "required/forbidden edges."
            ),
            api=(
                "from causallearn.search.ConstraintBased.FCI import fci\n"
                'G, edges = fci(X, independence_test_method="fisherz", alpha=0.05, '
                "background_knowledge=None, show_progress=False, node_names=list(df.columns))\n"
                "X must be a numpy array. It prints the edges to stdout. Result: G.graph, with "
                "marks -1 tail, 1 arrowhead, 2 circle (mark at node i is G.graph[i, j]).\n"
                'Write {"nodes": list(df.columns), "matrix": G.graph.tolist(), '
                '"convention": "causallearn"}.'
            ),
            knowledge=_BACKGROUND
            + "call fci(..., node_names=list(df.columns), background_knowledge=bk).",
        ),
        AlgorithmInfo(
            name="ges",
            title="GES, score-based",
            card=(
                "greedy search over Markov equivalence classes maximising a score (BIC for "
                "linear-Gaussian data). Fast and stable on moderate numbers of variables; "
                "assumes no hidden confounders; outputs a CPDAG (some edges undirected). Has no "
                "way to take prior knowledge."
            ),
            api=(
                "from causallearn.search.ScoreBased.GES import ges\n"
                'record = ges(X, score_func="local_score_BIC", maxP=None)\n'
                f'Result: record["G"].graph. {_CAUSALLEARN_MARKS}\n'
                'Write {"nodes": list(df.columns), "matrix": record["G"].graph.tolist(), '
                '"convention": "causallearn"}.'
            ),
            knowledge=(
                "GES takes no prior knowledge. After the search, delete forbidden edges and "
                "add missing required ones to the matrix yourself, and say so."
            ),
        ),
        AlgorithmInfo(
            name="exact",
            title="Exact Search, score-based optimum",
            card=(
                "finds the DAG with the best BIC score exactly (A* or dynamic programming). "
                "Optimal for its linear-Gaussian score, but the cost grows exponentially with "
                "the number of variables (fine up to about 15). Returns one DAG from its "
                "equivalence class. Accepts allowed and required edges."
            ),
            api=(
                "from causallearn.search.ScoreBased.ExactSearch import bic_exact_search\n"
                "X = X - X.mean(axis=0)   # its BIC has no intercept: centre the data\n"
                'dag, stats = bic_exact_search(X, super_graph=None, search_method="astar", '
                "include_graph=None, max_parents=None)\n"
                "Result: dag[i, j] == 1 means i -> j (row = cause).\n"
                'Write {"nodes": list(df.columns), "matrix": dag.tolist(), '
                '"convention": "cause_row"}.'
            ),
            knowledge=(
                "super_graph is an n x n 0/1 int array: super_graph[c, e] = 1 allows c -> e, "
                "0 forbids it, diagonal 0. include_graph[c, e] = 1 requires c -> e (else 0)."
            ),
        ),
        AlgorithmInfo(
            name="direct_lingam",
            title="DirectLiNGAM, functional (linear non-Gaussian)",
            card=(
                "assumes linear relations with non-Gaussian independent noise and no hidden "
                "confounders; under those assumptions it finds a full causal order and a "
                "fully directed DAG with edge weights. Unreliable when the data look Gaussian. "
                "Accepts prior knowledge about causal order (paths)."
            ),
            api=(
                "from causallearn.search.FCMBased import lingam\n"
                "model = lingam.DirectLiNGAM(random_state=0, prior_knowledge=None)\n"
                "model.fit(X)\n"
                "Result: B = model.adjacency_matrix_, B[i, j] != 0 means j -> i (row = effect, "
                "weight = coefficient).\n"
                'Write {"nodes": list(df.columns), "matrix": B.tolist(), '
                '"convention": "effect_row"}.'
            ),
            knowledge=(
                "prior_knowledge is an n x n int array pk about paths: pk[e, c] = 1 if c has a "
                "directed path to e, 0 if it has none, -1 if unknown; diagonal -1. Encode a "
                "required c -> e as pk[e, c] = 1 and a forbidden c -> e as pk[e, c] = 0."
            ),
        ),
        AlgorithmInfo(
            name="cdnod",
            title="CD-NOD, constraint-based for changing distributions",
            card=(
                "PC extended with a context variable (time or domain index) for data whose "
                "distribution changes over time or across environments; uses the changes to "
                "orient more edges. Needs an ordering or domain index; with homogeneous data "
                "it behaves like PC. Accepts required/forbidden edges."
            ),
            api=(
                "from causallearn.search.ConstraintBased.CDNOD import cdnod\n"
                "c = np.arange(X.shape[0], dtype=float).reshape(-1, 1)   # row index as context\n"
                'cg = cdnod(X, c, alpha=0.05, indep_test="fisherz", background_knowledge=None, '
                "show_progress=False)\n"
                "The result has n + 1 nodes, the context last: G = cg.G.graph[:-1, :-1]. "
                f"{_CAUSALLEARN_MARKS}\n"
                'Write {"nodes": list(df.columns), "matrix": G.tolist(), '
                '"convention": "causallearn"}.'
            ),
            knowledge=_BACKGROUND
            + 'cdnod names its nodes "X1" .. "Xn" by column position, so use those names.',
        ),
    )
}


def algorithm_info(name: str) -> AlgorithmInfo:
    """The prompt texts of ``name``; an unknown name raises :class:`InputError`."""
    try:
        return ALGORITHMS[name]
    except KeyError:
        raise InputError(
            f"unknown algorithm {name!r} for MAC's coding module; choose from {list(ALGORITHMS)}"
        ) from None


def check_algorithms(names: tuple[str, ...] | list[str]) -> tuple[str, ...]:
    """Validate a user's list of allowed algorithms (at least one, no repeats)."""
    names = tuple(str(n) for n in names)
    if not names:
        raise InputError("algorithms is empty: allow at least one, e.g. algorithms=('pc',)")
    if len(set(names)) != len(names):
        raise InputError(f"algorithms {list(names)} repeats a name; list each once")
    for name in names:
        algorithm_info(name)
    return names
