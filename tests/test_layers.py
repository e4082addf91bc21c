"""The package's layers and import graph (docs/architecture.md, "Layers").

Every module under ``src/silicolab`` is parsed (no import runs), and each ``import`` or
``from ... import`` of a ``silicolab`` module, at module level or inside a function, is an
arrow from the importing package to the imported one. Arrows point down only: a package
imports packages of lower layers, never a higher one, and packages of one layer do not
import each other (the doc names no exception). Module-level imports also form a graph
of modules; a cycle in it that passes through a package ``__init__`` fails, because
importing that package then depends on which of its modules was imported first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import networkx as nx
import pytest

SRC = Path(__file__).resolve().parents[1] / "src"
PACKAGE = SRC / "silicolab"

#: docs/architecture.md "Layers", bottom (0) to top; a package's layer is its index.
LAYERS: tuple[tuple[str, ...], ...] = (
    ("core",),
    ("llm", "runs", "runtime"),
    ("scm",),
    ("sim", "envs"),
    ("studies", "discovery", "scientists"),
    ("bench",),
    ("report",),
    ("api",),
    ("cli",),
)
LAYER_OF = {package: level for level, packages in enumerate(LAYERS) for package in packages}

#: Same-layer imports the doc allows: none ("The two layer-1 packages stay independent").
ALLOWED_SIDEWAYS: frozenset[tuple[str, str]] = frozenset()


def _documented_layers() -> tuple[tuple[str, ...], ...]:
    """The packages of each line of docs/architecture.md's "Layers" diagram, bottom first."""
    text = (SRC.parent / "docs" / "architecture.md").read_text(encoding="utf-8")
    block = text.split("## Layers", 1)[1].split("```", 2)[1]
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    rows = []
    for line in block.splitlines():
        names = []
        for word in line.split():
            if word not in packages:
                break
            names.append(word)
        if names:
            rows.append(tuple(names))
    return tuple(reversed(rows))


def test_the_layers_are_the_documented_ones() -> None:
    assert _documented_layers() == LAYERS


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(SRC).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _is_package(path: Path) -> bool:
    return path.name == "__init__.py"


MODULES = {_module_name(path): path for path in sorted(PACKAGE.rglob("*.py"))}


def _resolve(module: str, path: Path, node: ast.ImportFrom) -> str:
    """The absolute name of a ``from ... import``'s module (relative imports resolved)."""
    if node.level == 0:
        return node.module or ""
    base = module.split(".")
    # a package's own name is its __init__'s; "." from a module means its package
    base = base if _is_package(path) else base[:-1]
    base = base[: len(base) - (node.level - 1)]
    return ".".join([*base, node.module] if node.module else base)


def _targets(module: str, path: Path, node: ast.AST) -> Iterator[str]:
    """The silicolab modules one import statement loads (submodules named in a from)."""
    if isinstance(node, ast.Import):
        for alias in node.names:
            yield alias.name
    elif isinstance(node, ast.ImportFrom):
        source = _resolve(module, path, node)
        for alias in node.names:
            candidate = f"{source}.{alias.name}"
            yield candidate if candidate in MODULES else source


def _imports(module: str, path: Path, *, top_level_only: bool) -> Iterator[tuple[str, int]]:
    """(imported silicolab module, line) for each import of one module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = _top_level(tree) if top_level_only else ast.walk(tree)
    for node in nodes:
        for target in _targets(module, path, node):
            if target == "silicolab" or target.startswith("silicolab."):
                yield _known(target), node.lineno


def _top_level(tree: ast.Module) -> Iterator[ast.AST]:
    """Statements that run on import: module body, including under ``if``/``try``,
    but not ``if TYPE_CHECKING:`` blocks, functions or classes' methods."""
    stack: list[ast.AST] = list(tree.body)
    while stack:
        node = stack.pop()
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            stack.extend(node.orelse)
            continue
        if isinstance(node, (ast.If, ast.Try, ast.With)):
            for field in ("body", "orelse", "finalbody", "handlers"):
                stack.extend(getattr(node, field, []))
            continue
        if isinstance(node, ast.ExceptHandler):
            stack.extend(node.body)
            continue
        if isinstance(node, ast.ClassDef):
            stack.extend(s for s in node.body if not isinstance(s, ast.FunctionDef))
            continue
        yield node


