"""Shape ops: splits and chunks, indexing and views, reshapes, expands, joins (cat, stack).

Views stay views (``expand`` gives stride-0 arrays), so layouts reach the kernels as PyTorch would
give them; ``cat``/``stack`` promote their inputs' dtypes as PyTorch does.
"""
from __future__ import annotations

import math
from typing import Any, List, Optional, Sequence

from ..ir.types import STR, TENSOR, ListType, TensorType
from .dtypes import promote_types
from .registry import REGISTRY, OpDef, defop, register
from .tensor_common import (
    UNKNOWN,
    arg,
    index_along,
    infer_same,
    known_dim,
    like,
    tensor_in,
    wrap_dim,
)

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
        out.append(x[index_along(x.ndim, dim, slice(start, start + s))])
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
    d = known_dim(node.attrs.get("dim", 0), t.rank)
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
      category="shape", num_outputs=None, unpacks=True, infer=_infer_constant_chunk,
      python_name=None)



def _broadcasting_chunk(xp, *xs, chunks, dim):
    """``prim::BroadcastingChunk``: the ``chunks`` chunks along ``dim`` of the broadcast of
    ``xs``, for each input in turn (``fuser/chunk_motion.py``).  An input broadcast along
    ``dim`` (size 1 there, or too few dims) is passed whole to every chunk: the elementwise ops
    that consume the chunks broadcast it as they would have broadcast it before the chunk."""
    rank = max((x.ndim for x in xs), default=0)
    if rank == 0:
        raise RuntimeError("chunk expects at least a 1-dimensional tensor")
    d = wrap_dim(dim, rank)
    size = max(x.shape[d - rank + x.ndim] if d - rank + x.ndim >= 0 else 1 for x in xs)
    sizes = _chunk_sizes(size, chunks)
    if len(sizes) != chunks:  # what unpacking torch.chunk's list would raise
        raise RuntimeError(f"chunk of a size-{size} dim gives {len(sizes)} pieces, not the "
                           f"{chunks} unpacked")
    out = []
    for x in xs:
        dx = d - rank + x.ndim
        if dx < 0 or x.shape[dx] == 1 and size != 1:
            out.extend([x] * chunks)
        else:
            out.extend(_pieces(x, sizes, dx))
    return out


register(OpDef("prim::BroadcastingChunk", (), _broadcasting_chunk, category="shape",
               num_outputs=None, unpacks=True))


# -- indexing and views --------------------------------------------------------------------------

def _select(xp, x, dim, index):
    if x.ndim == 0:
        raise IndexError("select() cannot be applied to a 0-dim tensor.")
    d = wrap_dim(dim, x.ndim)
    size = x.shape[d]
    if not -size <= index < size:
        raise IndexError(f"select(): index {index} out of range for tensor of size "
                         f"{list(x.shape)} at dimension {d}")
    return x[index_along(x.ndim, d, index)]


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
    return x[index_along(x.ndim, wrap_dim(dim, x.ndim), slice(start, end, step))]


def _infer_select(node, types):
    t = tensor_in(types)
    d = known_dim(arg(node, 1), t.rank)
    if t.shape is None or d is None:
        return [like(t, shape=None)]
    return [like(t, shape=t.shape[:d] + t.shape[d + 1:])]


def _infer_slice(node, types):
    t = types[0] if types else TENSOR
    if not isinstance(t, TensorType):
        return [t if isinstance(t, ListType) else node.outputs[0].type]
    d = known_dim(arg(node, 1, 0), t.rank)
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
    a, b = known_dim(arg(node, 1), t.rank), known_dim(arg(node, 2), t.rank)
    if a is None or b is None:
        return [like(t, shape=(None,) * t.rank)]
    shape = list(t.shape)
    shape[a], shape[b] = shape[b], shape[a]
    return [like(t, shape=shape)]


def _infer_permute(node, types):
    t, dims = tensor_in(types), arg(node, 1)
    if t.shape is None or not isinstance(dims, list):
        return [like(t, shape=None if t.shape is None else (None,) * t.rank)]
    axes = [known_dim(d, t.rank) for d in dims]
    if len(axes) != t.rank or any(a is None for a in axes):
        return [like(t, shape=(None,) * t.rank)]
    return [like(t, shape=[t.shape[a] for a in axes])]


defop("aten::t", "Tensor self", _t, category="shape", infer=_infer_t)
# x.T as TorchScript records it: every dim reversed (numpy's .T), any rank
defop("aten::numpy_T", "Tensor self", lambda xp, x: x.T, category="shape", infer=_infer_t)
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
    s, e = known_dim(arg(node, 1, 0), t.rank), known_dim(arg(node, 2, -1), t.rank)
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
      category="shape", infer=infer_same)
defop("aten::clone", "Tensor self, int? memory_format=None",
      lambda xp, x, memory_format=None: x.copy(), category="shape", infer=infer_same)
defop("aten::detach", "Tensor self", lambda xp, x: x, category="shape", infer=infer_same)


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
        d = known_dim(arg(node, 1, 0), kept[0].rank)
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
# prim::FusedConcat[dim=1](%a, %b, ...): aten::cat of a fusion group's results, as the group's
# output (fuser/concat_outputs.py; PyTorch's legacy fuser had the same node)
register(OpDef("prim::FusedConcat", (), lambda xp, *xs, dim=0: _cat(xp, list(xs), dim),
               category="shape"))


