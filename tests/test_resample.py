"""``F.interpolate`` and the ``aten::upsample_*`` ops (``torchlike/ops/resample.py``) against
PyTorch 2.13: the callable ``interpolate`` over every mode, size and scale-factor rule, dtype
and rank; both overloads of each op as graph text; graphs PyTorch scripts and traces (functions,
``F.upsample*``, ``nn.Upsample``) run interpreted, fused and strict; the inferred output shape;
errors with PyTorch's messages.

ATen's nearest kernels differ by rank, and the tests pin that: the 2-d kernel copies a dim
whose size is unchanged and halves indices for an exact doubling even when a scale factor says
otherwise (``nearest_idx``), while the 1-d and 3-d kernels always compute floor(i / s).
"""
from __future__ import annotations

import itertools
import warnings

import numpy as np
import pytest
from graph_modes import graph_modes, program_module
from test_model_idioms import _against_torch

from torchlike import jit
from torchlike.errors import ExecutionError, UnsupportedOpError
from torchlike.ir import parse_graph
from torchlike.ir.types import TensorType
from torchlike.ops import lookup
from torchlike.ops.resample import interpolate
from torchlike.passes.shape_inference import infer_types

RNG = np.random.default_rng(0)
SPATIAL = {1: (7,), 2: (5, 7), 3: (3, 4, 5)}
MODES = [("nearest", 1), ("nearest", 2), ("nearest", 3), ("nearest-exact", 1),
         ("nearest-exact", 2), ("nearest-exact", 3), ("linear", 1), ("bilinear", 2),
         ("trilinear", 3), ("bicubic", 2)]
INTERPOLATING = ("linear", "bilinear", "trilinear", "bicubic")


def _tol(dtype, mode):
    if dtype == np.float64:
        return dict(rtol=1e-12, atol=1e-12)
    # bicubic's float32 sums of 16 signed products: ATen's own rounding reaches a few 1e-6
    return dict(rtol=1e-5, atol=1e-5 if mode == "bicubic" else 1e-6)


def _sizes(k):
    """size / scale_factor arguments for k spatial dims: ints, per-dim tuples, integer and
    fractional factors (up and down), a factor that leaves a dim's size unchanged."""
    per_dim = tuple(int(v) for v in RNG.integers(1, 12, k))
    factors = tuple(float(v) for v in RNG.uniform(0.5, 3.0, k))
    return [dict(size=1), dict(size=2), dict(size=11), dict(size=per_dim),
            dict(scale_factor=2.0), dict(scale_factor=3), dict(scale_factor=1.7),
            dict(scale_factor=0.6), dict(scale_factor=1.12), dict(scale_factor=2.5),
            dict(scale_factor=factors)]


def _compare(torch, x, args, **tol):
    """Our interpolate against torch's on ``x``; when torch raises, so must we."""
    try:
        want = torch.nn.functional.interpolate(torch.from_numpy(x), **args).numpy()
    except (RuntimeError, ValueError, NotImplementedError):
        with pytest.raises((RuntimeError, ValueError, NotImplementedError)):
            interpolate(x, **args)
        return
    got = interpolate(x, **args)
    assert got.dtype == want.dtype and got.shape == want.shape, args
    if x.dtype.kind == "u":
        np.testing.assert_array_equal(got, want, err_msg=str(args))
    else:
        np.testing.assert_allclose(got, want, err_msg=str(args), **tol)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("mode, k", MODES, ids=[f"{m}-{k}d" for m, k in MODES])
def test_interpolate_matches_torch(torch, mode, k, dtype):
    x = RNG.standard_normal((2, 3) + SPATIAL[k]).astype(dtype)
    aligns = (False, True) if mode in INTERPOLATING else (None,)
    for kw, align, recompute in itertools.product(_sizes(k), aligns, (None, True, False)):
        if recompute and "size" in kw:
            continue
        _compare(torch, x, dict(kw, mode=mode, align_corners=align,
                                recompute_scale_factor=recompute), **_tol(dtype, mode))


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact"])
def test_uint8_and_float16_images(torch, mode):
    for k in (1, 2, 3):
        img = RNG.integers(0, 256, (1, 3) + SPATIAL[k]).astype(np.uint8)
        half = RNG.standard_normal((1, 2) + SPATIAL[k]).astype(np.float16)
        for kw in _sizes(k):
            _compare(torch, img, dict(kw, mode=mode))
            _compare(torch, half, dict(kw, mode=mode), rtol=0, atol=0)
    half = RNG.standard_normal((1, 2, 5, 7)).astype(np.float16)
    for mode in ("bilinear", "bicubic"):  # float16 computes in float32, as ATen's opmath
        _compare(torch, half, dict(scale_factor=1.7, mode=mode), rtol=2e-3, atol=2e-3)


