"""Special functions and math ops PyTorch prints, as ATen computes them (``ATen/native/Math.h``:
Cephes, SciPy, Faddeeva, Boost)::

    graph(%x : Tensor, %a : Tensor):
      %2 : int = prim::Constant[value=2]()
      %p : Tensor = aten::special_ndtr(%x)
      %q : Tensor = aten::polygamma(%2, %x)
      %r : Tensor = aten::igammac(%a, %x)
      %m : Tensor, %e : Tensor = aten::frexp(%x)
      return (%p, %q, %r, %m, %e)

``special_ndtr`` and ``float_power`` have kernel templates over existing helpers: they fuse.  The
others loop per element or need tables no kernel helper has: ``_interpreted`` gives them the
elementwise semantics (promotion, Python scalars, PyTorch's refusals) but ``category="other"``,
which the partitioner never fuses.  TorchScript prints ``special_softmax`` as ``softmax`` &c.;
``KIND_ALIASES`` resolves such spellings in hand-written graphs.  PyTorch's float32 kernels
compute in float and land up to thousands of ulp off the true values (erfcx(-9), trigamma of
negative x, igamma's tails), so these run in the compute dtype's own arithmetic, libm's functions
rounded once (``_libm``), to follow PyTorch (tests/test_special_more.py measures how closely);
float16 computes in float32, rounding between steps only where PyTorch does (``_steps``).
"""
from __future__ import annotations

import ctypes
import ctypes.util
import functools
import math

import numpy as np

from ..errors import ExecutionError, UnsupportedOpError
from ..ir.types import BOOL, DTYPE_TO_SCALAR_NAME, FLOAT, INT, TensorType
from .dtypes import Priority, is_float, result_type, to_float
from .elementwise_base import elementwise
from .elementwise_math import _POW_FORMS
from .registry import KIND_ALIASES, defop, get
from .tensor_common import broadcast_shapes, like

KIND_ALIASES.update({f"aten::{alias}": f"aten::{name}" for alias, name in (
    ("special_softmax", "softmax"), ("special_log_softmax", "log_softmax"),
    ("special_logsumexp", "logsumexp"), ("special_multigammaln", "mvlgamma"),
    ("special_polygamma", "polygamma"), ("special_gammainc", "igamma"),
    ("special_gammaincc", "igammac"))})

F32, F64 = np.float32, np.float64
_SQRT1_2, _ISPI = 0.7071067811865476, 0.5641895835477563  # 1 / sqrt(2), 1 / sqrt(pi)
_MACHEP = {F32: 5.9604644775390625e-8, F64: 1.1102230246251565e-16}


def _libm(fn):
    """``fn`` in its first operand's float type: computed in float64, rounded once."""
    return lambda *vs: fn(*(np.asarray(v, F64) for v in vs)).astype(vs[0].dtype)


_exp, _log, _log1p, _expm1, _sqrt, _sin, _pow = (_libm(f) for f in (
    np.exp, np.log, np.log1p, np.expm1, np.sqrt, np.sin, np.power))
_erf, _erfc, _LGAMMA = (get(f"aten::{n}").ref for n in ("erf", "erfc", "lgamma"))
try:  # libm's lgamma, PyTorch's for double (math.lgamma is 1e-11 off near 1 and 2)
    _C_LGAMMA = ctypes.CDLL(ctypes.util.find_library("m")).lgamma
    _C_LGAMMA.restype, _C_LGAMMA.argtypes = ctypes.c_double, [ctypes.c_double]
    _C_LGAMMA = np.frompyfunc(_C_LGAMMA, 1, 1)
except (OSError, AttributeError):  # no C library to call: math.lgamma's values
    _C_LGAMMA = None


def _lgamma(a):
    """lgamma in a's type: libm's for float64, else math.lgamma rounded once (PyTorch's float32
    lgamma is closer to that than to libm's lgammaf)."""
    if a.dtype == F64 and _C_LGAMMA is not None:
        return np.asarray(_C_LGAMMA(a), F64)
    return _LGAMMA(np, a)


