"""The ops of ``ops/tensor_more.py`` and ``ops/tensor_more_index.py`` against PyTorch: each
eagerly over several shapes, dtypes and NaN, then in functions and modules as
``torch.jit.script`` / ``torch.jit.trace`` print them, run interpreted, fused and fused strictly
(``prelu``, ``cdist``, ``index_put_`` from ``y[mask] = v`` and ``y[:, i] += 1``, ``index_add_``,
``isin``, ``masked_select``, ``pixel_shuffle``, ``unfold``, ``F.unfold`` / ``F.fold``,
``squeeze_``); then each error path's exception type and message, and the inferred types.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_modes import against_torch, program_module
from graph_modes import check_torch as check

import torchlike as tl
from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.ir import parse_graph
from torchlike.ir.types import BOOL, TensorType
from torchlike.ops import registry
from torchlike.ops.inplace import INPLACE_OF, mutates
from torchlike.passes import infer_types

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")
RNG = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def t_(torch, a):
    return torch.from_numpy(np.array(a))


def impl(name):
    return registry.get(name).impl


# -- prelu -------------------------------------------------------------------------------------

@pytest.mark.parametrize("shape, wshape", [((2, 3, 4), (3,)), ((2, 3, 4), (1,)), ((2, 3), ()),
                                           ((5,), (1,)), ((), (1,)), ((2, 4, 3, 3), (4,))])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_preluagainst_torch(torch, shape, wshape, dtype):
    x, w = randn(*shape, dtype=dtype), RNG.uniform(0, 1, wshape).astype(dtype)
    if x.size > 1:
        x.reshape(-1)[1] = np.nan
    want = torch.nn.functional.prelu(t_(torch, x), t_(torch, w))
    check(tl.prelu(x, w), want)
    if x.ndim == 0:
        kernel_w = w.reshape(())
    else:
        kernel_w = w if w.ndim == 0 or x.ndim < 2 else w.reshape((1, -1) + (1,) * (x.ndim - 2))
    check(impl("aten::_prelu_kernel")(np, x, kernel_w),
          torch._prelu_kernel(t_(torch, x), t_(torch, kernel_w)))


# -- cdist -------------------------------------------------------------------------------------

CDIST = [((3, 4), (5, 4)), ((2, 3, 4), (2, 5, 4)), ((2, 1, 3, 4), (5, 4)), ((30, 3), (4, 3)),
         ((3, 6), (27, 6)), ((1, 3), (2, 3)), ((0, 4), (5, 4)), ((3, 0), (2, 0))]


@pytest.mark.parametrize("s1, s2", CDIST)
@pytest.mark.parametrize("p", [0.0, 1.0, 2.0, 3.0, 0.5, float("inf")])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_cdistagainst_torch(torch, s1, s2, p, dtype):
    a, b = randn(*s1, dtype=dtype), randn(*s2, dtype=dtype)
    if p == 0.0 and a.size:  # equal coordinates count as 0
        a.reshape(-1)[0] = b.reshape(-1)[0]
    for mode in (None, 1, 2):
        want = torch.cdist(t_(torch, a), t_(torch, b), p, {None: "use_mm_for_euclid_dist_if_"
                                                           "necessary", 1: "use_mm_for_euclid_"
                                                           "dist", 2: "donot_use_mm_for_euclid_"
                                                           "dist"}[mode])
        tol = 1e-5 if dtype == np.float32 else 1e-12
        check(tl.cdist(a, b, p, mode), want, rtol=tol, atol=tol)


def test_cdist_nan_as_aten():
    """NaN propagates, except through p = inf, whose max skips it (ATen's kernel)."""
    a = np.float32([[0, np.nan, 1]])
    b = np.float32([[0, 0, 1], [1, 1, 1]])
    for p in (0.0, 1.0, 2.0, 3.0):
        assert np.isnan(tl.cdist(a, b, p)).all()
    np.testing.assert_array_equal(tl.cdist(a, b, float("inf")), [[0.0, 1.0]])


# -- isin, masked_select -----------------------------------------------------------------------

def test_isinagainst_torch(torch):
    x = np.float32([[1, np.nan, 2.5], [3, 4, -0.0]])
    t = np.float32([np.nan, 2.5, 0.0, 7])
    ints = RNG.integers(0, 6, (4, 5))
    cases = [(x, t), (ints, np.array([1, 3, 3])), (ints, np.float64([1.0, 2.5])),
             (ints.astype(np.uint8), np.array([300, 2])), (np.array(3), ints),
             (ints.astype(np.int32), np.int16([5])), (x.astype(np.float16), np.array([3]))]
    for a, b in cases:
        for unique in (False, True):
            for invert in (False, True):
                if unique and len(np.unique(b)) != b.size:
                    continue
                want = torch.isin(t_(torch, a), t_(torch, b), assume_unique=unique, invert=invert)
                check(tl.isin(a, b, unique, invert), want)
    for a, s in ((ints, 3), (ints, 2.5), (x, 2.5), (ints.astype(np.uint8), 300)):
        for invert in (False, True):
            check(tl.isin(a, s, False, invert), torch.isin(t_(torch, a), s, invert=invert))
    for s, b in ((2, ints), (2.5, x), (3, np.float32([3.0]))):
        check(tl.isin(s, b), torch.isin(s, t_(torch, b)))
    # ATen compares a few test elements in result_type, more by sorting in promote_types: the
    # scalar (or 0-d tensor) loses its lower priority, and the answer depends on the size
    for n in (3, 12):
        for s, b in ((-1, np.full(n, 255, np.uint8)), (0.1, np.full(n, 0.1, np.float32)),
                     (np.array(-1), np.full(n, 255, np.uint8))):
            ts = t_(torch, s) if isinstance(s, np.ndarray) else s
            check(tl.isin(s, b), torch.isin(ts, t_(torch, b)))


@pytest.mark.parametrize("xs, ms", [((3, 4), (3, 4)), ((3, 4), (4,)), ((4,), (3, 4)),
                                    ((2, 1, 4), (3, 1)), ((), ()), ((0, 3), (3,))])
def test_masked_selectagainst_torch(torch, xs, ms):
    x, mask = randn(*xs), RNG.random(ms) > 0.4
    check(tl.masked_select(x, mask), torch.masked_select(t_(torch, x), t_(torch, mask)))
    check(tl.masked_select(x.astype(np.int64), mask),
          torch.masked_select(t_(torch, x.astype(np.int64)), t_(torch, mask)))


# -- pixel shuffles, unfold, im2col / col2im ----------------------------------------------------

@pytest.mark.parametrize("shape, r", [((2, 8, 3, 3), 2), ((8, 3, 5), 2), ((2, 2, 9, 3, 3), 3),
                                      ((1, 4, 2, 2), 1), ((0, 4, 2, 2), 2)])
def test_pixel_shufflesagainst_torch(torch, shape, r):
    F = torch.nn.functional
    x = np.arange(np.prod(shape)).reshape(shape)
    check(tl.pixel_shuffle(x, r), F.pixel_shuffle(t_(torch, x), r))
    y = randn(*shape[:-3], 2, 2 * r, 3 * r)
    check(tl.pixel_unshuffle(y, r), F.pixel_unshuffle(t_(torch, y), r))
    if x.size:
        check(tl.pixel_unshuffle(tl.pixel_shuffle(x, r), r), x)


@pytest.mark.parametrize("shape, dim, size, step", [((3, 4), 1, 2, 1), ((3, 4), -1, 4, 3),
                                                    ((3, 7, 2), 1, 3, 2), ((5,), 0, 0, 1),
                                                    ((), 0, 1, 1), ((), -1, 0, 2),
                                                    ((2, 6), 0, 2, 5), ((0, 3), 1, 2, 1)])
def test_unfoldagainst_torch(torch, shape, dim, size, step):
    x = randn(*shape)
    got = tl.unfold(x, dim, size, step)
    check(got, t_(torch, x).unfold(dim, size, step))
    if got.size and x.ndim:
        assert np.shares_memory(got, x)  # a view, as PyTorch's


IM2COL = [  # (input shape, kernel, dilation, padding, stride)
    ((2, 3, 5, 5), (3, 3), (1, 1), (1, 1), (1, 1)), ((3, 6, 7), (2, 3), (2, 1), (1, 0), (2, 1)),
    ((1, 2, 4, 9), (1, 4), (1, 2), (0, 3), (3, 2)), ((0, 2, 4, 4), (2, 2), (1, 1), (0, 0), (2, 2)),
]


@pytest.mark.parametrize("shape, kernel, dilation, padding, stride", IM2COL)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_im2col_col2imagainst_torch(torch, shape, kernel, dilation, padding, stride, dtype):
    x = randn(*shape, dtype=dtype)
    want = torch._C._nn.im2col(t_(torch, x), kernel, dilation, padding, stride)
    cols = tl.im2col(x, kernel, dilation, padding, stride)
    check(cols, want)
    size = shape[-2:]
    check(tl.col2im(cols, size, kernel, dilation, padding, stride),
          torch._C._nn.col2im(want, size, kernel, dilation, padding, stride))
    check(tl.im2col(x.astype(np.float16), kernel, dilation, padding, stride),
          torch._C._nn.im2col(t_(torch, x.astype(np.float16)), kernel, dilation, padding, stride))


# -- index_put, index_add / copy / fill -----------------------------------------------------------

def _index_cases():
    i, j = np.array([0, 2]), np.array([[1], [3]])
    return [  # (self shape, indices, values shape, accumulate)
        ((3, 4), [np.array([0, 2])], (4,), False),
        ((3, 4), [np.array([1, 1, 2])], (3, 4), True),
        ((3, 4), "mask", (), False),
        ((3, 4), "mask", (), True),
        ((3, 4), [None, i], (3, 1), False),
        ((3, 4, 5), [i, None, np.array([4, -1])], (2, 4), False),  # separated: dims first
        ((3, 4, 5), [None, j, np.array([0, 1, 4])], (3, 2, 3), True),
        ((3, 4), [np.array([-1, 0], np.int32), np.array([3, 3])], (), True),
        ((3, 4, 2), [np.array([True, False, True])], (1, 2), False),
        ((3, 4), [None, np.array([1, 1])], (3, 1), True),
        ((4,), [np.array([], np.int64)], (), False),
    ]


@pytest.mark.parametrize("case", range(len(_index_cases())))
@pytest.mark.parametrize("dtype", [np.float32, np.int64, np.bool_])
def test_index_putagainst_torch(torch, case, dtype):
    shape, indices, vshape, accumulate = _index_cases()[case]
    x = (randn(*shape) * 3).astype(dtype)
    if isinstance(indices, str):
        indices = [randn(*shape) > 0]
    values = (randn(*vshape) * 3).astype(dtype)
    tidx = [None if i is None else t_(torch, i) for i in indices]
    want = torch.ops.aten.index_put(t_(torch, x), tidx, t_(torch, values), accumulate)
    check(tl.index_put(x, indices, values, accumulate), want)
    y = x.copy()
    assert tl.index_put_(y, indices, values, accumulate) is y
    check(y, want)


@pytest.mark.parametrize("dim", [0, 1, -1])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.int32])
def test_index_add_copy_fillagainst_torch(torch, dim, dtype):
    x = (randn(3, 4) * 4).astype(dtype)
    n = x.shape[dim]
    dup = np.array([0, n - 1, 0])
    src_shape = list(x.shape)
    src_shape[dim] = 3
    src = (randn(*src_shape) * 4).astype(dtype)
    X, S = t_(torch, x), t_(torch, src)
    for alpha in (1, 2, 0.5) if dtype in (np.float32, np.float64) else (1, 3):
        check(tl.index_add(x, dim, dup, src, alpha), X.index_add(dim, t_(torch, dup), S,
                                                                 alpha=alpha))
    check(tl.index_add(x, dim, dup.astype(np.int32), src),
          X.index_add(dim, t_(torch, dup.astype(np.int32)), S))
    uniq = np.array([n - 1, 0])
    part = np.take(src, [0, 1], axis=dim)
    check(tl.index_copy(x, dim, uniq, part), X.index_copy(dim, t_(torch, uniq), t_(torch, part)))
    for value in (-1.5, 2, np.array(7.25, dtype), True):
        tv = t_(torch, value) if isinstance(value, np.ndarray) else value
        check(tl.index_fill(x, dim, np.array([-1, 1]), value),
              X.index_fill(dim, t_(torch, np.array([-1, 1])), tv))
    y = x.copy()
    assert tl.index_fill_(y, dim, np.array(0), 5) is y
    check(y, X.index_fill(dim, torch.tensor(0), 5))


