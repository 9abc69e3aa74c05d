"""Activations of ``torch.nn.functional`` that ``elementwise.py`` (at the module-size limit) does not
hold: relu6, selu, celu, hardshrink, softshrink, log_sigmoid, and the eval-mode forms of rrelu,
alpha_dropout, feature_dropout and feature_alpha_dropout.  ``elementwise(...)`` entries with
the conventions of ``elementwise.py``; the formulas are ATen's CPU kernels', so special values
(NaN, +-inf, -0.0) come out as PyTorch's do::

    relu6(x)          0 if x < 0, 6 if x > 6, else x  (x itself on ties: relu6(-0.0) is -0.0)
    selu(x)           elu(x, alpha=1.6732632423543772, scale=1.0507009873554805)
    celu(x, a)        elu(x, alpha=a, input_scale=1/a); a == 0 raises
    hardshrink(x, l)  0 where -l <= x <= l (a +0.0), else x
    softshrink(x, l)  x - l where x > l, x + l where x < -l, else x * 0 + 0 (+0.0, NaN stays)
    log_sigmoid(x)    min(x, 0) - log1p(exp(-|x|))

Numba helpers for float32 compute are ``scalar_math``'s vectorizable ``tl_*_f32`` (``elu`` via
``tl_elu_f32``, log_sigmoid via ``tl_log_sigmoid_f32`` in ``cpu_backend/scalar_math_nn.py``);
CUDA templates call ``prelude.cuh``'s ``tl_*``.
"""
from __future__ import annotations

import numpy as np

from ..errors import ExecutionError, UnsupportedOpError
from .elementwise import dropout_p_check
from .elementwise_base import elementwise, rule_same

# ----- relu6 -----

elementwise("aten::relu6", "Tensor self",
            ref=lambda xp, a: xp.where(a < 0, a.dtype.type(0), xp.where(a > 6, a.dtype.type(6), a)),
            dtypes="number",  # bool: "Bool inputs not supported for hardtanh"
            numba="np.{T}(0) if {self} < np.{T}(0) else (np.{T}(6) if {self} > np.{T}(6) "
                  "else {self})",
            cuda="tl_relu6({self})")

# ----- selu, celu: elu with fixed or derived coefficients (ATen calls elu for both) -----

SELU_ALPHA = 1.6732632423543772848170429916717
SELU_SCALE = 1.0507009873554804934193349852946


def _elu(xp, a, alpha, scale, input_scale):
    return xp.where(a > 0, a * scale, xp.expm1(a * input_scale) * (alpha * scale))


def _celu_check(operands, attrs):
    if attrs.get("alpha", 1.0) == 0:
        raise ExecutionError("ZeroDivisionError: alpha cannot be 0 for CELU")


_SELU_ARGS = f"{SELU_ALPHA!r}, {SELU_SCALE!r}, 1.0"
elementwise("aten::selu", "Tensor self",
            ref=lambda xp, a: _elu(xp, a, SELU_ALPHA, SELU_SCALE, 1.0), dtypes="float",
            numba={"float32": f"tl_elu_f32({{self}}, {_SELU_ARGS})",
                   "float64": f"tl_elu_f64({{self}}, {_SELU_ARGS})",
                   "default": f"tl_elu({{self}}, {_SELU_ARGS})"},
            cuda=f"tl_elu({{self}}, ({{T}}){SELU_ALPHA!r}, ({{T}}){SELU_SCALE!r}, ({{T}})1)")
elementwise("aten::celu", "Tensor self, Scalar alpha=1.0",
            ref=lambda xp, a, alpha=1.0: _elu(xp, a, alpha, 1.0, 1.0 / alpha), dtypes="float",
            precheck=_celu_check,
            numba={"float32": "tl_elu_f32({self}, {alpha}, 1.0, 1.0 / {alpha})",
                   "float64": "tl_elu_f64({self}, {alpha}, 1.0, 1.0 / {alpha})",
                   "default": "tl_elu({self}, {alpha}, 1.0, 1.0 / {alpha})"},
            cuda="tl_elu({self}, {alpha}, ({T})1, ({T})1 / {alpha})")

# ----- shrinkage -----
# softshrink's zero: PyTorch's vectorized CPU loop gives +0.0 for -lambd <= x <= lambd (also for
# x = -0.0), its scalar loop (the last few elements, small tensors) x * 0, i.e. -0.0 for
# negative x.  We give the vectorized loop's +0.0 everywhere; tests compare the sign of a zero
# result with PyTorch's only where the two agree.


def _softshrink_check(operands, attrs):
    lambd = attrs.get("lambd", 0.5)
    dtype = getattr(operands[0], "dtype", None)
    top = float(np.finfo(dtype).max) if dtype is not None and dtype.kind == "f" else np.inf
    if not 0 <= lambd <= top:
        raise ExecutionError(f"lambda must be in range [0, {top:g}] for input dtype {dtype}, "
                             f"but found {lambd}")


