"""``aten::glu``, ``aten::layer_norm``, ``aten::batch_norm`` and ``aten::instance_norm``: the
ops the graphs of ``F.glu``, ``F.layer_norm``, ``F.batch_norm`` and ``F.instance_norm``
(``ops/nn_functions.py``) end in.  Interpreted, not fused.

Parameters must have the input's dtype (float32 ones may go with a float16 input), as on
PyTorch's CPU.  They compute in float64 and round once to the input's dtype (PyTorch's CPU kernels accumulate
statistics in double and normalize in float: the results agree to float32 rounding)::

    glu(x, dim)              a * sigmoid(b), a and b the two halves of x along dim
    layer_norm(x, shape, w, b, eps)
                             (x - mean) / sqrt(var + eps) * w + b over the last len(shape) dims
                             (biased variance)
    batch_norm(x, w, b, running_mean, running_var, training, momentum, eps)
                             per channel (dim 1): eval mode normalizes with the running
                             statistics; training mode with the batch's (biased variance) and,
                             as PyTorch does, updates the running statistics in place
                             (momentum; unbiased variance) -- so the op is not pure.
"""
from __future__ import annotations

import math

import numpy as np

from .registry import defop
from .tensor_common import arg, infer_same, known_dim, like, tensor_in, wrap_dim


def _float_input(name: str, x) -> None:
    if x.dtype.kind != "f":
        raise NotImplementedError(f"\"{name}\" not implemented for '{x.dtype}'")


def _glu(xp, x, dim=-1):
    _float_input("glu", x)
    if x.ndim == 0:
        raise RuntimeError("glu does not support scalars because halving size must be even")
    d = wrap_dim(dim, x.ndim)
    n = x.shape[d]
    if n % 2:
        raise RuntimeError(f"Halving dimension must be even, but dimension {d} is size {n}")
    x64 = x.astype(np.float64)
    a, b = xp.split(x64, 2, axis=d)
    with np.errstate(all="ignore"):
        return (a / (1 + xp.exp(-b))).astype(x.dtype)


def _infer_glu(node, types):
    t, dim = tensor_in(types), arg(node, 1, -1)
    if t.shape is None:
        return [like(t, shape=None)]
    d = known_dim(dim, len(t.shape))
    if d is None:
        return [like(t, shape=None)]
    shape = list(t.shape)
    shape[d] = None if shape[d] is None else shape[d] // 2
    return [like(t, shape=shape)]


defop("aten::glu", "Tensor self, int dim=-1", _glu, infer=_infer_glu)


def _check_params(x, params) -> None:
    """PyTorch's CPU rule: parameters (weight, bias, running statistics) have the input's dtype,
    or float32 for a float16/bfloat16 input."""
    allowed = {str(x.dtype)} | ({"float32"} if x.dtype == np.float16 else set())
    for p in params:
        if p is not None and str(p.dtype) not in allowed:
            raise RuntimeError(f"mixed dtype (CPU): expect parameter to have scalar type of "
                               f"{' or '.join(sorted(allowed))}, got {p.dtype}")


def _affine(y, weight, bias):
    if weight is not None:
        y = y * weight.astype(np.float64)
    if bias is not None:
        y = y + bias.astype(np.float64)
    return y


def _layer_norm(xp, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    _float_input("LayerNormKernelImpl", x)
    shape = tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if k == 0 or x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[*, {', '.join(map(str, shape))}], but got input of size"
                           f"{list(x.shape)}")
    _check_params(x, (weight, bias))
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(shape)}")
    axes = tuple(range(x.ndim - k, x.ndim))
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = xp.mean(x64, axis=axes, keepdims=True)
        var = xp.mean((x64 - mean) ** 2, axis=axes, keepdims=True)
        y = (x64 - mean) / xp.sqrt(var + eps)
        return _affine(y, weight, bias).astype(x.dtype)


defop("aten::layer_norm", "Tensor input, int[] normalized_shape, Tensor? weight=None, "
      "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True", _layer_norm,
      infer=infer_same)


def _per_channel(p, ndim):
    """A (C,) vector shaped to broadcast along dim 1 of an ndim-d input."""
    return None if p is None else p.astype(np.float64).reshape((1, -1) + (1,) * (ndim - 2))


def _batch_norm(xp, x, weight, bias, running_mean, running_var, training, momentum, eps,
                cudnn_enabled=True):
    _float_input("batch_norm", x)
    if x.ndim < 2:
        raise ValueError(f"batch_norm expects an input of at least 2 dims (N, C, ...), got "
                         f"{x.ndim}")
    channels = x.shape[1]
    _check_params(x, (weight, bias, running_mean, running_var))
    for name, p in (("weight", weight), ("bias", bias), ("running_mean", running_mean),
                    ("running_var", running_var)):
        if p is not None and p.size != channels:
            raise RuntimeError(f"{name} should contain {channels} elements not {p.size}")
    x64 = x.astype(np.float64)
    axes = (0,) + tuple(range(2, x.ndim))
    with np.errstate(all="ignore"):
        if training:
            count = x.size // max(channels, 1)
            mean = xp.mean(x64, axis=axes, keepdims=True)
            var = xp.mean((x64 - mean) ** 2, axis=axes, keepdims=True)
            if running_mean is not None:
                m = 0.1 if momentum is None else momentum
                running_mean[...] = ((1 - m) * running_mean.astype(np.float64)
                                     + m * mean.reshape(-1)).astype(running_mean.dtype)
            if running_var is not None:
                m = 0.1 if momentum is None else momentum
                unbiased = var.reshape(-1) * (count / (count - 1) if count > 1 else math.nan)
                running_var[...] = ((1 - m) * running_var.astype(np.float64)
                                    + m * unbiased).astype(running_var.dtype)
        else:
            if running_mean is None or running_var is None:
                raise RuntimeError("running_mean and running_var must be defined in evaluation "
                                   "mode")
            mean, var = _per_channel(running_mean, x.ndim), _per_channel(running_var, x.ndim)
        y = (x64 - mean) / xp.sqrt(var + eps)
        return _affine(y, _per_channel(weight, x.ndim), _per_channel(bias, x.ndim)).astype(
            x.dtype)


defop("aten::batch_norm", "Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, "
      "Tensor? running_var, bool training, float momentum, float eps, bool cudnn_enabled",
      _batch_norm, infer=infer_same, pure=False)


def _instance_norm(xp, x, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps, cudnn_enabled=True):
    """ATen's: a batch norm of the input seen as one sample of N * C channels, with the
    per-channel parameters and running statistics repeated N times (and the updated running
    statistics averaged back over the samples)."""
    _float_input("instance_norm", x)
    if x.ndim < 2:
        raise ValueError(f"instance_norm expects an input of at least 2 dims (N, C, ...), got "
                         f"{x.ndim}")
    n, c = x.shape[:2]
    rep = lambda p: None if p is None else xp.tile(p, n)  # noqa: E731
    rm, rv = rep(running_mean), rep(running_var)
    y = _batch_norm(xp, x.reshape((1, n * c) + x.shape[2:]), rep(weight), rep(bias), rm, rv,
                    bool(use_input_stats), momentum, eps)
    if use_input_stats:
        for stat, tiled in ((running_mean, rm), (running_var, rv)):
            if stat is not None:
                stat[...] = tiled.reshape(n, c).mean(axis=0).astype(stat.dtype)
    return y.reshape(x.shape)


defop("aten::instance_norm", "Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor? running_mean, Tensor? running_var, bool use_input_stats, float momentum, "
      "float eps, bool cudnn_enabled", _instance_norm, infer=infer_same, pure=False)
