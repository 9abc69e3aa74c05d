"""Import rules: how each ONNX op becomes registry ops (``op_table.IMPORT`` names them).

A rule is ``rule(imp) -> [output values]``; it reads the node being translated through the
``Importer`` (``imp.input(k)``, ``imp.attrs()``, ``imp.const_ints``) and appends nodes with
``imp.op``.  ONNX ops do not promote (their operands share a dtype), so PyTorch's promotion
gives the same dtype, except where an op's out dtype differs (``Pow`` of an int base by a
float exponent, a sum of ints): ``pointwise`` casts those back to ONNX's dtype.
"""
from __future__ import annotations

import math
from typing import Callable, List

import numpy as np

from ..ir.graph import Value
from ..ir.types import BOOL, DTYPE_TO_SCALAR_TYPE_ENUM, INT, TensorType
from ..ops.dtypes import Priority, is_float
from ..ops.elementwise_base import signature_dtypes
from ..ops.registry import get
from .dtypes import dtype_of_elem_type
from .import_shapes import size_arg
from .importer import Importer

INT64_MAX = np.iinfo(np.int64).max


def _to(imp: Importer, v: Value, dtype: str) -> Value:
    return imp.op("aten::to", [v, DTYPE_TO_SCALAR_TYPE_ENUM[dtype], False, False, None],
                  types=[TensorType(dtype, imp.shape(v))])[0]


def _keep_onnx_dtype(imp: Importer, kind: str, operands: List[Value], out: Value) -> Value:
    """``out`` cast to the dtype ONNX gives where PyTorch's rule for ``kind`` differs."""
    onnx_dtype = imp.out_info()[0]
    dts = [imp.dtype(v) for v in operands]
    if onnx_dtype is None or any(d is None for d in dts):
        return out
    op = get(kind)
    infos = [(d, Priority.WRAPPED if imp.const(v) is not None and imp.const(v).ndim == 0
              else Priority.DIM) for d, v in zip(dts, operands)]
    names = [n for n in op.operand_names if n not in op.kept]
    try:
        torch_out = signature_dtypes(op, infos + [None] * (len(op.operand_names) - len(infos)),
                                     {})[1] if len(names) >= len(infos) else None
    except Exception:  # noqa: BLE001 - the rule refuses these dtypes: leave it to run time
        return out
    return out if torch_out in (None, onnx_dtype) else _to(imp, out, onnx_dtype)


def pointwise(kind: str) -> Callable[[Importer], List[Value]]:
    """An ONNX op that is ``kind`` applied to its inputs in order."""
    def rule(imp: Importer) -> List[Value]:
        operands = [imp.input(k) for k in range(len(imp.node.input))]
        out = imp.op(kind, operands, types=[imp.typed()])[0]
        return [_keep_onnx_dtype(imp, kind, operands, out)]
    rule.kind = kind
    return rule


def pow_(imp: Importer) -> List[Value]:
    """Pow: a 0-d constant exponent of a float base becomes a Python number, which the code
    generators turn into x*x, sqrt, ... (PyTorch's scalar-exponent forms)."""
    base, exponent = imp.input(0), imp.input(1)
    c = imp.const(exponent)
    if c is not None and c.ndim == 0 and is_float(imp.dtype(base)) and c.dtype.kind in "fiu":
        return imp.op("aten::pow", [base, c.item()], types=[imp.typed()])
    return pointwise("aten::pow")(imp)


def variadic(kind: str) -> Callable[[Importer], List[Value]]:
    """Max/Min/Sum of any number of inputs: a chain of the binary op."""
    def rule(imp: Importer) -> List[Value]:
        acc = imp.input(0)
        for k in range(1, len(imp.node.input)):
            acc = imp.op(kind, [acc, imp.input(k)], types=[imp.typed()])[0]
        return [acc]
    return rule


