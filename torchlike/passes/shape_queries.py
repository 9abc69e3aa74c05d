"""Fold the shape queries of a specialized graph's inputs into constants.

A scripted module asks its input's shape to choose a branch -- ``nn.LSTM``'s
``is_batched = input.dim() == 3``, ``max_batch_size = input.size(0)`` -- and a specialization
of a ``ScriptFunction`` (or the graph ``jit.vjp`` differentiates) is made for inputs of exactly
one shape, so those answers are constants there; folded, ``propagate_constants`` then keeps
only the branch taken (the fuser and the autodiff engine see straight-line code with static
shapes)::

    %d : int = aten::dim(%input)                %d : int = prim::Constant[value=3]()
    %b : int = aten::size(%input, %zero)   ->   %b : int = prim::Constant[value=5]()

Only queries of the graph's *inputs* fold -- their types are the call's own, while a type
printed inside a parsed graph may describe the example it was traced on -- and not of an input
something writes into in place (``x.unsqueeze_(0)`` changes the answer).  Nothing else
changes; ``aten::dim``, ``aten::size`` (one dim, or all as a list), ``aten::numel`` and
``aten::len`` of a tensor (its first dim) are folded where the input's shape is known.
"""
from __future__ import annotations

import math

from ..ir.graph import Graph
from ..ir.types import INT, ListType, TensorType
from ..ops.inplace import mutates

__all__ = ["fold_input_shape_queries"]

_QUERIES = ("aten::dim", "aten::size", "aten::numel", "aten::len")


def _answer(node, shape):
    if node.kind == "aten::dim":
        return len(shape)
    if node.kind == "aten::numel":
        return math.prod(shape)
    if node.kind == "aten::len":
        return shape[0] if shape else None  # len() of a 0-d tensor is an error: left alone
    if len(node.inputs) == 1:
        return list(shape)
    d = node.inputs[1]
    if not d.is_constant() or not isinstance(d.constant_value(), int):
        return None
    d = d.constant_value()
    return shape[d] if -len(shape) <= d < len(shape) else None  # out of range: the op raises


def fold_input_shape_queries(graph: Graph) -> int:
    """Replace the shape queries of ``graph``'s inputs (every block) by constants; how many."""
    count = 0
    # an input written in place (``x.unsqueeze_(0)``, ``x.resize_(...)``) may change its shape
    # before a query reads it: its queries stay
    inputs = {v for v in graph.inputs
              if not any(mutates(u.kind) or u.kind.endswith("_") for u in v.uses)}
    for block in list(graph.all_blocks()):
        for node in list(block.nodes):
            if node.kind not in _QUERIES or not node.inputs or node.inputs[0] not in inputs \
                    or len(node.outputs) != 1:
                continue
            t = node.inputs[0].type
            if not isinstance(t, TensorType) or t.shape is None or None in t.shape:
                continue
            value = _answer(node, tuple(t.shape))
            if value is None:
                continue
            out = node.output()
            const = graph.insert_constant(value, ListType(INT) if isinstance(value, list)
                                          else INT, block=block, index=block.nodes.index(node))
            out.replace_all_uses_with(const)
            for b in graph.all_blocks():
                b.returns = [const if v is out else v for v in b.returns]
            block.remove(node)
            count += 1
    return count
