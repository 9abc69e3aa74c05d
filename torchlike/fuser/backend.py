"""What a code generator sees of a fusion group, and the small interface every backend implements.

The executor describes each runtime input (``signature_of``), then ``analyze`` walks the group's
subgraph once for that signature: the dtype each op computes and produces (the registry's dtype
rules, PyTorch's promotion), the exact shape of every value, where chunks index their input.
A backend then turns that ``GroupSpec`` into a kernel::

    spec = analyze(subgraph, signature_of(args))
    key = backend.kernel_key(spec)      # what the code depends on: ranks, size-1 dims, layouts,
                                        # dtypes -- never sizes
    src = backend.generate(spec)        # KernelSource(name, source, key, info)
    kernel = backend.compile(src)       # kernel.bind(spec) -> launcher(args) -> outputs

Backends are looked up by name (``get_backend_impl``) in a registry that ``register_backend``
fills.  The fuser itself registers only ``interpreter`` and never imports a backend: the table
of the others -- ``cpu`` (Numba), ``cuda`` (CUDA C through CuPy on a GPU), ``cuda-emulated``
(the same CUDA C run on the CPU through g++, for testing without a GPU) -- is
``torchlike.backends``, at the top of the package, which ``import torchlike`` installs.  Each is
created on first use; generating code needs no device, running it needs ``available()``.

``analyze`` raises ``Unsupported(reason)`` for what no kernel can express (the executor falls
back and counts the reason) and ``InterpretInstead`` when the interpreter should run the group
to raise the user's own error (operands that do not broadcast, a dtype rule that refuses its
operands).
"""
from __future__ import annotations

import enum
import hashlib
import math
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..interpreter import constant_runtime_value
from ..ir.graph import Graph, Node, Value
from ..ops import elementwise_base as ew
from ..ops import registry
from ..ops.dtypes import ALL_DTYPES, Priority
from ..ops.elementwise_base import signature_dtypes
from .group_nodes import FUSED_CONCAT
from .row_reduce import FLOAT_DTYPES, ROW_REDUCTIONS, RedInfo, parse_reduction

CONSTANT_CHUNK = "prim::ConstantChunk"
BROADCASTING_CHUNK = "prim::BroadcastingChunk"  # chunk_motion.py's
_SCALAR_DTYPE = {bool: "bool", int: "int64", float: "float32"}


class Unsupported(Exception):
    """No kernel for this group and signature; ``reason`` is the stable fallback reason."""

    def __init__(self, reason: str):
        super().__init__(reason)
        self.reason = reason


class InterpretInstead(Exception):
    """The interpreter must run the group: it raises the error the user should see."""


# -- runtime signature ---------------------------------------------------------------------------

@dataclass(frozen=True)
class ArraySpec:
    """One array input: dtype name, exact shape and strides (bytes), numba-style layout
    (``C``, ``F`` or ``A``), writeability and array module (``numpy``/``cupy``)."""

    dtype: str
    shape: Tuple[int, ...]
    strides: Tuple[int, ...]
    layout: str
    writeable: bool
    module: str

    @property
    def rank(self) -> int:
        return len(self.shape)

    @property
    def mask(self) -> Tuple[bool, ...]:
        """Which dims have size 1 (they are indexed at 0: broadcasting)."""
        return tuple(s == 1 for s in self.shape)

    def layout_key(self) -> Tuple:
        return (self.dtype, self.rank, self.mask, self.layout, self.writeable, self.module)


def spec_of(arg: Any):
    """ArraySpec for an array; the Python type for a scalar (its value is a kernel argument)."""
    if hasattr(arg, "shape") and hasattr(arg, "strides") and not isinstance(arg, np.generic):
        f = arg.flags
        layout = "C" if f.c_contiguous else "F" if f.f_contiguous else "A"
        module = type(arg).__module__.split(".")[0]
        return ArraySpec(str(arg.dtype), tuple(arg.shape), tuple(arg.strides), layout,
                         bool(getattr(f, "writeable", True)), module)
    return type(arg)


