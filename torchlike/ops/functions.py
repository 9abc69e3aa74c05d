"""Known functions that ``prim::CallFunction`` can call, by name.

TorchScript refers to a function through a constant and calls it with ``prim::CallFunction``;
PyTorch's TensorExpr fuser, for one, emits a fallback call like this::

    %130 : Function = prim::Constant[name="fallback_function", fallback=1]()
    %131 : (Tensor, Tensor) = prim::CallFunction(%130, %c.1, %b.1, %h.1)

The table maps a name to a Python callable (called with the runtime arguments) or to a ``Graph``
(which the interpreter runs on them: graphs execute above this layer).  A constant with a
``name`` attribute evaluates to ``function_value(name)``: the registered function, or a
``FunctionRef`` that is resolved only when it is called -- graphs keep dead function constants
(PyTorch's inliner leaves ``prim::Constant[name="_get_softmax_dim"]()`` behind), and an unknown
name is an error only for a call::

    register_function("fallback_function", subgraph)
    lookup_function("fallback_function")   # -> subgraph
    function_value("no_such_fn")           # -> FunctionRef('no_such_fn'); calling it raises
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Union

from ..errors import UnsupportedOpError
from ..ir.graph import Graph

Function = Union[Callable[..., Any], Graph]

_FUNCTIONS: Dict[str, Function] = {}


def register_function(name: str, fn: Function) -> Function:
    """Make ``fn`` (a callable or a Graph) callable by ``name``; a later registration replaces
    an earlier one of the same name."""
    if not (callable(fn) or isinstance(fn, Graph)):
        raise TypeError(f"register_function({name!r}): expected a callable or a Graph, "
                        f"got {type(fn).__name__}")
    _FUNCTIONS[name] = fn
    return fn


def unregister_function(name: str) -> None:
    """Forget ``name`` (no error if it is unknown)."""
    _FUNCTIONS.pop(name, None)


def lookup_function(name: str) -> Optional[Function]:
    """The function registered as ``name``, or None."""
    return _FUNCTIONS.get(name)


class FunctionRef:
    """A function constant whose name is not registered: resolved when called (``resolve``)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def resolve(self) -> Function:
        return resolve_function(self.name)

    def __eq__(self, other) -> bool:
        return isinstance(other, FunctionRef) and other.name == self.name

    def __hash__(self) -> int:
        return hash(("FunctionRef", self.name))

    def __repr__(self) -> str:
        return f"FunctionRef({self.name!r})"


def function_value(name: str) -> Union[Function, FunctionRef]:
    """What ``prim::Constant[name=...]()`` evaluates to: the function registered as ``name``, or
    a ``FunctionRef`` to resolve at call time (no error for a constant nobody calls)."""
    fn = _FUNCTIONS.get(name)
    return FunctionRef(name) if fn is None else fn


def resolve_function(name: str) -> Function:
    """The function registered as ``name``; ``UnsupportedOpError`` naming it if there is none."""
    fn = _FUNCTIONS.get(name)
    if fn is None:
        raise UnsupportedOpError(f"unknown function '{name}': register it with "
                                 f"torchlike.ops.functions.register_function")
    return fn


def call_function(fn: Any, args: Sequence[Any]) -> Any:
    """Call a Python function value (a name is looked up first).  A ``Graph`` callee is run by
    the interpreter, which handles ``prim::CallFunction`` of a graph itself."""
    if isinstance(fn, str):
        fn = resolve_function(fn)
    elif isinstance(fn, FunctionRef):
        fn = fn.resolve()
    if isinstance(fn, Graph):
        raise UnsupportedOpError("prim::CallFunction of a Graph runs in the interpreter")
    if callable(fn):
        return fn(*args)
    raise UnsupportedOpError(f"prim::CallFunction: the callee is not a known function "
                             f"(got {type(fn).__name__}: {fn!r})")
