"""Types of IR values, printed exactly as TorchScript prints them.

A tensor type may know any subset of its dtype, shape, strides and device::

    >>> str(TensorType("float32", (3, 4), (4, 1), "cpu", False))
    'Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)'
    >>> str(TensorType())
    'Tensor'
    >>> str(TensorType("float32"))   # dtype known, rank unknown
    'FloatTensor'

Dtypes are numpy dtype names ("float32", "int64", "bool", ...; "bfloat16" is allowed in the IR
even though numpy has no such type).  Scalar types are singletons: ``INT``, ``FLOAT``, ``BOOL``,
``NONE``, ``STR``, ``DEVICE``, ``NUMBER``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional, Tuple

import numpy as np

# PyTorch's scalar-type names <-> numpy dtype names.
SCALAR_NAME_TO_DTYPE = {
    "Float": "float32", "Double": "float64", "Half": "float16", "BFloat16": "bfloat16",
    "Long": "int64", "Int": "int32", "Short": "int16", "Char": "int8", "Byte": "uint8",
    "Bool": "bool",
}
DTYPE_TO_SCALAR_NAME = {v: k for k, v in SCALAR_NAME_TO_DTYPE.items()}

# c10::ScalarType enum values, as they appear in graphs (aten::to(%x, %6, ...) means float32).
SCALAR_TYPE_ENUM = {
    0: "uint8", 1: "int8", 2: "int16", 3: "int32", 4: "int64", 5: "float16", 6: "float32",
    7: "float64", 11: "bool", 15: "bfloat16",
}
DTYPE_TO_SCALAR_TYPE_ENUM = {v: k for k, v in SCALAR_TYPE_ENUM.items()}


class Type:
    """Base class of all IR types.  Subclasses are frozen dataclasses: hashable and comparable."""

    def is_tensor(self) -> bool:
        return False


@dataclass(frozen=True)
class _Named(Type):
    name: str

    def __str__(self) -> str:
        return self.name


INT = _Named("int")
FLOAT = _Named("float")
BOOL = _Named("bool")
NONE = _Named("NoneType")
STR = _Named("str")
DEVICE = _Named("Device")
NUMBER = _Named("Scalar")
ANY = _Named("Any")
FUNCTION = _Named("Function")
_NAMED = {t.name: t for t in (INT, FLOAT, BOOL, NONE, STR, DEVICE, NUMBER, ANY, FUNCTION)}
_NAMED["number"] = NUMBER
_NAMED["ScalarType"] = INT  # PyTorch prints dtype arguments as int


def named_type(name: str) -> Optional[Type]:
    """The scalar type spelled ``name`` (``int``, ``float``, ...), or None."""
    return _NAMED.get(name)


@dataclass(frozen=True)
class TensorType(Type):
    """A tensor whose dtype, shape (dims may be None), strides and device may each be unknown."""

    dtype: Optional[str] = None
    shape: Optional[Tuple[Optional[int], ...]] = None
    strides: Optional[Tuple[Optional[int], ...]] = None
    device: Optional[str] = None
    requires_grad: Optional[bool] = None

    def is_tensor(self) -> bool:
        return True

    @property
    def rank(self) -> Optional[int]:
        return None if self.shape is None else len(self.shape)

    def with_(self, **changes) -> "TensorType":
        fields = dict(dtype=self.dtype, shape=self.shape, strides=self.strides,
                      device=self.device, requires_grad=self.requires_grad)
        fields.update(changes)
        return TensorType(**fields)

    def __str__(self) -> str:
        # Mirrors c10's operator<<(TensorType): unknown rank prints "Tensor" / "FloatTensor";
        # strides print only when every stride is known; 0-d prints "Float(requires_grad=0, ...)".
        name = DTYPE_TO_SCALAR_NAME.get(self.dtype) if self.dtype else None
        parts = []
        if self.shape is None:
            head = name + "Tensor" if name else "Tensor"
        else:
            head = name or "Tensor"
            parts = ["*" if d is None else str(d) for d in self.shape]
            if (self.strides is not None and len(self.shape) > 0
                    and len(self.strides) == len(self.shape)
                    and all(s is not None for s in self.strides)):
                parts.append("strides=[" + ", ".join(str(s) for s in self.strides) + "]")
        if self.requires_grad is not None:
            parts.append(f"requires_grad={int(self.requires_grad)}")
        if self.device is not None:
            parts.append(f"device={self.device}")
        if self.shape is None and not parts:
            return head
        return f"{head}({', '.join(parts)})"


@dataclass(frozen=True)
class ListType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}[]"


@dataclass(frozen=True)
class TupleType(Type):
    """``(Tensor, int)``; a named tuple (``torch.aminmax``'s result returned whole) prints as
    ``NamedTuple(min : Tensor, max : Tensor)``: ``names`` holds its field names (not part of
    the type's identity: it is a tuple of those types)."""

    elems: Tuple[Type, ...]
    names: Optional[Tuple[str, ...]] = field(default=None, compare=False)

    def __str__(self) -> str:
        if self.names is not None:
            return "NamedTuple(" + ", ".join(f"{n} : {e}" for n, e in zip(self.names, self.elems)) \
                + ")"
        return "(" + ", ".join(str(e) for e in self.elems) + ")"


@dataclass(frozen=True)
class OptionalType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"


@dataclass(frozen=True)
class UnionType(Type):
    """One of several types, as PyTorch prints ``Union[float, int]``: ``Union(float, int)``
    (F.lp_pool2d's ``norm_type``)."""

    elems: Tuple[Type, ...]

    def __str__(self) -> str:
        return "Union(" + ", ".join(str(e) for e in self.elems) + ")"


@dataclass(frozen=True)
class DictType(Type):
    """``Dict(str, Tensor)``: a dictionary's key and value types."""

    key: Type
    value: Type

    def __str__(self) -> str:
        return f"Dict({self.key}, {self.value})"


@dataclass(frozen=True)
class ClassType(Type):
    """A TorchScript class or module, e.g. ``__torch__.MyCell``; attributes come from the object."""

    qualified_name: str

    def __str__(self) -> str:
        return self.qualified_name


TENSOR = TensorType()


def is_array(value) -> bool:
    """A numpy or cupy array: what torchlike runs on (a numpy scalar is not one; a torch.Tensor
    has a shape and a dtype too, but neither numpy's dtype nor byte strides)."""
    return isinstance(value, np.ndarray) or (type(value).__module__.startswith("cupy")
                                             and hasattr(value, "shape"))


def tensor_type_of(array) -> TensorType:
    """The full TensorType of a numpy or cupy array (strides in elements, as PyTorch counts)."""
    itemsize = array.dtype.itemsize
    strides = tuple(s // itemsize for s in array.strides) if itemsize else None
    device = "cpu" if type(array).__module__.startswith("numpy") else "cuda:0"
    return TensorType(str(array.dtype), tuple(array.shape), strides, device, False)


def type_of_python_value(value) -> Type:
    """The IR type of a runtime value (arrays, Python scalars, None, tuples, lists)."""
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return tensor_type_of(value)
    if isinstance(value, bool):
        return BOOL
    if isinstance(value, int):
        return INT
    if isinstance(value, float):
        return FLOAT
    if value is None:
        return NONE
    if isinstance(value, str):
        return STR
    if isinstance(value, tuple):
        return TupleType(tuple(type_of_python_value(v) for v in value))
    if isinstance(value, list):
        elem = type_of_python_value(value[0]) if value else TENSOR
        return ListType(TENSOR if elem.is_tensor() else elem)
    return ANY
