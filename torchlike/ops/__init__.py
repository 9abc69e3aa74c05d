"""The op registry and every op's entry.  Importing this package registers all ops."""
from . import elementwise, prim_ops  # noqa: F401  (registration side effects)
from . import functions, tensor_ops  # noqa: F401
from .registry import REGISTRY, OpDef, Param, elementwise_ops, get, lookup, register

__all__ = ["REGISTRY", "OpDef", "Param", "elementwise_ops", "get", "lookup", "register"]
