"""Derivative rules of shape, indexing, scan and sort ops (``ops/derivatives_shape_more.py``,
``ops/derivatives_index.py``) against ``torch.autograd``: float64 to 1e-10, float32 within
tolerances; repeated indices, ties, zeros in cumprod, negative dims, list outputs used in part,
integer inputs without gradients, and the ops that raise."""
from __future__ import annotations

import numpy as np
import pytest

import torchlike as tl
from tests.autodiff_check import U, _rng, check_against_torch, check_case, make, needs_torch
from torchlike import jit
from torchlike.errors import UnsupportedOpError

try:
    import torch
    import torch.nn.functional as F
except ImportError:
    torch = F = None

pytestmark = pytest.mark.usefixtures("unfused")  # the rules are tested here, not fusion


def I(m, a):  # noqa: E743 -- an int64 index tensor of the library ``m``
    return torch.tensor(a) if m is torch else np.array(a, dtype=np.int64)


def B(m, a):  # a bool mask
    return torch.tensor(a) if m is torch else np.array(a, dtype=bool)


def _broadcast(m, x, y):
    return m.broadcast_tensors(x, y) if m is torch else tl.broadcast_tensors([x, y])


def _pad_op(name, pad):
    return lambda m, x: getattr(tl if m is tl else torch.ops.aten, name)(x, pad)


def _t(m):  # the namespace of the torch.nn.functional-only ops
    return m if m is tl else F


A = U(-2, 2, 3, 5)
A3 = U(-2, 2, 2, 3, 4)
V = U(-2, 2, 5)
MASK = [[True, False, True, True, False], [False, False, True, False, True],
        [True, True, False, False, False]]
# rounded values: ties everywhere
TIES = np.array([[1.0, -1.0, 2.0, 2.0, 1.0, 0.0], [0.0, 0.0, 0.0, 1.0, -1.0, 1.0],
                 [3.0, 1.0, 3.0, -2.0, 3.0, 1.0]])
# zeros first, last, twice, twice in a row, none
ZEROS = np.array([[1.5, 0.0, 2.0, -0.5, 1.2], [0.0, 0.7, 0.0, 1.3, 2.0],
                  [0.8, -1.1, 1.4, 0.9, 0.0], [0.5, 0.0, 0.0, 1.2, 0.3],
                  [1.1, 0.9, -1.3, 0.6, 0.5]])

