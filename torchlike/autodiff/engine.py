"""Reverse mode on graphs: a typed forward graph in, a backward graph out.

``differentiate(graph, wrt)`` walks ``graph`` backwards from its outputs and, for each node,
calls the derivative rule in the node's registry entry (``OpDef.vjp``, ops/derivatives.py) with
a ``RuleContext``: the rule emits ordinary registry ops into the backward graph, so that graph
goes through the same passes and fuser as any other.  The forward graph gains the values the
backward needs as extra outputs ("saved"); the backward graph takes the output cotangents, then
the saved values, and returns one cotangent per ``wrt`` input.

Save or recompute (the rule, applied whenever a rule asks for a forward value):

* graph inputs and constants are free: inputs are saved (they exist anyway), constants copied;
* a value made by a cheap op -- pure, deterministic, elementwise or a view/list plumbing op
  (``chunk``, ``reshape``, ``ListUnpack``, ...) -- is *recomputed* in the backward from its own
  operands, recursively;
* anything else (matmuls, reductions, softmax, loops, random ops) is *saved*.

So a pointwise cell saves only its inputs and the results of its matmuls and reductions: its
forward is one kernel writing just its outputs, and its backward one kernel that recomputes the
pointwise values it needs next to the cotangent math (memory traffic over FLOPs, as
AOTAutograd's min-cut partitioner also prefers on pointwise chains).

Control flow: ``prim::If`` becomes an ``If`` in the backward on the saved condition; each branch
recomputes what it needs of its forward branch from values outside the ``If`` and returns the
cotangents of those outside values.  ``prim::Loop`` records each iteration's
loop-carried values in lists (``autodiff::append``, extra carried values of the forward loop);
the backward is a loop over ``len(list)`` iterations in reverse that reads iteration k's values,
recomputes the body from them, and carries the cotangents of the carried values and of the
outside values the body reads.  A loop inside a branch or another loop's body is recomputed
in the backward like everything there, and that recomputed copy records its iterations.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Set

from ..errors import TorchlikeError
from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import (
    DTYPE_TO_SCALAR_TYPE_ENUM,
    INT,
    TENSOR,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    Type,
)
from ..ops import registry
from ..passes.shape_inference import infer_node

_PLUMBING = {"prim::ListUnpack", "prim::ListConstruct", "prim::TupleConstruct",
             "prim::TupleUnpack", "prim::TupleIndex"}


class AutodiffError(TorchlikeError):
    """A program, op or request that cannot be differentiated (the message says which)."""


def differentiable(t: Type) -> bool:
    """Whether values of type ``t`` carry gradients: floating tensors (and lists/tuples of
    them); integer and bool tensors and Python scalars do not."""
    if isinstance(t, TensorType):
        return t.dtype is None or "float" in t.dtype
    if isinstance(t, (ListType, OptionalType)):
        return differentiable(t.elem)
    if isinstance(t, TupleType):
        return any(differentiable(e) for e in t.elems)
    return False


def static_shape(v: Value):
    t = v.type
    if isinstance(t, TensorType) and t.shape is not None and None not in t.shape:
        return tuple(t.shape)
    return None


def _broadcasts(small, shape) -> bool:
    """Whether a tensor of shape ``small`` broadcasts to ``shape`` (no longer, dims 1 or equal)."""
    if small is None or len(small) > len(shape):
        return False
    return all(a in (1, b) for a, b in zip(small, shape[len(shape) - len(small):]))


def activity(graph: Graph, wrt: Sequence[Value]) -> Set[Value]:
    """The values that depend differentiably on ``wrt``."""
    active: Set[Value] = {v for v in wrt if differentiable(v.type)}

    def mark(v: Value) -> bool:
        if v in active or not differentiable(v.type):
            return False
        active.add(v)
        return True

    def block(b: Block) -> None:
        for n in b.nodes:
            if n.kind == "prim::Loop":
                body = n.blocks[0]
                pairs = list(zip(body.params[1:], n.inputs[2:], body.returns[1:]))
                for _ in range(len(pairs) + 2):
                    changed = [mark(p) for p, init, ret in pairs if init in active or ret in active]
                    block(body)
                    if not any(changed):
                        break
                for o, (p, _, ret) in zip(n.outputs, pairs):
                    if p in active or ret in active:
                        mark(o)
            elif n.kind == "prim::If":
                for sub in n.blocks:
                    block(sub)
                for i, o in enumerate(n.outputs):
                    if any(sub.returns[i] in active for sub in n.blocks):
                        mark(o)
            elif any(v in active for v in n.inputs):
                for o in n.outputs:
                    mark(o)

    block(graph.block)
    return active


def free_values(node: Node) -> List[Value]:
    """Values used inside ``node``'s blocks but defined outside them, in first-use order."""
    inside: Set[Value] = set()
    out: List[Value] = []

    def walk(b: Block) -> None:
        inside.update(b.params)
        for n in b.nodes:
            for v in n.inputs:
                if v not in inside and v not in out:
                    out.append(v)
            for sub in n.blocks:
                walk(sub)
            inside.update(n.outputs)
        for v in b.returns:
            if v not in inside and v not in out:
                out.append(v)

    for b in node.blocks:
        walk(b)
    return out


