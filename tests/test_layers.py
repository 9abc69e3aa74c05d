"""The package's architecture, read from its source with ``ast`` (nothing is imported).

Every module of ``torchlike`` is parsed; every import counts -- at module level or inside a
function, absolute or relative (``from . import x``, ``from ..ops import registry``), and
``importlib.import_module("torchlike....")`` with a literal (or f-string prefix) name.  Two
rules, each test listing ALL its violations:

* layering: a module imports only from its own layer or lower ones (``LAYERS`` below); units
  in ``INDEPENDENT`` groups share a layer but never import each other;
* no cycles: the module import graph is acyclic (modules of one package may import each other,
  but not in a circle), each cycle reported as a path ``a -> b -> a``.

Plus a size rule: no module over ``MAX_LINES`` lines.
"""
from __future__ import annotations

import ast
from collections import deque
from pathlib import Path
from typing import Dict, List, Optional, Set, Tuple

PACKAGE = "torchlike"
ROOT = Path(__file__).resolve().parent.parent / PACKAGE

# The layers, lowest first.  A unit is a top-level module or subpackage of torchlike; it may
# import from units of its own layer and of lower layers, never from a higher one.  Leaf helper
# modules at the package root (they import nothing from torchlike) join the lowest layer
# without an entry.  "__init__" is the package itself (torchlike/__init__.py).  A new top-level
# unit must be placed here: the test fails until it is.
LAYERS: List[Set[str]] = [
    {"errors"},
    {"ir"},
    {"ops"},
    {"interpreter"},
    {"frontend", "passes", "functional"},  # may import each other, without cycles
    {"fuser"},
    {"cpu_backend", "cuda_backend"},        # must not import each other (INDEPENDENT)
    {"jit", "backends", "nn", "autodiff", "dask", "onnx"},
    {"__init__"},
    {"cli"},       # the command line: on top of everything, imported by nothing but __main__
    {"__main__"},  # python -m torchlike
]
INDEPENDENT: List[Set[str]] = [{"cpu_backend", "cuda_backend"}]
MAX_LINES = 600


# -- reading the imports --------------------------------------------------------------------------

def module_files() -> Dict[str, Path]:
    """Dotted module name -> file, for every module of the package."""
    out = {}
    for path in sorted(ROOT.rglob("*.py")):
        parts = list(path.relative_to(ROOT.parent).with_suffix("").parts)
        if parts[-1] == "__init__":
            parts.pop()
        out[".".join(parts)] = path
    return out


MODULES = module_files()


def _is_package(module: str) -> bool:
    return MODULES[module].name == "__init__.py"


def _resolve(module: str, level: int, name: Optional[str]) -> Optional[str]:
    """The absolute name ``from <level dots><name>`` means inside ``module``."""
    if level == 0:
        return name
    base = module.split(".") if _is_package(module) else module.split(".")[:-1]
    if level > 1:
        base = base[:-(level - 1)]
    return ".".join(base + ([name] if name else [])) or None


def _target(name: Optional[str], member: Optional[str] = None) -> Optional[str]:
    """The package module that ``name`` (then ``name.member``, if that is a module) names."""
    if not name or not (name == PACKAGE or name.startswith(PACKAGE + ".")):
        return None
    if member and f"{name}.{member}" in MODULES:
        return f"{name}.{member}"
    while name not in MODULES and "." in name:  # an attribute path: its deepest module
        name = name.rsplit(".", 1)[0]
    return name if name in MODULES else None


