"""Reductions: sum, mean, var/std, logsumexp, amax/amin, max/min (with indices), argmax/argmin,
softmax, log_softmax.

Result dtypes are PyTorch's: integer and bool sums are int64, ``mean`` and ``softmax`` refuse
integers, half-precision arithmetic is carried out in float32 and rounded once, 0-d tensors
accept dim 0 and -1.
"""
from __future__ import annotations

import math
from typing import Any, Optional, Tuple

import numpy as np

from ..ir.types import BOOL, SCALAR_TYPE_ENUM, TensorType
from .dtypes import Priority, is_bool, is_float, is_int, result_type
from .registry import defop
from .tensor_common import (
    UNKNOWN,
    arg,
    broadcast_shapes,
    compute_dtype,
    dim_overload_outputs,
    dims_list,
    dtype_arg,
    known_dim,
    like,
    reduce_axes,
    tensor_in,
    wrap_dim,
)

# -- reductions ----------------------------------------------------------------------------------

def _reduction_args(args) -> Tuple[Any, bool, Any]:
    """(dim, keepdim, dtype) of sum/mean: ``(dtype)`` or ``(dim, keepdim=False, dtype=None)``."""
    if len(args) <= 1:
        return None, False, (args[0] if args else None)
    return args[0], bool(args[1]), (args[2] if len(args) > 2 else None)


def _sum(xp, x, *args):
    dim, keepdim, dtype = _reduction_args(args)
    out = dtype_arg(dtype) or ("int64" if x.dtype.kind in "biu" else str(x.dtype))
    return xp.asarray(xp.sum(x.astype(compute_dtype(out), copy=False), axis=reduce_axes(x, dim),
                             keepdims=keepdim)).astype(out, copy=False)


def _mean(xp, x, *args):
    dim, keepdim, dtype = _reduction_args(args)
    out = dtype_arg(dtype) or str(x.dtype)
    if not is_float(out):
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {out}")
    axes = reduce_axes(x, dim)
    count = x.size if axes is None else math.prod(x.shape[a] for a in axes)
    total = xp.sum(x.astype(compute_dtype(out), copy=False), axis=axes, keepdims=keepdim)
    with np.errstate(all="ignore"):      # an empty reduction is 0/0 = nan, as in PyTorch
        return xp.asarray(total / count).astype(out, copy=False)


def _infer_reduced_shape(t: TensorType, dim: Any, keepdim: Any) -> Optional[tuple]:
    if t.shape is None or dim is UNKNOWN or keepdim is UNKNOWN:
        return None
    try:
        dims = dims_list(dim)
    except (TypeError, ValueError):     # a list with unknown (None) elements
        return None
    if dims is None or t.rank == 0:
        return (1,) * t.rank if keepdim else ()
    axes = {known_dim(d, t.rank) for d in dims}
    if None in axes:
        return None
    return tuple((1 if keepdim else None) if i in axes else s
                 for i, s in enumerate(t.shape) if keepdim or i not in axes)


def _infer_sum_mean(kind):
    def infer(node, types):
        t = tensor_in(types)
        if len(node.inputs) <= 2:
            dim, keepdim, dtype = None, False, arg(node, 1, None)
        else:
            dim, keepdim, dtype = arg(node, 1), arg(node, 2, False), arg(node, 3, None)
        if dtype is UNKNOWN:
            out = None
        elif dtype is not None:
            out = SCALAR_TYPE_ENUM.get(dtype) if isinstance(dtype, int) else None
        elif kind == "sum" and (is_int(t.dtype) or is_bool(t.dtype)):
            out = "int64"
        else:
            out = t.dtype
        return [like(t, out, _infer_reduced_shape(t, dim, keepdim))]
    return infer


_REDUCE_SCHEMA = "Tensor self, int[1]? dim=None, bool keepdim=False, ScalarType? dtype=None"
defop("aten::sum", _REDUCE_SCHEMA, _sum, category="reduction",
      infer=_infer_sum_mean("sum"))
