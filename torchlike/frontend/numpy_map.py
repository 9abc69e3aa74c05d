"""numpy calls on traced values -> torchlike ops (``__array_ufunc__``/``__array_function__``).

``np.tanh(x)`` and ``np.maximum(x, y)`` are ufuncs: their name (or the torch spelling below,
``subtract`` -> ``sub``) is looked up among the registry's python names and aliases.
``np.where``, ``np.sum``, ``np.clip``, ``np.concatenate``... are array functions: their numpy
arguments are renamed to the op's (``axis`` -> ``dim``, ``keepdims`` -> ``keepdim``,
``a_min`` -> ``min``).  Anything else raises ``UnsupportedOpError`` naming the call.
"""
from __future__ import annotations

import inspect
from typing import Any, Dict, Sequence, Tuple, Union

from ..errors import UnsupportedOpError

# numpy ufunc names that differ from the torch spelling (first registered name wins).
UFUNC_NAMES: Dict[str, Tuple[str, ...]] = {
    "subtract": ("sub",), "multiply": ("mul",), "true_divide": ("div",), "divide": ("div",),
    "power": ("pow",), "float_power": ("pow",), "negative": ("neg",), "positive": ("positive",),
    "absolute": ("abs",), "fabs": ("abs",), "mod": ("remainder",),
    "remainder": ("remainder",), "greater": ("gt",), "greater_equal": ("ge",), "less": ("lt",),
    "less_equal": ("le",), "equal": ("eq",), "not_equal": ("ne",),
    "bitwise_and": ("bitwise_and", "__and__"), "bitwise_or": ("bitwise_or", "__or__"),
    "bitwise_xor": ("bitwise_xor", "__xor__"), "invert": ("bitwise_not",),
    "bitwise_not": ("bitwise_not",), "arcsin": ("asin",), "arccos": ("acos",),
    "arctan": ("atan",), "arcsinh": ("asinh",), "arccosh": ("acosh",), "arctanh": ("atanh",),
    "arctan2": ("atan2",), "rint": ("round",), "matmul": ("matmul",),
}


def _lookup(name: str, candidates: Sequence[str]):
    from ..functional import find_op
    for c in tuple(candidates) + (name,):
        op = find_op(c)
        if op is not None:
            return op
    return None


_COMMUTATIVE = {"add", "multiply", "maximum", "minimum", "equal", "not_equal"}


def map_ufunc(ufunc, inputs: Sequence[Any]) -> Any:
    from ..functional import call_op
    from .tracer import TracedValue
    name = ufunc.__name__
    op = _lookup(name, UFUNC_NAMES.get(name, ()))
    if op is None:
        raise UnsupportedOpError(f"np.{name} on a traced value: no torchlike op maps to it")
    if name in _COMMUTATIVE and len(inputs) == 2 and not isinstance(inputs[0], TracedValue):
        inputs = (inputs[1], inputs[0])  # ``2.0 * x`` records mul(%x, 2.), as PyTorch does
    return call_op(op, inputs, {})


def _qualified(func) -> str:
    module = getattr(func, "__module__", None) or "numpy"
    return module.replace("numpy", "np", 1) + "." + func.__name__


# numpy function name -> (torch name candidates, numpy argument -> op argument); an int is the
# op's parameter by position (schemas may call the first operand ``self`` or ``input``).
_REDUCE = {"a": 0, "axis": "dim", "keepdims": "keepdim", "dtype": "dtype"}
FUNCTIONS: Dict[str, Tuple[Tuple[str, ...], Dict[str, Union[int, str]]]] = {
    "where": (("where",), {"condition": 0, "x": 1, "y": 2}),
    "sum": (("sum",), _REDUCE), "mean": (("mean",), _REDUCE), "prod": (("prod",), _REDUCE),
    "max": (("amax", "max"), _REDUCE), "amax": (("amax", "max"), _REDUCE),
    "min": (("amin", "min"), _REDUCE), "amin": (("amin", "min"), _REDUCE),
    "all": (("all",), _REDUCE), "any": (("any",), _REDUCE),
    "matmul": (("matmul",), {"x1": 0, "x2": 1}),
    "dot": (("matmul",), {"a": 0, "b": 1}),
    "clip": (("clamp", "clip"), {"a": 0, "a_min": "min", "a_max": "max",
                                 "min": "min", "max": "max"}),
    "concatenate": (("cat", "concatenate"), {"arrays": 0, "axis": "dim"}),
    "stack": (("stack",), {"arrays": 0, "axis": "dim"}),
    "expand_dims": (("unsqueeze",), {"a": 0, "axis": "dim"}),
    "squeeze": (("squeeze",), {"a": 0, "axis": "dim"}),
    "reshape": (("reshape",), {"a": 0, "newshape": "shape", "shape": "shape"}),
    "transpose": (("permute",), {"a": 0, "axes": "dims"}),
    "zeros_like": (("zeros_like",), {"a": 0, "dtype": "dtype"}),
    "ones_like": (("ones_like",), {"a": 0, "dtype": "dtype"}),
    "round": (("round",), {"a": 0}), "around": (("round",), {"a": 0}),
    "maximum": (("maximum",), {"x1": 0, "x2": 1}),
}


def _numpy_arguments(func, args, kwargs) -> Dict[str, Any]:
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
    from ..functional import call_op
    name = func.__name__
    entry = FUNCTIONS.get(name)
    op = _lookup(name, entry[0]) if entry else None
    if entry is None or op is None:
        raise UnsupportedOpError(f"{_qualified(func)} on a traced value: no torchlike op maps "
                                 "to it")
    renames = entry[1]
    if name == "where" and len(args) + len(kwargs) != 3:
        raise UnsupportedOpError("np.where(condition) on a traced value: only the three-argument "
                                 "form maps to an op")
    params = {p.name for p in op.params}
    op_kwargs: Dict[str, Any] = {}
    for arg_name, value in _numpy_arguments(func, args, kwargs).items():
        target = renames.get(arg_name)
        if isinstance(target, int):
            target = op.params[target].name if target < len(op.params) else None
        if arg_name == "decimals" and value == 0:
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
