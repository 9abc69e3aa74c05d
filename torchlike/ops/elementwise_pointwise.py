"""The rest of PyTorch's pointwise ops (``torch.Tag.pointwise``): ``elementwise(...)`` entries
with the conventions of ``elementwise.py`` (numpy refs in the compute dtype, Numba templates
calling ``cpu_backend/scalar_math_pointwise.py``'s ``tl_*``, CUDA templates calling
``cuda_backend/prelude_pointwise.cuh``'s).  Each follows ATen's CPU kernel, checked against
PyTorch 2.13 over every dtype and special value (``tests/test_ops_elementwise.py``): dtype
promotion, which dtypes PyTorch refuses, integer wrap-around, NaN, +-inf and -0.0.

Ops whose code depends on more than the compute dtype see their dtypes (``sees_dtypes``, see
``elementwise_base``): nan_to_num (defaults are the *output* type's limits: float16's 65504),
logit with eps (float16 rounds eps and 1 - eps), nextafter (steps in the output type's ulps)
and ldexp (PyTorch's dtype cases, below).  The pointwise ops torchlike does not have, and why,
are listed in ``unsupported.py``.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import ExecutionError, UnsupportedOpError
from . import casting, special_math
from .dtypes import Priority, is_float, is_int, result_type, to_float
from .elementwise_base import compute_dtype_of, elementwise, rule_float, rule_same
from .registry import get


def _float_unary(name, ref, numba, cuda, **kw):
    """A float-valued unary op: ints and bools compute in float32, as PyTorch's do."""
    elementwise(f"aten::{name}", "Tensor self", ref=ref, dtype_rule="float", numba=numba,
                cuda=cuda, **kw)


def _pair(name):
    """The same helper call in Numba and CUDA C for every dtype."""
    return f"tl_{name}({{self}}, {{other}})"


# ----- identities, signs, angles -----

def _rule_positive(infos, attrs):
    if result_type(infos) == "bool":
        raise ExecutionError("The `+` operator, on a bool tensor is not supported.")
    return rule_same(infos, attrs)


elementwise("aten::positive", "Tensor self", ref=lambda xp, a: a, dtype_rule=_rule_positive,
            numba="{self}", cuda="{self}")
elementwise("aten::conj_physical", "Tensor self", ref=lambda xp, a: a, numba="{self}",
            cuda="{self}")
_SIGN = get("aten::sign")
elementwise("aten::sgn", "Tensor self", ref=_SIGN.ref, numba=_SIGN.templates["numba"],
            cuda=_SIGN.templates["cuda"])
_float_unary("angle", lambda xp, a: xp.where(a != a, a, xp.where(a < 0, a.dtype.type(math.pi),
                                                                  a.dtype.type(0))),
             "{self} if {self} != {self} else (np.{T}(3.141592653589793) if {self} < 0 "
             "else np.{T}(0))", "tl_angle({self})")
_float_unary("deg2rad", lambda xp, a: a * a.dtype.type(math.pi / 180),
             "{self} * np.{T}(0.017453292519943295)", "{self} * ({T})0.017453292519943295",
             aliases=("radians",))
_float_unary("rad2deg", lambda xp, a: a * a.dtype.type(180 / math.pi),
             "{self} * np.{T}(57.29577951308232)", "{self} * ({T})57.29577951308232",
             aliases=("degrees",))
elementwise("aten::copysign", "Tensor self, Tensor other",
            ref=lambda xp, a, b: xp.copysign(a, b), dtype_rule="float",
            numba="np.copysign({self}, {other})", cuda="tl_copysign({self}, {other})")
elementwise("aten::signbit", "Tensor self",
            ref=lambda xp, a: xp.signbit(a) if a.dtype.kind == "f" else a < 0,
            dtype_rule="compare", numba={"float": "np.signbit({self})", "bool": "False",
                                         "default": "{self} < 0"},
            cuda={"float": "tl_signbit({self})", "bool": "false",
                  "default": "tl_is_neg({self})"})