defop("aten::mean", _REDUCE_SCHEMA, _mean, category="reduction",
      infer=_infer_sum_mean("mean"))


def _prod(xp, x, *args):
    """``prod(dtype=None)`` over every dim, or ``prod(dim, keepdim=False, dtype=None)``;
    integers and bool multiply in int64 (wrapping, as PyTorch), float16 in float32."""
    dim, keepdim, dtype = _reduction_args(args)
    out = dtype_arg(dtype) or ("int64" if x.dtype.kind in "biu" else str(x.dtype))
    with np.errstate(all="ignore"):
        r = xp.prod(x.astype(compute_dtype(out), copy=False), axis=reduce_axes(x, dim),
                    keepdims=keepdim)
    return xp.asarray(r).astype(out, copy=False)


defop("aten::prod", "Tensor self, int? dim=None, bool keepdim=False, ScalarType? dtype=None",
      _prod, category="reduction", infer=_infer_sum_mean("sum"))


def _var_args(args) -> Tuple[Any, Any, bool]:
    """(dim, correction, keepdim) of var/std: ``(unbiased)``, ``(dim, unbiased, keepdim)`` or
    ``(dim, correction, keepdim)`` (a bool ``unbiased`` is correction 1 or 0)."""
    if args and isinstance(args[0], bool):  # var(x, False): the unbiased overload, all dims
        return None, int(args[0]), False
    dim = args[0] if args else None
    correction = args[1] if len(args) > 1 else None
    keepdim = bool(args[2]) if len(args) > 2 else False
    return dim, 1 if correction is None else correction, keepdim


def _var(name: str):
    def impl(xp, x, *args):
        dim, correction, keepdim = _var_args(args)
        if not is_float(str(x.dtype)):
            raise RuntimeError(f"{name}(): input dtype should be either floating point or "
                               f"complex dtypes. Got {x.dtype} instead.")
        axes = reduce_axes(x, dim)
        count = x.size if axes is None else math.prod(x.shape[a] for a in axes)
        xs = x.astype(compute_dtype(str(x.dtype)), copy=False)
        with np.errstate(all="ignore"):  # two passes: the mean, then the squared deviations
            mean = xp.sum(xs, axis=axes, keepdims=True) / xs.dtype.type(count)
            dev = xs - mean
            ss = xp.sum(dev * dev, axis=axes, keepdims=keepdim)
            res = ss / xs.dtype.type(max(count - correction, 0))
            if name == "std":
                res = xp.sqrt(res)
        return xp.asarray(res).astype(x.dtype, copy=False)
    return impl


def _infer_var(node, types):
    t = tensor_in(types)
    if isinstance(arg(node, 1, None), bool):
        return [like(t, shape=())]
    return [like(t, shape=_infer_reduced_shape(t, arg(node, 1, None), arg(node, 3, False)))]


_VAR_SCHEMA = "Tensor self, int[1]? dim=None, Scalar? correction=None, bool keepdim=False"
defop("aten::var", _VAR_SCHEMA, _var("var"), category="reduction", infer=_infer_var)
defop("aten::std", _VAR_SCHEMA, _var("std"), category="reduction", infer=_infer_var)


def _logsumexp(xp, x, dim, keepdim=False):
    """log(sum(exp(x))) over ``dim``, shifted by the max (an infinite max shifts by 0), as
    PyTorch computes it; integers compute in the default float dtype."""
    out = str(x.dtype) if is_float(str(x.dtype)) else "float32"
    xs = x.astype(compute_dtype(out), copy=False)
    axes = reduce_axes(x, dim)
    if xs.size == 0:
        with np.errstate(all="ignore"):
            return xp.asarray(xp.log(xp.sum(xp.exp(xs), axis=axes, keepdims=keepdim))
                              ).astype(out, copy=False)
    with np.errstate(all="ignore"):
        m = xp.max(xs, axis=axes, keepdims=True)
        m = xp.where(xp.isinf(m), xs.dtype.type(0), m)
        res = xp.log(xp.sum(xp.exp(xs - m), axis=axes, keepdims=True)) + m
    if not keepdim:
        res = xp.squeeze(res, axis=axes) if axes is not None else res.reshape(())
    return xp.asarray(res).astype(out, copy=False)


