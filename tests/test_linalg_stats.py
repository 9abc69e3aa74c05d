"""The ops of ``ops/linalg_stats.py`` against PyTorch: each eagerly over dtypes and shapes
(weights and corrections for ``cov``, both overloads of the trapezoid rules along each dim,
x broadcast as numpy's), then in functions as ``torch.jit.script`` / ``torch.jit.trace`` print
them, run interpreted, fused and fused strictly, then every error path's type and message
against torch's own.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_modes import against_torch, program_module
from graph_modes import check_torch as check
from graph_modes import to_torch as T

from torchlike.ops import registry

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning"),
              pytest.mark.filterwarnings("ignore::RuntimeWarning")]
RNG = np.random.default_rng(0)
DTYPES = [np.float32, np.float64, np.int64, np.int32, np.float16]


def randn(*shape, dtype=np.float32):
    return np.asarray(RNG.standard_normal(shape) * 3).astype(dtype)



def impl(name):
    return registry.get(f"aten::{name}").impl


def tol(dtype):
    return {np.float16: 2e-2, np.float32: 1e-4}.get(dtype, 1e-10)


def close(got, want, scale=1):
    """Within the tolerance of torch's result dtype (integers integrate to float32)."""
    t = tol(np.dtype(str(want.dtype).replace("torch.", "")).type) * scale
    check(got, want, rtol=t, atol=t)


@pytest.mark.parametrize("dtype", DTYPES)
def test_cov_corrcoef_against_torch(torch, dtype):
    fw, aw = np.array([1, 2, 0, 3, 1, 1]), np.float32([0.5, 1, 2, 0.1, 1, 3])
    for shape in ((3, 6), (6,), (1, 6), (3, 1), (), (2, 0)):
        x = randn(*shape, dtype=dtype)
        X = T(torch, x)
        for corr in (0, 1, 2, -1):
            close(impl("cov")(np, x, corr, None, None), torch.cov(X, correction=corr))
        if shape and shape[-1] == 6:
            for f, a in ((fw, None), (None, aw), (fw, aw), (fw.astype(np.int32), aw * 2)):
                for corr in (0, 1, 3):
                    close(impl("cov")(np, x, corr, f, a),
                          torch.cov(X, correction=corr, fweights=T(torch, f),
                                    aweights=T(torch, a)))
        close(impl("corrcoef")(np, x), torch.corrcoef(X))


@pytest.mark.parametrize("dtype", DTYPES)
def test_trapezoid_rules_against_torch(torch, dtype):
    for shape in ((3, 5), (5,), (2, 3, 4), (3, 0), (3, 1)):
        y = randn(*shape, dtype=dtype)
        Y = T(torch, y)
        for dim in (-1, 0):
            n = shape[dim]
            xs = [randn(n, dtype=dtype), np.arange(n), randn(*shape, dtype=dtype)]
            if len(shape) > 1 and dim == -1:  # broadcast: a size-1 dim, a lower rank
                xs += [randn(1, *shape[1:], dtype=np.float64), randn(*shape[1:])]
            for x in xs + [0.5, 2, -1.25]:
                tensor = isinstance(x, np.ndarray)
                for name, fn in (("trapezoid", torch.trapezoid), ("trapz", torch.trapz),
                                 ("cumulative_trapezoid", torch.cumulative_trapezoid)):
                    if tensor:
                        want = fn(Y, T(torch, x), dim=dim)
                    else:
                        want = fn(Y, dx=float(x) if name == "trapz" else x, dim=dim)
                    close(impl(name)(np, y, x, dim), want, 10)


@pytest.mark.parametrize("dtype", DTYPES + [np.uint8, np.bool_])
def test_vander_against_torch(torch, dtype):
    x = randn(4, dtype=dtype) if dtype != np.bool_ else randn(4) > 0
    for n in (None, 0, 1, 2, 5):
        for increasing in (False, True):
            check(impl("vander")(np, x, n, increasing),
                  torch.vander(T(torch, x), N=n, increasing=increasing), rtol=tol(dtype))
    if dtype in (np.float16, np.bool_):
        return
    for shape in ((4,), (2, 3), ()):
        x = randn(*shape, dtype=dtype)
        for n in (None, 2, 5) if shape else (2, 4):
            check(impl("linalg_vander")(np, x, n), torch.linalg.vander(T(torch, x), N=n),
                  rtol=tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.float16])