def _literal_prefix(node: ast.AST) -> Optional[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    if isinstance(node, ast.JoinedStr) and node.values and isinstance(node.values[0], ast.Constant):
        prefix = str(node.values[0].value)  # f"torchlike.fuser.{x}": the package torchlike.fuser
        return prefix.rsplit(".", 1)[0] if "." in prefix else None
    return None


def imports_of(module: str) -> List[Tuple[str, int, bool]]:
    """(imported package module, line, inside a function?) for every import in ``module``."""
    tree = ast.parse(MODULES[module].read_text(), str(MODULES[module]))
    found: List[Tuple[str, int, bool]] = []

    def visit(node: ast.AST, in_function: bool) -> None:
        targets: List[Optional[str]] = []
        if isinstance(node, ast.Import):
            targets = [_target(alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = _resolve(module, node.level, node.module)
            targets = [_target(base, alias.name) for alias in node.names]
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            fname = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if fname in ("import_module", "__import__"):
                text = _literal_prefix(node.args[0])
                if text and text.startswith("."):
                    dots = len(text) - len(text.lstrip("."))
                    text = _resolve(module, dots, text.lstrip(".") or None)
                targets = [_target(text)]
        for t in targets:
            if t is not None and t != module:
                found.append((t, node.lineno, in_function))
        inner = in_function or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef,
                                                 ast.Lambda))
        for child in ast.iter_child_nodes(node):
            visit(child, inner)

    visit(tree, False)
    return found


def import_graph() -> Dict[str, Dict[str, Tuple[int, bool]]]:
    """module -> {imported module: (first line, inside a function?)}."""
    graph: Dict[str, Dict[str, Tuple[int, bool]]] = {}
    for module in MODULES:
        edges: Dict[str, Tuple[int, bool]] = {}
        for target, line, lazy in imports_of(module):
            if target not in edges or (edges[target][1] and not lazy):
                edges[target] = (line, lazy)
        graph[module] = edges
    return graph


# -- the rules ------------------------------------------------------------------------------------

def unit_of(module: str) -> str:
    parts = module.split(".")
    return "__init__" if len(parts) == 1 else parts[1]


def layer_table(graph) -> Tuple[Dict[str, int], List[str]]:
    """unit -> layer index, and the units missing from LAYERS (leaf helpers join layer 0)."""
    layer = {u: i for i, units in enumerate(LAYERS) for u in units}
    unknown = []
    for module in graph:
        unit = unit_of(module)
        if unit in layer:
            continue
        if module.count(".") == 1 and not _is_package(module) and not graph[module]:
            layer[unit] = 0  # a leaf helper at the package root
        else:
            unknown.append(unit)
    return layer, sorted(set(unknown))


def _where(module: str, line: int, lazy: bool) -> str:
    return f"{MODULES[module].relative_to(ROOT.parent)}:{line}" + (" (in a function)" if lazy
                                                                  else "")


def layer_violations(graph) -> List[str]:
    layer, unknown = layer_table(graph)
    out = [f"unknown top-level unit '{PACKAGE}.{u}': place it in LAYERS in {Path(__file__).name}"
           for u in unknown]
    for module, edges in sorted(graph.items()):
        a = unit_of(module)
        for target, (line, lazy) in sorted(edges.items()):
            b = unit_of(target)
            if a == b or a not in layer or b not in layer:
                continue
            if layer[b] > layer[a]:
                out.append(f"{module} imports {target} from a higher layer ({a} is layer "
                           f"{layer[a]}, {b} layer {layer[b]}) at {_where(module, line, lazy)}")
            elif any({a, b} <= group for group in INDEPENDENT):
                out.append(f"{module} imports {target}, but {a} and {b} must not import each "
                           f"other, at {_where(module, line, lazy)}")
    return out


def strongly_connected(graph) -> List[List[str]]:
    """Tarjan's components with more than one module (or a module importing itself)."""
    index: Dict[str, int] = {}
    low: Dict[str, int] = {}
    stack: List[str] = []
    on_stack: Set[str] = set()
    out: List[List[str]] = []

    def connect(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                connect(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1 or v in graph.get(v, {}):
                out.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            connect(v)
    return out


def shortest_cycle(graph, start: str, members: Set[str]) -> List[str]:
    """The shortest import path from ``start`` back to itself, within ``members``."""
    parent: Dict[str, str] = {}
    queue = deque([start])
    while queue:
        v = queue.popleft()
        for w in sorted(graph[v]):
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if w in members and w not in parent:
                parent[w] = v
                queue.append(w)
    return []


def cycle_violations(graph) -> List[str]:
    """One entry per strongly connected component: its modules and a shortest cycle through
    each of them (rotations of one cycle reported once)."""
    out = []
    for comp in strongly_connected(graph):
        cycles: List[List[str]] = []
        seen: Set[Tuple[str, ...]] = set()
        for start in comp:
            loop = shortest_cycle(graph, start, set(comp))[:-1]
            if loop and tuple(loop) not in seen:
                seen |= {tuple(loop[i:] + loop[:i]) for i in range(len(loop))}
                cycles.append(loop + loop[:1])
        out.append(f"import cycle among {len(comp)} modules ({', '.join(comp)}):\n    "
                   + "\n    ".join(" -> ".join(c) for c in cycles))
    return out


# -- the tests ------------------------------------------------------------------------------------

def test_the_import_reader():
    """The reader itself: relative names, attribute paths, cycles on a made-up graph."""
    assert f"{PACKAGE}.errors" in MODULES and f"{PACKAGE}.ir.graph" in MODULES
    assert _resolve(f"{PACKAGE}.ir.graph", 1, "printer") == f"{PACKAGE}.ir.printer"
    assert _resolve(f"{PACKAGE}.ir", 1, None) == f"{PACKAGE}.ir"  # a package's own "."
    assert _resolve(f"{PACKAGE}.fuser.executor", 2, "ops") == f"{PACKAGE}.ops"
    assert _target(f"{PACKAGE}.ir", "graph") == f"{PACKAGE}.ir.graph"
    assert _target(f"{PACKAGE}.ir.graph", "Graph") == f"{PACKAGE}.ir.graph"
    assert _target(f"{PACKAGE}.ir.graph.Graph") == f"{PACKAGE}.ir.graph"
    assert _target("numpy") is None
    assert f"{PACKAGE}.ir.graph" in {t for t, _, _ in imports_of(f"{PACKAGE}.interpreter")}
    made_up = {"a": {"b": (1, False)}, "b": {"c": (1, False), "a": (2, True)},
               "c": {"b": (1, False)}, "d": {"d": (1, False)}, "e": {"a": (1, False)}}
    assert strongly_connected(made_up) == [["a", "b", "c"], ["d"]]
    assert shortest_cycle(made_up, "a", {"a", "b", "c"}) == ["a", "b", "a"]
    (abc, d) = cycle_violations(made_up)
    assert "a -> b -> a" in abc and "c -> b -> c" in abc and "d -> d" in d


def test_imports_respect_the_layers():
    violations = layer_violations(import_graph())
    assert not violations, f"{len(violations)} layering violations:\n" + "\n".join(violations)


def test_only_main_imports_the_command_line():
    """The command line sits on top: importing torchlike never imports it."""
    graph = import_graph()
    importers = sorted(m for m, edges in graph.items() if unit_of(m) != "cli"
                       and any(unit_of(t) == "cli" for t in edges))
    assert importers == [f"{PACKAGE}.__main__"], importers


def test_no_import_cycles():
    violations = cycle_violations(import_graph())
    assert not violations, f"{len(violations)} import cycles:\n" + "\n".join(violations)


def test_modules_are_at_most_600_lines():
    sizes = {m: len(p.read_text().splitlines()) for m, p in MODULES.items()}
    big = [f"{MODULES[m].relative_to(ROOT.parent)}: {n} lines" for m, n in sorted(sizes.items())
           if n > MAX_LINES]
    assert not big, f"{len(big)} modules over {MAX_LINES} lines:\n" + "\n".join(big)
