"""The differential harness: every elementwise registry op, on every backend, against one reference.

A plain helper module (``from differential import ...``; pytest puts ``tests/`` on ``sys.path``,
as for ``corpus_utils``).  Its pieces, in the order a test uses them:

* ``op_cases()``: the registry's elementwise ops (``registry_ops()``) times their attribute
  variants (``ATTRS``), as ``OpCase`` objects with stable ids (``add-1``).  A new registry entry
  is covered by every test built on this list with no change here.
* ``special_values`` / ``value_grid`` / ``layout_operands``: inputs built from special values
  (NaN, +-inf, -0.0, huge and tiny floats, integer extremes); the first two operands cover every
  pair of special values, in each of ``LAYOUTS``.
* ``registry_group``: ONE ``prim::FusionGroup`` holding a node per op case that accepts the
  dtype (one kernel per dtype x layout keeps compile counts low).
* ``run(backend, node, args)``: the group on ``"interpreter"`` (the reference), ``"cpu"``
  (Numba, through the executor in strict mode, with the stats counters proving that a compiled
  kernel ran) or ``"cuda-emulated"`` (the CUDA C kernel run on the CPU through g++).
* ``compare`` / ``assert_same``: the ONE comparison rule (dtype, shape, NaN positions, ints and
  bools exact, floats within a tolerance, the sign of zero).
* ``Matrix``: a backend's dtype x layout cases, run lazily and shared by per-case tests (did the
  kernel compile and run?) and per-op tests (do this op's outputs match?).

Reference checks against another implementation of single ops (PyTorch, or an op's numpy
formula) live in ``differential_reference``, on the same values and the same ``compare``.
"""
from __future__ import annotations

import math
import os
import shutil
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np
import pytest

from torchlike.errors import FusionError, IntegerDivisionByZeroError
from torchlike.fuser import config, executor
from torchlike.fuser.stats import reset_stats, stats
from torchlike.interpreter import Interpreter
from torchlike.ir.graph import Graph, Node
from torchlike.ir.types import DTYPE_TO_SCALAR_TYPE_ENUM, TENSOR, type_of_python_value
from torchlike.ops import elementwise_ops, get
from torchlike.ops.elementwise_base import kept_operands
from torchlike.ops.registry import REQUIRED, OpDef

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]
LAYOUTS = ["contiguous", "misaligned", "transposed", "sliced", "broadcast", "mixed", "0-d",
           "empty"]
BACKENDS = ("interpreter", "cpu", "cuda-emulated")
IN_CI = os.environ.get("CI") == "true"  # there a missing compiler fails instead of skipping

# -- op cases -------------------------------------------------------------------------------------

