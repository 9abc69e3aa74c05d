"""Hand-written Numba kernels: the peer a user would write instead of torchlike on the CPU.

One ``@numba.njit(parallel=True)`` ``prange`` loop per workload, in the inputs' dtype
(``T = x.dtype.type`` keeps float32 work in float32, as torchlike's kernels do), one pass over
memory, no temporaries.  Contiguous inputs are flattened to 1-D views; the RNN cells and the
broadcasts loop over rows and columns.  The affine chains are generated (one straight-line
expression per length).  ``KERNELS`` maps a workload name to ``fn(*arrays) -> outputs``;
workloads without an entry run no Numba mode.
"""
from __future__ import annotations

import math

import numpy as np
from numba import njit, prange

from .workloads import affine_chain_expr

_jit = njit(parallel=True, cache=True)


def _flat(kernel):
    """Run a 1-D kernel on same-shape contiguous arrays; outputs take the first input's shape."""
    def run(*xs):
        out = kernel(*(x.reshape(-1) for x in xs))
        if isinstance(out, tuple):
            return tuple(o.reshape(xs[0].shape) for o in out)
        return out.reshape(xs[0].shape)
    return run


@_jit
def gelu_tanh(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        out[i] = T(0.5) * v * (T(1) + math.tanh(T(0.7978845608028654)
                                                 * (v + T(0.044715) * v * v * v)))
    return out


@_jit
def gelu_erf(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        out[i] = T(0.5) * v * (T(1) + math.erf(v * T(0.7071067811865476)))
    return out


@_jit
def silu_swish(x):
    T = x.dtype.type
    silu = np.empty_like(x)
    swish = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        silu[i] = v / (T(1) + math.exp(-v))
        swish[i] = v / (T(1) + math.exp(T(-1.702) * v))
    return silu, swish


@_jit
def softplus_threshold(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        b = v * T(2)
        out[i] = v if b > T(5) else math.log1p(math.exp(b)) / T(2)
    return out


@_jit
def mish(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        sp = v if v > T(20) else math.log1p(math.exp(v))
        out[i] = v * math.tanh(sp)
    return out


@_jit
def hardswish(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        out[i] = v * min(max(v + T(3), T(0)), T(6)) / T(6)
    return out


@_jit
def lstm_cell(gates, c):
    T = gates.dtype.type
    rows, hidden = c.shape
    h_new = np.empty_like(c)
    c_new = np.empty_like(c)
    for r in prange(rows):
        for j in range(hidden):
            i = T(1) / (T(1) + math.exp(-gates[r, j]))
            f = T(1) / (T(1) + math.exp(-gates[r, hidden + j]))
            g = math.tanh(gates[r, 2 * hidden + j])
            o = T(1) / (T(1) + math.exp(-gates[r, 3 * hidden + j]))
            cy = f * c[r, j] + i * g
            c_new[r, j] = cy
            h_new[r, j] = o * math.tanh(cy)
    return h_new, c_new


@njit(inline="always", cache=True)
def _mi_gate(wx, uz, alpha, beta_i, beta_h, bias, r, m):
    """One multiplicative-integration gate pre-activation."""
    return alpha[m] * wx[r, m] * uz[r, m] + beta_i[m] * wx[r, m] + beta_h[m] * uz[r, m] + bias[m]


@_jit
def milstm_cell(wx, uz, cx, alpha, beta_i, beta_h, bias):
    T = wx.dtype.type
    rows, hidden = cx.shape
    hy = np.empty_like(cx)
    cy = np.empty_like(cx)
    for r in prange(rows):
        for j in range(hidden):
            i = T(1) / (T(1) + math.exp(-_mi_gate(wx, uz, alpha, beta_i, beta_h, bias, r, j)))
            f = T(1) / (T(1) + math.exp(-_mi_gate(wx, uz, alpha, beta_i, beta_h, bias, r,
                                                   hidden + j)))
            g = math.tanh(_mi_gate(wx, uz, alpha, beta_i, beta_h, bias, r, 2 * hidden + j))
            o = T(1) / (T(1) + math.exp(-_mi_gate(wx, uz, alpha, beta_i, beta_h, bias, r,
                                                   3 * hidden + j)))
            c = f * cx[r, j] + i * g
            cy[r, j] = c
            hy[r, j] = o * math.tanh(c)
    return hy, cy


@_jit
def gru_cell(gi, gh, hx, b_ih, b_hh):
    T = gi.dtype.type
    rows, hidden = hx.shape
    out = np.empty_like(hx)
    for row in prange(rows):
        for j in range(hidden):
            jz, jn = hidden + j, 2 * hidden + j
            r = T(1) / (T(1) + math.exp(-(gi[row, j] + b_ih[j] + gh[row, j] + b_hh[j])))
            z = T(1) / (T(1) + math.exp(-(gi[row, jz] + b_ih[jz] + gh[row, jz] + b_hh[jz])))
            n = math.tanh(gi[row, jn] + b_ih[jn] + r * (gh[row, jn] + b_hh[jn]))
            out[row, j] = (T(1) - z) * n + z * hx[row, j]
    return out


@_jit
def chain_transcendental_8(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = math.log1p(math.exp(math.sin(x[i])))
        v = math.cos(math.sqrt(v))
        v = T(1) / (T(1) + math.exp(-v))
        out[i] = math.expm1(math.tanh(v))
    return out


@_jit
def unary_chain_20(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        v = math.log1p(math.exp(math.cos(math.sin(x[i]))))
        v = T(1) / math.sqrt(math.sqrt(v))
        v = -(T(1) / v)
        v = math.tanh(abs(v))
        v = T(1) / (T(1) + math.exp(-v))
        v = math.atan(math.expm1(math.erf(v)))
        v = -math.log(math.erfc(max(v, T(0))))
        v = math.exp(v)
        out[i] = v - np.trunc(v)
    return out


@_jit
def scale_shift(x):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        out[i] = x[i] * T(2) + T(1)
    return out


@_jit
def bias_residual(x, bias, res):
    rows, cols = x.shape
    out = np.empty_like(x)
    for r in prange(rows):
        for c in range(cols):
            out[r, c] = x[r, c] + bias[c] + res[r, c]
    return out


@_jit
def broadcast_outer(a, b):
    rows, cols = a.shape[0], b.shape[1]
    out = np.empty((rows, cols), a.dtype)
    for r in prange(rows):
        av = a[r, 0]
        for c in range(cols):
            out[r, c] = (av + b[0, c]) * av - b[0, c]
    return out


@_jit
def loop_square_5(x):
    out = np.empty_like(x)
    for i in prange(x.size):
        v = x[i]
        for _ in range(5):
            v = v * v
        out[i] = v
    return out


@_jit
def int_bitmix(a, b):
    out = np.empty_like(a)
    for i in prange(a.size):
        t = a[i] * 3 + b[i]
        out[i] = (t % 1000) ^ (b[i] & 255)   # Python's %: the sign of the divisor, as remainder
    return out


@_jit
def mixed_int_float(x, a):
    T = x.dtype.type
    out = np.empty_like(x)
    for i in prange(x.size):
        out[i] = x[i] * T(a[i]) + T(0.5)
    return out


def _affine_chain_kernel(length: int):
    """A straight-line kernel for ``chain_affine_<length>`` (generated: same code as by hand)."""
    expr = affine_chain_expr(length, "v")
    for c in ("-0.75", "0.75", "0.5", "0.25"):
        expr = expr.replace(c, f"T({c})")
    src = (f"def chain(x):\n    T = x.dtype.type\n    out = np.empty_like(x)\n"
           f"    for i in prange(x.size):\n        v = x[i]\n        out[i] = {expr}\n"
           f"    return out\n")
    scope = {"np": np, "prange": prange}
    exec(src, scope)   # generated: Numba cannot cache it on disk, it compiles once per run
    return _flat(njit(parallel=True)(scope["chain"]))


KERNELS = {
    "gelu_tanh": _flat(gelu_tanh), "gelu_tanh_f64": _flat(gelu_tanh),
    "gelu_erf": _flat(gelu_erf), "silu_swish": _flat(silu_swish),
    "softplus_threshold": _flat(softplus_threshold), "mish": _flat(mish),
    "hardswish": _flat(hardswish), "lstm_cell_pointwise": lstm_cell,
    "milstm_cell_pointwise": milstm_cell, "gru_cell_pointwise": gru_cell,
    "chain_transcendental_8": _flat(chain_transcendental_8),
    "unary_chain_20": _flat(unary_chain_20), "scale_shift": _flat(scale_shift),
    "bias_dropout_residual": bias_residual, "broadcast_outer": broadcast_outer,
    "loop_square_5": _flat(loop_square_5), "int_bitmix": _flat(int_bitmix),
    "mixed_int_float": _flat(mixed_int_float),
}


@_jit
def parallel_copy(dst, src):
    """``dst[:] = src`` over every core (1-D arrays): the all-core copy floor (``cpu.py``)."""
    for i in prange(src.size):
        dst[i] = src[i]


def kernel_for(name: str):
    """The hand-written kernel for workload ``name``, or None."""
    if name in KERNELS:
        return KERNELS[name]
    if name.startswith("chain_affine_"):
        KERNELS[name] = _affine_chain_kernel(int(name.rsplit("_", 1)[1]))
        return KERNELS[name]
    return None
