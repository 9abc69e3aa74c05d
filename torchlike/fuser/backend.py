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

Backends are looked up by name in ``BACKENDS`` (``register_backend`` adds one): ``cpu`` (Numba),
``cuda`` (CUDA C through CuPy on a GPU), ``cuda-emulated`` (the same CUDA C run on the CPU through
g++, for testing without a GPU) and ``interpreter``.  Each is created on first use; generating
code needs no device, running it needs ``available()``.

``analyze`` raises ``Unsupported(reason)`` for what no kernel can express (the executor falls
back and counts the reason) and ``InterpretInstead`` when the interpreter should run the group
to raise the user's own error (operands that do not broadcast, a dtype rule that refuses its
operands).
"""
from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np

from ..interpreter import constant_runtime_value
from ..ir.graph import Graph, Node, Value
from ..ops import registry
from ..ops.dtypes import ALL_DTYPES, Priority
from ..ops import elementwise_base as ew
from ..ops.elementwise_base import signature_dtypes

CONSTANT_CHUNK = "prim::ConstantChunk"
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

@dataclass
class ValueInfo:
    """``kind``: ``array`` (an input array, or chunk ``chunk=(k, n, dim)`` of one), ``scalar``
    (a Python-scalar input), ``const`` (a constant, value in ``const``), ``op`` (an op's array
    result), ``scalar_op`` (TorchScript scalar arithmetic: no array operand, a Python scalar).
    ``dtype``/``priority`` are what promotion sees; ``carrier`` the dtype the value holds in code
    (a Python float promotes as float32 but is a double)."""

    kind: str
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

    def template_text(self, language: str) -> str:
        """The op's ``language`` template for this compute dtype and these attributes, with
        its placeholders still in; ``Unsupported`` when the registry entry has none."""
        template = self.op.templates.get(language)
        if template is None:
            raise Unsupported(f"unsupported op {self.op.name}: no {language} template")
        text = ew.pick_template(template, self.compute, self.attr_values)
        if text is None:
            raise Unsupported(f"unsupported op {self.op.name} for dtype {self.compute}")
        return text


@dataclass
class GroupSpec:
    subgraph: Graph
    signature: Tuple
    values: Dict[Value, ValueInfo]
    ops: List[OpInfo]
    used_arrays: List[Value]                 # array/chunk values some op or output reads
    iter_shape: Tuple[int, ...]
    structure: str = ""

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
    if isinstance(v, np.ndarray):
        raise Unsupported("unsupported tensor constant")
    dt = _SCALAR_DTYPE.get(type(v))
    carrier = {"float32": "float64"}.get(dt, dt)
    return ValueInfo("const", dt, Priority.WRAPPED, carrier, const=v)


def analyze(sub: Graph, signature: Tuple, structure: Optional[str] = None) -> GroupSpec:
    """Dtypes, shapes and chunk indexing of every value of ``sub`` for ``signature``."""
    values: Dict[Value, ValueInfo] = {}
    for i, (param, s) in enumerate(zip(sub.inputs, signature)):
        if isinstance(s, ArraySpec):
            if s.dtype not in ALL_DTYPES:
                raise Unsupported(f"unsupported dtype {s.dtype}")
            prio = Priority.DIM if s.rank else Priority.ZERO_DIM
            values[param] = ValueInfo("array", s.dtype, prio, s.dtype, s.shape, input=i)
        elif s in _SCALAR_DTYPE:
            dt = _SCALAR_DTYPE[s]
            values[param] = ValueInfo("scalar", dt, Priority.WRAPPED,
                                      "float64" if s is float else dt, input=i)
        else:
            raise Unsupported(f"unsupported input type {s.__name__}")
    ops: List[OpInfo] = []
    used: Dict[Value, None] = {}
    for node in sub.nodes:
        if node.kind == "prim::Constant":
            values[node.output()] = _const_info(constant_runtime_value(node, np))
        elif node.kind == CONSTANT_CHUNK:
            _chunk(node, values)
        else:
            ops.append(_op(node, values, used))
    for out in sub.outputs:
        info = values[out]
        if info.kind == "scalar_op":
            raise Unsupported("unsupported scalar output of a fusion group")
        if info.kind == "array" and info.chunk is not None:
            used[out] = None
    shapes = [values[v].shape for v in used] + [values[o.node.output()].shape for o in ops]
    try:
        iter_shape = _broadcast(shapes)
    except ValueError:
        raise Unsupported("group values of shapes that do not broadcast together") from None
    return GroupSpec(sub, tuple(signature), values, ops, list(used), iter_shape,
                     structure or structure_key(sub))


def _chunk(node: Node, values: Dict[Value, ValueInfo]) -> None:
    src = values[node.inputs[0]]
    if src.kind != "array" or src.chunk is not None:
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
        values[out] = ValueInfo("array", src.dtype, Priority.DIM, src.dtype, shape,
                                input=src.input, chunk=(k, n, dim))


def _op(node: Node, values: Dict[Value, ValueInfo], used: Dict[Value, None]) -> OpInfo:
    op = registry.lookup(node.kind)
    if op is None or not op.is_elementwise or len(node.outputs) != 1:
        raise Unsupported(f"unsupported op {node.kind}")
    raw = [values[v].const if values[v].kind == "const" else v for v in node.inputs]
    try:
        args = ew.normalize_args(op, raw)
    except Exception:
        raise InterpretInstead() from None
    items = [a if isinstance(a, Value) else _const_info(a) for a in args]
    operands, attrs, attr_values = [], {}, {}
    info = lambda r: r if isinstance(r, ValueInfo) else values[r]  # noqa: E731
    for p, ref in zip(op.params, items):
        i = info(ref)
        if p.is_operand:
            operands.append(None if i.kind == "const" and i.const is None else ref)
            if i.kind == "array":
                used[ref] = None
        else:
            attrs[p.name] = ref
            if i.kind == "const":
                attr_values[p.name] = i.const
            elif i.kind not in ("scalar", "scalar_op"):
                raise Unsupported(f"unsupported non-constant attribute {p.name} of {node.kind}")
    scalar = not any(info(r).kind in ("array", "op") for r in operands if r is not None)
    if op.precheck is not None:
        _precheck(op, node, operands, attrs, attr_values, info)
    keep = op.kept
    try:
        if scalar:
            compute, out = ew.scalar_signature_dtypes(
                op, [None if r is None else info(r).dtype for r in operands], attr_values)
            shape = ()
        else:
            infos = [None if r is None else (info(r).dtype, info(r).priority) for r in operands]
            compute, out = signature_dtypes(op, infos, attr_values)
            compute = ew.compute_dtype_of(compute)
            shape = _broadcast([info(r).shape for r in operands if r is not None])
    except Exception:
        raise InterpretInstead() from None
    for dt in (compute, out):
        if dt not in ALL_DTYPES:
            raise Unsupported(f"unsupported dtype {dt}")
    op_dtypes = [None if r is None else (info(r).carrier if name in keep else compute)
                 for name, r in zip(op.operand_names, operands)]
    if scalar:
        promo = {"float64": "float32"}.get(out, out)
        values[node.output()] = ValueInfo("scalar_op", promo, Priority.WRAPPED, out)
    else:
        prio = Priority.DIM if shape else Priority.ZERO_DIM
        values[node.output()] = ValueInfo("op", out, prio, out, shape)
    return OpInfo(node, op, operands, attrs, attr_values, compute, op_dtypes, out, scalar)


def _precheck(op, node, operands, attrs, attr_values, info) -> None:
    """Run the op's value-dependent check on stand-ins: arrays become 0-d arrays of their
    dtype, constants are themselves; a runtime scalar's value is unknown when compiling."""
    def stand_in(ref):
        if ref is None:
            return None
        i = info(ref)
        if i.kind in ("array", "op"):
            return np.zeros((), dtype=i.dtype if i.dtype != "bfloat16" else "float32")
        if i.kind == "const":
            return i.const
        raise Unsupported(f"unsupported value-dependent check of {node.kind} on a runtime scalar")
    if any(info(r).kind != "const" for r in attrs.values()):
        raise Unsupported(f"unsupported value-dependent check of {node.kind} on a runtime scalar")
    try:
        op.precheck([stand_in(r) for r in operands], dict(attr_values))
    except Exception:
        raise InterpretInstead() from None