def _known(name: str) -> str:
    """The nearest existing module of a dotted name (``a.b.attr`` -> ``a.b``)."""
    while name not in MODULES and "." in name:
        name = name.rsplit(".", 1)[0]
    return name


def _package(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def _layer_violations() -> list[str]:
    found = []
    for module, path in MODULES.items():
        source = _package(module)
        if source is None:  # silicolab/__init__.py: the lazy front door to api
            continue
        for target, line in _imports(module, path, top_level_only=False):
            dest = _package(target)
            if dest is None or dest == source:
                continue
            up = LAYER_OF[dest] > LAYER_OF[source]
            sideways = LAYER_OF[dest] == LAYER_OF[source]
            if up or (sideways and (source, dest) not in ALLOWED_SIDEWAYS):
                found.append(f"{path.relative_to(SRC)}:{line} {source} -> {dest} ({target})")
    return found


def test_every_package_has_a_layer() -> None:
    packages = {_package(m) for m in MODULES} - {None, "__main__"}
    assert packages <= set(LAYER_OF), packages - set(LAYER_OF)


def test_imports_point_down_only() -> None:
    violations = _layer_violations()
    assert not violations, "imports against docs/architecture.md Layers:\n" + "\n".join(violations)


def _module_graph() -> nx.DiGraph:
    graph = nx.DiGraph()
    for module, path in MODULES.items():
        graph.add_node(module)
        for target, _line in _imports(module, path, top_level_only=True):
            # a submodule's parent packages are already importing when it runs, so
            # only the module an import names is an arrow: `from pkg import name`
            # inside pkg's own submodule is the cycle that bites
            if target != module:
                graph.add_edge(module, target)
    return graph


def _cycles_through_init(graph: nx.DiGraph) -> list[list[str]]:
    packages = {m for m, p in MODULES.items() if _is_package(p)}
    cycles = []
    for component in nx.strongly_connected_components(graph):
        inits = sorted(component & packages)
        if len(component) > 1 and inits:
            cycle = nx.find_cycle(graph.subgraph(component), source=inits[0])
            cycles.append([edge[0] for edge in cycle])
    return cycles


def test_no_import_cycle_through_a_package_init() -> None:
    cycles = _cycles_through_init(_module_graph())
    assert not cycles, "\n".join(" -> ".join(cycle) for cycle in cycles)


@pytest.mark.parametrize(
    ("edges", "cyclic"),
    [
        ([("silicolab.a", "silicolab.a.x"), ("silicolab.a.x", "silicolab.a")], True),
        ([("silicolab.a.x", "silicolab.a.y"), ("silicolab.a.y", "silicolab.a.x")], False),
        ([("silicolab.a", "silicolab.a.x"), ("silicolab.a.x", "silicolab.b")], False),
    ],
)
def test_the_cycle_check_sees_cycles_through_an_init(
    edges: list[tuple[str, str]], cyclic: bool, monkeypatch: pytest.MonkeyPatch
) -> None:
    fake = {
        "silicolab.a": Path("silicolab/a/__init__.py"),
        "silicolab.a.x": Path("silicolab/a/x.py"),
        "silicolab.a.y": Path("silicolab/a/y.py"),
        "silicolab.b": Path("silicolab/b.py"),
    }
    monkeypatch.setitem(globals(), "MODULES", fake)
    assert bool(_cycles_through_init(nx.DiGraph(edges))) is cyclic


def test_relative_imports_resolve_against_the_package() -> None:
    node = ast.parse("from ..base import X").body[0]
    assert isinstance(node, ast.ImportFrom)
    inside = _resolve("silicolab.envs.causalab.lab", Path("lab.py"), node)
    assert inside == "silicolab.envs.base"
    init = _resolve("silicolab.envs.causalab", Path("__init__.py"), node)
    assert init == "silicolab.envs.base"
