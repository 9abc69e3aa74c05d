"""Export rules of the non-elementwise ops: reductions, softmax, layer_norm, matmul/linear,
shape ops, the list/tuple prims and control flow (``op_table.EXPORT`` names them).

Shapes the graph knows are used as constants (a ``view``'s target, a ``chunk``'s split sizes,
an ``expand``'s ``-1``s): the exported graph is specialized on the example inputs' shapes,
as the graph it came from was.
"""
from __future__ import annotations

from typing import List

import numpy as np

from ..ir.graph import Node, Value
from ..ir.types import ListType, TupleType
from .dtypes import dtype_of_type
from .emitter import Emitter, ExportError
from .export_ops import INT64_MAX, args_of, const_attr


def _rank(em: Emitter, v: Value) -> int:
    shape = em.shape(v)
    if shape is None:
        raise ExportError(f"the rank of %{v.name} is unknown")
    return len(shape)


def _dims(attrs: dict, node: Node, name: str) -> List[int]:
    d = const_attr(node, attrs, name)
    return [] if d is None else [int(x) for x in (d if isinstance(d, (list, tuple)) else [d])]


# -- reductions ------------------------------------------------------------------------------------

def reduction(onnx_op: str):
    """sum/mean/amax/amin: the input cast to the out dtype (sum of int32 is int64), then
    Reduce*; no dims (None or []) reduces everything."""
    def rule(em: Emitter, node: Node) -> None:
        op, operands, attrs = args_of(node)
        out = em.dtype(node.outputs[0])
        x = em.tensor(operands[0], out)
        dims = _dims(attrs, node, "dim")
        keep = int(bool(const_attr(node, attrs, "keepdim")))
        if not dims:
            result = em.emit(onnx_op, [x], keepdims=keep)
        elif onnx_op == "ReduceSum" or em.opset >= 18:
            result = em.emit(onnx_op, [x, em.constant(np.array(dims, np.int64))], keepdims=keep)
        else:
            result = em.emit(onnx_op, [x], axes=dims, keepdims=keep)
        em.bind(node.outputs[0], result)
    rule.onnx_op = onnx_op
    return rule


def softmax(onnx_op: str):
    def rule(em: Emitter, node: Node) -> None:
        op, operands, attrs = args_of(node)
        x = em.tensor(operands[0], em.dtype(node.outputs[0]))
        em.bind(node.outputs[0], em.emit(onnx_op, [x], axis=int(const_attr(node, attrs, "dim"))))
    rule.onnx_op = onnx_op
    return rule


def layer_norm(em: Emitter, node: Node) -> None:
    op, operands, attrs = args_of(node)
    x, weight, bias = operands
    dt = em.dtype(node.outputs[0])
    normalized = _dims(attrs, node, "normalized_shape")
    scale = em.tensor(weight, dt) if weight is not None else em.constant(np.ones(normalized), dt)
    inputs = [em.tensor(x, dt), scale] + ([em.tensor(bias, dt)] if bias is not None else [])
    em.bind(node.outputs[0], em.emit("LayerNormalization", inputs, axis=-len(normalized),
                                     epsilon=float(const_attr(node, attrs, "eps"))))


# -- linear algebra --------------------------------------------------------------------------------

def matmul(em: Emitter, node: Node) -> None:
    dt = em.dtype(node.outputs[0])
    em.bind(node.outputs[0], em.emit("MatMul", [em.tensor(v, dt) for v in node.inputs[:2]]))


def _transposed(em: Emitter, v: Value, dt: str) -> str:
    """``v.T`` (2-D): a constant is transposed here, once, as an initializer."""
    if v.is_constant() and isinstance(v.constant_value(), np.ndarray):
        return em.constant(np.ascontiguousarray(v.constant_value().T), dt, initializer=True)
    return em.emit("Transpose", [em.tensor(v, dt)], perm=[1, 0])


def linear(em: Emitter, node: Node) -> None:
    """x @ W.T + b: Gemm for a 2-D x, else MatMul (+ Add)."""
    op, (x, w, b), attrs = args_of(node)
    dt = em.dtype(node.outputs[0])
    if _rank(em, x) == 2 and _rank(em, w) == 2:
        inputs = [em.tensor(x, dt), em.tensor(w, dt)] + ([em.tensor(b, dt)] if b is not None else [])
        em.bind(node.outputs[0], em.emit("Gemm", inputs, transB=1))
        return
    y = em.emit("MatMul", [em.tensor(x, dt), _transposed(em, w, dt) if _rank(em, w) == 2
                           else em.tensor(w, dt)])
    em.bind(node.outputs[0], y if b is None else em.emit("Add", [y, em.tensor(b, dt)]))


