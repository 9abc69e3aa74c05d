"""The float32-native helpers of ``cpu_backend/math_f32.py``: within 2 ulp of the correctly
rounded float32 result (4 where PyTorch's own op is looser: ``acc.BOUND``) on a sample of the
whole float32 range (bench/accuracy.py's inputs at a coarse stride, with the neighbourhoods of
every threshold), NaN exactly where the reference is NaN, zeros with the reference's sign, and exact special values.  ``python -m bench.accuracy``
runs the same measurement densely (bench/results/accuracy/report.md)."""
import numpy as np
import pytest

from bench import accuracy as acc
from torchlike.cpu_backend import (
    math_erf_f32,
    math_f32,
    math_inverse_f32,
    math_trig_f32,
    scalar_math,
)

X = acc.inputs(stride=1 << 18, dense=2048, grid=20001)


@pytest.mark.parametrize("name", list(acc.OPS))
def test_within_the_ulp_bound(name):
    ulp, where, nans, zeros = acc.measure_op(name, X)  # binary ops: on acc.pairs(X)
    assert nans == 0, f"{name}: {nans} NaN mismatches"
    assert zeros == 0, f"{name}: {zeros} zeros with the wrong sign"
    assert ulp <= acc.bound(name), f"{name}: {ulp} ulp at {where!r}"


@pytest.mark.parametrize("module", [math_f32, math_trig_f32, math_erf_f32, math_inverse_f32])
def test_kernels_see_the_float32_helpers(module):
    assert module.__all__
    for name in module.__all__:
        assert getattr(scalar_math, name) is getattr(module, name)
        assert name in scalar_math.__all__


def test_trig_reduction_constants():
    """The 2/pi bits of the huge-argument reduction and pi/2 = P1 + P2 + P3 of the fast one,
    against mpmath: a wrong digit would only show at a few arguments."""
    mpmath = pytest.importorskip("mpmath")
    with mpmath.workdps(100):
        bits = int(mpmath.floor(2 / mpmath.pi * mpmath.mpf(2) ** 256))
        words = [(bits >> (256 - 64 * (k + 1))) & (2 ** 64 - 1) for k in range(4)]
        assert math_trig_f32._TWO_OVER_PI_WORDS == words
        tail = mpmath.pi / 2 - sum(mpmath.mpf(float(c)) for c in
                                   (math_trig_f32._P1, math_trig_f32._P2, math_trig_f32._P3))
        assert abs(tail) < mpmath.mpf(2) ** -75
        assert math_trig_f32._HUGE_SCALE == float(mpmath.pi / 2 * mpmath.mpf(2) ** -62)


inf, nan = np.inf, np.nan
SPECIAL_X = np.float32([0.0, -0.0, inf, -inf, nan, 1e-45, -1e-45, 1.0, -1.0, 88.72284, 88.7229,
                        -103.972, -104.0, 128.0, -150.0, -149.0])
