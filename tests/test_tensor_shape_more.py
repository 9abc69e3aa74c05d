"""The ops of ``ops/tensor_shape_more.py`` against PyTorch: each eagerly over a few shapes and
dtypes (float32, int64, bool where the op takes them), then in functions as ``torch.jit.script``
/ ``torch.jit.trace`` print them, run interpreted, fused and fused strictly; then each error
path's exception type and message (checked against torch's where torch raises the same way), the
registry entries and the inferred types.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_modes import against_torch, program_module
from graph_modes import check_torch as check
from graph_modes import to_torch as T

import torchlike as tl
from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.ir import parse_graph
from torchlike.ir.types import ListType, TensorType
from torchlike.ops import registry
from torchlike.ops.inplace import INPLACE_OF, mutates
from torchlike.passes import infer_types

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]
RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.int64, np.bool_]


def randn(*shape, dtype=np.float32):
    return (RNG.standard_normal(shape) * 3).astype(dtype)



def impl(name):
    return registry.get(f"aten::{name}").impl


# -- layout ------------------------------------------------------------------------------------

def test_logspace_against_torch(torch):
    for start, end, steps, base in ((0, 2, 5, 10.0), (0, 3, 4, 2.0), (0.5, 3, 4, 2.0),
                                    (-1.5, 2.25, 7, 3.0), (1, 1, 1, 10.0), (0, 3, 0, 2.0),
                                    (2, -1, 6, 0.5)):
        for dtype in (None, torch.float64, torch.int64, torch.float16, torch.int32):
            code = None if dtype is None else {torch.float64: 7, torch.int64: 4,
                                               torch.float16: 5, torch.int32: 3}[dtype]
            want = torch.logspace(start, end, steps, base, dtype=dtype)
            check(impl("logspace")(np, start, end, steps, base, code), want)
    check(tl.logspace(0, 2, 5), torch.logspace(0, 2, 5))


@pytest.mark.parametrize("dtype", DTYPES)
def test_diagflat_msort_ravel_against_torch(torch, dtype):
    for shape in ((3, 4), (5,), (), (0,), (2, 3, 2)):
        x = randn(*shape, dtype=dtype)
        X = T(torch, x)
        for k in (-2, 0, 1):
            check(tl.diagflat(x, k), torch.diagflat(X, k))
        check(tl.msort(x), torch.msort(X))
        check(tl.ravel(x), torch.ravel(X))
        check(tl.resolve_conj(x), X.resolve_conj())
        check(tl.resolve_neg(x), X.resolve_neg())
        check(tl.ravel(x.T), torch.ravel(X.T) if x.ndim < 3 else X.permute(2, 1, 0).ravel())


@pytest.mark.parametrize("dtype", DTYPES)
def test_splits_against_torch(torch, dtype):
    x = randn(4, 6, 2, dtype=dtype)
    X = T(torch, x)
    for dim in (0, 1, -1):
        for chunks in (1, 2, 3, 5):
            check(tl.unsafe_chunk(x, chunks, dim), torch.unsafe_chunk(X, chunks, dim))
        for size in (1, 2, 4, 7):
            check(tl.unsafe_split(x, size, dim), torch.unsafe_split(X, size, dim))
    check(tl.unsafe_split_with_sizes(x, [1, 0, 5], 1), torch.unsafe_split_with_sizes(X, [1, 0, 5],
                                                                                     1))
    check(tl.unsafe_split(x[:, :0], 0, 1), torch.unsafe_split(X[:, :0], 0, 1))
    for name in ("hsplit", "vsplit", "dsplit"):
        for sections in (1, 2, [1], [1, 3], [0, 5, 2], []):
            check(getattr(tl, name)(x, sections), getattr(torch, name)(X, sections))
    v = x[:, 0, 0]
    for sections in (2, 4, [1, 2]):
        check(tl.hsplit(v, sections), torch.hsplit(T(torch, v), sections))


@pytest.mark.parametrize("dtype", DTYPES)
def test_atleast_against_torch(torch, dtype):
    xs = [randn(*s, dtype=dtype) for s in ((), (3,), (2, 3), (2, 3, 4), (1, 2, 3, 4))]
    for n in (1, 2, 3):
        fn = getattr(torch, f"atleast_{n}d")
        for x in xs:
            check(getattr(tl, f"atleast_{n}d")(x), fn(T(torch, x)))
        check(getattr(tl, f"atleast_{n}d")(xs), fn(T(torch, xs)))


@pytest.mark.parametrize("dtype", DTYPES)
def test_narrow_copy_as_strided_against_torch(torch, dtype):
    x = randn(3, 4, dtype=dtype)
    X = T(torch, x)
    for dim, start, length in ((0, 0, 3), (1, -2, 2), (-1, 4, 0), (0, -3, 1), (1, 1, 0)):
        got = tl.narrow_copy(x, dim, start, length)
        check(got, torch.narrow_copy(X, dim, start, length))
        assert not np.shares_memory(got, x)
    for size, stride, offset in (([2, 2], [1, 2], 1), ([2, 2], [1, 2], None), ([3, 3], [0, 1], 0),
                                 ([], [], 5), ([0, 2], [100, 100], 12), ([2, 3, 2], [4, 1, 2], 0),
                                 ([12], [1], 0), ([1, 1], [5, 9], 11)):
        got = tl.as_strided(x, size, stride, offset)
        check(got, torch.as_strided(X, size, stride, offset))
    y = x[1:]  # a contiguous view: offsets count from its own first element
    check(tl.as_strided(y, [2, 2], [1, 2]), torch.as_strided(T(torch, x)[1:], [2, 2], [1, 2]))


@pytest.mark.parametrize("dtype", DTYPES)
def test_scatters_against_torch(torch, dtype):
    x = randn(3, 4, 5, dtype=dtype)
    X = T(torch, x)
    for dim, index in ((0, 1), (1, -1), (-1, 4), (2, 0)):
        src = randn(*X.select(dim, index).shape, dtype=dtype)
        check(tl.select_scatter(x, src, dim, index), torch.select_scatter(X, T(torch, src), dim,
                                                                          index))
    for dim, start, end, step in ((0, 0, 2, 1), (1, None, None, 2), (2, -2, None, 1),
                                  (1, 7, 9, 1), (2, 1, 100, 3), (-1, None, 3, 1)):
        src = randn(*X[(slice(None),) * (dim % 3) + (slice(start, end, step),)].shape,
                    dtype=dtype)
        check(tl.slice_scatter(x, src, dim, start, end, step),
              torch.slice_scatter(X, T(torch, src), dim, start, end, step))
    for offset, d1, d2 in ((0, 0, 1), (1, 1, 2), (-2, 2, 0), (6, 0, 1), (-1, -1, -2)):
        src = randn(*torch.diagonal(X, offset, d1, d2).shape, dtype=dtype)
        check(tl.diagonal_scatter(x, src, offset, d1, d2),
              torch.diagonal_scatter(X, T(torch, src), offset, d1, d2))
    src = randn(4, 5).astype(np.float64)  # copy_ casts src to self's dtype
    check(tl.select_scatter(x, src, 0, 0), torch.select_scatter(X, T(torch, src), 0, 0))


@pytest.mark.parametrize("dtype", DTYPES)
def test_channel_shuffle_against_torch(torch, dtype):
    for shape, groups in (((2, 6, 3, 2), 3), ((1, 4, 3), 2), ((2, 6, 1, 2, 2), 6), ((0, 4, 3), 2),
                          ((2, 0, 3), 2), ((1, 5, 2), 1)):
        x = randn(*shape, dtype=dtype)
        check(tl.channel_shuffle(x, groups), torch.channel_shuffle(T(torch, x), groups))
        check(tl.native_channel_shuffle(x, groups),
              torch.native_channel_shuffle(T(torch, x), groups))


PADS = {1: ([1, 2], [0, 0], [-1, 2], [3, -2]), 2: ([1, 1, 2, 2], [-1, 1, 0, 2], [2, 0, -1, -1]),
        3: ([1, 1, 1, 1, 1, 1], [0, 1, -1, 2, 1, 0])}


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.float16])
def test_reflection_replication_pads_against_torch(torch, n, dtype):
    aten = torch.ops.aten
    for batch in (False, True):
        x = randn(*((2,) * batch + (3,) + (4, 5, 6)[3 - n:]), dtype=dtype)
        for pad in PADS[n]:
            for kind in ("reflection", "replication"):
                name = f"{kind}_pad{n}d"
                check(impl(name)(np, x, pad), getattr(aten, name)(T(torch, x), pad))
    x = np.zeros((0, 2) + (2, 3, 4)[3 - n:], dtype)
    for kind in ("reflection", "replication"):
        name = f"{kind}_pad{n}d"
        check(impl(name)(np, x, PADS[n][0]), getattr(aten, name)(T(torch, x), PADS[n][0]))


# -- normalization ---------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_native_norms_against_torch(torch, dtype):
    tol = dict(rtol=2e-3, atol=2e-3) if dtype == np.float16 else {}
    x = randn(2, 3, 4, dtype=dtype)
    X = T(torch, x)
    for shape, params in (([4], True), ([3, 4], False), ([4], "float32")):
        pdt = np.float32 if params == "float32" else dtype
        w, b = (randn(*shape, dtype=pdt), randn(*shape, dtype=pdt)) if params else (None, None)
        if params == "float32" and dtype != np.float16:
            continue
        check(tl.native_layer_norm(x, shape, w, b, 1e-5),
              torch.native_layer_norm(X, shape, T(torch, w), T(torch, b), 1e-5), **tol)
    for pdt in ({dtype, np.float32} if dtype == np.float16 else {dtype}):
        w, b, m = randn(3, dtype=pdt), randn(3, dtype=pdt), randn(3, dtype=pdt)
        v = (RNG.random(3) + 0.5).astype(pdt)
        for training in (False, True):
            for params in ((w, b, m, v), (None, None, m, v), (None, None, None, None)):
                if not training and params[2] is None:
                    continue
                mine = [p if p is None else p.copy() for p in params]
                theirs = [T(torch, p.copy()) if p is not None else None for p in params]
                check(tl.native_batch_norm(x, *mine, training, 0.1, 1e-5),
                      torch.native_batch_norm(X, *theirs, training, 0.1, 1e-5), **tol)
                for got, want in zip(mine[2:], theirs[2:]):  # running statistics updated
                    if got is not None:
                        check(got, want, **tol)
        check(impl("_native_batch_norm_legit_no_training")(np, x, w, b, m, v, 0.1, 1e-5),
              torch._native_batch_norm_legit_no_training(X, *T(torch, [w, b, m, v]), 0.1, 1e-5),
              **tol)


# -- index_reduce, put, masked_scatter ----------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_, np.uint8, np.float16])
def test_index_reduce_against_torch(torch, dtype):
    x = randn(5, 3, dtype=dtype)
    X = T(torch, x)
    for dim, index, sshape in ((0, [0, 2, 0, 4], (4, 3)), (1, [2, 2], (5, 2)), (-1, [], (5, 0)),
                               (0, [1], (1, 3))):
        src = randn(*sshape, dtype=dtype)
        if dtype == np.float32 and src.size > 1:
            src.reshape(-1)[1] = np.nan
        idx = np.array(index, np.int64)
        for reduce in ("prod", "mean", "amax", "amin"):
            for include_self in (True, False) if dtype != np.bool_ else (True,):
                if reduce == "mean" and dtype == np.bool_:
                    continue
                for it in (np.int64, np.int32):
                    check(tl.index_reduce(x, dim, idx.astype(it), src, reduce, include_self),
                          X.index_reduce(dim, T(torch, idx.astype(it)), T(torch, src), reduce,
                                         include_self=include_self), rtol=2e-3, atol=2e-3)
    v = randn(6, dtype=dtype)  # the 1-d kernel
    if dtype == np.float32:
        v[2] = np.nan
    idx, src = np.array([0, 2, 2, 5]), randn(4, dtype=dtype)
    for reduce in ("prod", "mean", "amax", "amin") if dtype != np.bool_ else ():
        for include_self in (True, False):
            check(tl.index_reduce(v, 0, idx, src, reduce, include_self),
                  T(torch, v).index_reduce(0, T(torch, idx), T(torch, src), reduce,
                                           include_self=include_self), rtol=2e-3, atol=2e-3)
    s = np.float32(2.0).reshape(())  # 0-d: one index, a 0-d source
    check(tl.index_reduce(s, 0, np.array([0]), np.float32(3.0).reshape(()), "prod"),
          torch.tensor(2.0).index_reduce(0, torch.tensor([0]), torch.tensor(3.0), "prod"))


@pytest.mark.parametrize("dtype", DTYPES)
def test_put_against_torch(torch, dtype):
    x = randn(3, 4, dtype=dtype)
    X = T(torch, x)
    for index in ([0, 5], [[0, -1], [11, -12]], [3, 3, 3], []):
        idx = np.array(index, np.int64)
        src = randn(*idx.shape, dtype=dtype)
        for acc in (False, True):
            if not acc and len(set(np.array(index).reshape(-1) % 12)) < idx.size:
                continue  # PyTorch leaves the winner of duplicate writes unspecified
            check(tl.put(x, idx, src, acc), X.put(T(torch, idx), T(torch, src), acc))
            y, Y = x.copy(), X.clone()
            assert tl.put_(y, idx, src, acc) is y
            check(y, Y.put_(T(torch, idx), T(torch, src), acc))
    y, Y = x.copy().T, X.clone().t()  # a strided self: positions in its logical order
    tl.put_(y, np.array([1, 2]), x[0, :2].copy(), True)
    check(y, Y.put_(torch.tensor([1, 2]), X[0, :2], True))


@pytest.mark.parametrize("dtype", DTYPES)
def test_masked_scatter_against_torch(torch, dtype):
    x = randn(3, 4, dtype=dtype)
    X = T(torch, x)
    for mshape, sshape in (((1, 4), (20,)), ((3, 4), (4, 5)), ((), (12,)), ((3, 1), (12,))):
        mask = RNG.random(mshape) > 0.5
        src = randn(*sshape, dtype=dtype)
        check(tl.masked_scatter(x, mask, src), X.masked_scatter(T(torch, mask), T(torch, src)))
    mask, src = RNG.random((2, 3, 4)) > 0.5, randn(24, dtype=dtype)  # self broadcast to mask
    check(tl.masked_scatter(x, mask, src), X.masked_scatter(T(torch, mask), T(torch, src)))


# -- combinations, histogram --------------------------------------------------------------------

@pytest.mark.parametrize("dtype", DTYPES)
def test_combinations_against_torch(torch, dtype):
    for n in (0, 1, 2, 4):
        x = randn(n, dtype=dtype)
        for r in (0, 1, 2, 3, 5):
            for rep in (False, True):
                check(tl.combinations(x, r, rep), torch.combinations(T(torch, x), r, rep))


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_histogram_against_torch(torch, dtype):
    x = np.array([0.1, 0.5, 0.7, 2.0, -1.0, 0.5, 1.25, 0.25], dtype)
    X, w = T(torch, x), RNG.random(8).astype(dtype)
    for data in (x, x.reshape(2, 4), np.ones(3, dtype), np.zeros(0, dtype), x[:1].reshape(())):
        D = T(torch, data)
        for bins in (1, 3, 4, 7):
            check(tl.histogram(data, bins), torch.histogram(D, bins))
            for rng in ((0.0, 1.0), (-2.0, 3.0), (0.5, 0.5)):
                for density in (False, True):
                    check(tl.histogram(data, bins, rng, None, density),
                          torch.histogram(D, bins, range=rng, density=density))
    for density in (False, True):
        check(tl.histogram(x, 3, None, w, density),
              torch.histogram(X, 3, weight=T(torch, w), density=density))
        for edges in ([0.0, 0.5, 1.0], [-1.0, 0.25, 2.0], [1.0, 0.5, 0.0], [0.0, np.nan, 1.0],
                      [0.5, 0.5, 0.7, 2.0]):
            e = np.array(edges, dtype)
            check(tl.histogram(x, e, density=density), torch.histogram(X, T(torch, e),
                                                                      density=density))
            check(impl("histogram")(np, x, e, w, density),  # a graph's bins_tensor overload
                  torch.histogram(X, T(torch, e), weight=T(torch, w), density=density))


# -- max_unpool, embedding_bag -------------------------------------------------------------------

@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_max_unpool_against_torch(torch, dtype):
    aten = torch.ops.aten
    for n, lead in ((2, (2, 3)), (2, (3,)), (3, (2, 2)), (3, (1,)), (2, (0, 2))):
        size = (4, 6, 5)[3 - n:]
        plane = int(np.prod(size))
        x = randn(*lead, *(2, 3, 2)[3 - n:], dtype=dtype)
        k = int(np.prod(x.shape[len(lead):]))  # each plane's values, at distinct places
        idx = np.array([RNG.permutation(plane)[:k] for _ in range(int(np.prod(lead)))],
                       np.int64).reshape(x.shape)
        args = (list(size),) if n == 2 else (list(size), [1, 2, 2], [0, 1, 0])
        check(impl(f"max_unpool{n}d")(np, x, idx, *args),
              getattr(aten, f"max_unpool{n}d")(T(torch, x), T(torch, idx), *args))


EMBEDDING_BAGS = [  # (indices, offsets, include_last_offset, padding_idx)
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 4], False, None),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3], False, None),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3, 8], True, None),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 2, 4], True, None),
    ([1, 2, 4, 5, 4, 3, 2, 9], [0, 3, 3], False, 2),
    ([4, 4, 1], [0, 2], False, -6),
    ([], [0, 0], False, None),
    ([3, 1], [], False, None),  # no bags: torch crashes but on its fast sum path
    ([3, 1], [0], True, None),
]


@pytest.mark.parametrize("case", range(len(EMBEDDING_BAGS)))
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_embedding_bag_against_torch(torch, case, dtype):
    indices, offsets, last, padding_idx = EMBEDDING_BAGS[case]
    w = randn(10, 3, dtype=dtype)
    for itype in (np.int64, np.int32):
        i, o = np.array(indices, itype), np.array(offsets, itype)
        no_bags = len(offsets) == int(last)
        if no_bags and dtype == np.float64:
            continue
        for mode in (0, 1, 2) if not no_bags else (0,):
            psws = (None, randn(len(indices), dtype=dtype)) if mode == 0 else (None,)
            for psw in psws:
                args = (False, mode, False, psw, last, padding_idx)
                check(tl.embedding_bag(w, i, o, *args),
                      torch.embedding_bag(*T(torch, [w, i, o]), *T(torch, list(args))),
                      rtol=2e-3, atol=2e-3)
    if not no_bags:
        i, o = np.array(indices, np.int32), np.array(offsets, np.int64)  # promoted to int64
        check(tl.embedding_bag(w, i, o, False, 1),
              torch.embedding_bag(*T(torch, [w, i, o]), False, 1), rtol=2e-3, atol=2e-3)


# -- scripted and traced -----------------------------------------------------------------------

SOURCE = '''
import torch
import torch.nn.functional as F


def layout_fn(x):
    return torch.logspace(0, 2, 5), torch.logspace(-1.0, 1.0, 4, 2.0, dtype=torch.float64), \\
        torch.diagflat(x), torch.diagflat(x[0], 1), torch.msort(x), torch.ravel(x), x.ravel(), \\
        x.resolve_conj(), x.resolve_neg(), torch.narrow_copy(x, 1, 1, 2), \\
        torch.as_strided(x, [2, 2], [1, 2], 1), x.as_strided([3, 2], [2, 1]), \\
        torch.row_stack([x, x]), torch.swapdims(x, 0, 1), x.swapaxes(0, 1)


def split_fn(x):
    return torch.unsafe_chunk(x, 2, 1), x.unsafe_split(3, 1), \\
        torch.unsafe_split_with_sizes(x, [1, 5], 1), torch.hsplit(x, 2), torch.vsplit(x, [1]), \\
        torch.dsplit(x.unsqueeze(2), [1]), x.hsplit([1, 3]), x.vsplit(3)


def atleast_fn(x, v):
    return torch.atleast_1d(v[0]), torch.atleast_2d(v), torch.atleast_3d(x), \\
        torch.atleast_3d(v), torch.atleast_1d([x, v]), torch.atleast_2d([v[0]]), \\
        torch.atleast_3d([x, v])


def scatter_fn(x, s, m):
    return x.masked_scatter(m, s), x.masked_scatter(m[0], s.t()), \\
        torch.select_scatter(x, s[0], 0, 1), torch.slice_scatter(x, s[:, :2], 1, 0, 2), \\
        torch.diagonal_scatter(x, s[0, :3], 0), torch.slice_scatter(x, s[:2], 0, 1), \\
        torch.diagonal_scatter(x, s[1, :2], -1, 0, 1)


def index_fn(x, i, s, p):
    y = x.clone()
    y.put_(p, s[0, :3])
    return x.index_reduce(0, i, s, "prod", include_self=False), x.index_reduce(0, i, s, "amax"), \\
        x.index_reduce(1, i, s.t()[:3], "mean"), x.put(i, s[0, :3], accumulate=True), y


def stats_fn(x, b, w):
    return torch.histogram(x, 4), torch.histogram(x, b), \\
        torch.histogram(x, 3, range=(0., 1.), weight=w, density=True), \\
        torch.combinations(x[:4]), torch.combinations(x[:3], 3, True)


def norm_fn(x, w, b, m, v):
    y, mean, rstd = torch.native_layer_norm(x, [4], w, b, 1e-5)
    e = torch.native_batch_norm(x, w, b, m, v, False, 0.1, 1e-5)
    t = torch.native_batch_norm(x, w, b, m, v, True, 0.1, 1e-5)
    return y, mean, rstd, e, t, m, v, \\
        torch._native_batch_norm_legit_no_training(x, w, b, m, v, 0.1, 1e-5)


def pad_fn(x):
    return torch.ops.aten.reflection_pad2d(x, [1, 1, 2, 0]), \\
        torch.ops.aten.replication_pad2d(x, [1, 2, 0, -1]), \\
        torch.ops.aten.reflection_pad1d(x[0], [2, 1]), \\
        torch.ops.aten.replication_pad3d(x.unsqueeze(0), [1, 0, 1, 0, 1, 1]), \\
        torch.ops.aten.reflection_pad3d(x.unsqueeze(0), [1, 0, 1, 0, 1, 1]), \\
        torch.ops.aten.replication_pad1d(x[0], [0, 3]), F.pad(x, [1, 1, 2, 0], mode="reflect"), \\
        F.channel_shuffle(x, 2), torch.native_channel_shuffle(x, 2)


def unpool_fn(x, i):
    return torch.ops.aten.max_unpool2d(x, i, [4, 4]), \\
        torch.ops.aten.max_unpool3d(x.unsqueeze(2), i.unsqueeze(2), [1, 4, 4], [1, 2, 2],
                                    [0, 0, 0])


def bag_fn(w, i, o, p):
    return torch.embedding_bag(w, i, o, False, 1), torch.embedding_bag(w, i, o, False, 2), \\
        torch.embedding_bag(w, i, o, False, 0, False, p), \\
        torch.embedding_bag(w, i, o, False, 0, False, None, False, 2)


def functional_bag_fn(w, i, o, p):
    return F.embedding_bag(i, w, o, mode="max"), \\
        F.embedding_bag(i, w, o, mode="sum", per_sample_weights=p), \\
        F.embedding_bag(i.reshape(2, 4), w, mode="mean")
'''


def test_functions_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "tensor_shape_more_programs", SOURCE)
    gen = torch.Generator().manual_seed(0)
    x, s = torch.randn(3, 4, generator=gen), torch.randn(3, 4, generator=gen)
    w4 = [torch.randn(4, generator=gen) for _ in range(3)] + [torch.rand(4, generator=gen) + 0.5]
    pooled = torch.tensor([[[[5.0, 7.0], [13.0, 15.0]], [[1.0, 2.0], [3.0, 4.0]]]])
    bag = (torch.randn(10, 3, generator=gen), torch.tensor([1, 2, 4, 5, 4, 3, 2, 9]),
           torch.tensor([0, 3, 3]), torch.randn(8, generator=gen))
    cases = {
        "layout_fn": (x,), "split_fn": (torch.randn(3, 6, generator=gen),),
        "atleast_fn": (x, s[0]), "scatter_fn": (x, s, torch.rand(3, 4, generator=gen) > 0.5),
        "index_fn": (x, torch.tensor([0, 2, 0]), s, torch.tensor([1, 5, 11])),
        "stats_fn": (torch.rand(10, generator=gen), torch.tensor([0.0, 0.25, 0.5, 1.0]),
                     torch.rand(10, generator=gen)),
        "norm_fn": (x, *w4), "pad_fn": (torch.randn(2, 4, 3, generator=gen),),
        "unpool_fn": (pooled, torch.tensor([[[[5, 7], [13, 15]], [[0, 3], [9, 14]]]])),
        "bag_fn": bag,
    }
    needed = {"index_fn": ("index_reduce", "put", "put_"), "stats_fn": ("histogram",
              "combinations"), "unpool_fn": ("max_unpool2d", "max_unpool3d")}
    for name, args in cases.items():
        if all(registry.lookup(f"aten::{n}") for n in needed.get(name, ())):
            against_torch(torch, getattr(mod, name), args)
    # F.embedding_bag scripts as prim::CallFunction of a function torchlike's table lacks;
    # traced, it is aten::embedding_bag and the first of its four outputs
    against_torch(torch, mod.functional_bag_fn, bag, captures=("trace",))


# -- errors ------------------------------------------------------------------------------------

F32, I64, V4 = np.zeros((3, 4), np.float32), np.zeros((3, 4), np.int64), np.ones(4, np.float32)
IDX = np.array([0, 2, 0])
X4 = np.zeros((1, 2, 3, 4), np.float32)
W, BAG, OFF = np.zeros((10, 3), np.float32), np.array([1, 2, 4, 5]), np.array([0, 2])
SAME = True  # torch.ops.aten.<op>(*args) raises the same type and message

ERRORS = [  # (op, args, exception, message, SAME or False: torch is not called the same way)
    ("logspace", (0, 1, -1), RuntimeError, "number of steps must be non-negative", SAME),
    ("logspace", (0, 1, 3, 2.0, 11), NotImplementedError,
     "\"logspace_cpu\" not implemented for 'Bool'", False),
    ("unsafe_chunk", (F32, 0, 1), RuntimeError,
     "chunk expects `chunks` to be greater than 0, got: 0", SAME),
    ("unsafe_chunk", (np.float32(1).reshape(()), 2), RuntimeError,
     "chunk expects at least a 1-dimensional tensor", SAME),
    ("unsafe_chunk", (F32, 2, 2), IndexError, r"range of \[-2, 1\], but got 2", SAME),
    ("unsafe_split", (F32, -1, 1), RuntimeError,
     "split expects split_size be non-negative, but got split_size=-1", SAME),
    ("unsafe_split", (F32, 0, 1), RuntimeError,
     "split_size can only be 0 if dimension size is 0, but got dimension size of 4", SAME),
    ("unsafe_split", (np.float32(1).reshape(()), 1), RuntimeError,
     "split expects at least a 1-dimensional tensor", SAME),
    ("unsafe_split_with_sizes", (F32, [1, 2], 1), RuntimeError,
     r"split_with_sizes expects split_sizes to sum exactly to 4 \(input tensor's size at "
     r"dimension 1\), but got split_sizes=\[1, 2\]", SAME),
    ("unsafe_split_with_sizes", (F32, [5, -1], 1), RuntimeError,
     r"split_with_sizes expects split_sizes have only non-negative entries, but got "
     r"split_sizes=\[5, -1\]", SAME),
    ("hsplit", (np.float32(1).reshape(()), 2), RuntimeError,
     "torch.hsplit requires a tensor with at least 1 dimension, but got a tensor with 0 "
     "dimensions!", SAME),
    ("hsplit", (F32, 3), RuntimeError, "torch.hsplit attempted to split along dimension 1, but "
     "the size of the dimension 4 is not divisible by the split_size 3!", SAME),
    ("hsplit", (F32, 0), RuntimeError, "the size of the dimension 4 is not divisible by the "
     "split_size 0!", SAME),
    ("hsplit", (F32, -2), RuntimeError, "number of sections must be larger than 0, got -2", SAME),
    ("vsplit", (V4, 2), RuntimeError, "torch.vsplit requires a tensor with at least 2 dimension, "
     "but got a tensor with 1 dimensions!", SAME),
    ("vsplit", (F32, 2), RuntimeError, "torch.vsplit attempted to split along dimension 0, but "
     "the size of the dimension 3 is not divisible by the split_size 2!", SAME),
    ("dsplit", (F32, [1]), RuntimeError, "torch.dsplit requires a tensor with at least 3 "
     "dimension, but got a tensor with 2 dimensions!", SAME),
    ("narrow_copy", (np.float32(1).reshape(()), 0, 0, 1), RuntimeError,
     r"narrow\(\) cannot be applied to a 0-dim tensor.", SAME),
    ("narrow_copy", (F32, 2, 0, 1), RuntimeError,
     r"Expected dim < static_cast<int64_t>\(self_sizes.size\(\)\) to be true", SAME),
    ("narrow_copy", (F32, -3, 0, 1), IndexError, r"range of \[-2, 1\], but got -3", SAME),
    ("narrow_copy", (F32, 1, -5, 2), IndexError,
     r"start out of range \(expected to be in range of \[-4, 4\], but got -5\)", SAME),
    ("narrow_copy", (F32, 1, 3, 2), RuntimeError,
     r"start \(3\) \+ length \(2\) exceeds dimension size \(4\).", SAME),
    ("narrow_copy", (F32, 1, -2, 5), RuntimeError,
     r"start \(2\) \+ length \(5\) exceeds dimension size \(4\).", SAME),
    ("narrow_copy", (F32, 1, 1, -1), RuntimeError,
     r"start \(1\) \+ length \(-1\) exceeds dimension size \(4\).", SAME),
    ("as_strided", (F32, [4, 4], [4, 1]), RuntimeError, r"setStorage: sizes \[4, 4\], strides "
     r"\[4, 1\], storage offset 0, and itemsize 4 requiring a storage size of 64 are out of "
     r"bounds for storage of size 48", SAME),
    ("as_strided", (I64, [2, 2], [1, 2], 12), RuntimeError, "storage offset 12, and itemsize 8 "
     "requiring a storage size of 128 are out of bounds for storage of size 96", SAME),
    ("as_strided", (F32, [2, 2], [1, 2], -1), RuntimeError, "Tensor: invalid storage offset -1",
     SAME),
    ("as_strided", (F32, [2, -1], [1, 2]), RuntimeError, r"Storage size calculation overflowed "
     r"with sizes=\[2, -1\] and strides=\[1, 2\]", SAME),
    ("as_strided", (F32, [2, 2], [1, -2]), RuntimeError, r"as_strided: Negative strides are not "
     r"supported at the moment, got strides: \[1, -2\]", SAME),
    ("as_strided", (F32, [2, 2], [1]), RuntimeError, "mismatch in length of strides and shape",
     SAME),
    ("as_strided", (F32.T, [2, 2], [1, 2]), RuntimeError, "C-contiguous input only", False),
    ("select_scatter", (F32, V4, 1, 2), RuntimeError, r"expected src to have a size equal to the "
     r"slice of self. src size = \[4\], slice size = \[3\]", SAME),
    ("select_scatter", (F32, V4[:3], 1, 5), IndexError, r"select\(\): index 5 out of range for "
     r"tensor of size \[3, 4\] at dimension 1", SAME),
    ("select_scatter", (F32, V4[:3], 2, 0), IndexError, r"range of \[-2, 1\], but got 2", SAME),
    ("select_scatter", (np.float32(1).reshape(()), np.float32(1).reshape(()), 0, 0), IndexError,
     r"select\(\) cannot be applied to a 0-dim tensor.", SAME),
    ("slice_scatter", (F32, F32, 1, 0, 2), RuntimeError, r"expected src to have a size equal to "
     r"the slice of self. src size = \[3, 4\], slice size = \[3, 2\]", SAME),
    ("slice_scatter", (F32, F32[:, :2], 1, 0, 2, 0), RuntimeError, "slice step must be positive",
     SAME),
    ("slice_scatter", (np.float32(1).reshape(()), np.float32(1).reshape(()), 0), IndexError,
     r"slice\(\) cannot be applied to a 0-dim tensor.", SAME),
    ("slice_scatter", (F32, F32, 5), IndexError, r"range of \[-2, 1\], but got 5", SAME),
    ("diagonal_scatter", (F32, V4[:2]), RuntimeError, r"src size = \[2\], slice size = \[3\]",
     SAME),
    ("diagonal_scatter", (F32, V4[:3], 0, 0, 0), RuntimeError,
     "diagonal dimensions cannot be identical 0, 0", SAME),
    ("diagonal_scatter", (F32, V4[:3], 0, 0, 2), IndexError, r"range of \[-2, 1\], but got 2",
     SAME),
    ("channel_shuffle", (F32, 2), RuntimeError, r"channel_shuffle expects input with > 2 dims, "
     r"but got input with sizes \[3, 4\]", SAME),
    ("channel_shuffle", (X4, 0), RuntimeError, "Number of groups to divide channels in must be "
     "positive. Value of groups:0", SAME),
    ("native_channel_shuffle", (X4, 3), RuntimeError, "Number of channels must be divisible by "
     "groups. Got 2 channels and 3 groups.", SAME),
    ("reflection_pad2d", (X4, [1, 1]), RuntimeError, "padding size is expected to be 4, but got: "
     "2", SAME),
    ("replication_pad2d", (X4, [1, 1]), RuntimeError, "padding size is expected to be 4$", SAME),
    ("reflection_pad2d", (X4[0, 0], [1, 1, 1, 1]), RuntimeError, r"Expected 3D or 4D \(batch "
     r"mode\) tensor with possibly 0 batch size and other non-zero dimensions for input, but "
     r"got: \[3, 4\]", SAME),
    ("replication_pad1d", (X4[:, :0, 0], [1, 2]), RuntimeError, r"Expected 2D or 3D \(batch "
     r"mode\) tensor .* but got: \[1, 0, 4\]", SAME),
    ("reflection_pad1d", (X4, [1, 2]), RuntimeError, r"but got: \[1, 2, 3, 4\]", SAME),
    ("reflection_pad2d", (X4, [1, 1, 3, 2]), RuntimeError, r"Argument #6: Padding size should be "
     r"less than the corresponding input dimension, but got: padding \(3, 2\) at dimension 2 of "
     r"input \[1, 2, 3, 4\]", SAME),
    ("reflection_pad2d", (X4, [4, 1, 3, 2]), RuntimeError, r"Argument #4: .* padding \(4, 1\) at "
     r"dimension 3 of input", SAME),
    ("reflection_pad3d", (X4, [1, 1, 1, 1, 1, 2]), RuntimeError, r"Argument #8: .* padding "
     r"\(1, 2\) at dimension 1 of input \[1, 2, 3, 4\]", SAME),
    ("reflection_pad1d", (X4[0], [-3, -1]), RuntimeError,
     r"input \(W: 4\) is too small. Calculated output W: 0", SAME),
    ("replication_pad2d", (X4, [-3, -1, -3, 0]), RuntimeError,
     r"input \(H: 3, W: 4 \) is too small. Calculated output H: 0 W: 0", SAME),
    ("reflection_pad2d", (X4, [-3, -2, -3, 0]), RuntimeError,
     r"input \(H: 3, W: 4\) is too small. Calculated output H: 0 W: -1", SAME),
    ("replication_pad3d", (X4[None], [-3, -1, -3, 0, -2, 0]), RuntimeError,
     r"input \(D: 2 H: 3, W: 4\) is too small. Calculated output D: 0 H: 0 W: 0", SAME),
    ("reflection_pad3d", (X4[None], [-3, -1, -3, 0, -2, 0]), RuntimeError,
     r"input \(D: 2 H: 3, W: 4\) is too small", SAME),
    ("replication_pad3d", (X4[None], [-1, -4, 0, 0, 0, 0]), RuntimeError,
     r"Trying to create tensor with negative dimension -1: \[1, 1, 2, 3, -1\]", SAME),
    ("reflection_pad1d", (X4[0] > 0, [1, 2]), NotImplementedError,
     "\"reflection_pad1d\" not implemented for 'Bool'", SAME),
    ("replication_pad2d", (X4 > 0, [1, 2, 1, 1]), NotImplementedError,
     "\"replication_pad2d\" not implemented for 'Bool'", SAME),
    ("native_layer_norm", (F32, [5], None, None, 1e-5), RuntimeError,
     r"Given normalized_shape=\[5\], expected input with shape \[\*, 5\], but got input of "
     r"size\[3, 4\]", SAME),
    ("native_layer_norm", (I64, [4], None, None, 1e-5), NotImplementedError,
     "\"LayerNormKernelImpl\" not implemented for 'Long'", SAME),
    ("native_batch_norm", (I64, None, None, None, None, True, 0.1, 1e-5), NotImplementedError,
     "\"batch_norm\" not implemented for 'Long'", SAME),
    ("native_batch_norm", (F32, None, None, None, None, False, 0.1, 1e-5), RuntimeError,
     "running_mean and running_var must be defined in evaluation mode", False),
    ("index_reduce", (F32, 0, IDX, F32, "sum"), RuntimeError, r"index_reduce\(\): Expected "
     r"reduce to be one of prod, mean, amax or amin but got sum.", SAME),
    ("index_reduce", (F32, 2, IDX, F32, "prod"), IndexError, r"range of \[-2, 1\], but got 2",
     SAME),
    ("index_reduce", (F32, 0, IDX[None], F32, "prod"), IndexError, r"index_reduce_\(\): Index is "
     r"supposed to be a vector, but got dim: 2 with type: Long and size: \[1, 3\]", SAME),
    ("index_reduce", (F32, 0, IDX.astype(np.float32), F32, "prod"), RuntimeError,
     r"index_reduce_\(\): Expected dtype int32/int64 for index but got: Float", SAME),
    ("index_reduce", (F32, 0, IDX, I64, "prod"), RuntimeError, r"index_reduce_\(\): self "
     r"\(Float\) and source \(Long\) must have the same scalar type", SAME),
    ("index_reduce", (F32, 0, IDX[:2], F32, "prod"), RuntimeError, r"index_reduce_\(\): Number "
     r"of indices \(2\) should be equal to source.size\(dim\): \(3\), for dim: 0", SAME),
    ("index_reduce", (F32, 0, IDX, F32[:, :2], "prod"), RuntimeError, r"source tensor shape must "
     r"match self tensor shape, excluding the specified dimension. Got self.shape = \[3, 4\] "
     r"source.shape = \[3, 2\]", SAME),
    ("index_reduce", (F32, 0, np.array([0, 3, 0]), F32, "prod"), IndexError,
     "index out of range in self", SAME),
    ("index_reduce", (F32, 0, np.array([0, -1, 0]), F32, "amax"), IndexError,
     "index out of range in self", SAME),
    ("index_reduce", (F32 > 0, 0, IDX, F32 > 0, "mean"), NotImplementedError,
     "\"div_floor_cpu\" not implemented for 'Bool'", SAME),
    ("index_reduce", (F32 > 0, 0, IDX, F32 > 0, "amax", False), NotImplementedError,
     "\"index_reduce_func_exclude_input_init\" not implemented for 'Bool'", SAME),
    ("index_reduce", (V4 > 0, 0, IDX, V4[:3] > 0, "prod"), NotImplementedError,
     "\"index_func_\" not implemented for 'Bool'", SAME),
    ("put", (F32, np.array([0, 12]), V4[:2]), IndexError,
     "out of range: tried to access index 12 on a tensor of 12 elements.", SAME),
    ("put", (F32, np.array([0, -13]), V4[:2]), IndexError, "tried to access index -13", SAME),
    ("put", (F32, IDX, V4), IndexError, r"put_\(\): Expected source and index to have the same "
     r"number of elements, but got source.numel\(\) = 4, index.numel\(\) = 3", SAME),
    ("put", (F32, IDX.astype(np.int32), V4[:3]), RuntimeError,
     r"put_\(\): Expected a long tensor for index, but got Int", SAME),
    ("put", (F32, IDX, V4[:3].astype(np.float64)), RuntimeError, r"put_\(\): self and source "
     r"expected to have the same dtype, but got self.dtype = Float and source.dtype = Double",
     SAME),
    ("put", (np.zeros(0, np.float32), IDX, V4[:3]), IndexError,
     r"put_\(\): Tried to put elements into an empty tensor", SAME),
    ("put_", (np.broadcast_to(np.float32(0), (3, 4)), IDX, V4[:3]), RuntimeError, "read-only",
     False),
    ("masked_scatter", (F32, np.ones((1, 3), bool), V4), RuntimeError,
     r"The size of tensor a \(3\) must match the size of tensor b \(4\)", SAME),
    ("masked_scatter", (F32, np.ones((1, 4), np.int32), V4.astype(np.int64)), RuntimeError,
     "masked_scatter: expected self and source to have same dtypes but gotFloat and Long", SAME),
    ("masked_scatter", (F32, np.ones((1, 4), np.int32), V4), RuntimeError,
     "masked_scatter_ only supports boolean masks, but got mask with dtype Int", SAME),
    ("masked_scatter", (F32, np.ones((3, 4), bool), V4), RuntimeError,
     "Number of elements of source < number of ones in mask", SAME),
    ("combinations", (F32,), RuntimeError, r"Expect a 1D vector, but got shape \[3, 4\]", SAME),
    ("combinations", (V4, -1), RuntimeError, "Expect a non-negative number, but got -1", SAME),
    ("histogram", (V4, 0), RuntimeError,
     r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0", SAME),
    ("histogram", (V4, V4[:1]), RuntimeError,
     r"torch.histogram\(\): bins must be > 0, but got 0 for dimension 0", SAME),
    ("histogram", (V4, V4[:0]), RuntimeError, "torch.histogramdd: bins tensor should have at "
     "least 1 element, but got 0 elements in the bins tensor for dimension 0", SAME),
    ("histogram", (V4, F32), RuntimeError, "torch.histogramdd: bins tensor should have one "
     "dimension, but got 2 dimensions in the bins tensor for dimension 0", SAME),
    ("histogram", (V4, V4.astype(np.float64)), RuntimeError, "torch.histogramdd: input tensor "
     "and bins tensors should have the same dtype, but got input with dtype float and bins for "
     "dimension 0 with dtype double", SAME),
    ("histogram", (V4.astype(np.int64), V4), RuntimeError, "got input with dtype long int and "
     "bins for dimension 0 with dtype float", SAME),
    ("histogram", (V4, 3, [1.0, 0.0]), RuntimeError, "torch.histogramdd: min should not exceed "
     "max, but got min 1 max 0 for dimension 0", SAME),
    ("histogram", (V4, 3, [0.0, float("inf")]), RuntimeError,
     r"torch.histogramdd: dimension 0's range \[0, inf\] is not finite", SAME),
    ("histogram", (np.float32([1, np.nan]), 3), RuntimeError,
     r"torch.histogramdd: dimension 0's range \[nan, nan\] is not finite", SAME),
    ("histogram", (V4, 3, [0.0, 1.0, 2.0]), RuntimeError, "torch.histogramdd: for a "
     "1-dimensional histogram range should have 2 elements, but got 3", SAME),
    ("histogram", (V4.astype(np.int64), 3), NotImplementedError,
     "\"histogramdd\" not implemented for 'Long'", SAME),
    ("histogram", (V4.astype(np.float16), 3), NotImplementedError,
     "\"histogramdd\" not implemented for 'Half'", SAME),
    ("histogram", (V4, 3, None, V4.astype(np.float64)), RuntimeError, "torch.histogramdd: if "
     r"weight tensor is provided, input tensor and weight tensor should have the same dtype, but "
     r"got input\(float\), and weight\(double\)", SAME),
    ("histogram", (V4, 3, None, V4[:3]), RuntimeError, "torch.histogramdd: if weight tensor is "
     "provided it should have the same shape as the input tensor excluding its innermost "
     r"dimension, but got input with shape \[4, 1\] and weight with shape \[3\]", SAME),
    ("max_unpool2d", (X4[:, :, :2, :2], np.zeros((1, 2, 2, 2), np.int64) + 15, [4, 3]),
     RuntimeError, r"Found an invalid max index: 15 \(output volumes are of size 4x3\)", SAME),
    ("max_unpool2d", (X4[:, :, :2, :2], np.zeros((1, 2, 2, 2), np.int64) - 1, [4, 4]),
     RuntimeError, "Found an invalid max index: -1", SAME),
    ("max_unpool2d", (X4, np.zeros((1, 2, 3, 4), np.int64), [4]), RuntimeError, "There should be "
     r"exactly two elements \(height, width\) in output_size, but got 1 elements.", SAME),
    ("max_unpool2d", (X4, np.zeros((1, 2, 3, 4), np.int32), [4, 4]), RuntimeError,
     "elements in indices should be type int64 but got: Int", SAME),
    ("max_unpool2d", (X4, np.zeros((1, 2, 3, 1), np.int64), [4, 4]), RuntimeError,
     r"Expected shape of indices to be same as that of the input tensor \(\[1, 2, 3, 4\]\) but "
     r"got indices tensor with shape: \[1, 2, 3, 1\]", SAME),
    ("max_unpool2d", (F32, I64, [4, 4]), RuntimeError, "Input to max_unpooling2d should be a 3d "
     "or 4d Tensor, but got a tensor with 2 dimensions.", SAME),
    ("max_unpool2d", (X4[:, :0], np.zeros((1, 0, 3, 4), np.int64), [4, 4]), RuntimeError,
     r"max_unpooling2d_forward_out_cpu\(\): Expected input to have non-zero size for non-batch "
     r"dimensions, but got \[1, 0, 3, 4\] with dimension 1 being empty.", SAME),
    ("max_unpool2d", (X4.astype(np.int64), np.zeros((1, 2, 3, 4), np.int64), [4, 4]),
     NotImplementedError, "\"max_unpool2d\" not implemented for 'Long'", SAME),
    ("max_unpool3d", (X4[None], np.zeros((1, 1, 2, 3, 4), np.int64), [2, 3, 4], [1, 0, 2],
                      [0, 0, 0]), RuntimeError,
     r"strides should be greater than zero, but got stride: \[1, 0, 2\]", SAME),
    ("max_unpool3d", (X4[None], np.zeros((1, 1, 2, 3, 4), np.int64), [2, 3, 4], [1, 2],
                      [0, 0, 0]), RuntimeError, r"There should be exactly three elements "
     r"\(depth, height, width\) in stride, but got: 2 elements.", SAME),
    ("max_unpool3d", (X4[0], np.zeros((2, 3, 4), np.int64), [2, 3, 4], [1, 2, 2], [0, 0, 0]),
     RuntimeError, "Input to max_unpooling3d should be a 4d or 5d Tensor, but got a tensor with "
     "3 dimensions.", SAME),
    ("max_unpool3d", (X4, np.zeros((1, 2, 3, 4), np.int64) + 9, [1, 2, 4], [1, 2, 2],
                      [0, 0, 0]), RuntimeError,
     r"Found an invalid max index: 9 \(output volumes are of size 1x2x4\)", SAME),
    ("embedding_bag", (W, BAG, OFF, False, 0, False, None, False, 10), RuntimeError,
     "padding_idx must be within the number of embeddings, -10 through 9, but got 10", SAME),
    ("embedding_bag", (W, BAG, np.array([1, 2])), RuntimeError, r"offsets\[0\] has to be 0, "
     r"i.e., the first sequence in the mini-batch has to start from position 0. However, got 1",
     SAME),
    ("embedding_bag", (W, BAG, np.array([0, 5])), RuntimeError, r"offsets\[-1\] can not be "
     r"greater than input's length 4 but got offsets\[-1\] of 5", SAME),
    ("embedding_bag", (W, BAG, OFF, False, 3), RuntimeError, "`mode` must be sum, mean, or max.",
     SAME),
    ("embedding_bag", (W, BAG.astype(np.float32), OFF), RuntimeError, "Expected tensor for "
     "argument #1 'indices' to have one of the following scalar types: Long, Int; but got "
     r"torch.FloatTensor instead \(while checking arguments for embedding_bag\)", SAME),
    ("embedding_bag", (W.astype(np.int64), BAG, OFF), RuntimeError, "Expected tensor for "
     "argument #1 'weight' to have one of the following scalar types: Half, BFloat16, Float, "
     "Double; but got torch.LongTensor instead", SAME),
    ("embedding_bag", (W[0], BAG, OFF), RuntimeError,
     "weight has to be a 2D Tensor, but got Tensor of dimension 1", SAME),
    ("embedding_bag", (W, BAG, OFF[None]), RuntimeError,
     "offsets has to be a 1D Tensor, but got Tensor of dimension 2", SAME),
    ("embedding_bag", (W, BAG, OFF, False, 1, False, V4), RuntimeError,
     "embedding_bag: per_sample_weights only supported with mode='sum'", SAME),
    ("embedding_bag", (W, BAG, OFF, False, 0, False, V4.astype(np.float64)), RuntimeError,
     "Expected tensor for argument #1 'weight' to have the same type as tensor for argument #1 "
     "'per_sample_weights'; but type torch.FloatTensor does not equal torch.DoubleTensor", SAME),
    ("embedding_bag", (W, BAG, OFF, False, 0, False, V4[:3]), RuntimeError,
     r"Expected per_sample_weights.value\(\).numel\(\) == indices.numel\(\) to be true", SAME),
    ("embedding_bag", (W, BAG, OFF[:0], False, 0, False, None, True), RuntimeError,
     "include_last_offset: number of offset should be at least 1", SAME),
    ("embedding_bag", (W.astype(np.float64), BAG + 7, OFF, False, 0), RuntimeError,
     "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 11", SAME),
    ("embedding_bag", (W, BAG + 7, OFF, False, 2), RuntimeError,
     "embedding_bag: Expected idx >= 0 && idx < num_embeddings but found idx to be 11", SAME),
    ("embedding_bag", (W, np.array([1, 12, 4]), OFF, False, 0), RuntimeError,
     r"Index 1 of input takes value 12 which is not in the valid range \[0, 10\)", SAME),
    ("embedding_bag", (W, np.array([1, 2, 3, 4]), np.array([0, 3, 1])), RuntimeError,
     "offsets must be non-decreasing", False),
]


# ops whose trailing arguments torch takes by keyword only: (positional count, keyword names)
KEYWORD_ONLY = {"index_reduce": (5, ("include_self",)),
                "histogram": (2, ("range", "weight", "density"))}


@pytest.mark.parametrize("name, args, exc, message, same", ERRORS,
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_as_pytorch(name, args, exc, message, same):
    with pytest.raises(exc, match=message):
        impl(name)(np, *args)


@pytest.mark.parametrize("name, args, exc, message", [e[:4] for e in ERRORS if e[4]],
                         ids=[f"{e[0]}-{i}" for i, e in enumerate(ERRORS) if e[4]])
def test_torch_raises_the_same(torch, name, args, exc, message):
    """The expected errors are torch's own (type and message)."""
    n, names = KEYWORD_ONLY.get(name, (len(args), ()))
    kwargs = dict(zip(names, T(torch, list(args[n:]))))
    with pytest.raises(exc, match=message):
        getattr(torch.ops.aten, name)(*T(torch, list(args[:n])), **kwargs)


