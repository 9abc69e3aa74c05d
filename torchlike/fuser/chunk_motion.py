"""Chunk motion: ``chunk(f(a, b), n, dim)`` becomes ``f`` applied to chunks of ``a`` and ``b``.

A fusion group reads a chunk as a view of one of its inputs (an offset along ``dim``), so a
chunk of a value computed by elementwise ops would end the group: in an LSTM or GRU cell,
``gates = x_w + h_w + bias; i, f, g, o = gates.chunk(4, 1)``, the additions would run as their
own kernel writing the full ``gates`` temporary.  PyTorch's legacy graph fuser solved this by
moving the chunk above its producer (``tryToMoveChunk``): each elementwise op between a group
input and the chunk is applied per chunk, and a ``prim::BroadcastingChunk`` chunks the inputs::

    %g : Tensor = aten::add(%xw, %b, %one)
    %c : Tensor[] = aten::chunk(%g, %three, %one)
    %r : Tensor, %z : Tensor, %n : Tensor = prim::ListUnpack(%c)

becomes::

    %xw.0, %xw.1, %xw.2, %b.0, %b.1, %b.2 = prim::BroadcastingChunk[chunks=3, dim=1](%xw, %b)
    %r : Tensor = aten::add(%xw.0, %b.0, %one)
    %z : Tensor = aten::add(%xw.1, %b.1, %one)
    %n : Tensor = aten::add(%xw.2, %b.2, %one)

``prim::BroadcastingChunk`` chunks the *broadcast* of its inputs along ``dim`` (counted in the
broadcast rank): an input that is broadcast along ``dim`` (size 1 there, or too few dims)
is the same in every chunk and is passed through whole; the others are sliced.  Applying an
elementwise op per chunk gives exactly the chunks of its result (same values, dtypes and
shapes), so the motion never changes an answer; it only happens where the producer is fusible,
has one output used by the chunk alone, and is not returned.  It repeats through chains of
producers (``(a + b) * c`` before the chunk: every op moves); a value several producers read
(the MI-LSTM's ``alpha * wx * uz + beta_i * wx + ...``) is chunked once, one kernel argument.
"""
from __future__ import annotations

from typing import Callable, List, Optional, Set

from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import BOOL, FLOAT, INT, NUMBER, TENSOR, TensorType
from .mutation_order import writes

BROADCASTING_CHUNK = "prim::BroadcastingChunk"
_SCALARS = (INT, FLOAT, BOOL, NUMBER)


def move_chunks(graph: Graph, fusible: Callable[[Node], bool]) -> int:
    """Move every eligible chunk above its elementwise producers, in all blocks of ``graph``
    (in place).  ``fusible(node)``: whether the partitioner may fuse the producer.  Returns the
    number of producers moved."""
    returned: Set[Value] = {v for b in graph.all_blocks() for v in b.returns}
    moved = 0
    for block in list(graph.all_blocks()):
        moved += _move_in_block(graph, block, fusible, returned)
    return moved


def _move_in_block(graph: Graph, block: Block, fusible, returned: Set[Value]) -> int:
    moved = 0
    for node in list(block.nodes):
        if node.owning_block is not block:
            continue  # replaced by an earlier step
        bc = _as_broadcasting_chunk(graph, block, node, fusible, returned)
        while bc is not None:
            moved += 1
            bc = _move_through_producer(graph, block, bc, fusible, returned)
    return moved


def _movable_producer(v: Value, block: Block, fusible, returned: Set[Value],
                      consumer: Node) -> Optional[Node]:
    """``v``'s producer, if the chunk (``consumer``) may move above it: a fusible
    single-output elementwise node of this block whose output has that one use and is not
    returned, with no in-place write between the two (the producer is recomputed at the
    chunk's place, and must read its operands as they were)."""
    p = v.node
    if p is None or p.owning_block is not block or len(p.outputs) != 1:
        return None
    if len(v.uses) != 1 or v in returned or not fusible(p):
        return None
    nodes = block.nodes
    if any(writes(n) for n in nodes[nodes.index(p) + 1:nodes.index(consumer)]):
        return None
    if not any(_is_tensor(i) for i in p.inputs):
        return None
    if not all(isinstance(i.type, TensorType) or i.type in _SCALARS or i.is_constant()
               for i in p.inputs):
        return None  # an input of unknown type might be a tensor that needs chunking
    return p


def _is_tensor(v: Value) -> bool:
    return isinstance(v.type, TensorType) and not (
        v.is_constant() and getattr(v.constant_value(), "ndim", 1) == 0)