# (id, torchlike fn, torch fn (None: the same code on torch), inputs)
VIEWS = [
    ("flip", lambda m, x: m.flip(x, [0, -1]), None, [A]),
    ("fliplr", lambda m, x: m.fliplr(x), None, [A]),
    ("flipud", lambda m, x: m.flipud(x), None, [A3]),
    ("roll", lambda m, x: m.roll(x, [1, -2], [0, -1]), None, [A]),
    ("roll_flat", lambda m, x: m.roll(x, 4), None, [A]),
    ("rot90", lambda m, x: m.rot90(x, 1, [0, 1]), None, [A]),
    ("rot90_neg_k", lambda m, x: m.rot90(x, -3, [2, 0]), None, [A3]),
    ("repeat", lambda m, x: x.repeat([2, 1, 3]), None, [A]),
    ("tile_short", lambda m, x: m.tile(x, [2]), None, [A]),
    ("tile", lambda m, x: m.tile(x, [2, 1, 2]), None, [A]),
    ("repeat_interleave_int", lambda m, x: m.repeat_interleave(x, 2, -1), None, [A]),
    ("repeat_interleave_flat", lambda m, x: m.repeat_interleave(x, 3), None, [A]),
    ("repeat_interleave_tensor", lambda m, x: m.repeat_interleave(x, I(m, [1, 0, 3]), 0),
     None, [A]),
    ("repeat_interleave_repeats_input", lambda m, x, r: m.repeat_interleave(x, r, 1), None,
     [A, np.array([1, 0, 2, 1, 3])]),
    ("repeat_interleave_tensor_flat", lambda m, x: m.repeat_interleave(
        x, I(m, [2, 0, 1, 1, 3, 0, 1, 2, 1, 1, 0, 2, 1, 1, 1])), None, [A]),
    ("narrow", lambda m, x: m.narrow(x, 1, 1, 3), None, [A]),
    ("narrow_negative", lambda m, x: m.narrow(x, -1, -3, 2), None, [A]),
    ("narrow_copy", lambda m, x: m.narrow_copy(x, 0, 1, 2), None, [A]),
    ("unbind_partly", lambda m, x: m.unbind(x, 1)[0] * 2.0 + m.unbind(x, 1)[3], None, [A]),
    ("unbind_negative", lambda m, x: m.unbind(x, -1)[2], None, [A3]),
    ("view_as", lambda m, x, y: x.view_as(y) * 2.0, None, [A, U(-1, 1, 5, 3)]),
    ("reshape_as", lambda m, x, y: x.reshape_as(y), None, [A, U(-1, 1, 15)]),
    ("ravel", lambda m, x: m.ravel(x), None, [A3]),
    ("movedim", lambda m, x: m.movedim(x, 0, -1), None, [A3]),
    ("movedim_lists", lambda m, x: m.movedim(x, [0, 1], [2, 0]), None, [A3]),
    ("moveaxis", lambda m, x: m.moveaxis(x, -1, 0), None, [A3]),
    ("mT", lambda m, x: (x.mT if m is torch else tl.mT(x)) * 2.0, None, [A3]),
    ("adjoint", lambda m, x: m.adjoint(x), None, [A]),
    ("broadcast_to", lambda m, x: m.broadcast_to(x, [2, 3, 5]), None, [U(-1, 1, 3, 1)]),
    ("broadcast_tensors", lambda m, x, y: m.mul(*_broadcast(m, x, y)), None,
     [U(-1, 1, 3, 1), U(-1, 1, 1, 5)]),
    ("broadcast_tensors_partly", lambda m, x, y: _broadcast(m, x, y)[1] * 3.0, None,
     [U(-1, 1, 3, 1), U(-1, 1, 1, 5)]),
    ("atleast_1d", lambda m, x: m.atleast_1d(x), None, [A]),
    ("atleast_2d", lambda m, x: m.atleast_2d(x), None, [V]),
    ("atleast_3d", lambda m, x: m.atleast_3d(x), None, [A]),
    ("atleast_3d_list", lambda m, x, y: m.mul(*m.atleast_3d([x, y])), None, [V, V]),
    ("hstack", lambda m, x, y: m.hstack([x, y * y]), None, [A, U(-1, 1, 3, 2)]),
    ("hstack_1d", lambda m, x, y: m.hstack([x, y]), None, [V, U(-1, 1, 3)]),
    ("vstack", lambda m, x, y: m.vstack([x, y]), None, [A, V]),
    ("dstack", lambda m, x, y: m.dstack([x, y]), None, [A, A]),
    ("column_stack", lambda m, x, y: m.column_stack([x, y]), None, [U(-1, 1, 3), A]),
    ("block_diag", lambda m, x, y: m.block_diag(x, y) if m is torch else m.block_diag([x, y]),
     None, [A, U(-1, 1, 2, 2)]),
    ("block_diag_1d", lambda m, x, y: m.block_diag(x, y) if m is torch else
     m.block_diag([x, y]), None, [V, U(-1, 1, 2, 2)]),
    ("tensor_split_partly", lambda m, x: m.tensor_split(x, [2, 3], 1)[0] * 2.0 +
     m.tensor_split(x, [2, 3], 1)[2], None, [A]),
    ("hsplit", lambda m, x: m.hsplit(x, 2)[1], None, [U(-1, 1, 3, 4)]),
    ("vsplit", lambda m, x: m.vsplit(x, [1])[0] * 2.0, None, [U(-1, 1, 4, 3)]),
    ("dsplit", lambda m, x: m.dsplit(x, 2)[0], None, [A3]),
    ("unsafe_chunk", lambda m, x: m.unsafe_chunk(x, 3, -1)[2], None, [A]),
    ("unsafe_split", lambda m, x: m.unsafe_split(x, 2, 0)[0], None, [A]),
    ("unsafe_split_with_sizes", lambda m, x: m.unsafe_split_with_sizes(x, [2, 3], 1)[1], None,
     [A]),
]