def signature_of(args: Sequence[Any]) -> Tuple:
    return tuple(spec_of(a) for a in args)


# -- the analysed group --------------------------------------------------------------------------

class ValueKind(str, enum.Enum):
    """What a subgraph value is (a ``str`` enum: ``ValueKind.CONST == "const"``)."""

    ARRAY = "array"          # an input array, or chunk ``chunk=(k, n, dim)`` of one
    SCALAR = "scalar"        # a Python-scalar input
    CONST = "const"          # a constant, value in ``const``
    OP = "op"                # an op's array result
    SCALAR_OP = "scalar_op"  # TorchScript scalar arithmetic: no array operand, a Python scalar
    CONCAT = "concat"        # prim::FusedConcat of op results: ``GroupSpec.concats``

    __hash__ = str.__hash__  # equal to its string, so hashed like it too


@dataclass
class ValueInfo:
    """One value of the group (``kind``: see ``ValueKind``).  ``dtype``/``priority`` are what
    promotion sees; ``carrier`` the dtype the value holds in code (a Python float promotes as
    float32 but is a double)."""

    kind: ValueKind
    dtype: Optional[str]
    priority: Priority
    carrier: Optional[str] = None
    shape: Tuple[int, ...] = ()
    input: Optional[int] = None
    chunk: Optional[Tuple[int, int, int]] = None
    const: Any = None

    @property
    def mask(self) -> Tuple[bool, ...]:
        return tuple(s == 1 for s in self.shape)


_ARRAYS = (ValueKind.ARRAY, ValueKind.OP)

Ref = Union[Value, ValueInfo]  # an op argument: a subgraph value, or a literal (ValueInfo const)


@dataclass
class OpInfo:
    node: Node
    op: registry.OpDef
    operands: List[Optional[Ref]]            # in the op's operand order (None: absent)
    attrs: Dict[str, Ref]                    # attribute name -> its value
    attr_values: Dict[str, Any]              # the constant ones' Python values
    compute: str                             # the dtype code computes in (half -> float32)
    operand_dtypes: List[Optional[str]]      # the dtype each operand is cast to
    out_dtype: str
    scalar: bool = False                     # TorchScript scalar arithmetic
    dtypes: Optional[ew.OpDtypes] = None     # the operands' own dtypes (ops that see them)
    half: Optional[str] = None               # the half common dtype operands and
                                            # ``op.half_attrs`` round to first (None: none)

    def template_constants(self) -> Dict[str, Any]:
        """What a callable template sees: the constant attributes' values and the constant
        operands' (pow specializes ``x ** 3`` to products; the value is in the kernel source,
        so kernels for different constants are different cache entries)."""
        consts = dict(self.attr_values)
        for name, r in zip(self.op.operand_names, self.operands, strict=True):
            if isinstance(r, ValueInfo) and r.kind == ValueKind.CONST:
                consts[name] = r.const
        if self.op.sees_dtypes:
            consts["dtypes"] = self.dtypes
        return consts

    def template_text(self, language: str) -> str:
        """The op's ``language`` template for this compute dtype and these attributes, with
        its placeholders still in; ``Unsupported`` when the registry entry has none."""
        template = self.op.templates.get(language)
        if template is None:
            raise Unsupported(f"unsupported op {self.op.name}: no {language} template")
        text = ew.pick_template(template, self.compute, self.template_constants())
        if text is None:
            raise Unsupported(f"unsupported op {self.op.name} for dtype {self.compute}")
        return text


@dataclass(frozen=True)
class ConcatInfo:
    """A ``prim::FusedConcat`` output: its pieces (op results, one dtype) along ``dim``."""

    dim: int
    pieces: Tuple[Value, ...]


