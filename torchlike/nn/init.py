"""``torch.nn.init`` over numpy arrays: fill an array in place and return it.

Random fills draw from one module-level ``numpy.random.Generator`` (``manual_seed(n)`` resets
it; ``Dropout`` in training mode draws from it too), or from the ``generator=`` given.  The
numbers are numpy's, not PyTorch's: the distributions and bounds are PyTorch's.
"""
from __future__ import annotations

import math
import warnings
from typing import Any, Optional, Tuple

import numpy as np

__all__ = [
    "calculate_gain", "constant_", "dirac_", "eye_", "get_generator", "kaiming_normal_",
    "kaiming_uniform_", "manual_seed", "normal_", "ones_", "orthogonal_", "trunc_normal_",
    "uniform_", "xavier_normal_", "xavier_uniform_", "zeros_",
]

_generator = np.random.default_rng()


def manual_seed(seed: int) -> np.random.Generator:
    """Reset the generator that initializers and training-mode dropout draw from."""
    global _generator
    _generator = np.random.default_rng(seed)
    return _generator


def get_generator() -> np.random.Generator:
    return _generator


def _rng(generator: Optional[np.random.Generator]) -> np.random.Generator:
    return _generator if generator is None else generator


def _fill(tensor: np.ndarray, values: Any) -> np.ndarray:
    tensor[...] = values
    return tensor


def calculate_gain(nonlinearity: str, param: Any = None) -> float:
    linear_fns = ["linear", "conv1d", "conv2d", "conv3d", "conv_transpose1d",
                  "conv_transpose2d", "conv_transpose3d"]
    if nonlinearity in linear_fns or nonlinearity == "sigmoid":
        return 1
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        if param is None:
            negative_slope = 0.01
        elif not isinstance(param, bool) and isinstance(param, (int, float)):
            negative_slope = param
        else:
            raise ValueError(f"negative_slope {param} not a valid number")
        return math.sqrt(2.0 / (1 + negative_slope ** 2))
    if nonlinearity == "selu":
        return 3.0 / 4
    raise ValueError(f"Unsupported nonlinearity {nonlinearity}")


def _calculate_fan_in_and_fan_out(tensor: np.ndarray) -> Tuple[int, int]:
    if tensor.ndim < 2:
        raise ValueError("Fan in and fan out can not be computed for tensor with fewer than 2 "
                         "dimensions")
    receptive = int(np.prod(tensor.shape[2:])) if tensor.ndim > 2 else 1
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _calculate_correct_fan(tensor: np.ndarray, mode: str) -> int:
    mode = mode.lower()
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"Mode {mode} not supported, please use one of fan_in, fan_out")
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return fan_in if mode == "fan_in" else fan_out


def uniform_(tensor: np.ndarray, a: float = 0.0, b: float = 1.0,
             generator: Optional[np.random.Generator] = None) -> np.ndarray:
    return _fill(tensor, _rng(generator).uniform(a, b, tensor.shape))


def normal_(tensor: np.ndarray, mean: float = 0.0, std: float = 1.0,
            generator: Optional[np.random.Generator] = None) -> np.ndarray:
    return _fill(tensor, _rng(generator).normal(mean, std, tensor.shape))


def trunc_normal_(tensor: np.ndarray, mean: float = 0.0, std: float = 1.0, a: float = -2.0,
                  b: float = 2.0, generator: Optional[np.random.Generator] = None
                  ) -> np.ndarray:
    """N(mean, std) truncated to [a, b], by resampling what falls outside."""
    rng = _rng(generator)
    out = rng.normal(mean, std, tensor.shape)
    bad = (out < a) | (out > b)
    while bad.any():
        out[bad] = rng.normal(mean, std, int(bad.sum()))
        bad = (out < a) | (out > b)
    return _fill(tensor, out)


def constant_(tensor: np.ndarray, val: float) -> np.ndarray:
    return _fill(tensor, val)


def ones_(tensor: np.ndarray) -> np.ndarray:
    return _fill(tensor, 1)


def zeros_(tensor: np.ndarray) -> np.ndarray:
    return _fill(tensor, 0)


def eye_(tensor: np.ndarray) -> np.ndarray:
    if tensor.ndim != 2:
        raise ValueError("Only tensors with 2 dimensions are supported")
    return _fill(tensor, np.eye(*tensor.shape))


def dirac_(tensor: np.ndarray, groups: int = 1) -> np.ndarray:
    if tensor.ndim not in (3, 4, 5):
        raise ValueError("Only tensors with 3, 4, or 5 dimensions are supported")
    sizes = tensor.shape
    if sizes[0] % groups != 0:
        raise ValueError("dim 0 must be divisible by groups")
    out_per_group = sizes[0] // groups
    min_dim = min(out_per_group, sizes[1])
    tensor[...] = 0
    for g in range(groups):
        for d in range(min_dim):
            tensor[(g * out_per_group + d, d) + tuple(s // 2 for s in sizes[2:])] = 1
    return tensor


def xavier_uniform_(tensor: np.ndarray, gain: float = 1.0,
                    generator: Optional[np.random.Generator] = None) -> np.ndarray:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    a = math.sqrt(3.0) * gain * math.sqrt(2.0 / float(fan_in + fan_out))
    return uniform_(tensor, -a, a, generator)


def xavier_normal_(tensor: np.ndarray, gain: float = 1.0,
                   generator: Optional[np.random.Generator] = None) -> np.ndarray:
    fan_in, fan_out = _calculate_fan_in_and_fan_out(tensor)
    return normal_(tensor, 0.0, gain * math.sqrt(2.0 / float(fan_in + fan_out)), generator)


def _kaiming_std(tensor: np.ndarray, a: float, mode: str, nonlinearity: str) -> Optional[float]:
    if 0 in tensor.shape:
        warnings.warn("Initializing zero-element tensors is a no-op", stacklevel=3)
        return None
    fan = _calculate_correct_fan(tensor, mode)
    return calculate_gain(nonlinearity, a) / math.sqrt(fan)


def kaiming_uniform_(tensor: np.ndarray, a: float = 0, mode: str = "fan_in",
                     nonlinearity: str = "leaky_relu",
                     generator: Optional[np.random.Generator] = None) -> np.ndarray:
    """U(-bound, bound) with bound = gain * sqrt(3 / fan); ``a=sqrt(5)`` (Linear's default
    init) gives bound = 1/sqrt(fan_in)."""
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    bound = math.sqrt(3.0) * std
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor: np.ndarray, a: float = 0, mode: str = "fan_in",
                    nonlinearity: str = "leaky_relu",
                    generator: Optional[np.random.Generator] = None) -> np.ndarray:
    std = _kaiming_std(tensor, a, mode, nonlinearity)
    if std is None:
        return tensor
    return normal_(tensor, 0.0, std, generator)


def orthogonal_(tensor: np.ndarray, gain: float = 1.0,
                generator: Optional[np.random.Generator] = None) -> np.ndarray:
    if tensor.ndim < 2:
        raise ValueError("Only tensors with 2 or more dimensions are supported")
    if tensor.size == 0:
        return tensor
    rows = tensor.shape[0]
    cols = tensor.size // rows
    flat = _rng(generator).normal(0.0, 1.0, (rows, cols))
    if rows < cols:
        flat = flat.T
    q, r = np.linalg.qr(flat)
    q = q * np.sign(np.diag(r))
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))
