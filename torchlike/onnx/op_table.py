"""The one table of torchlike's ops and their ONNX forms, both ways.

``POINTWISE`` lists the elementwise registry ops that are exactly one ONNX op once PyTorch's
promotion has been made explicit (``export_ops.pointwise``: operands cast to the compute dtype,
the result to the out dtype); it drives both directions.  ``EXPORT`` (registry kind -> rule)
and ``IMPORT`` (ONNX op type -> rule) add the ops whose form is more than one op or has
arguments to translate; the rules live in ``export_ops`` / ``export_tensor_ops`` and
``import_ops`` (``import_shapes`` follows shape arithmetic).  Giving a registry op its ONNX
form is one line here: ``POINTWISE["aten::tanh"] = "Tanh"`` for a one-op form, or an
``EXPORT`` rule built from the helpers (``E.pointwise``, ``E.expansion``) for more.  For
example ``EXPORT["aten::gelu"]`` writes ``Gelu`` at opset 20 and up and its erf or tanh
expansion below; ``IMPORT["Gelu"]`` reads it back as ``aten::gelu(x, approximate)``.
Ops with no exact ONNX form are left out on purpose (``aten::erfc``: ``1 - Erf`` cancels).
"""
from __future__ import annotations

from typing import Callable, Dict

from . import export_ops as E
from . import export_tensor_ops as T
from . import import_ops as I
from . import import_shapes as S

# aten kind -> ONNX op type (both directions; a tuple adds the ONNX node's attributes)
POINTWISE: Dict[str, object] = {
    "aten::mul": "Mul", "aten::neg": "Neg", "aten::abs": "Abs", "aten::exp": "Exp",
    "aten::log": "Log", "aten::sqrt": "Sqrt", "aten::reciprocal": "Reciprocal",
    "aten::pow": "Pow", "aten::sigmoid": "Sigmoid", "aten::tanh": "Tanh", "aten::relu": "Relu",
    "aten::erf": "Erf", "aten::sin": "Sin", "aten::cos": "Cos", "aten::tan": "Tan",
    "aten::asin": "Asin", "aten::acos": "Acos", "aten::atan": "Atan", "aten::sinh": "Sinh",
    "aten::cosh": "Cosh", "aten::asinh": "Asinh", "aten::acosh": "Acosh",
    "aten::atanh": "Atanh", "aten::where": "Where",
    "aten::maximum": "Max", "aten::minimum": "Min", "aten::eq": "Equal", "aten::lt": "Less",
    "aten::le": "LessOrEqual", "aten::gt": "Greater", "aten::ge": "GreaterOrEqual",
    "aten::logical_and": "And", "aten::logical_or": "Or", "aten::logical_xor": "Xor",
    "aten::logical_not": "Not", "aten::hardswish": "HardSwish", "aten::selu": "Selu",
    "aten::fmod": ("Mod", {"fmod": 1}),
}


def _pointwise_rules() -> Dict[str, Callable]:
    out = {}
    for kind, form in POINTWISE.items():
        op_type, attrs = form if isinstance(form, tuple) else (form, {})
        out[kind] = E.pointwise(op_type, **attrs)
    return out


