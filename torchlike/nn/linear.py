"""``Linear`` and ``Identity`` (and ``Flatten`` / ``Unflatten``), as PyTorch defines them."""
from __future__ import annotations

import math
from typing import Any

import numpy as np

from torchlike import functional as tl

from . import init
from .module import Module, Parameter

__all__ = ["Flatten", "Identity", "Linear", "Unflatten"]


def _float_dtype(dtype: Any) -> np.dtype:
    """A module's parameter dtype: float32 unless asked (any numpy spelling, or tl.float64)."""
    return np.dtype(np.float32 if dtype is None else dtype)


def _check_device(device: Any) -> None:
    if device is not None and str(device).split(":")[0] != "cpu":
        raise ValueError(f"torchlike.nn modules hold numpy arrays: device {device!r} is not "
                         "supported (use None or 'cpu')")


class Identity(Module):
    """Returns its input; accepts and ignores any constructor arguments."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__()

    def forward(self, input):
        return input


class Linear(Module):
    """y = x @ weight.T + bias, weight (out_features, in_features), bias (out_features,);
    both drawn from U(-1/sqrt(in_features), 1/sqrt(in_features)), as PyTorch initializes."""

    __constants__ = ["in_features", "out_features"]

    def __init__(self, in_features: int, out_features: int, bias: bool = True,
                 device: Any = None, dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        dt = _float_dtype(dtype)
        self.in_features = in_features
        self.out_features = out_features
        self.weight = Parameter(np.empty((out_features, in_features), dt))
        if bias:
            self.bias = Parameter(np.empty((out_features,), dt))
        else:
            self.register_parameter("bias", None)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        init.kaiming_uniform_(self.weight, a=math.sqrt(5))
        if self.bias is not None:
            fan_in, _ = init._calculate_fan_in_and_fan_out(self.weight)
            bound = 1 / math.sqrt(fan_in) if fan_in > 0 else 0
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input):
        return tl.linear(input, self.weight, self.bias)

    def extra_repr(self) -> str:
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Flatten(Module):
    """Flattens dims ``start_dim..end_dim`` into one."""

    __constants__ = ["start_dim", "end_dim"]

    def __init__(self, start_dim: int = 1, end_dim: int = -1) -> None:
        super().__init__()
        self.start_dim = start_dim
        self.end_dim = end_dim

    def forward(self, input):
        return tl.flatten(input, self.start_dim, self.end_dim)

    def extra_repr(self) -> str:
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Expands dim ``dim`` into ``unflattened_size``."""

    __constants__ = ["dim", "unflattened_size"]

    def __init__(self, dim: int, unflattened_size: Any) -> None:
        super().__init__()
        if not isinstance(dim, int):
            raise TypeError("invalid argument type for dim parameter")
        if not isinstance(unflattened_size, (list, tuple)) or not all(
                isinstance(s, int) for s in unflattened_size):
            raise TypeError("unflattened_size must be a tuple of ints")
        self.dim = dim
        self.unflattened_size = unflattened_size

    def forward(self, input):
        return tl.unflatten(input, self.dim, self.unflattened_size)

    def extra_repr(self) -> str:
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"