def test_index_ops_on_zero_dim_and_bool(torch):
    s = np.float32(1.5).reshape(())
    for fn, args in ((tl.index_add, (0, np.array([0, 0]), np.float32([2, 3]).reshape(2))),):
        with pytest.raises(ExecutionError, match="source tensor shape must match"):
            fn(s, *args)
    check(tl.index_add(s, 0, np.array([0]), np.float32(2).reshape(())),
          torch.tensor(1.5).index_add(0, torch.tensor([0]), torch.tensor(2.0)))
    check(tl.index_copy(s, 0, np.array(0), np.float32(4).reshape(())),
          torch.tensor(1.5).index_copy(0, torch.tensor(0), torch.tensor(4.0)))
    check(tl.index_fill(s, -1, np.array([0]), 9), torch.tensor(1.5).index_fill(-1,
                                                                             torch.tensor([0]), 9))
    b = np.array([True, False, False])
    check(tl.index_add(b, 0, np.array([1, 1]), np.array([True, True])),
          torch.tensor(b).index_add(0, torch.tensor([1, 1]), torch.tensor([True, True])))
    check(tl.index_fill(b, 0, np.array([2]), 2), torch.tensor(b).index_fill(0,
                                                                          torch.tensor([2]), 2))


# -- small ops ---------------------------------------------------------------------------------

