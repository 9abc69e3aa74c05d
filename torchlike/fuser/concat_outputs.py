"""A fusion group's results concatenated by ``aten::cat`` become one group output, written in
place (PyTorch's legacy fuser's ``prim::FusedConcat``)::

    %a, %b = prim::FusionGroup_0(%x)              %cat = prim::FusionGroup_0(%x)
    %l = prim::ListConstruct(%a, %b)       ->     with prim::FusionGroup_0 = graph(%x.1):
    %cat = aten::cat(%l, %dim)                      ...
                                                    %cat.1 = prim::FusedConcat[dim=1](%a.1, %b.1)
                                                    return (%cat.1)

The backward of an LSTM cell is the case: its four gate gradients, computed in one kernel, are
concatenated into the gradient of ``gates``.  As separate outputs they were written, read back
by ``cat`` and written again; now the CPU launcher allocates the concatenation and the kernel
writes each piece into it at the piece's offset (``cpu_backend.compiler``, ``codegen``), so
each element is written once (the LSTM cell's backward at 2^22: 14 ms, against 33 ms with the
cat after the kernel).  Every other launcher concatenates the pieces it wrote
(``kernel_spec.output_assembler``).

A cat is absorbed when every list item is a distinct result of the same group, computed by an
op in it (not an input passed through or a constant), typed with one dtype (cat would promote
several), used by nothing but that list, and the group has no row reduction (a row kernel lays
out its own outputs).  ``backend.analyze`` checks the rest when shapes are known; pieces whose
shapes do not concatenate make the group fall back to the interpreter, which runs
``prim::FusedConcat`` as ``aten::cat`` (the same error).
"""
from __future__ import annotations

from typing import List, Optional, Set

from ..ir.graph import Graph, Node, Value
from ..ir.types import TensorType
from .group_nodes import FUSED_CONCAT, FUSION_GROUP
from .row_reduce import ROW_REDUCTIONS

__all__ = ["FUSED_CONCAT", "fuse_concat_outputs"]


def fuse_concat_outputs(graph: Graph, touched: Optional[Set[Value]] = None) -> int:
    """Absorb every eligible ``aten::cat`` of group results into its group; how many.  The
    cat's dim constants, which may be dead now, are added to ``touched``."""
    count = 0
    for block in list(graph.all_blocks()):
        for node in list(block.nodes):
            if node.kind == "aten::cat" and node.owning_block is block:
                pieces = _pieces(graph, node)
                if pieces is not None:
                    if touched is not None:
                        touched.update(node.inputs[1:])
                    _absorb(node, pieces)
                    count += 1
    return count


def _pieces(graph: Graph, cat: Node) -> Optional[List[Value]]:
    """The group results ``cat`` concatenates, if it can be absorbed (module docstring)."""
    if len(cat.inputs) not in (1, 2) or len(cat.outputs) != 1:
        return None
    if len(cat.inputs) == 2 and not isinstance(cat.inputs[1].constant_value(), int):
        return None
    lst = cat.inputs[0].node
    if lst is None or lst.kind != "prim::ListConstruct" or len(cat.inputs[0].uses) != 1 \
            or len(lst.inputs) < 2:
        return None
    pieces = list(lst.inputs)
    group = pieces[0].node
    if group is None or group.kind != FUSION_GROUP or len(set(pieces)) != len(pieces):
        return None
    dtypes = {p.type.dtype if isinstance(p.type, TensorType) else None for p in pieces}
    if len(dtypes) != 1 or None in dtypes:  # cat would promote: the kernel writes one dtype
        return None
    returned = {v for b in graph.all_blocks() for v in b.returns}
    if any(p.node is not group or p.uses != [lst] or p in returned for p in pieces):
        return None
    sub = group.attrs["Subgraph"]
    if any(n.kind in ROW_REDUCTIONS for n in sub.nodes):
        return None
    for p in pieces:
        inner = sub.outputs[group.outputs.index(p)]
        if inner.node is None or inner.node.kind in ("prim::Constant", FUSED_CONCAT) or \
                sum(v is inner for v in sub.outputs) != 1:
            return None
    return pieces


def _absorb(cat: Node, pieces: List[Value]) -> None:
    """Move ``cat`` into the group: its output becomes the group's last output."""
    group, lst = pieces[0].node, cat.inputs[0].node
    sub = group.attrs["Subgraph"]
    dim = cat.inputs[1].constant_value() if len(cat.inputs) == 2 else 0
    slots = [group.outputs.index(p) for p in pieces]
    inner = [sub.outputs[k] for k in slots]
    out = cat.output()
    node = sub.create(FUSED_CONCAT, inner, [out.type], {"dim": dim}, names=[out.name],
                      source=cat.source)
    keep = [k for k in range(len(group.outputs)) if k not in slots]
    sub.set_outputs([sub.outputs[k] for k in keep] + [node.output()])
    block = cat.owning_block
    block.remove(cat)
    block.remove(lst)
    group.outputs[:] = [group.outputs[k] for k in keep] + [out]
    out.node = group
