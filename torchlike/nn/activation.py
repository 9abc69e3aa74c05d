"""Activation modules: PyTorch's constructors, defaults, ``__constants__`` and reprs.

Each ``forward`` calls torchlike's functional namespace in the subset the scripter compiles
(``tl.relu_`` for ``inplace=True``, chosen by a plain ``if`` on a constant).  Modules whose op
torchlike lacks are not defined (``PReLU``: no ``aten::prelu``).
"""
from __future__ import annotations

import warnings
from typing import Optional

import numpy as np

from torchlike import functional as tl

from . import init
from .dropout import _RandomInTraining
from .module import Module

__all__ = [
    "CELU", "ELU", "GELU", "GLU", "Hardshrink", "Hardsigmoid", "Hardswish", "Hardtanh",
    "LeakyReLU", "LogSigmoid", "LogSoftmax", "Mish", "ReLU", "ReLU6", "RReLU", "SELU", "SiLU",
    "Sigmoid", "Softmax", "Softmax2d", "Softmin", "Softplus", "Softshrink", "Softsign", "Tanh",
    "Tanhshrink", "Threshold",
]


def _inplace_repr(inplace: bool, first: bool = False) -> str:
    if not inplace:
        return ""
    return "inplace=True" if first else ", inplace=True"


class _Inplace(Module):
    """An activation whose only option is ``inplace``."""

    __constants__ = ["inplace"]

    def __init__(self, inplace: bool = False) -> None:
        super().__init__()
        self.inplace = inplace

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, first=True)


class ReLU(_Inplace):
    def forward(self, input):
        if self.inplace:
            return tl.relu_(input)
        return tl.relu(input)


class SELU(_Inplace):
    def forward(self, input):
        if self.inplace:
            return tl.selu_(input)
        return tl.selu(input)


class SiLU(_Inplace):
    def forward(self, input):
        if self.inplace:
            return tl.silu_(input)
        return tl.silu(input)


class Mish(_Inplace):
    def forward(self, input):
        if self.inplace:
            return tl.mish_(input)
        return tl.mish(input)


class Hardsigmoid(_Inplace):
    def forward(self, input):
        if self.inplace:
            return tl.hardsigmoid_(input)
        return tl.hardsigmoid(input)

    def extra_repr(self) -> str:
        return ""  # PyTorch prints Hardsigmoid() even when inplace


class Hardswish(_Inplace):
    def forward(self, input):
        if self.inplace:
            return tl.hardswish_(input)
        return tl.hardswish(input)

    def extra_repr(self) -> str:
        return ""


class Hardtanh(Module):
    __constants__ = ["min_val", "max_val", "inplace"]

    def __init__(self, min_val: float = -1.0, max_val: float = 1.0, inplace: bool = False,
                 min_value: Optional[float] = None, max_value: Optional[float] = None) -> None:
        super().__init__()
        if min_value is not None:
            warnings.warn("keyword argument `min_value` is deprecated and rename to `min_val`",
                          FutureWarning, stacklevel=2)
            min_val = min_value
        if max_value is not None:
            warnings.warn("keyword argument `max_value` is deprecated and rename to `max_val`",
                          FutureWarning, stacklevel=2)
            max_val = max_value
        self.min_val = min_val
        self.max_val = max_val
        self.inplace = inplace
        if not self.max_val > self.min_val:
            raise AssertionError(f"max_val ({max_val}) must be greater than min_val ({min_val})")

    def forward(self, input):
        if self.inplace:
            return tl.hardtanh_(input, self.min_val, self.max_val)
        return tl.hardtanh(input, self.min_val, self.max_val)

    def extra_repr(self) -> str:
        return f"min_val={self.min_val}, max_val={self.max_val}" + _inplace_repr(self.inplace)


class ReLU6(Hardtanh):
    def __init__(self, inplace: bool = False) -> None:
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self) -> str:
        return _inplace_repr(self.inplace, first=True)


class GELU(Module):
    __constants__ = ["approximate"]

    def __init__(self, approximate: str = "none") -> None:
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return tl.gelu(input, approximate=self.approximate)

    def extra_repr(self) -> str:
        return f"approximate={repr(self.approximate)}"


class Tanh(Module):
    def forward(self, input):
        return tl.tanh(input)


class Sigmoid(Module):
    def forward(self, input):
        return tl.sigmoid(input)


class LogSigmoid(Module):
    def forward(self, input):
        return tl.log_sigmoid(input)


class Softsign(Module):
    """x / (1 + |x|), as ``F.softsign`` composes it."""

    def forward(self, input):
        return input / (tl.abs(input) + 1)


class Tanhshrink(Module):
    """x - tanh(x), as ``F.tanhshrink`` composes it."""

    def forward(self, input):
        return input - tl.tanh(input)