def test_is_floating_point_broadcast_shapes_squeeze_unsqueeze(torch):
    for dtype in (np.float16, np.float32, np.float64, np.int64, np.bool_, np.uint8):
        assert tl.is_floating_point(np.zeros(2, dtype)) is \
            torch.is_floating_point(t_(torch, np.zeros(2, dtype)))
    for a, b in (([1, 3], [2, 1]), ([2, 3], [3]), ([1, 3], [5, 1, 1]), ([], [4]), ([0], [1])):
        assert tl.broadcast_shapes(a, b) == list(torch.ops.aten.broadcast_shapes(a, b))
    for args in ((), (0,), (-1,), (1,), ([0, 2],)):
        x = randn(1, 3, 1)
        y, want = x[:], torch.from_numpy(x.copy()).squeeze_(*args)
        assert tl.squeeze_(y, *args) is y and y.shape == tuple(want.shape)
        assert np.shares_memory(y, x)
    for d in (0, 3, -1, -4):
        x = randn(1, 3, 1)
        assert tl.unsqueeze_(x, d).shape == tuple(torch.zeros(1, 3, 1).unsqueeze_(d).shape)


# -- scripted and traced -----------------------------------------------------------------------

SOURCE = '''
import torch
import torch.nn.functional as F


def prelu_fn(x, w):
    return F.prelu(x, w) * 2.0 + 1.0


def cdist_fn(x, y):
    return torch.cdist(x, y), torch.cdist(x, y, p=1.0), torch.cdist(x, y, p=float("inf")), \\
        torch.cdist(x, y, compute_mode="donot_use_mm_for_euclid_dist") + 1.0, \\
        torch.cdist(x, y, 0.0, "use_mm_for_euclid_dist")


def mask_assign(x):
    y = x * 2.0
    y[y > 0] = 0.0
    return y + 1.0


def index_assign(x, i, v):
    y = x.clone()
    y[i] = v
    y[1, i] = v[0, 0] * 3.0
    return y


def column_add(x, i):
    y = x * 1.0
    y[:, i] += 1
    return y * 2.0


def index_ops(x, i, s):
    y = x.clone()
    y.index_add_(0, i, s, alpha=2)
    return y, x.index_fill(1, i, -1.0), x.index_copy(0, i[:2], s[:2]), \\
        x.index_add(1, i, s[:, :3].t()) - 1.0


def input_write(x, i):
    a = x * 2.0
    x[x > 1] = 0.0
    x.index_fill_(1, i, 5.0)
    return a + x


def isin_fn(x, t):
    return torch.isin(x, t), torch.isin(x, 3), torch.isin(x, t, invert=True)


def select_fn(x):
    return torch.masked_select(x, x > 0) * 2.0


def shuffle_fn(x):
    return F.pixel_shuffle(x, 2), F.pixel_unshuffle(x, 2) - 1.0, x.unfold(2, 2, 1) + 1.0


def fold_fn(x):
    return F.unfold(x, 3, padding=1), F.fold(F.unfold(x, 2, stride=2), (4, 4), 2, stride=2), \\
        F.fold(F.unfold(x, 3, padding=1, dilation=1), (4, 4), 3, padding=1) * 0.5


def broadcast_fn(x, y):
    return x.expand(torch.broadcast_shapes(x.shape, y.shape)) + 0.0


def squeeze_fn(x):
    y = x * 2.0
    y.unsqueeze_(0)
    z = y + 1.0
    y.squeeze_(0)
    return z, y * 3.0
'''