DIAGONALS_AND_PADS = [
    ("diagonal", lambda m, x: m.diagonal(x, 1, 0, 2), None, [A3]),
    ("diagonal_negative", lambda m, x: m.diagonal(x, -1, -1, -2), None, [A3]),
    ("diag_1d", lambda m, x: m.diag(x, 1), None, [V]),
    ("diag_2d", lambda m, x: m.diag(x, -1), None, [A]),
    ("diag_embed", lambda m, x: m.diag_embed(x, 1, 0, 2), None, [A]),
    ("diag_embed_default", lambda m, x: m.diag_embed(x), None, [A]),
    ("diagflat", lambda m, x: m.diagflat(x, -1), None, [U(-1, 1, 2, 3)]),
    ("trace", lambda m, x: m.trace(x), None, [A]),
    ("unfold_overlapping", lambda m, x: x.unfold(1, 3, 1), None, [A]),
    ("unfold_gaps", lambda m, x: x.unfold(-1, 2, 3), None, [A3]),
    ("constant_pad_nd", lambda m, x: m.constant_pad_nd(x, [1, 2, 0, 1], 0.5), None, [A]),
    ("constant_pad_crop", lambda m, x: m.constant_pad_nd(x, [-1, 2]), None, [A]),
    ("pad_constant", lambda m, x: _t(m).pad(x, [1, 2], mode="constant", value=0.5), None, [A]),
    ("pad_reflect_1d", lambda m, x: _t(m).pad(x, [2, 1], mode="reflect"), None, [A3]),
    ("pad_reflect_2d", lambda m, x: _t(m).pad(x, [1, 2, 2, 1], mode="reflect"), None, [A3]),
    ("pad_replicate", lambda m, x: _t(m).pad(x, [2, 3, 1, 0], mode="replicate"), None, [A3]),
    ("pad_circular", lambda m, x: _t(m).pad(x, [1, 2], mode="circular"), None, [A3]),
    ("pad_reflect_crop", lambda m, x: _t(m).pad(x, [-1, 2], mode="reflect"), None, [A3]),
    ("reflection_pad1d", lambda m, x: tl.reflection_pad1d(x, [3, 1]) if m is tl else
     torch.ops.aten.reflection_pad1d(x, [3, 1]), None, [A3]),
    ("replication_pad3d", lambda m, x: tl.replication_pad3d(x, [1, 0, 2, 1, 0, 1]) if m is tl
     else torch.ops.aten.replication_pad3d(x, [1, 0, 2, 1, 0, 1]), None,
     [U(-1, 1, 1, 2, 2, 3, 2)]),
    *[(f"{kind}_pad{n}d", _pad_op(f"{kind}_pad{n}d", pad), None, [U(-1, 1, 2, *shape)])
      for kind, n, pad, shape in (("reflection", 2, [1, 2, 2, 0], (3, 4)),
                                  ("reflection", 3, [1, 0, 0, 1, 1, 1], (2, 3, 3)),
                                  ("replication", 1, [0, 3], (4,)),
                                  ("replication", 2, [2, 1, 1, 3], (3, 2)))],
    ("channel_shuffle", lambda m, x: m.channel_shuffle(x, 3), None, [U(-1, 1, 2, 6, 2)]),
    # PyTorch has no derivative for native_channel_shuffle: channel_shuffle's is the reference
    ("native_channel_shuffle", lambda m, x: m.native_channel_shuffle(x, 2),
     lambda x: torch.channel_shuffle(x, 2), [U(-1, 1, 1, 6, 2, 2)]),
    ("pixel_shuffle", lambda m, x: _t(m).pixel_shuffle(x, 2), None, [U(-1, 1, 1, 8, 2, 3)]),
    ("pixel_unshuffle", lambda m, x: _t(m).pixel_unshuffle(x, 2), None,
     [U(-1, 1, 1, 2, 4, 6)]),
]

