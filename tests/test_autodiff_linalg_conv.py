"""Derivative rules of linear algebra, attention, convolution, pooling, fold/unfold and
resampling (``ops/derivatives_linalg.py``, ``ops/derivatives_conv_pool.py`` and the ops of
``ops/backward_ops.py``) against ``torch.autograd``: each op in float64 (rtol 1e-10) and float32,
both sides calling the op by its ATen name with the same arguments (strides, dilation, groups,
padding, ceil_mode, align_corners both ways, batched and ellipsis einsums), then PyTorch's
conventions at special points (max-pool ties in overlapping windows, a singular determinant, a
negative one under logdet, grid coordinates on the border), integer indices without gradients,
and the derivatives without a rule (raised as ``UnsupportedOpError``)."""
from __future__ import annotations

import numpy as np
import pytest

import torchlike as tl
from tests.autodiff_check import Fixed, U, _rng, check_against_torch, check_case, needs_torch
from tests.autodiff_check import make as _make
from torchlike import jit
from torchlike.errors import UnsupportedOpError
from torchlike.functional import apply

try:
    import torch
except ImportError:
    torch = None

pytestmark = pytest.mark.usefixtures("unfused")  # the rules are under test


# -- inputs ------------------------------------------------------------------------------------

def Ties(*shape):
    """Uniform in [-2, 2] rounded to halves: many equal values (max-pool ties)."""
    return ("ties", shape)


def Wellcond(*shape):
    """Square matrices uniform in [-1, 1] plus 2 I."""
    return ("wellcond", shape)


def Spd(*shape):
    return ("spd", shape)


def Sym(*shape):
    return ("sym", shape)


def make(spec, dtype, rng):
    """The shared specs (``U``, ``Fixed``), and matrices and ties of this module's own."""
    kind = spec[0]
    if kind == "ties":
        return (np.round(rng.uniform(-2, 2, spec[1]) * 2) / 2).astype(dtype)
    if kind in ("wellcond", "spd", "sym"):
        a = rng.uniform(-1, 1, spec[1])
        n = spec[1][-1]
        a = {"wellcond": lambda: a + 2 * np.eye(n), "sym": lambda: a + a.swapaxes(-1, -2),
             "spd": lambda: a @ a.swapaxes(-1, -2) + np.eye(n)}[kind]()
        return a.astype(dtype)
    return _make(spec, dtype, rng)


def aten(name, *args, out=None, **kwargs):
    """A case function calling the op ``name`` on both sides: ``torch.ops.aten.<name>`` and
    the torchlike op of that name, the arrays first, then ``args``."""
    def fn(m, *arrays):
        f = getattr(torch.ops.aten, name) if m is torch else (lambda *a, **k: apply(name, *a,
                                                                                   **k))
        r = f(*arrays, *args, **kwargs)
        return r if out is None else r[out]
    return fn


def _aten(m):
    return torch.ops.aten if m is torch else tl


# -- linear algebra --------------------------------------------------------------------------