# ----- classification: bool results, every dtype (integers are finite) -----

_CLASSIFY = [  # name, float ref, integer/bool result, Numba float test, CUDA float test
    ("isfinite", lambda xp, a: xp.isfinite(a), True, "np.isfinite({self})", "isfinite({self})"),
    ("isinf", lambda xp, a: xp.isinf(a), False, "np.isinf({self})", "isinf({self})"),
    ("isposinf", lambda xp, a: a == np.inf, False, "{self} == np.inf", "tl_isposinf({self})"),
    ("isneginf", lambda xp, a: a == -np.inf, False, "{self} == -np.inf", "tl_isneginf({self})"),
]
for _name, _ref, _int, _numba, _cuda in _CLASSIFY:
    elementwise(f"aten::{_name}", "Tensor self", dtype_rule="compare",
                ref=lambda xp, a, _r=_ref, _i=_int: _r(xp, a) if a.dtype.kind == "f" else
                xp.full(a.shape, _i, dtype=bool),
                numba={"float": _numba, "default": str(_int)},
                cuda={"float": _cuda, "default": str(_int).lower()})

# ----- NaN-ignoring min/max, heaviside -----

# Not commutative: a tie keeps self (fmax(-0.0, 0.0) is -0.0), as ATen's
elementwise("aten::fmax", "Tensor self, Tensor other",
            ref=lambda xp, a, b: xp.where((a != a) | (b > a), b, a),
            numba="{other} if ({self} != {self}) or ({other} > {self}) else {self}",
            cuda="(tl_isnan({self}) || {other} > {self}) ? {other} : {self}")
elementwise("aten::fmin", "Tensor self, Tensor other",
            ref=lambda xp, a, b: xp.where((a != a) | (b < a), b, a),
            numba="{other} if ({self} != {self}) or ({other} < {self}) else {self}",
            cuda="(tl_isnan({self}) || {other} < {self}) ? {other} : {self}")


def _rule_heaviside(infos, attrs):
    # A Python scalar is a wrapped int64/double tensor to ATen: never the same dtype as float32
    own = {d if p != Priority.WRAPPED else "float64" if is_float(d) else
           "int64" if is_int(d) else d for d, p in infos}
    if len(own) > 1:
        raise ExecutionError("heaviside is not yet implemented for tensors with different "
                             "dtypes.")
    return rule_same(infos, attrs)


elementwise("aten::heaviside", "Tensor self, Tensor values",
            ref=lambda xp, a, v: xp.where(a == 0, v, (a > 0).astype(a.dtype)),
            dtype_rule=_rule_heaviside, numba="{values} if {self} == 0 else np.{T}({self} > 0)",
            cuda="{self} == ({T})0 ? {values} : ({T})({self} > ({T})0)")

# ----- integer number theory: C remainders, abs and products wrapping in the type -----


def _abs_wrap(xp, a):
    return xp.abs(a)  # numpy's abs wraps: abs(int8(-128)) is -128, as ATen's abs_impl


def _gcd(xp, a, b):
    a, b = _abs_wrap(xp, a), _abs_wrap(xp, b)
    while bool((a != 0).any()):
        nz = a != 0
        r = xp.fmod(b, xp.where(nz, a, 1))  # C's %, as ATen's loop computes it
        a, b = xp.where(nz, r, 0).astype(a.dtype), xp.where(nz, a, b)
    return b