@dataclass
class GroupSpec:
    subgraph: Graph
    signature: Tuple
    values: Dict[Value, ValueInfo]
    ops: List[OpInfo]
    used_arrays: List[Value]                 # array/chunk values some op or output reads
    iter_shape: Tuple[int, ...]
    structure: str = ""
    reductions: List[Any] = field(default_factory=list)  # row_reduce.RedInfo, in node order
    rows: Any = None                      # row_reduce.RowPlan: set by a backend's check
    concats: Dict[Value, ConcatInfo] = field(default_factory=dict)  # by the CONCAT output

    @property
    def outputs(self) -> List[Value]:
        return self.subgraph.outputs

    def info(self, ref: Ref) -> ValueInfo:
        return ref if isinstance(ref, ValueInfo) else self.values[ref]

    def input_key(self) -> Tuple:
        return tuple(s.layout_key() if isinstance(s, ArraySpec) else s.__name__
                     for s in self.signature)


def structure_key(sub: Graph) -> str:
    """A digest of the subgraph's structure (kinds, attributes, wiring), types left out."""
    ids = {v: i for i, v in enumerate(sub.inputs)}
    parts = [f"inputs {len(sub.inputs)}"]
    for n in sub.nodes:
        attrs = sorted((k, repr(a)) for k, a in n.attrs.items() if not isinstance(a, Graph))
        parts.append(f"{n.kind} {attrs} {[ids[v] for v in n.inputs]} {len(n.outputs)}")
        for o in n.outputs:
            ids[o] = len(ids)
    parts.append(f"return {[ids[v] for v in sub.outputs]}")
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()[:32]


def _broadcast(shapes: Sequence[Tuple[int, ...]]) -> Tuple[int, ...]:
    return tuple(np.broadcast_shapes(*shapes)) if shapes else ()


def _const_info(v: Any) -> ValueInfo:
    if isinstance(v, np.ndarray):  # a 0-d tensor of its own dtype (Float(): torch.tensor(0.5))
        if v.ndim != 0 or (dt := str(v.dtype)) not in ALL_DTYPES:
            raise Unsupported("unsupported tensor constant")
        return ValueInfo(ValueKind.CONST, dt, Priority.ZERO_DIM, dt, const=v.item())
    dt = _SCALAR_DTYPE.get(type(v))
    carrier = {"float32": "float64"}.get(dt, dt)
    return ValueInfo(ValueKind.CONST, dt, Priority.WRAPPED, carrier, const=v)


def analyze(sub: Graph, signature: Tuple, structure: Optional[str] = None) -> GroupSpec:
    """Dtypes, shapes and chunk indexing of every value of ``sub`` for ``signature``."""
    values: Dict[Value, ValueInfo] = {}
    for i, (param, s) in enumerate(zip(sub.inputs, signature, strict=False)):
        if isinstance(s, ArraySpec):
            if s.dtype not in ALL_DTYPES:
                raise Unsupported(f"unsupported dtype {s.dtype}")
            prio = Priority.DIM if s.rank else Priority.ZERO_DIM
            values[param] = ValueInfo(ValueKind.ARRAY, s.dtype, prio, s.dtype, s.shape, input=i)
        elif s in _SCALAR_DTYPE:
            dt = _SCALAR_DTYPE[s]
            values[param] = ValueInfo(ValueKind.SCALAR, dt, Priority.WRAPPED,
                                      "float64" if s is float else dt, input=i)
        else:
            raise Unsupported(f"unsupported input type {s.__name__}")
    ops: List[OpInfo] = []
    reductions = []
    concats: Dict[Value, ConcatInfo] = {}
    used: Dict[Value, None] = {}
    for node in sub.nodes:
        if node.kind == "prim::Constant":
            values[node.output()] = _const_info(constant_runtime_value(node, np))
        elif node.kind == CONSTANT_CHUNK:
            _chunk(node, values)
        elif node.kind == BROADCASTING_CHUNK:
            _broadcasting_chunk(node, values)
        elif node.kind == FUSED_CONCAT:
            concats[node.output()] = _concat(node, values)
        elif node.kind in ROW_REDUCTIONS:
            reductions.append(_reduction(node, values))
            if values[node.inputs[0]].kind == ValueKind.ARRAY:
                used[node.inputs[0]] = None
        else:
            ops.append(_op(node, values, used))
    for out in sub.outputs:
        info = values[out]
        if info.kind == ValueKind.SCALAR_OP:
            raise Unsupported("unsupported scalar output of a fusion group")
        if info.kind == ValueKind.ARRAY and info.chunk is not None:
            used[out] = None
    cuts = {}
    for v in used:  # the kernels size an input's chunks once: one way of cutting each input
        c = values[v].chunk
        if c is not None and cuts.setdefault(values[v].input, c[1:]) != c[1:]:
            raise Unsupported("unsupported chunks of one input along two dims or counts")
    if reductions:
        if concats:
            raise Unsupported("unsupported prim::FusedConcat in a group with a reduction")
        # the backend decides whether it has a kernel (the CPU one: ``row_plan.plan_rows``)
        return GroupSpec(sub, tuple(signature), values, ops, list(used), reductions[0].in_shape,
                         structure or structure_key(sub), reductions)
    shapes = [values[v].shape for v in used] + [values[o.node.output()].shape for o in ops]
    try:
        iter_shape = _broadcast(shapes)
    except ValueError:
        raise Unsupported("group values of shapes that do not broadcast together") from None
    return GroupSpec(sub, tuple(signature), values, ops, list(used), iter_shape,
                     structure or structure_key(sub), concats=concats)