# Attribute variants: ops whose attributes are required or worth varying.  Every other op runs
# with its schema defaults (a required attribute without an entry gets a plain value).
ATTRS: Dict[str, List[Dict[str, Any]]] = {
    # the lowering's check of a layer norm's input (-1: the input's own last size)
    "torchlike::norm_input": [{"normalized_shape": [-1], "op": "layer_norm"}],
    "aten::div": [{"rounding_mode": None}, {"rounding_mode": "trunc"}, {"rounding_mode": "floor"}],
    "aten::add": [{"alpha": 1}, {"alpha": 2}],
    "aten::sub": [{"alpha": 1}, {"alpha": 3}],
    "aten::rsub": [{"alpha": 1}, {"alpha": 2}],
    "aten::gelu": [{"approximate": "none"}, {"approximate": "tanh"}],
    "aten::round": [{"decimals": 0}, {"decimals": 2}, {"decimals": -1}],
    "aten::softplus": [{}, {"beta": 2, "threshold": 5}],
    "aten::elu": [{}, {"alpha": 0.5, "scale": 2.0, "input_scale": 1.5}],
    "aten::threshold": [{"threshold": 0.5, "value": -2}],
    "aten::hardtanh": [{}, {"min_val": -2, "max_val": 3}],
    "aten::leaky_relu": [{}, {"negative_slope": 0.2}],
    "aten::addcmul": [{"value": 1}, {"value": 2}],
    "aten::addcdiv": [{"value": 1}, {"value": 2}],
    "aten::full_like": [{"fill_value": 3}],
    "aten::to": [{"dtype": DTYPE_TO_SCALAR_TYPE_ENUM[d]}
                 for d in ("float32", "int32", "bool", "float16", "uint8")],
    "aten::zeros_like": [{}, {"dtype": DTYPE_TO_SCALAR_TYPE_ENUM["float64"]}],
    # ``other`` given as a dtype (a ScalarType int): a kernel casts to it (tensors: no kernel)
    "aten::type_as": [{"other": DTYPE_TO_SCALAR_TYPE_ENUM["int8"]}],
    "aten::dropout": [{"p": 0.5, "train": False}],
    "aten::celu": [{}, {"alpha": 0.5}],
    "aten::hardshrink": [{}, {"lambd": 1.5}],
    "aten::softshrink": [{}, {"lambd": 1.5}],
    "aten::rrelu": [{}, {"lower": 0.25, "upper": 0.5}],
    "aten::alpha_dropout": [{"p": 0.5, "train": False}],
    "aten::feature_dropout": [{"p": 0.5, "train": False}],
    "aten::feature_alpha_dropout": [{"p": 0.5, "train": False}],
    "aten::logit": [{}, {"eps": 1e-6}],
    "aten::logit_backward": [{}, {"eps": 1e-6}],
    # -0.5 truncates to 0 for integers (and refuses uint8, as ATen's Scalar::to<uint8_t>)
    "aten::threshold_backward": [{"threshold": 0.5}, {"threshold": -0.5}],
    # 0.5: a float16 g * m above 65504 is inf before the scaling, as in PyTorch's two ops
    "aten::native_dropout_backward": [{"scale": 2.0}, {"scale": 0.5}],
    "aten::nan_to_num": [{}, {"nan": 1.5, "posinf": 100.0, "neginf": -1e30}],
}


@dataclass(frozen=True)
class OpCase:
    """One registry op with one set of attribute values (the rest: schema defaults)."""

    name: str                                   # "aten::add"
    attrs: Dict[str, Any] = field(default_factory=dict, hash=False)
    index: int = 0                              # which variant of ATTRS[name]

    @property
    def op(self) -> OpDef:
        return get(self.name)

    @property
    def id(self) -> str:
        return f"{self.name.split('::')[1]}-{self.index}"


def registry_ops() -> List[OpDef]:
    """The elementwise ops every parametrized op test enumerates, sorted by name."""
    return sorted(elementwise_ops(), key=lambda op: op.name)


def op_cases(ops: Optional[Sequence[OpDef]] = None, variants: bool = True) -> List[OpCase]:
    """Every (op, attribute variant) of ``ops`` (default: ``registry_ops()``); only each op's
    first variant unless ``variants``."""
    return [OpCase(op.name, attrs, k) for op in (registry_ops() if ops is None else ops)
            for k, attrs in enumerate(ATTRS.get(op.name, [{}])[:None if variants else 1])]


# Ops whose cases stand for every op in the non-contiguous layouts: a layout tests how a
# kernel indexes its operands (strides, broadcasting, offsets, 0-d, empty), which does not
# depend on the op; one op of each operand shape and template kind keeps those kernels small
# (every op still runs in every dtype's contiguous kernel).
LAYOUT_OPS = ("aten::add", "aten::sub", "aten::mul", "aten::div", "aten::floor_divide",
              "aten::remainder", "aten::pow", "aten::neg", "aten::abs", "aten::exp",
              "aten::sigmoid", "aten::sin", "aten::where", "aten::clamp", "aten::lerp",
              "aten::addcmul", "aten::maximum", "aten::eq", "aten::bitwise_and",
              "aten::logical_not", "aten::to", "aten::masked_fill", "aten::atan2",
              "aten::round", "aten::sign")


def float_math_case(case: OpCase) -> bool:
    """Whether the op computes through a float32 math helper (``tl_<name>_f32``): such a
    helper is the same code whatever the input dtype (integers promote to float32)."""
    template = get(case.name).templates.get("numba")
    return isinstance(template, dict) and "_f32(" in str(template.get("float32", ""))


