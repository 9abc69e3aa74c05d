"""``aten::glu``, ``aten::layer_norm``, ``aten::rms_norm``, ``aten::batch_norm``,
``aten::group_norm`` and ``aten::instance_norm``: the ops the graphs of ``F.glu``,
``F.layer_norm``, ``F.rms_norm``, ``F.batch_norm``, ``F.group_norm`` and ``F.instance_norm``
(``ops/nn_functions.py``) end in.  Interpreted as such; ``passes/decompose_norms.py`` lowers
layer_norm and rms_norm to a row reduction's parts (with ``torchlike::norm_input`` keeping
their checks), group_norm to the same parts over its input seen as rows of groups
(``torchlike::group_norm_rows``), and an eval-mode batch_norm to ``x * scale + shift``
(``torchlike::batch_norm_affine``), which fuse.

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

from ..errors import ExecutionError
from ..ir.types import TensorType
from .elementwise_base import compute_dtype_of, elementwise
from .registry import defop
from .tensor_common import arg, infer_same, known_dim, like, not_implemented, tensor_in, wrap_dim


def _float_input(name: str, x) -> None:
    if x.dtype.kind != "f":
        raise not_implemented(name, x.dtype)


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


def _check_normalized(x, normalized_shape, weight, bias, op: str) -> tuple:
    """PyTorch's checks of a layer norm's (``op`` "layer_norm") or an RMS norm's ("rms_norm")
    arguments, its messages included; the normalized shape as a tuple."""
    shape = tuple(int(s) for s in normalized_shape)
    k = len(shape)
    if k == 0 or x.ndim < k or tuple(x.shape[x.ndim - k:]) != shape:
        dims = ", ".join(map(str, shape))
        star = "*, " if op == "layer_norm" else "*"  # rms_norm's message has no ", " (sic)
        raise RuntimeError(f"Given normalized_shape={list(shape)}, expected input with shape "
                           f"[{star}{dims}], but got input of size{list(x.shape)}")
    if op == "layer_norm":
        _check_params(x, (weight, bias))
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and tuple(p.shape) != shape:
            raise RuntimeError(f"Expected {name} to be of same shape as normalized_shape, but got "
                               f"{name} of shape {list(p.shape)} and normalized_shape = "
                               f"{list(shape)}")
    return shape


def _layer_norm(xp, x, normalized_shape, weight=None, bias=None, eps=1e-5, cudnn_enable=True):
    _float_input("LayerNormKernelImpl", x)
    shape = _check_normalized(x, normalized_shape, weight, bias, "layer_norm")
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        mean = xp.mean(x64, axis=axes, keepdims=True)
        var = xp.mean((x64 - mean) ** 2, axis=axes, keepdims=True)
        y = (x64 - mean) / xp.sqrt(var + eps)
        return _affine(y, weight, bias).astype(x.dtype)


defop("aten::layer_norm", "Tensor input, int[] normalized_shape, Tensor? weight=None, "
      "Tensor? bias=None, float eps=1e-05, bool cudnn_enable=True", _layer_norm,
      infer=infer_same)


def _rms_norm(xp, x, normalized_shape, weight=None, eps=None):
    """PyTorch's: ``x * rsqrt(mean(x**2) + eps) * weight`` over the trailing dims, computed in
    float32 for float16 (in float64 here, rounded once), the result in the input's dtype
    whatever the weight's; ``eps=None`` is the machine epsilon of that compute dtype."""
    _float_input("rms_norm", x)
    shape = _check_normalized(x, normalized_shape, weight, None, "rms_norm")
    axes = tuple(range(x.ndim - len(shape), x.ndim))
    if eps is None:
        eps = float(np.finfo(np.float64 if x.dtype == np.float64 else np.float32).eps)
    x64 = x.astype(np.float64)
    with np.errstate(all="ignore"):
        y = x64 / xp.sqrt(xp.mean(x64 * x64, axis=axes, keepdims=True) + eps)
        if weight is not None:
            y = y * weight.astype(np.float64)
        return y.astype(x.dtype)