A, V3, V4 = U(-1, 1, 3, 4), U(-1, 1, 3), U(-1, 1, 4)
LINALG = [
    ("dot", aten("dot"), [V4, V4]),
    ("vdot", aten("vdot"), [V4, V4]),
    ("mv", aten("mv"), [A, V4]),
    ("outer", aten("outer"), [V3, V4]),
    ("ger", aten("ger"), [V3, V4]),
    ("inner", aten("inner"), [U(-1, 1, 2, 3, 4), U(-1, 1, 5, 4)]),
    ("inner_vector", aten("inner"), [V4, U(-1, 1, 2, 4)]),
    ("inner_scalar", aten("inner"), [U(-1, 1), U(-1, 1, 2, 4)]),
    ("kron", aten("kron"), [U(-1, 1, 2, 3), U(-1, 1, 3, 1, 2)]),
    ("addmv", aten("addmv", beta=0.5, alpha=2.0), [V3, A, V4]),
    ("addmv_broadcast", aten("addmv"), [U(-1, 1, 1), A, V4]),
    ("addr", aten("addr", beta=0.5, alpha=2.0), [U(-1, 1, 3, 1), V3, V4]),
    ("addbmm", aten("addbmm", beta=0.5, alpha=2.0),
     [U(-1, 1, 3, 5), U(-1, 1, 2, 3, 4), U(-1, 1, 2, 4, 5)]),
    ("chain_matmul", lambda m, a, b, c: _aten(m).chain_matmul([a, b, c]),
     [U(-1, 1, 2, 3), A, U(-1, 1, 4, 2)]),
    ("multi_dot_vector_ends", lambda m, a, b, c, d: _aten(m).linalg_multi_dot([a, b, c, d]),
     [V3, A, U(-1, 1, 4, 2), U(-1, 1, 2)]),
    ("multi_dot", lambda m, a, b, c: _aten(m).linalg_multi_dot([a, b, c]),
     [U(-1, 1, 5, 3), A, V4]),
    ("tensordot", aten("tensordot", [2, 0], [0, -2]), [U(-1, 1, 3, 4, 5), U(-1, 1, 5, 3, 2)]),
    ("tensordot_outer", aten("tensordot", [], []), [U(-1, 1, 3, 2), U(-1, 1, 2)]),
    ("einsum_mm", lambda m, a, b: _aten(m).einsum("ij,jk->ik", [a, b]), [A, U(-1, 1, 4, 2)]),
    ("einsum_batched", lambda m, a, b: _aten(m).einsum("bij,bjk->bik", [a, b]),
     [U(-1, 1, 2, 3, 4), U(-1, 1, 2, 4, 2)]),
    ("einsum_ellipsis", lambda m, a, b: _aten(m).einsum("...ij,jk->...ik", [a, b]),
     [U(-1, 1, 2, 3, 3, 4), U(-1, 1, 4, 2)]),
    ("einsum_ellipsis_broadcast", lambda m, a, b: _aten(m).einsum("...i,...i->...", [a, b]),
     [U(-1, 1, 2, 1, 4), A]),
    ("einsum_implicit", lambda m, a, b, c: _aten(m).einsum("ab,bc,cd", [a, b, c]),
     [U(-1, 1, 2, 3), A, U(-1, 1, 4, 2)]),
    ("einsum_summed_alone", lambda m, a: _aten(m).einsum("ijk->j", [a]), [U(-1, 1, 2, 3, 4)]),
    ("einsum_outer_permuted", lambda m, a, b: _aten(m).einsum("i,jk -> kji", [a, b]),
     [U(-1, 1, 2), A]),
    ("bilinear", aten("bilinear"), [U(-1, 1, 2, 3, 4), U(-1, 1, 2, 3, 5), U(-1, 1, 6, 4, 5),
                                    U(-1, 1, 6)]),
    ("bilinear_no_bias", aten("bilinear"), [A, U(-1, 1, 3, 5), U(-1, 1, 6, 4, 5)]),
    ("vecdot_negative_dim", aten("linalg_vecdot", dim=-2), [U(-1, 1, 2, 3, 4), A]),
    ("vecdot_dim0", aten("linalg_vecdot", dim=0), [A, A]),
    ("vecdot_vectors", aten("linalg_vecdot"), [V4, V4]),
    ("det", aten("det"), [Wellcond(2, 3, 3)]),
    ("linalg_det", aten("linalg_det"), [Wellcond(3, 3)]),
    ("slogdet", aten("slogdet", out=1), [Wellcond(2, 3, 3)]),
    ("linalg_slogdet_negative", aten("linalg_slogdet"), [Fixed([[1.0, 2.0], [3.0, 4.0]])]),
    ("logdet", aten("logdet"), [Spd(2, 3, 3)]),
    ("inverse", aten("inverse"), [Wellcond(2, 3, 3)]),
    ("linalg_inv", aten("linalg_inv"), [Wellcond(3, 3)]),
    ("solve", aten("linalg_solve"), [Wellcond(2, 3, 3), U(-1, 1, 2, 3, 2)]),
    ("solve_vector", aten("linalg_solve"), [Wellcond(2, 3, 3), V3]),
    ("solve_batched_vectors", aten("linalg_solve"), [Wellcond(2, 3, 3), U(-1, 1, 2, 3)]),
    ("solve_right", aten("linalg_solve", left=False), [Wellcond(2, 3, 3), U(-1, 1, 4, 3)]),
    ("solve_broadcast_A", aten("linalg_solve"), [Wellcond(3, 3), U(-1, 1, 2, 3, 2)]),
    ("cholesky", aten("cholesky"), [Spd(2, 3, 3)]),
    ("linalg_cholesky_upper", aten("linalg_cholesky", upper=True), [Spd(3, 3)]),
    *[(f"matrix_power_{n}", aten("matrix_power", n), [Wellcond(2, 3, 3)])
      for n in (0, 1, 3, 5, -2)],
    ("linalg_matrix_power", aten("linalg_matrix_power", 4), [Wellcond(3, 3)]),
    ("eigh_values", aten("linalg_eigh", out=0), [Sym(2, 4, 4)]),
    # eigenvectors are defined up to sign: a sign-invariant use of both outputs
    ("eigh_vectors", lambda m, a: (lambda lv: (lv[1] * lv[1] * lv[0].unsqueeze(-2)))(
        _aten(m).linalg_eigh(a, "U")), [Sym(2, 4, 4)]),
]

