"""Tensor ops models call around their elementwise work, interpreted (numpy or cupy), with
PyTorch's dtypes and checks::

    %i : Tensor = aten::nonzero(%mask)                  # (n, ndim) int64 indices
    %e : Tensor = aten::empty_like(%x, %none, %none, %none, %none, %none)
    %v : Tensor = aten::narrow(%x, %dim, %start, %length)

* searching: ``nonzero``, ``argwhere``, ``where(condition)`` (``nonzero(as_tuple=True)``),
  ``count_nonzero``;
* factories: ``empty_like`` (zeros: never garbage), ``eye``, ``linspace``;
* views: ``narrow``, ``broadcast_to``, ``movedim`` (``moveaxis``); pieces: ``tensor_split``,
  ``meshgrid``; ``take_along_dim``;
* products: ``dot``, ``mv``, ``outer`` (``ger``), ``trace``, ``kron``;
* reductions that skip NaN: ``nansum``, ``nanmean``; ``diff``;
* distances: ``cosine_similarity``, ``pairwise_distance`` (as ATen computes them);
* ``diagonal`` (a view, as PyTorch's), ``view_as``, ``flipud``/``fliplr``, ``tile``,
  ``cartesian_prod``.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import ListType, TensorType
from .dtypes import is_float, promote_types
from .registry import REGISTRY, defop
from .tensor_common import (
    arg,
    compute_dtype,
    dims_list,
    dtype_arg,
    infer_same,
    like,
    reduce_axes,
    scalar_name,
    tensor_in,
    wrap_dim,
)

# -- searching -----------------------------------------------------------------------------------


def _nonzero(xp, x):
    return xp.asarray(xp.argwhere(x)).astype("int64").reshape(-1, max(x.ndim, 0))


def _infer_indices(node, types):
    t = tensor_in(types)
    return [like(t, "int64", None if t.rank is None else (None, t.rank))]


def _count_nonzero(xp, x, dim=None):
    axes = reduce_axes(x, dim)
    return xp.asarray(xp.count_nonzero(x, axis=axes)).astype("int64")


defop("aten::nonzero", "Tensor self", _nonzero, infer=_infer_indices)
defop("aten::argwhere", "Tensor self", _nonzero, infer=_infer_indices)
defop("aten::count_nonzero", "Tensor self, int[1]? dim=None", _count_nonzero,
      category="reduction",
      infer=lambda node, types: [like(tensor_in(types), "int64", None)])


def _where_one_argument() -> None:
    """``torch.where(condition)``: ``nonzero(condition, as_tuple=True)``, a list of int64
    index tensors, one per dim; the three-argument form stays the elementwise op."""
    op = REGISTRY["aten::where"]
    select = op.impl

    def impl(xp, condition, *rest, **attrs):
        if not rest:
            return [xp.asarray(i).astype("int64") for i in xp.nonzero(condition)]
        return select(xp, condition, *rest, **attrs)
    op.impl = impl


_where_one_argument()

# -- factories -----------------------------------------------------------------------------------

_OPTS = "ScalarType? dtype=None, Layout? layout=None, Device? device=None, bool? pin_memory=None"


def _empty_like(xp, x, dtype=None, layout=None, device=None, pin_memory=None,
                memory_format=None):
    return xp.zeros(x.shape, dtype=dtype_arg(dtype) or x.dtype)


def _eye(xp, n, *args):
    m = args[0] if args and isinstance(args[0], int) and not isinstance(args[0], bool) else n
    opts = args[1:] if args and m is args[0] else args
    if n < 0 or m < 0:
        raise RuntimeError(f"n must be greater or equal to 0, got {min(n, m)}")
    return xp.eye(n, m, dtype=dtype_arg(opts[0] if opts else None) or "float32")


def _linspace(xp, start, end, steps, dtype=None, layout=None, device=None, pin_memory=None):
    if steps < 0:
        raise RuntimeError("number of steps must be non-negative")
    out = dtype_arg(dtype) or "float32"
    return xp.asarray(np.linspace(float(start), float(end), int(steps))).astype(out)


def _factory_type(node, types):
    t = node.outputs[0].type
    return [t if isinstance(t, TensorType) else TensorType()]


defop("aten::empty_like", f"Tensor self, {_OPTS}, MemoryFormat? memory_format=None", _empty_like,
      infer=lambda node, types: [like(tensor_in(types), dtype_arg(arg(node, 1)) or
                                      tensor_in(types).dtype)], foldable=False)
defop("aten::eye", "int n", _eye, infer=_factory_type, foldable=False)
def _infer_linspace(node, types):
    (t,) = _factory_type(node, types)
    steps = arg(node, 2)
    return [t.with_(shape=(steps,)) if isinstance(steps, int) and steps >= 0 else t]


defop("aten::linspace", f"Scalar start, Scalar end, int steps, {_OPTS}", _linspace,
      infer=_infer_linspace, foldable=False)

# -- views ---------------------------------------------------------------------------------------


def _narrow(xp, x, dim, start, length):
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    start = start + size if start < 0 else start
    if not (0 <= start <= size and length >= 0 and start + length <= size):
        raise RuntimeError(f"start ({start}) + length ({length}) exceeds dimension size "
                           f"({size}).")
    return x[(slice(None),) * d + (slice(start, start + length),)]


def _movedim(xp, x, source, destination):
    src, dst = dims_list(source) or [], dims_list(destination) or []
    if len(src) != len(dst):
        raise RuntimeError(f"movedim: Invalid source or destination dims: source ({src} dims) "
                           f"should contain the same number of dims as destination ({dst} dims)")
    return xp.moveaxis(x, [wrap_dim(d, x.ndim) for d in src], [wrap_dim(d, x.ndim) for d in dst])


def _broadcast_to(xp, x, size):
    shape = tuple(x.shape[i - len(size) + x.ndim] if s == -1 else s
                  for i, s in enumerate(size))
    return xp.broadcast_to(x, shape)


def _infer_narrow(node, types):
    t, d, n = tensor_in(types), arg(node, 1), arg(node, 3)
    if t.shape is None or not isinstance(d, int) or not isinstance(n, int) or \
            not -t.rank <= d < t.rank:
        return [like(t, shape=None)]
    return [like(t, shape=tuple(n if i == d % t.rank else s for i, s in enumerate(t.shape)))]


defop("aten::narrow", "Tensor self, int dim, int start, int length", _narrow, category="shape",
      infer=_infer_narrow)
defop("aten::movedim", "Tensor self, int[1] source, int[1] destination", _movedim,
      category="shape", aliases=("moveaxis",))
defop("aten::moveaxis", "Tensor self, int[1] source, int[1] destination", _movedim,
      category="shape", python_name=None)
defop("aten::broadcast_to", "Tensor self, int[] size", _broadcast_to, category="shape")



def _tensor_split(xp, x, indices_or_sections, dim=0):
    """``sections`` (an int: the first ``size % sections`` pieces one longer), a list of split
    indices, or a tensor holding either."""
    d = wrap_dim(dim, x.ndim)
    spec = indices_or_sections
    if hasattr(spec, "ndim"):
        if spec.ndim > 1 or spec.dtype.kind not in "iu":
            raise RuntimeError("tensor_split expected tensor_indices_or_sections to be a zero-"
                               "dimensional or one-dimensional tensor of integer dtype")
        spec = int(spec) if spec.ndim == 0 else [int(i) for i in spec]
    if isinstance(spec, int):
        if spec <= 0:
            raise RuntimeError(f"number of sections must be larger than 0, got {spec}")
        return list(xp.array_split(x, spec, axis=d))
    return list(xp.split(x, list(spec), axis=d))


def _meshgrid(xp, tensors, indexing="ij"):
    if indexing not in ("ij", "xy"):
        raise RuntimeError(f'torch.meshgrid: indexing must be one of "xy" or "ij", but '
                           f'received: {indexing}')
    if any(t.ndim > 1 for t in tensors):
        raise RuntimeError("torch.meshgrid: Expected 0D or 1D tensor in the tensor list")
    return [g.copy() for g in xp.meshgrid(*tensors, indexing=indexing)]


def _take_along_dim(xp, x, indices, dim=None):
    if indices.dtype.kind not in "iu":
        raise RuntimeError(f"torch.take_along_dim(): dtype of indices should be int64 but got "
                           f"{indices.dtype}")
    if dim is None:
        return xp.take_along_axis(x.reshape(-1), indices.reshape(-1).astype(np.int64), axis=0)
    d = wrap_dim(dim, x.ndim)
    if x.ndim != indices.ndim:
        raise RuntimeError(f"torch.take_along_dim(): input and indices should have the same "
                           f"number of dimensions, but got {x.ndim} dimensions for input, and "
                           f"{indices.ndim} dimensions for indices")
    # the other dims broadcast, as PyTorch's
    shape_x = tuple(n if i == d else max(n, m)
                    for i, (n, m) in enumerate(zip(x.shape, indices.shape)))
    shape_i = tuple(m if i == d else n for i, (n, m) in enumerate(zip(shape_x, indices.shape)))
    return xp.take_along_axis(xp.broadcast_to(x, shape_x),
                              xp.broadcast_to(indices, shape_i).astype(np.int64), axis=d)


def _infer_pieces(node, types):
    return [ListType(like(tensor_in(types), shape=None))]


defop("aten::tensor_split", "Tensor self, Any indices_or_sections, int dim=0", _tensor_split,
      category="shape", infer=_infer_pieces)
defop("aten::meshgrid", "Tensor[] tensors, str indexing=\"ij\"", _meshgrid, category="shape",
      infer=lambda node, types: [ListType(TensorType())])
defop("aten::take_along_dim", "Tensor self, Tensor indices, int? dim=None", _take_along_dim,
      infer=lambda node, types: [like(tensor_in(types), shape=None)])

# -- products ------------------------------------------------------------------------------------


def _same_dtype(a, b, what):
    if a.dtype != b.dtype:
        raise RuntimeError(f"{what}: expected both vectors to have same dtype, but found "
                           f"{a.dtype} and {b.dtype}")


def _dot(xp, a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    if a.shape != b.shape:
        raise RuntimeError(f"inconsistent tensor size, expected tensor [{a.shape[0]}] and src "
                           f"[{b.shape[0]}] to have the same number of elements, but got "
                           f"{a.shape[0]} and {b.shape[0]} elements respectively")
    _same_dtype(a, b, "dot")
    comp = compute_dtype(str(a.dtype))
    return xp.asarray(xp.dot(a.astype(comp), b.astype(comp))).astype(a.dtype)


def _mv(xp, m, v):
    if m.ndim != 2 or v.ndim != 1:
        raise RuntimeError(f"vector + matrix @ vector expected, got {m.ndim}, {v.ndim}")
    _same_dtype(m, v, "mv")
    return xp.asarray(m @ v)


def _outer(xp, a, b):
    if a.ndim != 1 or b.ndim != 1:
        raise RuntimeError(f"outer: expected 1D tensors, got {a.ndim}D and {b.ndim}D")
    return xp.asarray(xp.multiply.outer(a, b))


def _trace(xp, x):
    if x.ndim != 2:
        raise RuntimeError(f"trace: expected a matrix, but got tensor with dim {x.ndim}")
    out = "int64" if x.dtype.kind in "biu" else str(x.dtype)
    return xp.asarray(xp.trace(x.astype(compute_dtype(out)))).astype(out)


defop("aten::dot", "Tensor self, Tensor tensor", _dot,
      infer=lambda node, types: [like(tensor_in(types), shape=())])
def _infer_mv(node, types):
    m = tensor_in(types)
    return [like(m, shape=None if m.shape is None else m.shape[:1])]  # (M, K) @ (K,): (M,)


defop("aten::mv", "Tensor self, Tensor vec", _mv, infer=_infer_mv)
defop("aten::outer", "Tensor self, Tensor vec2", _outer, aliases=("ger",))
defop("aten::ger", "Tensor self, Tensor vec2", _outer, python_name=None)
defop("aten::trace", "Tensor self", _trace)
defop("aten::kron", "Tensor self, Tensor other", lambda xp, a, b: xp.asarray(xp.kron(a, b)),
      infer=lambda node, types: [like(tensor_in(types), None, None)])

# -- NaN-skipping reductions, diff -----------------------------------------------------------------


def _nan_reduction(kind):
    def impl(xp, x, dim=None, keepdim=False, dtype=None):
        out = dtype_arg(dtype) or ("int64" if x.dtype.kind in "biu" else str(x.dtype))
        if kind == "nanmean" and x.dtype.kind not in "fc":
            raise RuntimeError(f"nanmean(): expected input to have floating point or complex "
                               f"dtype but got {x.dtype}")
        a = x.astype(compute_dtype(out), copy=False)
        fn = xp.nansum if kind == "nansum" else xp.nanmean
        with np.errstate(all="ignore"):
            r = fn(a, axis=reduce_axes(x, dim), keepdims=bool(keepdim))
        return xp.asarray(r).astype(out)
    return impl


_NAN_SCHEMA = "Tensor self, int[1]? dim=None, bool keepdim=False, ScalarType? dtype=None"
defop("aten::nansum", _NAN_SCHEMA, _nan_reduction("nansum"), category="reduction")
defop("aten::nanmean", _NAN_SCHEMA, _nan_reduction("nanmean"), category="reduction")


def _diff(xp, x, n=1, dim=-1, prepend=None, append=None):
    d = wrap_dim(dim, x.ndim)
    parts = [p for p in (prepend, x, append) if p is not None]
    a = xp.concatenate(parts, axis=d) if len(parts) > 1 else x
    if a.dtype == np.bool_:  # PyTorch: logical_xor of neighbours
        out = a
        for _ in range(n):
            out = xp.logical_xor(out[(slice(None),) * d + (slice(1, None),)],
                                 out[(slice(None),) * d + (slice(None, -1),)])
        return out
    return xp.diff(a, n=n, axis=d)


defop("aten::diff", "Tensor self, int n=1, int dim=-1, Tensor? prepend=None, Tensor? append=None",
      _diff)

# -- distances -----------------------------------------------------------------------------------


def _cosine_similarity(xp, a, b, dim=1, eps=1e-8):
    """ATen's (2.x): both operands broadcast, each divided by its 2-norm over ``dim`` clamped
    to ``eps``, then the product summed over ``dim``, in their promoted (floating) dtype."""
    out = promote_types(str(a.dtype), str(b.dtype))
    if not is_float(out):
        raise RuntimeError(f"expected common dtype to be floating point, yet common dtype is "
                           f"{scalar_name(out)}")
    # each norm is clamped in its operand's own dtype (float16: eps underflows to 0, so an
    # all-zero float16 row gives 0 / 0, as PyTorch's); integer operands take the common dtype
    own = [str(x.dtype) if is_float(str(x.dtype)) else out for x in (a, b)]
    c = np.dtype(compute_dtype(out))
    a, b = xp.broadcast_arrays(a.astype(c), b.astype(c))
    d = wrap_dim(dim, max(a.ndim, 1))
    with np.errstate(invalid="ignore", divide="ignore"):
        na, nb = (xp.maximum(xp.sqrt(xp.sum(x * x, axis=d, keepdims=True)),
                             c.type(np.dtype(dt).type(eps))) for x, dt in ((a, own[0]), (b, own[1])))
        return xp.asarray(xp.sum((a / na) * (b / nb), axis=d)).astype(out, copy=False)


def _pairwise_distance(xp, a, b, p=2.0, eps=1e-6, keepdim=False):
    diff = a - b + a.dtype.type(eps)
    d = max(a.ndim, b.ndim) - 1
    if p == float("inf"):
        return xp.asarray(xp.max(xp.abs(diff), axis=d, keepdims=keepdim))
    if p == 0:
        return xp.asarray(xp.sum(diff != 0, axis=d, keepdims=keepdim)).astype(a.dtype)
    s = xp.sum(xp.abs(diff) ** a.dtype.type(p), axis=d, keepdims=keepdim)
    return xp.asarray(s ** a.dtype.type(1.0 / p))


defop("aten::cosine_similarity", "Tensor x1, Tensor x2, int dim=1, float eps=1e-08",
      _cosine_similarity)
defop("aten::pairwise_distance", "Tensor x1, Tensor x2, float p=2., float eps=1e-06, "
      "bool keepdim=False", _pairwise_distance)



# -- views and arrangements: diagonal, view_as, flipud/fliplr, tile, cartesian_prod ----------


def _diagonal(xp, x, offset=0, dim1=0, dim2=1):
    """A view (writes reach ``x``, as PyTorch's): the other dims in order, then the diagonal."""
    d1, d2 = wrap_dim(dim1, x.ndim), wrap_dim(dim2, x.ndim)
    if d1 == d2:
        raise RuntimeError(f"diagonal dimensions cannot be identical {dim1}, {dim2}")
    s1, s2 = (0, offset) if offset >= 0 else (-offset, 0)
    n = max(0, min(x.shape[d1] - s1, x.shape[d2] - s2))
    index = [slice(None)] * x.ndim
    index[d1], index[d2] = slice(min(s1, x.shape[d1]), None), slice(min(s2, x.shape[d2]), None)
    base = x[tuple(index)]
    rest = [d for d in range(x.ndim) if d not in (d1, d2)]
    shape = tuple(x.shape[d] for d in rest) + (n,)
    strides = tuple(x.strides[d] for d in rest) + (x.strides[d1] + x.strides[d2],)
    return xp.lib.stride_tricks.as_strided(base, shape, strides)


def _infer_diagonal(node, types):
    t = tensor_in(types)
    return [like(t, shape=None if t.rank is None else (None,) * (t.rank - 1))]


def _flip_dim(name: str, dim: int):
    def impl(xp, x):
        if x.ndim < dim + 1:
            raise RuntimeError(f"Input must be >= {dim + 1}-d.")
        return xp.flip(x, axis=dim).copy()
    return impl


def _tile(xp, x, dims):
    dims = tuple(int(d) for d in dims)
    if any(d < 0 for d in dims):
        raise RuntimeError(f"Trying to create tensor with negative dimension {min(dims)}: "
                           f"{list(dims)}")
    return xp.tile(x, dims) if dims or x.ndim else x.copy()


def _cartesian_prod(xp, tensors):
    for t in tensors:
        if t.ndim != 1:
            raise RuntimeError(f"Expect a 1D vector, but got shape {list(t.shape)}")
    if len(tensors) == 1:
        return tensors[0].copy()
    grids = xp.meshgrid(*tensors, indexing="ij")
    return xp.stack([g.reshape(-1) for g in grids], axis=1)


defop("aten::diagonal", "Tensor self, int offset=0, int dim1=0, int dim2=1", _diagonal,
      category="shape", infer=_infer_diagonal)
defop("aten::view_as", "Tensor self, Tensor other",
      lambda xp, x, other: x.reshape(other.shape), category="shape",
      infer=lambda node, types: [like(tensor_in(types), shape=types[1].shape
                                      if isinstance(types[1], TensorType) else None)])
defop("aten::flipud", "Tensor self", _flip_dim("flipud", 0), category="shape",
      infer=infer_same)
defop("aten::fliplr", "Tensor self", _flip_dim("fliplr", 1), category="shape",
      infer=infer_same)
defop("aten::tile", "Tensor self, int[] dims", _tile, category="shape",
      infer=lambda node, types: [like(tensor_in(types), shape=None)])
defop("aten::cartesian_prod", "Tensor[] tensors", _cartesian_prod, category="shape",
      infer=lambda node, types: [TensorType()])
