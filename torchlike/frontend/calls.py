"""Calling an op from Python: bind the arguments to its schema, normalize them, record or run.

Every ``torchlike.<op>`` function, every method and operator of a traced value and every numpy
call on one comes down to ``call_op(op, args, kwargs)``: the arguments are bound to the op's
schema (defaults filled in), dtype arguments become the ScalarType enum ints graphs carry, and
then the op is recorded, when an argument is a ``Proxy`` (a traced value), or run eagerly
through its reference implementation otherwise::

    >>> call_op(registry.get("aten::add"), (np.ones(2, np.int32), 2.5), {})
    array([3.5, 3.5], dtype=float32)

``Proxy`` is the interface this module dispatches on: the tracer's ``TracedValue`` implements
it, so calling ops does not depend on the tracer (which depends on calling ops).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Protocol, Sequence

import numpy as np

from ..errors import ExecutionError, IntegerDivisionByZeroError, TorchlikeError
from ..interpreter import array_module
from ..ir.types import DTYPE_TO_SCALAR_TYPE_ENUM
from ..ops.registry import OpDef, Param

__all__ = ["DTYPE_NAMES", "Proxy", "Recorder", "as_tensor", "call_op", "normalize_args",
           "run_eager", "run_impl", "scalar_type"]

# -- dtype spellings --------------------------------------------------------------------------
DTYPE_NAMES = {
    "bool": "bool", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
    "int64": "int64", "float16": "float16", "bfloat16": "bfloat16", "float32": "float32",
    "float64": "float64",
    # PyTorch's short names
    "half": "float16", "float": "float32", "double": "float64", "short": "int16",
    "int": "int32", "long": "int64",
}


def scalar_type(dtype: Any) -> int:
    """A dtype in any spelling -> the c10 ScalarType enum int graphs carry (``"float32"`` -> 6).

    Accepts numpy dtypes and types, Python ``float``/``int``/``bool`` (float64, int64, bool, as
    numpy reads them), names (``"float32"``, ``"float"``, ``"torch.float32"``) and enum ints."""
    if isinstance(dtype, int) and not isinstance(dtype, bool):
        if dtype not in DTYPE_TO_SCALAR_TYPE_ENUM.values():
            raise TypeError(f"unknown ScalarType enum value {dtype}")
        return dtype
    if isinstance(dtype, str) or type(dtype).__module__ == "torch":
        name = str(dtype).replace("torch.", "")
        name = DTYPE_NAMES.get(name, name)
    else:
        try:
            name = str(np.dtype(dtype))
        except TypeError:
            raise TypeError(f"not a dtype: {dtype!r}") from None
    if name not in DTYPE_TO_SCALAR_TYPE_ENUM:
        raise TypeError(f"unsupported dtype {dtype!r}")
    return DTYPE_TO_SCALAR_TYPE_ENUM[name]


def _is_dtype_param(p: Param) -> bool:
    return p.name == "dtype" or p.type.rstrip("?") == "ScalarType"


# -- what the dispatch looks for --------------------------------------------------------------
class Recorder(Protocol):
    """Whatever records ops on proxies into a graph (the tracer)."""

    def record(self, op: OpDef, bound: Sequence[Any]) -> Any:
        """Record ``op`` applied to the bound arguments; returns proxies for its results."""


class Proxy:
    """A value standing in for a tensor while a ``Recorder`` builds a graph: an op with a proxy
    among its arguments (or inside a list argument) is recorded by ``proxy.tracer``."""

    __slots__ = ()
    tracer: Recorder


def find_recorder(values: Sequence[Any]) -> Optional[Recorder]:
    """The recorder of the first proxy among ``values`` (looking into lists and tuples)."""
    for v in values:
        if isinstance(v, Proxy):
            return v.tracer
        if isinstance(v, (list, tuple)):
            recorder = find_recorder(v)
            if recorder is not None:
                return recorder
    return None


# -- binding ----------------------------------------------------------------------------------
def normalize_args(op: OpDef, bound: List[Any]) -> List[Any]:
    """Dtype arguments to enum ints; a lone int for an ``int[]`` parameter to a one-item list
    (PyTorch's ``int[1]`` convention), so eager calls and graphs see the same values."""
    for i, (p, a) in enumerate(zip(op.params, bound, strict=False)):
        if a is None or isinstance(a, Proxy):
            continue
        if _is_dtype_param(p):
            bound[i] = scalar_type(a)
        elif p.type.startswith("int[") and isinstance(a, (int, np.integer)) \
                and not isinstance(a, bool):
            bound[i] = [int(a)]
    return bound


def call_op(op: OpDef, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """Bind ``args``/``kwargs`` to ``op``'s schema, then record (when an argument is traced)
    or run eagerly."""
    bound = normalize_args(op, op.bind(list(args), dict(kwargs)))
    recorder = find_recorder(bound)
    if recorder is not None:
        return recorder.record(op, bound)
    return run_eager(op, bound)


# -- running eagerly --------------------------------------------------------------------------
def run_impl(op: OpDef, args: List[Any], source: Optional[str] = None) -> Any:
    """Run an op's reference implementation on concrete values (tracing, and eager
    ``torchlike.<op>`` calls), naming the op and, if known, the line on failure."""
    xp = array_module(args)
    where = f"{op.name} at {source}" if source else op.name
    try:
        with np.errstate(all="ignore"):  # silent IEEE results, as the interpreter's
            result = op.impl(xp, *args)
    except TorchlikeError:
        raise
    except ZeroDivisionError as e:
        raise IntegerDivisionByZeroError(f"{where}: {e}") from e
    except Exception as e:
        raise ExecutionError(f"{where}: {type(e).__name__}: {e}") from e
    return _wrap_result(result)


def _wrap_result(result: Any) -> Any:
    """numpy scalars become 0-d arrays (runtime tensors are arrays, never numpy scalars)."""
    if isinstance(result, np.generic):
        return np.asarray(result)
    if isinstance(result, (list, tuple)):
        return type(result)(_wrap_result(r) for r in result)
    return result


def as_tensor(value: Any) -> Any:
    """An eager Tensor argument: lists become arrays with PyTorch's default dtypes (Python
    floats give float32), numpy scalars 0-d arrays; Python scalars stay wrapped numbers."""
    if isinstance(value, np.generic):
        return np.asarray(value)
    if isinstance(value, (list, tuple)):
        arr = np.asarray(value)
        if arr.dtype == np.float64 and not _has_float64(value):
            arr = arr.astype(np.float32)
        return arr
    return value


def _has_float64(value) -> bool:
    """Whether a nested list holds an explicit float64 (array or numpy scalar), as opposed to
    Python floats, which give PyTorch's default float32."""
    if isinstance(value, (list, tuple)):
        return any(_has_float64(v) for v in value)
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.float64


def run_eager(op: OpDef, bound: List[Any]) -> Any:
    """Run ``op``'s reference implementation on arrays and Python values."""
    args = []
    for p, a in zip(op.params, bound, strict=False):
        if p.is_operand:
            a = as_tensor(a)
        elif p.type.startswith("Tensor[") and isinstance(a, (list, tuple)):
            a = [as_tensor(v) for v in a]
        args.append(a)
    args += bound[len(op.params):]  # ops told apart by argument count have no params
    result = run_impl(op, args)
    if op.num_outputs == 1 and isinstance(result, tuple):
        result = list(result)  # a Tensor[] result (chunk) is a list, as in PyTorch
    return result