defop("aten::rms_norm", "Tensor input, int[] normalized_shape, Tensor? weight=None, "
      "float? eps=None", _rms_norm, infer=infer_same)


# -- what passes/decompose_norms.py lowers layer_norm and rms_norm to ---------------------------

def _check_norm_input(operands, attrs):
    """``normalized_shape`` as the lowering wrote it: -1 is the input's own size at that dim
    (``[x.size(-1)]``), which can only fail for a missing dim, as ``aten::size`` does."""
    x, weight, bias = operands
    op = attrs["op"]
    try:
        _float_input("LayerNormKernelImpl" if op == "layer_norm" else op, x)
        shape, k = list(attrs["normalized_shape"]), len(attrs["normalized_shape"])
        for i, s in enumerate(shape):
            if s == -1:
                if x.ndim < k - i:
                    r = max(x.ndim, 1)
                    raise IndexError(f"Dimension out of range (expected to be in range of "
                                     f"[{-r}, {r - 1}], but got {i - k})")
                shape[i] = x.shape[i - k]
        _check_normalized(x, shape, weight, bias, op)
    except (NotImplementedError, RuntimeError, IndexError) as e:  # typed, as the op's would be
        raise ExecutionError(f"{type(e).__name__}: {e}") from e


# The input of a layer norm or RMS norm lowered to its parts, checked as the op checks it (the
# input's dtype and trailing shape, the parameters' shapes and dtypes), then passed on as is: the
# fused kernel reads it, the weight and bias are not read.  A check that fails makes the
# executor interpret the group, which raises the op's own error.
elementwise("torchlike::norm_input",
            "Tensor self, Tensor? weight, Tensor? bias, int[] normalized_shape, str op",
            ref=lambda xp, a, w, b, normalized_shape, op: a, dtype_rule="first",
            keep=("weight", "bias"), precheck=_check_norm_input, python_name=None,
            numba="{self}", cuda="{self}")
# ``self`` converted to ``other``'s dtype (an RMS norm's result has its input's dtype whatever
# its weight's): ``type_as`` whose target is a tensor of the group, so it fuses
elementwise("torchlike::cast_like", "Tensor self, Tensor other",
            ref=lambda xp, a, b: a if b.shape == a.shape else
            xp.broadcast_to(a, xp.broadcast_shapes(a.shape, b.shape)).copy(),
            dtype_rule=lambda infos, attrs: (compute_dtype_of(infos[1][0]), infos[1][0]),
            python_name=None, numba="{self}", cuda="{self}")
# ``x + eps`` with an RMS norm's default eps, the machine epsilon of the compute dtype (float32
# for float16 and bfloat16)
elementwise("torchlike::add_dtype_eps", "Tensor self",
            ref=lambda xp, a: a + np.finfo(a.dtype).eps, dtype_rule="float", python_name=None,
            numba={"float64": "({self} + 2.220446049250313e-16)",
                   "default": "({self} + np.float32(1.1920928955078125e-07))"},
            cuda={"float64": "({self} + 2.220446049250313e-16)",
                  "default": "({self} + 1.1920928955078125e-07f)"})


def _per_channel(p, ndim):
    """A (C,) vector shaped to broadcast along dim 1 of an ndim-d input."""
    return None if p is None else p.astype(np.float64).reshape((1, -1) + (1,) * (ndim - 2))


def _check_batch_norm(x, weight, bias, running_mean, running_var) -> int:
    """PyTorch's checks of a batch norm's arguments; the channel count."""
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
    return channels


def _batch_norm_affine(xp, x, weight, bias, running_mean, running_var, eps):
    """An eval-mode batch norm as ``x * scale + shift`` (what PyTorch's CPU kernel computes:
    scale = w / sqrt(var + eps), shift = b - mean * scale, in float32 for float16 and float32
    inputs), both shaped to broadcast along dim 1, after the op's checks."""
    _check_batch_norm(x, weight, bias, running_mean, running_var)
    with np.errstate(all="ignore"):
        scale = 1.0 / xp.sqrt(running_var.astype(np.float64) + eps)
        if weight is not None:
            scale = scale * weight.astype(np.float64)
        shift = -running_mean.astype(np.float64) * scale
        if bias is not None:
            shift = shift + bias.astype(np.float64)
    opmath = np.float64 if x.dtype == np.float64 else np.float32
    shape = (1, -1) + (1,) * (x.ndim - 2)
    return scale.astype(opmath).reshape(shape), shift.astype(opmath).reshape(shape)