Q, K, Vv = U(-1, 1, 2, 2, 4, 3), U(-1, 1, 2, 2, 5, 3), U(-1, 1, 2, 2, 5, 6)
_BOOL_MASK = np.random.default_rng(5).uniform(0, 1, (4, 5)) > 0.4
_BOOL_MASK[:, 0] = True  # no fully masked row
ATTENTION = [
    ("sdpa", lambda m, q, k, v: _aten(m).scaled_dot_product_attention(q, k, v), [Q, K, Vv]),
    ("sdpa_scale", lambda m, q, k, v: _aten(m).scaled_dot_product_attention(q, k, v,
                                                                               scale=0.3),
     [Q, K, Vv]),
    ("sdpa_causal", lambda m, q, k, v: _aten(m).scaled_dot_product_attention(
        q, k, v, is_causal=True), [Q, K, Vv]),
    ("sdpa_bool_mask", lambda m, q, k, v: _aten(m).scaled_dot_product_attention(
        q, k, v, torch.tensor(_BOOL_MASK) if m is torch else _BOOL_MASK), [Q, K, Vv]),
    ("sdpa_float_mask", lambda m, q, k, v, mask: _aten(m).scaled_dot_product_attention(
        q, k, v, mask), [Q, K, Vv, U(-1, 1, 2, 1, 4, 5)]),
    ("sdpa_3d", lambda m, q, k, v: _aten(m).scaled_dot_product_attention(q, k, v),
     [U(-1, 1, 2, 4, 3), U(-1, 1, 2, 5, 3), U(-1, 1, 2, 5, 2)]),
]

# -- convolution -------------------------------------------------------------------------------

X4 = U(-1, 1, 2, 4, 7, 8)
CONV = [
    ("conv2d_stride_dilation_groups", aten("conv2d", [2, 1], [1, 2], [1, 2], 2),
     [X4, U(-1, 1, 6, 2, 3, 2), U(-1, 1, 6)]),
    ("conv1d_unbatched", aten("conv1d", None, [3], [1]), [U(-1, 1, 3, 10), U(-1, 1, 2, 3, 3)]),
    ("conv2d_same_odd", aten("conv2d", None, [1, 1], "same", [1, 2]),
     [U(-1, 1, 1, 2, 6, 7), U(-1, 1, 3, 2, 4, 3)]),
    ("conv2d_valid", aten("conv2d", None, [1, 1], "valid"), [X4, U(-1, 1, 3, 4, 3, 3)]),
    ("conv3d", aten("conv3d", [2, 2, 2], [1, 1, 1]),
     [U(-1, 1, 1, 2, 5, 4, 5), U(-1, 1, 2, 2, 2, 3, 2), U(-1, 1, 2)]),
    ("conv_transpose2d", aten("conv_transpose2d", [2, 3], [1, 0], [1, 2], 2, [1, 1]),
     [U(-1, 1, 2, 4, 4, 3), U(-1, 1, 4, 3, 3, 2), U(-1, 1, 6)]),
    ("conv_transpose1d_dilation", aten("conv_transpose1d", None, [2], [1], [1], 1, [3]),
     [U(-1, 1, 2, 3, 5), U(-1, 1, 3, 2, 3)]),
    ("conv_transpose1d_output_padding_past_stride",  # allowed: output_padding < dilation
     aten("conv_transpose1d", None, [1], [1], [2], 1, [3]), [U(-1, 1, 2, 3, 5),
                                                           U(-1, 1, 3, 2, 3)]),
    ("conv_transpose3d_unbatched", aten("conv_transpose3d", None, [1, 2, 1], [0, 1, 0]),
     [U(-1, 1, 2, 3, 3, 2), U(-1, 1, 2, 2, 2, 2, 2)]),
    ("convolution", aten("convolution", [1, 2], [0, 1], [1, 1], False, [0, 0], 1),
     [U(-1, 1, 2, 3, 5, 6), U(-1, 1, 2, 3, 2, 2), U(-1, 1, 2)]),
    ("convolution_transposed", aten("convolution", [2], [1], [1], True, [1], 1),
     [U(-1, 1, 2, 3, 5), U(-1, 1, 3, 2, 3), U(-1, 1, 2)]),
    ("_convolution", aten("_convolution", None, [1, 2], [1, 1], [2, 1], False, [0, 0], 2,
                          False, False, True, True), [X4, U(-1, 1, 4, 2, 2, 3)]),
    ("_convolution_mode_same", aten("_convolution_mode", None, [1, 1], "same", [2, 1], 2),
     [U(-1, 1, 1, 4, 6, 5), U(-1, 1, 2, 2, 3, 2)]),
]