SCANS = [
    ("cumsum", lambda m, x: m.cumsum(x, 1), None, [A]),
    ("cumsum_negative", lambda m, x: m.cumsum(x, -3), None, [A3]),
    ("cumsum_dtype", lambda m, x: m.cumsum(x, 0, dtype=m.float64), None, [A]),
    ("cumprod", lambda m, x: m.cumprod(x, 1), None, [U(0.5, 1.5, 3, 5)]),
    ("cumprod_zeros", lambda m, x: m.cumprod(x, 1), None, [ZEROS]),
    ("cumprod_zeros_dim0", lambda m, x: m.cumprod(x, 0), None, [ZEROS]),
    ("logcumsumexp", lambda m, x: m.logcumsumexp(x, 1), None, [A]),
    ("logcumsumexp_negative", lambda m, x: m.logcumsumexp(x, -3), None, [A3]),
    ("cummax", lambda m, x: m.cummax(x, 1)[0], None, [A]),
    ("cummax_ties", lambda m, x: m.cummax(x, -1)[0], None, [TIES]),
    ("cummin_ties", lambda m, x: m.cummin(x, 0)[0], None, [TIES]),
    ("diff", lambda m, x: m.diff(x), None, [A]),
    ("diff_n2_dim0", lambda m, x: m.diff(x, 2, 0), None, [U(-1, 1, 5, 3)]),
    ("diff_prepend_append", lambda m, x, p, a: m.diff(x, 2, 1, p, a), None,
     [A, U(-1, 1, 3, 1), U(-1, 1, 3, 2)]),
]

