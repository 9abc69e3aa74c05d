"""Export rules: how each registry op is written as ONNX (``op_table.EXPORT`` names them).

A rule is ``rule(em, node)``: it reads the node's inputs through the ``Emitter`` (``em.tensor``
converts a value to the dtype it is needed in), emits ONNX nodes and binds the node's outputs.

PyTorch's type promotion is made explicit: ``pointwise`` asks the op's registry entry for its
(compute, out) dtypes on these operands (``signature_dtypes``: a Python scalar does not widen a
tensor, an int tensor with a float scalar computes in float32, comparisons compute in the
promoted dtype and give bool), casts every operand to the compute dtype, applies the ONNX op
and casts the result to the out dtype.  ONNX ops themselves never promote.
"""
from __future__ import annotations

import math
from typing import Any, Callable, List, Optional, Tuple

import numpy as np

from ..ir.graph import Node, Value
from ..ops.dtypes import Priority, is_float
from ..ops.elementwise_base import compute_dtype_of, scalar_signature_dtypes, signature_dtypes
from ..ops.registry import REQUIRED, get
from ..passes.shape_inference import operand_info_of
from .dtypes import onnx_elem_type
from .emitter import Emitter, ExportError

INT64_MAX = np.iinfo(np.int64).max


# -- reading a node's arguments ------------------------------------------------------------------

def args_of(node: Node) -> Tuple[Any, List[Optional[Value]], dict]:
    """(op, operand values in schema order (None: absent), constant attributes by name)."""
    op = get(node.kind)
    inputs = list(node.inputs) + [None] * (len(op.params) - len(node.inputs))
    operands, attrs = [], {}
    for p, v in zip(op.params, inputs):
        if p.is_operand:
            absent = v is None or (v.is_constant() and v.constant_value() is None
                                   and "value" not in v.node.attrs)
            operands.append(None if absent else v)
        elif v is None:
            attrs[p.name] = None if p.default is REQUIRED else p.default
        elif v.is_constant():
            attrs[p.name] = v.constant_value()
        else:
            attrs[p.name] = v  # a computed argument: rules that allow it read it as a value
    return op, operands, attrs


def const_attr(node: Node, attrs: dict, name: str) -> Any:
    value = attrs.get(name)
    if isinstance(value, Value):
        raise ExportError(f"its argument '{name}' must be a constant for ONNX")
    return value


def dtypes_of(op, operands: List[Optional[Value]], attrs: dict) -> Tuple[str, str]:
    """(compute dtype the ONNX op runs in, out dtype) for these operands (the registry's rule)."""
    infos = [None if v is None else operand_info_of(v) for v in operands]
    if any(i is False for i in infos):
        raise ExportError("an operand's dtype is unknown")
    plain = {k: v for k, v in attrs.items() if not isinstance(v, Value)}
    if not any(v is not None and v.type.is_tensor() and not _is_scalar_const(v) for v in operands):
        compute, out = scalar_signature_dtypes(op, [None if i is None else i[0] for i in infos],
                                               plain)
        return compute, out
    # a rank-unknown operand (an item of an unpacked list) is 0-d or not: both must agree
    unknown = [k for k, i in enumerate(infos) if i is not None and i[1] is None]
    results = set()
    for prio in (Priority.DIM, Priority.ZERO_DIM) if unknown else (None,):
        filled = [(i[0], prio) if k in unknown else i for k, i in enumerate(infos)]
        results.add(signature_dtypes(op, filled, plain))
    if len(results) != 1:
        raise ExportError("its dtype depends on the rank of an operand, which is unknown")
    compute, out = results.pop()
    return compute_dtype_of(compute), out


def _is_scalar_const(v: Value) -> bool:
    return v.is_constant() and not isinstance(v.constant_value(), np.ndarray)


# -- elementwise ---------------------------------------------------------------------------------