def _infer_affine(node, types):
    x = tensor_in(types)
    rank = None if x.shape is None else len(x.shape)
    channels = x.shape[1] if rank is not None and rank >= 2 else None
    dtype = "float64" if x.dtype == "float64" else None if x.dtype is None else "float32"
    shape = None if rank is None else (1, channels) + (1,) * (rank - 2)
    return [TensorType(dtype, shape), TensorType(dtype, shape)]


# what passes/decompose_norms.py lowers an eval-mode batch norm to: x * scale + shift, fused
defop("torchlike::batch_norm_affine", "Tensor input, Tensor? weight, Tensor? bias, "
      "Tensor running_mean, Tensor running_var, float eps", _batch_norm_affine, num_outputs=2,
      python_name=None, infer=_infer_affine)


def _batch_norm(xp, x, weight, bias, running_mean, running_var, training, momentum, eps,
                cudnn_enabled=True):
    channels = _check_batch_norm(x, weight, bias, running_mean, running_var)
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


def _channels_dim(x) -> None:
    """A group or instance norm reads the channels at dim 1: PyTorch's error where there is
    none."""
    if x.ndim < 2:
        r = max(x.ndim, 1)
        raise IndexError(f"Dimension out of range (expected to be in range of [{-r}, {r - 1}], "
                         f"but got 1)")


def _check_instance_norm(xp, x, weight, bias) -> None:
    """PyTorch's checks of an instance norm's arguments: a batch norm's of the input seen as
    one sample of N * C channels, the parameters repeated N times."""
    _channels_dim(x)
    n, c = x.shape[:2]
    rep = lambda p: None if p is None else xp.tile(p, n)  # noqa: E731
    _check_batch_norm(x.reshape((1, n * c) + x.shape[2:]), rep(weight), rep(bias), None, None)