INDEXING = [
    ("index_select", lambda m, x: m.index_select(x, 1, I(m, [0, 2, 2, 4])), None, [A]),
    ("index_select_negative", lambda m, x: m.index_select(x, -3, I(m, [1, 1])), None, [A3]),
    ("index_repeated", lambda m, x: x[I(m, [0, 2, 2, 0, 2])] if m is torch else
     tl.index(x, [I(m, [0, 2, 2, 0, 2])]), None, [A]),
    ("index_second_dim", lambda m, x: x[:, I(m, [[4, 4], [1, 0]])] if m is torch else
     tl.index(x, [None, I(m, [[4, 4], [1, 0]])]), None, [A]),
    ("index_mask", lambda m, x: x[B(m, MASK)] if m is torch else tl.index(x, [B(m, MASK)]),
     None, [A]),
    ("index_pair_separated", lambda m, x: x[I(m, [1, 1, 0]), :, I(m, [3, 3, 0])]
     if m is torch else tl.index(x, [I(m, [1, 1, 0]), None, I(m, [3, 3, 0])]), None, [A3]),
    ("index_negative", lambda m, x: x[I(m, [-1, 0, -1])] if m is torch else
     tl.index(x, [I(m, [-1, 0, -1])]), None, [A]),
    ("take", lambda m, x: m.take(x, I(m, [[0, 14], [3, -1]])), None, [A]),
    ("take_along_dim", lambda m, x: m.take_along_dim(x, I(m, [[0, 4], [1, 1], [3, 3]]), 1),
     None, [A]),
    ("take_along_dim_flat", lambda m, x: m.take_along_dim(x, I(m, [7, 7, 0])), None, [A]),
    ("take_along_dim_broadcast", lambda m, x: m.take_along_dim(x, I(m, [[0, 4, 0]]), -1),
     None, [A]),
    ("masked_select", lambda m, x: m.masked_select(x, B(m, MASK)), None, [A]),
    ("take_along_dim_broadcast_self", lambda m, x: m.take_along_dim(
        x, I(m, [[0, 4], [1, 1], [3, 3]]), 1), None, [U(-1, 1, 1, 5)]),
    ("masked_select_broadcast", lambda m, x: m.masked_select(x, B(m, MASK)), None,
     [U(-1, 1, 1, 5)]),
    ("masked_scatter", lambda m, x, s: m.masked_scatter(x, B(m, MASK), s), None,
     [A, U(-1, 1, 4, 3)]),
    ("scatter", lambda m, x, s: m.scatter(x, 1, I(m, [[0, 2], [4, 1], [3, 0]]), s), None,
     [A, U(-1, 1, 3, 2)]),
    # only the index-shaped corner of src is read (PyTorch's autograd refuses the shapes)
    ("scatter_src_larger", lambda m, x, s: m.scatter(x, 1, I(m, [[0, 2], [4, 1], [3, 0]]), s),
     lambda x, s: x.scatter(1, torch.tensor([[0, 2], [4, 1], [3, 0]]), s[:, :2]),
     [A, U(-1, 1, 3, 4)]),
    ("scatter_value", lambda m, x: m.scatter(x, 0, I(m, [[2, 0, 1]]), 1.5), None, [A]),
    ("scatter_add_repeated", lambda m, x, s: m.scatter_add(
        x, -1, I(m, [[0, 0, 2], [4, 4, 4], [1, 0, 1]]), s), None, [A, U(-1, 1, 3, 3)]),
    ("scatter_reduce_sum", lambda m, x, s: m.scatter_reduce(
        x, 1, I(m, [[0, 0, 2], [4, 4, 4], [1, 0, 1]]), s, "sum", include_self=False), None,
     [A, U(-1, 1, 3, 3)]),
    ("scatter_reduce_mean", lambda m, x, s: m.scatter_reduce(
        x, 1, I(m, [[0, 0, 2], [4, 4, 4], [1, 0, 1]]), s, "mean"), None,
     [A, U(-1, 1, 3, 3)]),
    ("scatter_reduce_prod", lambda m, x, s: m.scatter_reduce(
        x, 1, I(m, [[0, 0, 2], [4, 4, 4], [1, 0, 1]]), s, "prod"), None,
     [A, np.array([[0.5, 0.0, 2.0], [1.5, 0.0, 0.0], [-1.0, 0.7, 0.0]])]),
    ("scatter_reduce_amax_ties", lambda m, x, s: m.scatter_reduce(
        x, 1, I(m, [[0, 0, 2], [4, 4, 4], [1, 0, 1]]), s, "amax", include_self=False), None,
     [TIES[:, :5], np.array([[1.0, 1.0, 2.0], [0.0, 1.0, 1.0], [1.0, 3.0, 1.0]])]),
    ("index_reduce_amin", lambda m, x, s: m.index_reduce(x, 0, I(m, [1, 1, 0]), s, "amin"),
     None, [A, U(-2, 2, 3, 5)]),
    ("index_add_alpha", lambda m, x, s: m.index_add(x, 0, I(m, [0, 2, 0]), s, alpha=2.0),
     None, [A, U(-1, 1, 3, 5)]),
    ("index_fill", lambda m, x: m.index_fill(x, 1, I(m, [1, 3, 1]), -1.0), None, [A]),
    ("index_fill_tensor", lambda m, x, v: m.index_fill(x, 1, I(m, [1, 3, 1]), m.sum(v)),
     None, [A, V]),
    ("index_copy", lambda m, x, s: m.index_copy(x, -1, I(m, [4, 0]), s), None,
     [A, U(-1, 1, 3, 2)]),
    ("index_put_accumulate", lambda m, x, v: m.index_put(x, (I(m, [0, 2, 0, 0]),), v, True),
     None, [A, V]),
    ("index_put", lambda m, x, v: m.index_put(x, (I(m, [2, 0]), I(m, [1, 4])), v), None,
     [A, U(-1, 1, 2)]),
    ("index_put_broadcast_values", lambda m, x, v: m.index_put(x, (I(m, [2, 0]),), v), None,
     [A, U(-1, 1, 1)]),
    ("put", lambda m, x, s: m.put(x, I(m, [3, 14, 3]), s, accumulate=True), None,
     [A, U(-1, 1, 3)]),
    ("select_scatter", lambda m, x, s: m.select_scatter(x, s, -1, 1), None,
     [A, U(-1, 1, 3)]),
    ("slice_scatter", lambda m, x, s: m.slice_scatter(x, s, 1, 1, 5, 2), None,
     [A, U(-1, 1, 3, 2)]),
    ("diagonal_scatter", lambda m, x, s: m.diagonal_scatter(x, s, 1), None,
     [A, U(-1, 1, 3)]),
    ("embedding", lambda m, w: m.embedding(w, I(m, [[1, 3, 1], [0, 3, 3]])) if m is tl else
     F.embedding(I(m, [[1, 3, 1], [0, 3, 3]]), w), None, [U(-1, 1, 5, 3)]),
    ("embedding_padding_freq", lambda m, w: m.embedding(w, I(m, [1, 3, 1, 0, 3, 3]), 3, True)
     if m is tl else F.embedding(I(m, [1, 3, 1, 0, 3, 3]), w, 3, scale_grad_by_freq=True),
     None, [U(-1, 1, 5, 3)]),
]