# C's coefficient tables (ATen's values): "NAME: v v ...;"
_C = {k.strip(): tuple(map(float, v.split())) for k, v in (t.split(":") for t in """
NDTRI_P0: -59.96335010141079 98.00107541859997 -56.67628574690703 13.931260938727968
-1.2391658386738125; NDTRI_Q0: 1 1.9544885833814176 4.676279128988815 86.36024213908905
-225.46268785411937 200.26021238006066 -82.03722561683334 15.90562251262117 -1.1833162112133;
NDTRI_P1: 4.0554489230596245 31.525109459989388 57.16281922464213 44.08050738932008
14.684956192885803 2.1866330685079025 -0.1402560791713545 -0.03504246268278482
-8.574567851546854e-4; NDTRI_Q1: 1 15.779988325646675 45.39076351288792 41.3172038254672
15.04253856929075 2.504649462083094 -0.14218292285478779 -0.03808064076915783
-9.332594808954574e-4; NDTRI_P2: 3.2377489177694603 6.915228890689842 3.9388102529247444
1.3330346081580755 0.20148538954917908 0.012371663481782003 3.0158155350823543e-4
2.6580697468673755e-6 6.239745391849833e-9; NDTRI_Q2: 1 6.02427039364742 3.6798356385616087
1.3770209948908132 0.21623699359449663 0.013420400608854318 3.2801446468212774e-4
2.8924786474538068e-6 6.790194080099813e-9; LANCZOS_NUM: 0.006061842346248907 0.5098416655656676
19.519927882476175 449.9445569063168 6955.999602515376 75999.29304014542 601859.6171681099
3481712.154980646 14605578.087685067 43338889.32467614 86363131.2881386 103794043.11634454
56906521.913471565; LANCZOS_DEN: 1 66 1925 32670 357423 2637558 13339535 45995730 105258076
150917976 120543840 39916800 0; ZETA_A: 12 -720 30240 -1209600 47900160 -1892437580.3183792
74724249600 -2950130727918.164 116467828143500.67 -4597978722407473 1.8152105401943546e17
-7.166165256175667e18""".rstrip(";").split(";"))}


def _horner(y, coeffs):
    """Cephes' polevl: coefficients highest order first, each in y's dtype (as C's tables)."""
    r = np.full_like(y, coeffs[0])
    for c in coeffs[1:]:
        r = r * y + y.dtype.type(c)
    return r


def _until(step, state, limit):
    """C's per-element ``for (i = 0; i < limit; i++) {...; if (done) break;}`` on 1-D arrays:
    ``step(i, state)`` updates the state dict, returns which elements leave; only those still
    running are computed.  Returns the state as each element left it."""
    out = {k: v.copy() for k, v in state.items()}
    idx = np.arange(len(next(iter(state.values()))))
    for i in range(limit):
        if not idx.size:
            break
        done = step(i, state)
        if done.any():
            for k, v in state.items():
                out[k][idx[done]] = v[done]
            idx = idx[~done]
            state = {k: v[~done] for k, v in state.items()}
    for k, v in state.items():
        out[k][idx] = v
    return out


def _steps(dtypes):
    """Rounds between steps that PyTorch computes as separate float16 tensor ops."""
    if dtypes is not None and dtypes.out == "float16":
        return lambda v: v.astype(np.float16).astype(F32)
    return lambda v: v


def _rule(kernel, ints=True, half=True, bools=True):
    """Float results: integers and bools compute in float32 unless ``ints`` is False, the half
    types only with ``half`` (else PyTorch's NotImplementedError, worded as its dispatch's)."""
    def rule(infos, attrs):
        dt = result_type(infos)
        if not bools and dt == "bool":  # mvlgamma's check
            raise ExecutionError("The input tensor may not be a boolean tensor.")
        if not ints and not is_float(dt) or not half and to_float(dt) in ("float16", "bfloat16"):
            raise UnsupportedOpError(f'"{kernel}" not implemented for '
                                     f"'{DTYPE_TO_SCALAR_NAME[dt]}'")
        return to_float(dt), to_float(dt)
    return rule


_SCALARS = {INT: "int64", FLOAT: "float64", BOOL: "bool"}


def _raise(message):
    raise ExecutionError(message)


def _infer(op):
    """An elementwise op's output type (shape inference infers elementwise entries only)."""
    def infer(node, types):
        ts = [t for p, t in zip(op.params, types) if p.is_operand]
        tensors = [t for t in ts if isinstance(t, TensorType)]
        if not tensors or any(t.dtype is None or t.shape is None for t in tensors):
            return None
        infos = [(t.dtype, Priority.DIM if t.shape else Priority.ZERO_DIM)
                 if isinstance(t, TensorType) else (_SCALARS[t], Priority.WRAPPED) for t in ts]
        shape = functools.reduce(broadcast_shapes, [t.shape for t in tensors], ())
        return [like(tensors[0], op.dtype_rule(infos, {})[1], shape)]
    return infer


