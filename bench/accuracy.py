"""Accuracy of the float32 math helpers, ``tl_<name>_f32``, over the whole float32 range.

    python -m bench.accuracy --out bench/results/accuracy        # ~7M points per op
    python -m bench.accuracy --stride 65537 --out /tmp/acc      # a quick, smaller sweep
    python -m bench.accuracy --f64 --out bench/results/accuracy  # float64 helpers, mpmath

Inputs: every float32 bit pattern at a stride (both signs, the whole range: zeros, subnormals,
normals, inf, NaN), plus 2^16 consecutive floats on each side of the interesting points (0, +-1,
+-0.5, the overflow and underflow thresholds of exp, the polynomial/formula switch points) and
a dense grid on [-20, 20].  Each helper runs in a compiled Numba loop, as the fused kernels call
it (``o[i] = float32(helper(x[i]))``, error_model="numpy", no fastmath), against a float64
numpy reference rounded once to float32 (spot-checked against mpmath at 50 digits when mpmath
is importable).  For each op the report gives the largest distance, in float32 ulps (consecutive
floats), from the correctly rounded result and the input where it occurs, for the new
float32-native helper, the previous float64-compute one (``scalar_math.f64_<name>_f32``) and
torch's own float32 result when torch is importable; NaN where the reference is not NaN (or the
reverse) and a wrong sign of zero are counted separately.  Writes ``results.json`` and
``report.md``.

Binary ops (``BINARY``: atan2(y, x)) run on pairs built from the same inputs (``pairs``): every
pair of a set of special values (signed zeros, infinities, NaN, subnormals, the extremes), the
sweep as y against a shuffled copy as x (pairs across the whole range: huge and tiny ratios,
y / x overflowing and underflowing), the sweep as y against each of a few fixed x (+-0, +-1,
+-inf, a subnormal, 1e30, -1e-30), and |y| / |x| spread over [1/4, 4] (the reduction's switch
points tan(pi/8), 1, tan(3pi/8)) with random signs.  Their cells give the worst input as (y, x).
"""
from __future__ import annotations

import argparse
import json
import math
import os
import platform
import sys

import numba
import numpy as np

from torchlike.cpu_backend import scalar_math as sm

F32 = np.float32
INTERESTING = [0.0, 1.0, 0.5, 2.0, 0.34, 0.625, 0.6931472, 0.70710677, 1.4142135, 9.0, 10.0,
               18.0, 20.0, 88.72284, 87.33655, 103.97208, 104.0, 110.0, 126.0, 128.0, 149.0,
               150.0, 1.1754944e-38, 3.4028235e38, 2.0 ** -24, 2.0 ** -12,
               # sin/cos/tan: the polynomial's edge pi/4, multiples of pi/2, the switch to the
               # integer reduction (8192), large arguments, 16367173 * 2**72 (the float32
               # closest to a multiple of pi/2 relative to its size: cos = -1.6e-9)
               0.7853982, 1.5707964, 3.1415927, 4.712389, 8192.0, 1e5, 1e8, 7.729179e28,
               1.5, 10.13, 14.36, 0.9966,  # erf/erfc/gelu/erfinv switch and underflow points
               0.41421357, 2.4142137, 12.0, 4096.0, 89.41599]  # atan, acosh, sinh switches


def inputs(stride=1031, dense=65536, grid=400001):
    """float32 inputs: a bit-pattern sweep, neighbourhoods of INTERESTING points, a grid."""
    parts = [np.arange(0, 2 ** 32, stride, dtype=np.uint64).astype(np.uint32).view(F32)]
    for v in INTERESTING:
        for s in (1.0, -1.0):
            c = int(np.float32(s * v).view(np.int32))
            bits = np.arange(c - dense, c + dense, dtype=np.int64)
            if v == 0.0:  # around zero: the smallest subnormals of either sign
                bits = np.arange(0, dense, dtype=np.int64)
                bits = np.concatenate([bits, bits | -0x80000000])
            parts.append(bits.astype(np.int32).view(F32))
    parts.append(np.linspace(-20, 20, grid, dtype=F32))
    parts.append(F32([np.nan, np.inf, -np.inf, 0.0, -0.0]))
    return np.concatenate(parts)  # NaNs with many payloads come from the sweep


_PAIR_SPECIALS = F32([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 1.1754944e-38, 0.5,
                      1.0, -1.0, 2.0, -3.0, 1e-30, -1e30, 3.4028235e38, -3.4028235e38])
