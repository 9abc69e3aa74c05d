"""Turn in-place ops whose mutation nothing else can observe into their functional op, so they
fuse (TorchScript's ``RemoveMutation`` pass does the same before its fusers run)::

    %z : Float(4) = aten::mul(%x, %y)             %z : Float(4) = aten::mul(%x, %y)
    %z.1 : Float(4) = aten::add_(%z, %y, %1)  ->  %z.1 : Float(4) = aten::add(%z, %y, %1)
    %r : Float(4) = aten::relu_(%z.1)             %r : Float(4) = aten::relu(%z.1)

``%y = aten::op_(%x, ...)`` is rewritten only when all of these hold:

* ``%x`` was made in the same block by an op that returns a fresh tensor -- an elementwise op
  other than those that may hand back their input (``aten::to`` of the same dtype,
  ``type_as``, ``contiguous``, ...), or a matmul, convolution, ``linear``, ``cat``, ... --
  or is a value a loop carries whose first value is such
  a fresh tensor that nothing reads after the loop (``acc += x * i`` in a scripted loop).  A
  graph input stays mutated in place: the caller sees the write, as in PyTorch.
* or ``%x`` is a piece of a ``chunk``/``split`` of such a fresh tensor that nothing else
  reads (a traced LSTM cell's gates: ``sigmoid_`` on each chunk);
* every use of ``%x`` before the mutation is by such an op too: a view (``select``, ``slice``,
  ``view``, ...) taken earlier would see the write;
* the functional result provably keeps ``%x``'s shape (``x.add_(y)`` cannot broadcast ``x``
  up: PyTorch raises, and so does the in-place op when it stays).  Where the result's dtype
  differs from ``%x``'s, or is not known, a cast to ``%x``'s dtype follows (in place, the result
  is written into ``%x``'s dtype).

Uses of ``%x`` after the mutation then read ``%y``: the value ``%x`` holds from there on.
"""
from __future__ import annotations

from typing import Optional

from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import TensorType
from ..ops import registry
from ..ops.inplace import functional_of, mutates
from ..ops.prim_ops import PIECES
from .shape_inference import infer_node

__all__ = ["remove_mutation", "PASS_THROUGH", "aliases_a_write"]

# elementwise ops that may return their input itself rather than a new tensor
PASS_THROUGH = frozenset({"aten::to", "aten::type_as", "aten::contiguous", "aten::detach",
                           "aten::alias", "aten::positive", "aten::conj", "aten::resolve_conj",
                           "aten::resolve_neg", "aten::conj_physical"})


# other ops whose result is always a new tensor (never a view or one of their inputs): a
# PyTorch-traced RNN cell is ``linear(h, w_hh, b_hh).add_(linear(x, w_ih, b_ih))``
_FRESH_OTHER = frozenset(f"aten::{k}" for k in (
    "linear", "matmul", "mm", "bmm", "addmm", "baddbmm", "mv", "conv1d", "conv2d", "conv3d",
    "conv_transpose1d", "conv_transpose2d", "conv_transpose3d", "convolution", "_convolution",
    "clone", "cat", "stack", "softmax", "log_softmax", "layer_norm", "embedding"))


def _fresh(node: Node) -> bool:
    """True if ``node``'s outputs are new tensors no other value aliases."""
    if node.kind in _FRESH_OTHER:
        return True
    op = registry.lookup(node.kind)
    return op is not None and op.is_elementwise and node.kind not in PASS_THROUGH


def aliases_a_write(node: Node) -> bool:
    """True if ``node``, a ``PASS_THROUGH`` op, may share its tensor with a value that is
    written in place: its input or output, or a value that may alias them (through any op
    not known to return a fresh tensor), is the target of an in-place op, or is handed to a
    node with blocks that writes.  Such a node must run as itself (``x.float()`` on a float
    ``x`` is ``x``; a ``x.add_(1)`` afterwards changes both), never as a fused copy."""
    seen = set()
    todo = node.inputs[:1] + node.outputs
    while todo:
        v = todo.pop()
        if v in seen:
            continue
        seen.add(v)
        src = v.node
        if src is not None and src.kind != "prim::Constant" and not _fresh(src):
            todo.extend(src.inputs)
        for u in v.uses:
            if mutates(u.kind) and u.inputs[0] is v:
                return True
            if u.blocks and any(mutates(n.kind) for n in _nodes_within(u)):
                return True
            if not _fresh(u):
                todo.extend(u.outputs)
    return False


def _nodes_within(node: Node):
    for b in node.blocks:
        for n in b.nodes:
            yield n
            yield from _nodes_within(n)


def remove_mutation(graph: Graph) -> int:
    """Rewrite the unobservable in-place ops of ``graph`` (every block), in place; how many."""
    return sum(_block(graph, b) for b in list(graph.all_blocks()))


