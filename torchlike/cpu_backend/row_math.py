"""Row reductions for the fused reduction kernels (``row_codegen``): ``tl_rsum_<f>``,
``tl_rmax_<f>`` and ``tl_rmin_<f>`` over ``a[start:start + n]`` of a 1-D array, for float32
and float64 (float16 is reduced from a float32 buffer, as PyTorch accumulates it in float32).

With ``fastmath=False`` LLVM keeps a float reduction in source order and will not vectorize
``s += a[i]``.  These helpers keep 16 independent partial results (``s0 += a[b]``,
``s1 += a[b + 1]``, ...): the order is fixed (deterministic, the same on every call), and the
16 accumulators become vector registers.  Sums add each block of 4096 elements' total into a
float64 running sum, so the error grows with the block, not the row (PyTorch's cascade sum is
as accurate).  ``amax``/``amin`` propagate NaN as PyTorch does: any NaN makes the result NaN.

The text below is generated (16 accumulators written out: Numba unrolls nothing itself).
"""
import numba
import numpy as np

__all__ = ["tl_rsum_f32", "tl_rsum_f64", "tl_rmax_f32", "tl_rmax_f64", "tl_rmin_f32",
           "tl_rmin_f64"]


@numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
def tl_rsum_f32(a, start, n):
    """sum(a[start:start + n]) in float32: 16 strided partial sums over blocks of 4096 elements
    (each block's total added to a float64 running sum); the order is fixed, the loop vectorizes."""
    total = 0.0
    stop = start + n
    for c in range(start, stop, 4096):
        e = min(c + 4096, stop)
        nb = c + (e - c) // 16 * 16
        s0 = np.float32(0.0)
        s1 = np.float32(0.0)
        s2 = np.float32(0.0)
        s3 = np.float32(0.0)
        s4 = np.float32(0.0)
        s5 = np.float32(0.0)
        s6 = np.float32(0.0)
        s7 = np.float32(0.0)
        s8 = np.float32(0.0)
        s9 = np.float32(0.0)
        s10 = np.float32(0.0)
        s11 = np.float32(0.0)
        s12 = np.float32(0.0)
        s13 = np.float32(0.0)
        s14 = np.float32(0.0)
        s15 = np.float32(0.0)
        for b in range(c, nb, 16):
            s0 += a[b + 0]
            s1 += a[b + 1]
            s2 += a[b + 2]
            s3 += a[b + 3]
            s4 += a[b + 4]
            s5 += a[b + 5]
            s6 += a[b + 6]
            s7 += a[b + 7]
            s8 += a[b + 8]
            s9 += a[b + 9]
            s10 += a[b + 10]
            s11 += a[b + 11]
            s12 += a[b + 12]
            s13 += a[b + 13]
            s14 += a[b + 14]
            s15 += a[b + 15]
        for b in range(nb, e):
            s0 += a[b]
        total += ((((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))) + (((s8 + s9) + (s10 + s11)) + ((s12 + s13) + (s14 + s15))))
    return np.float32(total)

@numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
def tl_rmax_f32(a, start, n):
    """max(a[start:start + n]), NaN if any element is NaN (as torch.amax); -inf when n == 0.
    16 strided partial results, then combined."""
    stop = start + n
    nb = start + n // 16 * 16
    nan = False
    m0 = np.float32(-np.inf)
    m1 = np.float32(-np.inf)
    m2 = np.float32(-np.inf)
    m3 = np.float32(-np.inf)
    m4 = np.float32(-np.inf)
    m5 = np.float32(-np.inf)
    m6 = np.float32(-np.inf)
    m7 = np.float32(-np.inf)
    m8 = np.float32(-np.inf)
    m9 = np.float32(-np.inf)
    m10 = np.float32(-np.inf)
    m11 = np.float32(-np.inf)
    m12 = np.float32(-np.inf)
    m13 = np.float32(-np.inf)
    m14 = np.float32(-np.inf)
    m15 = np.float32(-np.inf)
    for b in range(start, nb, 16):
        x0 = a[b + 0]
        m0 = x0 if x0 > m0 else m0
        nan |= x0 != x0
        x1 = a[b + 1]
        m1 = x1 if x1 > m1 else m1
        nan |= x1 != x1
        x2 = a[b + 2]
        m2 = x2 if x2 > m2 else m2
        nan |= x2 != x2
        x3 = a[b + 3]
        m3 = x3 if x3 > m3 else m3
        nan |= x3 != x3
        x4 = a[b + 4]
        m4 = x4 if x4 > m4 else m4
        nan |= x4 != x4
        x5 = a[b + 5]
        m5 = x5 if x5 > m5 else m5
        nan |= x5 != x5
        x6 = a[b + 6]
        m6 = x6 if x6 > m6 else m6
        nan |= x6 != x6
        x7 = a[b + 7]
        m7 = x7 if x7 > m7 else m7
        nan |= x7 != x7
        x8 = a[b + 8]
        m8 = x8 if x8 > m8 else m8
        nan |= x8 != x8
        x9 = a[b + 9]
        m9 = x9 if x9 > m9 else m9
        nan |= x9 != x9
        x10 = a[b + 10]
        m10 = x10 if x10 > m10 else m10
        nan |= x10 != x10
        x11 = a[b + 11]
        m11 = x11 if x11 > m11 else m11
        nan |= x11 != x11
        x12 = a[b + 12]
        m12 = x12 if x12 > m12 else m12
        nan |= x12 != x12
        x13 = a[b + 13]
        m13 = x13 if x13 > m13 else m13
        nan |= x13 != x13
        x14 = a[b + 14]
        m14 = x14 if x14 > m14 else m14
        nan |= x14 != x14
        x15 = a[b + 15]
        m15 = x15 if x15 > m15 else m15
        nan |= x15 != x15
    for b in range(nb, stop):
        x = a[b]
        m0 = x if x > m0 else m0
        nan |= x != x
    if nan:
        return np.float32(np.nan)
    return max(max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7))), max(max(max(m8, m9), max(m10, m11)), max(max(m12, m13), max(m14, m15))))

@numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
def tl_rmin_f32(a, start, n):
    """min(a[start:start + n]), NaN if any element is NaN (as torch.amin); inf when n == 0.
    16 strided partial results, then combined."""
    stop = start + n
    nb = start + n // 16 * 16
    nan = False
    m0 = np.float32(np.inf)
    m1 = np.float32(np.inf)
    m2 = np.float32(np.inf)
    m3 = np.float32(np.inf)
    m4 = np.float32(np.inf)
    m5 = np.float32(np.inf)
    m6 = np.float32(np.inf)
    m7 = np.float32(np.inf)
    m8 = np.float32(np.inf)
    m9 = np.float32(np.inf)
    m10 = np.float32(np.inf)
    m11 = np.float32(np.inf)
    m12 = np.float32(np.inf)
    m13 = np.float32(np.inf)
    m14 = np.float32(np.inf)
    m15 = np.float32(np.inf)
    for b in range(start, nb, 16):
        x0 = a[b + 0]
        m0 = x0 if x0 < m0 else m0
        nan |= x0 != x0
        x1 = a[b + 1]
        m1 = x1 if x1 < m1 else m1
        nan |= x1 != x1
        x2 = a[b + 2]
        m2 = x2 if x2 < m2 else m2
        nan |= x2 != x2
        x3 = a[b + 3]
        m3 = x3 if x3 < m3 else m3
        nan |= x3 != x3
        x4 = a[b + 4]
        m4 = x4 if x4 < m4 else m4
        nan |= x4 != x4
        x5 = a[b + 5]
        m5 = x5 if x5 < m5 else m5
        nan |= x5 != x5
        x6 = a[b + 6]
        m6 = x6 if x6 < m6 else m6
        nan |= x6 != x6
        x7 = a[b + 7]
        m7 = x7 if x7 < m7 else m7
        nan |= x7 != x7
        x8 = a[b + 8]
        m8 = x8 if x8 < m8 else m8
        nan |= x8 != x8
        x9 = a[b + 9]
        m9 = x9 if x9 < m9 else m9
        nan |= x9 != x9
        x10 = a[b + 10]
        m10 = x10 if x10 < m10 else m10
        nan |= x10 != x10
        x11 = a[b + 11]
        m11 = x11 if x11 < m11 else m11
        nan |= x11 != x11
        x12 = a[b + 12]
        m12 = x12 if x12 < m12 else m12
        nan |= x12 != x12
        x13 = a[b + 13]
        m13 = x13 if x13 < m13 else m13
        nan |= x13 != x13
        x14 = a[b + 14]
        m14 = x14 if x14 < m14 else m14
        nan |= x14 != x14
        x15 = a[b + 15]
        m15 = x15 if x15 < m15 else m15
        nan |= x15 != x15
    for b in range(nb, stop):
        x = a[b]
        m0 = x if x < m0 else m0
        nan |= x != x
    if nan:
        return np.float32(np.nan)
    return min(min(min(min(m0, m1), min(m2, m3)), min(min(m4, m5), min(m6, m7))), min(min(min(m8, m9), min(m10, m11)), min(min(m12, m13), min(m14, m15))))

@numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
def tl_rsum_f64(a, start, n):
    """sum(a[start:start + n]) in float64: 16 strided partial sums over blocks of 4096 elements
    (each block's total added to a float64 running sum); the order is fixed, the loop vectorizes."""
    total = 0.0
    stop = start + n
    for c in range(start, stop, 4096):
        e = min(c + 4096, stop)
        nb = c + (e - c) // 16 * 16
        s0 = np.float64(0.0)
        s1 = np.float64(0.0)
        s2 = np.float64(0.0)
        s3 = np.float64(0.0)
        s4 = np.float64(0.0)
        s5 = np.float64(0.0)
        s6 = np.float64(0.0)
        s7 = np.float64(0.0)
        s8 = np.float64(0.0)
        s9 = np.float64(0.0)
        s10 = np.float64(0.0)
        s11 = np.float64(0.0)
        s12 = np.float64(0.0)
        s13 = np.float64(0.0)
        s14 = np.float64(0.0)
        s15 = np.float64(0.0)
        for b in range(c, nb, 16):
            s0 += a[b + 0]
            s1 += a[b + 1]
            s2 += a[b + 2]
            s3 += a[b + 3]
            s4 += a[b + 4]
            s5 += a[b + 5]
            s6 += a[b + 6]
            s7 += a[b + 7]
            s8 += a[b + 8]
            s9 += a[b + 9]
            s10 += a[b + 10]
            s11 += a[b + 11]
            s12 += a[b + 12]
            s13 += a[b + 13]
            s14 += a[b + 14]
            s15 += a[b + 15]
        for b in range(nb, e):
            s0 += a[b]
        total += ((((s0 + s1) + (s2 + s3)) + ((s4 + s5) + (s6 + s7))) + (((s8 + s9) + (s10 + s11)) + ((s12 + s13) + (s14 + s15))))
    return np.float64(total)

@numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
def tl_rmax_f64(a, start, n):
    """max(a[start:start + n]), NaN if any element is NaN (as torch.amax); -inf when n == 0.
    16 strided partial results, then combined."""
    stop = start + n
    nb = start + n // 16 * 16
    nan = False
    m0 = np.float64(-np.inf)
    m1 = np.float64(-np.inf)
    m2 = np.float64(-np.inf)
    m3 = np.float64(-np.inf)
    m4 = np.float64(-np.inf)
    m5 = np.float64(-np.inf)
    m6 = np.float64(-np.inf)
    m7 = np.float64(-np.inf)
    m8 = np.float64(-np.inf)
    m9 = np.float64(-np.inf)
    m10 = np.float64(-np.inf)
    m11 = np.float64(-np.inf)
    m12 = np.float64(-np.inf)
    m13 = np.float64(-np.inf)
    m14 = np.float64(-np.inf)
    m15 = np.float64(-np.inf)
    for b in range(start, nb, 16):
        x0 = a[b + 0]
        m0 = x0 if x0 > m0 else m0
        nan |= x0 != x0
        x1 = a[b + 1]
        m1 = x1 if x1 > m1 else m1
        nan |= x1 != x1
        x2 = a[b + 2]
        m2 = x2 if x2 > m2 else m2
        nan |= x2 != x2
        x3 = a[b + 3]
        m3 = x3 if x3 > m3 else m3
        nan |= x3 != x3
        x4 = a[b + 4]
        m4 = x4 if x4 > m4 else m4
        nan |= x4 != x4
        x5 = a[b + 5]
        m5 = x5 if x5 > m5 else m5
        nan |= x5 != x5
        x6 = a[b + 6]
        m6 = x6 if x6 > m6 else m6
        nan |= x6 != x6
        x7 = a[b + 7]
        m7 = x7 if x7 > m7 else m7
        nan |= x7 != x7
        x8 = a[b + 8]
        m8 = x8 if x8 > m8 else m8
        nan |= x8 != x8
        x9 = a[b + 9]
        m9 = x9 if x9 > m9 else m9
        nan |= x9 != x9
        x10 = a[b + 10]
        m10 = x10 if x10 > m10 else m10
        nan |= x10 != x10
        x11 = a[b + 11]
        m11 = x11 if x11 > m11 else m11
        nan |= x11 != x11
        x12 = a[b + 12]
        m12 = x12 if x12 > m12 else m12
        nan |= x12 != x12
        x13 = a[b + 13]
        m13 = x13 if x13 > m13 else m13
        nan |= x13 != x13
        x14 = a[b + 14]
        m14 = x14 if x14 > m14 else m14
        nan |= x14 != x14
        x15 = a[b + 15]
        m15 = x15 if x15 > m15 else m15
        nan |= x15 != x15
    for b in range(nb, stop):
        x = a[b]
        m0 = x if x > m0 else m0
        nan |= x != x
    if nan:
        return np.float64(np.nan)
    return max(max(max(max(m0, m1), max(m2, m3)), max(max(m4, m5), max(m6, m7))), max(max(max(m8, m9), max(m10, m11)), max(max(m12, m13), max(m14, m15))))