def pointwise(onnx_op: str, **onnx_attrs) -> Callable[[Emitter, Node], None]:
    """The rule of an elementwise op that is one ONNX op on operands cast to the compute dtype
    (the registry's promotion), with the result cast to the out dtype."""
    def rule(em: Emitter, node: Node) -> None:
        op, operands, attrs = args_of(node)
        compute, out = dtypes_of(op, operands, attrs)
        names = [em.tensor(v, "bool" if k in op.kept else compute)
                 for k, v in zip(op.operand_names, operands) if v is not None]
        em.bind(node.outputs[0], em.cast(em.emit(onnx_op, names, **onnx_attrs), compute, out))
    rule.onnx_op = onnx_op
    return rule


def expansion(build: Callable[..., str]) -> Callable[[Emitter, Node], None]:
    """The rule of an elementwise op written as several ONNX ops: ``build(em, compute, names,
    attrs)`` gets the operands already in the compute dtype and returns the result's name."""
    def rule(em: Emitter, node: Node) -> None:
        op, operands, attrs = args_of(node)
        compute, out = dtypes_of(op, operands, attrs)
        names = [None if v is None else em.tensor(v, "bool" if k in op.kept else compute)
                 for k, v in zip(op.operand_names, operands)]
        result = build(em, compute, names, {k: const_attr(node, attrs, k) for k in attrs})
        em.bind(node.outputs[0], em.cast(result, compute, out))
    return rule


def _alpha_scaled(em: Emitter, dt: str, name: str, alpha) -> str:
    return name if alpha in (None, 1) else em.emit("Mul", [name, em.constant(alpha, dt)])


add = expansion(lambda em, dt, n, a: em.emit("Add", [n[0], _alpha_scaled(em, dt, n[1], a["alpha"])]))
sub = expansion(lambda em, dt, n, a: em.emit("Sub", [n[0], _alpha_scaled(em, dt, n[1], a["alpha"])]))
rsub = expansion(lambda em, dt, n, a: em.emit("Sub", [n[1], _alpha_scaled(em, dt, n[0], a["alpha"])]))
ne = expansion(lambda em, dt, n, a: em.emit("Not", [em.emit("Equal", n)]))
square = expansion(lambda em, dt, n, a: em.emit("Mul", [n[0], n[0]]))
rsqrt = expansion(lambda em, dt, n, a: em.emit("Reciprocal", [em.emit("Sqrt", n)]))
silu = expansion(lambda em, dt, n, a: em.emit("Mul", [n[0], em.emit("Sigmoid", n)]))
relu6 = expansion(lambda em, dt, n, a: em.emit("Clip", [n[0], em.constant(0, dt), em.constant(6, dt)]))
identity = expansion(lambda em, dt, n, a: em.emit("Identity", [n[0]]))


def _float_only(onnx_op: str):
    """Floor/Ceil/Round: an integer input is already integral (PyTorch returns it)."""
    return lambda em, dt, n, a: em.emit(onnx_op if is_float(dt) else "Identity", [n[0]])


floor = expansion(_float_only("Floor"))
ceil = expansion(_float_only("Ceil"))


def _trunc(em: Emitter, dt: str, x: str) -> str:
    if not is_float(dt):
        return x
    neg = em.emit("Less", [x, em.constant(0, dt)])
    return em.emit("Where", [neg, em.emit("Ceil", [x]), em.emit("Floor", [x])])


trunc = expansion(lambda em, dt, n, a: _trunc(em, dt, n[0]))


def _round(em: Emitter, dt: str, n, a) -> str:
    d = a.get("decimals") or 0
    if not is_float(dt):
        return n[0]
    if d == 0:
        return em.emit("Round", [n[0]])
    scale = em.constant(10.0 ** abs(d), dt)
    inner, outer = ("Mul", "Div") if d > 0 else ("Div", "Mul")
    return em.emit(outer, [em.emit("Round", [em.emit(inner, [n[0], scale])]), scale])


round_ = expansion(_round)