def test_errors_through_a_graph():
    """Through a graph an op's error arrives wrapped, naming the node and the original."""
    text = """graph(%x : Tensor, %m : Tensor, %s : Tensor):
  %y : Tensor = aten::masked_scatter(%x, %m, %s)
  return (%y)
"""
    x, m = np.zeros((3, 4), np.float32), np.ones((3, 4), bool)
    for run in (jit.run, lambda g, *a: jit.run(jit.fuse(g), *a)):
        with pytest.raises(ExecutionError, match=r"aten::masked_scatter.*Number of elements of "
                                                 r"source < number of ones in mask"):
            run(parse_graph(text), x, m, np.ones(5, np.float32))
    with pytest.raises(ExecutionError, match="Number of elements of source"):  # eager too
        tl.masked_scatter(x, m, np.ones(5, np.float32))


# -- registry entries and inferred types ---------------------------------------------------------

NEW_OPS = ["logspace", "diagflat", "msort", "ravel", "unsafe_chunk", "unsafe_split",
           "unsafe_split_with_sizes", "hsplit", "vsplit", "dsplit", "atleast_1d", "atleast_2d",
           "atleast_3d", "narrow_copy", "resolve_conj", "resolve_neg", "as_strided",
           "select_scatter", "slice_scatter", "diagonal_scatter", "masked_scatter",
           "channel_shuffle", "native_channel_shuffle", "reflection_pad1d", "reflection_pad2d",
           "reflection_pad3d", "replication_pad1d", "replication_pad2d", "replication_pad3d",
           "native_layer_norm", "native_batch_norm", "_native_batch_norm_legit_no_training",
           "embedding_bag"]