SPECIAL = {  # None: not checked here (covered by the ulp sweep)
    "exp": [1, 1, inf, 0, nan, 1, 1, None, None, None, inf, None, 0, inf, 0, 0],
    "exp2": [1, 1, inf, 0, nan, 1, 1, 2, 0.5, None, None, None, None, inf, 0, 1e-45],
    "expm1": [0.0, -0.0, inf, -1, nan, 1e-45, -1e-45, None, None, None, inf, -1, -1, inf, -1, -1],
    "log": [-inf, -inf, inf, nan, nan, -103.27893, nan, 0, nan, None, None, nan, nan, None,
            nan, nan],
    "log2": [-inf, -inf, inf, nan, nan, -149, nan, 0, nan, None, None, nan, nan, 7, nan, nan],
    "log10": [-inf, -inf, inf, nan, nan, None, nan, 0, nan, None, None, nan, nan, None, nan, nan],
    "log1p": [0.0, -0.0, inf, nan, nan, 1e-45, -1e-45, None, -inf, None, None, nan, nan, None,
              nan, nan],
    "tanh": [0.0, -0.0, 1, -1, nan, 1e-45, -1e-45, None, None, 1, 1, -1, -1, 1, -1, -1],
    "sigmoid": [0.5, 0.5, 1, 0, nan, 0.5, 0.5, None, None, 1, 1, None, None, 1, 0, 0],
    "silu": [0.0, -0.0, inf, nan, nan, None, None, None, None, 88.72284, 88.7229, None, None,
             128, -0.0, -0.0],
    "gelu_tanh": [0.0, -0.0, inf, nan, nan, None, None, None, None, 88.72284, 88.7229, -0.0,
                  -0.0, 128, -0.0, -0.0],
    "mish": [0.0, -0.0, inf, nan, nan, None, None, None, None, 88.72284, 88.7229, None, None,
             128, -0.0, -0.0],
    "softplus": [None, None, inf, 0, nan, None, None, None, None, 88.72284, 88.7229, None,
                 None, 128, 0, 0],
    "elu": [0.0, -0.0, inf, -1, nan, 1e-45, -1e-45, 1, None, 88.72284, 88.7229, -1, -1, 128,
            -1, -1],
    "sin": [0.0, -0.0, nan, nan, nan, 1e-45, -1e-45, 0.84147096, -0.84147096, None, None, None,
            None, 0.7210377, None, None],
    "cos": [1, 1, nan, nan, nan, 1, 1, None, None, None, None, None, None,
            -0.6928958, None, None],
    "tan": [0.0, -0.0, nan, nan, nan, 1e-45, -1e-45, 1.5574077, -1.5574077, None, None, None,
            None, -1.0406148, None, None],
    "erf": [0.0, -0.0, 1, -1, nan, 1e-45, -1e-45, 0.8427008, -0.8427008, 1, 1, -1, -1, 1, -1, -1],
    "erfc": [1, 1, 0, 2, nan, 1, 1, 0.1572992, 1.8427008, 0, 0, 2, 2, 0, 2, 2],
    "erfinv": [0.0, -0.0, nan, nan, nan, 1e-45, -1e-45, inf, -inf, nan, nan, nan, nan, nan, nan,
               nan],
    # x Phi(x) rounded once: 1e-45 rounds up, -1e-45 to -0.0 (PyTorch's vectorized float32
    # gelu gives 0.0 and NaN at +inf; its scalar path and the float64 result give inf)
    "gelu": [0.0, -0.0, inf, nan, nan, 1e-45, -0.0, None, None, 88.72284, 88.7229,
             -0.0, -0.0, 128, -0.0, -0.0],
    "asin": [0.0, -0.0, nan, nan, nan, 1e-45, -1e-45, np.pi / 2, -np.pi / 2, nan, nan, nan, nan,
             nan, nan, nan],
    "acos": [np.pi / 2, np.pi / 2, nan, nan, nan, np.pi / 2, np.pi / 2, 0, np.pi, nan, nan, nan,
             nan, nan, nan, nan],
    "atan": [0.0, -0.0, np.pi / 2, -np.pi / 2, nan, 1e-45, -1e-45, np.pi / 4, -np.pi / 4,
             None, None, None, None, None, None, None],
    # exp(88.7229) overflows, sinh and cosh of it do not (they do past 89.4159)
    "sinh": [0.0, -0.0, inf, -inf, nan, 1e-45, -1e-45, None, None, 1.7014122e38, 1.701516e38,
             -inf, -inf, inf, -inf, -inf],
    "cosh": [1, 1, inf, inf, nan, 1, 1, None, None, 1.7014122e38, 1.701516e38, inf, inf, inf,
             inf, inf],
    "asinh": [0.0, -0.0, inf, -inf, nan, 1e-45, -1e-45, None, None, None, None, None, None,
              None, None, None],
    "acosh": [nan, nan, inf, nan, nan, nan, nan, 0.0, nan, None, None, nan, nan, None, nan, nan],
    "atanh": [0.0, -0.0, nan, nan, nan, 1e-45, -1e-45, inf, -inf, nan, nan, nan, nan, nan, nan,
              nan],
}


@pytest.mark.parametrize("name", list(SPECIAL))
def test_special_values(name):
    attr, consts, _, _ = acc.OPS[name]
    out = acc.run_helper(getattr(scalar_math, f"tl_{attr}_f32"), consts, SPECIAL_X)
    for xi, o, w in zip(SPECIAL_X, out, SPECIAL[name]):
        if w is None:
            continue
        w = np.float32(w)
        same = (np.isnan(o) and np.isnan(w)) or (o == w and np.signbit(o) == np.signbit(w))
        assert same, f"{name}({xi!r}) = {o!r}, expected {w!r}"