def div(imp: Importer) -> List[Value]:
    a, b = imp.input(0), imp.input(1)
    dt = imp.dtype(a)
    mode = None if dt is None or is_float(dt) else "trunc"   # ONNX int Div truncates
    return imp.op("aten::div", [a, b, mode], types=[imp.typed()])


def mod(imp: Importer) -> List[Value]:
    kind = "aten::fmod" if imp.attrs().get("fmod", 0) else "aten::remainder"
    return imp.op(kind, [imp.input(0), imp.input(1)], types=[imp.typed()])


def clip(imp: Importer) -> List[Value]:
    a = imp.attrs()
    lo, hi = imp.input(1), imp.input(2)
    if imp.opset < 11:
        lo, hi = a.get("min"), a.get("max")
    return imp.op("aten::clamp", [imp.input(0), lo, hi], types=[imp.typed()])


# -- activations ------------------------------------------------------------------------------------

def gelu(imp: Importer) -> List[Value]:
    return imp.op("aten::gelu", [imp.input(0), imp.attrs().get("approximate", "none")],
                  types=[imp.typed()])


def elu(imp: Importer) -> List[Value]:
    return imp.op("aten::elu", [imp.input(0), float(imp.attrs().get("alpha", 1.0)), 1, 1],
                  types=[imp.typed()])


def celu(imp: Importer) -> List[Value]:
    return imp.op("aten::celu", [imp.input(0), float(imp.attrs().get("alpha", 1.0))],
                  types=[imp.typed()])


def leaky_relu(imp: Importer) -> List[Value]:
    return imp.op("aten::leaky_relu", [imp.input(0), float(imp.attrs().get("alpha", 0.01))],
                  types=[imp.typed()])


def hardsigmoid(imp: Importer) -> List[Value]:
    a = imp.attrs()
    alpha, beta = float(a.get("alpha", 0.2)), float(a.get("beta", 0.5))
    x = imp.input(0)
    if math.isclose(alpha, 1 / 6, rel_tol=1e-6) and beta == 0.5:
        return imp.op("aten::hardsigmoid", [x], types=[imp.typed()])
    y = imp.op("aten::add", [imp.op("aten::mul", [x, alpha])[0], beta, 1])[0]
    return imp.op("aten::clamp", [y, 0.0, 1.0], types=[imp.typed()])


def sign(imp: Importer) -> List[Value]:
    """ONNX's Sign keeps NaN (PyTorch's gives 0 there)."""
    x = imp.input(0)
    s = imp.op("aten::sign", [x], types=[imp.typed()])
    if not is_float(imp.dtype(x)):
        return s
    return imp.op("aten::where", [imp.op("aten::isnan", [x])[0], x, s[0]], types=[imp.typed()])


def softplus(imp: Importer) -> List[Value]:
    # PyTorch's threshold (20): above it log(1 + exp(x)) is x to within 2e-9
    return imp.op("aten::softplus", [imp.input(0), 1, 20], types=[imp.typed()])


def softsign(imp: Importer) -> List[Value]:
    x = imp.input(0)
    den = imp.op("aten::add", [imp.op("aten::abs", [x])[0], 1.0, 1])[0]
    return imp.op("aten::div", [x, den], types=[imp.typed()])


def prelu(imp: Importer) -> List[Value]:
    x, slope = imp.input(0), imp.input(1)
    neg = imp.op("aten::mul", [x, slope])[0]
    return imp.op("aten::where", [imp.op("aten::gt", [x, 0])[0], x, neg], types=[imp.typed()])


# -- casts, identity -----------------------------------------------------------------------------

def cast(imp: Importer) -> List[Value]:
    to = dtype_of_elem_type(imp.attrs()["to"], f"node '{imp.node.name}' (op type Cast): ")
    return [_to(imp, imp.input(0), to)]


def cast_like(imp: Importer) -> List[Value]:
    return imp.op("aten::type_as", [imp.input(0), imp.input(1)], types=[imp.typed()])