def narrow_dtype_cases() -> List[OpCase]:
    """For the narrow integer dtypes and bool: every op case but the float math helpers'
    (compiled and checked in the float and int32/int64 kernels), except ``LAYOUT_OPS``'s."""
    return [c for c in op_cases() if not float_math_case(c) or c.name in LAYOUT_OPS]


def layout_cases() -> List[OpCase]:
    """``LAYOUT_OPS``'s first attribute variants (those in the registry)."""
    return [c for c in op_cases(variants=False) if c.name in LAYOUT_OPS]


# -- building groups ------------------------------------------------------------------------------

def const(sub: Graph, value: Any):
    return sub.insert_constant(value, type_of_python_value(value) if value is not None else None)


def add_op(sub: Graph, kind: str, inputs: Sequence[Any]):
    return sub.create(kind, list(inputs), [TENSOR]).output()


def group_node(n_inputs: int, build: Callable) -> Node:
    """A ``prim::FusionGroup`` node over ``n_inputs`` inputs; ``build(sub, params)`` returns the
    subgraph's outputs.  The subgraph is ``node.attrs["Subgraph"]`` (``subgraph(node)``)."""
    sub = Graph()
    params = [sub.add_input(f"p{i}", TENSOR) for i in range(n_inputs)]
    sub.set_outputs(build(sub, params))
    outer = Graph()
    ins = [outer.add_input(f"x{i}", TENSOR) for i in range(n_inputs)]
    node = outer.create("prim::FusionGroup", ins, [TENSOR] * len(sub.outputs), {"Subgraph": sub})
    outer.set_outputs(node.outputs)
    return node


def subgraph(group: Any) -> Graph:
    """The subgraph of a ``prim::FusionGroup`` node (a Graph is returned as it is)."""
    return group if isinstance(group, Graph) else group.attrs["Subgraph"]


# optional operands the matrix leaves out: a layer norm's weight and bias have the normalized
# shape, not the input's
ABSENT_OPERANDS = {"torchlike::norm_input": ("weight", "bias")}


def op_inputs(case: OpCase, sub: Graph, x, y, z, c, dtype: str) -> List[Any]:
    """The node inputs of ``case``: operands x, y, z in order (kept operands such as ``where``'s
    condition: the bool c); attributes from the case, the schema default, or a plain value."""
    op = case.op
    operands = iter([x, y, z])
    keep = kept_operands(op)
    args = []
    for p in op.params:
        if p.is_operand and p.name in ABSENT_OPERANDS.get(case.name, ()):
            args.append(const(sub, None))
        elif p.is_operand:
            args.append(c if p.name in keep else next(operands))
        elif p.name in case.attrs:
            args.append(const(sub, case.attrs[p.name]))
        elif p.default is not REQUIRED:
            args.append(const(sub, p.default))
        elif p.name == "dtype":
            args.append(const(sub, DTYPE_TO_SCALAR_TYPE_ENUM["float32"]))
        else:
            base = p.type.rstrip("?")
            args.append(const(sub, {"int": 2, "float": 0.5, "bool": False}.get(
                base, 0.5 if "float" in dtype else 2)))
    return args


def registry_group(cases: Sequence[OpCase], dtype: str) -> Node:
    """One group over inputs (x, y, z, c) with one output per op case."""
    return group_node(4, lambda sub, p: [add_op(sub, case.name, op_inputs(case, sub, *p, dtype))
                                         for case in cases])


def accepted_cases(cases: Sequence[OpCase], dtype: str, args: Sequence[Any]) -> List[OpCase]:
    """The op cases the interpreter runs on ``args`` (the others raise, as PyTorch does: bitwise
    ops on floats, ...)."""
    out = []
    for case in cases:
        try:
            interpret(registry_group([case], dtype), args)
        except Exception:
            continue
        out.append(case)
    return out


# -- values and layouts ---------------------------------------------------------------------------

FLOAT_SPECIALS = [math.nan, math.inf, -math.inf, -0.0, 0.0, 1.0, -1.0, 0.5, -2.5, 3.7, 1e30,
                  1e-30, -7.0, 3.0, 1e-3, 7.25, -0.75, -3.5, 2.0, 60000.0]
INT_SPECIALS = [0, 1, -1, 2, -7, 3, 100, -128, 127]
UINT8_SPECIALS = [0, 1, 2, 3, 7, 100, 255]