def test_two_d_nearest_takes_atens_shortcuts(torch):
    row = np.arange(5, dtype=np.float32)
    # 5 * 1.12 -> 5: the 2-d kernel copies, the 1-d kernel computes floor(i / 1.12)
    np.testing.assert_array_equal(interpolate(row.reshape(1, 1, 5, 1), scale_factor=(1.12, 1.0))
                                  .ravel(), [0, 1, 2, 3, 4])
    np.testing.assert_array_equal(interpolate(row.reshape(1, 1, 5), scale_factor=1.12).ravel(),
                                  [0, 0, 1, 2, 3])
    # 5 * 2.1 -> 10, twice the size: 2-d halves the index, 1-d floors i / 2.1
    np.testing.assert_array_equal(interpolate(row.reshape(1, 1, 5, 1), scale_factor=(2.1, 1.0))
                                  .ravel(), np.arange(10) // 2)
    np.testing.assert_array_equal(interpolate(row.reshape(1, 1, 5), scale_factor=2.1).ravel(),
                                  np.floor(np.arange(10) / np.float32(2.1)))
    for shape in ((1, 1, 5, 1), (1, 1, 5), (1, 1, 5, 2, 2)):
        for s in (1.12, 2.1):
            _compare(torch, np.arange(np.prod(shape), dtype=np.float64).reshape(shape),
                     dict(scale_factor=s), rtol=0, atol=0)


def test_area_uses_adaptive_avg_pool_where_registered(torch):
    for k in (1, 2, 3):
        x = RNG.standard_normal((2, 3) + SPATIAL[k]).astype(np.float32)
        if lookup(f"aten::adaptive_avg_pool{k}d") is None:
            with pytest.raises(UnsupportedOpError, match=f"adaptive_avg_pool{k}d"):
                interpolate(x, size=2, mode="area")
            continue
        for kw in (dict(size=2), dict(size=3), dict(scale_factor=0.6)):
            _compare(torch, x, dict(kw, mode="area"), rtol=1e-5, atol=1e-6)


# -- both overloads of the ops, as graph text ------------------------------------------------------

OVERLOADS = """graph(%x : Tensor, %y : Tensor, %z : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %h : int = prim::Constant[value=9]()
  %w : int = prim::Constant[value=4]()
  %sh : float = prim::Constant[value=1.7]()
  %sw : float = prim::Constant[value=0.6]()
  %size : int[] = prim::ListConstruct(%h, %w)
  %s : float[] = prim::ListConstruct(%sh, %sw)
  %a : Tensor = aten::upsample_nearest2d(%x, %size, %sh, %sw)
  %b : Tensor = aten::upsample_bilinear2d(%x, %size, %false, %sh, %sw)
  %c : Tensor = aten::upsample_bicubic2d(%x, %size, %true, %none, %none)
  %d : Tensor = aten::_upsample_nearest_exact2d(%x, %none, %s)
  %e : Tensor = aten::upsample_bilinear2d(%x, %none, %false, %s)
  %f : Tensor = aten::upsample_nearest2d(%x, %size)
  %s1 : int[] = prim::ListConstruct(%h)
  %g : Tensor = aten::upsample_linear1d(%y, %s1, %true, %sw)
  %i : Tensor = aten::_upsample_nearest_exact1d(%y, %s1, %sh)
  %s3 : int[] = prim::ListConstruct(%w, %h, %w)
  %j : Tensor = aten::upsample_nearest3d(%z, %s3, %sw, %none, %sh)
  %sf3 : float[] = prim::ListConstruct(%sh, %sw, %sh)
  %l : Tensor = aten::upsample_trilinear3d(%z, %none, %false, %sf3)
  %m : Tensor = aten::upsample_bicubic2d(%x, %none, %false, %s)
  return (%a, %b, %c, %d, %e, %f, %g, %i, %j, %l, %m)
"""


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_both_overloads_in_every_mode(torch, dtype):
    x, y, z = (RNG.standard_normal(s).astype(dtype) for s in ((2, 3, 5, 7), (2, 3, 7),
                                                               (1, 2, 3, 4, 5)))
    tx, ty, tz = (torch.from_numpy(t) for t in (x, y, z))
    aten = torch.ops.aten
    want = [aten.upsample_nearest2d(tx, [9, 4], 1.7, 0.6),
            aten.upsample_bilinear2d(tx, [9, 4], False, 1.7, 0.6),
            aten.upsample_bicubic2d(tx, [9, 4], True),
            aten._upsample_nearest_exact2d.vec(tx, None, [1.7, 0.6]),
            aten.upsample_bilinear2d.vec(tx, None, False, [1.7, 0.6]),
            aten.upsample_nearest2d(tx, [9, 4]),
            aten.upsample_linear1d(ty, [9], True, 0.6),
            aten._upsample_nearest_exact1d(ty, [9], 1.7),
            aten.upsample_nearest3d(tz, [4, 9, 4], 0.6, None, 1.7),
            aten.upsample_trilinear3d.vec(tz, None, False, [1.7, 0.6, 1.7]),
            aten.upsample_bicubic2d.vec(tx, None, False, [1.7, 0.6])]
    for mode, run in graph_modes(OVERLOADS):
        for i, (g, w) in enumerate(zip(run(x, y, z), want)):
            w = w.numpy()
            assert g.dtype == w.dtype and g.shape == w.shape, (mode, i)
            np.testing.assert_allclose(g, w, err_msg=f"{mode} output {i}",
                                       **_tol(dtype, "bicubic"))


def test_output_shapes_are_inferred():
    g = infer_types(parse_graph(OVERLOADS), [TensorType("float32", (2, 3, 5, 7)),
                                             TensorType("float32", (2, 3, 7)),
                                             TensorType("float32", (1, 2, 3, 4, 5))])
    shapes = [v.type.shape for v in g.outputs]
    assert shapes == [(2, 3, 9, 4)] * 3 + [(2, 3, 8, 4)] * 2 + [(2, 3, 9, 4), (2, 3, 9),
                                                                (2, 3, 9), (1, 2, 4, 9, 4),
                                                                (1, 2, 5, 2, 8), (2, 3, 8, 4)]
    assert all(v.type.dtype == "float32" for v in g.outputs)


# -- graphs PyTorch scripts and traces -------------------------------------------------------------

SOURCE = '''
import torch
import torch.nn.functional as F


def bilinear_plus(x, x2):
    return F.interpolate(x, scale_factor=2.0, mode="bilinear", align_corners=False) + x2


def nearest_sizes(x):
    return F.interpolate(x, size=(5, 7)) * 2, \\
        F.interpolate(x, scale_factor=1.7, mode="nearest-exact")


def aligned(x):
    return F.interpolate(x, size=[7, 3], mode="bilinear", align_corners=True), \\
        F.interpolate(x, scale_factor=[1.5, 0.6], mode="bicubic")


def recomputed(x):
    return F.interpolate(x, scale_factor=0.6, mode="bicubic", recompute_scale_factor=True)


def one_and_three_d(y, z):
    return F.interpolate(y, size=9, mode="linear") - 1, F.interpolate(y, scale_factor=0.6), \\
        F.interpolate(z, scale_factor=[1.5, 2.0, 0.7], mode="trilinear", align_corners=True), \\
        F.interpolate(z, size=[2, 5, 3], mode="nearest")


def deprecated(x):
    return F.upsample(x, scale_factor=2.0), F.upsample_nearest(x, scale_factor=2.0), \\
        F.upsample_bilinear(x, size=[5, 6])
'''


def test_scripted_and_traced_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "resample_programs", SOURCE)
    gen = torch.Generator().manual_seed(0)
    x = torch.randn(2, 3, 4, 5, generator=gen)
    y, z = torch.randn(2, 3, 7, generator=gen), torch.randn(1, 2, 3, 4, 5, generator=gen)
    with warnings.catch_warnings():  # F.upsample* say they are deprecated
        warnings.simplefilter("ignore")
        _against_torch(torch, mod, {
            "bilinear_plus": (x, torch.randn(2, 3, 8, 10, generator=gen)),
            "nearest_sizes": (x,), "aligned": (x * 0.25,), "recomputed": (x * 0.25,),
            "one_and_three_d": (y, z), "deprecated": (x,)})