_ZERO_INF = np.float32([0.0, -0.0, inf, -inf, 1.0, -1.0, 1e-45, -1e-45, nan])
ATAN2_PAIRS = np.array([(y, x) for y in _ZERO_INF for x in _ZERO_INF], np.float32)


def test_atan2_special_pairs():
    # C99 Annex F (numpy and PyTorch agree): atan2(+-0, +0) = +-0, atan2(+-0, -0) = +-pi,
    # atan2(+-inf, +-inf) = +-pi/4, +-3pi/4, atan2(y, -inf) = +-pi, x = +-0 -> +-pi/2, NaN in
    # -> NaN: every pair of signed zeros, infinities, ones, subnormals and NaN
    y, x = ATAN2_PAIRS[:, 0].copy(), ATAN2_PAIRS[:, 1].copy()
    out = acc.run_helper(scalar_math.tl_atan2_f32, (), y, x)
    with np.errstate(all="ignore"):
        want = np.arctan2(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    for yi, xi, o, w in zip(y, x, out, want):
        same = (np.isnan(o) and np.isnan(w)) or (o == w and np.signbit(o) == np.signbit(w))
        assert same, f"atan2({yi!r}, {xi!r}) = {o!r}, expected {w!r}"
    assert out[(y == 0) & np.signbit(y) & (x == 0) & np.signbit(x)][0] == np.float32(-np.pi)


def test_subnormal_results_are_rounded_once():
    x = np.float32([-87.5, -95.0, -100.0, -103.0, -103.9])
    for attr, ref in [("exp", np.exp), ("sigmoid", lambda v: 1 / (1 + np.exp(-v))),
                      ("silu", lambda v: v / (1 + np.exp(-v)))]:
        out = acc.run_helper(getattr(scalar_math, f"tl_{attr}_f32"), (), x)
        want = ref(x.astype(np.float64)).astype(np.float32)
        sub = np.abs(want) < np.finfo(np.float32).tiny  # one rounding, into the subnormals
        assert sub.sum() >= 3
        np.testing.assert_array_equal(out[sub], want[sub], err_msg=attr)


def test_gelu_backward_f32_accuracy():
    """gelu'(x) = Phi(x) + x phi(x) with one exp (``tl_gelu_backward_f32``) against float64, on a
    dense grid over [-15, 6] and every float near gelu's minimum (where the sum cancels): within
    1.5e-7 absolutely (1.2e-7 measured; PyTorch's own float32 kernel: 2.4e-7) and 4 ulp where
    |gelu'| >= 1/4; NaN at +-inf and NaN, +0.0 where it underflows."""
    import math

    import numba
    f = scalar_math.tl_gelu_backward_f32

    @numba.njit(error_model="numpy")
    def run(g, x, out, ref):
        for i in range(x.size):
            out[i] = f(g, x[i])
            xd = np.float64(x[i])
            ref[i] = 0.5 * math.erfc(-xd / math.sqrt(2.0)) + xd * math.exp(-0.5 * xd * xd) \
                / math.sqrt(2.0 * math.pi)

    c = np.float32(-0.7517916).view(np.int32)
    x = np.concatenate([np.linspace(-15, 6, 2_000_001, dtype=np.float32),
                        np.arange(c - (1 << 16), c + (1 << 16), dtype=np.int32).view(np.float32)])
    out, ref = np.empty_like(x), np.empty(x.size)
    run(np.float32(1), x, out, ref)
    err = np.abs(out - ref)
    assert err.max() <= 1.5e-7, (err.max(), x[err.argmax()])
    big = np.abs(ref) >= 0.25
    ulps = err[big] / np.spacing(np.abs(ref[big]).astype(np.float32))
    assert ulps.max() <= 4, (ulps.max(), x[big][ulps.argmax()])
    special = np.float32([np.inf, -np.inf, np.nan, -20.0, 0.0, -0.0, 1e30, -1e-45])
    run(np.float32(1), special, out[:8], ref[:8])
    got = out[:8]
    assert np.isnan(got[:3]).all()
    assert got[3] == 0 and not np.signbit(got[3])
    assert got[4] == got[5] == 0.5 and got[6] == 1.0 and got[7] == 0.5