def test_renorm_against_torch(torch, dtype):
    x = randn(3, 4, 2, dtype=dtype)
    for p in (1, 2, 3.5, float("inf"), 0.5):
        for dim in (0, 1, -1):
            for maxnorm in (0.0, 1.5, 100.0):
                check(impl("renorm")(np, x, p, dim, maxnorm), torch.renorm(T(torch, x), p, dim,
                                                                           maxnorm),
                      rtol=tol(dtype), atol=tol(dtype))


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int64, np.float16])
def test_bilinear_against_torch(torch, dtype):
    import torch.nn.functional as F
    w, b = randn(6, 3, 4, dtype=dtype), randn(6, dtype=dtype)
    for batch in ((5,), (2, 5), (), (0,)):
        x1, x2 = randn(*batch, 3, dtype=dtype), randn(*batch, 4, dtype=dtype)
        X1, X2, W = T(torch, x1), T(torch, x2), T(torch, w)
        for bias in (None, b):
            check(impl("bilinear")(np, x1, x2, w, bias), F.bilinear(X1, X2, W, T(torch, bias)),
                  rtol=tol(dtype), atol=tol(dtype) * 100)


SOURCE = '''
import torch
import torch.nn.functional as F


def stats(x, w, y, t):
    return torch.cov(x), torch.cov(x, correction=0, aweights=w), torch.corrcoef(x), \\
        torch.trapezoid(y), torch.trapezoid(y, t), torch.trapezoid(y, dx=0.5, dim=0), \\
        torch.trapz(y, t), torch.trapz(y, dx=2.0), torch.cumulative_trapezoid(y), \\
        torch.cumulative_trapezoid(y, t), torch.vander(t), \\
        torch.vander(t, N=3, increasing=True), \\
        torch.linalg.vander(y), torch.renorm(y, 2, 0, 1.0)


def bilinear(x1, x2, w, b):
    return F.bilinear(x1, x2, w, b), F.bilinear(x1, x2, w)
'''


def test_in_functions_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "linalg_stats_programs", SOURCE)
    for dtype in (np.float32, np.float64):
        x, w, y, t = (T(torch, randn(*s, dtype=dtype)) for s in ((3, 6), (6,), (3, 5), (5,)))
        against_torch(torch, mod.stats, (x, w.abs(), y, t))
        args = (randn(5, 3, dtype=dtype), randn(5, 4, dtype=dtype), randn(6, 3, 4, dtype=dtype),
                randn(6, dtype=dtype))
        against_torch(torch, mod.bilinear, tuple(T(torch, a) for a in args))


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the point is which
        return e
    raise AssertionError("no error raised")


