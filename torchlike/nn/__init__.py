"""``torchlike.nn``: PyTorch's ``nn.Module`` API over numpy arrays, run eagerly.

Modules hold their parameters as numpy arrays, name and order them as PyTorch does (so a
PyTorch ``state_dict()`` loads directly), print the same reprs, and write ``forward`` with
torchlike's functional namespace in the subset the scripter compiles::

    import numpy as np
    from torchlike import nn

    model = nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8)).eval()
    model.load_state_dict(torch_model.state_dict())     # torch tensors or numpy arrays
    y = model(np.random.rand(2, 4).astype(np.float32))

``nn.init`` holds the initializers and the generator they (and training-mode dropout) draw
from: ``nn.init.manual_seed(0)``.
"""
from . import init  # noqa: F401
from .activation import (  # noqa: F401
    CELU,
    ELU,
    GELU,
    GLU,
    SELU,
    Hardshrink,
    Hardsigmoid,
    Hardswish,
    Hardtanh,
    LeakyReLU,
    LogSigmoid,
    LogSoftmax,
    Mish,
    ReLU,
    ReLU6,
    RReLU,
    Sigmoid,
    SiLU,
    Softmax,
    Softmax2d,
    Softmin,
    Softplus,
    Softshrink,
    Softsign,
    Tanh,
    Tanhshrink,
    Threshold,
)
from .container import ModuleDict, ModuleList, Sequential  # noqa: F401
from .dropout import (  # noqa: F401
    AlphaDropout,
    Dropout,
    Dropout1d,
    Dropout2d,
    Dropout3d,
    FeatureAlphaDropout,
)
from .linear import Flatten, Identity, Linear, Unflatten  # noqa: F401
from .module import Module, Parameter  # noqa: F401
from .normalization import GroupNorm, LayerNorm  # noqa: F401

__all__ = [
    "AlphaDropout", "CELU", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "ELU",
    "FeatureAlphaDropout", "Flatten", "GELU", "GLU", "GroupNorm", "Hardshrink", "Hardsigmoid",
    "Hardswish", "Hardtanh", "Identity", "LayerNorm", "LeakyReLU", "Linear", "LogSigmoid",
    "LogSoftmax", "Mish", "Module", "ModuleDict", "ModuleList", "Parameter", "RReLU", "ReLU",
    "ReLU6", "SELU", "Sequential", "SiLU", "Sigmoid", "Softmax", "Softmax2d", "Softmin",
    "Softplus", "Softshrink", "Softsign", "Tanh", "Tanhshrink", "Threshold", "Unflatten",
    "init",
]
