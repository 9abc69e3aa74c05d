"""Helpers shared by the non-elementwise tensor ops (``linalg``, ``shape_ops``, ``reductions``).

Each of those ops is an impl over the array module (numpy or cupy) plus an ``infer`` rule for
type and shape inference.  TorchScript graphs do not print overload names, so one impl serves
every overload of a name and dispatches on how many arguments it got and their types; the schema
given is the most common overload's (it is what keyword binding uses)::

    %4 : Tensor = aten::sum(%x, %none)                        # sum(self, ScalarType? dtype)
    %7 : Tensor = aten::sum(%x, %dims, %false, %none)         # sum(self, int[1]? dim, ...)
    %v : Tensor, %i : Tensor = aten::max(%x, %one, %false)    # max(self, int dim, keepdim)

This module holds the runtime argument helpers (dims, dtypes) and the type-inference helpers
(``arg`` reads a node's constant argument, ``like`` derives a tensor type).
"""
from __future__ import annotations

from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.types import DTYPE_TO_SCALAR_NAME, INT, SCALAR_TYPE_ENUM, TENSOR, TensorType, Type

UNKNOWN = object()  # an argument whose value is not known while inferring types


# -- PyTorch's messages ------------------------------------------------------------------------

def scalar_name(dtype) -> str:
    """PyTorch's name of a dtype in its messages: ``float32`` -> ``Float``."""
    return DTYPE_TO_SCALAR_NAME.get(str(dtype), str(dtype))


def not_implemented(what: str, dtype) -> NotImplementedError:
    """ATen's error for a dtype its kernel is not compiled for."""
    return NotImplementedError(f"\"{what}\" not implemented for '{scalar_name(dtype)}'")


def broadcast_sizes(*shapes) -> tuple:
    """The shapes broadcast together, or PyTorch's error (``infer_size``) naming the first pair
    of sizes that clash."""
    out: tuple = ()
    for shape in shapes:
        a, b = out, tuple(shape)
        n = max(len(a), len(b))
        a, b = (1,) * (n - len(a)) + a, (1,) * (n - len(b)) + b
        for i, (x, y) in enumerate(zip(a, b)):
            if x != y and x != 1 and y != 1:
                raise RuntimeError(f"The size of tensor a ({x}) must match the size of tensor b "
                                   f"({y}) at non-singleton dimension {i}")
        out = tuple(y if x == 1 else x for x, y in zip(a, b))
    return out


# -- argument helpers (runtime) ---------------------------------------------------------------

def wrap_dim(dim: int, ndim: int) -> int:
    """A dim in ``[-ndim, ndim)`` as a non-negative index; 0-d tensors accept 0 and -1."""
    n = max(ndim, 1)
    if not -n <= dim < n:
        raise IndexError(f"Dimension out of range (expected to be in range of [{-n}, {n - 1}], "
                         f"but got {dim})")
    return dim % n


def dtype_arg(value: Any) -> Optional[str]:
    """A ``ScalarType?`` argument (c10's enum int, a dtype name or object, None) -> dtype name."""
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        name = SCALAR_TYPE_ENUM.get(value)
        if name is None:
            raise UnsupportedOpError(f"unsupported ScalarType {value}")
    else:
        name = value if value == "bfloat16" else str(np.dtype(value))
    if name == "bfloat16":
        raise UnsupportedOpError("bfloat16 tensors are not supported at run time (numpy has none)")
    return name


