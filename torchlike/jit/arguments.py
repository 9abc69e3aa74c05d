"""Checking a call's arguments against the graph's parameter types, before anything runs.

A graph parameter typed ``Tensor`` (or ``Float(2, 3)``...) takes an array: a numpy or cupy
array, or a numpy scalar (``np.float32(2)``, what ``x.sum()`` returns), which is passed on as the
0-d array it stands for.  A Python list, tuple or scalar there is refused, as PyTorch refuses it
("Expected a value of type 'Tensor' for argument 'x' but instead found type 'list'"), with the
fix in the message::

    TypeError: f() argument 'x' (%x.1) expects a Tensor (a numpy or cupy array), got list:
    convert it first, e.g. numpy.asarray(x, dtype=numpy.float32)

A parameter typed ``int``, ``float`` or ``bool`` takes a Python (or numpy) scalar of that kind
(an int where a float is expected, as in Python); an array there is refused the same way.
Other parameter types (lists, tuples, optionals, unknown) are not checked.

The check runs once per call signature (when the call is specialized), never on a warm call.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Callable, List, Optional, Sequence, Tuple

import numpy as np

from ..ir.graph import Value
from ..ir.types import BOOL, FLOAT, INT, NUMBER, TensorType, is_array

_SCALAR_KINDS = {INT: (int, np.integer), FLOAT: (int, float, np.integer, np.floating),
                 BOOL: (bool, np.bool_), NUMBER: (int, float, np.number)}
_SCALAR_NAMES = {INT: "an int", FLOAT: "a float", BOOL: "a bool", NUMBER: "a number"}


_is_array = is_array  # a torch.Tensor is refused with a hint, not half-run


@dataclass(frozen=True)
class ArgumentPlan:
    """What a call of one signature needs before the graph runs: the positions of numpy
    scalars to pass as 0-d arrays (empty: the arguments go through untouched)."""

    as_arrays: Tuple[int, ...] = ()

    def apply(self, args: Sequence[Any]) -> List[Any]:
        out = list(args)
        for i in self.as_arrays:
            out[i] = np.asarray(out[i])
        return out


def check_arguments(params: Sequence[Value], args: Sequence[Any], fn_name: str,
                    names: Optional[Sequence[str]] = None) -> ArgumentPlan:
    """Validate ``args`` against ``params`` (see the module docstring); raises ``TypeError``
    naming the function, the argument and the graph value."""
    if len(args) != len(params):
        listed = ", ".join(names) if names else ", ".join(f"%{p.name}" for p in params)
        raise TypeError(f"{fn_name}() takes {len(params)} arguments ({listed}), got {len(args)}")
    as_arrays = []
    for i, (p, a) in enumerate(zip(params, args)):
        label = f"'{names[i]}' (%{p.name})" if names else f"%{p.name}"
        t = p.type
        if isinstance(t, TensorType):
            if isinstance(a, np.generic):
                as_arrays.append(i)
            elif not _is_array(a):
                raise TypeError(_refusal(fn_name, label, "a Tensor (a numpy or cupy array)", a,
                                         tensor=True))
        elif t in _SCALAR_KINDS:
            is_bool = isinstance(a, (bool, np.bool_))
            if not isinstance(a, _SCALAR_KINDS[t]) or (t != BOOL and is_bool):
                raise TypeError(_refusal(fn_name, label, _SCALAR_NAMES[t], a, tensor=False))
    return ArgumentPlan(tuple(as_arrays))


def _refusal(fn_name: str, label: str, expected: str, value: Any, tensor: bool) -> str:
    got = type(value).__name__
    from_torch = type(value).__module__.startswith("torch") and hasattr(value, "shape")
    if _is_array(value) or (from_torch and not tensor):
        got = f"{'a torch.Tensor' if from_torch else 'an array'} of shape {tuple(value.shape)}"
        hint = "pass a Python scalar, e.g. x.item()"
    elif from_torch:
        got = f"a torch.Tensor of shape {tuple(value.shape)}"
        hint = ("torchlike runs on numpy and cupy arrays: pass x.numpy() (x.detach().cpu()"
                ".numpy() for a tensor that requires grad or lives on a GPU)")
    elif not tensor:
        hint = "PyTorch does not convert it either"
    elif isinstance(value, (list, tuple)):
        hint = "convert it first, e.g. numpy.asarray(x, dtype=numpy.float32)"
    elif isinstance(value, (bool, int, float, complex)):
        hint = "wrap it as a 0-d array, e.g. numpy.asarray(x, dtype=numpy.float32)"
    else:
        hint = "see the function's signature"
    return f"{fn_name}() argument {label} expects {expected}, got {got}: {hint}"


def with_plan(plan: ArgumentPlan, run: Callable[..., Any]) -> Callable[..., Any]:
    """``run`` itself when the plan has nothing to do, else ``run`` after the plan."""
    if not plan.as_arrays:
        return run
    return lambda *args: run(*plan.apply(args))