EXTRA_OPS = ["index_reduce", "put", "put_", "max_unpool2d", "max_unpool3d", "combinations",
             "histogram"]


def test_registry_entries():
    for name in NEW_OPS + [n for n in EXTRA_OPS if registry.lookup(f"aten::{n}")]:
        op = registry.get(f"aten::{name}")
        assert op.infer is not None and not op.is_elementwise, name
    assert not registry.get("aten::native_batch_norm").pure  # it updates running statistics
    if registry.lookup("aten::put_"):
        assert mutates("aten::put_") and INPLACE_OF["aten::put_"] == "aten::put"
        assert not registry.get("aten::put_").pure
    # these print as other ops (vstack, transpose) or not at all (F.max_unpool1d calls the 2-d
    # op): nothing registers them
    for name in ("row_stack", "swapdims", "swapaxes", "max_unpool1d"):
        assert registry.lookup(f"aten::{name}") is None


SHAPES = """graph(%x : Tensor, %v : Tensor, %w : Tensor, %i : Tensor, %g : Tensor, %o : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %5 : int = prim::Constant[value=5]()
  %ten : float = prim::Constant[value=10.]()
  %e : float = prim::Constant[value=1.0000000000000001e-05]()
  %m : float = prim::Constant[value=0.10000000000000001]()
  %f : bool = prim::Constant[value=0]()
  %t : bool = prim::Constant[value=1]()
  %n : NoneType = prim::Constant()
  %sizes : int[] = prim::ListConstruct(%2, %2)
  %strides : int[] = prim::ListConstruct(%1, %2)
  %pad : int[] = prim::ListConstruct(%1, %1, %2, %0)
  %shape : int[] = prim::ListConstruct(%5)
  %l : Tensor[] = prim::ListConstruct(%x, %v)
  %ls : Tensor = aten::logspace(%0, %2, %5, %ten, %n, %n, %n, %n)
  %df : Tensor = aten::diagflat(%x, %1)
  %rv : Tensor = aten::ravel(%x)
  %hs : Tensor[] = aten::unsafe_chunk(%x, %2, %1)
  %a3 : Tensor = aten::atleast_3d(%v)
  %a2 : Tensor[] = aten::atleast_2d(%l)
  %nc : Tensor = aten::narrow_copy(%x, %1, %0, %2)
  %as : Tensor = aten::as_strided(%x, %sizes, %strides, %n)
  %ss : Tensor = aten::slice_scatter(%x, %x, %0, %n, %n, %1)
  %cs : Tensor = aten::channel_shuffle(%g, %2)
  %rp : Tensor = aten::reflection_pad2d(%g, %pad)
  %y : Tensor, %mu : Tensor, %rs : Tensor = aten::native_layer_norm(%x, %shape, %n, %n, %e)
  %by : Tensor, %bm : Tensor, %bs : Tensor = aten::native_batch_norm(%g, %n, %n, %n, %n, %t, %m, %e)
""" + ("  %eb : Tensor, %ob : Tensor, %bz : Tensor, %mi : Tensor = aten::embedding_bag(%w, %i, %o, "
       "%f, %1, %f, %n, %f, %n)\n") + """\
  %ms : Tensor = aten::msort(%ss)
  return (%ls, %df, %rv, %ms, %a3, %nc, %as, %cs, %rp, %y, %mu, %rs, %by, %bm, %eb, %ob, %hs, %a2)
"""