def _infer_logsumexp(node, types):
    t = tensor_in(types)
    out = t.dtype if t.dtype is None or is_float(t.dtype) else "float32"
    return [like(t, out, _infer_reduced_shape(t, arg(node, 1, []), arg(node, 2, False)))]


defop("aten::logsumexp", "Tensor self, int[1] dim, bool keepdim=False", _logsumexp,
      category="reduction", infer=_infer_logsumexp)


def _extreme(name, fn):
    def impl(xp, x, dim=(), keepdim=False):
        axes = reduce_axes(x, dim)
        if x.size == 0 and (axes is None or any(x.shape[a] == 0 for a in axes)):
            raise RuntimeError(f"{name}(): Expected reduction dim to be specified for "
                               f"input.numel() == 0. Specify the reduction dim with the 'dim' "
                               f"argument.")
        return xp.asarray(fn(xp)(x, axis=axes, keepdims=keepdim))
    return impl


def _infer_extreme(node, types):
    t = tensor_in(types)
    return [like(t, shape=_infer_reduced_shape(t, arg(node, 1, []), arg(node, 2, False)))]


defop("aten::amax", "Tensor self, int[1] dim=[], bool keepdim=False",
      _extreme("amax", lambda xp: xp.max), category="reduction", infer=_infer_extreme)
defop("aten::amin", "Tensor self, int[1] dim=[], bool keepdim=False",
      _extreme("amin", lambda xp: xp.min), category="reduction", infer=_infer_extreme)


def _arg_extreme(xp, x, dim, keepdim, name):
    """Index of the first max/min along ``dim`` (NaN counts as the extreme, as in PyTorch)."""
    find = xp.argmax if name in ("max", "argmax") else xp.argmin
    if dim is None:
        if x.size == 0:
            raise IndexError(f"{name}(): Expected reduction dim to be specified for "
                             f"input.numel() == 0.")
        idx = xp.asarray(find(x.reshape(-1))).astype("int64")
        return xp.reshape(idx, (1,) * x.ndim) if keepdim else idx
    d = wrap_dim(dim, x.ndim)
    if x.ndim == 0:
        return xp.zeros((), dtype="int64")
    if x.shape[d] == 0:
        raise IndexError(f"{name}(): Expected reduction dim {d} to have non-zero size.")
    idx = xp.asarray(find(x, axis=d)).astype("int64")
    return xp.expand_dims(idx, d) if keepdim else idx


def _max_min(name):
    elementwise = (lambda xp: xp.maximum) if name == "max" else (lambda xp: xp.minimum)
    builtin = max if name == "max" else min

    def impl(xp, x, *args):
        if not hasattr(x, "ndim"):               # prim::max/min on Python ints or an int list
            return builtin(x, *args) if args else builtin(x)
        if args and hasattr(args[0], "ndim"):    # max(self, Tensor other): NaN-propagating
            other = args[0]
            dtype = result_type([(str(a.dtype), Priority.DIM if a.ndim else Priority.ZERO_DIM)
                                 for a in (x, other)])
            return xp.asarray(elementwise(xp)(x.astype(dtype), other.astype(dtype)))
        if not args or args[0] is None:          # max(self) -> 0-d
            return _extreme(name, lambda xp: xp.max if name == "max" else xp.min)(xp, x)
        dim, keepdim = args[0], bool(args[1]) if len(args) > 1 else False
        idx = _arg_extreme(xp, x, dim, True, name)
        if x.ndim == 0:
            return x.copy(), idx
        d = wrap_dim(dim, x.ndim)
        values = xp.take_along_axis(x, idx, axis=d)
        if not keepdim:
            values, idx = xp.squeeze(values, d), xp.squeeze(idx, d)
        return values, idx
    return impl


