"""The memory layout of a fusion group's outputs, PyTorch's way, and the loop order it gives.

PyTorch's TensorIterator lays an elementwise result out like its operands
(``reorder_dimensions``: the first operand with a strict stride order decides, broadcast dims
abstain, ties go to the smaller dim), so ``sin(a.T) * 2 + a.T`` is F-ordered; the tracer records
exactly that (``frontend.tracer.elementwise_strides``).  A fused group's outputs get the same
layout: the rule is applied op by op through the group, from the runtime strides of its inputs,
and each kernel output is allocated dense in the order it gives::

    order = loop_order(spec)            # iteration dims, outermost first: (1, 0) for F
    orders = output_orders(spec)        # per kernel output (kernel_spec.kernel_outputs)
    shape, axes = allocation(out_shape, orders[j])
    out = np.empty(shape, dtype) if axes is None else np.empty(shape, dtype).transpose(axes)

Every backend iterates in ``loop_order`` -- the memory order of the first kernel output with the
iteration shape -- so that output, and each input laid out like it, is read and written
contiguously by the innermost loop (the CPU's vectorized loop, the consecutive threads of a CUDA
warp).  All-C inputs give the identity order: C outputs, loops as before.  Groups with
reductions keep their own allocation (row_plan) and are not described here.
"""
from __future__ import annotations

from typing import Dict, List, Optional, Sequence, Tuple

from ..frontend.tracer import elementwise_strides
from ..ir.graph import Value
from ..ir.types import TensorType
from .backend import ArraySpec, GroupSpec, ValueKind
from .kernel_spec import kernel_outputs

__all__ = ["value_strides", "output_orders", "loop_order", "order_of", "allocation",
           "dense_strides", "array_layout"]

ITEMSIZE = {"bool": 1, "uint8": 1, "int8": 1, "int16": 2, "int32": 4, "int64": 8,
            "float16": 2, "bfloat16": 2, "float32": 4, "float64": 8, "complex64": 8,
            "complex128": 16}
_ARRAYS = (ValueKind.ARRAY, ValueKind.OP)


def dense_strides(shape: Sequence[int], order: Sequence[int]) -> Tuple[int, ...]:
    """Element strides of an array of ``shape`` dense in ``order`` (dims outermost first)."""
    out, acc = [0] * len(shape), 1
    for d in reversed(order):
        out[d] = acc
        acc *= shape[d]
    return tuple(out)


def _c_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    return dense_strides(shape, range(len(shape)))


def _input_strides(s: ArraySpec) -> Tuple[int, ...]:
    """An input's element strides as the tracer records them (PyTorch's contiguous strides
    for an empty array), but for their sign: a reversed numpy view (``x[::-1]``, which
    PyTorch cannot express) is laid out in memory as its absolute strides say, and the
    outputs follow that order."""
    if 0 in s.shape:
        return _c_strides(s.shape)
    item = ITEMSIZE.get(s.dtype, 1)
    return tuple(abs(st) // item for st in s.strides)


def value_strides(spec: GroupSpec) -> Dict[Value, Tuple[int, ...]]:
    """Element strides of every array value of the group: inputs (and chunks of them, views
    with the input's strides) as they are, op results as PyTorch lays them out."""
    strides: Dict[Value, Tuple[int, ...]] = {}
    for v, info in spec.values.items():
        if info.kind == ValueKind.ARRAY:
            strides[v] = _input_strides(spec.signature[info.input])
    for o in spec.ops:
        if o.scalar:
            continue
        out = o.node.output()
        shape = spec.values[out].shape
        if not shape or 0 in shape:  # the tracer keeps these C-contiguous, as PyTorch does
            strides[out] = _c_strides(shape)
            continue
        operands = [TensorType(spec.values[v].dtype, spec.values[v].shape, strides[v])
                    for v in o.node.inputs
                    if v in spec.values and spec.values[v].kind in _ARRAYS and v in strides]
        strides[out] = elementwise_strides(shape, operands)
    return strides


def order_of(shape: Sequence[int], strides: Sequence[int]) -> Tuple[int, ...]:
    """The dims of a dense layout, outermost (largest stride) first.  Among equal strides
    (next to a size-1 dim) the dim of size > 1 is the outer one, so that
    ``dense_strides(shape, order_of(shape, s)) == s`` for every dense ``s``."""
    return tuple(sorted(range(len(shape)), key=lambda d: (-strides[d], shape[d] == 1, d)))


def output_orders(spec: GroupSpec) -> List[Tuple[int, ...]]:
    """Per kernel output (``kernel_outputs``), its dims outermost first: an op result in the
    layout PyTorch gives it, a chunk the kernel copies in its input's order."""
    strides = value_strides(spec)
    out = []
    for v in kernel_outputs(spec):
        shape = spec.values[v].shape
        if spec.values[v].kind == ValueKind.ARRAY and shape and 0 not in shape:
            st = elementwise_strides(shape, [TensorType(spec.values[v].dtype, shape, strides[v])])
        else:
            st = strides.get(v, _c_strides(shape))
        out.append(order_of(shape, st))
    return out


def loop_order(spec: GroupSpec, orders: Optional[List[Tuple[int, ...]]] = None
               ) -> Tuple[int, ...]:
    """The iteration dims, outermost first: the memory order of the first kernel output that
    has the iteration shape (the identity when there is none, or for a reduction group)."""
    rank = len(spec.iter_shape)
    if spec.reductions:
        return tuple(range(rank))
    if orders is None:
        orders = output_orders(spec)
    for v, order in zip(kernel_outputs(spec), orders, strict=True):
        if spec.values[v].shape == spec.iter_shape:
            return order
    return tuple(range(rank))


def allocation(shape: Tuple[int, ...], order: Sequence[int]
               ) -> Tuple[Tuple[int, ...], Optional[Tuple[int, ...]]]:
    """``(shape in memory order, axes)``: ``empty(mem_shape).transpose(axes)`` is an array of
    ``shape`` dense in ``order``; ``axes`` is None for the identity (C order)."""
    order = tuple(order)
    if order == tuple(range(len(shape))):
        return shape, None
    axes = [0] * len(order)
    for pos, d in enumerate(order):
        axes[d] = pos
    return tuple(shape[d] for d in order), tuple(axes)


def array_layout(shape: Sequence[int], strides: Sequence[int]) -> str:
    """numpy's contiguity flags as Numba types an array: ``C``, else ``F``, else ``A`` (size-1
    dims do not count; an empty array is both)."""
    if 0 in shape:
        return "C"

    def dense(dims) -> bool:
        acc = 1
        for d in dims:
            if shape[d] != 1 and strides[d] != acc:
                return False
            acc *= shape[d]
        return True
    r = len(shape)
    if dense(range(r - 1, -1, -1)):
        return "C"
    return "F" if dense(range(r)) else "A"