def test_inferred_types():
    g = infer_types(parse_graph(SHAPES), [TensorType("float32", (3, 5)),
                                          TensorType("float64", (4,)),
                                          TensorType("float32", (10, 3)),
                                          TensorType("int64", (6,)),
                                          TensorType("float32", (1, 4, 3, 3)),
                                          TensorType("int64", (2,))])
    types = [v.type for v in g.outputs]
    assert [t.shape for t in types[:-2]] == [
        (5,), (16, 16), (15,), (3, 5), (1, 4, 1), (3, 2), (2, 2), (1, 4, 3, 3), (1, 4, 5, 5),
        (3, 5), (3, 1), (3, 1), (1, 4, 3, 3), (None,), (2, 3), None]
    assert [t.dtype for t in types[:-2]] == ["float32"] * 4 + ["float64"] + ["float32"] * 10 + [
        "int64"]
    assert all(isinstance(t, ListType) for t in types[-2:])
    # what the ops give at run time agrees
    args = [np.zeros(s, d) for s, d in (((3, 5), np.float32), ((4,), np.float64),
                                        ((10, 3), np.float32), ((6,), np.int64),
                                        ((1, 4, 3, 3), np.float32))] + [np.array([0, 3])]
    outs = jit.run(parse_graph(SHAPES), *args)
    for t, got in zip(types[:-2], outs):
        assert t.dtype == str(got.dtype) and all(s in (None, n) for s, n in zip(t.shape or (),
                                                                                  got.shape))


