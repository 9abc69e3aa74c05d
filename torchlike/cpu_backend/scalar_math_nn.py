"""Numba helpers for the ops of ``ops/activations.py`` and ``ops/elementwise_more.py``
(``scalar_math.py`` re-exports them: generated kernels see every ``tl_*`` name there).

The contract is ``scalar_math``'s: operands hold the op's compute dtype, a helper may return a
wider type, and the kernel casts each op's result to its out dtype -- which is what makes the
shifts below wrap in a narrow dtype: they shift in int64 and the cast keeps the low bits.
"""
from __future__ import annotations

import math

import numba
import numpy as np

from .math_f32 import tl_exp_f32, tl_log1p_f32


def _njit(fn):
    return numba.njit(inline="always", error_model="numpy")(fn)


# ----- shifts: PyTorch's rule for counts outside [0, bits) (see ops/elementwise_more.py) -----
# The shift itself happens in int64, where every count used is below 64 (LLVM's shl/ashr are
# poison for a count >= 64): the kernel's cast to the out dtype wraps the left shift, and an
# arithmetic right shift by 63 of a sign-extended value is its sign fill (0 for uint8).

@_njit
def tl_lshift(a, b, bits):
    ok = b >= 0 and b < bits
    r = np.int64(a) << np.int64(b if ok else 0)
    return r if ok else r - r


@_njit
def tl_rshift(a, b, bits):
    ok = b >= 0 and b < bits
    return np.int64(a) >> np.int64(b if ok else 63)


# ----- special functions and activations -----

@_njit
def tl_lgamma(x):
    return math.lgamma(x)


@_njit
def tl_log_sigmoid(x):
    return min(x, 0.0) - math.log1p(math.exp(-abs(x))) if x == x else x


_ZERO = np.float32(0.0)


@_njit
def tl_log_sigmoid_f32(x):
    m = x if x < _ZERO else _ZERO
    return x if x != x else m - tl_log1p_f32(tl_exp_f32(-abs(x)))


__all__ = [name for name in dir() if name.startswith("tl_")]