def test_errors_as_torch(torch):
    import torch.nn.functional as F
    f32, i64 = np.ones((3, 4), np.float32), np.ones((3, 4), np.int64)
    v4 = np.ones(4, np.float32)

    def cov(x, c, f, a):
        return torch.cov(x, correction=c, fweights=f, aweights=a)

    def trap(fn, dx_kw=True):
        return lambda y, x, dim: fn(y, x, dim=dim) if hasattr(x, "dim") else \
            fn(y, dx=x, dim=dim) if dx_kw else fn(y, dim=dim)
    cases = [
        ("cov", (np.ones((2, 3, 4)), 1, None, None), cov), ("cov", (f32 > 0, 1, None, None), cov),
        ("cov", (f32, 1, v4, None), cov), ("cov", (f32, 1, -np.ones(4, np.int64), None), cov),
        ("cov", (f32, 1, None, -v4), cov), ("cov", (f32, 1, None, np.ones(3, np.float32)), cov),
        ("cov", (f32, 1, None, np.ones(4, np.int64)), cov),
        ("cov", (f32, 1, None, np.ones((4, 1), np.float32)), cov),
        ("cov", (f32, 1, np.zeros(4, np.int64), None), cov),
        ("cov", (f32, 1, v4 > 0, None), cov),
        ("corrcoef", (np.ones((2, 3, 4)),), torch.corrcoef),
        ("corrcoef", (f32 > 0,), torch.corrcoef),
        ("trapezoid", (f32, np.ones(3, np.float32), -1), trap(torch.trapezoid)),
        ("trapezoid", (np.float32(1), 1, -1), trap(torch.trapezoid)),
        ("trapezoid", (np.array(1, np.float32),) * 2 + (-1,), trap(torch.trapezoid)),
        ("trapezoid", (f32 > 0, 1, -1), trap(torch.trapezoid)),
        ("trapezoid", (f32, v4 > 0, -1), trap(torch.trapezoid)),
        ("trapezoid", (f32, True, -1), trap(torch.trapezoid)),
        ("trapezoid", (f32, 1, 3), trap(torch.trapezoid)),
        ("trapezoid", (f32, np.ones((2, 3, 4), np.float32), -1), trap(torch.trapezoid)),
        ("trapezoid", (f32, np.ones((1, 5), np.float32), -1), trap(torch.trapezoid)),
        ("trapz", (f32, np.ones(3, np.float32), -1), trap(torch.trapz)),
        ("cumulative_trapezoid", (f32, np.ones(3, np.float32), -1),
         trap(torch.cumulative_trapezoid)),
        ("cumulative_trapezoid", (np.float32(1), 1, -1), trap(torch.cumulative_trapezoid)),
        ("cumulative_trapezoid", (np.array(1, np.float32),) * 2 + (-1,),
         trap(torch.cumulative_trapezoid)),
        ("cumulative_trapezoid", (f32 > 0, 1, -1), trap(torch.cumulative_trapezoid)),
        ("cumulative_trapezoid", (f32, v4 > 0, -1), trap(torch.cumulative_trapezoid)),
        ("vander", (f32, None, False), lambda x, n, inc: torch.vander(x, n, inc)),
        ("vander", (v4, -1, False), lambda x, n, inc: torch.vander(x, n, inc)),
        ("linalg_vander", (v4, 1), lambda x, n: torch.linalg.vander(x, N=n)),
        ("linalg_vander", (np.float32(1), None), lambda x, n: torch.linalg.vander(x, N=n)),
        ("linalg_vander", (v4 > 0, None), lambda x, n: torch.linalg.vander(x, N=n)),
        ("linalg_vander", (v4.astype(np.float16), None), lambda x, n: torch.linalg.vander(x, N=n)),
        ("renorm", (v4, 2, 0, 1.0), torch.renorm), ("renorm", (f32, -1, 0, 1.0), torch.renorm),
        ("renorm", (f32, 2, 0, -1.5), torch.renorm), ("renorm", (f32, 2, 0, -1e-7), torch.renorm),
        ("renorm", (i64, 2, 0, 1.0), torch.renorm), ("renorm", (f32, 2, 3, 1.0), torch.renorm),
        ("bilinear", (f32, np.ones((3, 5), np.float32), np.ones((6, 4, 4), np.float32), None),
         F.bilinear),
        ("bilinear", (f32, np.ones((2, 4), np.float32), np.ones((6, 4, 4), np.float32), None),
         F.bilinear),
        ("bilinear", (f32, np.ones((3, 1, 4), np.float32), np.ones((6, 4, 4), np.float32), None),
         F.bilinear),
        ("bilinear", (f32, f32, np.ones((6, 4), np.float32), None), F.bilinear),
        ("bilinear", (f32, f32, np.ones((6, 4, 4), np.float32), np.ones(5, np.float32)),
         F.bilinear),
        ("bilinear", (f32, f32.astype(np.float64), np.ones((6, 4, 4), np.float32), None),
         F.bilinear),
        ("bilinear", (f32, f32, np.ones((6, 4, 4), np.float32), np.ones(6)), F.bilinear),
        ("bilinear", (f32 > 0, f32 > 0, np.ones((6, 4, 4)) > 0, None), F.bilinear),
        ("bilinear", (np.float32(1), np.float32(1), np.ones((6, 4, 4), np.float32), None),
         F.bilinear),
    ]
    for name, args, tfn in cases:
        want, got = _raised(tfn, *T(torch, args)), _raised(impl(name), np, *args)
        assert str(got) == str(want), (name, args, str(got), str(want))
        for kind in (IndexError, NotImplementedError, RuntimeError):
            if isinstance(want, kind):
                assert isinstance(got, kind), (name, type(got), type(want))
                break