def special_values(dtype: str, extremes: bool = False, nonzero: bool = False) -> np.ndarray:
    """The special values of ``dtype`` (1e30 is inf in float16).  ``extremes`` adds the integer
    type's min and max (wrap-around; INT_MIN / -1 must not trap -- PyTorch's own CPU kernels do,
    so comparisons with PyTorch leave them out); ``nonzero`` drops zeros (divisors)."""
    if dtype == "bool":
        vals: List[Any] = [False, True]
    elif dtype.startswith("float"):
        vals = list(FLOAT_SPECIALS)
    elif dtype == "uint8":
        vals = list(UINT8_SPECIALS)
    else:
        info = np.iinfo(dtype)
        vals = INT_SPECIALS + ([int(info.min), int(info.max)] if extremes else [])
        vals = list(dict.fromkeys(vals))
    if nonzero:
        vals = [v for v in vals if v != 0]
    with np.errstate(over="ignore"):
        return np.array(vals).astype(dtype)


def value_grid(dtype: str, n_operands: int, nonzero_rest: bool = False,
               extremes: bool = False) -> List[np.ndarray]:
    """One 1-D array per operand: the first two hold every pair of special values; further
    operands draw from them at random (seeded).  ``nonzero_rest``: no zero after the first."""
    first = special_values(dtype, extremes)
    if n_operands == 1:
        return [first]
    rest = special_values(dtype, extremes, nonzero=nonzero_rest)
    a, b = (m.ravel() for m in np.meshgrid(first, rest, indexing="ij"))
    rng = np.random.default_rng(0)
    return [a, b] + [rng.choice(rest, a.size) for _ in range(2, n_operands)]


def _misaligned(v: np.ndarray) -> np.ndarray:
    """A contiguous view of ``v``'s values one element past an aligned address."""
    buf = np.zeros(v.size + 1, v.dtype)
    buf[1:] = v.ravel()
    return buf[1:]


def _fortran(v: np.ndarray) -> np.ndarray:
    return v.T.copy().T


def _strided(v: np.ndarray) -> np.ndarray:
    """A step-sliced view holding ``v``'s values."""
    rows, cols = v.shape
    buf = np.zeros((2 * rows, 2 * cols + 1), v.dtype)
    buf[::2, 1::2][:, :cols] = v
    return buf[::2, 1::2][:, :cols]


