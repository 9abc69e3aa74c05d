"""Convolution and pooling (``ops/conv_pool.py``) against PyTorch: each op eagerly over many
configurations (stride, padding incl. "same"/"valid", dilation, groups, ceil_mode,
count_include_pad, divisor_override, unbatched input, float32/float64 and a few other dtypes,
NaN through max pooling), then CNN-style functions and modules as ``torch.jit.script`` /
``torch.jit.trace`` print them (or ``torch.jit.save`` writes them), run interpreted and fused:
the elementwise ops around a convolution fuse, the convolution and pools stay interpreted.
"""
from __future__ import annotations

import itertools

import numpy as np
import pytest
from graph_modes import program_module

import torchlike as tl
from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.functional import apply
from torchlike.fuser import config
from torchlike.fuser.partition import fusion_groups
from torchlike.ir import parse_graph
from torchlike.ir.attributes import SUBGRAPH_ATTR
from torchlike.ir.types import TensorType
from torchlike.passes import infer_types

# PyTorch warns that padding="same" with an even kernel pads a copy; torch.jit.* are deprecated
pytestmark = [pytest.mark.filterwarnings("ignore:Using padding='same'"),
              pytest.mark.filterwarnings("ignore::DeprecationWarning")]
TOL = {np.float32: 1e-5, np.float64: 1e-12}
RNG = np.random.default_rng(0)


