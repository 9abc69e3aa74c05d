"""Loss functions as PyTorch's tracer records them (``F.mse_loss`` -> ``aten::mse_loss``)::

    %r : int = prim::Constant[value=1]()                  # reduction: 0 none, 1 mean, 2 sum
    %loss : Tensor = aten::mse_loss(%input, %target, %r)
    %ce : Tensor = aten::cross_entropy_loss(%logits, %labels, %none, %r, %ignore, %smoothing)

Interpreted (a reduction closes each), in float64-free numpy with PyTorch's formulas: inputs
broadcast against targets, half precision computes in float32, ``mean`` of ``cross_entropy`` /
``nll_loss`` divides by the weights of the targets that are not ``ignore_index``.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import TensorType
from .dtypes import Priority, can_cast, is_float, promote_types, result_type
from .registry import defop, get
from .tensor_common import compute_dtype, scalar_name, tensor_in

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduce(xp, loss, reduction, out_dtype):
    mode = _REDUCTIONS.get(int(reduction))
    if mode is None:
        raise RuntimeError(f"{reduction} is not a valid value for reduction")
    if mode == "mean":
        with np.errstate(all="ignore"):  # an empty loss is nan, as in PyTorch
            loss = xp.mean(loss) if loss.size else xp.asarray(np.nan, loss.dtype)
    elif mode == "sum":
        loss = xp.sum(loss)
    return xp.asarray(loss).astype(out_dtype, copy=False)


def _float_pair(xp, x, t, name):
    if x.dtype.kind != "f" or t.dtype.kind != "f":
        raise RuntimeError(f"{name}: expected floating point input and target, got {x.dtype} "
                           f"and {t.dtype}")
    out = np.result_type(x.dtype, t.dtype)
    c = compute_dtype(str(out))
    return x.astype(c, copy=False), t.astype(c, copy=False), out


def _common(x, t) -> str:
    return result_type([(str(v.dtype), Priority.ZERO_DIM if v.ndim == 0 else Priority.DIM)
                        for v in (x, t)])


def _promoted_pair(xp, x, t, kernel, out=None):
    """ATen's pointwise loss kernels: a TensorIterator over (x, t) computing in their common
    dtype (an int32 input against a float32 target is float32), dispatched on floating types
    only ("mse_cpu" not implemented for 'Int'); ``out`` (huber's, preallocated like the input)
    must be castable from it.  Returns both operands in the compute dtype and the result's."""
    common = _common(x, t)
    if out is not None and not can_cast(common, out):
        raise RuntimeError(f"result type {scalar_name(common)} can't be cast to the desired "
                           f"output type {scalar_name(out)}")
    if not is_float(common):
        device = "cpu" if xp is np else "cuda"
        raise NotImplementedError(f"\"{kernel}_{device}\" not implemented for "
                                  f"'{scalar_name(common)}'")
    c = compute_dtype(common)
    return x.astype(c, copy=False), t.astype(c, copy=False), out or common


def _mse(xp, x, t, reduction=1):
    a, b, out = _promoted_pair(xp, x, t, "mse")
    return _reduce(xp, _stored((a - b) ** 2, out), reduction, out)


def _l1(xp, x, t, reduction=1):
    """ATen's composite ``(x - t).abs()``, through the registry's sub and abs (their promotion,
    float16 rounding and refusal of bool operands), then the reduction: integer losses stay
    integers, their mean refused as PyTorch's mean refuses it."""
    loss = get("aten::abs").impl(xp, get("aten::sub").impl(xp, x, t))
    common = str(loss.dtype)
    if is_float(common):
        return _reduce(xp, loss, reduction, common)
    if _REDUCTIONS.get(int(reduction)) == "mean":
        raise RuntimeError(f"mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {scalar_name(common)}")
    return _reduce(xp, loss, reduction, "int64" if int(reduction) == 2 else common)


def _smooth_l1(xp, x, t, reduction=1, beta=1.0):
    a, b, out = _promoted_pair(xp, x, t, "smooth_l1")
    d = xp.abs(a - b)
    loss = d if beta == 0 else xp.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(xp, _stored(loss, out), reduction, out)


def _huber(xp, x, t, reduction=1, delta=1.0):
    a, b, out = _promoted_pair(xp, x, t, "huber", out=str(x.dtype))
    d = xp.abs(a - b)
    loss = xp.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta))
    return _reduce(xp, _stored(loss, out), reduction, out)