def _interpreted(name, schema, ref, rule, **kw):
    """An elementwise op without kernel templates, kept out of fusion (see the docstring); its
    numpy code runs on the host (CuPy operands are copied there and back)."""
    def host(xp, *args, **kws):
        if xp is np:
            return ref(*args, **kws)
        return xp.asarray(ref(*[xp.asnumpy(a) if hasattr(a, "device") else a for a in args],
                              **kws))
    if "check" in kw:  # (attribute, test, PyTorch's message)
        attr, test, message = kw.pop("check")
        kw["precheck"] = lambda operands, attrs: test(attrs[attr]) or _raise(message)
    op = elementwise(name, schema, host, dtype_rule=rule, **kw)
    op.category, op.infer = "other", _infer(op)
    return op


# ----- special_ndtr and float_power: fused -----

def _ndtr(xp, a, dtypes=None):
    # ATen's special_ndtr is (1 + erf(x * M_SQRT1_2)) * 0.5, tensor ops in x's dtype (float16
    # rounds after each), not 0.5 erfc(-x / sqrt 2): 0 below -5.9 (float32), -8.3 (float64)
    r = _steps(dtypes)
    e = r(_erf(xp, r(a * a.dtype.type(_SQRT1_2))))
    return r(1 + e) * a.dtype.type(0.5)


def _t_ndtr(language):
    def template(dt, attrs):
        half = attrs.get("dtypes") is not None and attrs["dtypes"].out == "float16"
        if language == "numba":
            r = "_f16_round({})" if half else "{}"
            erf = "tl_erf_f32" if dt == "float32" else "tl_erf"
            z = r.format(f"{{self}} * np.{{T}}({_SQRT1_2!r})")
            return f"({r.format('np.{T}(1) + ' + r.format(f'{erf}({z})'))}) * np.{{T}}(0.5)"
        r = "tl_round_half({})" if half else "{}"
        z = r.format(f"{{self}} * ({{T}}){_SQRT1_2!r}")
        return f"({r.format('({T})1 + ' + r.format(f'tl_erf({z})'))}) * ({{T}})0.5"
    return template


elementwise("aten::special_ndtr", "Tensor self", ref=_ndtr, dtype_rule="float", sees_dtypes=True,
            numba=_t_ndtr("numba"), cuda=_t_ndtr("cuda"))


def _float_power(xp, a, b, dtypes=None):
    # pow(self.double(), exponent.double()): a Python-number exponent is pow.Tensor_Scalar, with
    # its forms (0.5 -> sqrt: nan at -inf where pow gives inf), a tensor one plain pow (numpy's
    # power takes the forms for any 0-d exponent, so it is given a full array)
    if dtypes is not None and dtypes.operands[1][1] == Priority.WRAPPED and b.ndim == 0 \
            and float(b) in _POW_FORMS:
        return _POW_FORMS[float(b)][0](xp, a)
    a, b = xp.broadcast_arrays(a, b)
    return xp.power(a, xp.array(b))


_POW = get("aten::pow")  # its templates: the same forms for constant exponents
elementwise("aten::float_power", "Tensor self, Tensor exponent", ref=_float_power,
            dtype_rule=lambda infos, attrs: ("float64", "float64"), sees_dtypes=True,
            numba=_POW.templates["numba"], cuda=_POW.templates["cuda"])

# ----- erfcx, log_ndtr, ndtri -----


def _erfcx_table(y):
    """erfcx(y) for 0 <= y <= 50 in float64, where ATen evaluates Faddeeva's 100 Chebyshev
    pieces: below 10 exp(y^2) erfc(y) with y^2 split exactly (exp of a rounded y^2 is y^2 ulp
    off), above the asymptotic series sum (-1)^k (2k-1)!! / (2y^2)^k / (y sqrt(pi))."""
    hi = y * y
    c = y * 134217729.0  # Dekker's split: y = yh + yl, each of half the bits
    yh = c - (c - y)
    yl = y - yh
    lo = ((yh * yh - hi) + 2 * yh * yl) + yl * yl
    near = np.exp(hi) * (1 + lo) * _erfc(np, y)
    inv, term, far = 0.5 / hi, np.ones_like(y), np.ones_like(y)
    for k in range(1, 20):
        term = term * -(2 * k - 1) * inv
        far = far + term
    return np.where(y < 10, near, far * _ISPI / np.where(y < 10, 1.0, y))