PICKS = [
    ("sort", lambda m, x: m.sort(x, 1)[0], None, [A]),
    ("sort_descending_negative", lambda m, x: m.sort(x, -3, True)[0], None, [A3]),
    ("sort_ties", lambda m, x: m.sort(x, 1)[0], None, [TIES]),
    ("sort_ties_descending", lambda m, x: m.sort(x, 0, True)[0], None, [TIES]),
    ("topk", lambda m, x: m.topk(x, 3, 1)[0], None, [A]),
    ("topk_smallest", lambda m, x: m.topk(x, 2, 0, False)[0], None, [A]),
    # ties outside the selection (PyTorch's topk orders tied selected values in no set way)
    ("topk_ties", lambda m, x: m.topk(x, 2, 1)[0], None,
     [np.array([[5.0, 1.0, 1.0, 1.0, 4.0], [0.0, 0.0, 2.0, 0.0, 3.0]])]),
    ("kthvalue", lambda m, x: m.kthvalue(x, 2, 1)[0], None, [A]),
    ("kthvalue_keepdim_ties", lambda m, x: m.kthvalue(x, 3, -1, True)[0], None, [TIES]),
    ("median_all_ties", lambda m, x: m.median(x), None, [TIES]),
    ("median_dim", lambda m, x: m.median(x, 1)[0], None, [A]),
    ("median_dim_ties_keepdim", lambda m, x: m.median(x, 0, True)[0], None, [TIES]),
    ("median_all_nan", lambda m, x: m.median(x), None,
     [np.array([[1.0, np.nan, 2.0], [2.0, 0.5, np.nan]])]),
    ("nanmedian_all", lambda m, x: m.nanmedian(x), None,
     [np.array([[1.0, np.nan, 2.0], [2.0, 0.5, np.nan]])]),
    ("nanmedian_dim", lambda m, x: m.nanmedian(x, 1)[0], None,
     [np.array([[1.0, np.nan, 2.0, 0.5], [2.0, 0.5, np.nan, np.nan]])]),
    ("mode_ties", lambda m, x: m.mode(x, 1)[0], None, [TIES]),
    ("msort_ties", lambda m, x: m.msort(x), None, [TIES.T.copy()]),
]

OTHERS = [
    ("as_strided_overlapping", lambda m, x: m.as_strided(x, [3, 4], [3, 1], 1), None, [A]),
    ("combinations", lambda m, x: m.combinations(x, 2), None, [V]),
    ("combinations_with_replacement", lambda m, x: m.combinations(x, 3, True), None,
     [U(-1, 1, 3)]),
    ("cartesian_prod", lambda m, x, y: m.cartesian_prod(x, y) if m is torch else
     m.cartesian_prod([x, y]), None, [U(-1, 1, 3), U(-1, 1, 2)]),
    ("meshgrid_xy_partly", lambda m, x, y, z: m.meshgrid(x, y, z, indexing="xy")[1] * 2.0
     if m is torch else m.meshgrid([x, y, z], "xy")[1] * 2.0, None,
     [U(-1, 1, 3), U(-1, 1, 2), U(-1, 1, 4)]),
    ("meshgrid_ij", lambda m, x, y: m.mul(*(m.meshgrid(x, y, indexing="ij") if m is torch
                                          else m.meshgrid([x, y], "ij"))), None,
     [U(-1, 1, 3), U(-1, 1, 2)]),
    ("cross_broadcast", lambda m, x, y: m.cross(x, y, dim=1), None,
     [U(-1, 1, 4, 3), U(-1, 1, 1, 3)]),
    ("cross_default_dim", lambda m, x, y: m.cross(x, y) if m is torch else m.cross(x, y),
     lambda x, y: torch.ops.aten.cross(x, y), [U(-1, 1, 2, 3, 3), U(-1, 1, 2, 3, 3)]),
    ("linalg_cross", lambda m, x, y: (m if m is tl else m.linalg).cross(x, y) if m is torch
     else m.linalg_cross(x, y), None, [U(-1, 1, 4, 3), U(-1, 1, 4, 3)]),
    # PyTorch's own vander fails in backward (an in-place write): linalg.vander is the reference
    ("vander", lambda m, x: m.vander(x, 4), lambda x: torch.linalg.vander(x, N=4).flip(-1),
     [np.array([0.0, 1.5, -0.7, 2.0])]),
    ("vander_increasing", lambda m, x: m.vander(x, increasing=True),
     lambda x: torch.linalg.vander(x), [V]),
    ("linalg_vander", lambda m, x: m.linalg.vander(x, N=4) if m is torch else
     m.linalg_vander(x, 4), None, [np.array([[0.0, 1.5], [-0.7, 2.0]])]),
    ("trapezoid_dx", lambda m, x: m.trapezoid(x, dx=0.5, dim=0) if m is torch else
     m.trapezoid(x, 0.5, 0), None, [A]),
    ("trapezoid_x", lambda m, y, x: m.trapezoid(y, x, dim=-1), None, [A, U(0, 3, 5)]),
    ("trapz_x_full", lambda m, y, x: m.trapz(y, x, dim=0), None, [A, U(0, 3, 3, 5)]),
    ("cumulative_trapezoid_dx", lambda m, x: m.cumulative_trapezoid(x, dx=2.0, dim=1)
     if m is torch else m.cumulative_trapezoid(x, 2.0, 1), None, [A]),
    ("cumulative_trapezoid_x", lambda m, y, x: m.cumulative_trapezoid(y, x, dim=0), None,
     [A, U(0, 3, 3, 1)]),
]