# -- the backend interface -----------------------------------------------------------------------

def output_plan(spec: "GroupSpec", written: Sequence[Value]) -> List[Tuple[int, Any]]:
    """How a launcher produces each group output, given the values its kernel writes (in
    order): ``(0, j)`` the kernel's j-th output array, ``(1, i)`` the group's input ``i``
    passed straight through, ``(2, value)`` a constant."""
    slot = {v: j for j, v in enumerate(written)}
    plan: List[Tuple[int, Any]] = []
    for v in spec.outputs:
        info = spec.values[v]
        if v in slot:
            plan.append((0, slot[v]))
        elif info.kind in ("array", "scalar"):
            plan.append((1, info.input))
        else:
            plan.append((2, constant_runtime_value(v.node, np)))
    return plan


@dataclass(frozen=True)
class KernelSource:
    """Generated code: ``name`` (the kernel function), ``source`` (the whole module text),
    ``key`` (the kernel key it was generated for), ``info`` (whatever ``compile`` needs)."""

    name: str
    source: str
    key: Tuple
    info: Dict[str, Any] = field(default_factory=dict, compare=False, hash=False)


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


BACKENDS: Dict[str, Callable[[], Backend]] = {}
_instances: Dict[str, Backend] = {}


def register_backend(name: str, factory: Callable[[], Backend]) -> None:
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


# Factories import lazily: ``import torchlike`` needs neither numba nor cupy, and a backend whose
# package is missing reports it through ``available()`` (the executor falls back, counting why).
def _cpu() -> Backend:
    from ..cpu_backend import CpuBackend
    return CpuBackend()


def _cuda() -> Backend:
    from ..cuda_backend.runtime import CudaBackend
    return CudaBackend()


def _cuda_emulated() -> Backend:
    from ..cuda_backend.emulate import EmulatedCudaBackend
    return EmulatedCudaBackend()


register_backend("cpu", _cpu)
register_backend("cuda", _cuda)
register_backend("cuda-emulated", _cuda_emulated)
register_backend("interpreter", InterpreterBackend)