def addmm(em: Emitter, node: Node) -> None:
    op, (c, a, b), attrs = args_of(node)
    dt = em.dtype(node.outputs[0])
    em.bind(node.outputs[0], em.emit(
        "Gemm", [em.tensor(a, dt), em.tensor(b, dt), em.tensor(c, dt)],
        alpha=float(const_attr(node, attrs, "alpha")), beta=float(const_attr(node, attrs, "beta"))))


# -- shape ops ---------------------------------------------------------------------------------------

def reshape(em: Emitter, node: Node) -> None:
    """reshape/view/flatten: Reshape to the output's shape where it is known; else to the
    size argument (-1 means the same to both) or, for flatten, Shape slices around a -1."""
    out = em.shape(node.outputs[0])
    x = em.tensor(node.inputs[0])
    if out is not None and None not in out:
        shape = em.constant(np.array(out, np.int64))
    elif node.kind == "aten::flatten":
        rank = _rank(em, node.inputs[0])
        start, end = (int(v.constant_value()) % max(rank, 1) for v in node.inputs[1:3])
        head = em.emit("Shape", [x], start=0, end=start)
        tail = em.emit("Shape", [x], start=end + 1, end=rank)
        shape = em.emit("Concat", [head, em.constant(np.array([-1], np.int64)), tail], axis=0)
    else:
        shape = em.int_vector(node.inputs[1])
    em.bind(node.outputs[0], em.emit("Reshape", [x, shape], allowzero=1))


def permute(em: Emitter, node: Node) -> None:
    op, operands, attrs = args_of(node)
    rank = _rank(em, operands[0])
    if node.kind == "aten::permute":
        perm = [d % rank for d in _dims(attrs, node, "dims")]
    else:
        perm = list(range(rank))[::-1]
        if node.kind == "aten::transpose":
            perm = list(range(rank))
            d0, d1 = (int(const_attr(node, attrs, k)) % rank for k in ("dim0", "dim1"))
            perm[d0], perm[d1] = perm[d1], perm[d0]
    em.bind(node.outputs[0], em.emit("Transpose", [em.tensor(operands[0])], perm=perm))


def cat(em: Emitter, node: Node) -> None:
    dt = em.dtype(node.outputs[0])
    names = em.items(node.inputs[0])
    items = _list_values(node.inputs[0])
    if items is not None:  # cat promotes its inputs
        names = [em.tensor(v, dt) for v in items]
    dim = int(node.inputs[1].constant_value(0)) if len(node.inputs) > 1 else 0
    if node.kind == "aten::stack":
        names = [em.emit("Unsqueeze", [n, em.constant(np.array([dim], np.int64))]) for n in names]
    em.bind(node.outputs[0], em.emit("Concat", names, axis=dim))


def _list_values(v: Value):
    if v.node is not None and v.node.kind == "prim::ListConstruct":
        return list(v.node.inputs)
    return None