def _floor_div(em: Emitter, dt: str, a: str, b: str) -> str:
    if is_float(dt):
        return em.emit("Floor", [em.emit("Div", [a, b])])
    r = em.emit("Mod", [a, b], fmod=0)            # Python's sign: a - r is a multiple of b
    return em.emit("Div", [em.emit("Sub", [a, r]), b])


def _div(em: Emitter, dt: str, n, a) -> str:
    mode = a.get("rounding_mode")
    if mode == "floor":
        return _floor_div(em, dt, n[0], n[1])
    q = em.emit("Div", n[:2])                      # C division for ints: trunc
    return _trunc(em, dt, q) if mode == "trunc" else q


def _remainder(em: Emitter, dt: str, n, a) -> str:
    if not is_float(dt):
        return em.emit("Mod", n[:2], fmod=0)
    # PyTorch's formula (ops/elementwise.py _remainder): fmod, moved by b when the signs differ
    m = em.emit("Mod", n[:2], fmod=1)
    zero = em.constant(0, dt)
    fix = em.emit("And", [em.emit("Not", [em.emit("Equal", [m, zero])]),
                          em.emit("Xor", [em.emit("Less", [n[1], zero]), em.emit("Less", [m, zero])])])
    return em.emit("Where", [fix, em.emit("Add", [m, n[1]]), m])


div = expansion(_div)
floor_divide = expansion(lambda em, dt, n, a: _floor_div(em, dt, n[0], n[1]))
remainder = expansion(_remainder)


def clamp(em: Emitter, node: Node) -> None:
    """Clip where the bounds are 0-d (as ONNX requires), else Max/Min (which broadcast)."""
    op, operands, attrs = args_of(node)
    compute, out = dtypes_of(op, operands, attrs)
    x, lo, hi = (None if v is None else em.tensor(v, compute) for v in operands)
    if all(v is None or em.shape(v) == () for v in operands[1:]):
        result = em.emit("Clip", [x, lo or "", hi or ""])
    else:
        result = x if lo is None else em.emit("Max", [x, lo])
        result = result if hi is None else em.emit("Min", [result, hi])
    em.bind(node.outputs[0], em.cast(result, compute, out))


clamp_min = pointwise("Max")
clamp_max = pointwise("Min")


# -- activations ---------------------------------------------------------------------------------

def _gelu(em: Emitter, dt: str, n, a) -> str:
    approximate = a.get("approximate") or "none"
    x = n[0]
    if em.opset >= 20:
        return em.emit("Gelu", [x], approximate=approximate)
    c = lambda v: em.constant(v, dt)  # noqa: E731
    if approximate == "tanh":   # 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)))
        x3 = em.emit("Mul", [em.emit("Mul", [x, x]), x])
        inner = em.emit("Add", [x, em.emit("Mul", [x3, c(0.044715)])])
        t = em.emit("Tanh", [em.emit("Mul", [inner, c(math.sqrt(2.0 / math.pi))])])
    else:                       # 0.5 x (1 + erf(x / sqrt(2)))
        t = em.emit("Erf", [em.emit("Mul", [x, c(0.7071067811865476)])])
    return em.emit("Mul", [em.emit("Mul", [x, c(0.5)]), em.emit("Add", [t, c(1.0)])])


def _mish(em: Emitter, dt: str, n, a) -> str:
    if em.opset >= 18:
        return em.emit("Mish", [n[0]])
    return em.emit("Mul", [n[0], em.emit("Tanh", [em.emit("Softplus", [n[0]])])])


def _elu(em: Emitter, dt: str, n, a) -> str:
    alpha, scale, input_scale = (float(a.get(k, 1)) for k in ("alpha", "scale", "input_scale"))
    x = n[0]
    if scale == 1 and input_scale == 1:
        return em.emit("Elu", [x], alpha=alpha)
    neg = em.emit("Mul", [em.emit("Sub", [em.emit("Exp", [em.emit("Mul", [x, em.constant(input_scale, dt)])]),
                                          em.constant(1, dt)]), em.constant(alpha * scale, dt)])
    pos = em.emit("Mul", [x, em.constant(scale, dt)])
    return em.emit("Where", [em.emit("Greater", [x, em.constant(0, dt)]), pos, neg])


