"""The scripter's compile-time values, and how the types of merged values unify.

While compiling, a Python name is bound either to a graph ``Value`` or to one of these: things
that exist only while compiling (a module, a function to inline, an op's name waiting for its
call, a tuple literal kept as its items, a condition already known) and that become graph values
only if they must (``GraphBuilder.materialize``).
"""
from __future__ import annotations

import types as pytypes
from dataclasses import dataclass
from typing import Any, Literal, Optional

from ..ir.graph import Value
from ..ir.types import TENSOR, TupleType, Type

__all__ = ["Builtin", "Method", "ModuleRef", "ObjectRef", "OpName", "PendingType",
           "PythonFunction", "Seq", "Static", "Sugar", "Undefined", "deref", "unify"]


class Sugar:
    """A compile-time value: a module, a function, a bound method, a tuple literal, ...

    Identity matters (an ``if`` keeps a name whose value neither branch rebound), so these
    records compare by identity."""

    def describe(self) -> str:
        """How errors name it: "seq cannot be used as a value"."""
        return type(self).__name__.lower()


@dataclass(eq=False)
class ModuleRef(Sugar):
    """A module (``np``, ``tl``, ``math``): its attributes are ops, constants or modules."""

    mod: pytypes.ModuleType

    @property
    def root(self) -> str:
        """The top-level package (``numpy`` for ``np.linalg``)."""
        return self.mod.__name__.split(".")[0]

    def describe(self):
        return f"module '{self.mod.__name__}'"


@dataclass(eq=False)
class OpName(Sugar):
    """``tl.tanh``, ``np.exp``, ``math.exp``: a registry op looked up by name when called."""

    name: str
    origin: str  # the module's root package: "torchlike", "torch", "numpy" or "math"

    def describe(self):
        return f"function '{self.origin}.{self.name}'"


@dataclass(eq=False)
class Method(Sugar):
    """``x.sigmoid``: an op called with ``value`` as its ``self``."""

    value: Value
    name: str

    def describe(self):
        return f"attribute '{self.name}' of a {self.value.type} value"


@dataclass(eq=False)
class Builtin(Sugar):
    """A builtin function the scripter knows (``len``, ``print``, ``range``, ...)."""

    name: str

    def describe(self):
        return f"builtin '{self.name}'"


@dataclass(eq=False)
class PythonFunction(Sugar):
    """A plain Python function: calls to it are inlined."""

    fn: pytypes.FunctionType

    def describe(self):
        return f"function '{self.fn.__name__}'"


@dataclass(eq=False)
class ObjectRef(Sugar):
    """``self`` of a bound method: only its Python scalar attributes can be read."""

    obj: Any

    def describe(self):
        return "object"


@dataclass(eq=False)
class Seq(Sugar):
    """A tuple or list literal, kept as its items until it must become one value."""

    items: list
    kind: Literal["tuple", "list"] = "tuple"

    def __post_init__(self):
        self.items = list(self.items)


@dataclass(eq=False)
class Static(Sugar):
    """A condition known while compiling (``x is None``): only the taken branch is compiled."""

    value: bool


@dataclass(eq=False)
class Undefined(Sugar):
    """A name that is not defined on every path; using it is an error with this message."""

    message: str


class PendingType(Type):
    """The type of a loop's "returned value" slot before any ``return`` in the loop was seen."""

    def __init__(self):
        self.resolved: Optional[Type] = None

    def __str__(self):
        return str(self.resolved) if self.resolved is not None else "Any"


def deref(t: Type) -> Type:
    """``t``, or what a resolved ``PendingType`` stands for."""
    while isinstance(t, PendingType) and t.resolved is not None:
        t = t.resolved
    return t


def unify(a: Type, b: Type) -> Optional[Type]:
    """The common type of two values merged by an if or a loop, or None if they differ."""
    a, b = deref(a), deref(b)
    if isinstance(a, PendingType) or isinstance(b, PendingType):
        if a is b:
            return a
        pending, other = (a, b) if isinstance(a, PendingType) else (b, a)
        pending.resolved = other
        return other
    if a == b:
        return a
    if a.is_tensor() and b.is_tensor():
        return TENSOR
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        elems = [unify(x, y) for x, y in zip(a.elems, b.elems, strict=False)]
        return None if any(e is None for e in elems) else TupleType(tuple(elems))
    return None