def identity(imp: Importer) -> List[Value]:
    if imp.node.op_type == "Dropout" and len(imp.node.output) > 1 and imp.node.output[1]:
        raise imp.fail("Dropout's mask output is not supported")
    return [imp.input(0)]


def constant(imp: Importer) -> List[Value]:
    a = imp.node.attribute[0]
    if a.name == "value":
        value = imp.numpy_helper.to_array(a.t).copy()
    elif a.name in ("value_float", "value_int"):
        value = np.array(imp.helper.get_attribute_value(a),
                         np.float32 if a.name == "value_float" else np.int64)
    elif a.name in ("value_floats", "value_ints"):
        value = np.array(list(imp.helper.get_attribute_value(a)),
                         np.float32 if a.name == "value_floats" else np.int64)
    else:
        raise imp.fail(f"Constant with attribute '{a.name}' is not supported")
    return [imp.py(value)]


# -- reductions, normalization, linear algebra ----------------------------------------------------

def _axes(imp: Importer, attr_form: bool) -> List[int]:
    a = imp.attrs()
    if "axes" in a:
        return [int(x) for x in a["axes"]]
    return [] if attr_form else (imp.const_ints(1, "axes") or [])


def reduction(kind: str) -> Callable[[Importer], List[Value]]:
    def rule(imp: Importer) -> List[Value]:
        a = imp.attrs()
        x = imp.input(0)
        axes = _axes(imp, attr_form=False)
        keep = bool(a.get("keepdims", 1))
        if not axes and a.get("noop_with_empty_axes", 0):
            return [x]
        dt = imp.dtype(x)
        if kind in ("aten::sum", "aten::mean"):
            # sum of ints keeps ONNX's dtype (PyTorch's would be int64)
            enum = DTYPE_TO_SCALAR_TYPE_ENUM.get(dt) if kind == "aten::sum" and dt else None
            return imp.op(kind, [x, axes or None, keep, enum], types=[imp.typed()])
        return imp.op(kind, [x, axes, keep], types=[imp.typed()])
    return rule


def softmax(kind: str) -> Callable[[Importer], List[Value]]:
    def rule(imp: Importer) -> List[Value]:
        x = imp.input(0)
        rank = len(imp.shape(x)) if imp.shape(x) is not None else None
        axis = int(imp.attrs().get("axis", -1 if imp.opset >= 13 else 1))
        if imp.opset < 13 and not (rank is not None and axis % rank == rank - 1):
            raise imp.fail("Softmax before opset 13 over more than the last axis "
                           "(it flattened the input) is not supported")
        return imp.op(kind, [x, axis, None], types=[imp.typed()])
    return rule


def layer_norm(imp: Importer) -> List[Value]:
    if len([o for o in imp.node.output if o]) > 1:
        raise imp.fail("LayerNormalization's Mean/InvStdDev outputs are not supported")
    a = imp.attrs()
    x, scale, bias = imp.input(0), imp.input(1), imp.input(2)
    shape = imp.shape(x)
    axis = int(a.get("axis", -1))
    if shape is None or any(d is None for d in shape[axis:]):
        raise imp.fail("the normalized dims of its input must be known")
    # Written as its row reductions, which fuse (aten::layer_norm is interpreted):
    # d = x - mean; d * rsqrt(mean(d * d) + eps) * scale + bias: the biased variance, two
    # passes, as PyTorch's (and faster fused than aten::var).
    dims = list(range(axis % len(shape), len(shape)))
    mean = imp.op("aten::mean", [x, dims, True, None])[0]
    d = imp.op("aten::sub", [x, mean, 1])[0]
    var = imp.op("aten::mean", [imp.op("aten::mul", [d, d])[0], dims, True, None])[0]
    inv = imp.op("aten::rsqrt", [imp.op("aten::add", [var, float(a.get("epsilon", 1e-5)), 1])[0]])[0]
    y = imp.op("aten::mul", [d, inv])[0]
    y = imp.op("aten::mul", [y, scale], types=[imp.typed()])[0]
    return [y] if bias is None else imp.op("aten::add", [y, bias, 1], types=[imp.typed()])