def _lcm(xp, a, b):
    g = _gcd(xp, a, b)
    safe = xp.where(g == 0, 1, g)
    if a.dtype.itemsize < 4:  # a / g * b computes in C's int: abs there, then wraps
        t = xp.abs((a.astype(np.int32) // safe) * b.astype(np.int32)).astype(a.dtype)
    else:  # computes (and wraps) in the type itself, then abs wraps
        t = _abs_wrap(xp, (a // safe) * b)
    return xp.where(g == 0, 0, t).astype(a.dtype)


elementwise("aten::gcd", "Tensor self, Tensor other", ref=_gcd, dtypes="int",
            numba=_pair("gcd"), cuda=_pair("gcd"), commutative=True)
elementwise("aten::lcm", "Tensor self, Tensor other", ref=_lcm, dtypes="int",
            numba=_pair("lcm"), cuda=_pair("lcm"), commutative=True)

# ----- two-argument float functions -----


def _logaddexp(xp, a, b, exp, log1p_scale):
    m = xp.where(a < b, b, a)  # std::max: NaN in a is kept, NaN in b propagates below
    r = m + log1p_scale(xp.log1p(exp(-xp.abs(a - b))))
    return xp.where(xp.isinf(a) & (a == b), a, r)


_INV_LN2 = 1.4426950408889634
elementwise("aten::hypot", "Tensor self, Tensor other", ref=lambda xp, a, b: xp.hypot(a, b),
            dtypes="float", numba={"float32": "tl_hypot_f32({self}, {other})",
                                   "default": "np.hypot({self}, {other})"},
            cuda=_pair("hypot"), commutative=True)
elementwise("aten::logaddexp", "Tensor self, Tensor other", dtypes="float",
            ref=lambda xp, a, b: _logaddexp(xp, a, b, xp.exp, lambda v: v),
            numba={"float32": "tl_logaddexp_f32({self}, {other})",
                   "default": "tl_logaddexp({self}, {other})"},
            cuda=_pair("logaddexp"), commutative=True)
elementwise("aten::logaddexp2", "Tensor self, Tensor other", dtypes="float",
            ref=lambda xp, a, b: _logaddexp(xp, a, b, xp.exp2,
                                            lambda v: v * v.dtype.type(_INV_LN2)),
            numba={"float32": "tl_logaddexp2_f32({self}, {other})",
                   "default": "tl_logaddexp2({self}, {other})"},
            cuda=_pair("logaddexp2"), commutative=True)


def _xlog(log):
    """xlogy / xlog1py: nan where y is nan, else 0 where x == 0, else x * log(y)."""
    def ref(xp, x, y):
        return xp.where(y != y, y, xp.where(x == 0, x.dtype.type(0), x * getattr(xp, log)(y)))
    return ref


for _name, _log in (("xlogy", "log"), ("special_xlog1py", "log1p")):
    _helper = _name.replace("special_", "")
    elementwise(f"aten::{_name}", "Tensor self, Tensor other", ref=_xlog(_log),
                dtype_rule="float", numba={"float32": f"tl_{_helper}_f32({{self}}, {{other}})",
                                           "default": f"tl_{_helper}({{self}}, {{other}})"},
                cuda=f"tl_{_helper}({{self}}, {{other}})")

# ----- nextafter and ldexp: they depend on the operands' own dtypes -----


def _nextafter(xp, a, b, dtypes):
    if dtypes.out == "float16":  # steps of float16, not of the float32 it computes in
        r = xp.nextafter(a.astype(np.float16), b.astype(np.float16)).astype(a.dtype)
        return xp.where(a == b, b, r)  # C's nextafter gives y when x == y (numpy's half: x)
    return xp.nextafter(a, b)


def _t_nextafter(language):
    def template(dt, attrs):
        out = attrs["dtypes"].out if attrs.get("dtypes") else dt
        if out in ("float16", "bfloat16"):
            return f"tl_nextafter_{'f16' if out == 'float16' else 'bf16'}({{self}}, {{other}})"
        return "np.nextafter({self}, {other})" if language == "numba" else _pair("nextafter")
    return template


elementwise("aten::nextafter", "Tensor self, Tensor other", ref=_nextafter, dtypes="float",
            sees_dtypes=True, numba=_t_nextafter("numba"), cuda=_t_nextafter("cuda"))

# ldexp(self, other) is ATen's ldexp: a float self with an integer other is std::ldexp, exact
# (a bool other has no kernel there); otherwise self * 2 ** other, where the power is computed in the dtype
# ATen's _pow2 gives it -- pow(2.0, other) for an int/bool/float32 self (other's float dtype,
# else float32), else a 0-d tensor of self's dtype to the power other -- and rounded to it
# (2 ** 16 is inf in float16) before the product in the result dtype.


def _ldexp_power_dtype(dtypes) -> str:
    (sdt, sprio), (odt, oprio) = dtypes.operands
    if not is_float(sdt) or sdt == "float32":
        return to_float(result_type([("float32", Priority.WRAPPED), (odt, oprio)]))
    return result_type([(sdt, Priority.ZERO_DIM), (odt, oprio)])


def _ldexp_exact(dtypes) -> bool:
    (sdt, _), (odt, _) = dtypes.operands
    return is_float(sdt) and is_int(odt)


_LDEXP_RANGE = 2000  # |exponent| beyond this saturates every float type (exponents are ints)


def _ldexp(xp, a, b, dtypes):
    if _ldexp_exact(dtypes):
        return xp.ldexp(a, xp.clip(b, -_LDEXP_RANGE, _LDEXP_RANGE).astype(np.int32))
    power = _ldexp_power_dtype(dtypes)  # 2 ** other in float32 for the half types
    p = xp.exp2(b.astype(compute_dtype_of(power))).astype(power).astype(a.dtype)
    return a * p


def _t_ldexp(language):
    def template(dt, attrs):
        dtypes = attrs.get("dtypes")
        if dtypes is None or _ldexp_exact(dtypes):
            return "tl_ldexp_f32({self}, {other})" if dt == "float32" and language == "numba" \
                else "tl_ldexp({self}, {other})"
        power = _ldexp_power_dtype(dtypes)
        pc = compute_dtype_of(power)
        if language == "numba":
            p = "tl_exp2_f32(np.float32({other}))" if pc == "float32" else \
                "np.exp2(np.float64({other}))"
            p = f"_f16_round({p})" if power == "float16" else p
            return f"{{self}} * np.{dt}({p})"
        p = f"tl_exp2(({pc}){{other}})"
        p = {"float16": f"tl_round_half({p})", "bfloat16": f"tl_round_bf16({p})"}.get(power, p)
        return f"{{self}} * ({dt})({p})"
    return template


def _rule_ldexp(infos, attrs):
    if len(infos) == 2 and is_float(infos[0][0]) and infos[1][0] == "bool":
        raise UnsupportedOpError("ldexp of a float tensor by a bool exponent is not implemented "
                                 "(PyTorch has no such kernel either)")
    return rule_float(infos, attrs)


elementwise("aten::ldexp", "Tensor self, Tensor other", ref=_ldexp, dtype_rule=_rule_ldexp,
            sees_dtypes=True, numba=_t_ldexp("numba"), cuda=_t_ldexp("cuda"))

# ----- nan_to_num and logit: constants in the output type -----


def _limits(dtype: str):
    """(max, lowest) finite values of a float dtype (bfloat16 has float32's exponent)."""
    big = {"float16": 65504.0, "bfloat16": 3.3895313892515355e38,
           "float32": float(np.finfo(np.float32).max), "float64": float(np.finfo(np.float64).max)}
    return big[dtype], -big[dtype]


def _nan_to_num(xp, a, nan=None, posinf=None, neginf=None, dtypes=None):
    if a.dtype.kind != "f":
        return a.copy()
    hi, lo = _limits(dtypes.out)
    pos = a.dtype.type(hi if posinf is None else posinf)
    neg = a.dtype.type(lo if neginf is None else neginf)
    r = xp.where(a == np.inf, pos, xp.where(a == -np.inf, neg, a))
    return xp.where(a != a, a.dtype.type(0.0 if nan is None else nan), r)


def _t_nan_to_num(language):
    lit = "np.{T}(%r)" if language == "numba" else "({T})(%r)"

    def template(dt, attrs):
        if not is_float(dt):
            return "{self}"
        out = attrs["dtypes"].out if attrs.get("dtypes") else dt
        hi, lo = _limits(out)
        args = [f"{{{name}}}" if attrs.get(name, 0) is not None else lit % default
                for name, default in (("nan", 0.0), ("posinf", hi), ("neginf", lo))]
        return f"tl_nan_to_num({{self}}, {', '.join(args)})"
    return template


elementwise("aten::nan_to_num", "Tensor self, float? nan=None, float? posinf=None, "
            "float? neginf=None", ref=_nan_to_num, sees_dtypes=True,
            numba=_t_nan_to_num("numba"), cuda=_t_nan_to_num("cuda"))


def _logit_bounds(eps: float, out: str):
    """(lo, hi) = (eps, 1 - eps) as ATen computes them in the output type."""
    lo = casting.round_float(eps, out)
    return lo, casting.round_float(1.0 - lo, out)


def _logit(xp, a, eps=None, dtypes=None):
    if eps is not None:
        lo, hi = (a.dtype.type(v) for v in _logit_bounds(eps, dtypes.out))
        a = xp.where(a < lo, lo, xp.where(a > hi, hi, a))
    return xp.log(a / (1 - a))


def _t_logit(language):
    def template(dt, attrs):
        log = "tl_log_f32" if dt == "float32" and language == "numba" else \
            "np.log" if language == "numba" else "tl_log"
        one = "np.{T}(1)" if language == "numba" else "({T})1"
        if "eps" in attrs and attrs["eps"] is None:
            return f"{log}({{self}} / ({one} - {{self}}))"
        out = attrs["dtypes"].out if attrs.get("dtypes") else dt
        if out in ("float16", "bfloat16"):
            if "eps" not in attrs:
                return None  # a runtime eps: rounded as the half type only by the interpreter
            lo, hi = _logit_bounds(attrs["eps"], out)
            bounds = f"np.float32({lo!r}), np.float32({hi!r})" if language == "numba" else \
                f"(float32){lo!r}, (float32){hi!r}"
            return f"tl_logit_clamped({{self}}, {bounds})"
        return f"tl_logit_clamped({{self}}, {{eps}}, {one} - {{eps}})"
    return template


elementwise("aten::logit", "Tensor self, float? eps=None", ref=_logit, dtype_rule="float",
            sees_dtypes=True, numba=_t_logit("numba"), cuda=_t_logit("cuda"))

# ----- special functions (ATen's Math.h formulas; special_math.py) -----


def _sinc(xp, a):
    p = a * a.dtype.type(math.pi)  # the product in the compute dtype, as ATen's
    return xp.where(a == 0, a.dtype.type(1), xp.sin(p) / p)


def _entr(xp, a):
    r = xp.where(a > 0, -a * xp.log(a), xp.where(a == 0, a.dtype.type(0), -np.inf))
    return xp.where(a != a, a, r)


_float_unary("sinc", _sinc, "tl_sinc({self}, np.{T}(3.141592653589793))", "tl_sinc({self})")
_float_unary("special_entr", _entr, {"float32": "tl_entr_f32({self})",
                                     "default": "tl_entr({self})"}, "tl_entr({self})")
for _name, _fn, _f32 in (("digamma", special_math.digamma, False),
                         ("i0", special_math.i0, True), ("special_i0e", special_math.i0e, False),
                         ("special_i1", special_math.i1, True),
                         ("special_i1e", special_math.i1e, False)):
    _helper = _name.replace("special_", "")
    _numba = {"float32": f"tl_{_helper}_f32({{self}})", "default": f"tl_{_helper}({{self}})"} \
        if _f32 else f"tl_{_helper}({{self}})"  # i0, i1: exp in float32, overflowing as ATen's
    _float_unary(_name, lambda xp, a, _f=_fn: _f(xp, a), _numba, f"tl_{_helper}({{self}})")
