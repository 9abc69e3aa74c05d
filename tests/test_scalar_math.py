"""The vectorizable float32 helpers of ``cpu_backend/scalar_math.py`` (``tl_*_f32``).

Each helper runs in a small Numba loop (as a fused kernel would) over ~1.2e6 float32 inputs: a
stride-4099 sweep of every float32 bit pattern (both signs, subnormals, inf, NaN payloads) plus a
dense grid on [-20, 20].  The result must be within 2 ulp of numpy's float64 function rounded to
float32, or the op's stated bound where PyTorch's own is looser (``bench.accuracy.BOUND``:
mish 4; measured at most 2 ulp for log10, silu, gelu_tanh and softplus, 3 for mish here (4
over all 2^32 inputs); the float32-native helpers live in math_f32.py, tests/test_math_f32.py and
bench/accuracy.py measure them further),
NaN exactly where the reference is NaN, and the sign of zero must match.  A second test checks
that LLVM vectorized the loop: arithmetic on ``<N x float>``/``<N x double>`` vectors and no call
left in the loop.
"""
from __future__ import annotations

import re

import numba
import numpy as np
import pytest

from bench.accuracy import bound
from torchlike.cpu_backend import scalar_math as sm

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")

GELU_C = 0.7978845608028654
F32_MAX = float(np.finfo(np.float32).max)


def _softplus_ref(v, beta=2.0, threshold=5.0):
    vb = (v.astype(np.float32) * np.float32(beta)).astype(np.float64)
    return np.where(vb > threshold, v, np.logaddexp(0.0, vb) / beta)


def _elu_ref(v, alpha=1.5, scale=1.0, input_scale=0.5):
    vi = (v.astype(np.float32) * np.float32(input_scale)).astype(np.float64)
    return np.where(v > 0, v * scale, alpha * scale * np.expm1(vi))


# name -> (helper, float64 reference, extra literal arguments)
FUNCS = {
    "exp": (sm.tl_exp_f32, np.exp, ()),
    "expm1": (sm.tl_expm1_f32, np.expm1, ()),
    "log": (sm.tl_log_f32, np.log, ()),
    "log1p": (sm.tl_log1p_f32, np.log1p, ()),
    "log2": (sm.tl_log2_f32, np.log2, ()),
    "log10": (sm.tl_log10_f32, np.log10, ()),
    "tanh": (sm.tl_tanh_f32, np.tanh, ()),
    "sigmoid": (sm.tl_sigmoid_f32, lambda v: 1 / (1 + np.exp(-v)), ()),
    "silu": (sm.tl_silu_f32, lambda v: v / (1 + np.exp(-v)), ()),
    # 0.5 x (1 + tanh(u)) == x sigmoid(2u), the form without cancellation for x < 0
    "gelu_tanh": (sm.tl_gelu_tanh_f32,
                  lambda v: v / (1 + np.exp(-2 * GELU_C * (v + 0.044715 * v ** 3))), ()),
    "mish": (sm.tl_mish_f32, lambda v: v * np.tanh(np.logaddexp(0.0, v)), ()),
    "softplus": (sm.tl_softplus_f32, _softplus_ref, (2.0, 5.0)),
    "elu": (sm.tl_elu_f32, _elu_ref, (1.5, 1.0, 0.5)),
    "pow2": (sm.tl_pow_f32, lambda v: v * v, (2.0,)),
    "pow3": (sm.tl_pow_f32, lambda v: v ** 3, (3.0,)),
    "pow0.5": (sm.tl_pow_f32, lambda v: np.power(v, np.full_like(v, 0.5)), (0.5,)),  # powf
    "pow-1": (sm.tl_pow_f32, lambda v: 1 / v, (-1.0,)),
    "pow2.5": (sm.tl_pow_f32, lambda v: np.power(v, 2.5), (2.5,)),  # general: powf
}

SPECIALS = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 2.0, 0.5, 1e-45, -1e-45,
                       1.1754944e-38, 3.4028235e38, -3.4028235e38, 88.72, 88.73, -87.33, -103.97,
                       -104.0, -150.0, 20.0, -20.0, 9.0, 10.0, 1000.0, 1e-30, -1e-30, 1e-8, -1e-8,
                       0.25, -0.25, 0.4142, -0.2929, -0.9999999, 5.0, 2.5])


def _inputs():
    sweep = np.arange(0, 2 ** 32, 4099, dtype=np.uint64).astype(np.uint32).view(np.float32)
    dense = np.linspace(-20, 20, 200001, dtype=np.float32)
    return np.concatenate([SPECIALS, sweep, dense])


X = _inputs()

_KERNELS = {}


def _kernel(name):
    """A Numba loop ``o[i] = float32(helper(x[i], *consts))``, compiled as the fused kernels are
    (error_model="numpy", no fastmath); the constant arguments are literals, as rendered."""
    if name not in _KERNELS:
        fn, _, extra = FUNCS[name]
        args = "".join(f", np.float32({c!r})" for c in extra)
        src = (f"def k(x, o):\n    for i in range(x.size):\n"
               f"        o[i] = np.float32(fn(x[i]{args}))\n")
        ns = {"np": np, "fn": fn}
        exec(src, ns)
        _KERNELS[name] = numba.njit(error_model="numpy")(ns["k"])
    return _KERNELS[name]