class Scope:
    """A forward block being differentiated and the backward block its cotangent code goes
    to.  ``env``: forward value -> its backward twin (saved or recomputed), inserted at
    ``cursor`` (ahead of the cotangent code); ``grads``: forward value -> cotangent."""

    def __init__(self, fwd_block: Block, bwd_block: Block, parent: Optional["Scope"]):
        self.fwd_block, self.bwd_block, self.parent = fwd_block, bwd_block, parent
        self.env: Dict[Value, Value] = {}
        self.grads: Dict[Value, Any] = {}
        self.cursor = 0


class RuleContext:
    """What a derivative rule sees (the builder documented in ops/derivatives.py)."""

    def __init__(self, d: "Differentiator", scope: Scope, node: Node):
        self._d, self._scope, self.node = d, scope, node

    def input(self, i: int) -> Value:
        return self._d.primal(self.node.inputs[i], self._scope)

    def needs_grad(self, i: int) -> bool:
        """Whether node input ``i`` depends differentiably on the inputs asked for (a rule
        that PyTorch refuses for one operand refuses only when that operand needs it)."""
        return self.node.inputs[i] in self._d.active

    def output(self, i: int = 0) -> Value:
        return self._d.primal(self.node.outputs[i], self._scope)

    def static(self, i: int) -> Any:
        if i >= len(self.node.inputs):  # PyTorch's graphs leave out trailing defaults
            op = registry.lookup(self.node.kind)
            params = op.params if op is not None else ()
            default = params[i].default if i < len(params) else None
            return None if default is registry.REQUIRED else default
        v = self.node.inputs[i]
        if not v.is_constant():
            raise AutodiffError(f"cannot differentiate {self.node.describe()}: its argument "
                                f"%{v.name} must be a constant")
        return v.constant_value()

    def emit(self, kind: str, *args: Any) -> Value:
        return self._d.emit(self._scope, kind, args)

    def const(self, value: Any) -> Value:
        return self._d.const(self._scope, value)

    def sum_to(self, g: Value, like: Value) -> Value:
        return self._d.fit(self._scope, g, like)

    def zeros_like(self, like: Value) -> Value:
        return self.emit("aten::zeros_like", self._d.primal(like, self._scope))