class Softplus(Module):
    __constants__ = ["beta", "threshold"]

    def __init__(self, beta: float = 1.0, threshold: float = 20.0) -> None:
        super().__init__()
        self.beta = beta
        self.threshold = threshold

    def forward(self, input):
        return tl.softplus(input, self.beta, self.threshold)

    def extra_repr(self) -> str:
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(Module):
    __constants__ = ["alpha", "inplace"]

    def __init__(self, alpha: float = 1.0, inplace: bool = False) -> None:
        super().__init__()
        self.alpha = alpha
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return tl.elu_(input, self.alpha)
        return tl.elu(input, self.alpha)

    def extra_repr(self) -> str:
        return f"alpha={self.alpha}" + _inplace_repr(self.inplace)


class CELU(ELU):
    def forward(self, input):
        if self.inplace:
            return tl.celu_(input, self.alpha)
        return tl.celu(input, self.alpha)


class LeakyReLU(Module):
    __constants__ = ["inplace", "negative_slope"]

    def __init__(self, negative_slope: float = 1e-2, inplace: bool = False) -> None:
        super().__init__()
        self.negative_slope = negative_slope
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return tl.leaky_relu_(input, self.negative_slope)
        return tl.leaky_relu(input, self.negative_slope)

    def extra_repr(self) -> str:
        return f"negative_slope={self.negative_slope}" + _inplace_repr(self.inplace)


class Threshold(Module):
    """y = x if x > threshold else value."""

    __constants__ = ["threshold", "value", "inplace"]

    def __init__(self, threshold: float, value: float, inplace: bool = False) -> None:
        super().__init__()
        self.threshold = threshold
        self.value = value
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return tl.threshold_(input, self.threshold, self.value)
        return tl.threshold(input, self.threshold, self.value)

    def extra_repr(self) -> str:
        return f"threshold={self.threshold}, value={self.value}" + _inplace_repr(self.inplace)


class Softshrink(Module):
    __constants__ = ["lambd"]

    def __init__(self, lambd: float = 0.5) -> None:
        super().__init__()
        self.lambd = lambd

    def forward(self, input):
        return tl.softshrink(input, self.lambd)

    def extra_repr(self) -> str:
        return str(self.lambd)


class Hardshrink(Softshrink):
    def forward(self, input):
        return tl.hardshrink(input, self.lambd)


def _rrelu_train(input: np.ndarray, lower: float, upper: float, inplace: bool) -> np.ndarray:
    """Training-mode RReLU: each negative element scaled by its own U(lower, upper) slope,
    drawn from ``nn.init``'s generator."""
    slopes = init.get_generator().uniform(lower, upper, input.shape)
    out = np.where(input >= 0, input, input * slopes).astype(input.dtype, copy=False)
    if inplace:
        np.copyto(input, out)
        return input
    return out


class RReLU(_RandomInTraining):
    """Randomized leaky ReLU: slope (lower + upper) / 2 in eval mode, a random slope per
    element in training mode (drawn in ``__call__``, see ``dropout.py``)."""

    __constants__ = ["lower", "upper", "inplace"]

    def __init__(self, lower: float = 1.0 / 8, upper: float = 1.0 / 3,
                 inplace: bool = False) -> None:
        super().__init__()
        self.lower = lower
        self.upper = upper
        self.inplace = inplace

    def forward(self, input):
        if self.inplace:
            return tl.rrelu_(input, self.lower, self.upper, self.training)
        return tl.rrelu(input, self.lower, self.upper, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        return _rrelu_train(input, self.lower, self.upper, self.inplace)

    def extra_repr(self) -> str:
        return f"lower={self.lower}, upper={self.upper}" + _inplace_repr(self.inplace)


class GLU(Module):
    """Splits dim ``dim`` in halves a, b: a * sigmoid(b)."""

    __constants__ = ["dim"]

    def __init__(self, dim: int = -1) -> None:
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return tl.glu(input, self.dim)

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class _SoftmaxBase(Module):
    """``dim=None`` picks PyTorch's implicit dim (0 for 0-, 1- and 3-d inputs, else 1;
    deprecated there, with a warning that is not repeated here)."""

    __constants__ = ["dim"]

    def __init__(self, dim: Optional[int] = None) -> None:
        super().__init__()
        self.dim = dim

    def extra_repr(self) -> str:
        return f"dim={self.dim}"


class Softmax(_SoftmaxBase):
    def forward(self, input):
        dim = self.dim
        if dim is None:
            dim = 1
            if input.ndim == 0 or input.ndim == 1 or input.ndim == 3:
                dim = 0
        return tl.softmax(input, dim)


class LogSoftmax(_SoftmaxBase):
    def forward(self, input):
        dim = self.dim
        if dim is None:
            dim = 1
            if input.ndim == 0 or input.ndim == 1 or input.ndim == 3:
                dim = 0
        return tl.log_softmax(input, dim)


class Softmin(_SoftmaxBase):
    def forward(self, input):
        dim = self.dim
        if dim is None:
            dim = 1
            if input.ndim == 0 or input.ndim == 1 or input.ndim == 3:
                dim = 0
        return tl.softmax(-input, dim)


class Softmax2d(Module):
    """Softmax over the channel dim (-3) of a (C, H, W) or (N, C, H, W) input."""

    def forward(self, input):
        assert input.ndim == 3 or input.ndim == 4, "Softmax2d: expected input to be 3D or 4D"
        return tl.softmax(input, -3)