def layout_operands(dtype: str, layout: str) -> Tuple[np.ndarray, ...]:
    """(x, y, z, c) for ``registry_group``: x and y hold every pair of special values (integer
    extremes included; y and z are nonzero for int/bool dtypes, so integer division is defined),
    c is a bool condition; all broadcast together and are laid out as ``layout`` says."""
    nonzero = not dtype.startswith("float")
    gx, gy, gz = value_grid(dtype, 3, nonzero_rest=nonzero, extremes=True)
    cols = 7
    # odd, at least 5: several 16-byte vectors and a tail (no multiple of a vector width)
    rows = max(5, -(-gx.size // cols)) | 1
    x, y, z = (np.resize(g, (rows, cols)) for g in (gx, gy, gz))
    c = (np.arange(rows * cols) % 3 != 1).reshape(rows, cols)
    if layout == "contiguous":
        return x, y, z, c
    if layout == "misaligned":
        return tuple(_misaligned(v) for v in (x, y, z, c))
    if layout == "transposed":
        return _fortran(x), y, _fortran(z), _fortran(c)
    if layout == "sliced":
        return _strided(x), _strided(y), z, c
    if layout == "broadcast":  # (n, 1) against a stride-0 (n, m) view: the outer product
        sx, sy = special_values(dtype, True), special_values(dtype, True, nonzero)
        return (sx[:, None], np.broadcast_to(sy, (sx.size, sy.size)), sy[::-1].copy(),
                (np.arange(sy.size) % 3 != 1)[None, :])
    if layout == "mixed":  # transposed, step-sliced, stride-0 and size-1 broadcasting at once
        return _fortran(x), _strided(y), np.broadcast_to(z[0], (rows, cols)), c[:1]
    if layout == "0-d":
        k = gx.size // 3
        return np.array(gx[k]), np.array(gy[k]), np.array(gz[k]), np.array(True)
    if layout == "empty":
        return x[:0], y[:0], z[:1], c[:0]
    if layout == "half-mixed":  # float16 meeting int32 values that round in float16 (2049 is
        # 2048) and a 0-d float64 that is no float16 value: every operand rounds first
        if dtype != "float16":
            raise ValueError("layout half-mixed is float16's")
        ints = np.resize(np.array([2049, -4097, 65519, 3, -7, 100, 1, 32769], np.int32), x.shape)
        return x, ints, np.array(0.3), c
    raise ValueError(f"unknown layout {layout!r}: expected one of {LAYOUTS}")


# -- backends -------------------------------------------------------------------------------------

def backend_missing(backend: str) -> Optional[str]:
    """Why ``backend`` cannot run here (the reason names the dependency), or None."""
    if backend == "cpu":
        try:
            import numba  # noqa: F401
        except Exception as e:  # pragma: no cover - numba is a dependency of torchlike
            return f"needs numba for the cpu backend ({type(e).__name__}: {e})"
    if backend == "cuda-emulated" and shutil.which("g++") is None:
        return "needs g++ on PATH: the cuda-emulated backend builds kernels with it"
    return None


def nvrtc_missing() -> Optional[str]:
    """Why NVRTC cannot compile here (naming it), or None."""
    try:
        from cupy.cuda import nvrtc  # noqa: F401
    except Exception as e:
        return f"needs NVRTC (cupy with the CUDA toolkit: pip install -e '.[cuda13]'): {e}"
    return None


def require(reason: Optional[str]) -> None:
    """Skip with ``reason`` when a dependency is missing; in CI (``CI=true``) fail instead."""
    if reason:
        (pytest.fail if IN_CI else pytest.skip)(reason)


def interpret(group: Any, args: Sequence[Any]) -> List[Any]:
    """The reference: the group's subgraph (a node's, or a Graph), node by node."""
    with np.errstate(all="ignore"):
        return Interpreter(subgraph(group)).run_outputs(list(args))


@contextmanager
def fuser_settings(backend: str = "cpu", strict: bool = True):
    """The fuser's backend and strict mode, restored afterwards."""
    saved = config.get_backend(), config.strict()
    config.set_backend(backend)
    config.set_strict(strict)
    try:
        yield
    finally:
        config.set_backend(saved[0])
        config.set_strict(saved[1])


@contextmanager
def use_emulator_as_cuda(strict: bool = True):
    """The CUDA emulator registered as the fuser's "cuda" backend and chosen (numpy arrays run
    the exact kernel source on the CPU), ``strict`` as given; the registry, the settings and
    the executor's caches restored afterwards."""
    from torchlike.cuda_backend.emulate import EmulatedCudaBackend
    from torchlike.fuser import backend as fb
    saved = fb.BACKENDS.get("cuda")
    fb.register_backend("cuda", EmulatedCudaBackend)
    try:
        with fuser_settings("cuda", strict=strict):
            yield
    finally:
        if saved is None:
            fb.BACKENDS.pop("cuda", None)
            fb._instances.pop("cuda", None)
        else:
            fb.register_backend("cuda", saved)
        executor.clear_caches()


def run_cpu(node: Node, args: Sequence[Any]) -> List[Any]:
    """The group through the executor with backend ``cpu``, strictly (a fallback raises
    FusionError); the counters prove that ONE compiled kernel served it."""
    with fuser_settings("cpu", strict=True):
        reset_stats()
        got = executor.run_fusion_group(node, np, list(args))
        s = stats()
    assert s["fallbacks"] == {}, s
    assert s["cache_hits"] + s["cache_misses"] == 1, s
    assert s["cache_misses"] == s["kernels_compiled"] + s["disk_hits"], s
    return got


def to_gpu(a):
    """A cupy array with ``a``'s values and layout (transposed, sliced, broadcast views kept);
    dicts (a module's state) map their values; anything else is returned as it is."""
    import cupy
    if isinstance(a, dict):
        return {k: to_gpu(v) for k, v in a.items()}
    if not isinstance(a, np.ndarray):
        return a
    if a.ndim == 0:  # CuPy fills a 0-d copy with fill(), which memsets a zero: -0.0 -> 0.0
        return cupy.asarray(a.reshape(1)).reshape(())
    if a.flags.c_contiguous:
        return cupy.asarray(a)
    if 0 in a.strides:
        index = tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)
        return cupy.broadcast_to(cupy.asarray(np.ascontiguousarray(a[index])), a.shape)
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides)) // a.itemsize
    buf = cupy.zeros(max(span, 1), a.dtype)
    view = cupy.lib.stride_tricks.as_strided(buf, a.shape, tuple(abs(s) for s in a.strides))
    view[...] = cupy.asarray(np.ascontiguousarray(a))
    return view