def _concat(node: Node, values: Dict[Value, ValueInfo]) -> ConcatInfo:
    """``prim::FusedConcat``'s ``ConcatInfo``; its output's ``ValueInfo`` goes into ``values``.
    Pieces the kernel does not compute, or of several dtypes (cat promotes), are not handled;
    shapes that do not concatenate get the interpreter's (aten::cat's) error."""
    pieces = [values[v] for v in node.inputs]
    if any(p.kind != ValueKind.OP for p in pieces) or len({p.dtype for p in pieces}) != 1:
        raise Unsupported("unsupported prim::FusedConcat of inputs, constants or mixed dtypes")
    shapes = [p.shape for p in pieces]
    rank, dim = len(shapes[0]), node.attrs.get("dim", 0)
    if rank == 0 or any(len(s) != rank for s in shapes) or not -rank <= dim < rank:
        raise InterpretInstead()
    d = dim % rank
    if any(s[:d] + s[d + 1:] != shapes[0][:d] + shapes[0][d + 1:] for s in shapes):
        raise InterpretInstead()
    p = pieces[0]
    shape = shapes[0][:d] + (sum(s[d] for s in shapes),) + shapes[0][d + 1:]
    values[node.output()] = ValueInfo(ValueKind.CONCAT, p.dtype, p.priority, p.carrier, shape)
    return ConcatInfo(d, tuple(node.inputs))


def _reduction(node: Node, values: Dict[Value, Any]) -> RedInfo:
    """The reduction's ``RedInfo``; its output's ``ValueInfo`` goes into ``values``."""
    red = parse_reduction(node)
    if isinstance(red, str):
        raise Unsupported(f"unsupported reduction {node.kind}: {red}")
    x = node.inputs[0]
    info = values[x]
    if info.kind not in (ValueKind.ARRAY, ValueKind.OP) or info.chunk is not None:
        raise Unsupported(f"unsupported reduction {node.kind} of a scalar or chunk")
    if info.dtype not in FLOAT_DTYPES:
        raise Unsupported(f"unsupported reduction {node.kind} of dtype {info.dtype}")
    n = len(info.shape)
    if n == 0:
        raise Unsupported(f"unsupported reduction {node.kind} of a 0-d tensor")
    if not all(-n <= d < n for d in red.dims) or \
            len({d % n for d in red.dims}) != len(red.dims):
        raise InterpretInstead()  # the interpreter raises PyTorch's error
    dims = tuple(range(n)) if red.all_dims else tuple(sorted(d % n for d in red.dims))
    k = len(dims)
    if (node.kind in ("aten::amax", "aten::amin", "aten::max", "aten::min", "aten::argmax",
                      "aten::argmin") or
            red.ord == math.inf) and math.prod(info.shape[d] for d in dims) == 0:
        raise InterpretInstead()  # PyTorch's error for an empty reduction
    kept = tuple(1 if d in dims else s for d, s in enumerate(info.shape)) if red.keepdim else \
        tuple(s for d, s in enumerate(info.shape) if d not in dims)
    out_shape = info.shape if red.per_element else kept
    prio = Priority.DIM if out_shape else Priority.ZERO_DIM
    arg_only = node.kind in ("aten::argmax", "aten::argmin")
    values[node.outputs[0]] = ValueInfo(ValueKind.OP, "int64" if arg_only else info.dtype, prio,
                                        "int64" if arg_only else info.dtype, out_shape)
    if len(node.outputs) == 2:  # max.dim / min.dim: the indices
        values[node.outputs[1]] = ValueInfo(ValueKind.OP, "int64", prio, "int64", out_shape)
    acc = "float64" if info.dtype == "float64" else "float32"
    trail = dims == tuple(range(n - k, n))  # the row case: RedInfo.dims left () as before
    return RedInfo(node, red, x, k, info.shape, info.dtype, acc, () if trail else dims)


