"""The ``torchlike`` functional namespace: one function per registry op, generated from it.

Every op with a ``python_name`` (and each of its aliases) becomes a function here, re-exported
as ``torchlike.<name>``.  Called on numpy (or cupy) arrays and Python scalars it runs eagerly
through the op's reference implementation; called on a traced value it is recorded::

    >>> import numpy as np, torchlike as tl
    >>> tl.tanh(np.zeros(2, np.float32))
    array([0., 0.], dtype=float32)
    >>> tl.add(np.ones(2, np.int32), 2.5).dtype      # PyTorch promotion: int tensor + float
    dtype('float32')

Dtype arguments accept numpy dtypes, numpy types, strings (``"float32"``) and the names exported
here (``tl.float32``); they become the ScalarType enum int that graphs carry (6 for float32).
Ops registered after import are found on first use (module ``__getattr__``).
"""
from __future__ import annotations

import builtins
from typing import Any, Dict, List, Optional, Sequence

import numpy as np

from .frontend.tracer import TracedValue, run_impl
from .ir.types import DTYPE_TO_SCALAR_TYPE_ENUM
from .ops import registry
from .ops.registry import REQUIRED, OpDef

# This module exports names that shadow builtins (``bool``, ``int``, ``float``): keep handles.
# (Ops named ``any``, ``all``, ``sum``, ``abs``... would shadow those too.)
_bool, _int, _float, _str = builtins.bool, builtins.int, builtins.float, builtins.str
_any = builtins.any

# -- dtypes -----------------------------------------------------------------------------------
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
    if isinstance(dtype, _int) and not isinstance(dtype, _bool):
        if dtype not in DTYPE_TO_SCALAR_TYPE_ENUM.values():
            raise TypeError(f"unknown ScalarType enum value {dtype}")
        return dtype
    if isinstance(dtype, _str) or type(dtype).__module__ == "torch":
        name = _str(dtype).replace("torch.", "")
        name = DTYPE_NAMES.get(name, name)
    else:
        try:
            name = _str(np.dtype(dtype))
        except TypeError:
            raise TypeError(f"not a dtype: {dtype!r}") from None
    if name not in DTYPE_TO_SCALAR_TYPE_ENUM:
        raise TypeError(f"unsupported dtype {dtype!r}")
    return DTYPE_TO_SCALAR_TYPE_ENUM[name]


def _is_dtype_param(p: registry.Param) -> bool:
    return p.name == "dtype" or p.type.rstrip("?") == "ScalarType"


# -- looking ops up by Python name ------------------------------------------------------------
_INDEX: Dict[str, OpDef] = {}
_INDEXED_COUNT = -1


def _index() -> Dict[str, OpDef]:
    """python_name/alias -> op, rebuilt when the registry has grown (ops register late)."""
    global _INDEXED_COUNT
    if _INDEXED_COUNT != len(registry.REGISTRY):
        index: Dict[str, OpDef] = {}
        ops = list(registry.REGISTRY.values())
        for op in ops:  # python_names first: an alias never hides another op's own name
            if op.python_name and op.python_name not in index:
                index[op.python_name] = op
        for op in ops:
            if op.python_name:
                for alias in op.aliases:
                    index.setdefault(alias, op)
        _INDEX.clear()
        _INDEX.update(index)
        _INDEXED_COUNT = len(registry.REGISTRY)
    return _INDEX


def find_op(name: str) -> Optional[OpDef]:
    """The op whose python_name or alias is ``name`` (or the op named ``name``, such as
    ``aten::slice``, which has no python name), or None."""
    if "::" in name:
        return registry.lookup(name)
    return _index().get(name)


# -- calling an op ----------------------------------------------------------------------------
def normalize_args(op: OpDef, bound: List[Any]) -> List[Any]:
    """Dtype arguments to enum ints; a lone int for an ``int[]`` parameter to a one-item list
    (PyTorch's ``int[1]`` convention), so eager calls and graphs see the same values."""
    for i, (p, a) in enumerate(zip(op.params, bound)):
        if a is None or isinstance(a, TracedValue):
            continue
        if _is_dtype_param(p):
            bound[i] = scalar_type(a)
        elif p.type.startswith("int[") and isinstance(a, (_int, np.integer)) \
                and not isinstance(a, _bool):
            bound[i] = [_int(a)]
    return bound


