"""Layer norm, RMS norm and eval-mode batch norm lowered to their parts, so that they fuse with
what surrounds them.

``F.layer_norm`` and ``F.rms_norm`` (and ``nn.LayerNorm``, ``nn.RMSNorm``) print as one op
each; the partitioner fuses row reductions and elementwise work, not these.  Lowered, a layer
norm is a row mean, a row variance and an epilogue, the very pattern a layer norm scripted from
its parts prints, and joins one row kernel with its producers (a residual add) and consumers
(an activation)::

    %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %cudnn)

becomes (``k = len(normalized_shape)``, the row reductions over dims ``[-k, ..., -1]``)::

    %xc : Tensor = torchlike::norm_input(%x, %w, %b, %shape_const, "layer_norm")
    %mean : Tensor = aten::mean(%xc, %dims, %true, %none)
    %var : Tensor = aten::var(%xc, %dims, %false, %true)        # biased
    %d : Tensor = aten::sub(%xc, %mean, %one)
    %ve : Tensor = aten::add(%var, %eps, %one)
    %r : Tensor = aten::rsqrt(%ve)
    %y0 : Tensor = aten::mul(%d, %r)
    %y1 : Tensor = aten::mul(%y0, %w)
    %y : Tensor = aten::add(%y1, %b, %one)

and an RMS norm ``x * rsqrt(mean(x * x) + eps) * w`` (``eps=None``: the compute dtype's machine
epsilon, ``torchlike::add_dtype_eps``; the result cast back to the input's dtype as PyTorch's
is, ``torchlike::cast_like``, where the weight's dtype may differ).
``torchlike::norm_input`` passes its input on and checks what the op checks -- float dtype,
trailing shape, the weight's and bias's shapes and dtypes -- so a bad call still raises the op's
own error (the executor interprets a group whose check fails).

A node is lowered when its ``normalized_shape`` is a list of constants, of the input's own
trailing sizes (``[x.size(-1)]``, as ``F.layer_norm(x, [x.size(-1)])`` scripts, or
``[x.shape[-1]]``) or of sizes the types state (a traced or specialized graph: ``[y.size(-1)]``
of another tensor), its weight and bias are absent or tensors (not ``Tensor?`` values that may
be None), its eps is a float (or, for rms_norm, the constant None), and its input is not known
to be an integer tensor.  Others stay as they are and are interpreted.

An eval-mode batch norm (``training`` the constant False, running statistics given: what
``nn.BatchNorm2d`` runs after ``eval()``) becomes ``x * scale + shift`` with the per-channel
``scale = w / sqrt(var + eps)`` and ``shift = b - mean * scale`` of
``torchlike::batch_norm_affine`` (as PyTorch's CPU kernel computes them; it makes the op's
checks), so a convolution's batch norm and activation are one elementwise kernel.  Training
mode, which updates the running statistics in place, stays the op.

A group norm (``nn.GroupNorm``, ``F.group_norm``) becomes a layer norm's parts over its input
seen as rows of groups, ``(N, G, C/G, H*W...)`` (``torchlike::group_norm_rows``: a view, after
the op's checks), with its per-channel weight and bias seen as ``(G, C/G, 1)``: one row kernel
with what follows it (a U-Net's SiLU), the weight expanded into a row buffer per group
(``RowPlan``'s ``block`` inputs), the result viewed back as the input's shape.  An instance
norm without running statistics (``nn.InstanceNorm2d``'s default) is the group norm of ``C``
groups.

``aten::_softmax(x, dim, False)`` and ``aten::_log_softmax`` (``F.softmax``'s internals, in a
graph printed from them) become ``aten::softmax(x, dim, None)`` and ``aten::log_softmax``,
the spelling the row kernels fuse.
"""
from __future__ import annotations

from typing import FrozenSet, List, Optional

from ..ir.graph import Block, Graph, Node, Value
from ..ir.types import BOOL, FLOAT, INT, NONE, STR, ListType, OptionalType, TensorType
from .group_rows import hoist_producers, sink_consumers

__all__ = ["decompose_norms", "public_softmax", "LOWERED"]

LOWERED = ("aten::layer_norm", "aten::rms_norm", "aten::batch_norm", "aten::group_norm",
           "aten::instance_norm")