def _erfcx(x):
    """ATen's calc_erfcx in x's dtype: a continued fraction above 50, 1 / (x sqrt(pi)) above
    5e7; below 0 2 exp(x*x) - erfcx(-x), x*x rounded (PyTorch's float32 erfcx(-9) is 60 ulp off
    the true value), only 2 exp(x*x) below -6.1, inf below -26.7."""
    T, x64 = x.dtype.type, x.astype(F64)
    xx = x * x
    x2 = xx.astype(F64)  # the fraction's double literals promote the rest to double
    cf = (T(_ISPI) * (x2 * (x2 + 4.5) + 2) / (x64 * (x2 * (x2 + 5) + 3.75))).astype(T)
    pos = np.where(x64 > 5e7, T(_ISPI) / x, np.where(
        x64 > 50, cf, _erfcx_table(np.clip(x64, 0, 50)).astype(T)))
    e2 = 2 * _exp(xx)
    neg = np.where(x64 < -26.7, T(np.inf), np.where(
        x64 < -6.1, e2, e2 - _erfcx_table(np.clip(-x64, 0, 50)).astype(T)))
    return np.where(x != x, x, np.where(x >= 0, pos, neg))


def _log_ndtr(x):
    """ATen's calc_log_ndtr in x's dtype: log(erfcx(-t) / 2) - t*t below -1, t = x / sqrt 2."""
    t = x * x.dtype.type(_SQRT1_2)
    return np.where(x < -1, _log(_erfcx(-t) / 2) - t * t, _log1p(-_erfc(np, t) / 2))


def _ndtri(y0):
    """Cephes ndtri (ATen's calc_ndtri) in y0's dtype: a rational function of y - 1/2 in the
    middle, of 1 / sqrt(-2 log y) in the tails (split at exp(-32))."""
    T, c = y0.dtype.type, _C
    upper = y0 > T(1) - T(0.1353352832366127)  # 1 - exp(-2)
    y = np.where(upper, T(1) - y0, y0)
    m = y - T(0.5)
    m2 = m * m
    middle = (m + m * (m2 * _horner(m2, c["NDTRI_P0"]) / _horner(m2, c["NDTRI_Q0"]))) \
        * T(2.5066282746310002)
    x = _sqrt(T(-2) * _log(y))
    z = T(1) / x
    x1 = np.where(x < 8, z * _horner(z, c["NDTRI_P1"]) / _horner(z, c["NDTRI_Q1"]),
                  z * _horner(z, c["NDTRI_P2"]) / _horner(z, c["NDTRI_Q2"]))
    tail = (x - _log(x) / x) - x1
    out = np.where(y > T(0.1353352832366127), middle, np.where(upper, tail, -tail))
    out = np.where((y0 < 0) | (y0 > 1), T(np.nan), out)
    return np.where(y0 == 0, T(-np.inf), np.where(y0 == 1, T(np.inf), out))


for _name, _fn in (("erfcx", _erfcx), ("log_ndtr", _log_ndtr), ("ndtri", _ndtri)):
    _interpreted(f"aten::special_{_name}", "Tensor self", _fn, _rule(f"{_name}_cpu", half=False))

# ----- Hurwitz zeta, polygamma, mvlgamma -----


