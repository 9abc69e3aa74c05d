"""Inlining: a ``prim::CallFunction`` of a graph function becomes the callee's nodes.

A call whose function input is a constant naming a ``Graph`` in the function table
(``ops/functions.py``; ``ops/nn_functions.py`` registers ``torch.nn.functional``'s) is replaced by
a copy of the callee's nodes, the callee's parameters bound to the call's arguments, and the
call's results by the callee's returns.  Calls the copies make are inlined in the next round.
Constant propagation and dead-code elimination then run (also on a graph PyTorch inlined itself,
recognized by the function constants it keeps), so the callee's branches on constant
arguments (``inplace``, ``training``, ``dim is None``, argument checks) fold away and the dead
function constants disappear -- what is left is plain ops the fuser can group::

    %3 : Function = prim::Constant[name="relu6"]()
    %2 : bool = prim::Constant[value=0]()
    %a.1 : Tensor = prim::CallFunction(%3, %x.1, %2)     ==>   %a.1 : Tensor = aten::relu6(%x.1)

Calls left as they are: an unknown name (the interpreter raises naming the node and the
function, if it is ever called), a Python callable, a callee whose parameter count differs from
the call's arguments, and calls still present after ``max_rounds`` rounds (recursion).  Fusion
subgraphs are not entered (they hold no calls).
"""
from __future__ import annotations

from typing import Dict, List

from ..ir.graph import Block, Graph, Node, Value, clone_graph
from ..ir.types import TupleType
from ..ops.functions import lookup_function
from .constant_propagation import propagate_constants
from .dce import eliminate_dead_code
from .utils import block_index, replace_all_uses

CALL = "prim::CallFunction"


def callee_of(node: Node):
    """The Graph a ``prim::CallFunction`` node calls through a named function constant, or
    None (not a call, not a constant, unknown name, or a Python callable)."""
    if node.kind != CALL or not node.inputs:
        return None
    src = node.inputs[0].node
    if src is None or src.kind != "prim::Constant" or "value" in src.attrs:
        return None
    name = src.attrs.get("name")
    fn = lookup_function(name) if isinstance(name, str) else None
    return fn if isinstance(fn, Graph) else None


def inline_functions(graph: Graph, max_rounds: int = 16) -> Graph:
    """Inline every call of a graph function in ``graph`` (in place; returns it), then fold
    constants and remove dead code.  The clean-up runs only where there is inlined code: after
    a call was inlined here, or when the graph holds a function constant -- PyTorch's own
    inliner (``ScriptFunction.inlined_graph``) leaves them behind, with the callees' branches
    on ``inplace`` still in place."""
    cleanup = any(_is_function_constant(n) for n in graph.all_nodes())
    for _ in range(max_rounds):
        calls = [n for n in graph.all_nodes() if callee_of(n) is not None]
        done = [call for call in calls if _inline_call(graph, call)]
        if not done:
            break
        cleanup = False
        propagate_constants(graph)  # before the next round: dead calls need no inlining
        eliminate_dead_code(graph)
    if cleanup:
        propagate_constants(graph)
        eliminate_dead_code(graph)
    return graph


def _is_function_constant(node: Node) -> bool:
    return node.kind == "prim::Constant" and "name" in node.attrs and "value" not in node.attrs


def _inline_call(graph: Graph, call: Node) -> bool:
    return inline_call(graph, call, callee_of(call), call.inputs[1:])


def inline_call(graph: Graph, call: Node, callee: Graph, args: List[Value]) -> bool:
    """Replace ``call`` (a node of ``graph``) by a copy of ``callee``'s nodes with its inputs
    bound to ``args``; False (nothing changed) when the counts of inputs or outputs differ.
    ``prim::CallFunction`` inlining here and ``prim::CallMethod`` inlining (``torchlike.jit``)
    share it."""
    if len(args) != len(callee.inputs):
        return False
    n_out = len(callee.outputs)
    if len(call.outputs) != n_out and not (len(call.outputs) == 1 and n_out > 1):
        return False
    block = call.owning_block
    env: Dict[Value, Value] = dict(zip(callee.inputs, args))
    at = copy_nodes(graph, callee.block, block, block_index(block, call), env)
    results: List[Value] = [env[v] for v in callee.outputs]
    if len(call.outputs) != n_out:  # one tuple-typed result: the callee's returns, packed
        out_type = call.outputs[0].type
        if not isinstance(out_type, TupleType):
            out_type = TupleType(tuple(v.type for v in results))
        pack = graph.create("prim::TupleConstruct", results, [out_type], block=block, index=at,
                            source=call.source)
        results = pack.outputs
    for old, new in zip(call.outputs, results):
        replace_all_uses(old, new, graph)
    block.remove(call)
    return True


def copy_nodes(graph: Graph, src: Block, dst: Block, at: int, env: Dict[Value, Value]) -> int:
    """Copy ``src``'s nodes into ``dst`` from index ``at`` (names made unique in ``graph``);
    ``env`` maps the callee's values to the caller's.  Returns the index after the copies."""
    for n in src.nodes:
        attrs = {k: (clone_graph(a) if isinstance(a, Graph) else a) for k, a in n.attrs.items()}
        m = Node(n.kind, [env[v] for v in n.inputs], attrs, n.source)
        for o in n.outputs:
            env[o] = Value(graph.fresh_name(_hint(o.name)), o.type, node=m)
            m.outputs.append(env[o])
        dst.insert(at, m)
        at += 1
        for b in n.blocks:
            nb = Block(graph, m)
            m.blocks.append(nb)
            for p in b.params:
                env[p] = Value(graph.fresh_name(_hint(p.name)), p.type, block=nb)
                nb.params.append(env[p])
            copy_nodes(graph, b, nb, 0, env)
            nb.returns = [env[v] for v in b.returns]
    return at


def _hint(name: str):
    """A callee's value name as a naming hint in the caller (numbers get fresh numbers)."""
    return None if name.isdigit() else name