def test_nn_upsample_module_graphs(torch):
    """``nn.Upsample`` scripted (a call of ``interpolate``), PyTorch's inlining of that call
    (F.interpolate's checks as prim::If and prim::RaiseException), frozen, and traced."""
    x = torch.randn(2, 3, 4, 5, generator=torch.Generator().manual_seed(1))
    for up in (torch.nn.Upsample(scale_factor=2.0, mode="bilinear"),
               torch.nn.Upsample(size=(3, 8), mode="nearest"),
               torch.nn.Upsample(scale_factor=1.5, mode="bicubic", align_corners=True)):
        want = up(x).numpy()
        scripted = torch.jit.script(up)
        graphs = {"scripted": scripted.graph, "inlined": scripted.inlined_graph,
                  "frozen": torch.jit.freeze(torch.jit.script(up).eval()).graph,
                  "traced": torch.jit.trace(up, x).graph}
        for capture, g in graphs.items():
            for mode, run in graph_modes(str(g)):
                got = run(None, x.numpy())  # %self: unused once the attributes are constants
                assert got.dtype == want.dtype and got.shape == want.shape, (capture, mode)
                np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5,
                                           err_msg=f"{up} {capture} {mode}")


# -- errors ----------------------------------------------------------------------------------------

CALL = """graph(%x : Tensor):
  %f : Function = prim::Constant[name="interpolate"]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %mode : str = prim::Constant[value="nearest"]()
  %size : int = prim::Constant[value=4]()
  %two : float = prim::Constant[value=2.]()
  %y : Tensor = prim::CallFunction(%f, %x, %size, %two, %mode, %none, %none, %false)
  return (%y)
"""