def matmul(imp: Importer) -> List[Value]:
    return imp.op("aten::matmul", [imp.input(0), imp.input(1)], types=[imp.typed()])


def gemm(imp: Importer) -> List[Value]:
    a = imp.attrs()
    A, B, C = imp.input(0), imp.input(1), imp.input(2)
    if a.get("transA", 0):
        A = imp.op("aten::t", [A])[0]
    if a.get("transB", 0):
        B = imp.op("aten::t", [B])[0]
    alpha, beta = float(a.get("alpha", 1.0)), float(a.get("beta", 1.0))
    # matmul, then the scaling and bias as elementwise ops (typed, so they fuse with what
    # follows: a Linear's bias with its activation); aten::addmm would end the group
    y = imp.op("aten::matmul", [A, B])[0]
    if alpha != 1:
        y = imp.op("aten::mul", [y, alpha])[0]
    if C is not None:
        y = imp.op("aten::add", [y, C if beta == 1 else imp.op("aten::mul", [C, beta])[0], 1])[0]
    y.type = imp.typed()
    return [y]


# -- shape ops ------------------------------------------------------------------------------------------

def _dim_values(imp: Importer, x: Value, dims) -> list:
    """ONNX shape entries -> a torchlike size list: 0 copies the input's dim (aten::size
    where it is not known)."""
    shape = imp.shape(x)
    out = []
    for i, d in enumerate(dims):
        if d == 0 and not imp.attrs().get("allowzero", 0):
            known = shape[i] if shape is not None and i < len(shape) else None
            d = known if known is not None else imp.op("aten::size", [x, i], types=[INT])[0]
        out.append(d)
    return out


def reshape(imp: Importer) -> List[Value]:
    x = imp.input(0)
    dims = _dim_values(imp, x, size_arg(imp, 1) or imp.const_ints(1, "shape"))
    size = dims if all(not isinstance(d, Value) for d in dims) else \
        imp.op("prim::ListConstruct", dims)[0]
    return imp.op("aten::reshape", [x, size], types=[imp.typed()])


def transpose(imp: Importer) -> List[Value]:
    x = imp.input(0)
    perm = imp.attrs().get("perm")
    if perm is None:
        if imp.shape(x) is None:
            raise imp.fail("Transpose without perm needs its input's rank")
        perm = list(range(len(imp.shape(x))))[::-1]
    return imp.op("aten::permute", [x, [int(p) for p in perm]], types=[imp.typed()])


def concat(imp: Importer) -> List[Value]:
    items = [imp.input(k) for k in range(len(imp.node.input))]
    lst = imp.op("prim::ListConstruct", items)[0]
    return imp.op("aten::cat", [lst, int(imp.attrs()["axis"])], types=[imp.typed()])