def to_host(v):
    import cupy
    return cupy.asnumpy(v) if isinstance(v, cupy.ndarray) else v


def run_gpu(node: Node, args: Sequence[Any]) -> List[Any]:
    """The group on a GPU through the executor with backend ``cuda``, strictly; the counters
    prove that ONE compiled kernel served it."""
    import cupy
    with fuser_settings("cuda", strict=True):
        reset_stats()
        got = executor.run_fusion_group(node, cupy, [to_gpu(a) for a in args])
        s = stats()
    assert s["fallbacks"] == {}, s
    assert s["cache_hits"] + s["cache_misses"] == 1, s
    return [to_host(g) for g in got]


_EMULATED: Dict[str, Any] = {}


def emulated_backend():
    """The shared ``EmulatedCudaBackend`` (the CUDA code generator, run on the CPU)."""
    if "be" not in _EMULATED:
        from torchlike.cuda_backend.emulate import EmulatedCudaBackend
        _EMULATED["be"] = EmulatedCudaBackend()
    return _EMULATED["be"]


def raise_division_error(args):
    raise IntegerDivisionByZeroError("integer division by zero")


def emulated_source(sub: Graph, args: Sequence[Any], backend=None, signature=None):
    """The CUDA source the emulated backend generates for ``sub`` and ``args``."""
    from torchlike.fuser.backend import analyze, signature_of
    be = backend or emulated_backend()
    return be.generate(analyze(sub, signature or signature_of(args)))


def build_emulated(sources: Sequence[Any]) -> None:
    """Build many kernels into ONE shared library (g++ costs ~0.5 s per library)."""
    from torchlike.cuda_backend.emulate import build_many
    build_many(list(sources))


def run_emulated(sub: Graph, args: Sequence[Any], source=None, backend=None,
                 signature=None) -> List[Any]:
    """``sub`` as a CUDA kernel run on the CPU (compiled now unless ``source`` was built)."""
    from torchlike.fuser.backend import analyze, signature_of
    be = backend or emulated_backend()
    spec = analyze(sub, signature or signature_of(args))
    assert be.check(spec) is None
    source = source or be.generate(spec)
    assert source.key == be.kernel_key(spec)
    return be.compile(source).bind(spec, raise_division_error)(list(args))


def run(backend: str, node: Node, args: Sequence[Any], source=None) -> List[Any]:
    """The group's outputs on ``backend`` (one of ``BACKENDS``, or ``"cuda"``: a real GPU)."""
    if backend == "interpreter":
        return interpret(node, args)
    if backend == "cpu":
        return run_cpu(node, args)
    if backend == "cuda-emulated":
        return run_emulated(subgraph(node), args, source)
    if backend == "cuda":
        return run_gpu(node, args)
    raise ValueError(f"unknown backend {backend!r}: expected one of {BACKENDS}")


# -- the comparison rule --------------------------------------------------------------------------

FLOAT16_RTOL, RTOL, ATOL = 1e-3, 1e-5, 1e-6

# Ops whose float result is a sum of terms larger than itself, checked to an absolute tolerance
# relative to the terms (``TERM_ATOL[name](operands)``, per element) on top of ATOL:
# gelu_backward's g (Phi(x) + x phi(x)) cancels near gelu's minimum (x = -0.7518); float32 gets
# it to 1.2e-7 |g| (PyTorch's own vectorized kernel to 2.4e-7 |g|).
TERM_ATOL: Dict[str, Callable[[Sequence[Any]], Any]] = {
    "aten::gelu_backward": lambda ops: 3e-7 * np.abs(np.asarray(ops[0], np.float64)),
}