def _infer_max_min(node, types):
    t = tensor_in(types)
    if len(types) >= 2 and isinstance(types[1], TensorType):    # max(self, Tensor other)
        o = types[1]
        if t.shape is None or o.shape is None:
            dtype, shape = (t.dtype if t.dtype == o.dtype else None), None
        else:
            shape = broadcast_shapes(t.shape, o.shape)
            dtype = None if t.dtype is None or o.dtype is None else result_type(
                [(a.dtype, Priority.DIM if a.rank else Priority.ZERO_DIM) for a in (t, o)])
        return [like(t, dtype, shape)]
    if not types or not isinstance(types[0], TensorType):
        return [o.type for o in node.outputs]
    if len(node.inputs) == 1 or arg(node, 1) is None:
        return [like(t, shape=())]
    shape = _infer_reduced_shape(t, arg(node, 1), arg(node, 2, False))
    return [like(t, shape=shape), like(t, "int64", shape)][:max(len(node.outputs), 1)]


def _argmax_like(name):
    def impl(xp, x, dim=None, keepdim=False):
        if x.dtype == np.bool_:
            raise RuntimeError(f"{name}(): does not support bool input")
        return _arg_extreme(xp, x, dim, keepdim, name)
    return impl


def _infer_argmax(node, types):
    t = tensor_in(types)
    return [like(t, "int64", _infer_reduced_shape(t, arg(node, 1, None), arg(node, 2, False)))]


def _binary_form(kind):
    """``max(Tensor, Tensor)`` (max.other) is ``maximum``: fusible as that elementwise op."""
    def overload(node):
        if (len(node.inputs) == 2 and len(node.outputs) == 1
                and all(isinstance(v.type, TensorType) for v in node.inputs)):
            return kind
        return None
    return overload


defop("aten::max", "Tensor self, int? dim=None, bool keepdim=False", _max_min("max"),
      category="reduction", num_outputs=None, infer=_infer_max_min,
      output_count=dim_overload_outputs, elementwise_overload=_binary_form("aten::maximum"))
defop("aten::min", "Tensor self, int? dim=None, bool keepdim=False", _max_min("min"),
      category="reduction", num_outputs=None, infer=_infer_max_min,
      output_count=dim_overload_outputs, elementwise_overload=_binary_form("aten::minimum"))
defop("aten::argmax", "Tensor self, int? dim=None, bool keepdim=False", _argmax_like("argmax"),
      category="reduction", infer=_infer_argmax)
defop("aten::argmin", "Tensor self, int? dim=None, bool keepdim=False", _argmax_like("argmin"),
      category="reduction", infer=_infer_argmax)


def _any_all(name):
    """``any``/``all`` over ``dim`` (None: every dim): bool, or uint8 for a uint8 input as in
    PyTorch; NaN counts as true.  On a list (TorchScript's ``any(bool[])``): a Python bool."""
    def impl(xp, x, dim=None, keepdim=False):
        if isinstance(x, (list, tuple)):
            return (any if name == "any" else all)(bool(v) for v in x)
        axes = reduce_axes(x, dim)
        fn = xp.any if name == "any" else xp.all
        out = xp.asarray(fn(x, axis=axes, keepdims=bool(keepdim)))
        return out.astype("uint8") if x.dtype == np.uint8 else out
    return impl


def _infer_any_all(node, types):
    t = types[0] if types else None
    if not isinstance(t, TensorType):
        return [BOOL]
    out = "uint8" if t.dtype == "uint8" else ("bool" if t.dtype is not None else None)
    return [like(t, out, _infer_reduced_shape(t, arg(node, 1, None), arg(node, 2, False)))]


defop("aten::any", "Tensor self, int[1]? dim=None, bool keepdim=False", _any_all("any"),
      category="reduction", infer=_infer_any_all)
