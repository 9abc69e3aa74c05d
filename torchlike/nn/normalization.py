"""``LayerNorm`` and ``GroupNorm``: PyTorch's parameters (weight ones, bias zeros), constants
and reprs; ``forward`` is ``tl.layer_norm`` / ``tl.group_norm``."""
from __future__ import annotations

import numbers
from typing import Any

import numpy as np

from torchlike import functional as tl

from . import init
from .linear import _check_device, _float_dtype
from .module import Module, Parameter

__all__ = ["GroupNorm", "LayerNorm"]


class LayerNorm(Module):
    """Normalizes over the trailing ``normalized_shape`` dims, then scales and shifts
    elementwise (``weight``, ``bias`` of shape ``normalized_shape``)."""

    __constants__ = ["normalized_shape", "eps", "elementwise_affine"]

    def __init__(self, normalized_shape: Any, eps: float = 1e-5,
                 elementwise_affine: bool = True, bias: bool = True, device: Any = None,
                 dtype: Any = None) -> None:
        super().__init__()
        _check_device(device)
        dt = _float_dtype(dtype)
        if isinstance(normalized_shape, numbers.Integral):
            normalized_shape = (normalized_shape,)
        self.normalized_shape = tuple(int(s) for s in normalized_shape)
        self.eps = eps
        self.elementwise_affine = elementwise_affine
        _affine_parameters(self, elementwise_affine, self.normalized_shape, dt, bias)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return tl.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.elementwise_affine}, bias={self.bias is not None}")


class GroupNorm(Module):
    """Normalizes each of ``num_groups`` channel groups of an (N, C, ...) input, then scales
    and shifts per channel."""

    __constants__ = ["num_groups", "num_channels", "eps", "affine"]

    def __init__(self, num_groups: int, num_channels: int, eps: float = 1e-5,
                 affine: bool = True, device: Any = None, dtype: Any = None, *,
                 bias: bool = True) -> None:
        super().__init__()
        _check_device(device)
        if num_channels % num_groups != 0:
            raise ValueError(f"num_channels ({num_channels}) must be divisible by num_groups "
                             f"({num_groups})")
        dt = _float_dtype(dtype)
        self.num_groups = num_groups
        self.num_channels = num_channels
        self.eps = eps
        self.affine = affine
        _affine_parameters(self, affine, (num_channels,), dt, bias)

    def reset_parameters(self) -> None:
        _reset_affine(self)

    def forward(self, input):
        return tl.group_norm(input, self.num_groups, self.weight, self.bias, self.eps)

    def extra_repr(self) -> str:
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine={self.affine}, "
                f"bias={self.bias is not None}")


def _affine_parameters(m: Module, affine: bool, shape, dtype, bias: bool) -> None:
    """The per-element scale ``weight`` and shift ``bias`` of a normalization (PyTorch
    registers them as None when absent), initialized by ``reset_parameters``."""
    m.register_parameter("weight", Parameter(np.empty(shape, dtype)) if affine else None)
    m.register_parameter("bias", Parameter(np.empty(shape, dtype)) if affine and bias else None)
    m.reset_parameters()


def _reset_affine(m: Module) -> None:
    """PyTorch's init of a normalization's affine parameters: weight 1, bias 0."""
    if m.weight is not None:
        init.ones_(m.weight)
    if m.bias is not None:
        init.zeros_(m.bias)