_FLOAT_DTYPES = (None, "float16", "bfloat16", "float32", "float64")
_SIZE_WRAPPERS = ("aten::Int", "prim::NumToTensor")
# what builds a normalized shape; left unused by the lowering, removed with it
_SHAPE_BUILDERS = ("prim::ListConstruct", "aten::size", "aten::__getitem__") + _SIZE_WRAPPERS


def decompose_norms(graph: Graph, dont_fuse: FrozenSet[str] = frozenset()) -> int:
    """Lower every eligible layer norm, RMS norm and eval-mode batch norm of ``graph`` (nested
    blocks included) in place, and spell ``aten::_softmax`` as ``aten::softmax``
    (``public_softmax``); returns how many norms were lowered."""
    count = 0
    for block in list(graph.all_blocks()):
        for node in list(block.nodes):
            if node.kind in LOWERED and node.kind not in dont_fuse and _lower(graph, block, node):
                count += 1
    public_softmax(graph, dont_fuse)
    return count


def _constant(v: Value):
    return v.node.attrs.get("value") if v.node is not None and v.node.kind == "prim::Constant" \
        else _MISSING


_MISSING = object()


def _normalized_shape(node: Node) -> Optional[List[int]]:
    """The normalized shape as constants, -1 standing for "the input's own size at that dim"
    (an ``aten::size(%x, d)`` element, d the matching negative dim); None if neither."""
    v, x = node.inputs[1], node.inputs[0]
    const = _constant(v)
    if const is not _MISSING:
        ok = isinstance(const, (list, tuple)) and all(isinstance(s, int) and not isinstance(
            s, bool) and s >= 0 for s in const)
        return list(const) if ok else None
    if v.node is None or v.node.kind != "prim::ListConstruct":
        return None
    k, shape = len(v.node.inputs), []
    for i, e in enumerate(v.node.inputs):
        c, size = _constant(e), _size_of(e)
        if isinstance(c, int) and not isinstance(c, bool) and c >= 0:
            shape.append(c)
        elif size == (x, i - k):
            shape.append(-1)
        elif size is not None and (s := _static_size(*size)) is not None:
            shape.append(s)  # of another tensor: its type's (checked inputs)
        else:
            return None
    return shape


def _size_of(e: Value):
    """``(tensor, dim)`` when ``e`` is a size of a tensor at a constant dim: ``aten::size(%x,
    d)`` (scripted ``x.size(d)``), ``aten::__getitem__(aten::size(%x), d)`` (``x.shape[d]``),
    traced ``aten::Int(prim::NumToTensor(...))`` around either; else None."""
    while e.node is not None and e.node.kind in _SIZE_WRAPPERS and len(e.node.inputs) == 1:
        e = e.node.inputs[0]
    n = e.node
    if n is None or len(n.inputs) != 2:
        return None
    if n.kind == "aten::size":
        return n.inputs[0], _constant(n.inputs[1])
    s = n.inputs[0].node
    if n.kind == "aten::__getitem__" and s is not None and s.kind == "aten::size" and \
            len(s.inputs) in (1, 2) and (len(s.inputs) == 1 or _constant(s.inputs[1]) is None):
        return s.inputs[0], _constant(n.inputs[1])
    return None


def _static_size(t: Value, d) -> Optional[int]:
    """The size of ``t`` at dim ``d`` as its type states it (a traced or specialized graph)."""
    shape = t.type.shape if isinstance(t.type, TensorType) else None
    if shape is None or not isinstance(d, int) or not -len(shape) <= d < len(shape):
        return None
    return shape[d]


def _tensor_or_none(v: Value) -> Optional[str]:
    """"none" for the constant None, "tensor" for a tensor value, else None (a ``Tensor?``
    that may be None at run time)."""
    if _constant(v) is None or v.type == NONE:
        return "none"
    if isinstance(v.type, OptionalType):
        return None
    return "tensor" if isinstance(v.type, TensorType) else None


class _Emitter:
    """Inserts the lowering's nodes before the lowered ``node``, in order, with its source."""

    def __init__(self, graph: Graph, block: Block, node: Node):
        self.graph, self.block, self.src = graph, block, node.source
        self.at = block.nodes.index(node)

    def const(self, value, t) -> Value:
        v = self.graph.insert_constant(value, t, block=self.block, index=self.at)
        self.at += 1
        return v

    def ops(self, kind: str, inputs, types) -> List[Value]:
        n = self.graph.create(kind, inputs, types, block=self.block, index=self.at,
                              source=self.src)
        self.at += 1
        return n.outputs

    def op(self, kind: str, inputs, t=None) -> Value:
        return self.ops(kind, inputs, [t or TensorType()])[0]