def test_functionsagainst_torch(torch, tmp_path):
    mod = program_module(tmp_path, "tensor_more_programs", SOURCE)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(3, 4, generator=gen)
    x4 = torch.randn(2, 4, 4, 4, generator=gen)
    cases = {
        "prelu_fn": (torch.randn(2, 3, 4, generator=gen), torch.rand(3, generator=gen)),
        "cdist_fn": (torch.randn(2, 3, 4, generator=gen), torch.randn(5, 4, generator=gen)),
        "mask_assign": (x,), "index_assign": (x, torch.tensor([0, 2]), torch.randn(2, 4)),
        "column_add": (x, torch.tensor([3, 0])),
        "index_ops": (x, torch.tensor([0, 2, 0]), torch.randn(3, 4, generator=gen)),
        "input_write": (x, torch.tensor([1])),
        "isin_fn": (torch.randint(0, 5, (3, 4), generator=gen), torch.tensor([1, 3])),
        "select_fn": (x,), "shuffle_fn": (x4,), "fold_fn": (x4,), "squeeze_fn": (x,),
        "broadcast_fn": (x[:1], torch.randn(2, 1, 1, generator=gen)),
    }
    for name, args in cases.items():
        against_torch(torch, getattr(mod, name), args)


def test_scripted_is_floating_point(torch, tmp_path):
    mod = program_module(tmp_path, "tensor_more_float", '''
import torch


def scaled(x):
    if x.is_floating_point():
        return x * 0.5
    return x * 2
''')
    for x in (torch.randn(3), torch.arange(3)):
        against_torch(torch, mod.scaled, (x,), captures=("script",))