def randn(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def check(got, want, dtype, exact=False):
    """``got`` (an array or tuple of them) equals torch's ``want``: dtype, shape, values."""
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    assert len(got) == len(want)
    for g, w in zip(got, want):
        w = w.detach().numpy()
        assert g.dtype == w.dtype and g.shape == w.shape, (g.dtype, w.dtype, g.shape, w.shape)
        tol = 0 if exact or w.dtype.kind != "f" else TOL.get(dtype, 1e-3)
        np.testing.assert_allclose(g, w, rtol=tol, atol=tol)


def _pair(v):
    return v if isinstance(v, str) else [v, v] if isinstance(v, int) else list(v)


# -- convolution, eager --------------------------------------------------------------------------

CONV2D = [  # (out_channels, groups, kernel, stride, padding, dilation, bias)
    (6, 1, 3, 1, 0, 1, True), (6, 1, 3, 2, 1, 1, False), (6, 2, (2, 3), (2, 1), (1, 0), 2, True),
    (4, 4, 3, 1, 1, 1, True), (8, 4, 1, 1, 0, 1, False), (6, 1, 3, 1, "same", 2, True),
    (6, 2, (2, 4), 1, "same", 1, False), (6, 1, 3, 1, "valid", 1, True), (5, 1, 5, 3, 2, 1, True),
]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cfg", CONV2D, ids=[str(i) for i in range(len(CONV2D))])
def test_conv2d_and_conv1d_match_torch(torch, dtype, cfg):
    F = torch.nn.functional
    o, groups, k, stride, padding, dilation, with_bias = cfg
    kh, kw = _pair(k)
    x, w, b = randn(2, 4, 9, 8, dtype=dtype), randn(o, 4 // groups, kh, kw, dtype=dtype), \
        randn(o, dtype=dtype) if with_bias else None
    t = torch.from_numpy
    pad = _pair(padding)
    for xi in (x, x[1]):  # batched and unbatched
        want = F.conv2d(t(xi), t(w), None if b is None else t(b), _pair(stride), pad,
                        _pair(dilation), groups)
        check(tl.conv2d(xi, w, b, _pair(stride), pad, _pair(dilation), groups), want, dtype)
    w1, x1 = w[..., 0], x[:, :, :, 0]
    for xi in (x1, x1[0]):
        want = F.conv1d(t(xi), t(w1), None if b is None else t(b), _pair(stride)[:1],
                        pad if isinstance(pad, str) else pad[:1], _pair(dilation)[:1], groups)
        check(tl.conv1d(xi, w1, b, _pair(stride)[:1], pad if isinstance(pad, str) else pad[:1],
                        _pair(dilation)[:1], groups), want, dtype)


def test_convolution_overloads_traces_print(torch):
    """``_convolution`` (13 and deprecated 12 arguments), ``convolution``,
    ``_convolution_mode``: any rank of weight, batched input."""
    F, t = torch.nn.functional, torch.from_numpy
    x, w, b = randn(2, 4, 7, 6, dtype=np.float64), randn(6, 2, 3, 2, dtype=np.float64), \
        randn(6, dtype=np.float64)
    want = F.conv2d(t(x), t(w), t(b), (2, 1), (1, 0), (1, 2), 2)
    common = (x, w, b, [2, 1], [1, 0], [1, 2], False, [0, 0], 2)
    check(apply("_convolution", *common, False, False, True, True), want, np.float64)
    check(apply("_convolution", *common, False, False, True), want, np.float64)
    check(tl.convolution(*common), want, np.float64)
    check(apply("_convolution_mode", x, w, None, [1, 1], "same", [2, 1], 2),
          F.conv2d(t(x), t(w), None, 1, "same", (2, 1), 2), np.float64)
    x3, w3 = randn(1, 2, 4, 5, 6, dtype=np.float64), randn(3, 2, 2, 3, 2, dtype=np.float64)
    check(tl.convolution(x3, w3, None, [1], [1], [1], False, [0], 1),
          F.conv3d(t(x3), t(w3), None, 1, 1), np.float64)
    wt = randn(4, 3, 3, 2, dtype=np.float64)  # transposed: (in, out / groups, *kernel)
    check(apply("_convolution", x, wt, b, [2, 1], [1, 0], [1, 2], True, [1, 0], 2, False,
                False, True, True),
          F.conv_transpose2d(t(x), t(wt), t(b), (2, 1), (1, 0), (1, 0), 2, (1, 2)), np.float64)


def test_three_d_convolutions_match_torch(torch):
    F, t = torch.nn.functional, torch.from_numpy
    x, w, b = randn(2, 4, 5, 6, 4), randn(6, 2, 3, 2, 3), randn(6)
    check(tl.conv3d(x, w, b, [2, 1, 1], 1, [1, 2, 1], 2),
          F.conv3d(t(x), t(w), t(b), (2, 1, 1), 1, (1, 2, 1), 2), np.float32)
    check(tl.conv3d(x[0], w, None, 1, "same", 1, 2), F.conv3d(t(x[0]), t(w), None, 1, "same",
                                                                1, 2), np.float32)
    wt = randn(4, 3, 2, 3, 2)
    check(tl.conv_transpose3d(x, wt, None, 2, 1, 1, 2, 1),
          F.conv_transpose3d(t(x), t(wt), None, 2, 1, 1, 2, 1), np.float32)


def test_three_d_pooling_matches_torch(torch):
    F = torch.nn.functional
    x = randn(2, 3, 7, 6, 5)
    x[0, 1, 2, 2, 2] = np.nan
    t = torch.from_numpy(x)
    for k, s, p, d, c in [(3, 2, 1, 1, False), (2, 1, 0, 2, True),
                          ((3, 2, 2), (2, 1, 2), (1, 0, 1), 1, True)]:
        check(tl.max_pool3d(x, k, s, p, d, c), F.max_pool3d(t, k, s, p, d, c), np.float32)
        check(tl.max_pool3d_with_indices(x, k, s, p, d, c),
              F.max_pool3d(t, k, s, p, d, c, return_indices=True), np.float32)
        check(tl.avg_pool3d(x, k, s, p, c, True, None), F.avg_pool3d(t, k, s, p, c, True),
              np.float32)
        check(tl.avg_pool3d(x, k, s, p, c, False, 3), F.avg_pool3d(t, k, s, p, c, False, 3),
              np.float32)
    check(tl.adaptive_max_pool3d(x, [3, 2, 4]), F.adaptive_max_pool3d(t, (3, 2, 4), True),
          np.float32)
    check(tl.adaptive_avg_pool3d(x, [2, 3, 2]), F.adaptive_avg_pool3d(t, (2, 3, 2)), np.float32)


# (dims, in, out, kernel, stride, padding, output_padding, groups, dilation, length)
TRANSPOSED = [(2, 4, 6, 3, 2, 1, 1, 2, 1, 5), (1, 3, 2, 4, 3, 0, 2, 1, 1, 7),
              (2, 2, 4, 3, 1, 2, 0, 2, 2, 6), (1, 4, 4, 2, 2, 3, 1, 4, 1, 5),
              (2, 1, 1, 1, 1, 0, 0, 1, 1, 3), (2, 2, 3, 3, 2, 0, 1, 1, 2, 4)]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("cfg", TRANSPOSED)
def test_transposed_convolution_matches_torch(torch, dtype, cfg):
    """conv_transpose1d/2d: stride, padding past the kernel's reach (a crop), output_padding
    (zeros past the full result), groups, dilation, unbatched input."""
    n, cin, cout, k, s, p, op, g, d, length = cfg
    F, t = torch.nn.functional, torch.from_numpy
    x = randn(2, cin, *(length,) * n, dtype=dtype)
    w, b = randn(cin, cout // g, *(k,) * n, dtype=dtype), randn(cout, dtype=dtype)
    fn = F.conv_transpose2d if n == 2 else F.conv_transpose1d
    ours = tl.conv_transpose2d if n == 2 else tl.conv_transpose1d
    check(ours(x, w, b, s, p, op, g, d), fn(t(x), t(w), t(b), s, p, op, g, d), dtype)
    check(ours(x[0], w, None, s, p, op, g, d), fn(t(x[0]), t(w), None, s, p, op, g, d), dtype)
    with pytest.raises(ExecutionError, match="output padding must be smaller"):
        ours(x, w, b, s, p, max(s, d), g, d)


@pytest.mark.parametrize("dtype", ["float16", "int64", "int32", "int8", "uint8"])
def test_conv_other_dtypes(torch, dtype):
    """float16 accumulates in float32; integers wrap around like PyTorch's kernels."""
    x = RNG.integers(-40, 40, (2, 3, 7, 7)).astype(dtype)
    w = RNG.integers(-6, 6, (4, 3, 3, 3)).astype(dtype)
    want = torch.nn.functional.conv2d(torch.from_numpy(x), torch.from_numpy(w), padding=1)
    check(tl.conv2d(x, w, None, [1, 1], [1, 1]), want, None, exact=dtype != "float16")
    y = randn(2, 3, 9, 9).astype(np.float16)
    want = torch.nn.functional.conv2d(torch.from_numpy(y), torch.from_numpy(w.astype("float16")))
    got = tl.conv2d(y, w.astype(np.float16))
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), want.float().numpy(), rtol=2e-3, atol=0.1)


# -- pooling, eager ------------------------------------------------------------------------------

def _nan_input(dtype):
    x = randn(2, 3, 9, 8, dtype=dtype)
    x[0, 0, 1, 1] = x[1, 2, 4, 5] = x[1, 2, 4, 6] = np.nan  # NaN wins (its last occurrence)
    x[1, 1, 3, :] = -np.inf
    x[0, 1, 2, 2:5] = 7.0                                   # ties: the first occurrence
    return x


POOLS = [(k, s, p, d, c) for k, s, p, d, c in itertools.product(
    [2, 3, (3, 2)], [None, 2, (1, 2)], [0, 1], [1, 2], [False, True]) if p <= min(_pair(k)) // 2]


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_max_pool_matches_torch(torch, dtype):
    F, x = torch.nn.functional, _nan_input(dtype)
    tx = torch.from_numpy(x)
    for k, s, p, d, ceil in POOLS:
        ks, ss = _pair(k), [] if s is None else _pair(s)
        want = F.max_pool2d(tx, ks, ss or None, p, d, ceil, return_indices=True)
        check(tl.max_pool2d_with_indices(x, ks, ss, [p, p], [d, d], ceil), want, dtype)
        check(tl.max_pool2d(x, ks, ss, [p, p], [d, d], ceil), want[0], dtype)
        check(tl.max_pool2d(x[0], ks, ss, [p, p], [d, d], ceil), F.max_pool2d(
            tx[0], ks, ss or None, p, d, ceil), dtype)
        want = F.max_pool1d(tx[0], ks[0], ss[:1] or None, p, d, ceil, return_indices=True)
        check(tl.max_pool1d_with_indices(x[0], ks[:1], ss[:1], [p], [d], ceil), want, dtype)
        check(tl.max_pool1d(x[0], ks[:1], ss[:1], [p], [d], ceil), want[0], dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_avg_pool_matches_torch(torch, dtype):
    F, x = torch.nn.functional, _nan_input(dtype)
    x[np.isnan(x) | np.isinf(x)] = 0.5
    tx = torch.from_numpy(x)
    for (k, s, p, _, ceil), include_pad in itertools.product(POOLS, [True, False]):
        ks, ss = _pair(k), [] if s is None else _pair(s)
        for divisor in (None, 3):
            want = F.avg_pool2d(tx, ks, ss or None, p, ceil, include_pad, divisor)
            check(tl.avg_pool2d(x, ks, ss, [p, p], ceil, include_pad, divisor), want, dtype)
        check(tl.avg_pool2d(x[1], ks, ss, [p, p], ceil, include_pad),
              F.avg_pool2d(tx[1], ks, ss or None, p, ceil, include_pad), dtype)
        check(tl.avg_pool1d(x[0], ks[:1], ss[:1], [p], ceil, include_pad),
              F.avg_pool1d(tx[0], ks[0], ss[:1] or None, p, ceil, include_pad), dtype)


def test_integer_and_half_pooling(torch):
    F, t = torch.nn.functional, torch.from_numpy
    x = RNG.integers(-50, 50, (2, 3, 7, 7))
    for include_pad, divisor in ((True, None), (False, None), (True, 2), (False, -3)):
        check(tl.avg_pool2d(x, [3, 3], [2, 2], [1, 1], True, include_pad, divisor),  # truncates
              F.avg_pool2d(t(x), 3, 2, 1, True, include_pad, divisor), None, exact=True)
    for dtype in ("int64", "int32", "int8", "uint8", "float16"):
        xi = x.astype(dtype)
        check(tl.max_pool2d(xi, [3, 3], [], [1, 1], [1, 1], True),
              F.max_pool2d(t(xi), 3, padding=1, ceil_mode=True), None, exact=True)
    h = randn(2, 3, 7, 7).astype(np.float16)
    check(tl.avg_pool2d(h, [2, 2]), F.avg_pool2d(t(h), 2), np.float16)
    check(tl.adaptive_avg_pool2d(h, [3, 2]), F.adaptive_avg_pool2d(t(h), (3, 2)), np.float16)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_adaptive_pools_match_torch(torch, dtype):
    F, x = torch.nn.functional, _nan_input(dtype)
    tx = torch.from_numpy(x)
    for size in [(1, 1), (3, 3), (4, 5), (9, 8), (11, 13), (2, 7), (0, 2)]:
        check(tl.adaptive_avg_pool2d(x, list(size)), F.adaptive_avg_pool2d(tx, size), dtype)
        check(tl.adaptive_avg_pool2d(x[0], list(size)), F.adaptive_avg_pool2d(tx[0], size),
              dtype)
        check(tl.adaptive_max_pool2d(x, list(size)),
              F.adaptive_max_pool2d(tx, size, return_indices=True), dtype)
        check(tl.adaptive_avg_pool1d(x[0], [size[1]]), F.adaptive_avg_pool1d(tx[0], size[1]),
              dtype)
        check(tl.adaptive_max_pool1d(x[0], [size[1]]),
              F.adaptive_max_pool1d(tx[0], size[1], return_indices=True), dtype)
    for size in [(1, 1, 1), (2, 3, 4), (5, 9, 8)]:
        check(tl.adaptive_avg_pool3d(x, list(size)), F.adaptive_avg_pool3d(tx, size), dtype)


ERRORS = [
    ("conv2d", (randn(2, 4, 5, 5), randn(6, 3, 3, 3)),
     r"weight of size \[6, 3, 3, 3\], expected input\[2, 4, 5, 5\] to have 3 channels, but got 4"),
    ("conv2d", (randn(2, 4, 5, 5), randn(6, 4, 7, 7)), "Kernel size can't be greater than actual"),
    ("conv2d", (randn(2, 4, 5, 5), randn(6, 4, 3, 3), None, [0, 1]), "non-positive stride"),
    ("conv2d", (randn(2, 4, 5, 5), randn(5, 2, 3, 3), None, 1, 0, 1, 2),
     "expected weight to be divisible by 2 .*at dimension 0"),
    ("conv2d", (randn(2, 4, 5, 5), randn(6, 4, 3, 3), None, 2, "same"),
     "padding='same' is not supported for strided convolutions"),
    ("conv2d", (randn(2, 4, 5, 5), randn(6, 4, 3, 3).astype(np.float64)),
     r"Input type \(float32\) and weight type \(float64\) should be the same"),
    ("conv1d", (randn(2, 4, 5, 5), randn(6, 4, 3)), "Expected 2D .unbatched. or 3D .batched."),
    ("max_pool2d", (randn(2, 4, 5, 5), [2, 2], [], [2, 2]), "pad should be at most half"),
    ("max_pool2d", (randn(2, 4, 5, 5), [6, 6]), r"Calculated output size: \(4x0x0\)"),
    ("avg_pool2d", (randn(2, 4, 5, 5), [2, 2], [0, 0]), "stride must be greater than zero"),
    ("avg_pool2d", (randn(2, 4, 5, 5), [2, 2], [], [0, 0], False, True, 0), "divisor must be"),
    ("adaptive_avg_pool2d", (randn(5, 5), [2, 2]), r"Expected 3D or 4D tensor, but got \[5, 5\]"),
    ("adaptive_max_pool2d", (np.ones((2, 3, 4, 4), np.int64), [2, 2]), "not implemented for"),
]


@pytest.mark.parametrize("name, args, match", ERRORS, ids=[f"{e[0]}-{i}" for i, e in
                                                            enumerate(ERRORS)])
def test_bad_arguments_are_clear_errors(name, args, match):
    with pytest.raises(ExecutionError, match=match):
        getattr(tl, name)(*args)


# -- graphs: shapes, scripted and traced functions, modules --------------------------------------

SHAPES = """graph(%x : Float(2, 3, 11, 10), %w : Float(8, 3, 3, 3)):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %true : bool = prim::Constant[value=1]()
  %same : str = prim::Constant[value="same"]()
  %s : int[] = prim::ListConstruct(%two, %one)
  %p : int[] = prim::ListConstruct(%one, %one)
  %k : int[] = prim::ListConstruct(%two, %two)
  %e : int[] = prim::ListConstruct()
  %k1 : int[] = prim::ListConstruct(%two)
  %x0 : Tensor = aten::select(%x, %one, %one)
  %c : Tensor = aten::conv2d(%x, %w, %none, %s, %p, %p, %one)
  %d : Tensor = aten::conv2d(%x, %w, %none, %p, %same, %k, %one)
  %m : Tensor, %i : Tensor = aten::max_pool2d_with_indices(%c, %k, %e, %p, %p, %true)
  %a : Tensor = aten::adaptive_avg_pool2d(%d, %s)
  %v : Tensor = aten::avg_pool1d(%x0, %k1, %e, %one, %true, %true)
  return (%c, %d, %m, %i, %a, %v)
"""


def test_output_types_are_inferred():
    g = infer_types(parse_graph(SHAPES), [TensorType("float32", (2, 3, 11, 10)),
                                          TensorType("float32", (8, 3, 3, 3))])
    types = [v.type for v in g.outputs]
    assert [t.shape for t in types] == [(2, 8, 6, 10), (2, 8, 11, 10), (2, 8, 4, 6),
                                        (2, 8, 4, 6), (2, 8, 2, 1), (2, 11, 6)]
    assert [t.dtype for t in types] == ["float32"] * 3 + ["int64"] + ["float32"] * 2
    x, w = randn(2, 3, 11, 10), randn(8, 3, 3, 3)
    assert [o.shape for o in jit.run(parse_graph(SHAPES), x, w)] == [t.shape for t in types]


TRANSPOSED = """graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %true : bool = prim::Constant[value=1]()
  %s : int[] = prim::ListConstruct(%two, %one)
  %p : int[] = prim::ListConstruct(%one, %one)
  %zero : int = prim::Constant[value=0]()
  %o : int[] = prim::ListConstruct(%one, %zero)
  %y : Tensor = aten::convolution(%x, %w, %none, %s, %p, %p, %true, %o, %two)
  %z : Tensor = aten::conv_transpose2d(%x, %w, %none, %s, %p, %o, %two, %p)
  return (%y, %z)
"""


def test_transposed_convolution_types_are_inferred():
    """``aten::convolution`` with ``transposed`` true (what ``F.conv_transpose2d`` traces to)
    and ``conv_transpose2d``: (in - 1) s - 2 p + d (k - 1) + output_padding + 1, and the
    weight's dim 1 times the groups as channels."""
    g = infer_types(parse_graph(TRANSPOSED), [TensorType("float32", (2, 4, 5, 6)),
                                              TensorType("float32", (4, 3, 3, 2))])
    assert [v.type.shape for v in g.outputs] == [(2, 6, 10, 5)] * 2
    out = jit.run(parse_graph(TRANSPOSED), randn(2, 4, 5, 6), randn(4, 3, 3, 2))
    assert [o.shape for o in out] == [(2, 6, 10, 5)] * 2


SOURCE = '''
import torch
import torch.nn.functional as F


def cnn(x, w, b, lw, lb):
    y = F.relu(F.conv2d(x, w, None, stride=1, padding=1) + b.view(1, -1, 1, 1))
    y = F.max_pool2d(y, 2, ceil_mode=True)
    y = F.adaptive_avg_pool2d(y, (2, 2))
    return F.linear(torch.flatten(y, 1), lw, lb)


def depthwise(x, w):
    y = torch.sigmoid(F.conv1d(x, w, padding="same", groups=4) * 2.0)
    return F.avg_pool1d(y, 3, 2, 1, True, False), F.adaptive_max_pool1d(y, 3)


def decoder(x, w, b):
    return torch.tanh(F.conv_transpose2d(x, w, b, stride=2, padding=1, output_padding=1)) * 0.5


def pools(x):
    return (F.max_pool2d(x, 3, 2, 1, return_indices=True), F.max_pool1d(x[0], 2),
            F.adaptive_max_pool2d(x, 3, True), F.adaptive_max_pool2d(x, (2, 3)),
            F.avg_pool2d(x, 3, 1, 1, False, False, 2), F.max_pool1d(x[0], 3, 2, 1, 1, True, True),
            F.adaptive_avg_pool1d(x[1], 4), F.adaptive_max_pool1d(x[0], 2, True))
'''


def _flat(out):
    return [y for o in out for y in _flat(o)] if isinstance(out, (tuple, list)) else [out]


def _run(text, args, fuse):
    saved = config.fusion_enabled()
    config.set_fusion_enabled(fuse)
    try:
        fn = jit.ScriptFunction(parse_graph(text))
        return fn, fn(*args)
    finally:
        config.set_fusion_enabled(saved)


def test_scripted_and_traced_functions_run_fused_and_unfused(torch, tmp_path):
    mod = program_module(tmp_path, "conv_pool_programs", SOURCE)
    x, w, b = torch.randn(2, 3, 9, 9), torch.randn(5, 3, 3, 3), torch.randn(5)
    cases = {"cnn": (x, w, b, torch.randn(4, 20), torch.randn(4)),
             "depthwise": (torch.randn(2, 4, 11), torch.randn(8, 1, 4)), "pools": (x,),
             "decoder": (x, torch.randn(3, 2, 3, 3), torch.randn(2))}
    for name, args in cases.items():
        fn = getattr(mod, name)
        want = _flat(fn(*args))
        for capture in ("script", "trace"):
            f = torch.jit.script(fn) if capture == "script" else torch.jit.trace(fn, args)
            for fuse in (False, True):
                _, got = _run(str(f.graph), [a.numpy() for a in args], fuse)
                got = _flat(got)
                assert len(got) == len(want)
                for g, w_ in zip(got, want):
                    check(g, w_, np.float32)


def test_elementwise_ops_around_a_convolution_fuse(torch, tmp_path):
    mod = program_module(tmp_path, "conv_pool_fusion", SOURCE)
    args = (torch.randn(2, 3, 9, 9), torch.randn(5, 3, 3, 3), torch.randn(5),
            torch.randn(4, 20), torch.randn(4))
    want = mod.cnn(*args)
    arrays = [a.numpy() for a in args]
    for f in (torch.jit.script(mod.cnn), torch.jit.trace(mod.cnn, args)):
        fn, got = _run(str(f.graph), arrays, True)
        check(got, want, np.float32)
        saved = config.fusion_enabled()
        config.set_fusion_enabled(True)
        try:
            fused = fn.graph_for(*arrays)
        finally:
            config.set_fusion_enabled(saved)
        inner = [{n.kind for n in g.attrs[SUBGRAPH_ATTR].nodes} for g in fusion_groups(fused)]
        assert any({"aten::add", "aten::relu"} <= kinds for kinds in inner), inner
        outer = {n.kind for n in fused.nodes}
        assert {"aten::max_pool2d", "aten::adaptive_avg_pool2d"} <= outer
        assert outer & {"aten::conv2d", "aten::_convolution"}
        assert not any(k.startswith(("aten::conv", "aten::_conv", "aten::max_pool"))
                       for kinds in inner for k in kinds)


MODULE = '''
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.relu = nn.ReLU()
        self.pool = nn.MaxPool2d(2, ceil_mode=True)
        self.dw = nn.Conv2d(8, 8, 3, padding="same", groups=8, bias=False)
        self.avg = nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False)
        self.gap = nn.AdaptiveAvgPool2d(1)
        self.c1 = nn.Conv1d(8, 4, 2)
        self.fc = nn.Linear(4, 3)
        self.up = nn.ConvTranspose2d(8, 2, 3, stride=2, padding=1, output_padding=1)

    def forward(self, x):
        y = self.pool(self.relu(self.bn(self.conv(x))))
        y = self.avg(torch.relu(self.dw(y)))
        up = torch.sigmoid(self.up(y))
        y = self.gap(y).flatten(2)
        return self.fc(torch.flatten(self.c1(torch.cat([y, y], 2)), 1)), up
'''


@pytest.mark.parametrize("capture", ["script", "freeze", "trace"])
def test_cnn_module_saved_by_pytorch(torch, tmp_path, capture):
    """nn.Conv2d / BatchNorm2d (eval) / ReLU / MaxPool2d / AvgPool2d / AdaptiveAvgPool2d /
    Conv1d / ConvTranspose2d, saved by ``torch.jit.save`` and loaded by ``torchlike.jit.load``
    (weights travel in the archive), fused and not.  (A scripted ConvTranspose2d indexes the
    list literal its _output_padding is called with by a loop variable: ``stride[d]``.)"""
    torch.manual_seed(0)
    m = program_module(tmp_path, f"conv_pool_net_{capture}", MODULE).Net().eval()
    with torch.no_grad():
        m.bn.running_mean.uniform_(-1, 1)
        m.bn.running_var.uniform_(0.5, 2.0)
    x = torch.randn(2, 3, 11, 11)
    sm = {"script": lambda: torch.jit.script(m), "trace": lambda: torch.jit.trace(m, x),
          "freeze": lambda: torch.jit.freeze(torch.jit.script(m))}[capture]()
    path = tmp_path / f"{capture}.pt"
    torch.jit.save(sm, str(path))
    want = m(x)
    for fuse in (False, True):
        saved = config.fusion_enabled()
        config.set_fusion_enabled(fuse)
        try:
            got = jit.load(path)(x.numpy())
        finally:
            config.set_fusion_enabled(saved)
        check(got, want, np.float32)


def test_graph_errors_name_the_node():
    text = SHAPES.replace("%w : Float(8, 3, 3, 3)", "%w : Tensor")
    with pytest.raises(ExecutionError, match=r"aten::conv2d.*to have 4 channels, but got 3"):
        jit.run(parse_graph(text), randn(2, 3, 11, 10), randn(8, 4, 3, 3))
    with pytest.raises(ExecutionError, match=r"aten::conv2d.*Input type \(float32\) and "
                                             r"weight type \(float64\) should be the same"):
        jit.run(parse_graph(text), randn(2, 3, 11, 10), randn(8, 3, 3, 3, dtype=np.float64))
