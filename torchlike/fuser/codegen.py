"""``codegen(graph, *example_inputs, backend="cpu")``: the kernel source of every fusion group,
generated but not compiled -- to read what the fuser would run.

    >>> g = fuse(parse_graph(text))
    >>> for k in codegen(g, x, y):
    ...     print(k.source)

The graph runs once in the interpreter (groups interpreted) to learn each group's runtime inputs;
a group inside a loop is described by its first execution.  Groups that never run are skipped.
A graph with no fusion group is fused first (``partition.fuse``).

Generating code needs no device: numpy example inputs give the ``cuda`` backend's CUDA C on a
machine without a GPU or CuPy (the kernels for GPU arrays of the same dtypes, shapes and
strides, but for their names: the kernel key records the array module).  A backend's
``check`` reason about where the arrays live (``backend unavailable: ...``) is therefore not an
error here; any other reason is.
"""
from __future__ import annotations

from typing import Any, Dict, List, Tuple, Union

from ..errors import UnsupportedOpError
from ..interpreter import Interpreter
from ..ir.graph import Graph, Node
from .backend import (
    InterpretInstead,
    KernelSource,
    Unsupported,
    analyze,
    get_backend_impl,
    signature_of,
)
from .partition import fuse
from .row_reduce import is_reduction_group

__all__ = ["codegen", "codegen_groups"]


def codegen(graph: Graph, *example_inputs: Any, backend: str = "cpu") -> List[KernelSource]:
    """One ``KernelSource`` per fusion group of ``graph``, in execution order.  Raises
    ``UnsupportedOpError`` if the backend is missing or cannot express a group."""
    sources = []
    for node, source in codegen_groups(graph, *example_inputs, backend=backend):
        if isinstance(source, str):
            raise UnsupportedOpError(f"{node.describe()}: {source}")
        sources.append(source)
    return sources


def codegen_groups(graph: Graph, *example_inputs: Any, backend: str = "cpu"
                   ) -> List[Tuple[Node, Union[KernelSource, str]]]:
    """Like ``codegen``, group by group: (the ``prim::FusionGroup`` node of ``graph``, its
    ``KernelSource`` or the reason the backend has none for it), in execution order; a group
    the backend cannot express is not an error here.  ``graph`` is fused first if it holds no
    group (the nodes are then those of the fused copy).  Raises ``UnsupportedOpError`` only if
    the backend is missing."""
    impl = get_backend_impl(backend)
    if impl is None or backend == "interpreter":
        raise UnsupportedOpError(f"no code generator for backend {backend!r}")
    if not any(n.kind == "prim::FusionGroup" for n in graph.all_nodes()):
        graph = fuse(graph)
    seen: Dict[Node, List[Any]] = {}

    def record(node: Node, xp, args):
        seen.setdefault(node, list(args))
        return Interpreter(node.attrs["Subgraph"]).run_outputs(list(args))

    Interpreter(graph, fusion_runner=record).run(*example_inputs)
    out: List[Tuple[Node, Union[KernelSource, str]]] = []
    for node, args in seen.items():
        sub = node.attrs["Subgraph"]
        try:
            spec = analyze(sub, signature_of(args))
            reason = impl.check(spec)
            if reason is not None and not reason.startswith("backend unavailable"):
                raise Unsupported(reason)
            out.append((node, impl.generate(spec)))
        except Unsupported as e:
            if is_reduction_group(sub):  # the executor splits it: its elementwise parts' kernels
                out.extend(codegen_groups(fuse(sub, reductions=False), *args, backend=backend))
            else:
                out.append((node, e.reason))
        except InterpretInstead:
            out.append((node, "no kernel for these inputs"))
    return out
