"""Non-elementwise tensor ops: matmul, views and shape changes, joins and splits, reductions.

Each entry is an impl over the array module (numpy or cupy) plus an ``infer`` rule for type and
shape inference.  TorchScript graphs do not print overload names, so one impl serves every
overload of a name and dispatches on how many arguments it got and their types; the schema
given is the most common overload's (it is what keyword binding uses)::

    %4 : Tensor = aten::sum(%x, %none)                        # sum(self, ScalarType? dtype)
    %7 : Tensor = aten::sum(%x, %dims, %false, %none)         # sum(self, int[1]? dim, ...)
    %v : Tensor, %i : Tensor = aten::max(%x, %one, %false)    # max(self, int dim, keepdim)

Semantics and result dtypes are PyTorch's: integer and bool sums are int64, ``mean`` and
``softmax`` refuse integers, ``cat``/``stack`` promote, 0-d tensors accept dim 0 and -1, and
half-precision arithmetic is carried out in float32 and rounded once.  Views stay views
(``expand`` gives stride-0 arrays), so layouts reach the kernels as PyTorch would give them.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import UnsupportedOpError
from ..ir.types import SCALAR_TYPE_ENUM, STR, TENSOR, ListType, TensorType, Type
from .dtypes import Priority, is_bool, is_float, is_int, promote_types, result_type
from .registry import defop

UNKNOWN = object()  # an argument whose value is not known while inferring types


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


def _dims_list(dim: Any) -> Optional[List[int]]:
    """``int[1]? dim`` -> list of ints, or None for "every dim" (None or [])."""
    if dim is None:
        return None
    if isinstance(dim, (int, np.integer)):
        return [int(dim)]
    dims = [int(d) for d in dim]
    return dims or None


def _axes(x, dim: Any) -> Optional[Tuple[int, ...]]:
    """Reduction axes for numpy (None = all); checks range and repeats like PyTorch."""
    dims = _dims_list(dim)
    if dims is None:
        return None
    axes = [wrap_dim(d, x.ndim) for d in dims]
    if len(set(axes)) != len(axes):
        raise RuntimeError(f"dim {axes[0]} appears multiple times in the list of dims")
    return None if x.ndim == 0 else tuple(sorted(axes))


def _compute(dtype: str) -> str:
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def _index(ndim: int, dim: int, item) -> tuple:
    return (slice(None),) * dim + (item,)


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
        return [_int_value(e) for e in src.inputs]
    return UNKNOWN


def _int_value(v) -> Optional[int]:
    src = v.node
    if src is None:
        return None
    if src.kind == "prim::Constant":
        value = src.attrs.get("value")
        return value if isinstance(value, int) else None
    if src.kind == "aten::size" and len(src.inputs) == 2:   # x.size(d) of a known dim
        t, d = src.inputs[0].type, _int_value(src.inputs[1])
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


def _known_dim(d: Any, rank: Optional[int]) -> Optional[int]:
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


def _same(node, types):
    return [like(tensor_in(types))]


# -- matmul --------------------------------------------------------------------------------------

def _check_same_dtype(a, b, what="m1 and m2"):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected {what} to have the same dtype, but got: "
                           f"{a.dtype} != {b.dtype}")
    if a.dtype == np.bool_:
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _matmul_arrays(xp, a, b):
    out = a.dtype
    comp = _compute(str(out))
    if comp != str(out):
        a, b = a.astype(comp), b.astype(comp)
    return xp.asarray(xp.matmul(a, b)).astype(out, copy=False)


def _matmul(xp, a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    _check_same_dtype(a, b)
    return _matmul_arrays(xp, a, b)


def _mm(xp, a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {a.ndim}D and {b.ndim}D")
    _check_same_dtype(a, b)
    return _matmul_arrays(xp, a, b)


def _bmm(xp, a, b):
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: expected 3D tensors with equal batch sizes, got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    _check_same_dtype(a, b)
    return _matmul_arrays(xp, a, b)


def _infer_matmul(node, types):
    a, b = tensor_in(types, 0), tensor_in(types, 1)
    dtype = a.dtype if b.dtype is None or a.dtype == b.dtype else (b.dtype if a.dtype is None
                                                                    else None)
    shape = None
    if a.shape is not None and b.shape is not None and a.rank and b.rank:
        sa, sb = a.shape, b.shape
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        rows = sa[-2:-1] if len(sa) >= 2 else ()     # a 1-D operand contributes no dim
        cols = sb[-1:] if len(sb) >= 2 else ()
        shape = batch + rows + cols
    return [like(a, dtype, shape)]


defop("aten::matmul", "Tensor self, Tensor other", _matmul, infer=_infer_matmul)
defop("aten::mm", "Tensor self, Tensor mat2", _mm, infer=_infer_matmul)
defop("aten::bmm", "Tensor self, Tensor mat2", _bmm, infer=_infer_matmul)


# -- splitting -----------------------------------------------------------------------------------

def _split_sizes(size: int, split_size: int) -> List[int]:
    """torch.split's pieces: all ``split_size`` but the last; at least one piece."""
    if split_size < 0 or (split_size == 0 and size > 0):
        raise RuntimeError(f"split expects split_size be non-negative (and positive for a "
                           f"non-empty dim), but got split_size={split_size}")
    n = max(-(-size // split_size), 1) if split_size else 1
    return [split_size] * (n - 1) + [size - split_size * (n - 1)]


def _chunk_sizes(size: int, chunks: int) -> List[int]:
    if chunks <= 0:
        raise RuntimeError(f"chunk expects `chunks` to be greater than 0, got: {chunks}")
    split = -(-size // chunks)
    if split == 0 and size == 0:     # torch keeps the number of chunks for an empty dim
        return [0] * chunks
    return _split_sizes(size, split)


def _pieces(x, sizes: Sequence[int], dim: int) -> List[Any]:
    out, start = [], 0
    for s in sizes:
        out.append(x[_index(x.ndim, dim, slice(start, start + s))])
        start += s
    return out


def _chunk(xp, x, chunks, dim=0):
    if x.ndim == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x.ndim)
    return _pieces(x, _chunk_sizes(x.shape[d], chunks), d)


def _split(xp, x, split_size, dim=0):
    if isinstance(x, str):                       # str.split(separator=None, max=-1)
        return x.split(split_size, dim)
    if x.ndim == 0:
        raise RuntimeError("split expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, x.ndim)
    if isinstance(split_size, (list, tuple)):    # split_with_sizes
        if sum(split_size) != x.shape[d] or any(s < 0 for s in split_size):
            raise RuntimeError(f"split_with_sizes expects split_sizes to sum exactly to "
                               f"{x.shape[d]}, but got split_sizes={list(split_size)}")
        return _pieces(x, split_size, d)
    return _pieces(x, _split_sizes(x.shape[d], split_size), d)


def _pieces_types(t: TensorType, sizes: Optional[Sequence[int]], d: Optional[int], n: int):
    if d is None or t.shape is None:
        return [like(t, shape=None)] * n
    shapes = []
    for i in range(n):
        shape = list(t.shape)
        shape[d] = sizes[i] if sizes is not None and i < len(sizes) else None
        shapes.append(like(t, shape=shape))
    return shapes


def _infer_chunk_list(node, types):
    return [ListType(like(tensor_in(types), shape=None))]


def _infer_constant_chunk(node, types):
    t, n = tensor_in(types), len(node.outputs)
    d = _known_dim(node.attrs.get("dim", 0), t.rank)
    chunks = node.attrs.get("chunks", n)
    sizes = None
    if d is not None and t.shape is not None and t.shape[d] is not None:
        try:
            sizes = _chunk_sizes(t.shape[d], chunks)
        except RuntimeError:
            sizes = None
    return _pieces_types(t, sizes, d, n)


def _constant_chunk(xp, x, chunks, dim):
    return _chunk(xp, x, chunks, dim)


defop("aten::chunk", "Tensor self, int chunks, int dim=0", _chunk, category="shape",
      infer=_infer_chunk_list)
defop("aten::split", "Tensor self, int split_size, int dim=0", _split, category="shape",
      infer=lambda node, types: ([ListType(STR)] if types and types[0] == STR else
                                 _infer_chunk_list(node, types)))
# prim::ConstantChunk[chunks=4, dim=1](%x) -> 4 outputs; the form fusion groups use.
defop("prim::ConstantChunk", "Tensor self", lambda xp, x, chunks, dim: _chunk(xp, x, chunks, dim),
      category="shape", num_outputs=None, infer=_infer_constant_chunk, python_name=None)


# -- indexing and views --------------------------------------------------------------------------

def _select(xp, x, dim, index):
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {d}")
    return xp.asarray(x[_index(x.ndim, d, index)])


def _slice(xp, x, *args):
    if isinstance(x, (list, tuple, str)):     # slice.t(t[] l, int? start, int? end, int step=1)
        start, end, step = (list(args) + [None, None, 1][len(args):])[:3]
        if step == 0:
            raise ValueError("slice step cannot be zero")
        return x[start:end:step]
    dim, start, end, step = (list(args) + [0, None, None, 1][len(args):])[:4]
    if x.ndim == 0:
        raise IndexError("slice() cannot be applied to a 0-dim tensor.")
    if step <= 0:
        raise ValueError("slice step must be positive")
    return x[_index(x.ndim, wrap_dim(dim, x.ndim), slice(start, end, step))]


def _infer_select(node, types):
    t = tensor_in(types)
    d = _known_dim(arg(node, 1), t.rank)
    if t.shape is None or d is None:
        return [like(t, shape=None)]
    return [like(t, shape=t.shape[:d] + t.shape[d + 1:])]


def _infer_slice(node, types):
    t = types[0] if types else TENSOR
    if not isinstance(t, TensorType):
        return [t if isinstance(t, ListType) else node.outputs[0].type]
    d = _known_dim(arg(node, 1, 0), t.rank)
    if t.shape is None or d is None:
        return [like(t, shape=None)]
    start, end, step = arg(node, 2, None), arg(node, 3, None), arg(node, 4, 1)
    shape = list(t.shape)
    known = all(v is None or isinstance(v, int) for v in (start, end)) and isinstance(step, int)
    if known and shape[d] is not None and step > 0:
        shape[d] = len(range(*slice(start, end, step).indices(shape[d])))
    else:
        shape[d] = None
    return [like(t, shape=shape)]


defop("aten::select", "Tensor self, int dim, int index", _select, category="shape",
      infer=_infer_select)
defop("aten::slice", "Tensor self, int dim=0, int? start=None, int? end=None, int step=1",
      _slice, category="shape", infer=_infer_slice, python_name=None)


def _t(xp, x):
    if x.ndim > 2:
        raise RuntimeError(f"t() expects a tensor with <= 2 dimensions, but self is {x.ndim}D")
    return x.T


def _transpose(xp, x, dim0, dim1):
    if x.ndim == 0:
        wrap_dim(dim0, 0), wrap_dim(dim1, 0)
        return x
    return xp.swapaxes(x, wrap_dim(dim0, x.ndim), wrap_dim(dim1, x.ndim))


def _permute(xp, x, dims):
    axes = [wrap_dim(d, x.ndim) for d in dims]
    if sorted(axes) != list(range(x.ndim)):
        raise RuntimeError(f"permute: dims {list(dims)} are not a permutation of the "
                           f"{x.ndim} dims of the input")
    return xp.transpose(x, axes)


def _infer_t(node, types):
    t = tensor_in(types)
    return [like(t, shape=None if t.shape is None else tuple(reversed(t.shape)))]


def _infer_transpose(node, types):
    t = tensor_in(types)
    if t.shape is None or t.rank == 0:
        return [like(t)]
    a, b = _known_dim(arg(node, 1), t.rank), _known_dim(arg(node, 2), t.rank)
    if a is None or b is None:
        return [like(t, shape=(None,) * t.rank)]
    shape = list(t.shape)
    shape[a], shape[b] = shape[b], shape[a]
    return [like(t, shape=shape)]


def _infer_permute(node, types):
    t, dims = tensor_in(types), arg(node, 1)
    if t.shape is None or not isinstance(dims, list):
        return [like(t, shape=None if t.shape is None else (None,) * t.rank)]
    axes = [_known_dim(d, t.rank) for d in dims]
    if len(axes) != t.rank or any(a is None for a in axes):
        return [like(t, shape=(None,) * t.rank)]
    return [like(t, shape=[t.shape[a] for a in axes])]


defop("aten::t", "Tensor self", _t, category="shape", infer=_infer_t)
defop("aten::transpose", "Tensor self, int dim0, int dim1", _transpose, category="shape",
      infer=_infer_transpose, aliases=("swapaxes",))
defop("aten::permute", "Tensor self, int[] dims", _permute, category="shape",
      infer=_infer_permute)


def _reshape(xp, x, shape):
    return xp.reshape(x, tuple(int(s) for s in shape))


def _infer_reshape(node, types):
    t, shape = tensor_in(types), arg(node, 1)
    if not isinstance(shape, list):
        return [like(t, shape=None)]
    shape = [s if isinstance(s, int) else None for s in shape]
    if shape.count(-1) == 1:
        rest = [s for s in shape if s != -1]
        total = None if t.shape is None or None in t.shape else math.prod(t.shape)
        known = None if None in rest else math.prod(rest)
        fill = total // known if total is not None and known else None
        shape = [fill if s == -1 else s for s in shape]
    return [like(t, shape=shape)]


def _flatten(xp, x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        wrap_dim(start_dim, 0), wrap_dim(end_dim, 0)
        return xp.reshape(x, (1,))
    s, e = wrap_dim(start_dim, x.ndim), wrap_dim(end_dim, x.ndim)
    if s > e:
        raise RuntimeError("flatten() has invalid args: start_dim cannot come after end_dim")
    return xp.reshape(x, x.shape[:s] + (math.prod(x.shape[s:e + 1]),) + x.shape[e + 1:])


def _infer_flatten(node, types):
    t = tensor_in(types)
    if t.shape is None:
        return [like(t, shape=None)]
    if t.rank == 0:
        return [like(t, shape=(1,))]
    s, e = _known_dim(arg(node, 1, 0), t.rank), _known_dim(arg(node, 2, -1), t.rank)
    if s is None or e is None or s > e:
        return [like(t, shape=None)]
    mid = t.shape[s:e + 1]
    return [like(t, shape=t.shape[:s] + (None if None in mid else math.prod(mid),) +
                 t.shape[e + 1:])]


def _unsqueeze(xp, x, dim):
    if not -x.ndim - 1 <= dim <= x.ndim:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-x.ndim - 1}, {x.ndim}], but got {dim})")
    return xp.expand_dims(x, dim % (x.ndim + 1))


def _infer_unsqueeze(node, types):
    t, dim = tensor_in(types), arg(node, 1)
    if t.shape is None or not isinstance(dim, int) or not -t.rank - 1 <= dim <= t.rank:
        return [like(t, shape=None)]
    d = dim % (t.rank + 1)
    return [like(t, shape=t.shape[:d] + (1,) + t.shape[d:])]


def _squeeze_axes(shape, dims) -> Optional[List[int]]:
    """Axes squeeze removes (None if some needed dim size is unknown)."""
    n = len(shape)
    cand = range(n) if dims is None else [wrap_dim(d, n) for d in dims]
    if n == 0:
        return []
    if any(shape[a] is None for a in cand):
        return None
    return [a for a in cand if shape[a] == 1]


def _squeeze(xp, x, dim=None):
    dims = None if dim is None else ([dim] if isinstance(dim, int) else list(dim))
    axes = _squeeze_axes(x.shape, dims)
    return xp.squeeze(x, tuple(axes)) if axes else x


def _infer_squeeze(node, types):
    t, dim = tensor_in(types), arg(node, 1, None)
    if t.shape is None or dim is UNKNOWN:
        return [like(t, shape=None)]
    dims = None if dim is None else ([dim] if isinstance(dim, int) else dim)
    if dims is not None and any(not isinstance(d, int) for d in dims):
        return [like(t, shape=None)]
    try:
        axes = _squeeze_axes(t.shape, dims)
    except IndexError:
        axes = None
    if axes is None:
        return [like(t, shape=None)]
    return [like(t, shape=[s for i, s in enumerate(t.shape) if i not in axes])]


defop("aten::reshape", "Tensor self, int[] shape", _reshape, category="shape",
      infer=_infer_reshape)
# view == reshape on values; PyTorch additionally refuses layouts a view cannot express.
defop("aten::view", "Tensor self, int[] size", _reshape, category="shape",
      infer=_infer_reshape)
defop("aten::flatten", "Tensor self, int start_dim=0, int end_dim=-1", _flatten,
      category="shape", infer=_infer_flatten)
defop("aten::unsqueeze", "Tensor self, int dim", _unsqueeze, category="shape",
      infer=_infer_unsqueeze)
defop("aten::squeeze", "Tensor self, int? dim=None", _squeeze, category="shape",
      infer=_infer_squeeze)


def _expand_shape(shape, size) -> List[Any]:
    """The target of ``expand(size)``: -1 keeps a dim; new dims go in front."""
    lead = len(size) - len(shape)
    if lead < 0:
        raise RuntimeError(f"expand: the number of sizes provided ({len(size)}) must be greater "
                           f"or equal to the number of dimensions in the tensor ({len(shape)})")
    out = list(size[:lead])
    for s, cur in zip(size[lead:], shape):
        out.append(cur if s == -1 else s)
    return out


def _expand(xp, x, size, implicit=False):
    target = _expand_shape(x.shape, list(size))
    if any(s is not None and s < 0 for s in target):
        raise RuntimeError(f"expand: -1 is not allowed in a leading, non-existing dimension "
                           f"({list(size)})")
    return xp.broadcast_to(x, tuple(target))


def _infer_expand(node, types):
    t, size = tensor_in(types), arg(node, 1)
    if t.shape is None or not isinstance(size, list) or len(size) < t.rank:
        return [like(t, shape=None)]
    target = _expand_shape(t.shape, [s if isinstance(s, int) else None for s in size])
    return [like(t, shape=[None if s is not None and s < 0 else s for s in target])]


def _infer_expand_as(node, types):
    return [like(tensor_in(types, 0), shape=tensor_in(types, 1).shape)]


defop("aten::expand", "Tensor self, int[] size, bool implicit=False", _expand, category="shape",
      infer=_infer_expand)
defop("aten::expand_as", "Tensor self, Tensor other",
      lambda xp, x, other: xp.broadcast_to(x, other.shape), category="shape",
      infer=_infer_expand_as)
defop("aten::contiguous", "Tensor self, int memory_format=0",
      lambda xp, x, memory_format=0: x if x.flags.c_contiguous else x.copy(),
      category="shape", infer=_same)
defop("aten::clone", "Tensor self, int? memory_format=None",
      lambda xp, x, memory_format=None: x.copy(), category="shape", infer=_same)
defop("aten::detach", "Tensor self", lambda xp, x: x, category="shape", infer=_same)


# -- joining -------------------------------------------------------------------------------------

def _promote_all(dtypes) -> Optional[str]:
    out = None
    for d in dtypes:
        out = promote_types(out, d)
    return out


def _cat(xp, tensors, dim=0):
    if not tensors:
        raise RuntimeError("torch.cat(): expected a non-empty list of Tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise RuntimeError(f"zero-dimensional tensor (at position {i}) cannot be concatenated")
    dtype = _promote_all(str(t.dtype) for t in tensors)
    # Legacy rule: 1-D empty tensors are skipped whatever the others' shapes.
    kept = [t for t in tensors if not (t.ndim == 1 and t.shape[0] == 0)]
    if not kept:
        return xp.zeros((0,), dtype=dtype)
    d = wrap_dim(dim, kept[0].ndim)
    return xp.concatenate([t.astype(dtype, copy=False) for t in kept], axis=d)


def _stack(xp, tensors, dim=0):
    if not tensors:
        raise RuntimeError("stack expects a non-empty TensorList")
    dtype = _promote_all(str(t.dtype) for t in tensors)
    nd = tensors[0].ndim
    if not -nd - 1 <= dim <= nd:
        raise IndexError(f"Dimension out of range (expected to be in range of "
                         f"[{-nd - 1}, {nd}], but got {dim})")
    return xp.stack([t.astype(dtype, copy=False) for t in tensors], axis=dim % (nd + 1))


def _list_elems(node, types) -> Optional[List[TensorType]]:
    """Element types of a Tensor[] input built by prim::ListConstruct, else None."""
    src = node.inputs[0].node if node.inputs else None
    if src is None or src.kind != "prim::ListConstruct":
        return None
    return [v.type if isinstance(v.type, TensorType) else TENSOR for v in src.inputs]


def _infer_cat(node, types):
    elems = _list_elems(node, types)
    if not elems:
        return [TENSOR]
    dtype = None if any(e.dtype is None for e in elems) else _promote_all(e.dtype for e in elems)
    kept = [e for e in elems if e.shape != (0,)]
    if not kept:
        return [like(elems[0], dtype, (0,))]
    shape = None
    if all(e.shape is not None for e in kept) and len({e.rank for e in kept}) == 1:
        d = _known_dim(arg(node, 1, 0), kept[0].rank)
        if d is not None and kept[0].rank > 0:
            shape = list(kept[0].shape)
            for i in range(len(shape)):
                col = [e.shape[i] for e in kept]
                shape[i] = (None if None in col else sum(col)) if i == d else \
                    next((c for c in col if c is not None), None)
    return [like(elems[0], dtype, shape)]


def _infer_stack(node, types):
    elems = _list_elems(node, types)
    if not elems:
        return [TENSOR]
    dtype = None if any(e.dtype is None for e in elems) else _promote_all(e.dtype for e in elems)
    dim, base = arg(node, 1, 0), elems[0].shape
    if base is None or not isinstance(dim, int) or not -len(base) - 1 <= dim <= len(base):
        return [like(elems[0], dtype, None)]
    d = dim % (len(base) + 1)
    return [like(elems[0], dtype, base[:d] + (len(elems),) + base[d:])]


defop("aten::cat", "Tensor[] tensors, int dim=0", _cat, category="shape", infer=_infer_cat,
      aliases=("concat", "concatenate"))
defop("aten::stack", "Tensor[] tensors, int dim=0", _stack, category="shape",
      infer=_infer_stack)


# -- reductions ----------------------------------------------------------------------------------

def _reduction_args(args) -> Tuple[Any, bool, Any]:
    """(dim, keepdim, dtype) of sum/mean: ``(dtype)`` or ``(dim, keepdim=False, dtype=None)``."""
    if len(args) <= 1:
        return None, False, (args[0] if args else None)
    return args[0], bool(args[1]), (args[2] if len(args) > 2 else None)


def _sum(xp, x, *args):
    dim, keepdim, dtype = _reduction_args(args)
    out = dtype_arg(dtype) or ("int64" if x.dtype.kind in "biu" else str(x.dtype))
    return xp.asarray(xp.sum(x.astype(_compute(out), copy=False), axis=_axes(x, dim),
                             keepdims=keepdim)).astype(out, copy=False)


def _mean(xp, x, *args):
    dim, keepdim, dtype = _reduction_args(args)
    out = dtype_arg(dtype) or str(x.dtype)
    if not is_float(out):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {out}")
    axes = _axes(x, dim)
    count = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    total = xp.sum(x.astype(_compute(out), copy=False), axis=axes, keepdims=keepdim)
    with np.errstate(all="ignore"):      # an empty reduction is 0/0 = nan, as in PyTorch
        return xp.asarray(total / count).astype(out, copy=False)


def _infer_reduced_shape(t: TensorType, dim: Any, keepdim: Any) -> Optional[tuple]:
    if t.shape is None or dim is UNKNOWN or keepdim is UNKNOWN:
        return None
    try:
        dims = _dims_list(dim)
    except (TypeError, ValueError):     # a list with unknown (None) elements
        return None
    if dims is None or t.rank == 0:
        return (1,) * t.rank if keepdim else ()
    axes = {_known_dim(d, t.rank) for d in dims}
    if None in axes:
        return None
    return tuple((1 if keepdim else None) if i in axes else s
                 for i, s in enumerate(t.shape) if keepdim or i not in axes)


def _infer_sum_mean(kind):
    def infer(node, types):
        t = tensor_in(types)
        if len(node.inputs) <= 2:
            dim, keepdim, dtype = None, False, arg(node, 1, None)
        else:
            dim, keepdim, dtype = arg(node, 1), arg(node, 2, False), arg(node, 3, None)
        if dtype is UNKNOWN:
            out = None
        elif dtype is not None:
            out = SCALAR_TYPE_ENUM.get(dtype) if isinstance(dtype, int) else None
        elif kind == "sum" and (is_int(t.dtype) or is_bool(t.dtype)):
            out = "int64"
        else:
            out = t.dtype
        return [like(t, out, _infer_reduced_shape(t, dim, keepdim))]
    return infer


_REDUCE_SCHEMA = "Tensor self, int[1]? dim=None, bool keepdim=False, ScalarType? dtype=None"
defop("aten::sum", _REDUCE_SCHEMA, _sum, category="reduction", infer=_infer_sum_mean("sum"))
defop("aten::mean", _REDUCE_SCHEMA, _mean, category="reduction", infer=_infer_sum_mean("mean"))


def _extreme(name, fn):
    def impl(xp, x, dim=(), keepdim=False):
        axes = _axes(x, dim)
        if x.size == 0 and (axes is None or any(x.shape[a] == 0 for a in axes)):
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f"argument.")
        return xp.asarray(fn(xp)(x, axis=axes, keepdims=keepdim))
    return impl


def _infer_extreme(node, types):
    t = tensor_in(types)
    return [like(t, shape=_infer_reduced_shape(t, arg(node, 1, []), arg(node, 2, False)))]


defop("aten::amax", "Tensor self, int[1] dim=[], bool keepdim=False",
      _extreme("amax", lambda xp: xp.max), category="reduction", infer=_infer_extreme)
defop("aten::amin", "Tensor self, int[1] dim=[], bool keepdim=False",
      _extreme("amin", lambda xp: xp.min), category="reduction", infer=_infer_extreme)


def _arg_extreme(xp, x, dim, keepdim, name):
    """Index of the first max/min along ``dim`` (NaN counts as the extreme, as in PyTorch)."""
    find = xp.argmax if name in ("max", "argmax") else xp.argmin
    if dim is None:
        if x.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        idx = xp.asarray(find(x.reshape(-1))).astype("int64")
        return xp.reshape(idx, (1,) * x.ndim) if keepdim else idx
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return xp.zeros((), dtype="int64")
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = xp.asarray(find(x, axis=d)).astype("int64")
    return xp.expand_dims(idx, d) if keepdim else idx


def _max_min(name):
    elementwise = (lambda xp: xp.maximum) if name == "max" else (lambda xp: xp.minimum)
    builtin = max if name == "max" else min

    def impl(xp, x, *args):
        if not hasattr(x, "ndim"):               # prim::max/min on Python ints or an int list
            return builtin(x, *args) if args else builtin(x)
        if args and hasattr(args[0], "ndim"):    # max(self, Tensor other): NaN-propagating
            other = args[0]
            dtype = result_type([(str(a.dtype), Priority.DIM if a.ndim else Priority.ZERO_DIM)
                                 for a in (x, other)])
            return xp.asarray(elementwise(xp)(x.astype(dtype), other.astype(dtype)))
        if not args or args[0] is None:          # max(self) -> 0-d
            return _extreme(name, lambda xp: xp.max if name == "max" else xp.min)(xp, x)
        dim, keepdim = args[0], bool(args[1]) if len(args) > 1 else False
        idx = _arg_extreme(xp, x, dim, True, name)
        if x.ndim == 0:
            return x.copy(), idx
        d = wrap_dim(dim, x.ndim)
        values = xp.take_along_axis(x, idx, axis=d)
        if not keepdim:
            values, idx = xp.squeeze(values, d), xp.squeeze(idx, d)
        return values, idx
    return impl


def _infer_max_min(node, types):
    t = tensor_in(types)
    if len(types) >= 2 and isinstance(types[1], TensorType):    # max(self, Tensor other)
        o = types[1]
        if t.shape is None or o.shape is None:
            dtype, shape = (t.dtype if t.dtype == o.dtype else None), None
        else:
            shape = broadcast_shapes(t.shape, o.shape)
            dtype = None if t.dtype is None or o.dtype is None else result_type(
                [(a.dtype, Priority.DIM if a.rank else Priority.ZERO_DIM) for a in (t, o)])
        return [like(t, dtype, shape)]
    if not types or not isinstance(types[0], TensorType):
        return [o.type for o in node.outputs]
    if len(node.inputs) == 1 or arg(node, 1) is None:
        return [like(t, shape=())]
    shape = _infer_reduced_shape(t, arg(node, 1), arg(node, 2, False))
    return [like(t, shape=shape), like(t, "int64", shape)][:max(len(node.outputs), 1)]


def _argmax_like(name):
    def impl(xp, x, dim=None, keepdim=False):
        if x.dtype == np.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        return _arg_extreme(xp, x, dim, keepdim, name)
    return impl


def _infer_argmax(node, types):
    t = tensor_in(types)
    return [like(t, "int64", _infer_reduced_shape(t, arg(node, 1, None), arg(node, 2, False)))]


defop("aten::max", "Tensor self, int? dim=None, bool keepdim=False", _max_min("max"),
      category="reduction", num_outputs=None, infer=_infer_max_min)
defop("aten::min", "Tensor self, int? dim=None, bool keepdim=False", _max_min("min"),
      category="reduction", num_outputs=None, infer=_infer_max_min)
defop("aten::argmax", "Tensor self, int? dim=None, bool keepdim=False", _argmax_like("argmax"),
      category="reduction", infer=_infer_argmax)
defop("aten::argmin", "Tensor self, int? dim=None, bool keepdim=False", _argmax_like("argmin"),
      category="reduction", infer=_infer_argmax)


def _softmax_impl(log: bool):
    name = "log_softmax" if log else "softmax"

    def impl(xp, x, dim, dtype=None):
        out = dtype_arg(dtype) or str(x.dtype)
        d = wrap_dim(dim, x.ndim)
        if x.size == 0:                   # PyTorch returns empty input before checking dtypes
            return x.astype(out)
        if not is_float(out):
            raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                                      f"'{out}'")
        xs = x.astype(_compute(out))
        if xs.ndim == 0:
            xs = xs.reshape(1)
        with np.errstate(all="ignore"):   # all -inf rows give nan, as in PyTorch
            shifted = xs - xp.max(xs, axis=d, keepdims=True)
            e = xp.exp(shifted)
            total = xp.sum(e, axis=d, keepdims=True)
            res = shifted - xp.log(total) if log else e / total
        return xp.reshape(res, x.shape).astype(out, copy=False)
    return impl


def _infer_softmax(node, types):
    t, dtype = tensor_in(types), arg(node, 2, None)
    out = (t.dtype if dtype is None else
           SCALAR_TYPE_ENUM.get(dtype) if isinstance(dtype, int) else None)
    return [like(t, out)]


defop("aten::softmax", "Tensor self, int dim, ScalarType? dtype=None", _softmax_impl(False),
      category="reduction", infer=_infer_softmax)
defop("aten::log_softmax", "Tensor self, int dim, ScalarType? dtype=None", _softmax_impl(True),
      category="reduction", infer=_infer_softmax)
