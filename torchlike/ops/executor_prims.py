"""Nodes PyTorch's executors add to a graph after their own passes, so that graphs printed with
``torch.jit.last_executed_optimized_graph()`` or ``fn.graph_for(x)`` run as printed::

    %41 : Float(5, 7, strides=[7, 1]), %42 : bool = prim::TypeCheck[types=[Float(5, 7, ...)]](%x)
    %43 : Tensor = prim::If(%42)
      block0():
        %s : Float(5, 7, strides=[7, 1]) = prim::TensorExprGroup_0(%41)
        -> (%s)
      block1():
        %53 : Function = prim::Constant[name="fallback_function", fallback=1]()
        %54 : (Tensor) = prim::CallFunction(%53, %x)
        ...

* ``prim::TypeCheck`` / ``prim::RequiresGradCheck``: the inputs, then whether they have the
  dtypes and shapes the graph was specialized for (strides are not compared: they only choose
  a kernel, and torchlike picks its own; ``requires_grad`` is always false here).
* The fallback function's body is not part of the printed text: called (the inputs do not
  match the specialization), it raises an error saying so.
* ``prim::profile`` / ``prim::profile_ivalue`` / ``prim::Guard``: their input, unchanged.
* The groups' subgraphs (``prim::TensorExprGroup``, ``prim::CudaFusionGroup``,
  ``prim::DifferentiableGraph``) run in the interpreter like a ``prim::FusionGroup``; before
  fusion, ``passes.inline_groups`` splices them into the graph so torchlike's partitioner
  regroups their ops.
"""
from __future__ import annotations

from typing import Any, List

from ..errors import ExecutionError
from ..ir.types import TensorType
from .functions import register_function
from .registry import OpDef, register

SUBGRAPH_NODES = ("prim::TensorExprGroup", "prim::CudaFusionGroup", "prim::DifferentiableGraph")


def _matches(x: Any, t: Any) -> bool:
    if not isinstance(t, TensorType):
        return True
    dtype = getattr(x, "dtype", None)
    if dtype is None:
        return False
    if t.dtype is not None and str(dtype) != t.dtype:
        return False
    return t.shape is None or tuple(getattr(x, "shape", ())) == tuple(t.shape)


def _type_check(xp, *xs, types=()) -> List[Any]:
    ok = len(xs) == len(types) and all(_matches(x, t) for x, t in zip(xs, types))
    return [*xs, ok]


def _identity_check(xp, *xs, **attrs) -> List[Any]:
    return [*xs, True]


def _fallback_function(*args):
    raise ExecutionError(
        "the inputs do not match the types PyTorch specialized this graph for "
        "(prim::TypeCheck failed), and its fallback function (the unspecialized graph) is not "
        "part of the printed text: run it with inputs of the printed dtypes and shapes, or "
        "print the graph before PyTorch's fuser (torch.jit.script(f).graph)")


for _name, _impl in (("prim::TypeCheck", _type_check),
                     ("prim::RequiresGradCheck", _identity_check)):
    register(OpDef(_name, (), _impl, category="prim", num_outputs=None, foldable=False))
for _name in ("prim::profile", "prim::profile_ivalue", "prim::Guard"):
    register(OpDef(_name, (), lambda xp, x, **attrs: x, category="prim", foldable=False))
register_function("fallback_function", _fallback_function)