# -- pooling, fold / unfold ----------------------------------------------------------------------

P4 = U(-1, 1, 2, 3, 7, 6)
POOL = [
    ("max_pool2d_ceil_overlap_ties", aten("max_pool2d", [3, 3], [2, 2], [1, 1], [1, 1], True),
     [Ties(2, 3, 7, 6)]),
    ("max_pool2d_dilation", aten("max_pool2d", [2, 2], [1, 2], [1, 0], [2, 1]), [P4]),
    ("max_pool2d_with_indices_ties", aten("max_pool2d_with_indices", [2, 3], [1, 1], out=0),
     [Ties(2, 3, 7, 6)]),
    ("max_pool1d", aten("max_pool1d", [3], [2], [1], [2]), [U(-1, 1, 2, 3, 11)]),
    ("max_pool1d_with_indices", aten("max_pool1d_with_indices", [3], [1], out=0),
     [Ties(3, 9)]),
    ("max_pool3d_ties", aten("max_pool3d", [2, 2, 2], [1, 1, 1]), [Ties(1, 2, 4, 3, 4)]),
    ("max_pool3d_with_indices", aten("max_pool3d_with_indices", [2, 2, 2], [2, 1, 2], [1, 0, 1],
                                     [1, 1, 1], True, out=0), [U(-1, 1, 1, 2, 4, 3, 5)]),
    ("adaptive_max_pool1d", aten("adaptive_max_pool1d", [4], out=0), [Ties(2, 3, 9)]),
    ("adaptive_max_pool2d_ties", aten("adaptive_max_pool2d", [3, 4], out=0),
     [Ties(2, 3, 7, 6)]),
    ("adaptive_max_pool3d", aten("adaptive_max_pool3d", [2, 3, 2], out=0),
     [U(-1, 1, 1, 2, 5, 4, 3)]),
    ("avg_pool2d_ceil_exclude_pad", aten("avg_pool2d", [3, 3], [2, 2], [1, 1], True, False),
     [P4]),
    ("avg_pool2d_divisor", aten("avg_pool2d", [2, 3], [1, 2], [1, 1], False, True, 5), [P4]),
    ("avg_pool1d_ceil", aten("avg_pool1d", [3], [2], [1], True, True), [U(-1, 1, 2, 3, 8)]),
    ("avg_pool3d", aten("avg_pool3d", [2, 2, 2], [1, 1, 1], [1, 1, 1], True, False),
     [U(-1, 1, 1, 2, 3, 4, 3)]),
    ("avg_pool2d_unbatched", aten("avg_pool2d", [2, 2]), [U(-1, 1, 3, 6, 5)]),
    ("adaptive_avg_pool2d", aten("adaptive_avg_pool2d", [3, 4]), [P4]),
    ("adaptive_avg_pool1d_unbatched", aten("adaptive_avg_pool1d", [4]), [U(-1, 1, 3, 7)]),
    ("adaptive_avg_pool3d", aten("adaptive_avg_pool3d", [2, 3, 2]), [U(-1, 1, 1, 2, 5, 4, 3)]),
    ("im2col", aten("im2col", [2, 3], [1, 2], [1, 0], [2, 1]), [U(-1, 1, 2, 3, 6, 7)]),
    ("col2im", aten("col2im", [5, 6], [2, 2], [1, 1], [1, 0], [2, 1]), [U(-1, 1, 2, 12, 15)]),
]


