"""Elementwise work moved across a group norm's rows view, into its row kernel.

``decompose_norms`` lowers a group norm (and an instance norm without running statistics)
over its input seen as rows of groups, ``x4 = torchlike::group_norm_rows(x)`` of shape
``(N, G, C/G, H*W...)``, and views the result back with ``aten::reshape_as(y, x)``.  The fuser
does not fuse across those views, so the elementwise work on either side would be kernels of
their own: a diffusion U-Net's ``GroupNorm(h + temb[:, :, None, None])`` (the time embedding
added per sample and channel), its SiLU after the norm, a residual ``+ x``.  Elementwise work
commutes with a view when every operand is viewed the same way, so:

* ``hoist_producers``: the elementwise nodes that make ``x`` and nothing else move after the
  view; their operands are viewed as rows instead (``group_norm_rows`` itself on one operand of
  ``x``'s shape and dtype, which keeps the op's checks and messages;
  ``torchlike::group_rows_of`` on the others);
* ``sink_consumers``: the elementwise nodes that only read the viewed-back result move before
  the view back, their other operands viewed as rows likewise.

An operand may be a Python scalar, a 0-d tensor, a tensor of shape ``(N or 1, C or 1, 1, ...)``
or ``(N or 1, C, H, ...)`` (``rows_kind``): seen as rows it is constant over a row's trailing
dim (the row kernel's ``block`` inputs), or full within the row.  Anything else (a shape
known only at run time, one broadcast within a group's channels, a tensor used elsewhere too)
stops the move where it is; the result is the same either way.
"""
from __future__ import annotations

from typing import Dict, List, Optional

from ..ir.graph import Block, Node, Value
from ..ir.types import BOOL, FLOAT, INT, NONE, NUMBER, STR, TensorType
from ..ops import registry

__all__ = ["hoist_producers", "rows_kind", "sink_consumers"]

_SCALAR_TYPES = (INT, FLOAT, BOOL, NONE, STR, NUMBER)  # what an elementwise op's scalars are


def _static_shape(v: Value):
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and None not in t.shape:
        return tuple(t.shape)
    return None


def rows_kind(v: Value, shape) -> Optional[str]:
    """How operand ``v`` of elementwise work on a group norm's input of ``shape`` is seen as
    rows: "scalar" (a Python scalar or a 0-d tensor: as it is), "full" (``shape`` itself),
    "broadcast" (``(N or 1, C or 1)`` + ones, or ``(1, C)`` + the trailing sizes), or None."""
    if v.type in _SCALAR_TYPES:
        return "scalar"
    s = _static_shape(v)
    if s == ():
        return "scalar"
    if s is None or shape is None or len(s) != len(shape) or len(s) < 2:
        return None
    if s == shape:
        return "full"
    # constant over each row's trailing dim (the row kernel's block inputs), or full within
    # the row and broadcast over samples; (N, 1, H, W) -- full over H*W but shared by a
    # group's channels -- is neither, and would only split the row kernel
    if s[0] in (1, shape[0]) and ((s[1] in (1, shape[1]) and all(d == 1 for d in s[2:]))
                                  or (s[1] == shape[1] and s[2:] == shape[2:])):
        return "broadcast"
    return None


def _movable(node: Optional[Node], block: Block) -> bool:
    op = registry.lookup(node.kind) if node is not None else None
    return (op is not None and op.is_elementwise and node.owning_block is block
            and len(node.outputs) == 1 and not node.kind.endswith("_") and not node.blocks)


def _returned(v: Value) -> bool:
    return any(v in b.returns for b in v.node.owning_block.graph.all_blocks())


def _view_before(block: Block, at: Node, v: Value, groups: Value) -> Value:
    """``torchlike::group_rows_of(v, groups)`` inserted before ``at``."""
    n = block.graph.create("torchlike::group_rows_of", [v, groups],
                           [TensorType(getattr(v.type, "dtype", None))], block=block,
                           index=block.nodes.index(at), source=at.source)
    return n.output()


def hoist_producers(block: Block, rows: Node, back: Node) -> None:
    """Move the elementwise nodes that make the group norm's input (and are read by nothing
    else) after its rows view ``rows``; ``back`` is the lowering's ``reshape_as(y, x)``."""
    x = rows.inputs[0]
    shape = _static_shape(x)
    if shape is None or not _movable(x.node, block) or _returned(x) or \
            set(x.uses) != {rows, back}:
        return
    tree: List[Node] = []      # the nodes to move, producers first
    leaves: Dict[Value, str] = {}

    def walk(node: Node) -> bool:
        for v in node.inputs:
            if v in leaves or v.node in tree:
                continue
            if rows_kind(v, shape) == "full" and _movable(v.node, block) and len(v.uses) == 1 \
                    and not _returned(v):
                if not walk(v.node):
                    return False
                continue
            kind = rows_kind(v, shape)
            if kind is None:
                return False
            leaves[v] = kind
        tree.append(node)
        return True

    if not walk(x.node):
        return
    checked = next((v for v, k in leaves.items() if k == "full" and v.type.dtype is not None
                    and v.type.dtype == x.type.dtype), None)
    if checked is None:  # the op's checks need an operand that looks like its input
        return
    x4 = rows.output()
    uses = list(x4.uses)
    rows.replace_input(0, checked)
    back.replace_input(back.inputs.index(x), checked)
    for n in tree:   # after the view, in their order
        block.nodes.remove(n)
    at = block.nodes.index(rows) + 1
    for n in tree:
        block.nodes.insert(at, n)
        at += 1
    groups = rows.inputs[1]
    for n in tree:
        for i, v in enumerate(n.inputs):
            if v is checked:
                n.replace_input(i, x4)
            elif leaves.get(v) in ("full", "broadcast"):
                n.replace_input(i, _view_before(block, n, v, groups))
        n.output().type = TensorType(getattr(n.output().type, "dtype", None))
    for u in uses:
        for i, v in enumerate(u.inputs):
            if v is x4:
                u.replace_input(i, x)


def sink_consumers(block: Block, view: Node, groups: Value) -> None:
    """Move the elementwise nodes that only read the viewed-back result (an activation, ``+ 1``,
    a residual ``+ x`` of the same shape) before the view back ``view``, so that they join the
    row kernel; the view follows the last of them."""
    graph = block.graph
    while True:
        out = view.output()
        shape = _static_shape(out)
        if len(out.uses) != 1 or any(out in b.returns for b in graph.all_blocks()):
            return
        user = out.uses[0]
        if not _movable(user, block):
            return
        others = [(i, v, rows_kind(v, shape)) for i, v in enumerate(user.inputs) if v is not out]
        if any(k is None for _, _, k in others) or (
                any(k != "scalar" for _, _, k in others)
                and _static_shape(user.output()) != shape):
            return
        result = user.output()
        for i, v, k in others:
            if k != "scalar":
                user.replace_input(i, _view_before(block, user, v, groups))
        for i, v in enumerate(user.inputs):  # ``y * y`` reads it twice
            if v is out:
                user.replace_input(i, view.inputs[0])
        result.replace_all_uses_with(out)
        view.replace_input(0, result)
        out.type, result.type = result.type, TensorType(getattr(result.type, "dtype", None))
        block.nodes.remove(view)
        block.nodes.insert(block.nodes.index(user) + 1, view)