def test_interpolate_errors_match_torch(torch):
    x = np.ones((1, 2, 4, 5), np.float32)
    with pytest.raises(ExecutionError, match="ValueError: only one of size or scale_factor"):
        jit.run(parse_graph(CALL), x)
    bad = [(dict(), ValueError, "either size or scale_factor should be defined"),
           (dict(size=3, align_corners=True), ValueError, "align_corners option can only be set"),
           (dict(size=3, mode="linear"), NotImplementedError,
            "Got 4D input, but linear mode needs 3D input"),
           (dict(size=[3, 4, 5]), ValueError, "must have the same number of spatial dim"),
           (dict(size=3, recompute_scale_factor=True), ValueError,
            "recompute_scale_factor is not meaningful with an explicit size"),
           (dict(size=0), RuntimeError, r"greater than 0, but got input \(H: 4, W: 5\) output "
                                        r"\(H: 0, W: 0\)"),
           (dict(scale_factor=0.1, mode="bilinear"), RuntimeError, "greater than 0"),
           (dict(size=3, mode="bogus"), NotImplementedError, "Input Error: Only 3D, 4D and 5D")]
    for kw, error, message in bad:
        with pytest.raises(error, match=message):
            torch.nn.functional.interpolate(torch.from_numpy(x), **kw)
        with pytest.raises(error, match=message):
            interpolate(x, **kw)
    with pytest.raises(NotImplementedError, match="Input Error: Only 3D, 4D and 5D"):
        interpolate(np.ones((1, 2, 4), np.float32), size=3, mode="bicubic")
    with pytest.raises(RuntimeError, match="\"compute_indices_weights_nearest\" not implemented "
                                           "for 'Int'"):
        interpolate(np.ones((1, 2, 4), np.int32), size=3)


def test_op_errors_and_unsupported_options():
    x = np.ones((1, 2, 4, 5), np.float32)
    text = OVERLOADS.split("  %a :")[0] + "  %r : Tensor = aten::{}\n  return (%r)\n"
    cases = [("upsample_bilinear2d(%y, %size, %false, %none, %none)",
              "It is expected input_size equals to 4, but got size 3"),
             ("upsample_nearest2d(%x, %size, %s)", "Must specify exactly one of output_size"),
             ("upsample_nearest1d(%y, %none, %none)", "Must specify exactly one of output_size")]
    for call, message in cases:
        with pytest.raises(ExecutionError, match=message):
            jit.run(parse_graph(text.format(call)), x, x[0], x)
    with pytest.raises(UnsupportedOpError, match="antialias=True"):
        interpolate(x, size=3, mode="bilinear", antialias=True)
    with pytest.raises(UnsupportedOpError, match="uint8 tensors in the nearest modes only"):
        interpolate(x.astype(np.uint8), size=3, mode="bilinear")
