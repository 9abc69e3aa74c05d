"""Dtype categories and PyTorch's type promotion (``torch.result_type``).

Operands have a priority: a tensor with dimensions beats a 0-d tensor, which beats a Python
scalar ("wrapped number"); a lower priority only matters when its *category* (bool < integer <
float) is higher.  So ``int32_tensor * 1.5`` is float32 (the default float), ``float16_tensor * 2.0``
stays float16, and ``int32_tensor + int64_0d`` stays int32.  A 0-d tensor *constant* in a traced
graph was a Python scalar when traced, so it ranks as a wrapped number (see ``Priority``).
"""
from __future__ import annotations

from enum import IntEnum
from functools import lru_cache
from typing import Iterable, Optional, Tuple

import numpy as np

DEFAULT_FLOAT = "float32"
FLOAT_DTYPES = ("float16", "bfloat16", "float32", "float64")
INT_DTYPES = ("uint8", "int8", "int16", "int32", "int64")
ALL_DTYPES = ("bool",) + INT_DTYPES + FLOAT_DTYPES


class Priority(IntEnum):
    WRAPPED = 0   # a Python scalar (or a 0-d tensor constant recorded from one)
    ZERO_DIM = 1  # a 0-d tensor
    DIM = 2       # a tensor with at least one dimension


def is_float(dtype: Optional[str]) -> bool:
    return dtype in FLOAT_DTYPES


def is_int(dtype: Optional[str]) -> bool:
    return dtype in INT_DTYPES


def is_bool(dtype: Optional[str]) -> bool:
    return dtype == "bool"


def category(dtype: str) -> int:
    return 0 if dtype == "bool" else 1 if dtype in INT_DTYPES else 2


def can_cast(src: str, dst: str) -> bool:
    """c10's ``canCast`` (a result written into an output of dtype ``dst``): no float into an
    integer or bool, no integer into bool."""
    return category(src) <= category(dst)


def promote_types(a: Optional[str], b: Optional[str]) -> Optional[str]:
    """``torch.promote_types``: int with float gives the float; bfloat16 with float16 gives float32."""
    if a is None:
        return b
    if b is None or a == b:
        return a
    ca, cb = category(a), category(b)
    if ca != cb:
        return a if ca > cb else b
    if ca == 2:
        if {a, b} == {"float16", "bfloat16"}:
            return "float32"
        return a if FLOAT_DTYPES.index(a) > FLOAT_DTYPES.index(b) else b
    return str(np.promote_types(a, b))


def _combine_categories(higher: Optional[str], lower: Optional[str]) -> Optional[str]:
    if higher is None:
        return lower
    if is_float(higher):
        return higher
    if higher == "bool" or (lower is not None and is_float(lower)):
        return promote_types(higher, lower)
    return higher


def scalar_dtype(value) -> str:
    """The dtype a Python scalar has as a wrapped number."""
    if isinstance(value, (bool, np.bool_)):
        return "bool"
    if isinstance(value, (int, np.integer)):
        return "int64"
    return DEFAULT_FLOAT


def result_type(operands: Iterable[Tuple[str, Priority]]) -> str:
    """The result dtype of ``(dtype, priority)`` operands, following c10's ResultTypeState."""
    # Cached: the interpreter asks this for every elementwise node it runs.
    return _result_type(tuple((d, int(p)) for d, p in operands))


@lru_cache(maxsize=4096)
def _result_type(operands: Tuple[Tuple[str, int], ...]) -> str:
    state = {Priority.DIM: None, Priority.ZERO_DIM: None, Priority.WRAPPED: None}
    for dtype, prio in operands:
        if prio == Priority.WRAPPED:
            dtype = DEFAULT_FLOAT if is_float(dtype) else ("int64" if is_int(dtype) else dtype)
        state[prio] = promote_types(state[prio], dtype)
    out = _combine_categories(state[Priority.DIM],
                              _combine_categories(state[Priority.ZERO_DIM], state[Priority.WRAPPED]))
    if out is None:
        raise ValueError("result_type of no operands")
    return out


_DTYPE_NAMES: dict = {}


def operand_info(value) -> Tuple[str, Priority]:
    """``(dtype, priority)`` of a runtime operand: an array or a Python scalar."""
    dtype = getattr(value, "dtype", None)
    if dtype is None:
        return scalar_dtype(value), Priority.WRAPPED
    name = _DTYPE_NAMES.get(dtype)
    if name is None:  # str(np.dtype) costs microseconds; the interpreter asks per operand
        name = _DTYPE_NAMES[dtype] = str(dtype)
    return name, Priority.DIM if value.ndim > 0 else Priority.ZERO_DIM


def to_float(dtype: str) -> str:
    """Integer and bool results of float-valued ops (exp, sqrt, true div) become float32."""
    return dtype if is_float(dtype) else DEFAULT_FLOAT