class Differentiator:
    def __init__(self, graph: Graph, active: Set[Value]):
        self.fwd = graph
        self.bwd = Graph()
        self.active = active
        self.saved: List[Value] = []
        self.root = Scope(graph.block, self.bwd.block, None)

    # -- forward values in the backward ------------------------------------------------------
    def owner(self, v: Value, scope: Scope) -> Scope:
        blk = v.node.owning_block if v.node is not None else v.block
        s: Optional[Scope] = scope
        while s is not None and s.fwd_block is not blk:
            s = s.parent
        if s is None:
            raise AutodiffError(f"%{v.name} is not visible from the block being differentiated")
        return s

    @staticmethod
    def recomputable(node: Node) -> bool:
        if node.blocks:
            return False
        if node.kind in _PLUMBING:
            return True
        op = registry.lookup(node.kind)
        return (op is not None and op.pure and op.foldable
                and (op.is_elementwise or op.category == "shape"))

    def primal(self, v: Value, scope: Scope) -> Value:
        s = self.owner(v, scope)
        got = s.env.get(v)
        if got is not None:
            return got
        if v.is_constant():
            node = self.bwd.create("prim::Constant", [], [v.type], dict(v.node.attrs),
                                   block=s.bwd_block, index=0, names=[v.name])
            s.cursor += 1
            s.env[v] = node.output()
        elif s is self.root and not (v.node is not None and self.recomputable(v.node)):
            s.env[v] = self.bwd.add_input(v.name, v.type)
            self.saved.append(v)
        elif v.node is None:
            raise AutodiffError(f"%{v.name}: a block parameter without a backward value")
        else:
            self._clone_into(v.node, s)
        return s.env[v]

    def _clone_into(self, node: Node, s: Scope) -> None:
        inputs = [self.primal(v, s) for v in node.inputs]
        outer = {f: self.primal(f, s) for f in free_values(node)}
        new = Node(node.kind, inputs, dict(node.attrs), node.source)
        for o in node.outputs:
            nv = Value(self.bwd.fresh_name(o.name), o.type, node=new)
            new.outputs.append(nv)
            s.env[o] = nv
        s.bwd_block.insert(s.cursor, new)
        s.cursor += 1
        for b in node.blocks:
            self._copy_block(b, new.add_block(), dict(outer))

    def _copy_block(self, src: Block, dst: Block, env: Dict[Value, Value]) -> None:
        for p in src.params:
            env[p] = dst.add_param(p.name, p.type)
        for n in src.nodes:
            m = Node(n.kind, [env[v] for v in n.inputs], dict(n.attrs), n.source)
            for o in n.outputs:
                env[o] = Value(self.bwd.fresh_name(o.name), o.type, node=m)
                m.outputs.append(env[o])
            dst.append(m)
            for b in n.blocks:
                self._copy_block(b, m.add_block(), env)
        dst.returns = [env[v] for v in src.returns]

    # -- emitting cotangent code -------------------------------------------------------------
    def const(self, scope: Scope, value: Any) -> Value:
        v = self.bwd.insert_constant(value, block=scope.bwd_block, index=0)
        scope.cursor += 1
        return v

    def emit(self, scope: Scope, kind: str, args: Sequence[Any]) -> Value:
        vals = [a if isinstance(a, Value) else self.const(scope, a) for a in args]
        op = registry.get(kind)
        for p in op.params[len(vals):]:
            if p.default is registry.REQUIRED:
                raise AutodiffError(f"internal: {kind} emitted without its argument {p.name}")
            vals.append(self.const(scope, p.default))
        node = self.bwd.create(kind, vals, [TENSOR], block=scope.bwd_block)
        infer_node(node)
        return node.output()

    def fit(self, scope: Scope, g: Value, like: Value, exact: bool = False) -> Value:
        """``g`` summed to ``like``'s shape and cast to its dtype.  A cotangent that only
        broadcasts to that shape (a reduction's, shaped like its kept dims) stays that small
        unless ``exact``: elementwise consumers broadcast it inside their kernel."""
        lt, gt = like.type, g.type
        if not isinstance(lt, TensorType) or not isinstance(gt, TensorType):
            return g
        ls, gs = static_shape(like), static_shape(g)
        if ls is None or gs is None:
            size = self.emit(scope, "aten::size", [self.primal(like, scope)])
            g = self.emit(scope, "aten::sum_to_size", [g, size])
            if exact:
                g = self.emit(scope, "aten::expand", [g, size])
        elif gs != ls:
            # plain sums: over the leading dims, then (kept) over the dims ``like`` has as 1 --
            # trailing ones are row reductions the fuser joins with the work around them
            lead = len(gs) - len(ls)
            if lead > 0:
                g = self.emit(scope, "aten::sum", [g, list(range(lead))])
                gs = gs[lead:]
            off = len(ls) - len(gs)
            ones = [i - len(gs) for i in range(len(gs)) if gs[i] != 1 and ls[i + off] == 1]
            if ones:
                g = self.emit(scope, "aten::sum", [g, ones, True])
            if static_shape(g) != ls and (exact or not _broadcasts(static_shape(g), ls)):
                g = self.emit(scope, "aten::expand", [g, list(ls)])
        ld, gd = lt.dtype, g.type.dtype if isinstance(g.type, TensorType) else None
        if ld is not None and gd is not None and ld != gd and ld in DTYPE_TO_SCALAR_TYPE_ENUM:
            g = self.emit(scope, "aten::to", [g, DTYPE_TO_SCALAR_TYPE_ENUM[ld]])
        return g

    def exact(self, scope: Scope, g: Any, like: Value) -> Any:
        """``g`` (or a list of them) at exactly ``like``'s shape."""
        if g is None or isinstance(g, list):
            return g
        return self.fit(scope, g, like, exact=True)

    def accumulate(self, scope: Scope, v: Value, g: Any) -> None:
        if g is None or v not in self.active:
            return
        old = scope.grads.get(v)
        if isinstance(g, list) or isinstance(old, list):
            old, g = old or [], g or []
            n = max(len(old), len(g))
            old, g = old + [None] * (n - len(old)), g + [None] * (n - len(g))
            scope.grads[v] = [b if a is None else a if b is None
                              else self.emit(scope, "aten::add", [a, b]) for a, b in zip(old, g)]
            return
        g = self.fit(scope, g, v)
        scope.grads[v] = g if old is None else self.emit(scope, "aten::add", [old, g])

    # -- the walk ----------------------------------------------------------------------------
    def backprop_block(self, scope: Scope) -> None:
        for node in list(reversed(scope.fwd_block.nodes)):
            if not any(v in self.active for v in node.inputs) and node.kind not in (
                    "prim::If", "prim::Loop"):
                continue
            gouts = [scope.grads.get(o) for o in node.outputs]
            if all(g is None for g in gouts):
                continue
            if node.kind == "prim::If":
                self.backprop_if(node, scope, gouts)
            elif node.kind == "prim::Loop":
                self.backprop_loop(node, scope, gouts)
            else:
                op = registry.lookup(node.kind)
                if op is None or op.vjp is None:
                    raise AutodiffError(f"no derivative rule for {node.describe()}: the op's "
                                        f"registry entry has no vjp")
                if not op.is_elementwise:  # only pointwise rules take broadcastable ones
                    gouts = [self.exact(scope, g, o) for g, o in zip(gouts, node.outputs)]
                cots = op.vjp(RuleContext(self, scope, node), gouts)
                for v, g in zip(node.inputs, cots):
                    self.accumulate(scope, v, g)

    def _zeros(self, scope: Scope, like: Value) -> Value:
        return self.emit(scope, "aten::zeros_like", [self.primal(like, scope)])

    def _outside(self, scope: Scope) -> List[Value]:
        """The values outside ``scope``'s block that got cotangents inside it."""
        out = []
        for v, g in scope.grads.items():
            home = v.node.owning_block if v.node is not None else v.block
            if home is not scope.fwd_block and g is not None:
                if isinstance(g, list):
                    raise AutodiffError(f"cotangent of the list %{v.name} crosses a block "
                                        f"boundary: not supported")
                out.append(v)
        return out

    def backprop_if(self, node: Node, scope: Scope, gouts: List[Any]) -> None:
        cond = self.primal(node.inputs[0], scope)
        bnode = Node("prim::If", [cond])
        scope.bwd_block.append(bnode)
        children = []
        for fb in node.blocks:
            child = Scope(fb, bnode.add_block(), scope)
            for r, g in zip(fb.returns, gouts):
                self.accumulate(child, r, g)
            self.backprop_block(child)
            children.append(child)
        outside: List[Value] = []
        for child in children:
            outside += [v for v in self._outside(child) if v not in outside]
        for child in children:
            child.bwd_block.returns = [self.exact(child, child.grads[v], v) if child.grads.get(v)
                                       is not None else self._zeros(child, v) for v in outside]
        for v in outside:
            bnode.outputs.append(Value(self.bwd.fresh_name(f"grad_{v.name}"), v.type,
                                       node=bnode))
        infer_node(bnode)
        for v, o in zip(outside, bnode.outputs):
            self.accumulate(scope, v, o)

    def _record_iterations(self, node: Node, graph: Graph) -> List[Value]:
        """Make ``node`` (a loop of ``graph``) collect each iteration's carried values in lists
        (extra carried values); returns the loop outputs holding them."""
        body = node.blocks[0]
        block = node.owning_block
        lists = []
        for p in list(body.params[1:]):
            lt = ListType(p.type)
            empty = graph.create("prim::ListConstruct", [], [lt], block=block,
                                 index=block.nodes.index(node)).output()
            lp = body.add_param(f"{p.name}_seen", lt)
            body.returns.append(graph.create("autodiff::append", [lp, p], [lt],
                                             block=body).output())
            node.inputs.append(empty)
            empty.uses.append(node)
            out = Value(graph.fresh_name(f"{p.name}_seen"), lt, node=node)
            node.outputs.append(out)
            lists.append(out)
        return lists

    def _seen_lists(self, node: Node, scope: Scope) -> List[Value]:
        """Backward values of the lists of each iteration's carried values: at the top level
        the forward loop records them (and they are saved); in a branch or loop body, where
        the backward recomputes the forward, its recomputed copy of the loop records them."""
        if scope is self.root:
            return [self.primal(v, scope) for v in self._record_iterations(node, self.fwd)]
        copy = self.primal(node.outputs[0], scope).node
        before = len(scope.bwd_block.nodes)
        lists = self._record_iterations(copy, self.bwd)
        scope.cursor += len(scope.bwd_block.nodes) - before  # the empty lists, before the copy
        return lists

    def backprop_loop(self, node: Node, scope: Scope, gouts: List[Any]) -> None:
        body = node.blocks[0]
        carried = body.params[1:]
        seen = self._seen_lists(node, scope)
        trips = self.emit(scope, "aten::len", [seen[0]])
        last = self.emit(scope, "aten::sub", [trips, 1])
        act = [i for i, p in enumerate(carried) if p in self.active]
        outside = [v for v in free_values(node) if v in self.active]
        inits = [self.exact(scope, gouts[i], node.outputs[i]) if gouts[i] is not None
                 else self._zeros(scope, node.outputs[i])
                 for i in act] + [self._zeros(scope, v) for v in outside]
        bnode = Node("prim::Loop", [trips, self.const(scope, True)] + inits)
        scope.bwd_block.append(bnode)
        bb = bnode.add_block()
        j = bb.add_param("j", INT)
        g_params = [bb.add_param(f"grad_{carried[i].name}", carried[i].type) for i in act]
        o_params = [bb.add_param(f"grad_{v.name}", v.type) for v in outside]
        child = Scope(body, bb, scope)
        k = self.emit(child, "aten::sub", [last, j])
        child.env[body.params[0]] = k
        for i, p in enumerate(carried):
            child.env[p] = self.emit(child, "aten::__getitem__", [seen[i], k])
        child.cursor = len(bb.nodes)
        for i, gp in zip(act, g_params):
            self.accumulate(child, body.returns[1 + i], gp)
        self.backprop_block(child)
        new_g = [self.exact(child, child.grads[carried[i]], carried[i])
                 if child.grads.get(carried[i]) is not None else self._zeros(child, carried[i])
                 for i in act]
        new_o = []
        for v, op in zip(outside, o_params):
            g = child.grads.get(v)
            new_o.append(op if g is None else self.exact(child, self.emit(
                child, "aten::add", [op, g]), v))
        bb.returns = [self.const(child, True)] + new_g + new_o
        for v in [carried[i] for i in act] + outside:
            bnode.outputs.append(Value(self.bwd.fresh_name(f"grad_{v.name}"), v.type,
                                       node=bnode))
        infer_node(bnode)
        outs = bnode.outputs
        for i, o in zip(act, outs):
            self.accumulate(scope, node.inputs[2 + i], o)
        for v, o in zip(outside, outs[len(act):]):
            self.accumulate(scope, v, o)