def term_atol(op_name: str, operands: Sequence[Any]) -> Any:
    """The extra absolute tolerance of ``TERM_ATOL`` for these operands (0 for other ops)."""
    f = TERM_ATOL.get(op_name)
    return 0.0 if f is None else f(operands)


def compare(got: Any, expected: Any, where: str = "",
            inputs: Sequence[Any] = (), extra_atol: Any = 0.0) -> Optional[str]:
    """None if ``got`` matches ``expected``, else a message (naming the ``inputs`` at the first
    differing elements, when given).  The rule: same dtype and shape, NaN at the same places,
    ints and bools exactly equal, floats within ``RTOL`` (``FLOAT16_RTOL``) plus ``ATOL``
    (plus ``extra_atol``, see ``TERM_ATOL``; infinities equal), and zeros of the same sign."""
    g, e = np.asarray(got), np.asarray(expected)
    where = f"{where}: " if where else ""
    if g.dtype != e.dtype or g.shape != e.shape:
        return f"{where}got {g.dtype}{g.shape}, expected {e.dtype}{e.shape}"
    if e.dtype.kind in "biu":
        bad = g != e
    else:
        g64, e64 = g.astype(np.float64), e.astype(np.float64)
        nan_g, nan_e = np.isnan(g64), np.isnan(e64)
        rtol = FLOAT16_RTOL if e.dtype == np.float16 else RTOL
        with np.errstate(invalid="ignore"):
            close = np.isclose(g64, e64, rtol=rtol, atol=ATOL + extra_atol)
        bad = (nan_g != nan_e) | (~nan_e & ~nan_g & ~close)
        bad |= (g64 == 0) & (e64 == 0) & (np.signbit(g64) != np.signbit(e64))
    if not np.any(bad):
        return None
    i = np.flatnonzero(bad)[:4]
    msg = (f"{where}{np.count_nonzero(bad)} of {bad.size} values differ, at {i.tolist()}: "
           f"got {g.ravel()[i].tolist()}, expected {e.ravel()[i].tolist()}")
    try:
        shown = [np.broadcast_to(a, e.shape).ravel()[i].tolist() for a in inputs]
    except ValueError:  # inputs that do not broadcast to the result: not shown
        shown = []
    return msg + (f", inputs {shown}" if shown else "")


def assert_same(got: Sequence[Any], expected: Sequence[Any], label: str = "") -> None:
    """``compare`` on every output; fails naming each that differs."""
    assert len(got) == len(expected), f"{label}: {len(got)} outputs, expected {len(expected)}"
    bad = [compare(g, e, f"{label} output {k}") for k, (g, e) in enumerate(zip(got, expected))]
    bad = [b for b in bad if b]
    assert not bad, "\n".join(bad)


# -- a backend's dtype x layout matrix ------------------------------------------------------------

# Numba's compile time grows faster than linearly with a kernel's size (LLVM's passes over one
# huge loop body): the CPU matrix compiles its registry groups in parts of this many op cases.
CPU_KERNEL_CASES = 40


class CaseRun:
    """One dtype x layout: inputs, the op cases accepting them, their group, the interpreter's
    outputs, and (once run) the backend's outputs or the error it raised."""

    def __init__(self, dtype: str, layout: str, cases: Sequence[OpCase]):
        self.dtype, self.layout = dtype, layout
        self.args = layout_operands(dtype, layout)
        self.cases = accepted_cases(cases, dtype, self.args)
        self.node = registry_group(self.cases, dtype)
        self.expected = interpret(self.node, self.args)
        self.got: Optional[List[Any]] = None
        self.error: Optional[BaseException] = None
        self.source = None  # cuda-emulated: the generated kernel

    def parts(self, size: int) -> List[Node]:
        """The op cases as groups of at most ``size`` (outputs in the order of ``cases``)."""
        return [registry_group(self.cases[i:i + size], self.dtype)
                for i in range(0, len(self.cases), size)]

    def failures(self, case_id: Optional[str] = None) -> List[str]:
        """Mismatches of every op case (or of ``case_id`` only) against the interpreter."""
        out = []
        for case, g, e in zip(self.cases, self.got or [], self.expected):
            if case_id is None or case.id == case_id:
                attrs = f" {case.attrs}" if case.attrs else ""
                where = f"{case.name}{attrs} on {self.dtype}/{self.layout}"
                msg = compare(g, e, where, self.args[:3],
                              term_atol(case.name, self.args[:len(case.op.operand_names)]))
                out += [msg] if msg else []
        return out