def dims_list(dim: Any) -> Optional[List[int]]:
    """``int[1]? dim`` -> list of ints, or None for "every dim" (None or [])."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        return [int(dim)]
    dims = [int(d) for d in dim]
    return dims or None


def reduce_axes(x, dim: Any) -> Optional[Tuple[int, ...]]:
    """Reduction axes for numpy (None = all); checks range and repeats like PyTorch."""
    dims = dims_list(dim)
    if dims is None:
        return None
    axes = [wrap_dim(d, x.ndim) for d in dims]
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return None if x.ndim == 0 else tuple(sorted(axes))


def compute_dtype(dtype: str) -> str:
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def index_along(ndim: int, dim: int, item) -> tuple:
    # the trailing Ellipsis keeps an integer ``item`` on a 1-D array a 0-d view (``a[0]`` is a
    # numpy scalar, a copy): an in-place op on ``x[0]`` must write into ``x``, as in PyTorch
    return (slice(None),) * dim + (item, Ellipsis)


# -- type-inference helpers --------------------------------------------------------------------

def arg(node, i: int, default: Any = UNKNOWN) -> Any:
    """The value of input ``i`` if it is a constant (or a list built from constants and sizes of
    known dims), ``default`` if the node has no input ``i``, else ``UNKNOWN``.  Unknown list
    elements are None."""
    if i >= len(node.inputs):
        return default
    v = node.inputs[i]
    src = v.node
    if src is None:
        return UNKNOWN
    if src.kind == "prim::Constant":
        return src.attrs.get("value")
    if src.kind == "prim::ListConstruct":
        return [int_value(e) for e in src.inputs]
    return UNKNOWN


def int_value(v) -> Optional[int]:
    src = v.node
    if src is None:
        return None
    if src.kind == "prim::Constant":
        value = src.attrs.get("value")
        return value if isinstance(value, int) else None
    if src.kind == "aten::size" and len(src.inputs) == 2:   # x.size(d) of a known dim
        t, d = src.inputs[0].type, int_value(src.inputs[1])
        if isinstance(t, TensorType) and t.shape is not None and d is not None:
            if -len(t.shape) <= d < len(t.shape):
                return t.shape[d]
    return None


def tensor_in(types: Sequence[Type], i: int = 0) -> TensorType:
    t = types[i] if i < len(types) else None
    return t if isinstance(t, TensorType) else TENSOR


def like(t: TensorType, dtype: Any = UNKNOWN, shape: Any = UNKNOWN) -> TensorType:
    """A result on ``t``'s device with the given dtype/shape (``UNKNOWN`` keeps t's); strides
    are left unknown because views and copies lay out differently."""
    return TensorType(t.dtype if dtype is UNKNOWN else dtype,
                      t.shape if shape is UNKNOWN else (None if shape is None else tuple(shape)),
                      None, t.device, t.requires_grad)


def known_dim(d: Any, rank: Optional[int]) -> Optional[int]:
    """``d`` wrapped into range, or None if unknown or out of range."""
    if not isinstance(d, int) or rank is None:
        return None
    n = max(rank, 1)
    return d % n if -n <= d < n else None


def broadcast_shapes(a: Sequence[Optional[int]], b: Sequence[Optional[int]]) -> tuple:
    """Broadcast two shapes whose dims may be None (unknown)."""
    out = []
    for i in range(max(len(a), len(b))):
        x = a[len(a) - 1 - i] if i < len(a) else 1
        y = b[len(b) - 1 - i] if i < len(b) else 1
        if x == 1:
            out.append(y)
        elif y == 1:
            out.append(x)
        elif x is None:
            out.append(y)   # y is not 1, so x must be 1 or y
        else:
            out.append(x)
    return tuple(reversed(out))


def known_shape(t) -> bool:
    """Whether ``t`` is a tensor type whose rank is known."""
    return isinstance(t, TensorType) and t.shape is not None


def infer_same(node, types):
    return [like(tensor_in(types))]


def dim_overload_outputs(types) -> int:
    """``OpDef.output_count`` of ops whose ``.dim`` overload (an int dim) returns (values,
    indices) and whose other overloads one tensor: max/min, median."""
    return 2 if len(types) >= 2 and types[1] == INT else 1


def array_module_of(x):
    """numpy, or cupy for a cupy array: the function table's callables (``register_function``)
    get the runtime arguments, not the interpreter's ``xp``."""
    if type(x).__module__.startswith("cupy"):
        import cupy
        return cupy
    return np