def _zeta(x, q, acc=F64):
    """Cephes zeta in ATen's accumulation type ``acc`` (double for float and double, float for
    half): the sum of (q + i)^-x until a term is below MACHEP of it (at least 9 terms, up to
    q + i > 9), then Euler-Maclaurin.  Returns float64 holding ``acc`` values."""
    shape, eps = np.broadcast_shapes(np.shape(x), np.shape(q)), _MACHEP[F64]
    x, q = (np.array(v).ravel() for v in np.broadcast_arrays(x, q))
    first = _pow(q, -x).astype(acc)  # std::pow of the operands' own type: float for float
    x, q = x.astype(acc), q.astype(acc)
    early = (x == 1) | (x < 1)  # inf, nan
    qneg = ~early & (q <= 0)
    pole = qneg & (q == np.floor(q))
    run = ~early & ~pole & ~(qneg & (x != np.floor(x)))
    out = np.where((x == 1) | pole, np.inf, np.nan)
    def direct(i, s):  # while ((i < 9) || (a <= 9)) { i++; a += 1; b = a^-x; s += b; ...}
        leave = (i >= 9) & ~(s["a"] <= 9)
        s["a"] = np.where(leave, s["a"], s["a"] + 1)
        b = np.where(leave, s["b"], _pow(s["a"], -s["x"]))
        s["s"], s["b"] = np.where(leave, s["s"], s["s"] + b), b
        s["done"] = ~leave & (-eps * s["s"] < b) & (b < eps * s["s"])
        return leave | s["done"]
    xs = x[run]
    st = _until(direct, {"x": xs, "a": q[run], "s": first[run], "b": np.zeros_like(xs),
                         "done": np.zeros(xs.shape, bool)}, 1 << 62)
    x, w, s, b, done = st["x"], st["a"], st["s"], st["b"], st["done"]
    s = np.where(done, s, s + b * w / (x - 1) - 0.5 * b)
    a, k = np.ones_like(x), 0.0
    for coeff in _C["ZETA_A"]:  # Euler-Maclaurin, until a term is below MACHEP of the sum
        a = a * (x + k)
        b = b / w
        t = a * b / coeff
        s = np.where(done, s, s + t)
        done = done | (np.abs(t / s) < eps)
        a, b, k = a * (x + k + 1), b / w, k + 2
    out[run] = s
    return out.reshape(shape)


def _trigamma(x):
    """ATen's trigamma in x's dtype: reflection below 1/2 (the sine of the rounded pi x), six
    recurrence steps, then the asymptotic series."""
    T = x.dtype.type
    refl = x < T(0.5)
    s = _sin(T(math.pi) * x)
    result = np.where(refl, -(T(math.pi) * T(math.pi)) / (s * s), T(0))
    x = np.where(refl, T(1) - x, x)
    for _ in range(6):
        result = result + T(1) / (x * x)
        x = x + T(1)
    ixx = T(1) / (x * x)
    result = result + (T(1) + T(1) / (T(2) * x) + ixx * (T(1 / 6) - ixx * (
        T(1 / 30) - ixx * T(1 / 42)))) / x
    return np.where(refl, -result, result)


def _polygamma(a, n, dtypes=None):
    # ATen: digamma's kernel for n = 0, trigamma's for 1, else (-1)^(n+1) exp(lgamma(n + 1))
    # zeta(n + 1, x) in the compute dtype; float16: zeta accumulates in float, rounded to half
    if n == 0:
        return _DIGAMMA(np, a)
    if n == 1:
        return _trigamma(a)
    T, r = a.dtype.type, _steps(dtypes)
    z = r(_zeta(T(n + 1), a, F32 if dtypes.out == "float16" else F64).astype(T))
    return T((1 if n % 2 else -1) * T(math.exp(T(math.lgamma(n + 1))))) * z


_DIGAMMA = get("aten::digamma").ref
_interpreted("aten::polygamma", "int n, Tensor self", _polygamma, "float", sees_dtypes=True,
             check=("n", lambda n: n >= 0, "polygamma(n, x) does not support negative n."))
_interpreted("aten::special_zeta", "Tensor self, Tensor other",
             lambda x, q: _zeta(x, q).astype(x.dtype), _rule("zeta_cpu", half=False))


def _mvlgamma(a, p, dtypes=None):
    # ATen: (arange(-(p-1)/2, 1/2, 1/2) + x[..., None]).lgamma().sum(-1) + p(p-1)/4 log(pi),
    # tensor ops in x's dtype (float16 rounds after each, its sum accumulating in float32; add_
    # rounds the constant to half).  PyTorch 2.13 no longer checks x > (p - 1) / 2.
    r, T = _steps(dtypes), a.dtype.type
    terms = r(_lgamma(r(a[..., None] + ((np.arange(p) - (p - 1)) / 2).astype(T))))
    s = terms[..., 0]
    for k in range(1, p):  # left to right, as ATen's reduction of a few contiguous values
        s = s + terms[..., k]
    return r(s) + r(T(p * (p - 1) * math.log(math.pi) / 4))


_interpreted("aten::mvlgamma", "Tensor self, int p", _mvlgamma, _rule("mvlgamma", bools=False),
             sees_dtypes=True,
             check=("p", lambda p: p >= 1, "p has to be greater than or equal to 1"))