def _find_tracer(values: Sequence[Any]):
    for v in values:
        if isinstance(v, TracedValue):
            return v.tracer
        if isinstance(v, (list, tuple)):
            t = _find_tracer(v)
            if t is not None:
                return t
    return None


def _as_tensor(value: Any) -> Any:
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


def _has_float64(value) -> _bool:
    """Whether a nested list holds an explicit float64 (array or numpy scalar), as opposed to
    Python floats, which give PyTorch's default float32."""
    if isinstance(value, (list, tuple)):
        return _any(_has_float64(v) for v in value)
    return isinstance(value, (np.ndarray, np.generic)) and value.dtype == np.float64


def run_eager(op: OpDef, bound: List[Any]) -> Any:
    """Run ``op``'s reference implementation on arrays and Python values."""
    args = []
    for p, a in zip(op.params, bound):
        if p.is_operand:
            a = _as_tensor(a)
        elif p.type.startswith("Tensor[") and isinstance(a, (list, tuple)):
            a = [_as_tensor(v) for v in a]
        args.append(a)
    result = run_impl(op, args)
    if op.num_outputs == 1 and isinstance(result, tuple):
        result = list(result)  # a Tensor[] result (chunk) is a list, as in PyTorch
    return result


def call_op(op: OpDef, args: Sequence[Any], kwargs: Dict[str, Any]) -> Any:
    """Bind ``args``/``kwargs`` to ``op``'s schema, then record (when an argument is traced)
    or run eagerly."""
    bound = normalize_args(op, op.bind(list(args), dict(kwargs)))
    tracer = _find_tracer(bound)
    if tracer is not None:
        return tracer.record(op, bound)
    return run_eager(op, bound)


def apply(name: str, *args: Any, **kwargs: Any) -> Any:
    """``apply("sigmoid", x)``: call an op by its Python name."""
    op = find_op(name)
    if op is None:
        from .errors import UnsupportedOpError
        raise UnsupportedOpError(f"no torchlike op is named '{name}'")
    return call_op(op, args, kwargs)


# -- generating the namespace -----------------------------------------------------------------
def schema_text(op: OpDef) -> str:
    """``aten::add(Tensor self, Tensor other, Scalar alpha=1)``."""
    params = ", ".join(f"{p.type} {p.name}" + ("" if p.default is REQUIRED else f"={p.default!r}")
                       for p in op.params)
    return f"{op.name}({params})"


def make_function(name: str, op: OpDef):
    """The namespace function ``name`` for ``op`` (eager on arrays, recorded when traced)."""
    def function(*args, **kwargs):
        return call_op(op, args, kwargs)

    function.__name__ = function.__qualname__ = name
    function.__module__ = "torchlike"
    other = "" if name == op.python_name else f" (alias of ``torchlike.{op.python_name}``)"
    function.__doc__ = (
        f"``torchlike.{name}``{other}: the op ``{op.name}``.\n\n"
        f"Schema: ``{schema_text(op)}``\n\n"
        "Runs eagerly on numpy/cupy arrays and Python scalars; recorded as a graph node when an "
        "argument is a traced value.")
    function.op = op
    return function


def _exportable(name: str) -> _bool:
    return name.isidentifier() and not name.startswith("_")


def refresh() -> List[str]:
    """(Re)generate a function for every registered op name; returns the exported names."""
    names = []
    for name, op in sorted(_index().items()):
        if not _exportable(name):
            continue
        existing = globals().get(name)
        if getattr(existing, "op", None) is not op:
            globals()[name] = make_function(name, op)
        names.append(name)
    return names


def __getattr__(name: str):
    # Ops registered after this module was imported are found (and cached) on first use.
    op = find_op(name) if _exportable(name) else None
    if op is None:
        raise AttributeError(f"module 'torchlike.functional' has no attribute '{name}'")
    fn = globals()[name] = make_function(name, op)
    return fn


_OP_NAMES = refresh()
# Dtype names last: ``bool``/``int``/``float`` shadow the builtins in this module's globals.
globals().update(DTYPE_NAMES)
__all__ = sorted(set(_OP_NAMES) | set(DTYPE_NAMES)) + ["scalar_type"]