def _check_group_norm(x, num_groups, weight, bias) -> None:
    """PyTorch's checks of a group norm's arguments, its messages included."""
    _channels_dim(x)
    _float_input("GroupNormKernelImpl", x)
    c = x.shape[1]
    if num_groups <= 0:
        raise RuntimeError(f"Expected num groups to be greater than 0, got {num_groups}")
    if c % num_groups:
        raise RuntimeError(f"Expected number of channels in input to be divisible by "
                           f"num_groups, but got input of shape {list(x.shape)} and "
                           f"num_groups={num_groups}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and (p.ndim != 1 or p.shape[0] != c):
            raise RuntimeError(f"Expected {name} to be a vector of size equal to the number of "
                               f"channels in input, but got {name} of shape {list(p.shape)} "
                               f"and input of shape {list(x.shape)}")
    _check_params(x, (weight, bias))
    if weight is not None and bias is not None and weight.dtype != bias.dtype:
        raise RuntimeError(f"expected scalar type {weight.dtype} but found {bias.dtype}")


def _group_norm(xp, x, num_groups, weight=None, bias=None, eps=1e-5, cudnn_enabled=True):
    _check_group_norm(x, num_groups, weight, bias)
    count = x.size // max(x.shape[0] * num_groups, 1)  # elements per group
    x64 = x.astype(np.float64).reshape(x.shape[0], num_groups, count)
    with np.errstate(all="ignore"):
        mean = x64.sum(axis=2, keepdims=True) / max(count, 1)
        var = ((x64 - mean) ** 2).sum(axis=2, keepdims=True) / max(count, 1)
        y = ((x64 - mean) / xp.sqrt(var + eps)).reshape(x.shape)
        return _affine(y, _per_channel(weight, x.ndim), _per_channel(bias, x.ndim)).astype(
            x.dtype)


defop("aten::group_norm", "Tensor input, int num_groups, Tensor? weight=None, Tensor? bias=None, "
      "float eps=1e-05, bool cudnn_enabled=True", _group_norm, infer=infer_same)


# -- what passes/decompose_norms.py lowers group_norm to: the input seen as rows of groups ------

def _group_rows(xp, x, num_groups, weight, bias, op):
    """``x`` (N, C, *) viewed as (N, G, C/G, prod(*)) after the checks of ``op`` (a group norm,
    or an instance norm: ``num_groups`` -1, C groups): the rows (N, G) a row kernel reduces
    over the trailing two dims, a per-channel weight of shape (G, C/G, 1) broadcasting against
    it."""
    if op == "instance_norm":
        _check_instance_norm(xp, x, weight, bias)
        num_groups = x.shape[1]
    else:
        _check_group_norm(x, num_groups, weight, bias)
    n, c = x.shape[:2]
    return x.reshape(n, num_groups, c // num_groups, math.prod(x.shape[2:]))


def _infer_group_rows(node, types):
    x, g = tensor_in(types), arg(node, 1, None)
    shape = None
    if x.shape is not None and len(x.shape) >= 2 and None not in x.shape and g == -1:
        g = x.shape[1]
    if x.shape is not None and len(x.shape) >= 2 and isinstance(g, int) and g > 0 and \
            None not in x.shape and x.shape[1] % g == 0:
        shape = (x.shape[0], g, x.shape[1] // g, math.prod(x.shape[2:]))
    return [like(x, shape=shape)]


defop("torchlike::group_norm_rows", "Tensor input, int num_groups, Tensor? weight, "
      "Tensor? bias, str op", _group_rows, category="shape", python_name=None,
      infer=_infer_group_rows)
def _group_rows_of(xp, v, num_groups):
    """A tensor that broadcasts against a group norm's input ``(N, C, *)`` -- of shape
    ``(N or 1, C or 1)`` followed by the input's trailing sizes or by ones -- seen as that
    input's rows of groups: ``(N or 1, G or 1, C/G or 1, prod(*) or 1)``.  The elementwise
    work that passes/group_rows.py moves across the group norm's view reads its other
    operands through this view."""
    if v.ndim < 2:
        return v
    c = v.shape[1]
    g = 1 if c == 1 else (c if num_groups == -1 else num_groups)
    return v.reshape(v.shape[0], g, c // g, math.prod(v.shape[2:]))


def _infer_group_rows_of(node, types):
    v, g = tensor_in(types), arg(node, 1, None)
    shape = None
    if v.shape is not None and None not in v.shape and len(v.shape) >= 2 and isinstance(g, int):
        c = v.shape[1]
        g = 1 if c == 1 else (c if g == -1 else g)
        if g > 0 and c % g == 0:
            shape = (v.shape[0], g, c // g, math.prod(v.shape[2:]))
    return [like(v, shape=shape if v.shape is None or len(v.shape) >= 2 else v.shape)]


defop("torchlike::group_rows_of", "Tensor self, int num_groups", _group_rows_of,
      category="shape", python_name=None, infer=_infer_group_rows_of)
def _infer_group_param(node, types):
    p, g = tensor_in(types), arg(node, 1, None)
    shape = None
    if p.shape is not None and len(p.shape) == 1 and p.shape[0] is not None and \
            isinstance(g, int) and (g == -1 or (g > 0 and p.shape[0] % g == 0)):
        shape = (p.shape[0], 1, 1) if g == -1 else (g, p.shape[0] // g, 1)
    return [like(p, shape=shape)]


defop("torchlike::group_norm_param", "Tensor self, int num_groups",
      lambda xp, p, num_groups: p.reshape(-1, 1, 1) if num_groups == -1 else
      p.reshape(num_groups, -1, 1), category="shape",
      python_name=None, infer=_infer_group_param)


def _instance_norm(xp, x, weight, bias, running_mean, running_var, use_input_stats, momentum,
                   eps, cudnn_enabled=True):
    """ATen's: a batch norm of the input seen as one sample of N * C channels, with the
    per-channel parameters and running statistics repeated N times (and the updated running
    statistics averaged back over the samples)."""
    _channels_dim(x)
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
