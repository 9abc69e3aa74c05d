"""More float math ops (inverse hyperbolics, erfinv): ``elementwise(...)`` entries as in
``elementwise.py`` (which is at the module-size limit), with the same conventions: the numpy
ref computes in the compute dtype, Numba templates call ``tl_<name>_f32`` helpers for float32
(``cpu_backend/scalar_math.py``), CUDA templates call ``prelude.cuh``'s ``tl_<name>``.
"""
from __future__ import annotations

import math

import numpy as np

from .elementwise_base import elementwise

# ----- inverse hyperbolic functions -----

_INVERSE_HYPERBOLIC = [  # name, numpy function, numpy alias
    ("asinh", "arcsinh"),
    ("acosh", "arccosh"),
    ("atanh", "arctanh"),
]
for _name, _np_name in _INVERSE_HYPERBOLIC:
    elementwise(f"aten::{_name}", "Tensor self",
                ref=lambda xp, a, _n=_np_name: getattr(xp, _n)(a), dtype_rule="float",
                numba=f"np.{_np_name}({{self}})", cuda=f"tl_{_name}({{self}})",
                aliases=(_np_name,))

# ----- special functions -----

# erfinv(a) / a as a polynomial in v = w - 2.5 (w = -log(1 - a^2) < 5, |a| < 0.99663) or in
# v = sqrt(w) - 3 (w >= 5; v = sqrt(w) - 5 for w >= 16, float64's tail), Giles' split ("Approximating the erfinv function", 2010), degree 5
# fits to 1.8e-5 / 6.4e-6 relative: the starting point for the Newton/Halley steps below and in
# cpu_backend/math_erf_f32.py (values that are float32 numbers, so both can use them).
ERFINV_CENTRAL = (1.5013878345489502, 0.24667689204216003, -0.004110071249306202,
                  -0.0012828752025961876, 0.00018807967717293650, 1.6018159272789489e-06)
ERFINV_TAIL = (2.8329918384552, 1.0017497539520264, 0.009109415113925934,
               -0.008202037028968334, 0.006961786746978760, -0.0028154113702476025)
ERFINV_FAR = (4.849906444549561, 1.0103003978729248, -0.00014150850684382021,  # float64 only:
              -0.00021468287741299719, 8.3566449757199734e-05, -2.0803599909413606e-05)
_VERF, _VERFC = np.frompyfunc(math.erf, 1, 1), np.frompyfunc(math.erfc, 1, 1)


def _erfinv64(x):
    """erfinv of a float64 array to ~1 ulp: the polynomial start and two Halley steps on
    math.erf (|x| < 0.5) or math.erfc against the exact 1 - |x| (erf(y) - x would lose the
    tail: erf(y) is within ulp(1) of 1 there)."""
    a = np.abs(x)
    with np.errstate(all="ignore"):
        g = -np.log((1.0 - a) * (1.0 + a))
        tail, far = g >= 5.0, g >= 16.0
        v = np.where(far, np.sqrt(g) - 5.0, np.where(tail, np.sqrt(g) - 3.0, g - 2.5))
        p = np.zeros_like(a)
        for cf, ct, cc in zip(ERFINV_FAR[::-1], ERFINV_TAIL[::-1], ERFINV_CENTRAL[::-1]):
            p = p * v + np.where(far, cf, np.where(tail, ct, cc))
        y = np.where(a < 1.0, a * p, 0.0)
        big = a >= 0.5
        for _ in range(2):
            f = np.empty_like(y)
            f[big] = (1.0 - a[big]) - _VERFC(y[big]).astype(np.float64)
            f[~big] = _VERF(y[~big]).astype(np.float64) - a[~big]
            u = f * (0.5 * math.sqrt(math.pi)) * np.exp(y * y)
            y = y - u / (1.0 + y * u)
        y = np.where(a == 1.0, np.inf, np.where(a < 1.0, y, np.nan))
    return np.copysign(y, x)


def _erfinv(xp, a):
    if xp is np:
        return _erfinv64(np.asarray(a, dtype=np.float64)).astype(a.dtype)
    import cupyx.scipy.special as sp  # pragma: no cover (GPU only)
    return sp.erfinv(a)


elementwise("aten::erfinv", "Tensor self", ref=_erfinv, dtype_rule="float",
            numba={"float32": "tl_erfinv_f32({self})", "default": "tl_erfinv({self})"},
            cuda="tl_erfinv({self})")