_PAIR_FIXED_X = F32([1.0, -1.0, 0.0, -0.0, np.inf, -np.inf, 3e-39, 1e30, -1e-30])


def pairs(x, seed=0):
    """(y, x) float32 pairs for the binary ops, built from the unary inputs x (the module
    docstring lists the parts).  About 2.5 times as many pairs as inputs."""
    rng = np.random.default_rng(seed)
    s = _PAIR_SPECIALS
    ys, xs = [np.repeat(s, s.size)], [np.tile(s, s.size)]
    ys.append(x)
    xs.append(rng.permutation(x))
    k = _PAIR_FIXED_X.size
    for i, v in enumerate(_PAIR_FIXED_X):  # every k-th input as y against one fixed x
        ys.append(x[i::k])
        xs.append(np.full(x[i::k].size, v, F32))
    a = np.abs(x[np.isfinite(x) & (np.abs(x) >= np.finfo(F32).tiny)])
    a = rng.permutation(a)[: x.size // 2]
    with np.errstate(over="ignore"):
        b = (a * np.exp(rng.uniform(np.log(0.25), np.log(4.0), a.size))).astype(F32)
    ys.append(np.where(rng.random(a.size) < 0.5, -b, b).astype(F32))
    xs.append(np.where(rng.random(a.size) < 0.5, -a, a).astype(F32))
    return np.concatenate(ys), np.concatenate(xs)


def op_inputs(name, x):
    """The helper's argument arrays for op ``name``: (x,), or (y, x) pairs for BINARY ops."""
    return pairs(x) if name in BINARY else (x,)


def _sigmoid64(v):
    return 1.0 / (1.0 + np.exp(-v))


def _gelu_tanh64(v):
    u = 0.7978845608028654 * (v + 0.044715 * v * v * v)
    return v / (1.0 + np.exp(-2.0 * u))  # = 0.5 v (1 + tanh u), no cancellation in the tail


def _softplus64(v, beta=1.0, threshold=20.0):
    vb = (v.astype(F32) * F32(beta)).astype(np.float64)  # compared in float32, as the ops do
    return np.where(vb > threshold, v, np.logaddexp(0.0, vb) / beta)


def _elu64(v, alpha=1.0, scale=1.0, input_scale=1.0):
    return np.where(v > 0, v * scale, np.expm1(v * input_scale) * (alpha * scale))


def _math64(fn):
    """A float64 numpy function applying ``math.<fn>`` (correctly rounded to ~1 ulp of double,
    glibc's) per element in a compiled loop: numpy has no erf."""
    @numba.njit
    def loop(v):
        out = np.empty_like(v)
        for i in range(v.size):
            out[i] = fn(v[i])
        return out
    return lambda v: loop(np.ascontiguousarray(v, dtype=np.float64).ravel()).reshape(np.shape(v))


_erf64, _erfc64 = _math64(math.erf), _math64(math.erfc)


def _gelu64(v):
    return v * 0.5 * _erfc64(-v * 0.7071067811865476)  # x Phi(x), no cancellation for x < 0


def _erfinv64(v):
    from torchlike.ops.elementwise_math import _erfinv64 as f
    return f(np.asarray(v, dtype=np.float64))


def _torch(name, **kw):
    def run(*args):
        import torch
        import torch.nn.functional as tf
        ts = [torch.from_numpy(a) for a in args]
        fn = {"sigmoid": torch.sigmoid, "silu": tf.silu, "mish": tf.mish, "elu": tf.elu,
              "gelu_tanh": lambda a: tf.gelu(a, approximate="tanh"), "softplus": tf.softplus,
              "gelu": tf.gelu}
        return (fn.get(name) or getattr(torch, name))(*ts, **kw).numpy()
    return run


# name: (helper tl_<attr>_f32 / old f64_<attr>_f32, constant args, float64 reference,
# torch keyword arguments or None for no torch column)
OPS = {
    "exp": ("exp", (), np.exp, {}),
    "exp2": ("exp2", (), np.exp2, {}),
    "expm1": ("expm1", (), np.expm1, {}),
    "log": ("log", (), np.log, {}),
    "log2": ("log2", (), np.log2, {}),
    "log10": ("log10", (), np.log10, {}),
    "log1p": ("log1p", (), np.log1p, {}),
    "tanh": ("tanh", (), np.tanh, {}),
    "sigmoid": ("sigmoid", (), _sigmoid64, {}),
    "silu": ("silu", (), lambda v: v / (1.0 + np.exp(-v)), {}),
    "erf": ("erf", (), _erf64, {}),
    "erfc": ("erfc", (), _erfc64, {}),
    "erfinv": ("erfinv", (), _erfinv64, {}),
    "gelu": ("gelu", (), _gelu64, {}),
    "gelu_tanh": ("gelu_tanh", (), _gelu_tanh64, {}),
    "mish": ("mish", (), lambda v: v * np.tanh(np.logaddexp(0.0, v)), {}),
    "softplus": ("softplus", (1.0, 20.0), _softplus64, {}),
    "softplus(beta=2,threshold=5)": ("softplus", (2.0, 5.0),
                                     lambda v: _softplus64(v, 2.0, 5.0),
                                     {"beta": 2.0, "threshold": 5.0}),
    "elu": ("elu", (1.0, 1.0, 1.0), _elu64, {}),
    "elu(alpha=1.5,input_scale=0.5)": ("elu", (1.5, 1.0, 0.5),
                                       lambda v: _elu64(v, 1.5, 1.0, 0.5), None),
    "sin": ("sin", (), np.sin, {}),  # numpy's float64 ones are accurate for huge x too (mpmath)
    "cos": ("cos", (), np.cos, {}),
    "tan": ("tan", (), np.tan, {}),
    "asin": ("asin", (), np.arcsin, {}),
    "acos": ("acos", (), np.arccos, {}),
    "atan": ("atan", (), np.arctan, {}),
    "atan2": ("atan2", (), np.arctan2, {}),
    "sinh": ("sinh", (), np.sinh, {}),
    "cosh": ("cosh", (), np.cosh, {}),
    "asinh": ("asinh", (), np.arcsinh, {}),
    "acosh": ("acosh", (), np.arccosh, {}),
    "atanh": ("atanh", (), np.arctanh, {}),
}
BINARY = {"atan2"}  # helper(y, x), reference(y, x): measured on pairs(x)
# The bound each helper is held to, in ulps of the correctly rounded result: 2, or 4 where
# PyTorch's own float32 op is looser (its gelu, 0.5 x (1 + erf(x / sqrt 2)), cancels in the
# negative tail: off by up to 8.7e8 ulp; its mish by 154).  tests/test_math_f32.py asserts these on a sample.
BOUND = {"gelu": 4, "mish": 4}


def bound(name):
    return BOUND.get(name, 2)

# the float64 libm helpers the float32 templates called before their float32 versions
_OLD = {"erf": sm.tl_erf, "erfc": sm.tl_erfc, "gelu": sm.tl_gelu, "erfinv": sm.tl_erfinv}

_KERNELS = {}


def kernel(fn, consts=(), arity=1):
    """``o[i] = float32(fn(a0[i], .., *consts))`` compiled as the fused kernels are."""
    key = (fn, consts, arity)
    if key not in _KERNELS:
        names = [f"a{j}" for j in range(arity)]
        args = ", ".join(f"{n}[i]" for n in names) + "".join(f", np.float32({c!r})" for c in consts)
        src = (f"def k({', '.join(names)}, o):\n    for i in range(o.size):\n"
               f"        o[i] = np.float32(fn({args}))\n")
        ns = {"np": np, "fn": fn}
        exec(src, ns)
        _KERNELS[key] = numba.njit(error_model="numpy")(ns["k"])
    return _KERNELS[key]


def helper(attr):
    """The helper the float32 template uses for ``attr`` (``f32:<name>``: math_f32.<name>)."""
    if attr.startswith("f32:"):
        from torchlike.cpu_backend import math_f32
        return getattr(math_f32, attr[4:])
    return getattr(sm, f"tl_{attr}_f32")


def run_helper(fn, consts, *args):
    out = np.empty_like(args[0])
    kernel(fn, consts, len(args))(*args, out)
    return out


def ordered(a):
    """float32 -> int64 in the same order, consecutive floats one apart (-0.0 == 0.0)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def errors(x, out, expect):
    """(max ulp distance from the correctly rounded result, its input, NaN mismatches, zeros
    with the wrong sign) of ``out`` against ``expect`` (float32, rounded once from float64).
    ``x`` is the input array, or the tuple of them for a binary op (the input is then a list)."""
    nan_out, nan_ref = np.isnan(out), np.isnan(expect)
    zero = (out == 0) & (expect == 0)
    bad_zero = int(np.count_nonzero(np.signbit(out[zero]) != np.signbit(expect[zero])))
    ok = ~nan_out & ~nan_ref
    err = np.zeros(out.size, np.int64)
    err[ok] = np.abs(ordered(out[ok]) - ordered(expect[ok]))
    i = int(np.argmax(err))
    where = [float(a[i]) for a in x] if isinstance(x, tuple) else float(x[i])
    return int(err[i]), where, int(np.count_nonzero(nan_out != nan_ref)), bad_zero


def reference(ref, *args):
    with np.errstate(all="ignore"):
        return np.asarray(ref(*(a.astype(np.float64) for a in args))).astype(F32)


def measure_op(name, x):
    """errors() of op ``name``'s float32 helper on ``op_inputs(name, x)``."""
    attr, consts, ref, _ = OPS[name]
    args = op_inputs(name, x)
    out = run_helper(helper(attr), consts, *args)
    return errors(args if len(args) > 1 else x, out, reference(ref, *args))


def mpmath_check(x, n=2000, seed=0, names=None):
    """Largest |numpy float64 reference - mpmath| over a sample, in float32 ulps of the result:
    the float64 references must be far more accurate than float32 for the table to mean
    anything.  None when mpmath is not installed.  ``names``: only these ops."""
    try:
        import mpmath
    except ImportError:
        return None
    mpmath.mp.dps = 50
    rng = np.random.default_rng(seed)
    xs = x[np.isfinite(x)]
    xs = np.concatenate([rng.choice(xs, n), F32([-95.0, -20.0, -9.0, -1e-5, 1e-5, 0.3, 5.0,
                                                  1e22, 7.729179e28, 3.4028235e38]),
                         rng.uniform(-1, 1, n // 4).astype(F32)])  # erfinv's domain
    y2, x2 = pairs(xs, seed)
    fin = np.isfinite(y2) & np.isfinite(x2)
    pick = rng.choice(np.flatnonzero(fin), n)
    y2, x2 = y2[pick], x2[pick]
    mp_ref = {
        "exp": mpmath.exp, "expm1": mpmath.expm1, "log": mpmath.log, "log1p": mpmath.log1p,
        "tanh": mpmath.tanh, "log2": lambda v: mpmath.log(v, 2), "exp2": lambda v: 2 ** v,
        "sigmoid": lambda v: 1 / (1 + mpmath.exp(-v)), "silu": lambda v: v / (1 + mpmath.exp(-v)),
        "mish": lambda v: v * mpmath.tanh(mpmath.log1p(mpmath.exp(v))),
        "sin": mpmath.sin, "cos": mpmath.cos, "tan": mpmath.tan,  # exact reduction: mpmath
        "erf": mpmath.erf, "erfc": mpmath.erfc, "erfinv": mpmath.erfinv,
        "gelu": lambda v: v * mpmath.erfc(-v / mpmath.sqrt(2)) / 2,
        "asin": mpmath.asin, "acos": mpmath.acos, "atan": mpmath.atan, "atan2": mpmath.atan2,
        "sinh": mpmath.sinh, "cosh": mpmath.cosh, "asinh": mpmath.asinh, "acosh": mpmath.acosh,
        "atanh": mpmath.atanh,
    }
    domain = {"log": lambda v: v > 0, "log2": lambda v: v > 0, "log1p": lambda v: v > -1,
              "asin": lambda v: abs(v) <= 1, "acos": lambda v: abs(v) <= 1,
              "acosh": lambda v: v >= 1, "atanh": lambda v: abs(v) < 1,
              "erfinv": lambda v: abs(v) < 1}
    worst = {}
    for name, f in mp_ref.items():
        if names and name not in names:
            continue
        ref = OPS[name][2]
        points = zip(y2, x2) if name in BINARY else ((v,) for v in xs)
        w = 0.0
        for args in points:
            ad = [float(v) for v in args]
            if name in domain and not domain[name](ad[0]) or name in BINARY and 0.0 in ad:
                continue  # mpmath has no signed zeros: atan2(-0.0, -x) would be +pi there
            exact = f(*(mpmath.mpf(v) for v in ad))
            e = float(exact)
            with np.errstate(all="ignore"):
                got = float(ref(*(np.float64(v) for v in ad)))
            if not np.isfinite(e) or e == 0 or abs(e) < 1.2e-38 or abs(e) > 3.4e38:
                continue
            ulp = float(np.spacing(np.float32(abs(e))))
            w = max(w, abs(float((mpmath.mpf(got) - exact) / ulp)))
        worst[name] = w
    return worst


def measure(x, names=None, torch_too=True):
    rows = {}
    for name, (attr, consts, ref, torch_kw) in OPS.items():
        if names and name not in names:
            continue
        args = op_inputs(name, x)
        at = args if len(args) > 1 else x
        expect = reference(ref, *args)
        row = {"points": int(expect.size)}
        new = run_helper(helper(attr), consts, *args)
        row["new"] = errors(at, new, expect)
        old_fn = getattr(sm, f"f64_{attr}_f32", None) or _OLD.get(attr)
        if old_fn is not None:
            row["old"] = errors(at, run_helper(old_fn, consts, *args), expect)
        if torch_too and torch_kw is not None:
            try:
                with np.errstate(all="ignore"):
                    got = _torch(attr, **torch_kw)(*(a.copy() for a in args))
                row["torch"] = errors(at, got, expect)
            except ImportError:
                pass
        rows[name] = row
    return rows


def _cell(e):
    if e is None:
        return "-"
    ulp, where, nans, zeros = e
    if isinstance(where, list):  # a binary op's (y, x)
        y, x = (repr(np.float32(v)).replace("np.float32(", "").rstrip(")") for v in where)
        s = f"{ulp} (y={y}, x={x})"
    else:
        s = f"{ulp} (x={np.float32(where)!r})".replace("np.float32(", "").replace(")", "", 1)
    if nans:
        s += f", {nans} NaN mismatches"
    if zeros:
        s += f", {zeros} signed-zero mismatches"
    return s


def report(rows, spot, x):
    lines = [
        "# float32 math helpers: accuracy",
        "",
        f"{x.size:,} float32 inputs per op (`python -m bench.accuracy`: bit-pattern sweep of the "
        "whole range, 2^17 consecutive floats around each threshold, a grid on [-20, 20], "
        "specials).  Cells: the largest distance in float32 ulps from the correctly rounded "
        "result (float64 numpy reference rounded once), and the input where it occurs.  "
        "new: `scalar_math.tl_<op>_f32`, the helper the float32 template calls (float32 SIMD "
        "from math_f32.py, math_trig_f32.py, math_erf_f32.py and math_inverse_f32.py, gelu_tanh forms its "
        "tanh argument in float64); "
        "old: the previous float64-compute helper `scalar_math.f64_<op>_f32` (for erf, erfc, "
        "gelu: libm's erf in float64, `tl_erf`/`tl_erfc`/`tl_gelu`; erfinv: the float64 "
        "`tl_erfinv`); torch: torch "
        f"{_torch_version()} CPU float32.  An ulp distance counts the floats in between, so a "
        "result that should be a subnormal or tiny float but is 0 (exp(-x) overflowing in "
        "1 / (1 + exp(-x)) for x < -88.7) or a cancelled tail (0.5 x (1 + tanh u)) shows as "
        "millions of ulps.  atan2 runs on (y, x) pairs (see `pairs` in bench/accuracy.py; "
        "its row says how many).",
        "",
        "Every new helper is held to 2 ulp, or to the bound in its row where PyTorch's own "
        "float32 op is looser (`BOUND` in bench/accuracy.py).",
        "",
        "| op | new | old | torch |",
        "|---|---|---|---|",
    ]
    for name, row in rows.items():
        label = f"{name} ({row['points']:,} pairs)" if name in BINARY else name
        if bound(name) != 2:
            label += f" (bound {bound(name)} ulp)"
        lines.append(f"| {label} | {_cell(row['new'])} | {_cell(row.get('old'))} | "
                     f"{_cell(row.get('torch'))} |")
    lines.append("")
    if spot:
        lines.append("float64 references against mpmath (50 digits), ~2000 random finite "
                     "inputs per op: largest error in float32 ulps of the result: "
                     + ", ".join(f"{k} {v:.2g}" for k, v in spot.items()) + ".")
    else:
        lines.append("mpmath not installed: the float64 references were not spot-checked.")
    lines.append("")
    lines.append(f"Machine: {platform.machine()}, numba {numba.__version__}, numpy "
                 f"{np.__version__}, Python {platform.python_version()}.")
    return "\n".join(lines) + "\n"


def _torch_version():
    try:
        import torch
        return torch.__version__
    except ImportError:
        return "(not installed)"


# ----- float64 helpers (``math_f64.tl_<name>_f64``) against mpmath -----
#
#     python -m bench.accuracy --f64 --out bench/results/accuracy     # report_f64.md
#
# Inputs (``inputs64``): random bit patterns (the whole float64 range, both signs, subnormals,
# inf, NaN), uniform samples on intervals around the interesting points (0, the polynomial and
# formula switch points, the overflow and underflow thresholds of exp, the subnormal results
# of exp / sigmoid / silu), log-uniform positive magnitudes and special values.  Each helper
# runs in a compiled loop as the kernels call it; the reference is mpmath at 120 bits,
# rounded once to float64 (subnormals included).  Cells: the largest distance in doubles from
# the correctly rounded result (0: correctly rounded everywhere) and the largest error in ulps
# of the exact value (fractional: a distance of 1 can be an error of 0.51 ulp).

def _mp_softplus(beta, threshold):
    def f(mp, v):
        y = mp.mpf(float(v) * beta)  # the double product (Python floats: IEEE, inf on overflow)
        if y > threshold:
            return v
        return mp.log1p(mp.exp(y)) / beta
    return f


def _mp_elu(alpha, scale, input_scale):
    def f(mp, v):
        if v > 0:
            return v * scale
        y = mp.mpf(float(v) * input_scale)
        return mp.expm1(y) * mp.mpf(alpha * scale)
    return f


def _mp_gelu_tanh(mp, v):
    c, k = mp.mpf(0.7978845608028654), mp.mpf(0.044715)  # PyTorch's double constants
    return v / (1 + mp.exp(-2 * c * (v + k * v ** 3)))


# name: (helper attr, constant args, mpmath reference fn(mp, x))
OPS64 = {
    "exp": ("exp", (), lambda mp, v: mp.exp(v)),
    "exp2": ("exp2", (), lambda mp, v: mp.power(2, v)),
    "expm1": ("expm1", (), lambda mp, v: mp.expm1(v)),
    "log": ("log", (), lambda mp, v: mp.log(v)),
    "log1p": ("log1p", (), lambda mp, v: mp.log1p(v)),
    "log2": ("log2", (), lambda mp, v: mp.log(v, 2)),
    "log10": ("log10", (), lambda mp, v: mp.log10(v)),
    "sinh": ("sinh", (), lambda mp, v: mp.sinh(v)),
    "cosh": ("cosh", (), lambda mp, v: mp.cosh(v)),
    "tanh": ("tanh", (), lambda mp, v: mp.tanh(v)),
    "sigmoid": ("sigmoid", (), lambda mp, v: 1 / (1 + mp.exp(-v))),
    "silu": ("silu", (), lambda mp, v: v / (1 + mp.exp(-v))),
    "gelu_tanh": ("gelu_tanh", (), _mp_gelu_tanh),
    "softplus": ("softplus", (1.0, 20.0), _mp_softplus(1.0, 20.0)),
    "softplus(beta=2,threshold=5)": ("softplus", (2.0, 5.0), _mp_softplus(2.0, 5.0)),
    "mish": ("mish", (), lambda mp, v: v * mp.tanh(mp.log1p(mp.exp(v)))),
    "elu": ("elu", (1.0, 1.0, 1.0), _mp_elu(1.0, 1.0, 1.0)),
    "log_sigmoid": ("log_sigmoid", (), lambda mp, v: -mp.log1p(mp.exp(-v))),
}
_DOMAIN64 = {"log": 0.0, "log2": 0.0, "log10": 0.0, "log1p": -1.0}  # x below: NaN
_INTERVALS64 = [(-1e-8, 1e-8), (-1080, -1020), (1020, 1025), (-712, -705), (705, 712), (-0.01, 0.01), (-0.4, 0.4), (-0.6, 0.6), (-1.2, 1.2), (-3, 3),
                (-10, 10), (-25, 25), (-45, 45), (-750, 750), (-760, -700), (700, 710),
                (-1.0, -0.25), (0.25, 2.5), (30.0, 60.0)]
_SPECIAL64 = [0.0, -0.0, np.inf, -np.inf, np.nan, 5e-324, -5e-324, 2.2250738585072014e-308,
              1.0, -1.0, 0.5, -0.5, 2.0, 709.782712893384, 709.7827128933841, -745.1332191019411,
              -745.1332191019412, -708.3964185322641, -752.0, -746.0, 40.0, -40.0, 37.5, -38.0,
              22.0, 0.55, -0.55, 0.3465735902799727, 1.0397207708399179, 1e300, -1e300,
              1.7976931348623157e308, -1.7976931348623157e308, 1e-300, 20.0, 20.000000000000004,
              -0.9999999999999999, 0.41421356237309503, -0.2928932188134524, 2.0 ** -54,
              -(2.0 ** -54), 2.0 ** -1022 * 0.75, 56 * 0.6931471805599453, 30.0, -30.0]


def inputs64(n=100000, seed=0):
    """float64 inputs, about ``n`` of them (see the section comment)."""
    rng = np.random.default_rng(seed)
    parts = [rng.integers(0, 2 ** 64, n // 4, dtype=np.uint64).view(np.float64)]
    m = n // (2 * len(_INTERVALS64))
    for lo, hi in _INTERVALS64:
        parts.append(rng.uniform(lo, hi, m))
    parts.append(np.exp(rng.uniform(-744, 709, n // 8)))  # log-uniform positive magnitudes
    parts.append(1.0 + rng.uniform(-2 ** -20, 2 ** -20, n // 16))  # log near 1
    parts.append(np.float64(_SPECIAL64))
    return np.concatenate(parts)


def _cr64(v):
    """The mpmath value v rounded once to float64 (subnormals, overflow and the sign of a
    result that rounds to zero included)."""
    import mpmath
    if not mpmath.isfinite(v):
        return float(v)
    if abs(v) < mpmath.mpf(2) ** -1022:
        return math.copysign(float(mpmath.nint(abs(v) * mpmath.mpf(2) ** 1074)) * 2.0 ** -1074,
                             float(v))
    try:
        return float(v)
    except OverflowError:
        return math.copysign(math.inf, v)


def _mp_value(mp, fn, v):
    """(correctly rounded float64, exact mpf or None) of fn at the double v.  mpmath has no
    signed zeros: an exact zero at x = +-0.0 gets x's sign (expm1(-0.0) = -0.0), elsewhere +0."""
    if v != v:
        return math.nan, None
    exact = fn(mp, mp.mpf(v))
    if mp.isnan(exact):
        return math.nan, None
    if exact == 0:
        return (math.copysign(0.0, v) if v == 0 else 0.0), None
    return _cr64(exact), (exact if mp.isfinite(exact) else None)


def reference64(name, x):
    import mpmath as mp
    fn = OPS64[name][2]
    lo = _DOMAIN64.get(name)
    ref = np.empty(x.size)
    exact = [None] * x.size
    with mp.workprec(120):
        for i, v in enumerate(x.tolist()):
            if lo is not None and v < lo:
                ref[i] = math.nan
            elif lo is not None and v == lo:
                ref[i] = -math.inf
            else:
                ref[i], exact[i] = _mp_value(mp, fn, v)
    return ref, exact


def helper64(attr):
    """The float64 helper (math_f64 / math_act_f64, as scalar_math re-exports it)."""
    return getattr(sm, f"tl_{attr}_f64")


_KERNELS64 = {}


def run_helper64(fn, consts, x):
    key = (fn, consts)
    if key not in _KERNELS64:
        args = "".join(f", {c!r}" for c in consts)
        src = (f"def k(a, o):\n    for i in range(o.size):\n"
               f"        o[i] = np.float64(fn(a[i]{args}))\n")
        ns = {"np": np, "fn": fn}
        exec(src, ns)
        _KERNELS64[key] = numba.njit(error_model="numpy")(ns["k"])
    out = np.empty_like(x)
    _KERNELS64[key](x, out)
    return out


def ordered64(a):
    """float64 -> int64 in the same order, consecutive doubles one apart (-0.0 == 0.0)."""
    i = a.view(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFFFFFFFFFF), i)


def errors64(x, out, ref, exact):
    """(max distance in doubles from the correctly rounded result, its input, max error in
    ulps of the exact value, NaN mismatches, zeros with the wrong sign)."""
    import mpmath as mp
    nan_out, nan_ref = np.isnan(out), np.isnan(ref)
    zero = (out == 0) & (ref == 0)
    bad_zero = int(np.count_nonzero(np.signbit(out[zero]) != np.signbit(ref[zero])))
    ok = ~nan_out & ~nan_ref
    dist = np.zeros(out.size, np.int64)
    inf = ok & (np.isinf(out) | np.isinf(ref))
    dist[inf] = np.where(out[inf] == ref[inf], 0, 2 ** 62)
    fin = ok & ~inf
    dist[fin] = np.abs(ordered64(out[fin]) - ordered64(ref[fin]))
    i = int(np.argmax(dist))
    frac = 0.0
    with mp.workprec(120):
        for j in np.flatnonzero(fin & (dist > 0)):
            e = exact[j]
            if e is None or e == 0:
                continue
            ulp = mp.mpf(2) ** (max(mp.floor(mp.log(abs(e), 2)), -1022) - 52)
            frac = max(frac, float(abs(mp.mpf(float(out[j])) - e) / ulp))
    return int(dist[i]), float(x[i]), frac, int(np.count_nonzero(nan_out != nan_ref)), bad_zero


# results that round to zero are +0.0 here, as in PyTorch (min(x, 0) - log1p(exp(-|x|)))
_PLUS_ZERO64 = {"log_sigmoid"}


def measure_op64(name, x, out=None):
    """errors64() of op ``name``'s float64 helper on x (or of ``out``, computed elsewhere)."""
    attr, consts, _ = OPS64[name]
    if out is None:
        out = run_helper64(helper64(attr), consts, x)
    ref, exact = reference64(name, x)
    if name in _PLUS_ZERO64:
        ref = np.where((ref == 0) & (x != 0), 0.0, ref)
    return errors64(x, out, ref, exact)


def measure64(x, names=None):
    return {name: {"points": int(x.size), "new": measure_op64(name, x)}
            for name in OPS64 if not names or name in names}


def report64(rows, x):
    lines = [
        "# float64 math helpers: accuracy",
        "",
        f"{x.size:,} float64 inputs per op (`python -m bench.accuracy --f64`: random bit "
        "patterns over the whole range, uniform samples around the switch points and the "
        "overflow / underflow thresholds, log-uniform magnitudes, specials).  Reference: "
        "mpmath at 120 bits rounded once to float64.  Cells: the largest distance in doubles "
        "from the correctly rounded result (and the input where it occurs); the largest "
        "error in ulps of the exact value.  Helpers: `math_f64.tl_<op>_f64`, the float64 "
        "templates' (call-free, vectorizable).",
        "",
        "| op | max distance (doubles) | max error (ulp) | NaN / signed-zero mismatches |",
        "|---|---|---|---|",
    ]
    for name, row in rows.items():
        d, where, frac, nans, zeros = row["new"]
        lines.append(f"| {name} | {d} (x={where!r}) | {frac:.3f} | {nans} / {zeros} |")
    lines.append("")
    lines.append(f"Machine: {platform.machine()}, numba {numba.__version__}, numpy "
                 f"{np.__version__}, Python {platform.python_version()}.")
    return "\n".join(lines) + "\n"


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.accuracy", description=__doc__.split("\n")[0])
    p.add_argument("--out", required=True)
    p.add_argument("--stride", type=int, default=1031, help="bit-pattern stride of the sweep")
    p.add_argument("--ops", default="", help="comma-separated subset of: " + ", ".join(OPS))
    p.add_argument("--f64", action="store_true",
                   help="the float64 helpers instead (report_f64.md, results_f64.json; --ops: "
                        "a subset of " + ", ".join(OPS64) + ")")
    p.add_argument("--points", type=int, default=200000, help="--f64: inputs per op, about")
    a = p.parse_args(argv)
    if a.f64:
        return main64(a)
    x = inputs(a.stride)
    names = [n for n in a.ops.split(",") if n]
    rows = measure(x, names)
    spot = mpmath_check(x, names=names)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results.json"), "w") as f:
        json.dump({"schema": "torchlike.accuracy/1", "points": int(x.size), "stride": a.stride,
                   "columns": ["max_ulp", "at_x", "nan_mismatches", "signed_zero_mismatches"],
                   "binary_ops": sorted(BINARY),  # at_x is [y, x] for these
                   "ops": rows, "mpmath_reference_check_ulp": spot}, f, indent=1)
    text = report(rows, spot, x)
    with open(os.path.join(a.out, "report.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    bad = [n for n, r in rows.items() if r["new"][0] > bound(n) or r["new"][2] or r["new"][3]]
    return 1 if bad else 0


def main64(a):
    x = inputs64(a.points)
    names = [n for n in a.ops.split(",") if n]
    rows = measure64(x, names)
    os.makedirs(a.out, exist_ok=True)
    with open(os.path.join(a.out, "results_f64.json"), "w") as f:
        json.dump({"schema": "torchlike.accuracy_f64/1", "points": int(x.size),
                   "columns": ["max_distance", "at_x", "max_ulp_error", "nan_mismatches",
                               "signed_zero_mismatches"], "ops": rows}, f, indent=1)
    text = report64(rows, x)
    with open(os.path.join(a.out, "report_f64.md"), "w") as f:
        f.write(text)
    sys.stdout.write(text)
    bad = [n for n, r in rows.items() if r["new"][0] > 1 or r["new"][3] or r["new"][4]]
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
