"""More elementwise ops (pow, casts, inverse hyperbolics, erfinv): ``elementwise(...)`` entries as in
``elementwise.py`` (which is at the module-size limit), with the same conventions: the numpy
ref computes in the compute dtype, Numba templates call ``tl_<name>_f32`` helpers for float32
(``cpu_backend/scalar_math.py``), CUDA templates call ``prelude.cuh``'s ``tl_<name>``.
"""
from __future__ import annotations

import math
import numbers

import numpy as np

from ..errors import ExecutionError
from .elementwise_base import compute_dtype_of, elementwise, pick_template

# ----- pow -----
#
# A float tensor to a constant exponent computes as PyTorch's pow.Tensor_Scalar kernel does
# (ATen PowKernel.cpp): 0 -> 1 and 1 -> a copy (pow_out), 0.5 -> sqrt, -0.5 -> rsqrt,
# -1 -> reciprocal, 2 / 3 / -2 -> products in the tensor's dtype; anything else is pow.  The
# products are exact PyTorch results (a float64 pow rounded to float32 can differ by an ulp),
# and they are what makes ``x ** 3`` in gelu_tanh a couple of float32 multiplies in the
# generated loop instead of a pow call.  The interpreter (``_pow``) and both code generators
# (``_t_pow``, which sees constant operands' values) share the table.

_POW_FORMS = {  # exponent -> (ref(xp, a), Numba template, CUDA C template)
    0: (lambda xp, a: xp.ones_like(a), "np.{T}(1)", "({T})1"),
    1: (lambda xp, a: a.copy(), "{self}", "{self}"),
    2: (lambda xp, a: a * a, "{self} * {self}", "{self} * {self}"),
    3: (lambda xp, a: a * a * a, "{self} * {self} * {self}", "{self} * {self} * {self}"),
    -1: (lambda xp, a: 1 / a, "np.{T}(1) / {self}", "({T})1 / {self}"),
    -2: (lambda xp, a: 1 / (a * a), "np.{T}(1) / ({self} * {self})", "({T})1 / ({self} * {self})"),
    0.5: (lambda xp, a: xp.sqrt(a), "np.sqrt({self})", "tl_sqrt({self})"),
    -0.5: (lambda xp, a: 1 / xp.sqrt(a), "np.{T}(1) / np.sqrt({self})", "tl_rsqrt({self})"),
}


def _pow_form(a, b):
    """The ``_POW_FORMS`` row for a float base and a constant Python-number exponent, or None."""
    if (isinstance(b, numbers.Real) and not isinstance(b, bool)
            and getattr(a, "dtype", None) is not None and a.dtype.kind == "f"):
        return _POW_FORMS.get(b)
    return None


def _pow(xp, a, b):
    form = _pow_form(a, b)
    if form is not None:
        return form[0](xp, a)
    if a.dtype.kind not in "iu":
        return xp.power(a, b)
    neg = b < 0
    r = xp.power(a, xp.where(neg, 0, b).astype(a.dtype, copy=False))
    if bool(neg.any()):  # 1 ** -n = 1, (-1) ** -n = +-1, anything else ** -n = 0 (PyTorch)
        odd = (b % 2) != 0
        special = xp.where(a == 1, 1, xp.where(a == -1, xp.where(odd, -1, 1), 0))
        r = xp.where(neg, special.astype(a.dtype), r)
    return r


def _pow_check(operands, attrs):
    base, exp = operands
    if (getattr(base, "dtype", None) is not None and base.dtype.kind in "iub"
            and isinstance(exp, int) and not isinstance(exp, bool) and exp < 0):
        raise ExecutionError("Integers to negative integer powers are not allowed.")


def _t_pow(language, general):
    """The pow template: a ``_POW_FORMS`` form for a float compute dtype and a constant
    exponent, else ``general`` (a dtype-keyed template)."""
    column = {"numba": 1, "cuda": 2}[language]

    def template(dt, consts):
        e = consts.get("exponent")
        if (dt in ("float16", "bfloat16", "float32", "float64") and isinstance(e, numbers.Real)
                and not isinstance(e, bool) and e in _POW_FORMS):
            return _POW_FORMS[e][column]
        return pick_template(general, dt, consts)
    return template


elementwise("aten::pow", "Tensor self, Tensor exponent", ref=_pow, precheck=_pow_check,
            checked_scalars=("exponent",),
            scalar_out="float64", dtypes="number",
            numba=_t_pow("numba", {"float32": "tl_pow_f32({self}, {exponent})",
                                   "float": "{self} ** {exponent}",
                                   "default": "tl_pow_int({self}, {exponent})"}),
            cuda=_t_pow("cuda", {"float": "tl_pow({self}, {exponent})",
                                 "default": "tl_pow_int({self}, {exponent})"}),
            aliases=("power",))

# ----- dtype conversions: aten::_cast_<Type>(self, non_blocking) -----
#
# What ``aten::to`` does with the dtype fixed: the operand is converted where every backend
# converts operands (``ops/casting.py``), and the op passes it through.

_CASTS = {"Byte": "uint8", "Char": "int8", "Short": "int16", "Int": "int32", "Long": "int64",
          "Half": "float16", "Float": "float32", "Double": "float64"}
for _type, _dtype in _CASTS.items():
    elementwise(f"aten::_cast_{_type}", "Tensor self, bool non_blocking=False",
                ref=lambda xp, a, non_blocking=False: a,
                dtype_rule=lambda infos, attrs, _d=_dtype: (compute_dtype_of(_d), _d),
                numba="{self}", cuda="{self}", python_name=None)

# ----- inverse hyperbolic functions -----

_INVERSE_HYPERBOLIC = [  # name, numpy function, numpy alias
    ("asinh", "arcsinh"),
    ("acosh", "arccosh"),
    ("atanh", "arctanh"),
]
for _name, _np_name in _INVERSE_HYPERBOLIC:
    elementwise(f"aten::{_name}", "Tensor self",
                ref=lambda xp, a, _n=_np_name: getattr(xp, _n)(a), dtype_rule="float",
                numba={"float32": f"tl_{_name}_f32({{self}})",
                       "default": f"np.{_np_name}({{self}})"},
                cuda=f"tl_{_name}({{self}})", aliases=(_np_name,))

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
