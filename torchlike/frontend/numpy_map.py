"""numpy calls on traced values -> torchlike ops (``__array_ufunc__``/``__array_function__``).

``np.tanh(x)`` and ``np.maximum(x, y)`` are ufuncs: their name is looked up among the
registry's python names and aliases (``np.subtract`` is ``aten::sub``, whose aliases include
``subtract``).  ``np.where``, ``np.sum``, ``np.clip``, ``np.concatenate``... are array
functions: ``python_names.NUMPY_FUNCTIONS`` says which op each records and how its arguments are
renamed (``axis`` -> ``dim``, ``keepdims`` -> ``keepdim``, ``a_min`` -> ``min``).  Anything
else raises ``UnsupportedOpError`` naming the call.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Sequence

from ..errors import UnsupportedOpError
from ..ops.python_names import is_commutative, numpy_function, numpy_function_op, ufunc_op
from .calls import Proxy, call_op

__all__ = ["map_function", "map_ufunc"]


def map_ufunc(ufunc, inputs: Sequence[Any]) -> Any:
    """Record ``ufunc(*inputs)`` (a numpy ufunc called on a traced value) as its op."""
    name = ufunc.__name__
    op = ufunc_op(name)
    if op is None:
        raise UnsupportedOpError(f"np.{name} on a traced value: no torchlike op maps to it")
    if is_commutative(op) and len(inputs) == 2 and not isinstance(inputs[0], Proxy):
        inputs = (inputs[1], inputs[0])  # ``2.0 * x`` records mul(%x, 2.), as PyTorch does
    return call_op(op, inputs, {})


def _qualified(func) -> str:
    module = getattr(func, "__module__", None) or "numpy"
    return module.replace("numpy", "np", 1) + "." + func.__name__


def _numpy_arguments(func, args, kwargs) -> Dict[str, Any]:
    """``func``'s arguments by numpy's parameter names (``**kwargs`` spread out)."""
    try:
        bound = inspect.signature(func).bind(*args, **kwargs)
    except (TypeError, ValueError) as e:
        raise UnsupportedOpError(f"{_qualified(func)}: cannot read its arguments: {e}") from None
    out = dict(bound.arguments)
    for name, p in inspect.signature(func).parameters.items():
        if p.kind == p.VAR_KEYWORD and name in out:
            out.update(out.pop(name))
    return out


def map_function(func, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """Record ``func(*args, **kwargs)`` (a numpy array function) through the registry."""
    name = func.__name__
    entry = numpy_function(name)
    op = numpy_function_op(entry) if entry is not None else None
    if entry is None or op is None:
        raise UnsupportedOpError(f"{_qualified(func)} on a traced value: no torchlike op maps "
                                 "to it")
    arguments = _numpy_arguments(func, args, kwargs)
    if entry.arity is not None and len(args) + len(kwargs) != entry.arity:
        raise UnsupportedOpError(f"np.{name}({', '.join(arguments)}) on a traced value: only "
                                 f"the {entry.arity}-argument form maps to an op")
    params = {p.name for p in op.params}
    op_kwargs: Dict[str, Any] = {}
    for arg_name, value in arguments.items():
        target = entry.arguments.get(arg_name)
        if isinstance(target, int):
            target = op.params[target].name if target < len(op.params) else None
        if arg_name in entry.dropped and value == entry.dropped[arg_name]:
            continue
        if target is None or (target not in params and value is not None):
            raise UnsupportedOpError(f"np.{name}(..., {arg_name}=...) on a traced value: "
                                     f"{op.name} has no matching argument")
        if target in params:
            op_kwargs[target] = value
    positional = []  # leading parameters positionally: ``self`` cannot be a keyword in Python
    for p in op.params:
        if p.name in op_kwargs:
            positional.append(op_kwargs.pop(p.name))
        else:
            break
    return call_op(op, positional, op_kwargs)
