"""The scripter's compile-time values, and how the types of merged values unify.

While compiling, a Python name is bound either to a graph ``Value`` or to one of these: things
that exist only while compiling (a module, a function to inline, an op's name waiting for its
call, a tuple literal kept as its items, a condition already known) and that become graph values
only if they must (``GraphBuilder.materialize``).
"""
from __future__ import annotations

import types as pytypes
from dataclasses import dataclass, field
from typing import Any, Dict, List, Literal, Optional, Protocol, Tuple

from ..ir.graph import Graph, Value
from ..ir.types import NONE, TENSOR, OptionalType, TupleType, Type

__all__ = ["BoundMethod", "Builtin", "Callee", "Member", "Method", "ModuleInfo", "ModuleRef",
           "ModuleValue", "ObjectRef", "OpName", "PendingType", "PythonFunction", "ScriptCallee",
           "Seq", "Static", "Sugar", "Undefined", "deref", "unify"]


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


@dataclass(frozen=True)
class Callee:
    """How a call of a compiled function binds its arguments: the parameter names (after a
    module's ``self``), the defaults of the trailing ones (Python values), and the types of
    the graph's outputs (one, or several for a tuple return)."""

    names: Tuple[str, ...]
    defaults: Dict[str, Any] = field(default_factory=dict)
    output_types: Tuple[Type, ...] = (TENSOR,)


@dataclass(frozen=True)
class Member:
    """What ``module.name`` is while a module's method is compiled:

    ``"tensor"`` a parameter or buffer (``prim::GetAttr``, typed Tensor), ``"module"`` a
    submodule (``prim::GetAttr`` typed with its class; ``module`` describes it), ``"scalar"`` a
    bool/int/float/str attribute read at run time (``prim::GetAttr``), ``"constant"`` a value
    fixed at compile time (``__constants__``, ``None`` parameters, tuples), ``"method"`` another
    Python method of the module (``value`` is the function; its calls are inlined)."""

    kind: Literal["tensor", "module", "scalar", "constant", "method"]
    type: Optional[Type] = None
    value: Any = None
    module: Optional["ModuleInfo"] = None


class ModuleInfo(Protocol):
    """A module as the scripter sees it (``torchlike.jit`` implements it over ``nn.Module``s):
    its class name, its members, its children in order (iteration over containers) and how
    its ``forward`` is called (``prim::CallMethod``)."""

    qualified_name: str

    def member(self, name: str) -> Optional[Member]:
        """``self.name``, or None when the module has no such attribute."""

    def children(self) -> List[Tuple[str, "ModuleInfo"]]:
        """The submodules in registration order (``for layer in self.layers``)."""

    def forward_callee(self) -> Callee:
        """How ``module(...)`` binds and what it returns."""


@dataclass(eq=False)
class ModuleValue(Sugar):
    """A module in a scripted method: ``%self`` or a submodule read by ``prim::GetAttr``."""

    value: Value
    info: ModuleInfo

    def describe(self):
        return f"module '{self.info.qualified_name}'"


@dataclass(eq=False)
class BoundMethod(Sugar):
    """``self.helper``: a Python method of a module, inlined with ``self`` bound."""

    module: ModuleValue
    fn: pytypes.FunctionType

    def describe(self):
        return f"method '{self.fn.__name__}'"


@dataclass(eq=False)
class ScriptCallee(Sugar):
    """A compiled function (``jit.script``/``jit.trace`` result) called from scripted code: its
    graph is copied in at the call (TorchScript's ``prim::CallFunction``, inlined)."""

    graph: Graph
    name: str
    callee: Callee

    def describe(self):
        return f"script function '{self.name}'"


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
    # TorchScript's unifyTypes: None and T -> T?; T and U? -> (T and U)?
    if a == NONE or b == NONE:
        other = b if a == NONE else a
        return other if isinstance(other, OptionalType) else OptionalType(other)
    if isinstance(a, OptionalType) or isinstance(b, OptionalType):
        inner = unify(a.elem if isinstance(a, OptionalType) else a,
                      b.elem if isinstance(b, OptionalType) else b)
        return None if inner is None else OptionalType(inner)
    return None