def split(imp: Importer) -> List[Value]:
    a = imp.attrs()
    x = imp.input(0)
    axis = int(a.get("axis", 0))
    n_out = len(imp.node.output)
    sizes = a.get("split") or imp.const_ints(1, "split")
    if not sizes:
        shape = imp.shape(x)
        if shape is None or shape[axis] is None:
            raise imp.fail("an equal Split needs the size of its axis")
        n = shape[axis]
        step = -(-n // n_out) if "num_outputs" in a else n // n_out
        sizes = [min(step, n - s) for s in range(0, n, step)][:n_out]
    shape = imp.shape(x)
    n = shape[axis] if shape is not None else None
    if len(set(sizes)) == 1 and n is not None and sum(sizes) == n:  # chunk: fuses as indexing
        lst = imp.op("aten::chunk", [x, len(sizes), axis])[0]
    else:
        lst = imp.op("aten::split_with_sizes", [x, [int(s) for s in sizes], axis])[0]
    return imp.op("prim::ListUnpack", [lst], n_out,
                  types=[imp.typed(k) for k in range(n_out)])


def slice_(imp: Importer) -> List[Value]:
    x = imp.input(0)
    starts, ends = imp.const_ints(1, "starts"), imp.const_ints(2, "ends")
    axes = imp.const_ints(3, "axes") or list(range(len(starts)))
    steps = imp.const_ints(4, "steps") or [1] * len(starts)
    for s, e, ax, st in zip(starts, ends, axes, steps):
        if st <= 0:
            raise imp.fail("Slice with a negative step is not supported")
        x = imp.op("aten::slice", [x, ax, s, None if e >= INT64_MAX // 2 else e, st])[0]
    x.type = imp.typed()
    return [x]


def squeeze(imp: Importer) -> List[Value]:
    x = imp.input(0)
    axes = imp.attrs().get("axes") or imp.const_ints(1, "axes")
    if not axes:
        return imp.op("aten::squeeze", [x, None], types=[imp.typed()])
    rank = len(imp.shape(x)) if imp.shape(x) is not None else None
    if rank is None and any(d < 0 for d in axes):
        raise imp.fail("negative Squeeze axes need the input's rank")
    for d in sorted((d % rank if d < 0 else d for d in axes), reverse=True):
        x = imp.op("aten::squeeze", [x, d])[0]
    x.type = imp.typed()
    return [x]


def unsqueeze(imp: Importer) -> List[Value]:
    x = imp.input(0)
    axes = imp.attrs().get("axes") or imp.const_ints(1, "axes")
    out_rank = len(imp.shape(x)) + len(axes) if imp.shape(x) is not None else None
    if out_rank is None and any(d < 0 for d in axes):
        raise imp.fail("negative Unsqueeze axes need the input's rank")
    for d in sorted(d % out_rank if d < 0 else d for d in axes):
        x = imp.op("aten::unsqueeze", [x, d])[0]
    x.type = imp.typed()
    return [x]


def flatten(imp: Importer) -> List[Value]:
    x = imp.input(0)
    axis = int(imp.attrs().get("axis", 1))
    out = imp.out_info()[1]
    if out is not None and all(d is not None for d in out):
        return imp.op("aten::reshape", [x, [int(d) for d in out]], types=[imp.typed()])
    if axis == 0:
        return imp.op("aten::reshape", [x, [1, -1]], types=[imp.typed()])
    head = imp.op("aten::flatten", [x, 0, axis - 1])[0]
    return imp.op("aten::flatten", [head, 1, -1], types=[imp.typed()])


def expand(imp: Importer) -> List[Value]:
    x = imp.input(0)
    target = size_arg(imp, 1) or imp.const_ints(1, "shape")
    shape = imp.shape(x)
    if shape is None:
        raise imp.fail("Expand needs its input's rank (it broadcasts both ways)")
    if None not in shape and all(isinstance(t, int) for t in target):
        size = [int(d) for d in np.broadcast_shapes(tuple(shape), tuple(target))]
    else:  # a 1 keeps the input's dim: PyTorch's -1; missing leading dims are kept too
        lead = len(target) - len(shape)
        size = [-1] * max(-lead, 0) + [
            -1 if (isinstance(t, int) and t == 1 and k >= lead) else t for k, t in enumerate(target)]
        if not all(isinstance(t, int) for t in size):
            size = imp.op("prim::ListConstruct", size)[0]
    c = imp.const(x)
    if c is not None and c.ndim == 0:  # a fill (zeros_like & co.): a 0-d constant is a scalar
        return imp.op("aten::full", [size, c.item(), DTYPE_TO_SCALAR_TYPE_ENUM[str(c.dtype)]],
                      types=[imp.typed()])
    return imp.op("aten::expand", [x, size, False], types=[imp.typed()])


def constant_of_shape(imp: Importer) -> List[Value]:
    """ConstantOfShape(shape)[value]: aten::full (value defaults to a float32 0)."""
    a = imp.node.attribute
    value = next((imp.numpy_helper.to_array(x.t) for x in a if x.name == "value"),
                 np.zeros(1, np.float32)).reshape(-1)
    size = size_arg(imp, 0) or imp.const_ints(0, "shape")
    if not all(isinstance(d, int) for d in size):
        size = imp.op("prim::ListConstruct", size)[0]
    return imp.op("aten::full", [size, value[0].item(), DTYPE_TO_SCALAR_TYPE_ENUM[str(value.dtype)]],
                  types=[imp.typed()])


def isinf(imp: Importer) -> List[Value]:
    a = imp.attrs()
    neg, pos = a.get("detect_negative", 1), a.get("detect_positive", 1)
    if neg and pos:
        return imp.op("aten::isinf", [imp.input(0)], types=[imp.typed()])
    if not (neg or pos):
        raise imp.fail("IsInf detecting neither sign is not supported")
    return imp.op("aten::eq", [imp.input(0), math.inf if pos else -math.inf], types=[imp.typed()])


def gather(imp: Importer) -> List[Value]:
    x = imp.input(0)
    axis = int(imp.attrs().get("axis", 0))
    idx = imp.const(imp.input(1))
    if idx is None or idx.ndim > 1:
        raise imp.fail("Gather is supported with constant 0-d or 1-d indices")
    if idx.ndim == 0:
        return imp.op("aten::select", [x, axis, int(idx)], types=[imp.typed()])
    shape = imp.shape(x)
    if (idx < 0).any():
        if shape is None or shape[axis] is None:
            raise imp.fail("negative Gather indices need the size of the axis")
        idx = np.where(idx < 0, idx + shape[axis], idx)
    return imp.op("aten::index_select", [x, axis, idx.astype(np.int64)], types=[imp.typed()])


def shape(imp: Importer) -> List[Value]:
    s = imp.shape(imp.input(0))
    if s is None or any(d is None for d in s):
        raise imp.fail("Shape of a tensor whose shape is not static is not supported")
    a = imp.attrs()
    return [imp.py(np.array(s, np.int64)[a.get("start", 0):a.get("end", len(s))])]


# -- control flow -----------------------------------------------------------------------------------------

def if_(imp: Importer) -> List[Value]:
    a = imp.node.attribute
    branches = {x.name: x.g for x in a}
    cond = imp.op("aten::Bool", [imp.input(0)], types=[BOOL])[0]
    n_out = len(imp.node.output)
    node = imp.graph.create("prim::If", [cond], [imp.typed(k) for k in range(n_out)],
                            block=imp.block)
    for key in ("then_branch", "else_branch"):
        block = node.add_block()
        imp.blocks.append(block)
        block.returns = imp.subgraph(branches[key], [])
        imp.blocks.pop()
    return node.outputs


def loop(imp: Importer) -> List[Value]:
    body = next(x.g for x in imp.node.attribute if x.name == "body")
    n_carried = len(imp.node.input) - 2
    if len(body.output) != 1 + n_carried:
        raise imp.fail("Loop scan outputs are not supported")
    m, c = imp.input(0), imp.input(1)
    trip = imp.op("aten::Int", [m], types=[INT])[0] if m is not None else imp.py(int(INT64_MAX))
    cond = imp.op("aten::Bool", [c], types=[BOOL])[0] if c is not None else imp.py(True)
    init = [imp.input(k) for k in range(2, len(imp.node.input))]
    node = imp.graph.create("prim::Loop", [trip, cond] + init,
                            [imp.typed(k) for k in range(n_carried)], block=imp.block)
    block = node.add_block()
    imp.blocks.append(block)
    i = block.add_param("i", INT)
    params = [block.add_param(None, v.type) for v in init]
    iteration = imp.op("prim::NumToTensor", [i], types=[TensorType("int64", ())])[0]
    true = imp.py(np.array(True))
    outs = imp.subgraph(body, [iteration, true] + params)
    keep = imp.op("aten::Bool", [outs[0]], types=[BOOL])[0]
    block.returns = [keep] + outs[1:]
    imp.blocks.pop()
    return node.outputs
