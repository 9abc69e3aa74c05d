"""Which dims of a graph's inputs may be cut into chunks: ``plan_chunks(graph, input_types)``.

A graph runs once per chunk, so a dim may be cut only where every op treats its positions
independently.  Each dim of every tensor value gets a symbol; symbols that must be cut alike are
merged (union-find), and a symbol is *whole* when some op needs all of it in one chunk:

* elementwise ops (and their in-place forms) merge the symbols their operands' dims broadcast
  together (right-aligned; a size-1 dim has no symbol: it broadcasts within any chunk);
* a row reduction (``fuser.row_reduce``: sum, mean, amax, var, std, logsumexp, softmax,
  max.dim, norms, ...) makes its reduced dims whole; its output keeps the other dims' symbols;
* ``layer_norm`` / ``rms_norm`` make their normalized trailing dims whole, ``group_norm`` and
  ``instance_norm`` every dim after the channels, ``batch_norm`` (training) all but the channels;
* ``chunk`` / ``split`` / ``prim::ConstantChunk`` make the split dim whole;
* a size query (``x.size(d)``, ``x.numel()``) makes the dims it reads whole: per chunk it would
  read the chunk's size; ``item()`` / ``float(x)`` make all of their tensor whole;
* any other op on tensors (a matmul, a transpose, a cat) sees whole tensors: its inputs' dims
  become whole and its outputs' dims are new whole symbols.  The plan says why in ``notes``.

What is left -- the symbols of the inputs' dims that are not whole -- is what ``torchlike.dask``
chunks: a graph ``y = softmax(x * w, -1)`` over ``x: (N, D)``, ``w: (D,)`` cuts N freely and
keeps D whole::

    graph(%x : Float(N, D), %w : Float(D)):
      %2 : Tensor = aten::mul(%x, %w)            # x.1 ~ w.0 (D), x.0 (N)
      %4 : Tensor = aten::softmax(%2, %3, %none) # D whole
      return (%4)

Output shapes and dtypes come from the graph's own type inference on the full input types, so
a lazy result knows them without computing.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Dict, List, Optional, Sequence, Tuple

from ..errors import TorchlikeError
from ..fuser.row_reduce import ROW_REDUCTIONS, Reduction, parse_reduction
from ..ir.graph import Block, Graph, Node, Value, clone_graph
from ..ir.types import ListType, TensorType, TupleType
from ..ops import registry
from ..ops.tensor_common import UNKNOWN, arg
from ..passes import infer_types, inline_functions, simplify_tuples

__all__ = ["DaskPlanError", "DaskPlanWarning", "AxisClass", "OutputPlan", "ChunkPlan",
           "plan_chunks"]

DimMap = Tuple[Optional[int], ...]  # per dim of a tensor: its symbol, or None (size 1)


class DaskPlanError(TorchlikeError, ValueError):
    """A graph whose outputs cannot be described per chunk (an output that is not a tensor, a
    shape type inference cannot state); the message names the node."""


class DaskPlanWarning(UserWarning):
    """An op that is neither elementwise nor a known per-row op made the dims of its tensors
    whole: they run as one chunk (``ChunkPlan.notes`` says which op)."""


@dataclass(frozen=True)
class AxisClass:
    """Dims that are chunked alike: their ``size``; ``whole`` if one chunk must hold all of it,
    ``why`` naming the node that needs it."""

    size: int
    whole: bool
    why: Optional[str] = None


@dataclass(frozen=True)
class OutputPlan:
    """One graph output: its shape and numpy dtype on the full inputs, and per dim the index
    of its ``AxisClass`` (None: a dim of size 1)."""

    shape: Tuple[int, ...]
    dtype: str
    dims: Tuple[Optional[int], ...]


@dataclass(frozen=True)
class ChunkPlan:
    """``inputs``: per graph input, per dim its class index (None: size 1), or None for an
    input that is not a tensor; ``notes``: what made classes whole beyond row reductions;
    ``packed``: the graph returns its outputs as one tuple (a task's result is that tuple);
    ``writes``: it writes into a tensor in place (its tasks run on copies of their blocks:
    Dask arrays never change, so such a write into an input is not seen outside)."""

    classes: Tuple[AxisClass, ...]
    inputs: Tuple[Optional[Tuple[Optional[int], ...]], ...]
    outputs: Tuple[OutputPlan, ...]
    notes: Tuple[str, ...] = ()
    packed: bool = False  # the graph returns one tuple of the outputs
    writes: bool = False  # the graph writes into a tensor in place (tasks copy their blocks)

    def chunked(self) -> Tuple[int, ...]:
        """The classes an input may cut (not whole, held by some input), in order."""
        held = {c for dims in self.inputs if dims for c in dims if c is not None}
        return tuple(i for i, c in enumerate(self.classes) if not c.whole and i in held)


# Ops that read a tensor's metadata but neither its values nor its sizes.
_SHAPE_FREE = frozenset({"aten::dim", "prim::dtype", "prim::device", "prim::layout",
                         "aten::is_floating_point", "aten::is_complex", "prim::is_cuda",
                         "aten::__is__", "aten::__isnot__", "prim::requires_grad"})
# Ops that read the sizes of some dims (a constant dim: that one) of input 0.
_SIZE_QUERIES = frozenset({"aten::size", "aten::numel", "prim::shape", "aten::sym_size",
                           "aten::sym_numel", "aten::len"})
_SPLITS = frozenset({"aten::chunk", "aten::split", "aten::split_with_sizes",
                     "aten::unsafe_chunk", "aten::unsafe_split", "prim::ConstantChunk"})
_IDENTITY = frozenset({"aten::contiguous", "aten::clone", "aten::detach", "aten::alias",
                       "aten::expand_as"})


class _Symbols:
    """Union-find over dim symbols, each with a size and whether it must stay whole."""

    def __init__(self):
        self.parent: List[int] = []
        self.size: List[int] = []
        self.why: List[Optional[str]] = []  # None: may be chunked

    def new(self, size: int, why: Optional[str] = None) -> int:
        self.parent.append(len(self.parent))
        self.size.append(size)
        self.why.append(why)
        return len(self.parent) - 1

    def find(self, s: int) -> int:
        while self.parent[s] != s:
            self.parent[s] = self.parent[self.parent[s]]
            s = self.parent[s]
        return s

    def union(self, a: int, b: int) -> int:
        a, b = self.find(a), self.find(b)
        if a != b:
            self.parent[b] = a
            self.why[a] = self.why[a] or self.why[b]
        return a

    def make_whole(self, s: int, why: str) -> None:
        r = self.find(s)
        self.why[r] = self.why[r] or why


def _shape(v: Value, node: Optional[Node]) -> Tuple[int, ...]:
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        at = node.describe() if node is not None else "the graph"
        raise DaskPlanError(f"torchlike.dask: the shape of %{v.name} from {at} is not known "
                            f"from the inputs' shapes, so its chunks cannot be planned")
    return tuple(int(d) for d in t.shape)


class _Analysis:
    def __init__(self):
        self.sym = _Symbols()
        self.maps: Dict[Value, Any] = {}  # tensor -> DimMap; list/tuple of tensors -> [DimMap]
        self.notes: List[str] = []

    # -- helpers ----------------------------------------------------------------------------
    def fresh(self, v: Value, node: Optional[Node], why: Optional[str]) -> DimMap:
        return tuple(None if d == 1 else self.sym.new(d, why) for d in _shape(v, node))

    def tensor_maps(self, values: Sequence[Value]) -> List[DimMap]:
        out = []
        for v in values:
            m = self.maps.get(v)
            if isinstance(m, tuple):
                out.append(m)
            elif isinstance(m, list):
                out.extend(m)
            elif isinstance(m, _Pieces):
                out.append(m.m)
        return out

    def whole(self, m: DimMap, why: str, positions=None) -> None:
        for i, s in enumerate(m):
            if s is not None and (positions is None or i in positions):
                self.sym.make_whole(s, why)

    def joined(self, maps: Sequence[DimMap], out: Value, node: Node) -> DimMap:
        """Right-aligned broadcast of ``maps`` onto ``out``'s shape, merging the symbols that
        meet at a dim."""
        shape = _shape(out, node)
        result: List[Optional[int]] = []
        for i in range(len(shape)):
            syms = [m[len(m) - len(shape) + i] for m in maps if len(m) - len(shape) + i >= 0]
            # a dim of another size is not broadcast here (type_as reads its other's dtype)
            syms = [s for s in syms if s is not None and self.sym.size[s] == shape[i]]
            if shape[i] == 1:
                result.append(None)
            elif syms:
                root = syms[0]
                for s in syms[1:]:
                    root = self.sym.union(root, s)
                result.append(root)
            else:  # a dim no operand gives (a broadcast to a new size): computed whole
                result.append(self.sym.new(shape[i], f"{node.describe()} makes it"))
        return tuple(result)

    def unify(self, a: DimMap, b: DimMap, node: Node) -> None:
        if len(a) != len(b):
            raise DaskPlanError(f"torchlike.dask: {node.describe()} carries tensors of rank "
                                f"{len(a)} and {len(b)} in one place")
        for x, y in zip(a, b):
            if x is not None and y is not None:
                self.sym.union(x, y)
            elif x is not None or y is not None:  # size 1 on one path only: keep it whole
                self.sym.make_whole(x if x is not None else y,
                                    f"{node.describe()} (size 1 on one path)")

    def sees_whole(self, node: Node) -> None:
        """The fallback: the node sees whole tensors; its outputs are new whole symbols."""
        why = f"{node.describe()} needs whole tensors"
        for m in self.tensor_maps(node.inputs):
            self.whole(m, why)
        for v in node.outputs:
            self.define(v, node, why)
        self.notes.append(f"{node.describe()} is not elementwise or a row reduction: the dims "
                          f"of its tensors run whole")

    def define(self, v: Value, node: Node, why: Optional[str]) -> None:
        t = v.type
        if isinstance(t, TensorType):
            self.maps[v] = self.fresh(v, node, why)
        elif isinstance(t, (ListType, TupleType)) and _holds_tensors(t):
            self.maps[v] = []  # an unknown list of tensors: nothing later can cut it

    # -- the walk ---------------------------------------------------------------------------
    def block(self, block: Block) -> None:
        for node in block.nodes:
            self.node(node)

    def node(self, node: Node) -> None:
        kind = node.kind
        if kind == "prim::If":  # blocks may read outer tensors whatever the node's own values
            return self.branches(node)
        if kind == "prim::Loop":
            return self.loop(node)
        touches = any(v in self.maps for v in node.inputs) or any(
            isinstance(v.type, TensorType) or
            (isinstance(v.type, (ListType, TupleType)) and _holds_tensors(v.type))
            for v in node.outputs)
        if not touches:
            return  # scalar work
        if kind == "prim::Constant":
            for v in node.outputs:
                self.define(v, node, f"a tensor constant {node.describe()}")
        elif kind in ("prim::ListConstruct", "prim::TupleConstruct"):
            self.maps[node.output()] = self.tensor_maps(node.inputs)
        elif kind in ("prim::ListUnpack", "prim::TupleUnpack"):
            items = self.maps.get(node.inputs[0])
            if isinstance(items, _Pieces):
                for v in node.outputs:
                    self.maps[v] = self.piece(items, v, node)
            elif isinstance(items, list) and len(items) == len(node.outputs):
                for v, m in zip(node.outputs, items):
                    self.maps[v] = m
            else:
                self.sees_whole(node)
        elif kind in _SHAPE_FREE:
            pass
        elif kind in _SIZE_QUERIES:
            self.size_query(node)
        elif kind in ROW_REDUCTIONS and isinstance(red := parse_reduction(node), Reduction):
            self.reduction(node, red)
        elif kind in _SPLITS:
            self.split(node)
        elif kind in _NORMS:
            _NORMS[kind](self, node)
        elif kind in _PRODUCTS:
            self.product(node, *_PRODUCTS[kind])
        elif kind in _IDENTITY or _elementwise(node):
            self.elementwise(node)
        else:
            self.sees_whole(node)

    def elementwise(self, node: Node) -> None:
        maps = self.tensor_maps(node.inputs)
        for v in node.outputs:
            if isinstance(v.type, TensorType):
                self.maps[v] = m = self.joined(maps, v, node)
                if _in_place(node.kind) and maps:  # the output is input 0
                    self.unify(self.maps.get(node.inputs[0], m), m, node)

    def product(self, node: Node, a_at: int, b_at: int, bias_at: Optional[int],
                transposed: bool) -> None:
        """A matrix product ``a @ b`` (``b`` a matrix or vector, ``b.t()`` for ``linear``):
        ``a``'s leading dims keep their symbols (rows of a batch are independent), the
        contracted dims and ``b`` are whole."""
        ins = node.inputs
        a, b = self.maps.get(ins[a_at]), self.maps.get(ins[b_at])
        bias_v = ins[bias_at] if bias_at is not None and bias_at < len(ins) else None
        bias = self.maps.get(bias_v) if bias_v is not None else None
        out = node.outputs[0]
        unknown_bias = bias_v is not None and isinstance(bias_v.type, TensorType) and \
            not isinstance(bias, tuple)
        if not isinstance(a, tuple) or not isinstance(b, tuple) or not a or len(b) > 2 or \
                len(node.outputs) != 1 or unknown_bias:
            return self.sees_whole(node)
        why = f"{node.describe()} contracts it"
        self.whole(a, why, {len(a) - 1})
        self.whole(b, why)
        if len(b) == 2:
            m = a[:-1] + (b[0] if transposed else b[1],)
        else:
            m = a[:-1]
        if len(m) != len(_shape(out, node)):
            return self.sees_whole(node)
        self.maps[out] = self.joined([m] + ([bias] if isinstance(bias, tuple) else []), out,
                                     node)

    def size_query(self, node: Node) -> None:
        m = self.maps.get(node.inputs[0])
        if not isinstance(m, tuple):
            return
        d = arg(node, 1, None)
        why = f"{node.describe()} reads its size"
        if isinstance(d, int) and -len(m) <= d < len(m):
            self.whole(m, why, {d % len(m)})
        else:
            self.whole(m, why)
        for v in node.outputs:
            self.define(v, node, why)

    def reduction(self, node: Node, red: Reduction) -> None:
        m = self.maps.get(node.inputs[0])
        if not isinstance(m, tuple):
            return self.sees_whole(node)
        n = len(m)
        dims = set(range(n)) if red.all_dims else {d % n for d in red.dims} if n else set()
        self.whole(m, f"{node.describe()} reduces it", dims)
        for v in node.outputs:
            if not isinstance(v.type, TensorType):
                continue
            if red.per_element:
                kept = m
            elif red.keepdim:
                kept = tuple(None if i in dims else s for i, s in enumerate(m))
            else:
                kept = tuple(s for i, s in enumerate(m) if i not in dims)
            if len(kept) != len(_shape(v, node)):
                return self.sees_whole(node)
            self.maps[v] = kept

    def split(self, node: Node) -> None:
        m = self.maps.get(node.inputs[0])
        d = node.attrs.get("dim") if node.kind == "prim::ConstantChunk" else arg(node, 2, 0)
        if not isinstance(m, tuple) or not isinstance(d, int) or not -len(m) <= d < len(m):
            return self.sees_whole(node)
        d %= len(m)
        why = f"{node.describe()} splits it"
        self.whole(m, why, {d})
        pieces = _Pieces(m, d, why)
        if node.kind == "prim::ConstantChunk":  # one output a piece
            for v in node.outputs:
                self.maps[v] = self.piece(pieces, v, node)
        else:  # a list of pieces, unpacked later
            self.maps[node.output()] = pieces

    def piece(self, pieces: "_Pieces", v: Value, node: Node) -> DimMap:
        """One piece of a split: the split dim a new whole symbol of the piece's size."""
        size = _shape(v, node)[pieces.dim]
        new = None if size == 1 else self.sym.new(size, pieces.why)
        return tuple(new if i == pieces.dim else s for i, s in enumerate(pieces.m))

    def branches(self, node: Node) -> None:
        for b in node.blocks:
            self.block(b)
        for i, v in enumerate(node.outputs):
            maps = [self.maps.get(b.returns[i]) for b in node.blocks]
            if isinstance(v.type, TensorType) and all(isinstance(m, tuple) for m in maps):
                self.maps[v] = maps[0]
                for m in maps[1:]:
                    self.unify(maps[0], m, node)
            elif any(m is not None for m in maps):
                self.define(v, node, f"{node.describe()} returns it")

    def loop(self, node: Node) -> None:
        body = node.blocks[0]
        carried = node.inputs[2:]
        for p, v in zip(body.params[1:], carried):
            if v in self.maps:
                self.maps[p] = self.maps[v]
        self.block(body)
        for p, r, out in zip(body.params[1:], body.returns[1:], node.outputs):
            a, b = self.maps.get(p), self.maps.get(r)
            if isinstance(a, tuple) and isinstance(b, tuple):
                self.unify(a, b, node)
                self.maps[out] = a
            elif a is not None or b is not None:
                self.define(out, node, f"{node.describe()} carries it")


@dataclass(frozen=True)
class _Pieces:
    """The list ``x.chunk(n, d)`` / ``x.split(s, d)`` makes: pieces of ``m`` along ``dim``."""

    m: DimMap
    dim: int
    why: str


def _holds_tensors(t) -> bool:
    if isinstance(t, ListType):
        return isinstance(t.elem, TensorType)
    return isinstance(t, TupleType) and any(isinstance(e, TensorType) for e in t.elems)


def _in_place(kind: str) -> bool:
    """``aten::mul_``, not ``aten::__and__``."""
    return kind.endswith("_") and not kind.endswith("__")


def _elementwise(node: Node) -> bool:
    ops = [registry.lookup(node.kind)]
    if _in_place(node.kind):  # aten::mul_: aten::mul in place (its own entry is not marked)
        ops.append(registry.lookup(node.kind[:-1]))
    return any(op is not None and (op.is_elementwise or (
        op.elementwise_overload is not None and op.elementwise_overload(node) is not None))
        for op in ops)


def _norm(trailing_from: Optional[int], channels: bool, whole_rest: bool):
    """A norm op's rule: ``trailing_from`` -- the input index of ``normalized_shape`` (its
    length: the trailing dims made whole); ``channels`` -- weight, bias and statistics are
    per channel (dim 1), else right-aligned with the input; ``whole_rest`` -- every dim after
    the channels is whole (group / instance norm), or all but the channels (training batch
    norm: decided by the ``training`` constant)."""

    def rule(an: _Analysis, node: Node) -> None:
        m = an.maps.get(node.inputs[0])
        if not isinstance(m, tuple) or len(node.outputs) != 1:
            return an.sees_whole(node)
        why = f"{node.describe()} normalizes over it"
        params = [an.maps.get(v) for v in node.inputs[1:]]
        params = [p for p in params if isinstance(p, tuple)]
        if trailing_from is not None:
            shape = arg(node, trailing_from, UNKNOWN)
            if not isinstance(shape, list) or len(shape) > len(m):
                return an.sees_whole(node)
            an.whole(m, why, set(range(len(m) - len(shape), len(m))))
            an.maps[node.output()] = an.joined([m] + params, node.output(), node)
            return
        for p in params:  # per channel: (C,) against dim 1
            if len(p) == 1 and len(m) > 1 and p[0] is not None and m[1] is not None:
                an.sym.union(m[1], p[0])
        if whole_rest:
            an.whole(m, why, set(range(2, len(m))))
        training = arg(node, 5, UNKNOWN)
        if node.kind == "aten::batch_norm" and training is not False:
            an.whole(m, why, {i for i in range(len(m)) if i != 1})
        an.maps[node.output()] = m

    return rule


# kind -> (a, b, bias input positions, b transposed): the products rows may be cut through
_PRODUCTS = {
    "aten::matmul": (0, 1, None, False),
    "aten::mm": (0, 1, None, False),
    "aten::mv": (0, 1, None, False),
    "aten::addmm": (1, 2, 0, False),
    "aten::linear": (0, 1, 2, True),
}

_NORMS = {
    "aten::layer_norm": _norm(1, False, False),
    "aten::rms_norm": _norm(1, False, False),
    "aten::group_norm": _norm(None, True, True),
    "aten::instance_norm": _norm(None, True, True),
    "aten::batch_norm": _norm(None, True, False),
}


def plan_chunks(graph: Graph, input_types: Sequence[Any]) -> ChunkPlan:
    """The ``ChunkPlan`` of ``graph`` for inputs of ``input_types`` (``TensorType`` with full
    shapes for arrays, the IR types of scalars); raises ``DaskPlanError`` for an output that is
    not a tensor or a shape the types cannot state."""
    g = clone_graph(graph)
    inline_functions(g)  # F.gelu & co.: their ops
    infer_types(g, list(input_types))
    simplify_tuples(g)
    an = _Analysis()
    for v in g.inputs:
        if isinstance(v.type, TensorType):
            an.maps[v] = an.fresh(v, None, None)
    an.block(g.block)
    outputs = []
    returned = list(g.outputs)
    packed = len(returned) == 1 and returned[0].node is not None and \
        returned[0].node.kind == "prim::TupleConstruct"
    if packed:  # return (a, b): the tuple's items, a tuple for the caller too
        returned = list(returned[0].node.inputs)
    for v in returned:
        m = an.maps.get(v)
        t = v.type
        if not isinstance(t, TensorType) or not isinstance(m, tuple) or t.dtype is None:
            raise DaskPlanError(f"torchlike.dask: output %{v.name} is a {t}, not a tensor of "
                                f"known dtype: a chunked graph returns tensors")
        outputs.append((_shape(v, None), t.dtype, m))
    roots: Dict[int, int] = {}
    classes: List[AxisClass] = []

    def cls(s: Optional[int]) -> Optional[int]:
        if s is None:
            return None
        r = an.sym.find(s)
        if r not in roots:
            roots[r] = len(classes)
            why = an.sym.why[r]
            classes.append(AxisClass(an.sym.size[r], why is not None, why))
        return roots[r]

    inputs = tuple(tuple(cls(s) for s in an.maps[v]) if isinstance(an.maps.get(v), tuple)
                   else None for v in g.inputs)
    outs = tuple(OutputPlan(shape, dtype, tuple(cls(s) for s in m))
                 for shape, dtype, m in outputs)
    writes = any(_in_place(n.kind) for n in g.all_nodes())
    return ChunkPlan(tuple(classes), inputs, outs, tuple(dict.fromkeys(an.notes)), packed,
                     writes)