def _block(graph: Graph, block: Block) -> int:
    count = 0
    for node in list(block.nodes):
        kind = functional_of(node.kind)
        if kind is None or not node.inputs or len(node.outputs) != 1:
            continue
        x = node.inputs[0]
        if x.node is None:
            if not _private_carried(x, block):
                continue
        elif x.node.owning_block is not block or not (_fresh(x.node) or _private_piece(x)):
            continue
        position = {n: i for i, n in enumerate(block.nodes)}
        here = position[node]
        others = [(u, _top(u, block)) for u in x.uses if u is not node]
        if any(top is None for _, top in others):
            continue  # a use outside this block
        if not all(_fresh(u) for u, top in others if position[top] < here):
            continue  # an earlier use may alias x and see the write
        after = [u for u, top in others if position[top] > here]
        y = _rewrite(graph, block, node, kind, x)
        if y is None:
            continue
        for u in after:
            for i, v in enumerate(u.inputs):
                if v is x:
                    u.replace_input(i, y)
        # a block return reads the value at the block's end: after the mutation
        block.returns = [y if v is x else v for v in block.returns]
        count += 1
    return count


def _private_piece(x: Value) -> bool:
    """True if ``x`` is a piece of a chunk or split of a fresh tensor that nothing else reads
    (a traced LSTM cell's ``gates.chunk(4, 1)`` then ``sigmoid_`` on each piece): the pieces
    do not overlap, so a write into one is seen by nobody but its own later readers."""
    unpack = x.node
    if unpack.kind != "prim::ListUnpack" or len(unpack.inputs) != 1:
        return False
    pieces = unpack.inputs[0]
    src = pieces.node
    if src is None or src.kind not in PIECES or pieces.uses != [unpack] or not src.inputs:
        return False
    base = src.inputs[0]
    blk = src.owning_block
    return (base.node is not None and base.node.owning_block is blk and _fresh(base.node)
            and base.uses == [src] and base not in blk.returns and pieces not in blk.returns)


def _private_carried(x: Value, block: Block) -> bool:
    """True if ``x`` is a value a ``prim::Loop`` body carries (``acc`` in ``for ...: acc += t``)
    that nothing outside the loop can observe: its first value is fresh and read, before the
    loop, only by ops that do not alias it, and not at all after the loop.  Later iterations
    carry what the body returns, fresh again once the body's mutation is functional."""
    loop = block.owning_node
    if x.block is not block or loop is None or loop.kind != "prim::Loop" or x not in block.params:
        return False
    j = block.params.index(x)
    if j == 0 or j + 1 >= len(loop.inputs):
        return False  # the trip counter
    init = loop.inputs[j + 1]  # prim::Loop(%max_trip, %cond, %carried...)
    outer = loop.owning_block
    if init.node is None or init.node.owning_block is not outer or not _fresh(init.node):
        return False
    if sum(1 for u in init.uses if u is loop) != 1 or init in outer.returns:
        return False
    position = {n: i for i, n in enumerate(outer.nodes)}
    for u in init.uses:
        if u is loop:
            continue
        top = _top(u, outer)
        if top is None or position[top] > position[loop] or not _fresh(u):
            return False
    return True


def _top(user: Node, block: Block) -> Optional[Node]:
    """The node of ``block`` that is or contains ``user``, or None."""
    n = user
    while n is not None and n.owning_block is not block:
        n = n.owning_block.owning_node if n.owning_block is not None else None
    return n


def _rewrite(graph: Graph, block: Block, node: Node, kind: str, x: Value) -> Optional[Value]:
    """``node`` becomes ``kind``, followed by a cast to ``x``'s dtype if needed; the value ``x``
    holds after the mutation.  None (``node`` unchanged) when the result might not keep ``x``'s
    shape."""
    xt = x.type
    if not isinstance(xt, TensorType) or xt.shape is None or any(d is None for d in xt.shape):
        return None
    result = node.outputs[0]
    old_kind, old_type = node.kind, result.type
    node.kind = kind
    infer_node(node)  # the functional op's result type
    out = result.type
    if not isinstance(out, TensorType) or out.shape is None or tuple(out.shape) != tuple(xt.shape):
        node.kind, result.type = old_kind, old_type
        return None
    if out.dtype is not None and out.dtype == xt.dtype:
        return result
    # the in-place op wrote into x's dtype: the functional result is cast there
    users = list(result.uses)
    cast = graph.create("aten::type_as", [result, x], [xt], block=block,
                        index=block.nodes.index(node) + 1, source=node.source)
    final = cast.outputs[0]
    for u in users:
        for i, v in enumerate(u.inputs):
            if v is result:
                u.replace_input(i, final)
    for b in graph.all_blocks():
        b.returns = [final if v is result else v for v in b.returns]
    return final
