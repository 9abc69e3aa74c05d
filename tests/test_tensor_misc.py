"""The ops of ``ops/tensor_misc.py`` and ``ops/tensor_misc_sampling.py`` against PyTorch: each
eagerly over several shapes, dtypes, NaN and ties (``kthvalue`` / ``mode`` return ATen's index
among equal values, ``unique_dim`` ATen's order with NaN), then in functions as
``torch.jit.script`` / ``torch.jit.trace`` print them, run interpreted, fused and fused strictly
(``torch.unique`` & co. through the ``torch.functional`` helpers a scripted graph calls,
``F.grid_sample(F.affine_grid(...))`` through torchlike's nn function table); then each error
path's exception type and message (checked against torch's where torch raises), the registry
entries and the inferred types.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_modes import against_torch, program_module
from graph_modes import check_torch as check
from graph_modes import to_torch as T

import torchlike as tl
from torchlike.ir import parse_graph
from torchlike.ir.types import TensorType
from torchlike.ops import registry
from torchlike.ops.functions import call_function
from torchlike.ops.inplace import INPLACE_OF, mutates
from torchlike.passes import infer_types

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]
RNG = np.random.default_rng(0)
FLOATS = [np.float32, np.float64, np.float16]


def randn(*shape, dtype=np.float32):
    return np.asarray(RNG.standard_normal(shape)).astype(dtype)



def impl(name):
    return registry.get(name).impl


# -- layout ------------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.float16])
def test_diag_diag_embed_rot90against_torch(torch, dtype):
    for shape in ((3, 4), (4, 3), (5,), (0,), (2, 3, 4)):
        x = (randn(*shape) * 3).astype(dtype)
        X = T(torch, x)
        for k in (-5, -1, 0, 1, 2, 6):
            if x.ndim <= 2:
                check(tl.diag(x, k), torch.diag(X, k))
            for d1, d2 in ((-2, -1), (0, 2), (-1, 0), (1, 0)):
                if x.ndim >= 1 and max(d1, d2) <= x.ndim:
                    check(tl.diag_embed(x, k, d1, d2), torch.diag_embed(X, k, d1, d2))
            for dims in ([0, 1], [1, 0], [-1, 0], [0, -1]):
                if x.ndim >= 2:
                    check(tl.rot90(x, k, dims), torch.rot90(X, k, dims))


def test_take_reshape_asagainst_torch(torch):
    for x in (randn(3, 4), np.arange(6), np.array(5.0), randn(2, 0)):
        n = max(x.size, 1)
        for index in (np.array([0, -1]), np.array([[n - 1, -n], [0, 0]]), np.array(0),
                      np.zeros(0, np.int64)):
            if x.size or not index.size:
                check(tl.take(x, index), torch.take(T(torch, x), T(torch, index)))
    x = randn(2, 6)
    for shape in ((3, 4), (12,), (1, 2, 6)):
        check(tl.reshape_as(x, np.zeros(shape)), T(torch, x).reshape_as(torch.zeros(shape)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16, np.int64, np.uint8])
def test_inneragainst_torch(torch, dtype):
    for s1, s2 in (((3, 4), (4,)), ((4,), (4,)), ((2, 3, 4), (5, 4)), ((3, 0), (2, 0)),
                   ((), (2, 3)), ((3, 2), ())):
        a, b = (randn(*s1) * 3).astype(dtype), (randn(*s2) * 3).astype(dtype)
        check(tl.inner(a, b), torch.inner(T(torch, a), T(torch, b)), rtol=2e-3, atol=2e-2)
    # a 0-d operand: mul's type promotion
    v = randn(3)
    check(tl.inner(np.array(2), v), torch.inner(torch.tensor(2), T(torch, v)))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_crossagainst_torch(torch, dtype):
    for s1, s2, dim in (((4, 3), (4, 3), -1), ((3, 5), (3, 5), 0), ((2, 1, 3), (1, 4, 3), 2),
                        ((3, 3), (3, 1), 0), ((2, 3, 2), (2, 3, 2), -2)):
        a, b = (randn(*s1) * 4).astype(dtype), (randn(*s2) * 4).astype(dtype)
        A, B = T(torch, a), T(torch, b)
        check(tl.linalg_cross(a, b, dim), torch.linalg.cross(A, B, dim=dim))
        check(tl.cross(a, b, dim), torch.cross(A, B, dim=dim))
        check(tl.cross(a, b), torch.ops.aten.cross(A, B, None))  # the first dim of size 3


def test_block_diag_and_stacksagainst_torch(torch):
    lists = [[np.array(2), np.arange(3.0), np.ones((2, 2), np.int32)],
             [np.zeros(0), np.zeros((2, 0)), np.zeros((0, 3))],
             [np.array([True]), np.array([[False, True]])],
             [np.array(2), np.ones((2, 2), np.int32)],
             [randn(2, 3), randn(1, 2).astype(np.float64)]]
    check(tl.block_diag([]), torch.block_diag())
    for ts in lists:
        check(tl.block_diag(ts), torch.block_diag(*T(torch, ts)))
    for ts in ([np.arange(3), np.arange(3.0)], [randn(2, 3), randn(2, 3)], [np.array(1.0),
               np.array(2)], [randn(2, 3, 2), randn(2, 3, 2).astype(np.float16)],
               [randn(3), randn(3, 1)[:, 0]]):
        for name in ("vstack", "hstack", "dstack", "column_stack", "row_stack"):
            op = getattr(tl, "vstack" if name == "row_stack" else name)
            check(op(ts), getattr(torch, name)(T(torch, ts)))
    ts = [np.zeros(0), randn(2)]  # cat skips a 1-d empty tensor
    check(tl.hstack(ts), torch.hstack(T(torch, ts)))


def test_tri_indicesagainst_torch(torch):
    for row, col, offset in ((3, 4, 1), (4, 3, -1), (0, 2, 0), (5, 5, 10), (3, 4, -5), (1, 1, 0)):
        for name in ("triu_indices", "tril_indices"):
            check(getattr(tl, name)(row, col, offset), getattr(torch, name)(row, col, offset))
            check(getattr(tl, name)(row, col, offset, 3),  # ScalarType 3: int32
                  getattr(torch, name)(row, col, offset, dtype=torch.int32))


def test_repeat_interleaveagainst_torch(torch):
    for x in (np.arange(6).reshape(2, 3), randn(2, 3, 2), np.array(5.0), np.array([True, False])):
        X = T(torch, x)
        for r in (0, 1, 3):
            check(tl.repeat_interleave(x, r), X.repeat_interleave(r))
            for d in range(-x.ndim, x.ndim):
                check(tl.repeat_interleave(x, r, d), X.repeat_interleave(r, d))
                check(tl.repeat_interleave(x, r, d, output_size=x.shape[d] * r),
                      X.repeat_interleave(r, d, output_size=x.shape[d] * r))
                for reps in (np.array(r), np.array([r]), RNG.integers(0, 3, x.shape[d]),
                             RNG.integers(0, 3, x.shape[d]).astype(np.int32)):
                    check(tl.repeat_interleave(x, reps, d), X.repeat_interleave(T(torch, reps), d))
        check(tl.repeat_interleave(x, np.array([2])), X.repeat_interleave(torch.tensor([2])))
    for reps in (np.array([1, 0, 3]), np.array([2, 2], np.int32), np.zeros(0, np.int64)):
        check(tl.repeat_interleave(reps), torch.repeat_interleave(T(torch, reps)))
        n = int(reps.sum())
        check(tl.repeat_interleave(reps, output_size=n),
              torch.repeat_interleave(T(torch, reps), output_size=n))
        check(impl("aten::repeat_interleave")(np, reps, n),  # a graph's two inputs
              torch.repeat_interleave(T(torch, reps), output_size=n))


# -- order statistics --------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.bool_, np.float16])
def test_aminmaxagainst_torch(torch, dtype):
    for shape in ((3, 4), (5,), (), (2, 0, 3)):
        x = np.asarray(randn(*shape) * 3).astype(dtype)
        if dtype in FLOATS and x.size > 2:
            x.reshape(-1)[[0, 5 % x.size]] = np.nan
        X = T(torch, x)
        if x.size:
            for keepdim in (False, True):
                check(tl.aminmax(x, keepdim=keepdim), tuple(torch.aminmax(X, keepdim=keepdim)))
        for d in range(-max(x.ndim, 1), max(x.ndim, 1)):
            if x.ndim and x.shape[d] == 0:
                continue
            for keepdim in (False, True):
                check(tl.aminmax(x, dim=d, keepdim=keepdim),
                      tuple(torch.aminmax(X, dim=d, keepdim=keepdim)))


@pytest.mark.parametrize("n", [1, 2, 5, 16, 17, 33, 100, 300])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float64, np.int32, np.float16])
def test_kthvalue_mode_ties_and_nan_as_torch(torch, n, dtype):
    """Many ties (and NaN): the indices are ATen's quickselect's and std::sort's, exactly."""
    for high in (2, 5, 1000):
        x = RNG.integers(0, high, (3, n)).astype(dtype)
        if dtype in FLOATS:
            x[RNG.random(x.shape) < 0.15] = np.nan
        X = T(torch, x)
        for k in sorted({1, (n + 1) // 2, n}):
            for d, keepdim in ((1, False), (-1, True)):
                check(tl.kthvalue(x, k, d, keepdim), tuple(torch.kthvalue(X, k, d, keepdim)))
        k = min(2, n)
        check(tl.kthvalue(x.T.copy(), k, 0), tuple(torch.kthvalue(X.T.contiguous(), k, 0)))
        check(tl.mode(x, 1), tuple(torch.mode(X, 1)))
        check(tl.mode(x.T.copy(), 0, True), tuple(torch.mode(X.T.contiguous(), 0, True)))
    if dtype == np.int64:
        check(tl.mode(np.array([True, False, True])), tuple(torch.mode(torch.tensor(
            [True, False, True]))))
        check(tl.kthvalue(np.float32(3).reshape(()), 1),
              tuple(torch.kthvalue(torch.tensor(3.0), 1)))
        check(tl.mode(np.zeros((0, 3)), 1), tuple(torch.mode(torch.zeros(0, 3, dtype=torch.float64),
                                                                1)))


def test_std_sort_is_libstdcxx():
    """The reproduction sorts (stable below 17 items, not above), heapsort fallback included."""
    from torchlike.ops.tensor_misc_sampling import std_sort
    for n in (0, 1, 5, 16, 17, 64, 500):
        data = RNG.integers(0, 7, n).tolist()
        out = std_sort(list(zip(data, range(n))), lambda a, b: a[0] < b[0])
        assert [v for v, _ in out] == sorted(data)
        if n <= 16:
            assert out == sorted(zip(data, range(n)))
    organ = list(range(100)) + list(range(100, 0, -1))  # deep recursion: the heapsort path
    assert std_sort(organ, lambda a, b: a < b) == sorted(organ)


def test_mode_index_as_torch_where_std_sort_falls_back_to_heapsort(torch):
    for n in (100, 333):
        for div in (1, 3, 25):
            organ = np.array(list(range(n)) + list(range(n, 0, -1))) // div
            for x in (organ, organ[::-1].copy(), np.concatenate([organ, organ])):
                check(tl.mode(x), tuple(torch.mode(T(torch, x))))


# -- counting ----------------------------------------------------------------------------------

def test_bincountagainst_torch(torch):
    for x in (np.array([1, 1, 4]), np.array([0, 3, 3, 3], np.uint8), np.array([2], np.int32),
              np.zeros(0, np.int64), np.array([5, 0, 5], np.int16)):
        X = T(torch, x)
        for minlength in (0, 3, 8):
            check(tl.bincount(x, minlength=minlength), torch.bincount(X, minlength=minlength))
            for wd in (np.float32, np.float64, np.int64, np.float16, np.bool_):
                w = (RNG.random(x.size) * 4).astype(wd)
                if x.size:
                    w[0] = np.nan if wd in FLOATS else w[0]
                check(tl.bincount(x, w, minlength), torch.bincount(X, T(torch, w), minlength))


@pytest.mark.parametrize("dtype", FLOATS)
def test_histcagainst_torch(torch, dtype):
    x = np.concatenate([np.linspace(-1.5, 6, 301), np.arange(0, 1.0001, 0.01),
                        [np.nan, np.inf, -np.inf]]).astype(dtype)
    for bins in (1, 3, 10, 13, 100):
        for lo, hi in ((0, 1), (-1, 1), (0.1, 0.7), (-3.3, 5.9)):
            check(tl.histc(x, bins, lo, hi), torch.histc(T(torch, x), bins, lo, hi))
    finite = x[np.isfinite(x)]
    for data in (finite, finite[:1], np.array(2.0, dtype), np.zeros(0, dtype)):
        for lo, hi in ((0, 0), (2, 2)):  # min == max: the data's range
            check(tl.histc(data, 7, lo, hi), torch.histc(T(torch, data), 7, lo, hi))


# -- scatters ----------------------------------------------------------------------------------

SCATTER = [  # (self shape, dim, index, src shape)
    ((4,), 0, np.array([0, 0, 2, 2, 2]), (5,)),
    ((3, 4), 1, np.array([[0, 1, 1], [3, 3, 3]]), (2, 4)),
    ((3, 4), 0, np.array([[0, 1, 2, 0], [2, 2, 2, 2]]), (3, 4)),
    ((2, 3, 2), -1, np.array([[[1, 1]], [[0, 0]]]), (2, 2, 2)),
    ((), 0, np.array(0), ()),
    ((3, 4), 1, np.zeros((0, 2), np.int64), (2, 4)),
]


@pytest.mark.parametrize("case", range(len(SCATTER)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.uint8, np.bool_,
                                   np.float16, np.int32])
def test_scatter_reduceagainst_torch(torch, case, dtype):
    shape, dim, index, sshape = SCATTER[case]
    x, src = (np.asarray(randn(*s) * 5).astype(dtype) for s in (shape, sshape))
    if dtype in FLOATS and src.size > 1:
        src.reshape(-1)[1] = np.nan
    X, S, I = T(torch, x), T(torch, src), T(torch, index)
    for reduce in ("sum", "prod", "mean", "amax", "amin", "max"):
        if reduce == "mean" and dtype == np.bool_:
            continue
        for include_self in (True, False):
            want = X.scatter_reduce(dim, I, S, reduce, include_self=include_self)
            check(tl.scatter_reduce(x, dim, index, src, reduce, include_self), want)
            y = x.copy()
            assert tl.scatter_reduce_(y, dim, index.astype(np.int32), src, reduce,
                                      include_self) is y
            check(y, want)
    for value in (2.7, True, -1):
        y = x.copy()
        tl.scatter_(y, dim, index, value)
        check(y, X.clone().scatter_(dim, I, value))
    for reduce in (None, "add", "multiply"):
        y = x.copy()
        tl.scatter_(y, dim, index, src, reduce)
        want = X.clone().scatter_(dim, I, S) if reduce is None else \
            X.clone().scatter_(dim, I, S, reduce=reduce)
        check(y, want)
    y = x.copy()
    assert tl.scatter_add_(y, dim, index, src) is y
    check(y, X.clone().scatter_add_(dim, I, S))


# -- unique ------------------------------------------------------------------------------------

UNIQUE_INPUTS = [np.float32([1.0, np.nan, 2.0, np.nan, 1.0, -0.0, 0.0]), np.array([[3, 1], [2, 1]]),
                 np.array([True, False, True]), np.array(3.0), np.zeros((0, 2), np.float32),
                 np.array([[1, 2], [1, 2], [3, 0], [1, 2]], np.int32),
                 RNG.integers(0, 3, (6, 40)).astype(np.float16)]


@pytest.mark.parametrize("case", range(len(UNIQUE_INPUTS)))
def test_uniqueagainst_torch(torch, case):
    x = UNIQUE_INPUTS[case]
    X, aten = T(torch, x), torch.ops.aten
    for inverse in (False, True):
        for counts in (False, True):
            for sort in (False, True):
                check(impl("aten::_unique2")(np, x, sort, inverse, counts),
                      aten._unique2(X, sort, inverse, counts))
            check(tl.unique_consecutive(x, inverse, counts),
                  aten.unique_consecutive(X, inverse, counts, None))
            if x.ndim and not (x.shape[0] == 0 and x.ndim > 1):
                check(tl.unique_consecutive(x, inverse, counts, 0),
                      aten.unique_consecutive(X, inverse, counts, 0))
        check(impl("aten::_unique")(np, x, True, inverse), aten._unique(X, True, inverse))
    for d in range(-x.ndim, x.ndim):
        if 0 in x.shape and x.shape[d] != 0:
            continue
        check(tl.unique_dim(x, d, True, True, True), aten.unique_dim(X, d, True, True, True))
        check(tl.unique_consecutive(x, True, True, d), aten.unique_consecutive(X, True, True, d))


def test_unique_dim_nan_order_as_aten(torch):
    """ATen sorts slices with a comparison NaN breaks: its order, reproduced."""
    for _ in range(20):
        x = RNG.integers(0, 3, (25, 3)).astype(np.float32)
        x[RNG.random(x.shape) < 0.1] = np.nan
        check(tl.unique_dim(x, 0, True, True, True),
              torch.ops.aten.unique_dim(T(torch, x), 0, True, True, True))


def test_unique_functions_as_torch_functional(torch):
    """The helpers a scripted torch.unique calls, called as the interpreter calls them."""
    x = np.array([[3, 1], [2, 1], [3, 1]])
    X = T(torch, x)
    import torch.functional as TF
    for name in ("_return_output", "_return_inverse", "_return_counts",
                 "_return_inverse_and_counts", "_unique_impl", "_return_inverse_false",
                 "_return_inverse_true"):
        for args in ((True, True, True, None), (True, False, True, 0), (False, True, False, 1)):
            check(call_function(name, (x,) + args), getattr(TF, name)(X, *args))
    for name in ("_consecutive_return_output", "_consecutive_return_inverse",
                 "_consecutive_return_counts", "_consecutive_return_inverse_and_counts",
                 "_unique_consecutive_impl"):
        for args in ((True, True, None), (False, True, 0), (True, False, 1)):
            check(call_function(name, (x,) + args), getattr(TF, name)(X, *args))


# -- spatial transformers ----------------------------------------------------------------------

@pytest.mark.parametrize("spatial", [2, 3])
@pytest.mark.parametrize("dtype", FLOATS)
def test_affine_grid_grid_sampleragainst_torch(torch, spatial, dtype):
    aten = torch.ops.aten
    tol = {np.float16: 0.0, np.float32: 1e-5, np.float64: 1e-12}[dtype]
    sizes = ((2, 3, 4, 5), (1, 1, 1, 6)) if spatial == 2 else ((2, 3, 3, 4, 5), (1, 2, 1, 3, 2))
    theta = randn(2, spatial, spatial + 1, dtype=dtype)
    for size in sizes:
        if dtype == np.float16 and 1 in size[2:]:
            continue
        for ac in (False, True):
            check(tl.affine_grid_generator(theta[:size[0]], list(size), ac),
                  aten.affine_grid_generator(T(torch, theta[:size[0]]), list(size), ac),
                  atol=2e-3 if dtype == np.float16 else tol, rtol=tol or 2e-3)
    x = randn(2, 3, *(4, 5, 6)[3 - spatial:], dtype=dtype)
    grid = (RNG.random((2, 3, 7, spatial)[3 - spatial - 1:] if spatial == 2 else (2, 2, 3, 4, 3))
            * 3 - 1.5).astype(dtype)
    grid.reshape(-1)[:6] = [-1, 1, 0, np.nan, np.inf, -np.inf]
    for mode in (0, 1, 2) if spatial == 2 else (0, 1):
        for padding in (0, 1, 2):
            if padding == 2 and mode == 2:  # inf through reflection: ATen's arithmetic differs
                grid.reshape(-1)[4:6] = 0.5
            for ac in (False, True):
                check(tl.grid_sampler(x, grid, mode, padding, ac),
                      aten.grid_sampler(T(torch, x), T(torch, grid), mode, padding, ac),
                      rtol=tol * 10, atol=tol * 10)
    check(tl.grid_sampler(x[:0], grid[:0], 0, 0, False),
          aten.grid_sampler(T(torch, x[:0]), T(torch, grid[:0]), 0, 0, False))


# -- scripted and traced -----------------------------------------------------------------------

SOURCE = '''
import torch
import torch.nn.functional as F


def layout_fn(x, i):
    return torch.diag(x), torch.diag(x[0], 1), x.rot90(1, [0, 1]), torch.rot90(x, -1, [1, 0]), \\
        torch.take(x, i), torch.inner(x, x) * 2.0, torch.block_diag(x, x[0]), \\
        torch.vstack([x, x]), torch.hstack([x, x]), torch.dstack([x, x]), \\
        torch.column_stack([x[0], x[1]]), torch.row_stack([x, x]), torch.triu_indices(3, 4, 1), \\
        torch.tril_indices(3, 4), x.reshape_as(x.t()) + 1.0, torch.diag_embed(x, 1, 0, 2)


def repeat_fn(x, r):
    return x.repeat_interleave(2, dim=0), x.repeat_interleave(r, dim=1) * 2.0, \\
        torch.repeat_interleave(r), x.repeat_interleave(3), x.repeat_interleave(r[1:2], dim=-1)


def stats_fn(x, r):
    lo, hi = torch.aminmax(x)
    a = torch.aminmax(x, dim=1, keepdim=True)
    k = torch.kthvalue(x, 2, 1)
    m = torch.mode(x.round(), 0)
    return lo + hi, a.min, a.max * 2.0, k.values, k.indices, m.values, m.indices, \\
        torch.bincount(r), torch.bincount(r, x[0], 5), torch.histc(x, 5, -1, 1), \\
        torch.histc(x, 4)


def cross_fn(a, b):
    return torch.cross(a, b, dim=1), torch.linalg.cross(a, b) + 1.0, torch.cross(a, b)


def scatter_fn(x, i, s):
    y = x * 1.0
    y.scatter_reduce_(1, i, s, "amax", include_self=False)
    y.scatter_(1, i, s)
    y.scatter_add_(1, i, s)
    z = x + 0.0
    z.scatter_(0, i, 2.5)
    return x.scatter_reduce(1, i, s, "sum"), y, z * 2.0, x.scatter_reduce(0, i, s, "mean")


def unique_fn(x):
    return torch.unique(x), torch.unique(x, return_inverse=True), \\
        torch.unique(x, return_counts=True), torch.unique(x, dim=0), \\
        torch.unique(x, sorted=False, return_inverse=True, return_counts=True), \\
        torch.unique(x, dim=1, return_inverse=True)


def consecutive_fn(x):
    return torch.unique_consecutive(x), torch.unique_consecutive(x, return_counts=True), \\
        torch.unique_consecutive(x, return_inverse=True, dim=0)


def spatial_fn(x, theta):
    return F.grid_sample(x, F.affine_grid(theta, [1, 1, 6, 8], align_corners=False),
                         align_corners=False)


def spatial_modes(x, theta):
    g = F.affine_grid(theta, [1, 1, 5, 4], align_corners=True)
    return F.grid_sample(x, g, mode="nearest", padding_mode="border", align_corners=True), \\
        F.grid_sample(x, g, mode="bicubic", padding_mode="reflection", align_corners=False), \\
        F.grid_sample(x, g * 1.5, padding_mode="zeros", align_corners=False) + 1.0


def volume_fn(x, theta):
    g = F.affine_grid(theta, [1, 2, 3, 4, 5], align_corners=False)
    return F.grid_sample(x, g, align_corners=False), \\
        F.grid_sample(x, g * 1.2, mode="nearest", padding_mode="reflection", align_corners=True)
'''


def test_functionsagainst_torch(torch, tmp_path):
    mod = program_module(tmp_path, "tensor_misc_programs", SOURCE)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=gen)
    theta = torch.tensor([[[0.9, 0.2, 0.1], [-0.1, 1.1, 0.05]]])
    theta3 = torch.tensor([[[0.9, 0.2, 0.1, 0.0], [-0.1, 1.1, 0.05, 0.1], [0.0, 0.1, 1.0, -0.2]]])
    ints = torch.tensor([[3, 1, 3], [2, 1, 2], [3, 1, 3], [3, 1, 3]])
    cases = {
        "layout_fn": (x, torch.tensor([[0, -1], [5, 11]])),
        "repeat_fn": (x, torch.tensor([1, 0, 2, 1])),
        "stats_fn": (torch.tensor([[0.5, -0.5, 0.5, 2.0], [1.0, 1.0, -1.0, 0.0],
                                   [0.5, 1.0, 1.0, -2.0]]), torch.tensor([1, 1, 4, 0])),
        "cross_fn": (torch.randn(4, 3, generator=gen), torch.randn(4, 3, generator=gen)),
        "scatter_fn": (x, torch.tensor([[0, 1, 1], [2, 2, 0]]), torch.randn(2, 4, generator=gen)),
        "unique_fn": (ints,), "consecutive_fn": (ints,),
        "spatial_fn": (torch.randn(1, 2, 5, 7, generator=gen), theta),
        "spatial_modes": (torch.randn(1, 2, 5, 7, generator=gen), theta),
        "volume_fn": (torch.randn(1, 2, 4, 5, 6, generator=gen), theta3),
    }
    for name, args in cases.items():
        against_torch(torch, getattr(mod, name), args)


# -- errors ------------------------------------------------------------------------------------

F32, I64 = np.zeros((3, 4), np.float32), np.zeros((3, 4), np.int64)
IDX, V3 = np.array([0, 2]), np.ones(3, np.float32)
X4, G4 = np.zeros((1, 2, 3, 4), np.float32), np.zeros((1, 5, 6, 2), np.float32)
THETA = np.zeros((1, 2, 3), np.float32)
SAME = True  # torch.ops.aten.<op>(*args) raises the same type and message

ERRORS = [  # (op, args, exception, message, SAME or False: torch is not called the same way)
    ("diag", (np.zeros((2, 2, 2)),), RuntimeError, r"diag\(\): Supports 1D or 2D tensors. Got 3D",
     SAME),
    ("diag_embed", (F32, 1, 0, -3), RuntimeError, "diagonal dimensions cannot be identical 0, -3",
     SAME),
    ("diag_embed", (np.array(1.0),), IndexError, r"range of \[-1, 0\], but got -2", SAME),
    ("rot90", (F32, 1, [0]), RuntimeError, "expected total rotation dims == 2, but got dims = 1",
     SAME),
    ("rot90", (V3, 1, [0, 1]), RuntimeError, "expected total dims >= 2, but got total dims = 1",
     SAME),
    ("rot90", (F32, 1, [0, -2]), RuntimeError,
     "expected rotation dims to be different, but got dim0 = 0 and dim1 = -2", SAME),
    ("rot90", (F32, 1, [0, 3]), IndexError, "Dimension out of range", SAME),
    ("take", (F32, IDX.astype(np.int32)), RuntimeError,
     r"take\(\): Expected a long tensor for index, but got Int", SAME),
    ("take", (np.zeros(0), IDX), IndexError, r"take\(\): tried to take from an empty tensor", SAME),
    ("take", (F32, np.array([0, -13])), IndexError,
     "out of range: tried to access index -13 on a tensor of 12 elements.", SAME),
    ("reshape_as", (F32, V3), RuntimeError, r"shape '\[3\]' is invalid for input of size 12",
     SAME),
    ("inner", (F32, np.zeros((4, 2))), RuntimeError, r"inner\(\) the last dimension must match "
     r"on both input tensors but got shapes \[3, 4\] and \[4, 2\]", SAME),
    ("inner", (F32, np.zeros(4)), RuntimeError, "both inputs should have same dtype", SAME),
    ("inner", (IDX > 0, IDX > 0), NotImplementedError, "\"dot\" not implemented for 'Bool'", SAME),
    ("inner", (F32 > 0, V3[:1] > 0), RuntimeError, "the last dimension must match", SAME),
    ("inner", (F32 > 0, F32 > 0), NotImplementedError,
     "\"addmm_impl_cpu_\" not implemented for 'Bool'", SAME),
    ("linalg_cross", (V3, F32[:, :3]), RuntimeError,
     "linalg.cross: inputs must have the same number of dimensions.", SAME),
    ("linalg_cross", (F32, F32), RuntimeError,
     "linalg.cross: inputs dimension -1 must have length 3. Got 4 and 4", SAME),
    ("linalg_cross", (F32[:, :3], np.zeros((3, 3))), RuntimeError,
     "expected scalar type Float but found Double", SAME),
    ("linalg_cross", (V3 > 0, V3 > 0), NotImplementedError,
     "\"cross\" not implemented for 'Bool'", SAME),
    ("linalg_cross", (np.zeros((2, 3)), np.zeros((4, 3))), RuntimeError,
     r"The size of tensor a \(2\) must match the size of tensor b \(4\)", SAME),
    ("cross", (np.zeros((2, 4)), np.zeros((2, 4)), None), RuntimeError,
     "no dimension of size 3 in input", SAME),
    ("block_diag", ([F32, np.zeros((2, 2, 2))],), RuntimeError,
     "torch.block_diag: Input tensors must have 2 or fewer dimensions. Input 1 has 3 dimensions",
     SAME),
    ("vstack", ([],), RuntimeError, "vstack expects a non-empty TensorList", SAME),
    ("hstack", ([],), RuntimeError, "hstack expects a non-empty TensorList", SAME),
    ("dstack", ([],), RuntimeError, "dstack expects a non-empty TensorList", SAME),
    ("column_stack", ([],), RuntimeError, "column_stack expects a non-empty TensorList", SAME),
    ("vstack", ([np.array(1.0), V3],), RuntimeError, r"Sizes of tensors must match except in "
     r"dimension 0. Expected size 1 but got size 3 for tensor number 1 in the list.", SAME),
    ("column_stack", ([IDX, np.zeros((2, 3, 2))],), RuntimeError,
     "Tensors must have same number of dimensions: got 2 and 3", SAME),
    ("triu_indices", (-1, 4), RuntimeError, "row must be non-negative, got-1", SAME),
    ("tril_indices", (3, -2), RuntimeError, "col must be non-negative, got-2", SAME),
    ("tril_indices", (3, 3, 0, 6), NotImplementedError,
     "\"tril_indices\" not implemented for 'Float'", False),
    ("repeat_interleave", (I64,), RuntimeError,
     "repeat_interleave only accept 1D vector as repeat", SAME),
    ("repeat_interleave", (V3,), NotImplementedError,
     "\"repeat_interleave_cpu\" not implemented for 'Float'", SAME),
    ("repeat_interleave", (np.array([1, -1]),), RuntimeError, "repeats can not be negative", SAME),
    ("repeat_interleave", (np.array([1, 2]), 4), RuntimeError,
     "allocated size does not match required size", False),
    ("repeat_interleave", (F32, IDX, 0), RuntimeError, r"repeats must have the same size as "
     r"input along dim, but got repeats.size\(0\) = 2 and input.size\(0\) = 3", SAME),
    ("repeat_interleave", (F32, IDX[None], 0), RuntimeError,
     "repeats must be 0-dim or 1-dim tensor", SAME),
    ("repeat_interleave", (F32, -1, 0), RuntimeError, "Repeats must be non-negative", SAME),
    ("repeat_interleave", (F32, 2, 0, 5), RuntimeError,
     "repeat_interleave: Invalid output_size, expected 6 but got 5", False),
    ("aminmax", (np.zeros(0),), RuntimeError, r"aminmax\(\): cannot compute aminmax over an "
     "empty dimension as the operation has no identity.", SAME),
    ("aminmax", (np.zeros((0, 3)), -2), IndexError,
     "aminmax: Expected reduction dim 0 to have non-zero size.", False),
    ("kthvalue", (F32, 5, 1, False), RuntimeError,
     r"kthvalue\(\): selected number k out of range for dimension 1", SAME),
    ("kthvalue", (np.zeros((0, 3)), 1, -2, False), IndexError,
     r"kthvalue\(\): Expected reduction dim 0 to have non-zero size.", SAME),
    ("kthvalue", (V3 > 0, 1, -1, False), NotImplementedError,
     "\"kthvalue_cpu\" not implemented for 'Bool'", SAME),
    ("mode", (np.zeros((0, 3)), 0, False), IndexError,
     r"mode\(\): Expected reduction dim 0 to have non-zero size.", SAME),
    ("bincount", (V3,), NotImplementedError, "\"bincount_cpu\" not implemented for 'Float'",
     SAME),
    ("bincount", (IDX, None, -1), RuntimeError, "minlength should be >= 0", SAME),
    ("bincount", (I64,), RuntimeError, "bincount only supports 1-d non-negative integral inputs.",
     SAME),
    ("bincount", (np.array([1, -1]),), RuntimeError, "1-d non-negative integral inputs", SAME),
    ("bincount", (IDX, V3), RuntimeError,
     "weights should be 1-d and have the same length as input", SAME),
    ("histc", (V3, 0), RuntimeError,
     r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0", SAME),
    ("histc", (V3, 4, 0, float("inf")), RuntimeError,
     r"torch.histc: range of \[0, inf\] is not finite", SAME),
    ("histc", (np.float32([1, np.nan]), 4), RuntimeError,
     r"torch.histc: range of \[-?nan, -?nan\] is not finite", SAME),
    ("histc", (V3, 4, 3, 1), RuntimeError, "torch.histc: max must be larger than min", SAME),
    ("histc", (IDX, 4), NotImplementedError, "\"histogram_cpu\" not implemented for 'Long'", SAME),
    ("scatter_reduce", (F32, 2, I64, F32, "sum"), IndexError, "Dimension out of range", SAME),
    ("scatter_reduce", (F32, 0, F32, F32, "sum"), RuntimeError,
     r"scatter\(\): Expected dtype int32/int64 for index", SAME),
    ("scatter_reduce", (F32, 0, I64, I64, "sum"), RuntimeError,
     r"scatter\(\): Expected self.dtype to be equal to src.dtype", SAME),
    ("scatter_reduce", (F32, 0, IDX, V3, "sum"), RuntimeError,
     "Index tensor must have the same number of dimensions as self tensor", SAME),
    ("scatter_reduce", (F32, 0, np.zeros((2, 5), np.int64), F32, "sum"), RuntimeError,
     r"Expected index \[2, 5\] to be no larger than self \[3, 4\] apart from dimension 0 and to "
     r"be no larger size than src \[3, 4\]", SAME),
    ("scatter_reduce", (F32, 1, np.array([[0, 9], [7, 0]]), F32, "sum"), RuntimeError,
     "index 9 is out of bounds for dimension 1 with size 4", SAME),
    ("scatter_reduce", (F32, 1, np.array([[0, -1]]), F32, "sum"), RuntimeError,
     "index -1 is out of bounds for dimension 1 with size 4", SAME),
    ("scatter_reduce", (F32, 0, I64, F32, "add"), RuntimeError,
     "reduce argument must be either sum, prod, mean, amax or amin, got add", SAME),
    ("scatter_reduce", (F32 > 0, 0, I64, F32 > 0, "mean"), NotImplementedError,
     "\"scatter_gather_tensor_cpu_reduce_mean\" not implemented for 'Bool'", SAME),
    ("scatter_", (F32.copy(), 0, I64, F32, "max"), RuntimeError,
     "reduce argument must be either add or multiply.", False),
    ("scatter_", (F32.copy(), 0, np.array([[5]]), 1.0), RuntimeError,
     "index 5 is out of bounds for dimension 0 with size 3", SAME),
    ("scatter_add_", (F32.copy(), 0, I64, np.zeros((3, 4))), RuntimeError,
     r"scatter\(\): Expected self.dtype to be equal to src.dtype", SAME),
    ("scatter_reduce_", (np.broadcast_to(np.float32(0), (3, 4)), 0, I64, F32, "sum"),
     RuntimeError, "read-only", False),
    ("unique_dim", (np.array(3.0), 0), IndexError,
     "Dimension specified as 0 but tensor has no dimensions", SAME),
    ("unique_dim", (np.zeros((0, 0)), 1), RuntimeError,
     "Number of zero sized dimensions is more than one, so unique cannot be applied", SAME),
    ("unique_dim", (np.zeros((0, 2)), 1), RuntimeError,
     "There are 0 sized dimensions, and they aren't selected, so unique cannot be applied", SAME),
    ("unique_consecutive", (np.array(3.0), False, False, 0), IndexError,
     "Dimension specified as 0 but tensor has no dimensions", SAME),
    ("affine_grid_generator", (THETA, [1, 1, 3], False), RuntimeError,
     r"AffineGridGenerator needs 4d \(spatial\) or 5d \(volumetric\) inputs.", SAME),
    ("affine_grid_generator", (THETA, [2, 1, 3, 4], False), RuntimeError,
     r"Expected size for first two dimensions of batch2 tensor to be: \[2, 3\] but got: "
     r"\[1, 3\].", SAME),
    ("affine_grid_generator", (THETA, [1, 1, 2, 3, 4], False), RuntimeError,
     r"to be: \[1, 4\] but got: \[1, 3\].", SAME),
    ("affine_grid_generator", (np.zeros((1, 3, 3), np.float32), [1, 1, 3, 4], False),
     RuntimeError, r"shape '\[1, 3, 4, 2\]' is invalid for input of size 36", SAME),
    ("affine_grid_generator", (THETA[0], [1, 1, 3, 4], False), IndexError,
     "Dimension out of range", SAME),
    ("affine_grid_generator", (THETA.astype(np.float16), [1, 1, 1, 4], False),
     NotImplementedError, "\"tensor_cpu\" not implemented for 'Half'", SAME),
    ("affine_grid_generator", (THETA.astype(np.int64), [1, 1, 3, 4], False),
     NotImplementedError, "not implemented for 'Long'", False),
    ("grid_sampler", (X4, np.zeros((2, 5, 6, 2), np.float32), 0, 0, False), RuntimeError,
     r"grid_sampler\(\): expected grid and input to have same batch size, but got input with "
     r"sizes \[1, 2, 3, 4\] and grid with sizes \[2, 5, 6, 2\]", SAME),
    ("grid_sampler", (X4, G4[..., :1], 0, 0, False), RuntimeError,
     r"expected grid to have size 2 in last dimension, but got grid with sizes \[1, 5, 6, 1\]",
     SAME),
    ("grid_sampler", (X4[..., :0], G4, 0, 0, False), RuntimeError, r"expected input to have "
     r"non-empty spatial dimensions, but input has sizes \[1, 2, 3, 0\] with dimension 3 being "
     r"empty", SAME),
    ("grid_sampler", (X4, G4[:, 0], 0, 0, False), RuntimeError,
     "expected 4D input and grid with same number of dimensions", SAME),
    ("grid_sampler", (X4[:, :, None], np.zeros((1, 2, 5, 6, 2), np.float32), 0, 0, False),
     RuntimeError, "expected grid to have size 3 in last dimension", SAME),
    ("grid_sampler", (X4[..., None], np.zeros((1, 2, 5, 6, 3), np.float32), 2, 0, False),
     RuntimeError, "bicubic interpolation only supports 4D input", SAME),
    ("grid_sampler", (X4, G4.astype(np.float64), 0, 0, False), RuntimeError,
     "expected scalar type Float but found Double", SAME),
    ("grid_sampler", (X4.astype(np.int64), G4.astype(np.int64), 0, 0, False),
     NotImplementedError, "\"grid_sampler_2d_cpu_kernel_impl\" not implemented for 'Long'",
     SAME),
    ("grid_sampler", (np.zeros((1, 1, 2, 2, 2), np.int64), np.zeros((1, 1, 1, 1, 3), np.int64), 0,
                      0, False), NotImplementedError, "\"grid_sampler3d_cpu\" not implemented "
     "for 'Long'", SAME),
    ("grid_sampler", (X4, G4, 3, 0, False), RuntimeError, "interpolation_mode must be", False),
]


@pytest.mark.parametrize("name, args, exc, message, same", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_as_pytorch(name, args, exc, message, same):
    with pytest.raises(exc, match=message):
        impl(f"aten::{name}")(np, *args)


@pytest.mark.parametrize("name, args, exc, message", [e[:4] for e in ERRORS if e[4]],
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS) if e[4]])
def test_torch_raises_the_same(torch, name, args, exc, message):
    """The expected errors are torch's own (type and message)."""
    with pytest.raises(exc, match=message):
        getattr(torch.ops.aten, name)(*T(torch, list(args)))


# -- registry entries and inferred types ---------------------------------------------------------

NEW_OPS = ["diag", "diag_embed", "rot90", "take", "reshape_as", "inner", "cross", "linalg_cross",
           "block_diag", "vstack", "hstack", "dstack", "column_stack", "triu_indices",
           "tril_indices", "repeat_interleave", "aminmax", "kthvalue", "mode", "bincount",
           "histc", "scatter_reduce", "scatter_reduce_", "scatter_", "scatter_add_", "_unique2",
           "_unique", "unique_dim", "unique_consecutive", "affine_grid_generator",
           "grid_sampler"]


def test_registry_entries():
    for name in NEW_OPS:
        op = registry.get(f"aten::{name}")
        assert op.infer is not None and not op.is_elementwise, name
        if name.endswith("_"):
            assert not op.pure and mutates(op.name) and INPLACE_OF[op.name] == op.name[:-1]
            assert registry.get(INPLACE_OF[op.name]) is not None


SHAPES = """graph(%x : Tensor, %v : Tensor, %i : Tensor, %theta : Tensor, %img : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %4 : int = prim::Constant[value=4]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %none : NoneType = prim::Constant()
  %dims : int[] = prim::ListConstruct(%0, %1)
  %size : int[] = prim::ListConstruct(%1, %2, %4, %4)
  %l : Tensor[] = prim::ListConstruct(%x, %x)
  %d : Tensor = aten::diag(%x, %1)
  %dv : Tensor = aten::diag(%v, %1)
  %de : Tensor = aten::diag_embed(%x, %1, %0, %2)
  %r : Tensor = aten::rot90(%x, %1, %dims)
  %tk : Tensor = aten::take(%x, %i)
  %in : Tensor = aten::inner(%x, %x)
  %ri : Tensor = aten::repeat_interleave(%x, %2, %1, %none)
  %rt : Tensor = aten::repeat_interleave(%i, %none)
  %lo : Tensor, %hi : Tensor = aten::aminmax(%x, %1, %t)
  %kv : Tensor, %ki : Tensor = aten::kthvalue(%x, %1, %0, %f)
  %h : Tensor = aten::histc(%x, %4, %0, %0)
  %b : Tensor = aten::bincount(%i, %none, %0)
  %tri : Tensor = aten::triu_indices(%4, %4, %1, %4, %none, %none, %none)
  %vs : Tensor = aten::vstack(%l)
  %u : Tensor, %ui : Tensor, %uc : Tensor = aten::_unique2(%x, %t, %t, %f)
  %g : Tensor = aten::affine_grid_generator(%theta, %size, %f)
  %s : Tensor = aten::grid_sampler(%img, %g, %0, %0, %f)
  return (%d, %dv, %de, %r, %tk, %in, %ri, %rt, %lo, %ki, %h, %b, %tri, %vs, %ui, %uc, %g, %s)
"""


def test_inferred_types():
    g = infer_types(parse_graph(SHAPES), [TensorType("float32", (3, 5)),
                                          TensorType("float64", (4,)),
                                          TensorType("int64", (2, 2)),
                                          TensorType("float32", (1, 2, 3)),
                                          TensorType("float32", (1, 3, 7, 7))])
    types = [v.type for v in g.outputs]
    assert [t.shape for t in types] == [
        (3,), (5, 5), (6, 3, 6), (5, 3), (2, 2), (3, 3), (3, 10), (None,), (3, 1), (5,), (4,),
        (None,), (2, 6), None, (3, 5), (0,), (1, 4, 4, 2), (1, 3, 4, 4)]
    assert [t.dtype for t in types] == [
        "float32", "float64", "float32", "float32", "float32", "float32", "float32", "int64",
        "float32", "int64", "float32", "int64", "int64", "float32", "int64", "int64", "float32",
        "float32"]