def _stored(loss, out: str):
    """The elementwise loss as ATen stores it before the reduction: in ``out`` (a float16 loss
    rounded per element, then summed in float32)."""
    return loss.astype(out) if out != str(loss.dtype) and out in ("float16", "float32") else loss


def _log_softmax(xp, x, axis):
    m = xp.max(x, axis=axis, keepdims=True)
    m = xp.where(xp.isfinite(m), m, 0)
    z = x - m
    return z - xp.log(xp.sum(xp.exp(z), axis=axis, keepdims=True))


def _class_axis(x):
    return 0 if x.ndim == 1 else 1


def _nll_from_logp(xp, logp, target, weight, reduction, ignore_index, out):
    """PyTorch's nll_loss on log-probabilities ``logp`` (class axis 1, or 0 when 1-D)."""
    axis = _class_axis(logp)
    n_classes = logp.shape[axis]
    if target.dtype.kind not in "iu":
        raise RuntimeError(f"expected a target of class indices (int64), got {target.dtype}")
    valid = target != ignore_index
    safe = xp.where(valid, target, 0)
    if xp.any((safe < 0) | (safe >= n_classes)):
        raise RuntimeError(f"Target {int(safe[(safe < 0) | (safe >= n_classes)].ravel()[0])} is "
                           f"out of bounds (classes: {n_classes})")
    picked = xp.take_along_axis(logp, xp.expand_dims(safe, axis), axis=axis).squeeze(axis)
    w = xp.ones(n_classes, logp.dtype) if weight is None else weight.astype(logp.dtype)
    wt = xp.where(valid, w[safe], 0).astype(logp.dtype)
    loss = -picked * wt
    mode = _REDUCTIONS.get(int(reduction))
    if mode == "mean":
        with np.errstate(all="ignore"):
            return xp.asarray(xp.sum(loss) / xp.sum(wt)).astype(out)
    return _reduce(xp, loss, reduction, out)


def _nll(xp, x, target, weight=None, reduction=1, ignore_index=-100):
    out = x.dtype
    return _nll_from_logp(xp, x.astype(compute_dtype(str(out)), copy=False), target, weight,
                          reduction, ignore_index, out)


def _cross_entropy(xp, x, target, weight=None, reduction=1, ignore_index=-100,
                   label_smoothing=0.0):
    if x.dtype.kind != "f":
        raise RuntimeError(f"cross_entropy: expected floating point logits, got {x.dtype}")
    out = x.dtype
    axis = _class_axis(x)
    logp = _log_softmax(xp, x.astype(compute_dtype(str(out)), copy=False), axis)
    n_classes = x.shape[axis]
    if target.dtype.kind == "f":  # class probabilities
        if target.shape != x.shape:
            raise RuntimeError("cross_entropy: probability targets must have the input's shape")
        p = target.astype(logp.dtype)
        if label_smoothing:
            p = p * (1 - label_smoothing) + label_smoothing / n_classes
        w = 1 if weight is None else xp.expand_dims(weight.astype(logp.dtype),
                                                     tuple(i for i in range(x.ndim) if i != axis))
        loss = -xp.sum(logp * p * w, axis=axis)
        if _REDUCTIONS.get(int(reduction)) == "mean":
            return xp.asarray(xp.sum(loss) / max(loss.size, 1)).astype(out)
        return _reduce(xp, loss, reduction, out)
    nll = _nll_from_logp(xp, logp, target, weight, reduction, ignore_index, out)
    if not label_smoothing:
        return nll
    if weight is not None:
        raise RuntimeError("cross_entropy with both label_smoothing and weight is not "
                           "supported by torchlike (PyTorch weights the smoothing term per class)")
    valid = target != ignore_index
    smooth = -xp.sum(logp, axis=axis) / n_classes
    smooth = xp.where(valid, smooth, 0)
    mode = _REDUCTIONS.get(int(reduction))
    if mode == "mean":
        smooth = xp.sum(smooth) / xp.sum(valid)
    elif mode == "sum":
        smooth = xp.sum(smooth)
    return xp.asarray((1 - label_smoothing) * nll + label_smoothing * smooth).astype(out)