# -- F.pad's non-constant modes: ATen's dispatch to the padding ops, their checks ---------------

@pytest.mark.parametrize("mode", ["reflect", "replicate", "circular"])
def test_pad_modes_dispatch_as_aten(torch, tmp_path, mode):
    x = torch.arange(24.0).reshape(1, 2, 3, 4)
    pad = registry.get("aten::pad").impl
    for p in [(1, 2), (-1, 2), (2, 2, 1, 1), (3, 3), (4, 4), (2, 0, -1, 2)]:
        for t in (x, x[0], x[0, 0]):
            try:
                want = torch.nn.functional.pad(t, p, mode=mode)
            except (RuntimeError, NotImplementedError) as e:
                with pytest.raises(type(e)) as info:
                    pad(np, t.numpy(), list(p), mode)
                assert str(info.value).splitlines()[0] == str(e).splitlines()[0], (p, t.shape)
                continue
            check(pad(np, t.numpy(), list(p), mode), want)

    mod = program_module(tmp_path, f"pad_{mode}", f"""import torch
def fn(x):
    return torch.nn.functional.pad(x * 2, (1, 2, 2, 1), mode="{mode}")
""")
    against_torch(torch, mod.fn, (x,))
    with pytest.raises(NotImplementedError, match="Unrecognised padding mode bogus"):
        pad(np, x.numpy(), [1, 1], "bogus")
