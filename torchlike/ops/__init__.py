"""The op registry and every op's entry.  Importing this package registers all ops."""
from . import (  # noqa: F401  (registration side effects)
    activations,
    attention,
    conv_pool,
    elementwise,
    elementwise_math,
    elementwise_more,
    elementwise_pointwise,
    executor_prims,
    factories,
    functions,
    indexing,
    inplace,
    linalg,
    linalg_more,
    linalg_stats,
    losses,
    losses_more,
    nn_functions,
    nn_ops,
    normalization,
    order_stats,
    ordering,
    prim_ops,
    reductions,
    resample,
    rnn,
    shape_ops,
    special_more,
    tensor_extras,
    tensor_grid,
    tensor_misc,
    tensor_misc_sampling,
    tensor_more,
    tensor_more_index,
    tensor_shape_extra,
    tensor_shape_more,
)
from .registry import REGISTRY, OpDef, Param, elementwise_ops, get, lookup, register

inplace.register_twins()  # after every module above: aten::add_ & co. for each elementwise op
# derivative rules (attached to the entries above) and the ops only backward graphs emit
from . import (  # noqa: E402,F401
    backward_ops,
    derivatives_conv_pool,
    derivatives_elementwise,
    derivatives_index,
    derivatives_linalg,
    derivatives_losses,
    derivatives_nn,
    derivatives_pointwise_more,
    derivatives_rnn,
    derivatives_rnn_seq,
    derivatives_shape_more,
    derivatives_structured,
)

__all__ = ["REGISTRY", "OpDef", "Param", "elementwise_ops", "get", "lookup", "register"]