def _replace(block: Block, node: Node, y: Value) -> None:
    """``node``'s output replaced by ``y`` (with its type), ``node`` removed."""
    out = node.output()
    y.type = out.type
    out.replace_all_uses_with(y)
    block.remove(node)


def _lower(graph: Graph, block: Block, node: Node) -> bool:
    if node.kind == "aten::batch_norm":
        return _lower_batch_norm(graph, block, node)
    if node.kind in ("aten::group_norm", "aten::instance_norm"):
        return _lower_group_norm(graph, block, node)
    layer = node.kind == "aten::layer_norm"
    if len(node.inputs) != (6 if layer else 4) or len(node.outputs) != 1:
        return False
    x = node.inputs[0]
    if not isinstance(x.type, TensorType) or x.type.dtype not in _FLOAT_DTYPES:
        return False
    shape = _normalized_shape(node)
    params = [node.inputs[2]] + ([node.inputs[3]] if layer else [])
    kinds = [_tensor_or_none(p) for p in params]
    eps = node.inputs[4 if layer else 3]
    eps_none = _constant(eps) is None
    if shape is None or not shape or None in kinds or (layer and eps_none) or \
            not (eps_none or eps.type in (FLOAT, INT)):
        return False
    e = _Emitter(graph, block, node)
    const, op = e.const, e.op
    none = const(None, NONE)
    w = params[0] if kinds[0] == "tensor" else none
    b = params[1] if layer and kinds[1] == "tensor" else none
    name = "layer_norm" if layer else "rms_norm"
    xc = op("torchlike::norm_input", [x, w, b, const(shape, ListType(INT)), const(name, STR)],
            x.type)
    dims = const(list(range(-len(shape), 0)), ListType(INT))
    true, one = const(True, BOOL), const(1, INT)
    if layer:
        mean = op("aten::mean", [xc, dims, true, none])
        var = op("aten::var", [xc, dims, const(False, BOOL), true])
        y = op("aten::mul", [op("aten::sub", [xc, mean, one]),
                             op("aten::rsqrt", [op("aten::add", [var, eps, one])])])
    else:
        ms = op("aten::mean", [op("aten::mul", [xc, xc]), dims, true, none])
        ve = op("torchlike::add_dtype_eps", [ms]) if eps_none else op("aten::add", [ms, eps, one])
        y = op("aten::mul", [xc, op("aten::rsqrt", [ve])])
    if w is not none:
        y = op("aten::mul", [y, w])
    if b is not none:
        y = op("aten::add", [y, b, one])
    if not layer and w is not none and not (isinstance(w.type, TensorType) and w.type.dtype
                                            is not None and w.type.dtype == x.type.dtype):
        y = op("torchlike::cast_like", [y, xc])  # PyTorch's result has the input's dtype
    _replace(block, node, y)
    _remove_unused_builders(node.inputs[1])
    return True


def _remove_unused_builders(v: Value) -> None:
    """Remove the list (and the sizes it was built from) that only the lowered node read."""
    n = v.node
    if n is None or n.kind not in _SHAPE_BUILDERS or v.uses or n.owning_block is None or \
            any(o.uses for o in n.outputs) or \
            any(v in b.returns for b in n.owning_block.graph.all_blocks()):
        return
    n.owning_block.remove(n)
    for i in n.inputs:
        _remove_unused_builders(i)