def _as_broadcasting_chunk(graph: Graph, block: Block, chunk: Node, fusible,
                           returned: Set[Value]) -> Optional[Node]:
    """``aten::chunk`` + its ``prim::ListUnpack`` of a movable producer -> the producer applied
    per chunk of a ``prim::BroadcastingChunk``; None where nothing moves."""
    if chunk.kind != "aten::chunk" or len(chunk.inputs) != 3:
        return None
    x, n_value, dim_value = chunk.inputs
    n, dim = n_value.constant_value(), dim_value.constant_value()
    if not (isinstance(n, int) and isinstance(dim, int) and not isinstance(n, bool) and n > 0):
        return None
    out = chunk.output()
    if len(out.uses) != 1 or out in returned:
        return None
    unpack = out.uses[0]
    if (unpack.kind != "prim::ListUnpack" or unpack.owning_block is not block
            or len(unpack.outputs) != n):
        return None
    producer = _movable_producer(x, block, fusible, returned, chunk)
    if producer is None:
        return None
    # chunk(x) with x's own chunks as the outputs: then the generic step moves the producer
    bc = _broadcasting_chunk(graph, block, [x], n, dim, chunk.source,
                             [list(unpack.outputs)], block.nodes.index(unpack))
    for dead in (unpack, chunk):
        block.remove(dead)
    return bc


def _broadcasting_chunk(graph: Graph, block: Block, inputs: List[Value], n: int, dim: int,
                        source: Optional[str], outputs: List[Optional[List[Value]]],
                        index: int) -> Node:
    """A ``prim::BroadcastingChunk`` of ``inputs`` inserted at ``index``; ``outputs[j]``, when
    given, are existing values to re-home as input j's chunks (their uses stay valid)."""
    bc = Node(BROADCASTING_CHUNK, inputs, {"chunks": n, "dim": dim}, source)
    for j, v in enumerate(inputs):
        if outputs[j] is not None:
            for o in outputs[j]:
                o.node = bc
                bc.outputs.append(o)
        else:
            for k in range(n):
                bc.outputs.append(Value(graph.fresh_name(f"{v.name}.chunk{k}"), TENSOR, node=bc))
    block.insert(index, bc)
    return bc


def _move_through_producer(graph: Graph, block: Block, bc: Node, fusible,
                           returned: Set[Value]) -> Optional[Node]:
    """Move ``bc`` above the producer of one of its inputs: the producer is applied per chunk
    to a new ``prim::BroadcastingChunk`` of its tensor operands.  Returns the new chunk node,
    or None when no input has a movable producer."""
    n, dim = bc.attrs["chunks"], bc.attrs["dim"]
    found = next(((j, p) for j, p in ((j, _movable_producer(v, block, fusible, returned, bc))
                                      for j, v in enumerate(bc.inputs)) if p is not None), None)
    if found is None:
        return None
    j, p = found
    chunks_of_v = bc.outputs[j * n:(j + 1) * n]
    tensor_pos = [i for i, a in enumerate(p.inputs) if _is_tensor(a)]
    operands = [p.inputs[i] for i in tensor_pos]
    # the new chunk: bc's other inputs (their chunk values kept), then p's tensor operands not
    # already chunked.  Each value is chunked once: ``a * w + b * w`` reads w's chunks once (a
    # duplicate input would be a second argument, a second load of the same memory, in a kernel)
    inputs: List[Value] = []
    outputs: List[Optional[List[Value]]] = []
    slot = {}
    for i, w in enumerate(bc.inputs):
        if i == j:
            continue
        outs = bc.outputs[i * n:(i + 1) * n]
        if w in slot:  # a duplicate from an earlier chunk: its uses read the first chunks
            for o, first in zip(outs, outputs[slot[w]], strict=True):
                o.replace_all_uses_with(first)
            continue
        slot[w] = len(inputs)
        inputs.append(w)
        outputs.append(outs)
    for a in operands:
        if a not in slot:
            slot[a] = len(inputs)
            inputs.append(a)
            outputs.append(None)
    index = block.nodes.index(bc)
    block.remove(bc)
    new = _broadcasting_chunk(graph, block, inputs, n, dim, bc.source, outputs, index)
    for k in range(n):
        args = list(p.inputs)
        for i in tensor_pos:
            args[i] = new.outputs[slot[p.inputs[i]] * n + k]
        clone = Node(p.kind, args, dict(p.attrs), p.source)
        out = chunks_of_v[k]  # the chunk value keeps its uses; p computes it per chunk now
        out.node = clone
        clone.outputs.append(out)
        block.insert(index + 1 + k, clone)
    block.remove(p)
    return new