defop("aten::all", "Tensor self, int[1]? dim=None, bool keepdim=False", _any_all("all"),
      category="reduction", infer=_infer_any_all)


def _softmax_impl(log: bool):
    name = "log_softmax" if log else "softmax"

    def impl(xp, x, dim, dtype=None):
        out = dtype_arg(dtype) or str(x.dtype)
        d = wrap_dim(dim, x.ndim)
        if x.size == 0:                   # PyTorch returns empty input before checking dtypes
            return x.astype(out)
        if not is_float(out):
            raise NotImplementedError(f"\"{name}_lastdim_kernel_impl\" not implemented for "
                                      f"'{out}'")
        xs = x.astype(compute_dtype(out))
        if xs.ndim == 0:
            xs = xs.reshape(1)
        with np.errstate(all="ignore"):   # all -inf rows give nan, as in PyTorch
            shifted = xs - xp.max(xs, axis=d, keepdims=True)
            e = xp.exp(shifted)
            total = xp.sum(e, axis=d, keepdims=True)
            # PyTorch's CPU kernels: over the last dim exp(x - max) * (1 / sum), over any
            # other one exp(x - max) / sum (the two differ in the last bit)
            res = (shifted - xp.log(total) if log else
                   e * (1 / total) if d == xs.ndim - 1 else e / total)
        return xp.reshape(res, x.shape).astype(out, copy=False)
    return impl


def _infer_softmax(node, types):
    t, dtype = tensor_in(types), arg(node, 2, None)
    out = (t.dtype if dtype is None else
           SCALAR_TYPE_ENUM.get(dtype) if isinstance(dtype, int) else None)
    return [like(t, out)]


defop("aten::softmax", "Tensor self, int dim, ScalarType? dtype=None", _softmax_impl(False),
      category="reduction", infer=_infer_softmax)
defop("aten::log_softmax", "Tensor self, int dim, ScalarType? dtype=None", _softmax_impl(True),
      category="reduction", infer=_infer_softmax)


def _private_softmax(log: bool):
    """``aten::_softmax`` / ``aten::_log_softmax(self, dim, half_to_float)``, what
    ``F.softmax`` calls underneath: half_to_float (a float16 input, a float32 result) exists
    on CUDA only, as in PyTorch."""
    impl = _softmax_impl(log)

    def private(xp, x, dim, half_to_float):
        if not half_to_float:
            return impl(xp, x, dim)
        if xp is np:
            raise RuntimeError("softmax with half to float conversion is not supported on CPU")
        if str(x.dtype) != "float16":
            raise RuntimeError("conversion is supported for Half type only")
        return impl(xp, x, dim, "float32")
    return private


def _infer_private_softmax(node, types):
    t = tensor_in(types)
    return [like(t, "float32" if arg(node, 2, False) is True and t.dtype == "float16"
                 else t.dtype)]


defop("aten::_softmax", "Tensor self, int dim, bool half_to_float", _private_softmax(False),
      category="reduction", infer=_infer_private_softmax)
defop("aten::_log_softmax", "Tensor self, int dim, bool half_to_float", _private_softmax(True),
      category="reduction", infer=_infer_private_softmax)


def _var_mean(name: str):
    """``std_mean`` / ``var_mean``: (std or var, mean) over the same dims."""
    spread = _var(name)

    def impl(xp, x, *args):
        dim, _, keepdim = _var_args(args)
        return spread(xp, x, *args), _mean(xp, x, dim, keepdim)
    return impl


def _infer_var_mean(node, types):
    (t,) = _infer_var(node, types)
    return [t, t]


defop("aten::var_mean", _VAR_SCHEMA, _var_mean("var"), category="reduction", num_outputs=2,
      infer=_infer_var_mean)
defop("aten::std_mean", _VAR_SCHEMA, _var_mean("std"), category="reduction", num_outputs=2,
      infer=_infer_var_mean)