# ----- regularized incomplete gamma P (igamma) and Q (igammac), SciPy's algorithm -----

_MAXLOG = {F32: 88.72283905206835, F64: 709.782712893384}
_BIG = {F32: (16777216.0, 5.9604644775390625e-8),  # (BIG, 1 / BIG)
        F64: (4.503599627370496e15, 2.220446049250313e-16)}
_LANCZOS_G = 6.024680040776729583740234375
# Temme's coefficients d[k][n] (DLMF 8.12): ATen's 25 x 25 table without the terms below 1e-17
# for a >= 20, |eta| <= 0.34, where it is used (they change a float64 result by an ulp at most)
_IGAM_D = tuple(tuple(float(v) for v in row.split()) for row in """
-0.3333333333333333 0.08333333333333333 -0.014814814814814815 0.0011574074074074073
3.527336860670194e-4 -1.787551440329218e-4 3.919263178522438e-5 -2.1854485106799924e-6
-1.85406221071516e-6 8.296711340953087e-7 -1.7665952736826078e-7 6.707853543401498e-9
1.0261809784240309e-8 -4.382036018453353e-9 9.14769958223679e-10 | -0.001851851851851852
-0.003472222222222222 0.0026455026455026454 -9.902263374485596e-4 2.0576131687242798e-4
-4.018775720164609e-7 -1.8098550334489977e-5 7.64916091608111e-6 -1.6120900894563446e-6
4.647127802807434e-9 1.378633446915721e-7 -5.752545603517705e-8 1.1951628599778148e-8
-1.7543241719747647e-11 -1.0091543710600413e-9 | 0.004133597883597883 -0.0026813271604938273
7.716049382716049e-4 2.0093878600823047e-6 -1.0736653226365161e-4 5.2923448829120125e-5
-1.2760635188618728e-5 3.423578734096138e-8 1.3721957309062932e-6 -6.298992138380055e-7
1.4280614206064242e-7 -2.0477098421990866e-10 -1.409252991086752e-8 6.228974084922022e-9 |
6.494341563786008e-4 2.2947209362139917e-4 -4.691894943952557e-4 2.6772063206283885e-4
-7.561801671883977e-5 -2.396505113867297e-7 1.1082654115347302e-5 -5.6749528269915965e-6
1.4230900732435883e-6 -2.7861080291528143e-11 -1.6958404091930278e-7 8.099464905388083e-8 |
-8.618882909167117e-4 7.840392217200666e-4 -2.990724803031902e-4 -1.4638452578843418e-6
6.641498215465122e-5 -3.968365047179435e-5 1.1375726970678419e-5 2.507497226237533e-10
-1.6954149536558305e-6 8.907507532205309e-7 -2.292934834000805e-7 | -3.3679855336635813e-4
-6.972813758365858e-5 2.772753244959392e-4 -1.9932570516188847e-4 6.797780477937208e-5
1.419062920643967e-7 -1.3594048189768693e-5 8.018470256334202e-6 -2.291481176508095e-6 |
5.313079364639922e-4 -5.921664373536939e-4 2.708782096718045e-4 7.902353232660328e-7
-8.153969367561969e-5 5.61168275310625e-5 -1.8329116582843375e-5 | 3.4436760689237765e-4
5.171790908260592e-5 -3.3493161081142234e-4 2.812695154763237e-4 -1.0976582244684731e-4
-1.2741009095484485e-7 2.7744451511563645e-5 | -6.526239185953094e-4 8.394987206720873e-4
-4.38297098541721e-4 -6.969091458420552e-7 1.6644846642067547e-4 -1.2783517679769218e-4 |
-5.967612901927463e-4 -7.204895416020011e-5 6.782308837667328e-4 -6.401475260262758e-4 |
0.0013324454494800656 -0.0019144384985654776 0.0011089369134596636
""".split("|"))


def _lanczos_sum(a):
    """Boost's lanczos_sum_expg_scaled (SciPy's ratevl): a polynomial ratio, in 1/a above 1."""
    inv, num, den = 1 / a, _C["LANCZOS_NUM"], _C["LANCZOS_DEN"]
    return np.where(np.abs(a) > 1, _horner(inv, num[::-1]) / _horner(inv, den[::-1]),
                    _horner(a, num) / _horner(a, den))


