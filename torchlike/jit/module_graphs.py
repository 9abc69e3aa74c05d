"""A module's method graph made ready to run on one module object: its ``prim::CallMethod``
calls inlined and its ``prim::GetAttr`` reads resolved against the object.

A scripted or traced module's ``forward`` graph reads its state through ``%self``::

    graph(%self : __torch__.MyCell, %x : Tensor, %h : Tensor):
      %linear : __torch__.torchlike.nn.linear.Linear = prim::GetAttr[name="linear"](%self)
      %5 : Tensor = prim::CallMethod[name="forward"](%linear, %x)
      %training : bool = prim::GetAttr[name="training"](%self)
      ...

``inline_methods`` replaces each ``prim::CallMethod`` by the callee's graph (found on the object
the ``prim::GetAttr`` chain reaches), so one graph holds every op and the fuser sees across
module boundaries (``ScriptModule.inlined_graph``).  ``bind_attributes`` then specializes the
reads for one call signature: a tensor read gets the array's exact type (the signature holds
every parameter's dtype, shape and strides, so the type stays true), a bool/int/float/str/None
read becomes a constant (the signature holds those values: ``if self.training`` folds away),
and a read of a submodule stays.  ``freeze`` also makes the tensors constants (a module called
from a traced function, whose graph has no ``%self``).
"""
from __future__ import annotations

from typing import Any, List, Optional

from ..errors import TorchlikeError
from ..ir.graph import Graph, Node, Value
from ..ir.types import tensor_type_of, type_of_python_value
from ..passes.dce import eliminate_dead_code
from ..passes.inline_functions import inline_call
from ..passes.utils import replace_all_uses

__all__ = ["attribute_path", "bind_attributes", "freeze", "inline_methods", "method_graph_of"]

_MAX_DEPTH = 64  # nested modules deeper than this are a cycle


def attribute_path(v: Value, root: Value) -> Optional[List[str]]:
    """The attribute names from ``root`` to ``v`` along ``prim::GetAttr`` nodes, or None."""
    path: List[str] = []
    while v is not root:
        n = v.node
        if n is None or n.kind != "prim::GetAttr" or len(path) > _MAX_DEPTH:
            return None
        path.append(n.attrs["name"])
        v = n.inputs[0]
    return path[::-1]


def _resolve(obj: Any, path: List[str]) -> Any:
    for name in path:
        obj = obj[name] if isinstance(obj, dict) else getattr(obj, name)
    return obj


def method_graph_of(obj: Any, name: str) -> Graph:
    """The graph of ``obj``'s compiled method ``name`` (a ``ScriptModule``'s)."""
    get = getattr(obj, "method_graph", None)
    if get is None:
        raise TorchlikeError(f"prim::CallMethod[name=\"{name}\"] on a {type(obj).__name__}: "
                             f"only compiled modules (ScriptModule) have graph methods")
    return get(name)


def inline_methods(graph: Graph, obj: Any) -> Graph:
    """Inline every ``prim::CallMethod`` of ``graph`` (in place) whose module is reached from
    the graph's first input by ``prim::GetAttr``; ``obj`` is that input's object."""
    root = graph.inputs[0]
    for _ in range(_MAX_DEPTH):
        calls = [n for n in graph.all_nodes() if n.kind == "prim::CallMethod"]
        if not calls:
            break
        for call in calls:
            path = attribute_path(call.inputs[0], root)
            if path is None:
                raise TorchlikeError(f"{call.describe()}: the module it calls is not an "
                                     f"attribute of %{root.name}")
            callee = method_graph_of(_resolve(obj, path), call.attrs["name"])
            if not inline_call(graph, call, callee, list(call.inputs)):
                raise TorchlikeError(f"{call.describe()}: {len(call.inputs)} arguments for a "
                                     f"method with {len(callee.inputs)} parameters")
    else:
        raise TorchlikeError("prim::CallMethod calls nested more than 64 deep (recursion?)")
    return graph


def bind_attributes(graph: Graph, obj: Any, tensors_as_constants: bool = False) -> Graph:
    """Resolve the ``prim::GetAttr`` reads from the graph's first input on ``obj`` (in place):
    tensors typed exactly (or constants, with ``tensors_as_constants``), scalars and None
    constants, modules kept.  Run after ``inline_methods``."""
    root = graph.inputs[0]
    for node in list(graph.all_nodes()):
        if node.kind != "prim::GetAttr":
            continue
        path = attribute_path(node.outputs[0], root)
        if path is None:
            continue
        value = _resolve(obj, path)
        out = node.outputs[0]
        if hasattr(value, "dtype") and hasattr(value, "shape"):
            if tensors_as_constants:
                _replace_by_constant(graph, node, value, tensor_type_of(value))
            else:
                out.type = tensor_type_of(value)
        elif value is None or isinstance(value, (bool, int, float, str)):
            _replace_by_constant(graph, node, value, type_of_python_value(value))
    eliminate_dead_code(graph)
    return graph


def freeze(graph: Graph, obj: Any) -> Graph:
    """``graph`` with its methods inlined and every attribute read a constant: a module's
    method as a plain function of its other inputs (the first input, ``%self``, is left
    without uses)."""
    inline_methods(graph, obj)
    bind_attributes(graph, obj, tensors_as_constants=True)
    return graph


def _replace_by_constant(graph: Graph, node: Node, value: Any, t) -> None:
    block = node.owning_block
    at = block.nodes.index(node)
    attrs = {} if value is None else {"value": value}
    const = graph.create("prim::Constant", [], [t], attrs, block=block, index=at).output()
    replace_all_uses(node.outputs[0], const, graph)
    block.remove(node)
