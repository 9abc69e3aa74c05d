"""Dtype names (numpy's, as the IR spells them) <-> ONNX ``TensorProto`` element types.

The numbers are ONNX's ``TensorProto.DataType`` enum (onnx/onnx.proto), written out so this
table needs no import of ``onnx``.  A value of IR type ``int``/``float``/``bool`` (a
TorchScript scalar) is a 0-d ONNX tensor of int64/float64/bool.
"""
from __future__ import annotations

from typing import Optional

from ..errors import UnsupportedOpError
from ..ir.types import BOOL, FLOAT, INT, TensorType, Type

DTYPE_TO_ONNX = {
    "float32": 1, "uint8": 2, "int8": 3, "uint16": 4, "int16": 5, "int32": 6, "int64": 7,
    "bool": 9, "float16": 10, "float64": 11, "uint32": 12, "uint64": 13,
}
ONNX_TO_DTYPE = {v: k for k, v in DTYPE_TO_ONNX.items()}
SCALAR_DTYPES = {INT: "int64", FLOAT: "float64", BOOL: "bool"}


def onnx_elem_type(dtype: str) -> int:
    if dtype not in DTYPE_TO_ONNX:
        raise UnsupportedOpError(f"dtype {dtype} has no ONNX element type torchlike writes")
    return DTYPE_TO_ONNX[dtype]


def dtype_of_elem_type(elem_type: int, where: str = "") -> str:
    if elem_type not in ONNX_TO_DTYPE:
        raise UnsupportedOpError(f"{where}ONNX element type {elem_type} is not supported")
    return ONNX_TO_DTYPE[elem_type]


def dtype_of_type(t: Type) -> Optional[str]:
    """The ONNX-side dtype of a value of IR type ``t`` (None: unknown)."""
    if isinstance(t, TensorType):
        return t.dtype
    return SCALAR_DTYPES.get(t)
