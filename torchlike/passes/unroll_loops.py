"""Full unrolling of short ``prim::Loop``s with a constant trip count.

A loop body is a block of its own, and fusion groups never cross a block edge, so ``for _ in
range(5): x = x * x`` runs five one-op kernels, each reading and writing all of ``x``.  Unrolled,
the five multiplies are one group and one pass over memory.  PyTorch's profiling executor
unrolls loops before its fusers for the same reason (``UnrollLoops``: a constant trip count and
a small body are unrolled completely).  Example::

    %x : Tensor = prim::Loop(%five, %true, %x.1)
      block0(%i : int, %x.13 : Tensor):
        %x.7 : Tensor = aten::mul(%x.13, %x.13)
        -> (%true, %x.7)

becomes five ``aten::mul`` nodes in the enclosing block, each reading the previous one.

Only loops that run exactly their trip count are unrolled: the trip count and the initial
condition are constants (``True``), and the body returns the constant ``True`` as its
condition.  Each copy of the body sees its iteration number as a constant.  Bodies of more than
``MAX_BODY`` nodes (nested blocks counted) or copies totalling more than ``MAX_TOTAL`` nodes stay
loops.
"""
from __future__ import annotations

from typing import Dict, List

from ..ir.graph import Block, Graph, Node, Value
from .utils import clone_node

MAX_BODY = 32
MAX_TOTAL = 512


def unroll_loops(graph: Graph, max_body: int = MAX_BODY, max_total: int = MAX_TOTAL) -> int:
    """Unroll every eligible loop of ``graph`` in place, inner loops first; returns how many."""
    return _unroll_block(graph, graph.block, max_body, max_total)


def _unroll_block(graph: Graph, block: Block, max_body: int, max_total: int) -> int:
    count = 0
    for node in list(block.nodes):
        for inner in node.blocks:
            count += _unroll_block(graph, inner, max_body, max_total)
        if node.kind == "prim::Loop" and _trip_count(node, max_body, max_total) is not None:
            _unroll(graph, block, node)
            count += 1
    return count


def _size(block: Block) -> int:
    return sum(1 + sum(_size(b) for b in n.blocks) for n in block.nodes)


def _is_true(v: Value) -> bool:
    return v.is_constant() and v.constant_value() is True


def _trip_count(loop: Node, max_body: int, max_total: int):
    """The loop's constant trip count if it may be unrolled, else None."""
    n = loop.inputs[0].constant_value()
    if not isinstance(n, int) or isinstance(n, bool) or not _is_true(loop.inputs[1]):
        return None
    body = loop.blocks[0]
    if not body.returns or not _is_true(body.returns[0]):
        return None
    size = _size(body)
    if size > max_body or max(n, 0) * size > max_total:
        return None
    return n


def _blocks(node: Node):
    for b in node.blocks:
        yield b
        for n in b.nodes:
            yield from _blocks(n)


def _detach(block: Block) -> None:
    """Drop the uses ``block``'s nodes hold on values (the block is being discarded)."""
    for n in block.nodes:
        for b in n.blocks:
            _detach(b)
        for v in n.inputs:
            v.uses.remove(n)


def _unroll(graph: Graph, block: Block, loop: Node) -> None:
    n = loop.inputs[0].constant_value()
    body = loop.blocks[0]
    index = block.nodes.index(loop)
    carried: List[Value] = list(loop.inputs[2:])
    new_nodes: List[Node] = []
    for k in range(max(n, 0)):
        counter = Node("prim::Constant", [], {"value": k}, loop.source)
        counter.outputs.append(Value(graph.fresh_name(body.params[0].name), body.params[0].type,
                                     node=counter))
        new_nodes.append(counter)
        env: Dict[Value, Value] = {body.params[0]: counter.outputs[0]}
        env.update(zip(body.params[1:], carried))
        for node in body.nodes:
            new_nodes.append(clone_node(graph, node, env))
        carried = [env.get(v, v) for v in body.returns[1:]]
    _detach(body)
    for out, final in zip(loop.outputs, carried):
        out.replace_all_uses_with(final)
    block.remove(loop)
    returned = {v for b in graph.all_blocks() for v in b.returns}
    returned.update(v for node in new_nodes for b in _blocks(node) for v in b.returns)
    new_nodes = [node for node in new_nodes if node.kind != "prim::Constant"
                 or node.outputs[0].uses or node.outputs[0] in returned]  # unused counters
    for i, node in enumerate(new_nodes):
        block.insert(index + i, node)