def _igam_fac(a, x):
    """x^a e^-x / Gamma(a): through lgamma away from a = x, else Lanczos' form (C's double
    literals promote parts of the float computation to double)."""
    T, g = a.dtype.type, a.dtype.type(_LANCZOS_G)
    far = np.abs(a - x).astype(F64) > 0.4 * np.abs(a).astype(F64)
    ax = a * _log(x) - x - _lgamma(a)
    direct = np.where(ax < -_MAXLOG[T], T(0), _exp(ax))
    fac = a + g - T(0.5)
    res = _sqrt(fac / T(2.718281828459045)) / _lanczos_sum(a)
    near = res * (_exp(a - x) * _pow(x / fac, a))
    numfac = ((x - a - g).astype(F64) + 0.5).astype(T) / fac
    e = (a * (_log1p(numfac) - numfac)).astype(F64) + x * (0.5 - F64(g)) / fac
    return np.where(far, direct, np.where((a < 200) & (x < 200), near, (res * np.exp(e)).astype(T)))


def _igam_series(a, x):
    """P by its power series (DLMF 8.11.4)."""
    T = a.dtype.type
    eps, ax = T(_MACHEP[T]), _igam_fac(a, x)
    def step(i, s):
        s["r"] = s["r"] + T(1)
        s["c"] = s["c"] * (s["x"] / s["r"])
        s["ans"] = s["ans"] + s["c"]
        return s["c"] <= eps * s["ans"]
    st = _until(step, {"x": x, "r": a.copy(), "c": np.ones_like(a), "ans": np.ones_like(a)}, 2000)
    return np.where(ax == 0, T(0), st["ans"] * ax / a)


def _igamc_series(a, x):
    """Q for small x (DLMF 8.7.3): P's series without its cancellation."""
    T = a.dtype.type
    eps = T(_MACHEP[T])
    def step(i, s):
        s["fac"] = s["fac"] * (-s["x"] / T(i + 1))
        term = s["fac"] / (s["a"] + T(i + 1))
        s["sum"] = s["sum"] + term
        return np.abs(term) <= eps * np.abs(s["sum"])
    st = _until(step, {"a": a, "x": x, "fac": np.ones_like(a), "sum": np.zeros_like(a)}, 1999)
    logx = _log(x)
    return -_expm1(a * logx - _lgamma(1 + a)) - _exp(a * logx - _lgamma(a)) * st["sum"]


def _igamc_fraction(a, x):
    """Q by its continued fraction (DLMF 8.9.2), as Cephes' igamc."""
    T = a.dtype.type
    eps, (big, biginv), ax = T(_MACHEP[T]), _BIG[T], _igam_fac(a, x)
    y = T(1) - a
    z = x + y + T(1)
    one = np.ones_like(a)
    s = {"y": y, "z": z, "c": 0 * a, "p2": one, "q2": x.copy(), "p1": x + T(1), "q1": z * x}
    s["ans"] = s["p1"] / s["q1"]
    def step(i, s):
        s["c"], s["y"], s["z"] = s["c"] + T(1), s["y"] + T(1), s["z"] + T(2)
        yc = s["y"] * s["c"]
        pk, qk = s["p1"] * s["z"] - s["p2"] * yc, s["q1"] * s["z"] - s["q2"] * yc
        r = pk / qk
        t = np.where(qk != 0, np.abs((s["ans"] - r) / r), T(1))
        s["ans"] = np.where(qk != 0, r, s["ans"])
        scale = np.where(np.abs(pk) > T(big), T(biginv), T(1))
        s["p2"], s["p1"] = s["p1"] * scale, pk * scale
        s["q2"], s["q1"] = s["q1"] * scale, qk * scale
        return t <= eps
    return np.where(ax == 0, T(0), _until(step, s, 2000)["ans"] * ax)