class Matrix:
    """The registry's op cases on ``backend`` for each (dtype, layout) of ``keys``, run lazily
    (``matrix[dtype, layout]``) and shared by per-case and per-op tests.  ``layout_cases``: the
    op cases of the non-contiguous layouts, when fewer (attribute variants exercise templates,
    layouts exercise indexing; a smaller kernel compiles faster)."""

    def __init__(self, backend: str, keys: Sequence[Tuple[str, str]],
                 cases: Optional[Sequence[OpCase]] = None,
                 layout_cases: Optional[Sequence[OpCase]] = None,
                 dtype_cases: Optional[Dict[str, Sequence[OpCase]]] = None):
        self.backend, self.keys = backend, list(keys)
        self.dtype_cases = {d: list(c) for d, c in (dtype_cases or {}).items()}
        self.cases = op_cases() if cases is None else list(cases)
        self.layout_cases = self.cases if layout_cases is None else list(layout_cases)
        self._runs: Dict[Tuple[str, str], CaseRun] = {}

    def case(self, key: Tuple[str, str]) -> CaseRun:
        """The case's inputs, group and reference outputs, not run on the backend yet."""
        if key not in self._runs:
            dtype, layout = key
            cases = self.cases if layout == "contiguous" else self.layout_cases
            cases = self.dtype_cases.get(dtype, cases) if layout == "contiguous" else cases
            self._runs[key] = CaseRun(dtype, layout, cases)
        return self._runs[key]

    def generate(self) -> Dict[Tuple[str, str], Any]:
        """cuda-emulated: every case's kernel source, generated before anything compiles."""
        for key in self.keys:
            r = self.case(key)
            r.source = emulated_source(subgraph(r.node), r.args)
        return {key: self._runs[key].source for key in self.keys}

    def build(self) -> None:
        """cuda-emulated: every case's kernel in one shared library."""
        build_emulated([s for s in self.generate().values()])

    def __getitem__(self, key: Tuple[str, str]) -> CaseRun:
        r = self.case(key)
        if r.got is None and r.error is None:
            try:
                if self.backend == "cpu":  # kernels of at most CPU_KERNEL_CASES op cases each
                    r.got = [out for part in r.parts(CPU_KERNEL_CASES)
                             for out in run_cpu(part, r.args)]
                else:
                    r.got = run(self.backend, r.node, r.args, r.source)
            except Exception as e:  # re-raised by check_case
                r.error = e
        return r

    def check_case(self, dtype: str, layout: str) -> CaseRun:
        """The case's kernel ran (strictly, for cpu) and produced one output per op case."""
        r = self[dtype, layout]
        assert r.cases, f"no op accepts {dtype}"
        if isinstance(r.error, FusionError) and self.backend == "cpu":
            pytest.fail(f"{dtype}/{layout}: {r.error}\n" + "\n".join(self._diagnose(r)))
        if r.error is not None:
            raise r.error
        assert len(r.got) == len(r.cases)
        return r

    def _diagnose(self, r: CaseRun) -> List[str]:
        """The op cases the backend cannot compile, one by one."""
        bad = []
        for case in r.cases:
            try:
                run(self.backend, registry_group([case], r.dtype), r.args)
            except Exception as e:
                bad.append(f"{case.id}: {type(e).__name__}: {e}")
        return bad

    def op_failures(self, case_id: str) -> Tuple[int, List[str]]:
        """(how many cases ran op case ``case_id``, its mismatches).  Cases whose kernel did not
        run are left to ``check_case``."""
        ran, out = 0, []
        for key in self.keys:
            r = self[key]
            if r.error is None and any(c.id == case_id for c in r.cases):
                ran += 1
                out += r.failures(case_id)
        return ran, out