def _softplus(em: Emitter, dt: str, n, a) -> str:
    beta, threshold = float(a.get("beta", 1)), float(a.get("threshold", 20))
    x = n[0]
    bx = x if beta == 1 else em.emit("Mul", [x, em.constant(beta, dt)])
    soft = em.emit("Softplus", [bx])
    if beta != 1:
        soft = em.emit("Div", [soft, em.constant(beta, dt)])
    return em.emit("Where", [em.emit("Greater", [bx, em.constant(threshold, dt)]), x, soft])


gelu = expansion(_gelu)
mish = expansion(_mish)
elu = expansion(_elu)
softplus = expansion(_softplus)
leaky_relu = expansion(lambda em, dt, n, a: em.emit(
    "LeakyRelu", [n[0]], alpha=float(a.get("negative_slope", 0.01))))
hardsigmoid = expansion(lambda em, dt, n, a: em.emit("HardSigmoid", [n[0]], alpha=1.0 / 6, beta=0.5))
celu = expansion(lambda em, dt, n, a: em.emit(
    "Celu", [n[0]], alpha=float(a.get("alpha", 1.0))) if dt == "float32" else _celu64(em, dt, n, a))


def _celu64(em: Emitter, dt: str, n, a) -> str:  # Celu is float32-only in ONNX
    alpha = float(a.get("alpha", 1.0))
    x = n[0]
    neg = em.emit("Mul", [em.emit("Sub", [em.emit("Exp", [em.emit("Div", [x, em.constant(alpha, dt)])]),
                                          em.constant(1, dt)]), em.constant(alpha, dt)])
    return em.emit("Add", [em.emit("Max", [x, em.constant(0, dt)]),
                           em.emit("Min", [neg, em.constant(0, dt)])])


# -- casts -----------------------------------------------------------------------------------------

def cast(em: Emitter, node: Node) -> None:
    """aten::to, aten::type_as, aten::Int/Float/Bool: Cast to the output's dtype."""
    src = node.inputs[0]
    out = em.dtype(node.outputs[0])
    if out is None:
        raise ExportError("its output dtype is unknown")
    name = em.tensor(src, out)
    if node.kind in ("aten::Int", "aten::Float", "aten::Bool") and em.shape(src) not in ((), None):
        name = em.emit("Reshape", [name, em.constant(np.zeros(0, np.int64))])  # a scalar: 0-d
    em.bind(node.outputs[0], name)


def same(em: Emitter, node: Node) -> None:
    """aten::contiguous, dropout in eval mode, prim::NumToTensor: the input itself."""
    em.bind(node.outputs[0], em.tensor(node.inputs[0]))


# -- more elementwise: precise expansions, fused multiply-adds, fills, bitwise ---------------------

def _log1p(em: Emitter, dt: str, n, a) -> str:
    """log(1 + x) without the cancellation: log(u) * x / (u - 1) with u = 1 + x (exact where
    u rounds to 1, and u itself where it is inf)."""
    x = n[0]
    one = em.constant(1, dt)
    u = em.emit("Add", [x, one])
    um1 = em.emit("Sub", [u, one])
    ratio = em.emit("Div", [em.emit("Mul", [em.emit("Log", [u]), x]), um1])
    r = em.emit("Where", [em.emit("Equal", [um1, em.constant(0, dt)]), x, ratio])
    return em.emit("Where", [em.emit("Equal", [u, em.constant(np.inf, dt)]), u, r])


