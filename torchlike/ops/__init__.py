"""The op registry and every op's entry.  Importing this package registers all ops."""
from . import (  # noqa: F401  (registration side effects)
    activations,
    elementwise,
    elementwise_math,
    elementwise_more,
    elementwise_pointwise,
    executor_prims,
    factories,
    functions,
    linalg,
    nn_functions,
    nn_ops,
    normalization,
    prim_ops,
    reductions,
    shape_ops,
)
from .registry import REGISTRY, OpDef, Param, elementwise_ops, get, lookup, register

__all__ = ["REGISTRY", "OpDef", "Param", "elementwise_ops", "get", "lookup", "register"]