def differentiate(graph: Graph, wrt: Sequence[int]):
    """Split ``graph`` (typed; modified in place into the forward) into forward and backward.

    Returns ``(forward, backward, info)``: ``forward`` returns ``graph``'s outputs then the
    saved values; ``backward`` takes one cotangent per differentiable output (``info
    ["cotangents"]``: their output indices) then the saved values, and returns a cotangent
    per ``wrt`` input index (None for integer, bool and scalar inputs)."""
    inputs = [graph.inputs[i] for i in wrt]
    active = activity(graph, inputs)
    outputs = list(graph.outputs)
    d = Differentiator(graph, active)
    cot_index = [i for i, o in enumerate(outputs) if o in active]
    # every cotangent input first: accumulating one may save a forward value (an output of
    # unknown shape is fitted with its size), and the saved inputs come after all cotangents
    cots = [d.bwd.add_input(f"grad_{outputs[i].name}", outputs[i].type) for i in cot_index]
    for i, p in zip(cot_index, cots):
        d.accumulate(d.root, outputs[i], p)
    if not cot_index:
        described = ", ".join(f"%{o.name} : {o.type}" for o in outputs)
        raise AutodiffError(f"no output depends differentiably on the inputs asked for "
                            f"({described}): integer, bool and scalar outputs have no gradient")
    d.backprop_block(d.root)
    results = []
    for v in inputs:
        g = d.root.grads.get(v)
        if not differentiable(v.type):
            g = d.const(d.root, None)
        elif g is None:
            g = d._zeros(d.root, v)
        elif isinstance(g, list):
            raise AutodiffError(f"cotangent of the list input %{v.name}: not supported")
        else:
            g = d.exact(d.root, g, v)
        results.append(g)
    d.bwd.set_outputs(results)
    graph.set_outputs(outputs + d.saved)
    return graph, d.bwd, {"cotangents": cot_index, "num_outputs": len(outputs),
                          "num_saved": len(d.saved)}


__all__ = ["AutodiffError", "differentiate", "differentiable", "activity"]