def split(em: Emitter, node: Node) -> None:
    """split/chunk/split_with_sizes/unsafe_chunk: Split with the sizes the shape gives."""
    op, operands, attrs = args_of(node)
    x = operands[0]
    dim = int(const_attr(node, attrs, "dim") or 0)
    n = (em.shape(x) or [None] * (dim + 1))[dim]
    if n is None:
        raise ExportError(f"the size of dim {dim} it splits is not known (a dynamic axis?)")
    if node.kind.endswith("split_with_sizes"):
        sizes = _dims(attrs, node, "split_sizes")
    else:
        if node.kind.endswith("chunk"):
            chunks = int(const_attr(node, attrs, "chunks"))
            step = -(-n // chunks) if n else 0
        else:
            step = int(const_attr(node, attrs, "split_size"))
        sizes = [min(step, n - s) for s in range(0, n, step)] if step else [0]
    outs = em.emit("Split", [em.tensor(x), em.constant(np.array(sizes, np.int64))],
                   outputs=len(sizes), axis=dim)
    em.bind(node.outputs[0], outs if isinstance(outs, list) else [outs])


def slice_(em: Emitter, node: Node) -> None:
    op, operands, attrs = args_of(node)
    start, end = attrs.get("start"), attrs.get("end")
    parts = []
    for v, default in ((start, 0), (end, INT64_MAX)):
        if isinstance(v, Value):
            parts.append(em.emit("Unsqueeze", [em.tensor(v, "int64"), em.constant(np.array([0]))]))
        else:
            parts.append(em.constant(np.array([default if v is None else min(int(v), INT64_MAX)],
                                              np.int64)))
    axes = em.constant(np.array([int(const_attr(node, attrs, "dim"))], np.int64))
    steps = em.constant(np.array([int(const_attr(node, attrs, "step"))], np.int64))
    em.bind(node.outputs[0], em.emit("Slice", [em.tensor(operands[0])] + parts + [axes, steps]))


def select(em: Emitter, node: Node) -> None:
    op, operands, attrs = args_of(node)
    index = attrs["index"]
    idx = em.tensor(index, "int64") if isinstance(index, Value) else em.constant(np.int64(index))
    em.bind(node.outputs[0], em.emit("Gather", [em.tensor(operands[0]), idx],
                                     axis=int(const_attr(node, attrs, "dim"))))


def unsqueeze(em: Emitter, node: Node) -> None:
    op, operands, attrs = args_of(node)
    dim = np.array([int(const_attr(node, attrs, "dim"))], np.int64)
    em.bind(node.outputs[0], em.emit("Unsqueeze", [em.tensor(operands[0]), em.constant(dim)]))


def squeeze(em: Emitter, node: Node) -> None:
    """Squeeze of the dims that are 1 (PyTorch leaves a dim of another size alone)."""
    op, operands, attrs = args_of(node)
    shape = em.shape(operands[0])
    if shape is None:
        raise ExportError(f"the rank of %{operands[0].name} is unknown")
    dims = [d % len(shape) for d in _dims(attrs, node, "dim")] or list(range(len(shape)))
    if any(shape[d] is None for d in dims):
        raise ExportError("squeeze of a dim whose size is not known (a dynamic axis?)")
    ones = [d for d in dims if shape[d] == 1]
    x = em.tensor(operands[0])
    em.bind(node.outputs[0], em.emit("Squeeze", [x, em.constant(np.array(ones, np.int64))])
            if ones else x)


def expand(em: Emitter, node: Node) -> None:
    """Expand to the output's shape where known; else to the sizes with -1 as 1 (ONNX's
    Expand broadcasts both ways: a 1 keeps the input's dim)."""
    out = em.shape(node.outputs[0])
    if out is None or None in out:
        sizes = em.ints(node.inputs[1])
        if sizes is None:
            raise ExportError("expand to computed sizes of unknown shape")
        out = [1 if d == -1 else d for d in sizes]
    em.bind(node.outputs[0], em.emit("Expand", [em.tensor(node.inputs[0]),
                                                em.constant(np.array(out, np.int64))]))


def size(em: Emitter, node: Node) -> None:
    """aten::size(x, dim): a constant where the shape is known, else Shape + Squeeze."""
    x, dim = node.inputs[0], (node.inputs[1].constant_value() if len(node.inputs) > 1 else None)
    shape = em.shape(x)
    rank = _rank(em, x)
    dims = range(rank) if dim is None else [int(dim) % rank]
    items = []
    for d in dims:  # a constant where the dim is known, else Shape + Squeeze at run time
        if shape[d] is not None:
            items.append(em.constant(np.int64(shape[d])))
        else:
            s = em.emit("Shape", [em.tensor(x)], start=d, end=d + 1)
            items.append(em.emit("Squeeze", [s, em.constant(np.array([0], np.int64))]))
    em.bind(node.outputs[0], items if dim is None else items[0])  # size(x): a list of ints


def getitem(em: Emitter, node: Node) -> None:
    """aten::__getitem__ of a list (``x.shape[0]``): its item, the index a constant."""
    index = node.inputs[1].constant_value()
    if index is None:
        raise ExportError("a list indexed by a computed int")
    em.bind(node.outputs[0], em.items(node.inputs[0])[int(index)])


# -- lists, tuples ------------------------------------------------------------------------------------

def construct(em: Emitter, node: Node) -> None:
    """ListConstruct/TupleConstruct of tensors: the list of names (int lists stay lazy)."""
    out = node.outputs[0]
    if all(dtype_of_type(v.type) is not None or v.is_constant() for v in node.inputs) and \
            (isinstance(out.type, TupleType) or (isinstance(out.type, ListType)
                                                 and out.type.elem.is_tensor())):
        em.bind(out, [em.tensor(v) for v in node.inputs])


def unpack(em: Emitter, node: Node) -> None:
    items = em.items(node.inputs[0])
    if len(items) != len(node.outputs):
        raise ExportError(f"{len(items)} items unpacked into {len(node.outputs)} values")
    for v, name in zip(node.outputs, items):
        em.bind(v, name)


def tuple_index(em: Emitter, node: Node) -> None:
    em.bind(node.outputs[0], em.items(node.inputs[0])[int(node.inputs[1].constant_value())])


# -- control flow ---------------------------------------------------------------------------------------

def _subgraph(em: Emitter, block, name: str, inputs, outputs: List[Value], out_dtypes):
    em.export_block(block)
    outs = [em.cast(em.tensor(v), em.dtype(v), dt) for v, dt in zip(block.returns, out_dtypes)]
    outs = _fresh_outputs(em, outs)
    infos = [em.helper.make_tensor_value_info(n, _elem(dt), None) for n, dt in zip(outs, out_dtypes)]
    nodes = em.pop_scope()
    return em.helper.make_graph(nodes, name, inputs, infos)


def _fresh_outputs(em: Emitter, names: List[str]) -> List[str]:
    produced = {o for n in em.scopes[-1]["nodes"] for o in n.output}
    out, seen = [], set()
    for n in names:
        if n not in produced or n in seen:
            n = em.emit("Identity", [n])
        seen.add(n)
        out.append(n)
    return out


def _elem(dtype: str) -> int:
    from .dtypes import onnx_elem_type
    return onnx_elem_type(dtype)


def if_(em: Emitter, node: Node) -> None:
    cond = em.tensor(node.inputs[0], "bool")
    dts = [em.dtype(v) for v in node.outputs]
    if any(d is None for d in dts) or any(isinstance(v.type, (ListType, TupleType))
                                          for v in node.outputs):
        raise ExportError("an output of prim::If is not a tensor of known dtype")
    branches = []
    for i, block in enumerate(node.blocks):
        em.push_scope()
        branches.append(_subgraph(em, block, em.fresh(f"if_branch{i}"), [], node.outputs, dts))
    outs = em.emit("If", [cond], outputs=[em.fresh("if_out") for _ in node.outputs],
                   then_branch=branches[0], else_branch=branches[1])
    for v, n in zip(node.outputs, outs):
        em.bind(v, n)


def loop(em: Emitter, node: Node) -> None:
    """prim::Loop(max_trip_count, cond, carried...) -> Loop(M, cond, carried...): the body's
    parameters (i, carried...) and returns (cond, carried...) are ONNX's body signature but
    for the condition input, which the body graph gets and torchlike's does not need."""
    trip = em.tensor(node.inputs[0], "int64")
    cond = em.tensor(node.inputs[1], "bool")
    carried = node.inputs[2:]
    dts = [em.dtype(v) for v in node.outputs]
    if any(d is None for d in dts):
        raise ExportError("a loop-carried value is not a tensor of known dtype")
    init = [em.tensor(v, dt) for v, dt in zip(carried, dts)]
    body = node.blocks[0]
    em.push_scope()
    helper = em.helper
    i_name, c_name = em.fresh("iter"), em.fresh("cond_in")
    inputs = [helper.make_tensor_value_info(i_name, _elem("int64"), []),
              helper.make_tensor_value_info(c_name, _elem("bool"), [])]
    em.bind(body.params[0], i_name)
    for p, dt in zip(body.params[1:], dts):
        n = em.fresh(p.name)
        em.bind(p, n)
        shape = em.shape(p)
        inputs.append(helper.make_tensor_value_info(n, _elem(dt), None if shape is None else
                                                    [d for d in shape]))
    graph = _subgraph(em, body, em.fresh("loop_body"), inputs, body.returns, ["bool"] + dts)
    outs = em.emit("Loop", [trip, cond] + init, outputs=[em.fresh("loop_out") for _ in carried],
                   body=graph)
    for v, n in zip(node.outputs, outs if isinstance(outs, list) else [outs]):
        em.bind(v, n)
