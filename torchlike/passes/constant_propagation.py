"""Constant propagation: evaluate pure ops on constant inputs at compile time.

A pure registry op whose inputs are all ``prim::Constant`` is run once with its registry
implementation on numpy, and the node becomes a ``prim::Constant`` holding the result (same
output value, name and source comment).  Only small results are folded: Python scalars, strings,
None, lists/tuples of those, and 0-d arrays (kept as 0-d ``np.ndarray`` constants, printed as
``{...}``).  A node whose evaluation raises is left for run time, where it raises with its name;
``aten::dropout``, ``prim::Print`` and ``prim::RaiseException`` are never folded.

Control flow on a constant is resolved: a ``prim::If`` with a constant condition is replaced by
the nodes of the branch taken, and a ``prim::Loop`` that runs zero times by its initial values::

    %c : bool = prim::Constant[value=1]()
    %y : Tensor = prim::If(%c)               %1 : Tensor = aten::neg(%x)
      block0():                        ==>   (uses of %y now use %1)
        %1 : Tensor = aten::neg(%x)
        -> (%1)
      block1():
        -> (%x)

A 0-d tensor constant runs as a Python scalar (a wrapped number, see ops/dtypes.py), while a 0-d
result computed at run time promotes as a 0-d tensor; a 0-d result is therefore folded only where
that difference cannot show: every use is an elementwise op whose result dtype is the same either
way (this needs known operand types, so run ``infer_types`` first), and no block returns it.
"""
from __future__ import annotations

from typing import Any, List

import numpy as np

from ..interpreter import constant_runtime_value
from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import BOOL, FLOAT, INT, NONE, STR, TensorType, type_of_python_value
from ..ops import registry
from ..ops.dtypes import Priority
from ..ops.elementwise_base import signature_dtypes
from .shape_inference import operand_info_of
from .utils import block_index, is_pure, replace_all_uses, subgraphs, unlink_inputs

_SCALARS = (bool, int, float, str, type(None))


def propagate_constants(graph: Graph) -> Graph:
    """Fold constant computations and constant control flow in ``graph`` in place; returns it."""
    _propagate_block(graph, graph.block)
    for sub in subgraphs(graph):
        propagate_constants(sub)
    return graph


def _propagate_block(graph: Graph, block: Block) -> None:
    i = 0
    while i < len(block.nodes):
        node = block.nodes[i]
        kind = node.kind
        if kind == "prim::If" and node.inputs[0].is_constant():
            _inline_if(graph, block, node)
            continue  # the branch's nodes now sit at index i: visit them next
        if kind == "prim::Loop" and _runs_zero_times(node):
            for out, init in zip(node.outputs, node.inputs[2:]):
                replace_all_uses(out, init, graph)
            _remove_tree(node)
            continue
        for b in node.blocks:
            _propagate_block(graph, b)
        if not node.blocks and node.inputs and _foldable(node):
            _try_fold(node)
        i += 1


def _runs_zero_times(node: Node) -> bool:
    trips, cond = node.inputs[0], node.inputs[1]
    return ((cond.is_constant() and cond.constant_value() is not None
             and not bool(cond.constant_value()))
            or (trips.is_constant() and isinstance(trips.constant_value(), int)
                and trips.constant_value() <= 0))


def _foldable(node: Node) -> bool:
    if node.kind == "prim::Constant" or len(node.outputs) != 1:
        return False
    if not all(v.is_constant() for v in node.inputs):
        return False
    op = registry.lookup(node.kind)  # unknown ops (aten::rand, ...) are never folded
    return op is not None and op.foldable and op.pure and is_pure(node)


def _try_fold(node: Node) -> None:
    op = registry.lookup(node.kind)
    args = [constant_runtime_value(v.node, np) for v in node.inputs]
    try:
        with np.errstate(all="ignore"):
            result = op.impl(np, *args, **node.attrs) if node.attrs else op.impl(np, *args)
            result = op.node_value(result, 1)
    except Exception:  # noqa: BLE001 - it will raise again at run time, naming the node
        return
    out = node.output()
    value = _as_constant(result, out.type)
    if value is _NO:
        return
    if isinstance(value, np.ndarray) and not _zero_d_fold_is_safe(out, value):
        return
    unlink_inputs(node)
    node.kind = "prim::Constant"
    node.attrs = {} if value is None else {"value": value}
    out.type = _constant_type(value, out.type)


_NO = object()


def _as_constant(result: Any, declared) -> Any:
    """The constant to store for ``result``, or ``_NO`` when it should not be folded."""
    if isinstance(result, np.generic):
        result = np.asarray(result)
    if isinstance(result, np.ndarray):
        if result.ndim != 0:
            return _NO
        if declared in (INT, FLOAT, BOOL):  # a scalar op (int + int) computed through arrays
            py = {INT: int, FLOAT: float, BOOL: bool}[declared]
            return py(result.item())
        return result
    if isinstance(result, _SCALARS):
        return result
    if isinstance(result, (list, tuple)) and all(isinstance(v, _SCALARS) for v in result):
        return result
    return _NO


def _constant_type(value: Any, declared):
    if isinstance(value, np.ndarray):
        device = declared.device if isinstance(declared, TensorType) else None
        return TensorType(str(value.dtype), (), (), device or "cpu", False)
    if value is None:
        return NONE
    if isinstance(value, str):
        return STR
    t = type_of_python_value(value)
    return declared if isinstance(value, (list, tuple)) and declared is not None else t


def _zero_d_fold_is_safe(out: Value, value: np.ndarray) -> bool:
    for blk in out.owning_graph().all_blocks():
        if any(r is out for r in blk.returns):
            return False
    dtype = str(value.dtype)
    for user in out.uses:
        op = registry.lookup(user.kind)
        if op is None or not op.is_elementwise:
            return False
        operand_idx = [i for i, p in enumerate(op.params) if p.is_operand]
        infos: List = []
        for i in operand_idx:
            if i >= len(user.inputs):
                continue
            v = user.inputs[i]
            if v is out:
                infos.append("self")
                continue
            info = operand_info_of(v)
            if info is False:
                return False
            infos.append(info)
        attrs = {p.name: user.inputs[i].constant_value()
                 for i, p in enumerate(op.params) if not p.is_operand and i < len(user.inputs)}
        try:
            as_0d = signature_dtypes(op, [(dtype, Priority.ZERO_DIM) if x == "self" else x
                                          for x in infos], attrs)
            as_wrapped = signature_dtypes(op, [(dtype, Priority.WRAPPED) if x == "self" else x
                                               for x in infos], attrs)
        except Exception:  # noqa: BLE001
            return False
        if as_0d != as_wrapped:
            return False
    return True


def _inline_if(graph: Graph, block: Block, node: Node) -> None:
    taken = node.blocks[0] if bool(node.inputs[0].constant_value()) else node.blocks[1]
    at = block_index(block, node)
    for inner in list(taken.nodes):
        block.nodes.insert(at, inner)
        inner.owning_block = block
        at += 1
    taken.nodes = []
    for out, ret in zip(node.outputs, taken.returns):
        replace_all_uses(out, ret, graph)
    taken.returns = []
    _remove_tree(node)


def _remove_tree(node: Node) -> None:
    for b in node.blocks:
        for inner in reversed(list(b.nodes)):
            _remove_tree(inner)
        b.returns = []
    node.owning_block.remove(node)
