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

This module only generates the namespace: finding an op by its Python name is
``ops/python_names.py``, binding and running or recording a call ``frontend/calls.py``.
"""
from __future__ import annotations

import builtins
from typing import Any, List

from .errors import UnsupportedOpError

# find_op (ops/python_names.py) and the calling machinery (frontend/calls.py) used to live here;
# they stay importable from this module.
from .frontend.calls import (  # noqa: F401
    DTYPE_NAMES,
    call_op,
    normalize_args,
    run_eager,
    run_impl,
    scalar_type,
)
from .ops.python_names import find_op, ops_by_python_name
from .ops.registry import REQUIRED, OpDef

# This module exports names that shadow builtins (``bool``, ``int``, ``float``): keep a handle.
_bool = builtins.bool


def apply(name: str, *args: Any, **kwargs: Any) -> Any:
    """``apply("sigmoid", x)``: call an op by its Python name."""
    op = find_op(name)
    if op is None:
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
    for name, op in sorted(ops_by_python_name().items()):
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
