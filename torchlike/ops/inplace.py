"""In-place ops: ``aten::add_``, ``aten::relu_``, ``aten::copy_``, ``aten::fill_``, ...

PyTorch prints them wherever a program mutates a tensor (``x += y`` scripted, ``inplace=True``
activations, a residual ``out += identity``)::

    graph(%x : Tensor, %y : Tensor):
      %1 : int = prim::Constant[value=1]()
      %z : Tensor = aten::mul(%x, %y)
      %z.1 : Tensor = aten::add_(%z, %y, %1)   # z += y
      %r : Tensor = aten::relu_(%z.1)
      return (%r)

Every elementwise op whose first parameter is ``Tensor self`` gets its ``<name>_`` twin here,
derived from the registry entry (one definition per op): it computes the op, checks what
PyTorch checks -- the result must keep ``self``'s shape (``x.add_(y)`` cannot broadcast ``x``
up) and be castable to ``self``'s dtype (no float result into an integer tensor, nothing but
bool into bool) -- then writes into ``self`` and returns it.  The twins are never fused and never
removed or merged (``pure=False``): ``passes.remove_mutation`` first rewrites the mutations it
can prove invisible into the functional op, which fuses like any other.
"""
from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import ExecutionError
from .registry import REGISTRY, OpDef, defop, register

__all__ = ["INPLACE_DUNDERS", "INPLACE_OF", "functional_of", "infer_self", "inplace_name", "mutates",
           "register_twins"]

_WRITERS = frozenset({"aten::copy_", "aten::fill_", "aten::zero_"})

# Python's augmented assignments that PyTorch records as in-place ops on a tensor (x += y)
INPLACE_DUNDERS = frozenset(f"__i{name}__" for name in (
    "add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
    "rshift"))

# in-place kind -> its functional op kind (aten::add_ -> aten::add); filled below
INPLACE_OF: dict = {}


def inplace_name(kind: str) -> str:
    """``aten::add`` -> ``aten::add_``; Python's operators: ``aten::__and__`` -> ``aten::__iand__``."""
    ns, base = kind.split("::")
    if base.startswith("__") and base.endswith("__"):
        return f"{ns}::__i{base[2:]}"
    return kind + "_"


def mutates(kind: str) -> bool:
    """True if an op of this kind writes into an input (the in-place twins, copy_/fill_/zero_)."""
    return kind in INPLACE_OF or kind in _WRITERS


def functional_of(kind: str):
    """The functional op kind an in-place kind computes (``aten::add_`` -> ``aten::add``)."""
    return INPLACE_OF.get(kind)


def _castable(src: np.dtype, dst: np.dtype) -> bool:
    """PyTorch's ``canCast`` for in-place results: no float into an integer or bool tensor, no
    integer into bool."""
    if dst.kind == "b":
        return src.kind == "b"
    if dst.kind in "iu":
        return src.kind in "biu"
    return True


def write_into(xp, self: Any, result: Any, name: str) -> Any:
    """``self[...] = result`` with PyTorch's in-place checks; returns ``self``."""
    result = xp.asarray(result)
    if tuple(result.shape) != tuple(self.shape):
        raise ExecutionError(
            f"{name}: output with shape {list(self.shape)} doesn't match the broadcast shape "
            f"{list(result.shape)}")
    if not _castable(result.dtype, self.dtype):
        raise ExecutionError(
            f"{name}: result type {result.dtype} can't be cast to the desired output type "
            f"{self.dtype}")
    if not getattr(getattr(self, "flags", None), "writeable", True):
        raise ExecutionError(f"{name}: the tensor it writes into is read-only")
    xp.copyto(self, result, casting="unsafe")
    return self


def infer_self(node, types):
    """An in-place op's result: ``self``, its type unchanged."""
    return [types[0]]


def _twin(op: OpDef) -> OpDef:
    name = inplace_name(op.name)

    def impl(xp, self, *args):
        if not hasattr(self, "shape") or not hasattr(self, "dtype"):
            raise ExecutionError(f"{name}: expects a tensor to write into, got "
                                 f"{type(self).__name__}")
        return write_into(xp, self, op.impl(xp, self, *args), name)

    return OpDef(name, op.params, impl, category="other", infer=infer_self, pure=False,
                 foldable=False, python_name=name.split("::")[1])


def register_twins() -> None:
    """Register the in-place twin of every elementwise op that has none yet (``ops/__init__``
    calls it once all op modules are imported)."""
    for op in list(REGISTRY.values()):
        if not op.is_elementwise or not op.params or op.params[0].name != "self" \
                or not op.params[0].is_operand or op.name.endswith("_") and not \
                op.name.endswith("__"):
            continue
        name = inplace_name(op.name)
        if name in REGISTRY:
            continue
        register(_twin(op))
        INPLACE_OF[name] = op.name


def _copy(xp, self, src, non_blocking=False):
    src = xp.asarray(src)
    return write_into(xp, self, xp.broadcast_to(src, self.shape).astype(self.dtype), "aten::copy_")


def _fill(xp, self, value):
    return write_into(xp, self, xp.full(self.shape, value, dtype=self.dtype), "aten::fill_")


def _zero(xp, self):
    return write_into(xp, self, xp.zeros(self.shape, dtype=self.dtype), "aten::zero_")


# copy_ and fill_ cast to self's dtype (no canCast check in PyTorch: x.copy_(floats) truncates)
defop("aten::copy_", "Tensor self, Tensor src, bool non_blocking=False", _copy,
      infer=infer_self, pure=False, foldable=False)
defop("aten::fill_", "Tensor self, Scalar value", _fill, infer=infer_self, pure=False,
      foldable=False)
defop("aten::zero_", "Tensor self", _zero, infer=infer_self, pure=False, foldable=False)
