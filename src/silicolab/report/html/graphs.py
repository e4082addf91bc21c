"""Causal graphs as figures: one deterministic layered layout (networkx), drawn with
matplotlib, and the edge-by-edge comparison of a predicted graph with the true one.

The layout is a function of the nodes (in the order given) and the edges only: every node
sits in the layer of its longest path from a root (cycles are collapsed first), layers run
left to right, nodes keep their given order inside a layer. Two graphs over the same nodes
are drawn with the layout of the true graph, so they can be compared by eye.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from silicolab.report.html.figures import new_figure

Edge = tuple[str, str]
#: The room an arrow leaves around a node label (matplotlib's node-size units).
_NODE_SIZE = 1600
#: How each class of edge is drawn: (colour, line style, heading in the legend).
EDGE_STYLES: dict[str, tuple[str, str, str]] = {
    "correct": ("#009E73", "solid", "correct"),
    "missing": ("#999999", "dashed", "missing"),
    "extra": ("#D55E00", "solid", "extra"),
    "reversed": ("#E69F00", "solid", "reversed"),
    "undirected": ("#0072B2", "dotted", "undirected"),
    "plain": ("#333333", "solid", "edge"),
}


def layered_layout(nodes: Sequence[str], edges: Iterable[Edge]) -> dict[str, tuple[float, float]]:
    """Positions of ``nodes`` (see the module docstring); deterministic."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    graph.add_edges_from((u, v) for u, v in edges if u in graph and v in graph and u != v)
    condensed = nx.condensation(graph)
    layer_of_scc: dict[int, int] = {}
    for scc in nx.topological_sort(condensed):
        preds = [layer_of_scc[p] for p in condensed.predecessors(scc)]
        layer_of_scc[scc] = 1 + max(preds) if preds else 0
    mapping = condensed.graph["mapping"]
    layers: dict[int, list[str]] = {}
    for node in nodes:  # given order inside a layer (networkx's layouts iterate sets)
        layers.setdefault(layer_of_scc[mapping[node]], []).append(node)
    width = max(1, len(layers) - 1)
    out = {}
    for layer, members in layers.items():
        # lone nodes alternate above and below the axis: no collinear chains
        shift = (0.25 if layer % 2 else -0.25) if len(members) == 1 and len(layers) > 2 else 0.0
        for i, node in enumerate(members):
            y = (len(members) - 1) / 2 - i
            out[node] = (2.0 * layer / width - 1.0, y / max(1, len(members) - 1) + shift)
    return out


def compare_edges(
    truth: Iterable[Edge], directed: Iterable[Edge], undirected: Iterable[Edge] = ()
) -> dict[str, list[Edge]]:
    """Each predicted edge as correct, reversed, extra or undirected (an undirected edge
    between two adjacent true nodes), and each true edge no prediction touches as missing.
    SHD counts missing + extra + reversed + undirected-on-a-true-pair (reversal = 1)."""
    true = set(map(tuple, truth))
    out: dict[str, list[Edge]] = {k: [] for k in ("correct", "reversed", "extra", "missing")}
    out["undirected"] = []
    touched: set[Edge] = set()
    for u, v in directed:
        if (u, v) in true:
            out["correct"].append((u, v))
            touched.add((u, v))
        elif (v, u) in true:
            out["reversed"].append((u, v))
            touched.add((v, u))
        else:
            out["extra"].append((u, v))
    for u, v in undirected:
        hit = (u, v) if (u, v) in true else (v, u) if (v, u) in true else None
        if hit is None:
            out["extra"].append((u, v))
        else:
            out["undirected"].append((u, v))
            touched.add(hit)
    out["missing"] = [e for e in truth if tuple(e) not in touched]
    return out


def edge_scores(classes: Mapping[str, Sequence[Edge]]) -> dict[str, float]:
    """SHD (reversal = 1) and directed-edge precision, recall and F1 from
    :func:`compare_edges` output."""
    correct = len(classes["correct"])
    predicted = correct + sum(len(classes[k]) for k in ("reversed", "extra", "undirected"))
    true = correct + sum(len(classes[k]) for k in ("reversed", "missing", "undirected"))
    precision = correct / predicted if predicted else 0.0
    recall = correct / true if true else 0.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    shd = sum(len(classes[k]) for k in ("missing", "extra", "reversed", "undirected"))
    return {"shd": float(shd), "precision": precision, "recall": recall, "f1": f1}