def _unpool2d(m, x):
    values, idx = _aten(m).max_pool2d_with_indices(x, [2, 2], [2, 2])
    return _aten(m).max_unpool2d(values * 2.0, idx, [6, 7])


def _unpool3d(m, x):
    values, idx = _aten(m).max_pool3d_with_indices(x, [2, 2, 2], [2, 2, 2])
    return _aten(m).max_unpool3d(values * 2.0, idx, [4, 4, 5], [2, 2, 2], [0, 0, 0])


# the indices an input: an integer tensor, no gradient
_IDX = np.array([[[[0, 3], [9, 11]]]], dtype=np.int64)
POOL += [
    ("max_unpool2d", _unpool2d, [U(-1, 1, 2, 3, 6, 7)]),
    ("max_unpool3d", _unpool3d, [U(-1, 1, 1, 2, 4, 4, 5)]),
    ("max_unpool2d_index_input", aten("max_unpool2d", output_size=[3, 4]),
     [U(-1, 1, 1, 1, 2, 2), Fixed(_IDX)]),
]

# -- resampling --------------------------------------------------------------------------------

R4, R5 = U(-1, 1, 2, 3, 5, 4), U(-1, 1, 1, 2, 3, 4, 5)
RESAMPLE = [
    ("upsample_nearest1d", aten("upsample_nearest1d", [7], None), [U(-1, 1, 2, 3, 5)]),
    ("upsample_nearest2d_scales", aten("upsample_nearest2d", None, [2.0, 1.5]), [R4]),
    ("upsample_nearest2d_down", aten("upsample_nearest2d", [3, 3], None), [R4]),
    ("upsample_nearest3d", aten("upsample_nearest3d", None, [1.5, 2.0, 0.7]), [R5]),
    ("nearest_exact1d", aten("_upsample_nearest_exact1d", [7], None), [U(-1, 1, 2, 3, 5)]),
    ("nearest_exact2d", aten("_upsample_nearest_exact2d", None, [1.7, 0.6]), [R4]),
    ("nearest_exact3d", aten("_upsample_nearest_exact3d", [4, 3, 7], None), [R5]),
]
for _ac in (False, True):
    RESAMPLE += [
        (f"linear1d_align{_ac}", aten("upsample_linear1d", None, _ac, [2.5]),
         [U(-1, 1, 2, 3, 5)]),
        (f"bilinear2d_size_align{_ac}", aten("upsample_bilinear2d", [7, 3], _ac, None), [R4]),
        (f"bilinear2d_scales_align{_ac}", aten("upsample_bilinear2d", None, _ac, [1.5, 2.0]),
         [R4]),
        (f"bicubic2d_align{_ac}", aten("upsample_bicubic2d", None, _ac, [2.0, 1.3]), [R4]),
        (f"trilinear3d_align{_ac}", aten("upsample_trilinear3d", [4, 3, 7], _ac, None), [R5]),
        (f"affine_grid2d_align{_ac}", aten("affine_grid_generator", [2, 3, 4, 5], _ac),
         [U(-1, 1, 2, 2, 3)]),
        (f"affine_grid3d_align{_ac}", aten("affine_grid_generator", [2, 3, 4, 5, 3], _ac),
         [U(-1, 1, 2, 3, 4)]),
    ]
    for _mode, _mname in ((0, "bilinear"), (1, "nearest")):
        for _pad, _pname in ((0, "zeros"), (1, "border"), (2, "reflection")):
            RESAMPLE += [
                (f"grid_sampler2d_{_mname}_{_pname}_align{_ac}",
                 aten("grid_sampler", _mode, _pad, _ac), [R4, U(-1.3, 1.3, 2, 3, 6, 2)]),
                (f"grid_sampler3d_{_mname}_{_pname}_align{_ac}",
                 aten("grid_sampler", _mode, _pad, _ac), [R5, U(-1.3, 1.3, 1, 2, 3, 4, 3)])]

