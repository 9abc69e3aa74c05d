"""Dead code elimination: drop pure nodes whose results nobody needs.

Mark and sweep, as TorchScript's pass does.  Roots are the graph outputs and every node with side
effects (``prim::Print``, ``prim::RaiseException``, any kind the registry does not know); a live
node makes its inputs live.  Control flow is followed precisely:

* a ``prim::If`` needs its condition and, per live output, that position of each branch's return;
  unused outputs are dropped from the node and from both branches;
* a ``prim::Loop`` needs its trip count, its condition, and a carried slot only when the slot's
  output is used after the loop or its value is read inside the body by something live; dead
  slots are dropped (input, body parameter, body return and output together);
* an ``If``/``Loop`` whose body is pure and whose outputs are all dead disappears entirely.

Before / after::

    %1 : Tensor = aten::neg(%x)          # unused, pure: removed
    %2 : Tensor = aten::mul(%x, %x)
     = prim::Print(%x)                   # side effect: kept
    return (%2)
"""
from __future__ import annotations

from typing import Dict, Set

from ..ir.graph import Block, Graph, Node
from .utils import is_pure, subgraphs


def eliminate_dead_code(graph: Graph) -> Graph:
    """Remove dead nodes and dead control-flow outputs from ``graph`` in place; returns it.
    Fusion subgraphs are cleaned too (their outputs are all kept: the group node fixes them)."""
    purity: Dict[int, bool] = {}
    live_values: Set[int] = {id(v) for v in graph.outputs}
    live_nodes: Set[int] = set()
    # Loop-carried values make liveness cyclic: iterate the backward walk to a fixed point.
    while True:
        before = (len(live_values), len(live_nodes))
        _mark_block(graph.block, live_values, live_nodes, purity)
        if (len(live_values), len(live_nodes)) == before:
            break
    _sweep_block(graph.block, live_values, live_nodes)
    for sub in subgraphs(graph):
        eliminate_dead_code(sub)
    return graph


def _mark_block(block: Block, live: Set[int], live_nodes: Set[int], purity) -> None:
    for node in reversed(block.nodes):
        kind = node.kind
        needed = (id(node) in live_nodes or not is_pure(node, purity)
                  or any(id(o) in live for o in node.outputs))
        if not needed:
            continue
        live_nodes.add(id(node))
        if kind == "prim::If":
            live.add(id(node.inputs[0]))
            for j, o in enumerate(node.outputs):
                if id(o) in live:
                    for b in node.blocks:
                        live.add(id(b.returns[j]))
            for b in node.blocks:
                _mark_block(b, live, live_nodes, purity)
        elif kind == "prim::Loop":
            body = node.blocks[0]
            live.update((id(node.inputs[0]), id(node.inputs[1]), id(body.returns[0])))
            for j, o in enumerate(node.outputs):
                if id(o) in live or id(body.params[j + 1]) in live:
                    live.update((id(o), id(node.inputs[2 + j]), id(body.returns[1 + j]),
                                 id(body.params[j + 1])))
            _mark_block(body, live, live_nodes, purity)
        else:
            live.update(id(v) for v in node.inputs)
            for b in node.blocks:  # an unknown block-holding kind: keep everything inside
                for n in b.nodes:
                    live_nodes.add(id(n))
                live.update(id(v) for v in b.returns)
                _mark_block(b, live, live_nodes, purity)


def _destroy(node: Node) -> None:
    """Remove a dead node, first unlinking the uses its nested nodes make of outer values."""
    for b in node.blocks:
        for inner in reversed(list(b.nodes)):
            _destroy(inner)
    node.owning_block.remove(node)


def _sweep_block(block: Block, live: Set[int], live_nodes: Set[int]) -> None:
    for node in reversed(list(block.nodes)):
        if id(node) not in live_nodes:
            if all(not o.uses for o in node.outputs):
                _destroy(node)
            continue
        for b in node.blocks:
            _sweep_block(b, live, live_nodes)
        if node.kind == "prim::If":
            _drop_if_outputs(node, live)
        elif node.kind == "prim::Loop":
            _drop_loop_slots(node, live)


def _drop_if_outputs(node: Node, live: Set[int]) -> None:
    for j in reversed(range(len(node.outputs))):
        o = node.outputs[j]
        if id(o) not in live and not o.uses:
            del node.outputs[j]
            for b in node.blocks:
                del b.returns[j]


def _drop_loop_slots(node: Node, live: Set[int]) -> None:
    body = node.blocks[0]
    for j in reversed(range(len(node.outputs))):
        o, p = node.outputs[j], body.params[j + 1]
        if id(o) in live or id(p) in live or o.uses or p.uses:
            continue
        if any(r is p for k, r in enumerate(body.returns) if k != j + 1):
            continue
        del node.outputs[j]
        del body.params[j + 1]
        del body.returns[j + 1]
        init = node.inputs.pop(2 + j)
        init.uses.remove(node)