def _bce(xp, x, t, weight=None, reduction=1):
    a, b, out = _float_pair(xp, x, t, "binary_cross_entropy")
    if xp.any((a < 0) | (a > 1)):
        raise RuntimeError("all elements of input should be between 0 and 1")
    with np.errstate(divide="ignore"):
        loss = -(b * xp.maximum(xp.log(a), -100) + (1 - b) * xp.maximum(xp.log1p(-a), -100))
    if weight is not None:
        loss = loss * weight.astype(loss.dtype)
    return _reduce(xp, loss, reduction, out)


def _bce_logits(xp, x, t, weight=None, pos_weight=None, reduction=1):
    a, b, out = _float_pair(xp, x, t, "binary_cross_entropy_with_logits")
    log_sig = -xp.logaddexp(0, -a)       # log sigmoid(a)
    log_1m = -xp.logaddexp(0, a)         # log (1 - sigmoid(a))
    pw = 1 if pos_weight is None else pos_weight.astype(a.dtype)
    loss = -(pw * b * log_sig + (1 - b) * log_1m)
    if weight is not None:
        loss = loss * weight.astype(loss.dtype)
    return _reduce(xp, loss, reduction, out)


def _infer_loss(node, types):
    """The input's dtype (huber's, and a guess where the target's is unknown), else the two
    operands' common dtype; 0-d unless reduction is none."""
    t = tensor_in(types)
    red = node.inputs[2].constant_value() if len(node.inputs) > 2 else 1
    dtype = t.dtype if isinstance(t, TensorType) else None
    u = types[1] if len(types) > 1 else None
    if node.kind != "aten::huber_loss" and dtype is not None and isinstance(u, TensorType) \
            and u.dtype is not None:
        dtype = promote_types(dtype, u.dtype)
    return [TensorType(dtype) if red == 0 else TensorType(dtype, ())]


_PAIR = "Tensor self, Tensor target, int reduction=1"
defop("aten::mse_loss", _PAIR, _mse, category="reduction", infer=_infer_loss)
defop("aten::l1_loss", _PAIR, _l1, category="reduction", infer=_infer_loss)
defop("aten::smooth_l1_loss", _PAIR + ", float beta=1.0", _smooth_l1, category="reduction",
      infer=_infer_loss)
defop("aten::huber_loss", _PAIR + ", float delta=1.0", _huber, category="reduction",
      infer=_infer_loss)
defop("aten::nll_loss", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
      "int ignore_index=-100", _nll, category="reduction")
defop("aten::cross_entropy_loss", "Tensor self, Tensor target, Tensor? weight=None, "
      "int reduction=1, int ignore_index=-100, float label_smoothing=0.0", _cross_entropy,
      category="reduction")
defop("aten::binary_cross_entropy", "Tensor self, Tensor target, Tensor? weight=None, "
      "int reduction=1", _bce, category="reduction")
defop("aten::binary_cross_entropy_with_logits", "Tensor self, Tensor target, "
      "Tensor? weight=None, Tensor? pos_weight=None, int reduction=1", _bce_logits,
      category="reduction")
# nll_loss_nd: nll_loss for any number of spatial dims, what F.nll_loss records
defop("aten::nll_loss_nd", "Tensor self, Tensor target, Tensor? weight=None, int reduction=1, "
      "int ignore_index=-100", _nll, category="reduction")