@numba.njit(cache=True, fastmath=False, error_model="numpy", nogil=True)
def tl_rmin_f64(a, start, n):
    """min(a[start:start + n]), NaN if any element is NaN (as torch.amin); inf when n == 0.
    16 strided partial results, then combined."""
    stop = start + n
    nb = start + n // 16 * 16
    nan = False
    m0 = np.float64(np.inf)
    m1 = np.float64(np.inf)
    m2 = np.float64(np.inf)
    m3 = np.float64(np.inf)
    m4 = np.float64(np.inf)
    m5 = np.float64(np.inf)
    m6 = np.float64(np.inf)
    m7 = np.float64(np.inf)
    m8 = np.float64(np.inf)
    m9 = np.float64(np.inf)
    m10 = np.float64(np.inf)
    m11 = np.float64(np.inf)
    m12 = np.float64(np.inf)
    m13 = np.float64(np.inf)
    m14 = np.float64(np.inf)
    m15 = np.float64(np.inf)
    for b in range(start, nb, 16):
        x0 = a[b + 0]
        m0 = x0 if x0 < m0 else m0
        nan |= x0 != x0
        x1 = a[b + 1]
        m1 = x1 if x1 < m1 else m1
        nan |= x1 != x1
        x2 = a[b + 2]
        m2 = x2 if x2 < m2 else m2
        nan |= x2 != x2
        x3 = a[b + 3]
        m3 = x3 if x3 < m3 else m3
        nan |= x3 != x3
        x4 = a[b + 4]
        m4 = x4 if x4 < m4 else m4
        nan |= x4 != x4
        x5 = a[b + 5]
        m5 = x5 if x5 < m5 else m5
        nan |= x5 != x5
        x6 = a[b + 6]
        m6 = x6 if x6 < m6 else m6
        nan |= x6 != x6
        x7 = a[b + 7]
        m7 = x7 if x7 < m7 else m7
        nan |= x7 != x7
        x8 = a[b + 8]
        m8 = x8 if x8 < m8 else m8
        nan |= x8 != x8
        x9 = a[b + 9]
        m9 = x9 if x9 < m9 else m9
        nan |= x9 != x9
        x10 = a[b + 10]
        m10 = x10 if x10 < m10 else m10
        nan |= x10 != x10
        x11 = a[b + 11]
        m11 = x11 if x11 < m11 else m11
        nan |= x11 != x11
        x12 = a[b + 12]
        m12 = x12 if x12 < m12 else m12
        nan |= x12 != x12
        x13 = a[b + 13]
        m13 = x13 if x13 < m13 else m13
        nan |= x13 != x13
        x14 = a[b + 14]
        m14 = x14 if x14 < m14 else m14
        nan |= x14 != x14
        x15 = a[b + 15]
        m15 = x15 if x15 < m15 else m15
        nan |= x15 != x15
    for b in range(nb, stop):
        x = a[b]
        m0 = x if x < m0 else m0
        nan |= x != x
    if nan:
        return np.float64(np.nan)
    return min(min(min(min(m0, m1), min(m2, m3)), min(min(m4, m5), min(m6, m7))), min(min(min(m8, m9), min(m10, m11)), min(min(m12, m13), min(m14, m15))))