def _ordered(a):
    """float32 -> integers in the same order, consecutive floats one apart (-0.0 == 0.0)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def max_ulp_error(name):
    fn, ref, extra = FUNCS[name]
    out = np.empty_like(X)
    _kernel(name)(X, out)
    with np.errstate(all="ignore"):
        expect = ref(X.astype(np.float64)).astype(np.float32)
    nan_out, nan_ref = np.isnan(out), np.isnan(expect)
    np.testing.assert_array_equal(nan_out, nan_ref, err_msg=f"{name}: NaN mismatch")
    zero = (expect == 0) & (out == 0)
    np.testing.assert_array_equal(np.signbit(out[zero]), np.signbit(expect[zero]),
                                  err_msg=f"{name}: sign of zero")
    err = np.abs(_ordered(out) - _ordered(expect))
    err[nan_ref] = 0
    return int(err.max()), X[int(np.argmax(err))]


@pytest.mark.parametrize("name", list(FUNCS))
def test_accuracy_within_the_bound(name):
    ulp, worst = max_ulp_error(name)
    assert ulp <= bound(name), f"{name}: {ulp} ulp at x={worst!r}"


def test_exact_special_values():
    x = np.float32([0.0, -0.0, np.inf, -np.inf, np.nan, -1.0, -5.0, 89.0, -104.0, 1e-45])
    inf, nan = np.inf, np.nan
    expected = {
        "exp": [1, 1, inf, 0, nan, None, None, inf, 0, 1],
        "expm1": [0.0, -0.0, inf, -1, nan, None, None, inf, -1, 1e-45],
        "log": [-inf, -inf, inf, nan, nan, nan, nan, None, nan, None],
        "log1p": [0.0, -0.0, inf, nan, nan, -inf, nan, None, nan, 1e-45],
        "log2": [-inf, -inf, inf, nan, nan, nan, nan, None, nan, -149],
        "tanh": [0.0, -0.0, 1, -1, nan, None, None, 1, -1, 1e-45],
        "softplus": [None, None, inf, 0, nan, None, None, 89, 0, None],
        "sigmoid": [0.5, 0.5, 1, 0, nan, None, None, 1, 0, 0.5],
        "silu": [0.0, -0.0, inf, nan, nan, None, None, 89, None, None],
        "mish": [0.0, -0.0, inf, nan, nan, None, None, 89, None, None],
        "gelu_tanh": [0.0, -0.0, inf, nan, nan, None, None, 89, -0.0, None],
    }
    for name, want in expected.items():
        out = np.empty_like(x)
        _kernel(name)(x, out)
        for xi, o, w in zip(x, out, want):
            if w is None:
                continue
            w = np.float32(w)
            assert (np.isnan(o) and np.isnan(w)) or (o == w and np.signbit(o) == np.signbit(w)), \
                f"{name}({xi!r}) = {o!r}, expected {w!r}"


def test_float32_subnormal_results():
    # exp and friends land in float32's subnormal range: one rounding, from the double result
    x = np.float32([-87.5, -95.0, -100.0, -103.0, -103.9, -104.0])
    out = np.empty_like(x)
    _kernel("exp")(x, out)
    np.testing.assert_array_equal(out, np.exp(x.astype(np.float64)).astype(np.float32))
    assert out[3] != 0 and out[3] < np.finfo(np.float32).tiny


# vector arithmetic (fmul <8 x double>, ...) or a vector sqrt (LLVM narrows sqrt(double(x)) to
# a float sqrt: it is correctly rounded either way)
VECTOR_ARITH = re.compile(r"\bf(?:mul|add|sub|div) (?:\w+ )*<(\d+) x (?:double|float)>"
                          r"|@llvm\.sqrt\.v(\d+)f(?:32|64)")
# a call left in the kernel (libm's sqrt/sqrtf only appear on the errno path of the scalar
# remainder loop, after LLVM partially inlines them as the sqrt instruction)
SCALAR_CALL = re.compile(r"call [^@\n]*@(?!llvm\.(?:fabs|sqrt|memset|x86|assume|lifetime|is\.fpclass|fma\.|maxnum\.|minnum\.)|sqrtf?\()"
                         r"([\w.]+)\(")


@pytest.mark.parametrize("name", ["exp", "expm1", "log", "log1p", "log2", "log10", "tanh",
                                  "sigmoid", "silu", "gelu_tanh", "mish", "softplus", "elu",
                                  "pow3", "pow0.5"])
def test_loop_is_vectorized(name):
    kernel = _kernel(name)
    x = np.ones(64, np.float32)
    kernel(x, np.empty_like(x))
    ir = "\n".join(kernel.inspect_llvm().values())
    body = ir.split("define ", 2)[1]  # the kernel itself, not the Python wrapper after it
    widths = {int(a or b) for a, b in VECTOR_ARITH.findall(body)}
    assert widths and max(widths) >= 2, f"{name}: no vector arithmetic in the loop"
    calls = [c for c in SCALAR_CALL.findall(body) if not c.startswith("NRT")]
    assert not calls, f"{name}: the loop still calls {calls}"


def test_pow_general_exponent_still_exact():
    # a non-special (or non-constant) exponent keeps float32 powf, the interpreter's function
    a = np.float32([2.0, 3.0, -8.0, 0.5, np.inf, np.nan])
    out = np.empty_like(a)
    _kernel("pow2.5")(a, out)
    with np.errstate(all="ignore"):
        np.testing.assert_allclose(out, np.power(a, np.float32(2.5)), rtol=1e-6)