# registry kind -> rule(emitter, node)
EXPORT: Dict[str, Callable] = {
    **_pointwise_rules(),
    # arithmetic with PyTorch's scalar/alpha/rounding semantics
    "aten::add": E.add, "aten::sub": E.sub, "aten::rsub": E.rsub, "aten::div": E.div,
    "aten::floor_divide": E.floor_divide, "aten::remainder": E.remainder, "aten::ne": E.ne,
    "aten::square": E.square, "aten::rsqrt": E.rsqrt, "aten::floor": E.floor,
    "aten::ceil": E.ceil, "aten::round": E.round_, "aten::trunc": E.trunc,
    "aten::clamp": E.clamp, "aten::clamp_min": E.clamp_min, "aten::clamp_max": E.clamp_max,
    # activations
    "aten::gelu": E.gelu, "aten::mish": E.mish, "aten::silu": E.silu, "aten::elu": E.elu,
    "aten::softplus": E.softplus, "aten::leaky_relu": E.leaky_relu, "aten::relu6": E.relu6,
    "aten::hardsigmoid": E.hardsigmoid, "aten::celu": E.celu, "aten::hardtanh": E.hardtanh,
    "aten::threshold": E.threshold,
    # precise expansions, fused forms, fills, bitwise
    "aten::log1p": E.log1p, "aten::expm1": E.expm1, "aten::log2": E.log2, "aten::log10": E.log10,
    "aten::exp2": E.exp2, "aten::sign": E.sign, "aten::isnan": E.isnan, "aten::addcmul": E.addcmul,
    "aten::addcdiv": E.addcdiv, "aten::zeros_like": E.zeros_like, "aten::ones_like": E.ones_like,
    "aten::full_like": E.full_like, "aten::masked_fill": E.masked_fill,
    "aten::__and__": E.bitwise("And", "BitwiseAnd"), "aten::bitwise_and": E.bitwise("And", "BitwiseAnd"),
    "aten::__or__": E.bitwise("Or", "BitwiseOr"), "aten::bitwise_or": E.bitwise("Or", "BitwiseOr"),
    "aten::__xor__": E.bitwise("Xor", "BitwiseXor"), "aten::bitwise_xor": E.bitwise("Xor", "BitwiseXor"),
    "aten::bitwise_not": E.bitwise("Not", "BitwiseNot"),
    # casts and no-ops
    "aten::to": E.cast, "aten::type_as": E.cast, "aten::Int": E.cast, "aten::Float": E.cast,
    "aten::Bool": E.cast, "aten::contiguous": E.same, "aten::dropout": E.same,
    "prim::NumToTensor": E.same,
    # reductions, normalization, linear algebra
    "aten::sum": T.reduction("ReduceSum"), "aten::mean": T.reduction("ReduceMean"),
    "aten::amax": T.reduction("ReduceMax"), "aten::amin": T.reduction("ReduceMin"),
    "aten::softmax": T.softmax("Softmax"), "aten::log_softmax": T.softmax("LogSoftmax"),
    "aten::layer_norm": T.layer_norm, "aten::matmul": T.matmul, "aten::mm": T.matmul,
    "aten::linear": T.linear, "aten::addmm": T.addmm,
    # shape ops
    "aten::reshape": T.reshape, "aten::view": T.reshape, "aten::flatten": T.reshape,
    "aten::permute": T.permute, "aten::transpose": T.permute, "aten::t": T.permute,
    "aten::cat": T.cat, "aten::stack": T.cat, "aten::split": T.split, "aten::chunk": T.split,
    "aten::split_with_sizes": T.split, "aten::slice": T.slice_, "aten::select": T.select,
    "aten::unsqueeze": T.unsqueeze, "aten::squeeze": T.squeeze, "aten::expand": T.expand,
    "aten::size": T.size, "aten::__getitem__": T.getitem,
    # lists, tuples, control flow
    "prim::ListConstruct": T.construct, "prim::TupleConstruct": T.construct,
    "prim::ListUnpack": T.unpack, "prim::TupleUnpack": T.unpack,
    "prim::TupleIndex": T.tuple_index, "prim::If": T.if_, "prim::Loop": T.loop,
}


def _import_pointwise() -> Dict[str, Callable]:
    out = {}
    for kind, form in POINTWISE.items():
        op_type = form[0] if isinstance(form, tuple) else form
        if op_type not in ("Mod",):
            out[op_type] = I.pointwise(kind)
    return out


# ONNX op type (default domain) -> rule(importer, onnx node) -> output values
IMPORT: Dict[str, Callable] = {
    **_import_pointwise(),
    "Max": I.variadic("aten::maximum"), "Min": I.variadic("aten::minimum"),
    "Sum": I.variadic("aten::add"), "Add": I.pointwise("aten::add"),
    "Sub": I.pointwise("aten::sub"), "Div": I.div, "Mod": I.mod, "Pow": I.pow_,
    "Floor": I.pointwise("aten::floor"), "Ceil": I.pointwise("aten::ceil"),
    "Round": I.pointwise("aten::round"), "Clip": I.clip,
    "Gelu": I.gelu, "Mish": I.pointwise("aten::mish"), "Elu": I.elu, "Celu": I.celu,
    "LeakyRelu": I.leaky_relu, "HardSigmoid": I.hardsigmoid, "Softplus": I.softplus,
    "Softsign": I.softsign, "PRelu": I.prelu,
    "Sign": I.sign, "IsNaN": I.pointwise("aten::isnan"), "IsInf": I.isinf,
    "BitwiseAnd": I.pointwise("aten::bitwise_and"),
    "BitwiseOr": I.pointwise("aten::bitwise_or"), "BitwiseXor": I.pointwise("aten::bitwise_xor"),
    "BitwiseNot": I.pointwise("aten::bitwise_not"),
    "Cast": S.shape_aware(I.cast, S.cast), "CastLike": I.cast_like, "Identity": I.identity,
    "Dropout": I.identity,
    "ReduceSum": I.reduction("aten::sum"), "ReduceMean": I.reduction("aten::mean"),
    "ReduceMax": I.reduction("aten::amax"), "ReduceMin": I.reduction("aten::amin"),
    "Softmax": I.softmax("aten::softmax"), "LogSoftmax": I.softmax("aten::log_softmax"),
    "LayerNormalization": I.layer_norm, "MatMul": I.matmul, "Gemm": I.gemm,
    "Reshape": I.reshape, "Transpose": I.transpose, "Split": I.split, "Flatten": I.flatten,
    "Expand": I.expand, "Constant": I.constant, "ConstantOfShape": I.constant_of_shape,
    # these follow shape arithmetic (Shape of symbolic dims feeding Reshape/Expand)
    "Shape": S.shape(I.shape), "Gather": S.shape_aware(I.gather, S.gather),
    "Slice": S.shape_aware(I.slice_, S.slice_), "Squeeze": S.shape_aware(I.squeeze, S.squeeze),
    "Unsqueeze": S.shape_aware(I.unsqueeze, S.unsqueeze),
    "Concat": S.shape_aware(I.concat, S.concat, tracked="all"),
    "If": I.if_, "Loop": I.loop,
}