elementwise("aten::hardshrink", "Tensor self, Scalar lambd=0.5", half_attrs=("lambd",),
            ref=lambda xp, a, lambd=0.5: xp.where((a >= -lambd) & (a <= lambd),
                                                  a.dtype.type(0), a),
            dtypes="float",
            numba="np.{T}(0) if ({self} >= -{lambd} and {self} <= {lambd}) else {self}",
            cuda="({self} >= -{lambd} && {self} <= {lambd}) ? ({T})0 : {self}")
elementwise("aten::softshrink", "Tensor self, Scalar lambd=0.5",
            ref=lambda xp, a, lambd=0.5: xp.where(a > lambd, a - lambd,
                                                  xp.where(a < -lambd, a + lambd, a * 0 + 0)),
            dtypes="float", precheck=_softshrink_check,
            numba="{self} - {lambd} if {self} > {lambd} else ({self} + {lambd} "
                  "if {self} < -{lambd} else {self} * np.{T}(0) + np.{T}(0))",
            cuda="tl_softshrink({self}, {lambd})")

# ----- log_sigmoid -----

elementwise("aten::log_sigmoid", "Tensor self",
            ref=lambda xp, a: xp.minimum(a, a.dtype.type(0)) - xp.log1p(xp.exp(-xp.abs(a))),
            dtypes="float",
            numba={"float32": "tl_log_sigmoid_f32({self})", "float64": "tl_log_sigmoid_f64({self})",
                   "default": "tl_log_sigmoid({self})"},
            cuda="tl_log_sigmoid({self})", aliases=("logsigmoid",))

# ----- eval-mode randomness: rrelu and the dropout variants -----
# In eval mode (training/train False) these are deterministic: rrelu is leaky_relu with the mean
# slope (lower + upper) / 2, the dropouts return their input.  Training mode draws random
# numbers: refused, as aten::dropout refuses it (torchlike runs inference graphs).


def _eval_only(name: str, flag: str):
    def rule(infos, attrs):   # a dropout's p == 0 is the identity in training mode too
        if attrs.get(flag) and attrs.get("p", 1) != 0:
            raise UnsupportedOpError(f"training-mode {name} ({flag}=True) is not supported: "
                                     "torchlike runs inference graphs; call the model in eval "
                                     "mode")
        return rule_same(infos, attrs)
    return rule


def _fusible_in_eval(flag: str):
    return lambda attrs: None if attrs.get(flag) is False or attrs.get("p", 1) == 0 \
        else f"{flag} is not False"


def _rrelu_slope(attrs):
    """The literal mean slope when both bounds are constants (computed in double, as ATen
    does), else the expression."""
    lower, upper = attrs.get("lower", 0.125), attrs.get("upper", 1.0 / 3.0)
    if isinstance(lower, (int, float)) and isinstance(upper, (int, float)):
        return repr((lower + upper) / 2)
    return "(({lower} + {upper}) / 2)"


def _rrelu_check(operands, attrs):
    lower, upper = attrs.get("lower", 0.125), attrs.get("upper", 1.0 / 3.0)
    if isinstance(lower, (int, float)) and isinstance(upper, (int, float)) and lower > upper:
        raise ExecutionError("Lower bound should be less than or equal to the upper bound")


elementwise("aten::rrelu", "Tensor self, Scalar lower=0.125, Scalar upper=0.3333333333333333, "
            "bool training=False, Generator? generator=None",
            ref=lambda xp, a, lower=0.125, upper=1.0 / 3.0, training=False, generator=None:
            xp.where(a > 0, a, a * ((lower + upper) / 2)),
            dtype_rule=_eval_only("rrelu", "training"), dtypes="float", precheck=_rrelu_check,
            fusible_if=_fusible_in_eval("training"), foldable=False,
            numba=lambda dt, attrs: f"{{self}} if {{self}} > 0 else {{self}} * "
                                    f"np.{{T}}({_rrelu_slope(attrs)})",
            cuda=lambda dt, attrs: f"{{self}} > ({{T}})0 ? {{self}} : {{self}} * "
                                   f"({{T}}){_rrelu_slope(attrs)}")
for _name in ("alpha_dropout", "feature_dropout", "feature_alpha_dropout"):
    elementwise(f"aten::{_name}", "Tensor input, float p, bool train",
                ref=lambda xp, a, p, train: a, dtype_rule=_eval_only(_name, "train"),
                precheck=dropout_p_check,
                fusible_if=_fusible_in_eval("train"), foldable=False,
                numba="{input}", cuda="{input}")