def _broadcasting_chunk(node: Node, values: Dict[Value, ValueInfo]) -> None:
    """``prim::BroadcastingChunk`` (``chunk_motion.py``): each input broadcast along the dim is
    passed whole, the others become chunk views (as ``prim::ConstantChunk``'s)."""
    srcs = [values[v] for v in node.inputs]
    if any(s.kind != ValueKind.ARRAY or s.chunk is not None for s in srcs):
        raise Unsupported("unsupported prim::BroadcastingChunk of a value computed in the group")
    n, dim = int(node.attrs["chunks"]), int(node.attrs["dim"])
    rank = max(len(s.shape) for s in srcs)
    if rank == 0 or not -rank <= dim < rank or n <= 0 or len(node.outputs) != n * len(srcs):
        raise InterpretInstead()
    d = dim % rank
    extent = lambda s: s.shape[d - rank + len(s.shape)] if d - rank + len(s.shape) >= 0 else 1  # noqa: E731
    size = max(extent(s) for s in srcs)
    if size % n:
        raise Unsupported("unsupported prim::BroadcastingChunk into unequal pieces")
    for j, src in enumerate(srcs):
        outs = node.outputs[j * n:(j + 1) * n]
        if extent(src) == 1 and size != 1 or d - rank + len(src.shape) < 0:
            for out in outs:
                values[out] = src
            continue
        dx = d - rank + len(src.shape)
        shape = src.shape[:dx] + (src.shape[dx] // n,) + src.shape[dx + 1:]
        for k, out in enumerate(outs):
            values[out] = ValueInfo(ValueKind.ARRAY, src.dtype, src.priority, src.dtype, shape,
                                    input=src.input, chunk=(k, n, dx))


def _chunk(node: Node, values: Dict[Value, ValueInfo]) -> None:
    src = values[node.inputs[0]]
    if src.kind != ValueKind.ARRAY or src.chunk is not None:
        raise Unsupported("unsupported prim::ConstantChunk of a value computed in the group")
    n, dim = int(node.attrs["chunks"]), int(node.attrs["dim"])
    rank = len(src.shape)
    if rank == 0 or not -rank <= dim < rank or n <= 0:
        raise InterpretInstead()
    dim %= rank
    if src.shape[dim] % n or len(node.outputs) != n:
        raise Unsupported("unsupported prim::ConstantChunk into unequal pieces")
    shape = src.shape[:dim] + (src.shape[dim] // n,) + src.shape[dim + 1:]
    for k, out in enumerate(node.outputs):
        values[out] = ValueInfo(ValueKind.ARRAY, src.dtype, Priority.DIM, src.dtype, shape,
                                input=src.input, chunk=(k, n, dim))


def _op(node: Node, values: Dict[Value, ValueInfo], used: Dict[Value, None]) -> OpInfo:
    op = registry.lookup(node.kind)
    if op is None or not op.is_elementwise or len(node.outputs) != 1:
        raise Unsupported(f"unsupported op {node.kind}")
    raw = [values[v].const if values[v].kind == ValueKind.CONST else v for v in node.inputs]
    try:
        args = ew.normalize_args(op, raw)
    except Exception:
        raise InterpretInstead() from None
    # a constant input keeps its ValueInfo (a 0-d tensor constant promotes as one, not as the
    # Python scalar of its value); defaults filled in are wrapped scalars
    ins = [values[v] for v in node.inputs] if op.normalize is None else []
    items = [a if isinstance(a, Value) else ins[k] if k < len(ins) and ins[k].kind ==
             ValueKind.CONST else _const_info(a) for k, a in enumerate(args)]
    operands, attrs, attr_values = [], {}, {}
    info = lambda r: r if isinstance(r, ValueInfo) else values[r]  # noqa: E731
    for p, ref in zip(op.params, items, strict=False):
        i = info(ref)
        if p.is_operand:
            operands.append(None if i.kind == ValueKind.CONST and i.const is None else ref)
            if i.kind == ValueKind.ARRAY:
                used[ref] = None
        else:
            attrs[p.name] = ref
            if i.kind == ValueKind.CONST:
                attr_values[p.name] = i.const
            elif i.kind not in (ValueKind.SCALAR, ValueKind.SCALAR_OP):
                raise Unsupported(f"unsupported non-constant attribute {p.name} of {node.kind}")
    scalar = not any(info(r).kind in _ARRAYS for r in operands if r is not None)
    if op.precheck is not None:
        _precheck(op, node, operands, attrs, attr_values, info)
    keep = op.kept
    try:
        if scalar:
            compute, out = ew.scalar_signature_dtypes(
                op, [None if r is None else info(r).dtype for r in operands], attr_values)
            shape, through, half = (), [None] * len(operands), None
        else:
            infos = [None if r is None else (info(r).dtype, info(r).priority) for r in operands]
            compute, out = signature_dtypes(op, infos, attr_values)
            through = ew.rounded_through(op, infos, compute)
            half = compute if compute in ew.HALF_DTYPES else None
            compute = ew.compute_dtype_of(compute)
            shape = _broadcast([info(r).shape for r in operands if r is not None])
    except Exception:
        raise InterpretInstead() from None
    for dt in (compute, out):
        if dt not in ALL_DTYPES:
            raise Unsupported(f"unsupported dtype {dt}")
    if op.checked_scalars and not scalar:
        _check_scalars(op, node, operands, out, info)
    # an operand rounded to the half common dtype first is a float16 value held in float32
    op_dtypes = [None if r is None else (info(r).carrier if name in keep else rounded or compute)
                 for name, r, rounded in zip(op.operand_names, operands, through, strict=True)]
    dtypes = ew.OpDtypes(tuple(None if r is None else (
        info(r).dtype if not scalar else {"float32": "float64"}.get(info(r).dtype, info(r).dtype),
        info(r).priority) for r in operands), out)
    if scalar:
        promo = {"float64": "float32"}.get(out, out)
        values[node.output()] = ValueInfo(ValueKind.SCALAR_OP, promo, Priority.WRAPPED, out)
    else:
        prio = Priority.DIM if shape else Priority.ZERO_DIM
        values[node.output()] = ValueInfo(ValueKind.OP, out, prio, out, shape)
    return OpInfo(node, op, operands, attrs, attr_values, compute, op_dtypes, out, scalar, dtypes,
                  half)


def _check_scalars(op, node, operands, out: str, info) -> None:
    """``op.checked_scalars``: a constant Python int that does not fit the integer result
    raises where the interpreter runs the node (naming it); a runtime int scalar meeting a
    narrower integer result is not compiled (its check would be per call)."""
    consts = []
    for name, r in zip(op.operand_names, operands, strict=True):
        i = None if r is None else info(r)
        if i is not None and i.kind == ValueKind.SCALAR and name in op.checked_scalars and \
                i.dtype == "int64" and out in ("uint8", "int8", "int16", "int32"):
            raise Unsupported(f"unsupported runtime int scalar {name} of {node.kind} on {out} "
                              f"(PyTorch checks it for overflow)")
        consts.append(i.const if i is not None and i.kind == ValueKind.CONST else None)
    try:
        ew.check_scalars_fit(op, consts, out)
    except Exception:
        raise InterpretInstead() from None


def _precheck(op, node, operands, attrs, attr_values, info) -> None:
    """Run the op's value-dependent check on stand-ins: arrays become zeros of their dtype and
    shape (a broadcast view of one zero: nothing is allocated), constants are themselves; a
    runtime scalar's value is unknown when compiling."""
    def stand_in(ref):
        if ref is None:
            return None
        i = info(ref)
        if i.kind in _ARRAYS:
            zero = np.zeros((), dtype=i.dtype if i.dtype != "bfloat16" else "float32")
            return zero if i.shape is None else np.broadcast_to(zero, i.shape)
        if i.kind == ValueKind.CONST:
            return i.const
        raise Unsupported(f"unsupported value-dependent check of {node.kind} on a runtime scalar")
    if any(info(r).kind != ValueKind.CONST for r in attrs.values()):
        raise Unsupported(f"unsupported value-dependent check of {node.kind} on a runtime scalar")
    try:
        op.precheck([stand_in(r) for r in operands], dict(attr_values))
    except Exception:
        raise InterpretInstead() from None


# -- the backend interface -----------------------------------------------------------------------

@dataclass(frozen=True)
class KernelInfo:
    """What a backend's ``compile`` and launchers need to know about generated code beyond its
    text; each backend extends it (``NumbaKernelInfo``, ``CudaKernelInfo``).  ``uses_err``: the
    kernel takes the integer-division-by-zero flag ``err``."""

    uses_err: bool = False

    def __getitem__(self, name: str) -> Any:
        """``info["path"]``: the mapping-style access of the untyped dict this replaced."""
        try:
            return getattr(self, name)
        except AttributeError:
            raise KeyError(name) from None


@dataclass(frozen=True)
class KernelSource:
    """Generated code: ``name`` (the kernel function), ``source`` (the whole module text),
    ``key`` (the kernel key it was generated for), ``info`` (what ``compile`` needs)."""

    name: str
    source: str
    key: Tuple
    info: KernelInfo = field(default_factory=KernelInfo, compare=False, hash=False)


class Backend:
    """A code generator plus compiler.  Subclasses override every method."""

    name = "abstract"

    def available(self) -> Tuple[bool, str]:
        """(True, "") or (False, why not)."""
        raise NotImplementedError

    def check(self, spec: GroupSpec) -> Optional[str]:
        """A fallback reason if this backend cannot run ``spec`` (wrong device, dtype...)."""
        return None

    def kernel_key(self, spec: GroupSpec) -> Tuple:
        raise NotImplementedError

    def generate(self, spec: GroupSpec) -> KernelSource:
        raise NotImplementedError

    def compile(self, source: KernelSource):
        """A kernel object: ``kernel.bind(spec)`` returns ``launcher(args) -> outputs`` for
        one exact signature, with the outputs' shapes and dtypes precomputed."""
        raise NotImplementedError


class InterpreterBackend(Backend):
    """Never compiles: the executor interprets every group (nothing is counted)."""

    name = "interpreter"

    def available(self) -> Tuple[bool, str]:
        return True, ""


# -- the registry (filled from the top: ``torchlike.backends``) ----------------------------------

BACKENDS: Dict[str, Callable[[], Backend]] = {}
_instances: Dict[str, Backend] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
    """Make ``factory()`` the backend called ``name`` (replacing any previous one); it is
    called on first use and may raise ImportError (the backend is then missing)."""
    BACKENDS[name] = factory
    _instances.pop(name, None)


def get_backend_impl(name: str) -> Optional[Backend]:
    """The backend called ``name`` (created on first use), or None if there is none or its
    module cannot be imported here."""
    backend = _instances.get(name)
    if backend is None and name in BACKENDS:
        try:
            backend = _instances[name] = BACKENDS[name]()
        except ImportError:
            return None
    return backend


register_backend("interpreter", InterpreterBackend)