def _triangle(keep):
    def impl(xp, x, diagonal=0):
        if x.ndim < 2:
            raise RuntimeError(f"{keep}: input tensor must have at least 2 dimensions")
        return getattr(xp, keep)(x, int(diagonal))  # numpy's: over the last two dims
    return impl


def _infer_same(node, types):
    return [like(tensor_in(types))]


# triu / tril: the upper / lower triangle of the last two dims, the rest zero
defop("aten::triu", "Tensor self, int diagonal=0", _triangle("triu"), infer=_infer_same)
defop("aten::tril", "Tensor self, int diagonal=0", _triangle("tril"), infer=_infer_same)


def _broadcast_tensors(xp, tensors):
    return list(xp.broadcast_arrays(*tensors))


def _infer_broadcast_tensors(node, types):
    return [ListType(TENSOR)]


def _pad_widths(x, pad):
    """PyTorch's pad list (last dim first: left, right, then the dim before ...) -> numpy's
    per-dim (before, after) pairs."""
    pad = [int(p) for p in pad]
    if len(pad) % 2 or len(pad) // 2 > x.ndim:
        raise RuntimeError(f"Padding length must be divisible by 2 and at most twice the number "
                           f"of dims ({x.ndim}), got {len(pad)}")
    widths = [(0, 0)] * x.ndim
    for i in range(len(pad) // 2):
        widths[x.ndim - 1 - i] = (pad[2 * i], pad[2 * i + 1])
    return widths


def _constant_pad(xp, x, pad, value=0):
    widths = _pad_widths(x, pad)
    # negative padding crops (PyTorch allows it for constant mode)
    crop = tuple(slice(max(-b, 0), x.shape[d] - max(-a, 0)) for d, (b, a) in enumerate(widths))
    x = x[crop]
    grow = [(max(b, 0), max(a, 0)) for b, a in widths]
    return xp.pad(x, grow, mode="constant", constant_values=x.dtype.type(value))


_PAD_MODES = {"reflect": "reflect", "replicate": "edge", "circular": "wrap"}


_PAD_SUPPORT = ("Padding size {} is not supported for {}D input tensor.\n"
                "Supported combinations for non-constant padding:\n"
                "  - 2D or 3D input: padding size = 2 (pads last dimension)\n"
                "  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n"
                "  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)")


def _pad(xp, x, pad, mode="constant", value=None):
    """F.pad: constant mode pads (or crops) any dims; the other modes pad the last 1-3 dims of
    a batched or unbatched (C, *spatial) input as ATen dispatches them -- reflect and replicate
    to ``reflection_pad{n}d`` / ``replication_pad{n}d`` (their checks; negative pads crop),
    circular wraps at most once around."""
    if mode == "constant":
        return _constant_pad(xp, x, pad, 0 if value is None else value)
    if mode not in _PAD_MODES:
        raise NotImplementedError(f"Unrecognised padding mode {mode}")
    n = len(pad) // 2
    if len(pad) % 2 or not (1 <= n <= 3 and x.ndim in (n + 1, n + 2)):
        raise NotImplementedError(_PAD_SUPPORT.format(len(pad), x.ndim))
    if mode != "circular":
        kind = "reflection" if mode == "reflect" else "replication"
        return REGISTRY[f"aten::{kind}_pad{n}d"].impl(xp, x, pad)
    widths = _pad_widths(x, pad)
    for d, (b, a) in enumerate(widths):
        if b > x.shape[d] or a > x.shape[d]:
            raise RuntimeError("Padding value causes wrapping around more than once.")
    x = x[tuple(slice(max(-b, 0), x.shape[d] - max(-a, 0)) for d, (b, a) in enumerate(widths))]
    return xp.pad(x, [(max(b, 0), max(a, 0)) for b, a in widths], mode="wrap")


defop("aten::broadcast_tensors", "Tensor[] tensors", _broadcast_tensors,
      infer=_infer_broadcast_tensors, category="shape")
def _infer_padded(node, types):
    """A constant ``pad`` list (pairs from the last dim back) grows those dims; else the rank."""
    t = tensor_in(types)
    if t.shape is None:
        return [like(t, shape=None)]
    pad = arg(node, 1)
    if not isinstance(pad, list) or len(pad) % 2 or len(pad) // 2 > len(t.shape) or \
            not all(isinstance(p, int) for p in pad):
        return [like(t, shape=(None,) * len(t.shape))]
    shape = list(t.shape)
    for k in range(len(pad) // 2):
        d = len(shape) - 1 - k
        shape[d] = None if shape[d] is None else shape[d] + pad[2 * k] + pad[2 * k + 1]
    return [like(t, shape=tuple(shape))]


defop("aten::constant_pad_nd", "Tensor self, int[] pad, Scalar value=0", _constant_pad,
      infer=_infer_padded)
defop("aten::pad", "Tensor self, int[] pad, str mode=\"constant\", float? value=None", _pad,
      infer=_infer_padded)