def draw_graph(
    ax: Any,
    nodes: Sequence[str],
    pos: Mapping[str, tuple[float, float]],
    edges: Sequence[tuple[str, str, str]],
    *,
    labels: Mapping[Edge, str] | None = None,
    title: str = "",
) -> None:
    """Draw ``nodes`` at ``pos`` and ``edges`` as ``(u, v, style)`` (a key of
    :data:`EDGE_STYLES`; ``undirected`` and ``missing``-undirected have no arrow head)."""
    import networkx as nx

    graph = nx.DiGraph()
    graph.add_nodes_from(nodes)
    box = {"boxstyle": "round,pad=0.35", "fc": "#f4f1e8", "ec": "#555", "lw": 0.8}
    nx.draw_networkx_labels(
        graph, pos, ax=ax, labels={n: _wrap(n) for n in nodes}, font_size=7, bbox=box
    )
    for u, v, kind in edges:
        colour, line, _ = EDGE_STYLES[kind]
        nx.draw_networkx_edges(
            graph,
            pos,
            ax=ax,
            edgelist=[(u, v)],
            edge_color=colour,
            style=line,
            width=1.8,
            arrows=True,
            arrowstyle="-" if kind == "undirected" else "-|>",
            arrowsize=14,
            node_size=_NODE_SIZE,
            connectionstyle="arc3,rad=0.08",
        )
    if labels:
        nx.draw_networkx_edge_labels(
            graph, pos, ax=ax, edge_labels=dict(labels), font_size=7, label_pos=0.5,
            rotate=False, connectionstyle="arc3,rad=0.08",
        )  # fmt: skip
    ax.set_title(title, fontsize=9)
    ax.set_axis_off()
    ax.margins(0.18)


def comparison_figure(
    nodes: Sequence[str],
    truth: Sequence[Edge],
    directed: Sequence[Edge],
    undirected: Sequence[Edge] = (),
    *,
    predicted_title: str = "predicted",
    truth_title: str = "truth",
) -> Any:
    """Predicted and true graphs side by side with the true graph's layout; predicted edges
    coloured by class (missing true edges dashed on the predicted side)."""
    classes = compare_edges(truth, directed, undirected)
    pos = layered_layout(nodes, truth)
    fig = new_figure(9.0, 3.6 + 0.25 * max(0, len(nodes) - 4), constrained=False)
    left, right = fig.subplots(1, 2)
    fig.subplots_adjust(left=0.01, right=0.99, top=0.92, bottom=0.1, wspace=0.05)
    styled = [(u, v, kind) for kind, es in classes.items() for u, v in es]
    draw_graph(left, nodes, pos, styled, title=predicted_title)
    draw_graph(right, nodes, pos, [(u, v, "plain") for u, v in truth], title=truth_title)
    _legend(fig, [k for k, es in classes.items() if es])
    return fig


def path_diagram(
    nodes: Sequence[str], edges: Sequence[Edge], labels: Mapping[Edge, str], *, title: str = ""
) -> Any:
    """A path diagram: causes to the left of their effects, each arrow labelled."""
    pos = layered_layout(nodes, edges)
    fig = new_figure(7.0, 1.2 + 0.7 * max(2, len(nodes)), constrained=False)
    ax = fig.add_subplot()
    fig.subplots_adjust(left=0.01, right=0.99, top=0.92, bottom=0.02)
    draw_graph(ax, nodes, pos, [(u, v, "plain") for u, v in edges], labels=labels, title=title)
    return fig


def stars(p: Any) -> str:
    """Significance stars of a p-value: *** < .001, ** < .01, * < .05."""
    if not isinstance(p, int | float):
        return ""
    return "***" if p < 0.001 else "**" if p < 0.01 else "*" if p < 0.05 else ""


def _wrap(name: str, width: int = 12) -> str:
    """A node label broken at underscores so it fits its circle."""
    if len(name) <= width:
        return name
    words, lines, line = name.replace("_", "_ ").split(" "), [], ""
    for word in words:
        if line and len(line) + len(word) > width:
            lines.append(line)
            line = ""
        line += word
    return "\n".join([*lines, line])


def _legend(fig: Any, kinds: Sequence[str]) -> None:
    from matplotlib.lines import Line2D

    handles = [
        Line2D([], [], color=EDGE_STYLES[k][0], ls=EDGE_STYLES[k][1], lw=2, label=EDGE_STYLES[k][2])
        for k in kinds
    ]
    if handles:
        fig.legend(handles=handles, loc="lower center", ncols=len(handles), frameon=False)


__all__ = [
    "EDGE_STYLES",
    "compare_edges",
    "comparison_figure",
    "draw_graph",
    "edge_scores",
    "layered_layout",
    "path_diagram",
    "stars",
]