def _lower_batch_norm(graph: Graph, block: Block, node: Node) -> bool:
    """An eval-mode batch norm (``training`` the constant False, running statistics given):
    ``x * scale + shift``, the per-channel ``scale`` and ``shift`` from
    ``torchlike::batch_norm_affine`` (which makes the op's checks), the result in ``x``'s
    dtype."""
    if len(node.inputs) != 9 or len(node.outputs) != 1 or _constant(node.inputs[5]) is not False:
        return False
    x, w, b, mean, var, eps = (node.inputs[i] for i in (0, 1, 2, 3, 4, 7))
    kinds = [_tensor_or_none(v) for v in (w, b, mean, var)]
    if None in kinds or kinds[2:] != ["tensor", "tensor"] or eps.type not in (FLOAT, INT) or \
            not isinstance(x.type, TensorType) or x.type.dtype not in _FLOAT_DTYPES:
        return False
    e = _Emitter(graph, block, node)
    none, one = e.const(None, NONE), e.const(1, INT)
    args = [x] + [v if k == "tensor" else none for v, k in zip((w, b), kinds)] + [mean, var, eps]
    scale, shift = e.ops("torchlike::batch_norm_affine", args, [TensorType(), TensorType()])
    y = e.op("aten::add", [e.op("aten::mul", [x, scale]), shift, one])
    y = e.op("torchlike::cast_like", [y, x])  # float16 input: float32 scale, float16 result
    _replace(block, node, y)
    return True


def _lower_group_norm(graph: Graph, block: Block, node: Node) -> bool:
    """A group norm over its input seen as rows of groups, ``x4 (N, G, C/G, H*W...)`` of
    ``torchlike::group_norm_rows`` (which makes the op's checks): the row mean and biased
    variance over the trailing two dims, the epilogue, the weight and bias per channel as
    ``(G, C/G, 1)`` (``torchlike::group_norm_param``), the result viewed back as the input."""
    if node.kind == "aten::instance_norm":  # without running statistics: G = C
        if len(node.inputs) != 9 or _constant(node.inputs[5]) is not True or \
                any(_tensor_or_none(v) != "none" for v in node.inputs[3:5]):
            return False
        x, w, b, eps = (node.inputs[i] for i in (0, 1, 2, 7))
        groups = None
    elif len(node.inputs) == 6:
        x, groups, w, b, eps = node.inputs[:5]
    else:
        return False
    kinds = [_tensor_or_none(v) for v in (w, b)]
    if None in kinds or (groups is not None and groups.type != INT) or len(node.outputs) != 1 \
            or eps.type not in (FLOAT, INT) or not isinstance(x.type, TensorType) or \
            x.type.dtype not in _FLOAT_DTYPES:
        return False
    e = _Emitter(graph, block, node)
    const, op = e.const, e.op
    none, one = const(None, NONE), const(1, INT)
    name = node.kind.split("::")[1]
    groups = const(-1, INT) if groups is None else groups
    params = [v if k == "tensor" else none for v, k in zip((w, b), kinds)]
    x4 = op("torchlike::group_norm_rows", [x, groups] + params + [const(name, STR)],
            TensorType(x.type.dtype))
    dims, true = const([-2, -1], ListType(INT)), const(True, BOOL)
    mean = op("aten::mean", [x4, dims, true, none])
    var = op("aten::var", [x4, dims, const(False, BOOL), true])
    y = op("aten::mul", [op("aten::sub", [x4, mean, one]),
                         op("aten::rsqrt", [op("aten::add", [var, eps, one])])])
    if kinds[0] == "tensor":
        y = op("aten::mul", [y, op("torchlike::group_norm_param", [w, groups])])
    if kinds[1] == "tensor":
        y = op("aten::add", [y, op("torchlike::group_norm_param", [b, groups]), one])
    if "tensor" in kinds:  # float32 parameters of a float16 input: the input's dtype
        y = op("torchlike::cast_like", [y, x4])
    y = op("aten::reshape_as", [y, x])
    _replace(block, node, y)
    hoist_producers(block, x4.node, y.node)
    sink_consumers(block, y.node, groups)
    return True


_PRIVATE_SOFTMAX = {"aten::_softmax": "aten::softmax", "aten::_log_softmax": "aten::log_softmax"}


def public_softmax(graph: Graph, dont_fuse: FrozenSet[str]) -> None:
    """``aten::_softmax(x, dim, False)`` (what a graph of ``F.softmax``'s internals prints) is
    ``aten::softmax(x, dim, None)``, which row kernels fuse; half_to_float True (CUDA only)
    stays as it is, interpreted."""
    for node in list(graph.all_nodes()):
        kind = _PRIVATE_SOFTMAX.get(node.kind)
        if kind is None or kind in dont_fuse or len(node.inputs) != 3:
            continue
        flag = node.inputs[2]
        if not flag.is_constant() or flag.constant_value() is not False:
            continue
        none = graph.insert_constant(None)
        flag.uses.remove(node)
        node.inputs[2] = none
        none.uses.append(node)
        node.kind = kind