def _expm1(em: Emitter, dt: str, n, a) -> str:
    """exp(x) - 1 without the cancellation (Kahan): (u - 1) * x / log(u) with u = exp(x)."""
    x = n[0]
    one = em.constant(1, dt)
    u = em.emit("Exp", [x])
    um1 = em.emit("Sub", [u, one])
    ratio = em.emit("Div", [em.emit("Mul", [um1, x]), em.emit("Log", [u])])
    r = em.emit("Where", [em.emit("Equal", [um1, em.constant(0, dt)]), x, ratio])
    r = em.emit("Where", [em.emit("Equal", [um1, em.constant(-1, dt)]), um1, r])
    return em.emit("Where", [em.emit("Equal", [u, em.constant(np.inf, dt)]), u, r])


log1p = expansion(_log1p)
expm1 = expansion(_expm1)
log2 = expansion(lambda em, dt, n, a: em.emit("Div", [em.emit("Log", n), em.constant(math.log(2), dt)]))
log10 = expansion(lambda em, dt, n, a: em.emit("Div", [em.emit("Log", n), em.constant(math.log(10), dt)]))
exp2 = expansion(lambda em, dt, n, a: em.emit("Pow", [em.constant(2, dt), n[0]]))
# x != x: every dtype (ONNX Runtime has no float64 IsNaN kernel)
isnan = expansion(lambda em, dt, n, a: em.emit("Not", [em.emit("Equal", [n[0], n[0]])]))


def _sign(em: Emitter, dt: str, n, a) -> str:
    """(x > 0) - (x < 0), as the registry's reference: sign(NaN) is 0 (ONNX's Sign gives NaN)."""
    if dt == "bool" or not is_float(dt):
        return n[0] if dt == "bool" else em.emit("Sign", n)
    zero = em.constant(0, dt)
    pos = em.emit("Cast", [em.emit("Greater", [n[0], zero])], to=onnx_elem_type(dt))
    neg = em.emit("Cast", [em.emit("Less", [n[0], zero])], to=onnx_elem_type(dt))
    return em.emit("Sub", [pos, neg])


sign = expansion(_sign)


def _addc(onnx_op: str):
    """addcmul/addcdiv: self + value * t1 (*|/) t2, in PyTorch's order of operations."""
    def build(em: Emitter, dt: str, n, a) -> str:
        scaled = _alpha_scaled(em, dt, n[1], a.get("value", 1))
        return em.emit("Add", [n[0], em.emit(onnx_op, [scaled, n[2]])])
    return expansion(build)


addcmul = _addc("Mul")
addcdiv = _addc("Div")


def _fill(value_of):
    def rule(em: Emitter, node: Node) -> None:
        op, operands, attrs = args_of(node)
        out = em.dtype(node.outputs[0])
        value = em.constant(value_of(attrs), out)
        em.bind(node.outputs[0], em.emit("Expand", [value, em.emit("Shape", [em.tensor(operands[0])])]))
    return rule


zeros_like = _fill(lambda a: 0)
ones_like = _fill(lambda a: 1)
full_like = _fill(lambda a: a["fill_value"])


def bitwise(bool_op: str, int_op: str):
    def build(em: Emitter, dt: str, n, a) -> str:
        if dt == "bool":
            return em.emit(bool_op, [x for x in n if x is not None])
        if em.opset < 18:
            raise ExportError(f"{int_op} needs opset 18")
        return em.emit(int_op, [x for x in n if x is not None])
    return expansion(build)


def masked_fill(em: Emitter, node: Node) -> None:
    op, (x, mask, value), attrs = args_of(node)
    dt = em.dtype(node.outputs[0])
    em.bind(node.outputs[0], em.emit("Where", [em.tensor(mask, "bool"), em.tensor(value, dt),
                                               em.tensor(x, dt)]))


hardtanh = expansion(lambda em, dt, n, a: em.emit(
    "Clip", [n[0], em.constant(a["min_val"], dt), em.constant(a["max_val"], dt)]))
threshold = expansion(lambda em, dt, n, a: em.emit(
    "Where", [em.emit("Greater", [n[0], em.constant(a["threshold"], dt)]), n[0],
              em.constant(a["value"], dt)]))