CASES = LINALG + ATTENTION + CONV + POOL + RESAMPLE
# float64 only: a nearly singular matrix and one whose logabsdet sits near zero
F64_ONLY = {"det_nearly_singular"}
CASES += [("det_nearly_singular", aten("det"),
           [Fixed([[1.0, 2.0, 3.0], [2.0, 4.0, 6.001], [1.0, 0.0, 1.0]])])]


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch_float64(case):
    rng = _rng(7)
    check_case(case, [make(s, np.float64, rng) for s in case[2]], "float64")


CASES32 = [c for c in CASES if c[0] not in F64_ONLY]


@needs_torch
@pytest.mark.parametrize("case", CASES32, ids=[c[0] for c in CASES32])
def test_op_matches_torch_float32(case):
    rng = _rng(11)
    check_case(case, [make(s, np.float32, rng) for s in case[2]], "float32")


# -- PyTorch's conventions at special points ---------------------------------------------------

SPECIAL = [
    # an exactly singular matrix: PyTorch's det gradient there is 0
    ("det_singular", aten("det"), [[[1.0, 2.0], [2.0, 4.0]]]),
    ("det_singular_batch", aten("linalg_det"), [[[[1.0, 2.0], [2.0, 4.0]],
                                                 [[2.0, 1.0], [1.0, 3.0]]]]),
    # logdet of a negative determinant is NaN and passes no gradient
    ("logdet_negative", aten("logdet"), [[[[1.0, 2.0], [3.0, 4.0]], [[2.0, 1.0], [1.0, 2.0]]]]),
    # a constant input: every window ties; the first maximum takes the whole cotangent
    ("max_pool_all_equal", aten("max_pool2d", [2, 2], [1, 1]), [np.ones((1, 1, 3, 4))]),
    ("adaptive_max_all_equal", aten("adaptive_max_pool2d", [2, 3], out=0),
     [np.ones((1, 2, 5, 4))]),
    # grid points on the border (align_corners maps +-1 onto the edge pixels): no slope there
    ("grid_border_on_edges", aten("grid_sampler", 0, 1, True),
     [np.arange(12.0).reshape(1, 1, 3, 4) / 7,
      [[[[-1.0, -1.0], [1.0, 1.0], [0.5, -1.0]], [[1.0, 0.25], [-0.5, 1.0], [0.0, 0.0]]]]]),
    ("grid_zeros_outside", aten("grid_sampler", 0, 0, False),
     [np.arange(12.0).reshape(1, 1, 3, 4) / 7, [[[[-1.5, 0.0], [2.0, 2.0], [1.2, -1.1]]]]]),
]


@needs_torch
@pytest.mark.parametrize("case", SPECIAL, ids=[c[0] for c in SPECIAL])
def test_special_points_follow_pytorch(case):
    name, fn, arrays = case
    check_against_torch(lambda *a: fn(tl, *a), lambda *a: fn(torch, *a),
                        [np.asarray(a, np.float64) for a in arrays])


# -- no rule -----------------------------------------------------------------------------------

@jit.script
def _sdpa_dropout(q, k, v):
    return tl.scaled_dot_product_attention(q, k, v, None, 0.1)


@jit.script
def _grid_bicubic(x, g):
    return tl.grid_sampler(x, g, 2, 0, False)


@jit.script
def _einsum_diagonal(a):
    return tl.einsum("ii->i", [a])


@pytest.mark.parametrize("fn, arrays, why", [
    (_sdpa_dropout, [np.ones((2, 3, 4))] * 3, "dropout_p > 0"),
    (_grid_bicubic, [np.ones((1, 2, 4, 4)), np.zeros((1, 3, 3, 2))], "bicubic"),
    (_einsum_diagonal, [np.ones((3, 3))], "repeats an index"),
], ids=["sdpa_dropout", "grid_sampler_bicubic", "einsum_diagonal"])
def test_no_rule_is_named(fn, arrays, why):
    with pytest.raises(UnsupportedOpError, match=why):
        jit.vjp(fn, *arrays)


def test_backward_ops_are_hidden_and_checked():
    """The backward-only ops have no torchlike name and check their arguments."""
    assert not hasattr(tl, "conv_weight_backward")
    from torchlike.ops import registry
    op = registry.get("torchlike::conv_weight_backward")
    with pytest.raises(RuntimeError, match="do not match"):
        op.impl(np, np.ones((1, 3, 4, 4)), np.ones((1, 2, 5, 5)), [4, 2, 2, 2], [1, 1], [0, 0],
                [1, 1], 1)