INTEGER_INPUTS = [
    ("index_select_index_input", lambda m, x, i: m.index_select(x, 0, i), None,
     [A, np.array([2, 0, 2])]),
    ("gather_sorted_index", lambda m, x, i: m.take_along_dim(x, i, 1), None,
     [A, np.array([[4, 0], [1, 1], [2, 3]])]),
    ("cumsum_times_int_input", lambda m, x, i: m.cumsum(x, 0) * i, None,
     [U(-1, 1, 4), np.array([3, 1, 2, 5])]),
]

CASES = VIEWS + DIAGONALS_AND_PADS + SCANS + INDEXING + PICKS + OTHERS + INTEGER_INPUTS


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_float64(case):
    rng = _rng(7)
    check_case(case, [make(s, np.float64, rng) for s in case[3]], "float64")


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_float32(case):
    rng = _rng(11)
    check_case(case, [make(s, np.float32, rng) for s in case[3]], "float32")


# -- scripted programs: lists indexed with __getitem__, lists built in the graph ----------------

def scripted_unbind(x):
    xs = torch.unbind(x, 0)
    return xs[1] * xs[-1] + torch.flip(x, [0])[0] + torch.cummax(x, -1)[0][2]


def scripted_tensor_split(x):
    ys = torch.tensor_split(x, [1, 3], 1)
    return ys[-1] * ys[0]


@needs_torch
@pytest.mark.parametrize("fn", [scripted_unbind, scripted_tensor_split])
def test_scripted_list_items(fn):
    x = _rng(5).uniform(-1, 1, (3, 4))
    check_against_torch(jit.script(fn), fn, [x])


# -- what has no rule ----------------------------------------------------------------------------

@pytest.mark.parametrize("fn, kind", [
    (lambda x: tl.unique_consecutive(x)[0], "aten::unique_consecutive"),
    (lambda x: tl.unique_dim(x, 0)[0], "aten::unique_dim"),
    (lambda x: tl.bincount(np.array([0, 2, 2]), x[:3]), "aten::bincount"),
], ids=["unique_consecutive", "unique_dim", "bincount"])
def test_pytorch_has_no_derivative(fn, kind):
    with pytest.raises(UnsupportedOpError, match=f"{kind}.*PyTorch"):
        jit.vjp(lambda x: fn(x) * 2.0, np.array([1.0, 3.0, 3.0, 2.0]))


@needs_torch
def test_histc_and_factories_pass_no_gradient():
    def f(m, x):
        h = m.histc(x, 3, 0.0, 4.0)
        return h * x[:3] + x.new_zeros([3]) + m.rand_like(x)[:3] * 0.0
    check_against_torch(lambda x: f(tl, x), lambda x: f(torch, x), [np.array([1.0, 3.0, 3.5, 2.0])])