PRELU_NET = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3, padding=1)
        self.act = nn.PReLU(4)
        self.act1 = nn.PReLU()

    def forward(self, x):
        return self.act1(self.act(self.conv(x)) - 0.1) * 2.0
'''


@pytest.mark.parametrize("capture", ["script", "trace"])
def test_prelu_module_saved_by_pytorch(torch, tmp_path, capture):
    torch.manual_seed(0)
    m = program_module(tmp_path, f"prelu_net_{capture}", PRELU_NET).Net().eval()
    with torch.no_grad():
        m.act.weight.uniform_(0, 1)
    x = torch.randn(2, 3, 5, 5)
    sm = torch.jit.script(m) if capture == "script" else torch.jit.trace(m, x)
    path = tmp_path / f"{capture}.pt"
    torch.jit.save(sm, str(path))
    from torchlike.fuser import config
    for fuse in (False, True):
        saved = config.fusion_enabled()
        config.set_fusion_enabled(fuse)
        try:
            got = jit.load(path)(x.numpy())
        finally:
            config.set_fusion_enabled(saved)
        check(got, m(x))


# -- errors ------------------------------------------------------------------------------------

F32, I64 = np.zeros((3, 4), np.float32), np.zeros((3, 4), np.int64)
IDX = np.array([0, 2])

ERRORS = [  # (op, args, exception, message)
    ("aten::prelu", (F32, np.zeros(3, np.float64)), RuntimeError,
     "prelu: Type promoting not supported. Got Float and Double"),
    ("aten::prelu", (F32, np.zeros(3, np.float32)), RuntimeError,
     "Found parameter numbers = 3 and channel size = 4"),
    ("aten::prelu", (np.zeros(5, np.float32), np.zeros(5, np.float32)), RuntimeError,
     "Found parameter numbers = 5 and channel size = 1"),
    ("aten::prelu", (F32, np.zeros((4, 1), np.float32)), RuntimeError,
     r"Expected `weight` to be a scalar or 1D tensor, but got: ndim = 2"),
    ("aten::prelu", (I64, np.zeros(1, np.int64)), NotImplementedError,
     "\"prelu_cpu\" not implemented for 'Long'"),
    ("aten::_prelu_kernel", (F32, np.zeros(3, np.float32)), RuntimeError,
     r"The size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton "
     "dimension 1"),
    ("aten::cdist", (F32[0], F32), RuntimeError, "at least 2D tensors, X1 got: 1D"),
    ("aten::cdist", (F32, F32[:, :3]), RuntimeError, "same number of columns. X1: 4 X2: 3"),
    ("aten::cdist", (I64, I64), RuntimeError, "floating-point dtypes, X1 got: Long"),
    ("aten::cdist", (F32, F32, -1.0), RuntimeError, "non-negative p values"),
    ("aten::cdist", (F32, F32, 2.0, 3), RuntimeError, "possible modes: 0, 1, 2, but was: 3"),
    ("aten::cdist", (F32, F32.astype(np.float64)), RuntimeError,
     "expected scalar type Float but found Double"),
    ("aten::cdist", (np.zeros((2, 3, 4), np.float32), np.zeros((3, 5, 4), np.float32)),
     RuntimeError, r"size of tensor a \(2\) must match the size of tensor b \(3\)"),
    ("aten::isin", (F32 > 0, IDX), RuntimeError,
     "Unsupported input type encountered for isin\\(\\): Bool"),
    ("aten::isin", (I64, True), RuntimeError, "isin\\(\\): Bool"),
    ("aten::masked_select", (F32, I64), RuntimeError, "expected BoolTensor for mask"),
    ("aten::masked_select", (F32, np.ones((3, 3), bool)), RuntimeError,
     r"size of tensor a \(4\) must match the size of tensor b \(3\) at non-singleton dim"),
    ("aten::pixel_shuffle", (F32, 2), RuntimeError, "at least 3 dimensions, but got input with 2"),
    ("aten::pixel_shuffle", (np.zeros((6, 2, 2)), 2), RuntimeError,
     r"input.size\(-3\)=6 is not divisible by 4"),
    ("aten::pixel_shuffle", (np.zeros((8, 2, 2)), 0), RuntimeError,
     "expects a positive upscale_factor, but got 0"),
    ("aten::pixel_unshuffle", (np.zeros((2, 5, 4)), 2), RuntimeError,
     r"expects height to be divisible by downscale_factor, but input.size\(-2\)=5"),
    ("aten::pixel_unshuffle", (np.zeros((2, 4, 5)), 2), RuntimeError,
     r"expects width to be divisible by downscale_factor, but input.size\(-1\)=5"),
    ("aten::unfold", (F32, 1, 5, 1), RuntimeError,
     "maximum size for tensor at dimension 1 is 4 but size is 5"),
    ("aten::unfold", (F32, 1, -1, 1), RuntimeError, "size is -1 but must be >= 0"),
    ("aten::unfold", (F32, 1, 2, 0), RuntimeError, "step is 0 but must be > 0"),
    ("aten::unfold", (F32, 2, 2, 1), IndexError, r"Dimension out of range \(expected to be in "
                                                 r"range of \[-2, 1\], but got 2\)"),
    ("aten::im2col", (np.zeros((1, 2, 5, 5), np.float32), [0, 3], [1, 1], [0, 0], [1, 1]),
     RuntimeError, "kernel size should be greater than zero, but got kernel_height: 0 "
                   "kernel_width: 3"),
    ("aten::im2col", (np.zeros((1, 2, 5, 5), np.float32), [3, 3], [1, 1], [0, -1], [1, 1]),
     RuntimeError, "padding should be non-negative, but got pad_height: 0 pad_width: -1"),
    ("aten::im2col", (np.zeros((1, 2, 2, 4), np.float32), [3, 3], [1, 1], [0, 0], [1, 1]),
     RuntimeError, r"spatial size \(2, 4\), kernel_size=\(3, 3\), dilation=\(1, 1\), padding="
                   r"\(0, 0\), calculated shape of the array of sliding blocks as \(0, 2\)"),
    ("aten::im2col", (np.zeros((1, 2, 5, 5), np.int64), [3, 3], [1, 1], [0, 0], [1, 1]),
     NotImplementedError, "\"im2col_out_cpu\" not implemented for 'Long'"),
    ("aten::im2col", (np.zeros((2, 5, 5, 1, 1), np.float32), [3, 3], [1, 1], [0, 0], [1, 1]),
     RuntimeError, r"Expected 3D or 4D \(batch mode\) tensor"),
    ("aten::im2col", (np.zeros((1, 2, 5, 5), np.float32), [3], [1, 1], [0, 0], [1, 1]),
     RuntimeError, "It is expected kernel_size equals to 2, but got size 1"),
    ("aten::col2im", (np.zeros((2, 26, 25), np.float32), [5, 5], [3, 3], [1, 1], [1, 1], [1, 1]),
     RuntimeError, r"input.size\(1\)=26 and kernel_size=\(3, 3\)"),
    ("aten::col2im", (np.zeros((2, 27, 24), np.float32), [5, 5], [3, 3], [1, 1], [1, 1], [1, 1]),
     RuntimeError, r"number of sliding blocks 5 \* 5 = 25, but got input.size\(2\)=24"),
    ("aten::col2im", (np.zeros((2, 27, 25), np.float32), [5, 5], [3, 3], [1, 1], [1, 1], [1, 0]),
     RuntimeError, "stride should be greater than zero, but got stride_height: 1 stride_width: 0"),
    ("aten::col2im", (np.zeros((2, 27, 25, 1), np.float32), [5, 5], [3, 3], [1, 1], [1, 1],
                      [1, 1]), RuntimeError, r"Expected 2D or 3D \(batch mode\) tensor"),
    ("aten::broadcast_shapes", ([2, 3], [4, 3]), RuntimeError,
     r"size of tensor a \(4\) must match the size of tensor b \(2\) at non-singleton dim"),
    ("aten::index_put", (F32, [np.array([0, 5])], np.float32(1).reshape(())), IndexError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    ("aten::index_put", (F32, [None, np.array([-5])], np.float32(1).reshape(())), IndexError,
     "index -5 is out of bounds for dimension 1 with size 4"),
    ("aten::index_put", (F32, [np.float32([0])], np.float32(1).reshape(())), IndexError,
     "tensors used as indices must be long, int, byte or bool tensors"),
    ("aten::index_put", (F32, [np.array([True, False])], np.float32(1).reshape(())), IndexError,
     r"The shape of the mask \[2\] at index 0 does not match the shape of the indexed tensor "
     r"\[3, 4\] at index 0"),
    ("aten::index_put", (F32, [IDX, IDX, IDX], np.float32(1).reshape(())), IndexError,
     r"too many indices for tensor of dimension 2 \(got 3\)"),
    ("aten::index_put", (F32, [IDX, np.array([0, 1, 2])], np.float32(1).reshape(())),
     IndexError, r"indexing tensors could not be broadcast together with shapes \[2\], \[3\]"),
    ("aten::index_put", (F32, [IDX], np.ones(2, np.float32)), RuntimeError,
     r"shape mismatch: value tensor of shape \[2\] cannot be broadcast to indexing result of "
     r"shape \[2, 4\]"),
    ("aten::index_put_", (F32.copy(), [IDX], np.float64(1).reshape(())), RuntimeError,
     "Index put requires the source and destination dtypes match, got Float for the "
     "destination and Double for the source."),
    ("aten::index_put_", (np.broadcast_to(np.float32(0), (3, 4)), [IDX], np.float32(1)),
     RuntimeError, "read-only"),
    ("aten::index_add", (F32, 0, IDX, np.ones((2, 4))), RuntimeError,
     r"index_add_\(\): self \(Float\) and source \(Double\) must have the same scalar type"),
    ("aten::index_add", (F32, 0, np.float32([0, 2]), F32[:2]), RuntimeError,
     r"index_add_\(\): Expected dtype int32/int64 for index but got: Float"),
    ("aten::index_add", (F32, 0, IDX[None], F32[:2]), IndexError,
     r"Index is supposed to be a vector, but got dim: 2 with type: Long and size: \[1, 2\]"),
    ("aten::index_add", (F32, 0, np.array([0, -1]), F32[:2]), RuntimeError,
     "index -1 is out of bounds for dimension 0 with size 3"),
    ("aten::index_add", (F32, 0, IDX, F32), RuntimeError,
     r"Number of indices \(2\) should be equal to source.size\(dim\): \(3\), for dim: 0"),
    ("aten::index_add", (F32, 0, IDX, F32[:2, :3]), RuntimeError,
     r"Got self.shape = \[3, 4\] source.shape = \[2, 3\]"),
    ("aten::index_add", (F32, 2, IDX, F32[:2]), IndexError, "Dimension out of range"),
    ("aten::index_copy", (F32, 0, IDX, F32[:2].astype(np.float64)), RuntimeError,
     r"self and source expected to have the same dtype, but got \(self\) Float and \(source\) "
     "Double"),
    ("aten::index_copy", (F32, 0, IDX.astype(np.int32), F32[:2]), RuntimeError,
     "Expected a long tensor for index, but got Int"),
    ("aten::index_copy", (F32, 0, np.array([0, 5]), F32[:2]), IndexError,
     r"index_copy_\(\): index 5 is out of bounds for dimension 0 with size 3"),
    ("aten::index_copy", (F32, 0, IDX, F32[:2, :3]), RuntimeError,
     "Destination slice shape: 4 at dimension 0 and source slice shape: 3 at dimension 0."),
    ("aten::index_copy", (F32, 0, IDX, F32), IndexError,
     r"Number of indices \(2\) should be equal to source.size\(dim\) \(3\)"),
    ("aten::index_copy", (F32, 0, IDX, F32[0]), IndexError,
     r"dimensionality must match. Source dimensionality \(1\), destination dimensionality \(2\)"),
    ("aten::index_fill", (F32, 0, IDX, np.ones(1, np.float32)), RuntimeError,
     r"only supports a 0-dimensional value tensor, but got tensor with 1 dimension\(s\)."),
    ("aten::index_fill", (F32, 0, IDX.astype(np.int32), 1.0), IndexError,
     r"index_fill_\(\): Expected dtype int64 for index."),
    ("aten::index_fill", (F32, 0, np.array([5]), 1.0), IndexError,
     "index 5 is out of bounds for dimension 0 with size 3"),
    ("aten::index_fill", (F32, 0, IDX[None], 1.0), RuntimeError, "Index has to be a vector/scalar"),
    ("aten::squeeze_", (F32.copy(), 2), IndexError, "Dimension out of range"),
    ("aten::unsqueeze_", (F32.copy(), 3), IndexError, "Dimension out of range"),
]


@pytest.mark.parametrize("name, args, exc, message", ERRORS,
                         ids=[f"{e[0][6:]}-{i}" for i, e in enumerate(ERRORS)])
def test_errors_as_pytorch(name, args, exc, message):
    with pytest.raises(exc, match=message):
        impl(name)(np, *args)


def test_functional_cdist_errors():
    from torchlike.ops.functions import call_function
    x = randn(3, 4)
    with pytest.raises(ValueError, match="xx is not a valid value for compute_mode"):
        call_function("cdist", (x, x, 2.0, "xx"))
    np.testing.assert_allclose(call_function("cdist", (x, x)), tl.cdist(x, x))


def test_errors_name_the_node_in_a_graph():
    text = """graph(%x : Tensor, %i : Tensor, %v : Tensor):
  %f : bool = prim::Constant[value=0]()
  %l : Tensor?[] = prim::ListConstruct(%i)
  %y : Tensor = aten::index_put_(%x, %l, %v, %f) # m.py:3:4
  return (%y)
"""
    x = randn(3, 4)
    with pytest.raises(ExecutionError, match=r"aten::index_put_.*m.py:3:4.*IndexError: index 7 "
                                             r"is out of bounds for dimension 0 with size 3"):
        jit.run(parse_graph(text), x, np.array([0, 7]), np.float32(1).reshape(()))
    with pytest.raises(ExecutionError, match="dtypes match, got Float for the destination"):
        jit.run(jit.fuse(parse_graph(text)), x, np.array([0]), np.float64(1).reshape(()))


# -- registry entries and inferred types ---------------------------------------------------------

NEW_OPS = ["prelu", "_prelu_kernel", "cdist", "isin", "masked_select", "pixel_shuffle",
           "pixel_unshuffle", "unfold", "im2col", "col2im", "is_floating_point",
           "broadcast_shapes", "squeeze_", "unsqueeze_", "index_put", "index_put_", "index_add",
           "index_add_", "index_copy", "index_copy_", "index_fill", "index_fill_"]


def test_registry_entries():
    for name in NEW_OPS:
        op = registry.get(f"aten::{name}")
        assert op.infer is not None and not op.is_elementwise, name
        if name.endswith("_"):
            assert not op.pure and mutates(op.name) and INPLACE_OF[op.name] == op.name[:-1]
    assert tl.index_put_.op is registry.get("aten::index_put_")


SHAPES = """graph(%x : Tensor, %y : Tensor, %m : Tensor):
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %3 : int = prim::Constant[value=3]()
  %p : float = prim::Constant[value=2.]()
  %none : NoneType = prim::Constant()
  %k : int[] = prim::ListConstruct(%3, %3)
  %d : int[] = prim::ListConstruct(%1, %1)
  %s : int[] = prim::ListConstruct(%2, %2)
  %o : int[] = prim::ListConstruct(%3, %2)
  %c : Tensor = aten::im2col(%x, %k, %d, %d, %s)
  %f : Tensor = aten::col2im(%c, %o, %k, %d, %d, %s)
  %ps : Tensor = aten::pixel_shuffle(%x, %2)
  %pu : Tensor = aten::pixel_unshuffle(%x, %2)
  %u : Tensor = aten::unfold(%x, %3, %3, %2)
  %cd : Tensor = aten::cdist(%y, %y, %p, %none)
  %b : Tensor = aten::isin(%x, %y, %0, %0)
  %ms : Tensor = aten::masked_select(%x, %m)
  %fp : bool = aten::is_floating_point(%x)
  %pr : Tensor = aten::prelu(%x, %y)
  %sq : Tensor = aten::unsqueeze_(%y, %0)
  return (%c, %f, %ps, %pu, %u, %cd, %b, %ms, %fp, %pr, %sq)
"""


def test_inferred_types():
    g = infer_types(parse_graph(SHAPES), [TensorType("float32", (2, 8, 6, 6)),
                                          TensorType("float64", (5, 4)),
                                          TensorType("bool", (2, 8, 6, 6))])
    types = [v.type for v in g.outputs]
    assert [getattr(t, "shape", None) for t in types] == [
        (2, 72, 9), (2, 8, 3, 2), (2, 2, 12, 12), (2, 32, 3, 3), (2, 8, 6, 2, 3), (5, 5),
        (2, 8, 6, 6), (None,), None, (2, 8, 6, 6), (1, 5, 4)]
    assert [getattr(t, "dtype", None) for t in types] == [
        "float32", "float32", "float32", "float32", "float32", "float64", "bool", "float32",
        None, "float32", "float64"]
    assert types[8] == BOOL