def _igam_asymptotic(a, x, lower):
    """P or Q for large a near x: Temme's uniform expansion (DLMF 8.12.3/8.12.4)."""
    T, sgn = a.dtype.type, (-1 if lower else 1)
    eps, sigma, lam = T(_MACHEP[T]), (x - a) / a, x / a
    eta = _sqrt(T(-2) * (_log1p(sigma) - sigma))
    eta = np.where(lam > 1, eta, np.where(lam < 1, -eta, T(0)))
    res = _erfc(np, T(sgn) * eta * _sqrt(a / T(2))) * T(0.5)
    powers = [np.ones_like(a)]
    for _ in range(len(_IGAM_D[0])):
        powers.append(powers[-1] * eta)
    total, afac, old = 0 * a, np.ones_like(a), np.full_like(a, np.inf)
    stop = np.zeros(a.shape, bool)
    for row in _IGAM_D:  # each c_k(eta) until a term is below MACHEP of it; sum c_k / a^k
        ck, cut = np.full_like(a, row[0]), np.zeros(a.shape, bool)
        for n in range(1, len(row)):
            term = T(row[n]) * powers[n]
            ck = np.where(cut, ck, ck + term)
            cut |= np.abs(term) < eps * np.abs(ck)
        term = ck * afac
        stop |= np.abs(term) > old  # the asymptotic series started to diverge
        total = np.where(stop, total, total + term)
        stop |= np.abs(term) < eps * np.abs(total)
        old, afac = np.abs(term), afac / a
    # exp's -0.5 makes it double; the 2 pi of ATen's sqrt(2 pi a) is c10::pi<float>'s
    tail = sgn * np.exp(-0.5 * a.astype(F64) * eta * eta) * total / _sqrt(
        T(2 * float(F32(math.pi))) * a)
    return (res + tail).astype(T)


def _igamc(a, x):
    """Q outside the asymptotic regime: ATen's calc_igammac ladder."""
    T, out, x64 = a.dtype.type, np.empty_like(a), x.astype(F64)  # C's double literals
    use_p = np.where(x64 > 1.1, x < a, np.where(x64 <= 0.5, -0.4 / _log(x).astype(F64) < a,
                                                 x64 * 1.1 < a))
    cf = (x64 > 1.1) & ~use_p
    for mask, fn in ((use_p, lambda a, x: T(1) - _igam_series(a, x)), (cf, _igamc_fraction),
                     (~use_p & ~cf, _igamc_series)):
        if mask.any():
            out[mask] = fn(a[mask], x[mask])
    return out


def _igamma(lower):
    """P (``lower``) or Q: ATen's calc_igamma / calc_igammac (edge values first)."""
    def ref(a, x):
        T, shape = a.dtype.type, np.broadcast_shapes(a.shape, x.shape)
        a, x = (np.broadcast_to(v, shape).ravel() for v in (a, x))
        at0, atinf = (T(0), T(1)) if lower else (T(1), T(0))  # at x = 0 and at x = inf
        out = np.full(a.shape, np.nan, a.dtype)
        edge = (x < 0) | (a < 0)
        for cond, value in ((a == 0, np.where(x > 0, atinf, T(np.nan))), (x == 0, at0),
                            (np.isinf(a), np.where(np.isinf(x), T(np.nan), at0)),
                            (np.isinf(x), atinf)):
            out[~edge & cond] = np.broadcast_to(value, a.shape)[~edge & cond]
            edge |= cond
        a, x = a[~edge], x[~edge]
        res, ratio = np.empty_like(a), np.abs(x - a) / a
        asym = (a > 20) & (a < 200) & (ratio < T(0.3)) | (a > 200) & (ratio < T(4.5) / _sqrt(a))
        via_q = ~asym & (x > 1) & (x > a) if lower else ~asym  # P = 1 - Q there
        for mask, fn in ((asym, lambda a, x: _igam_asymptotic(a, x, lower)),
                         (via_q, (lambda a, x: T(1) - _igamc(a, x)) if lower else _igamc),
                         (~asym & ~via_q, _igam_series)):
            if mask.any():
                res[mask] = fn(a[mask], x[mask])
        out[~edge] = res
        return out.reshape(shape)
    return ref


for _name in ("igamma", "igammac"):
    _interpreted(f"aten::{_name}", "Tensor self, Tensor other", _igamma(_name == "igamma"),
                 _rule(f"{_name}_cpu", ints=False))

# ----- frexp: two outputs -----


def _frexp(xp, x):
    if not hasattr(x, "dtype"):  # TorchScript's aten::frexp(float a) -> (float, int)
        return math.frexp(x)
    if x.dtype.kind != "f":
        raise ExecutionError("torch.frexp() only supports floating-point dtypes")
    m, e = xp.frexp(x)  # inf and nan give (x, 0), as std::frexp in PyTorch
    return m, e.astype(np.int32)


defop("aten::frexp", "Tensor self", _frexp, num_outputs=2, infer=lambda node, types: [
    like(types[0]), like(types[0], "int32")] if isinstance(types[0], TensorType) else None)
