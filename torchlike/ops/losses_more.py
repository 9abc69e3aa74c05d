"""The rest of ``torch.nn.functional``'s losses, as the graphs of ``F.kl_div`` & co. end in them::

    %r : int = prim::Constant[value=1]()                  # reduction: 0 none, 1 mean, 2 sum
    %l : Tensor = aten::kl_div(%input, %target, %r, %log_target)
    %m : Tensor = aten::multi_margin_loss(%input, %target, %p, %margin, %weight, %r)

``aten::kl_div``, ``margin_ranking_loss``, ``hinge_embedding_loss``, ``soft_margin_loss``,
``cosine_embedding_loss``, ``multi_margin_loss``, ``multilabel_margin_loss``,
``poisson_nll_loss`` and ``triplet_margin_loss``, with ATen's (CPU) formulas, dtypes, shapes and
errors.  Pointwise steps run in the result's compute dtype (float32 for float16), as ATen's
kernels do (so ``exp`` overflows where PyTorch's does); every sum PyTorch accumulates (the
reduction, the class sums of the margin losses, the norms and dot products of the distance
losses) runs in float64, and the result is rounded once.  The functions around them
(``F.multilabel_soft_margin_loss``, ``F.local_response_norm``, ``F.lp_pool2d``) are composites
of ops registered elsewhere.

"""
from __future__ import annotations

import math

import numpy as np

from ..ir.types import TensorType
from .dtypes import DEFAULT_FLOAT, Priority, operand_info, result_type, to_float
from .losses import _reduce
from .registry import defop
from .tensor_common import (
    UNKNOWN,
    arg,
    broadcast_sizes,
    compute_dtype,
    like,
    not_implemented,
    scalar_name,
    tensor_in,
)

F64 = np.float64
_WRAPPED_FLOAT = (DEFAULT_FLOAT, Priority.WRAPPED)   # a Python float operand (margin, eps)


# -- helpers ---------------------------------------------------------------------------------------

def _result(*arrays, wrapped_float=False) -> str:
    """``torch.result_type`` of the tensors (and a Python float when ``wrapped_float``)."""
    infos = [operand_info(a) for a in arrays if a is not None]
    return result_type(infos + ([_WRAPPED_FLOAT] if wrapped_float else []))


def _finish(xp, loss, reduction, out):
    """Reduce ``loss`` (none / mean / sum) in float64 and round once to ``out``."""
    return _reduce(xp, xp.asarray(loss).astype(F64, copy=False), reduction, out)


def _check_float_kernel(x, kernel):
    """ATen's CPU kernels of the margin losses dispatch on float32 and float64 only."""
    if str(x.dtype) not in ("float32", "float64"):
        raise not_implemented(kernel, x.dtype)


def _check_dtype(t, dtype):
    if str(t.dtype) != dtype:
        raise RuntimeError(f"expected scalar type {scalar_name(dtype)} but found "
                           f"{scalar_name(t.dtype)}")


def _shape_text(shape) -> str:
    return "[" + ", ".join(str(d) for d in shape) + "]"


# -- pointwise losses ------------------------------------------------------------------------------

def _kl_div(xp, x, target, reduction=1, log_target=False):
    """``target * (log target - input)`` (``exp(target) * (target - input)`` for a log target),
    0 where ``target`` is 0."""
    if x.dtype.kind not in "fc" or target.dtype.kind not in "fc":
        raise RuntimeError("kl_div: Integral inputs not supported.")
    out = _result(x, target)
    c = compute_dtype(out)
    a, t = x.astype(c, copy=False), target.astype(c, copy=False)
    with np.errstate(all="ignore"):
        if log_target:
            loss = xp.exp(t) * (t - a)
        else:
            xlogy = xp.where(t == 0, xp.zeros((), c), t * xp.log(t))
            loss = xlogy - t * a
    return _finish(xp, loss, reduction, out)


def _margin_ranking(xp, x1, x2, target, margin=0.0, reduction=1):
    """``max(0, -target * (x1 - x2) + margin)``."""
    if target.dtype == np.bool_:
        raise RuntimeError("Negation, the `-` operator, on a bool tensor is not supported. If you "
                           "are trying to invert a mask, use the `~` or `logical_not()` operator "
                           "instead.")
    out = _result(x1, x2, target, wrapped_float=True)
    c = compute_dtype(out)
    a, b, t = (v.astype(c, copy=False) for v in (x1, x2, target))
    broadcast_sizes(a.shape, b.shape, t.shape)
    with np.errstate(invalid="ignore"):
        loss = xp.maximum(-t * (a - b) + np.dtype(c).type(margin), 0)
    return _finish(xp, loss, reduction, out)


def _hinge_embedding(xp, x, target, margin=1.0, reduction=1):
    """``x`` where ``target`` is not -1, plus ``max(0, margin - x)`` where it is not 1."""
    out = str(x.dtype)
    if x.dtype.kind not in "fc" and int(reduction) == 1:
        raise RuntimeError("mean(): could not infer output dtype. Input dtype must be either a "
                           f"floating point or complex dtype. Got: {scalar_name(out)}")
    c = compute_dtype(out)
    a = x.astype(c, copy=False)
    broadcast_sizes(a.shape, target.shape)
    m = np.dtype(c).type(margin)            # ATen fills a tensor of x's dtype with the margin
    with np.errstate(invalid="ignore"):
        clamp = xp.maximum(m - a, 0).astype(c, copy=False)
    zero = xp.zeros((), c)
    loss = xp.where(target != 1, clamp, zero) + xp.where(target != -1, a, zero)
    if x.dtype.kind not in "fc":
        return _reduce(xp, loss, reduction, out)   # integer sums stay exact
    return _finish(xp, loss, reduction, out)


def _soft_margin(xp, x, target, reduction=1):
    """``log(1 + exp(-target * x))``, computed in place in an output of ``x``'s dtype and shape."""
    if x.dtype.kind != "f":
        raise RuntimeError(f"result type Float can't be cast to the desired output type "
                           f"{scalar_name(x.dtype)}")
    shape = broadcast_sizes(x.shape, target.shape)
    if shape != x.shape:
        raise RuntimeError(f"output with shape {_shape_text(x.shape)} doesn't match the "
                           f"broadcast shape {_shape_text(shape)}")
    c = compute_dtype(str(x.dtype))
    with np.errstate(over="ignore"):
        loss = xp.log1p(xp.exp(-x.astype(c, copy=False) * target.astype(c, copy=False)))
    return _finish(xp, loss, reduction, x.dtype)


def _poisson_nll(xp, x, target, log_input=True, full=False, eps=1e-8, reduction=1):
    """``exp(x) - target * x`` (log input) or ``x - target * log(x + eps)``, plus Stirling's
    ``target log target - target + log(2 pi target) / 2`` where ``target > 1`` when ``full``."""
    out = to_float(_result(x, target))
    c = compute_dtype(out)
    a, t = x.astype(c, copy=False), target.astype(c, copy=False)
    with np.errstate(all="ignore"):
        if log_input:
            loss = xp.exp(a) - t * a
        else:
            loss = a - t * xp.log(a + np.dtype(c).type(eps))
        if full:
            stirling = t * xp.log(t) - t + np.dtype(c).type(0.5) * xp.log(
                np.dtype(c).type(2 * math.pi) * t)
            loss = loss + xp.where(t <= 1, xp.zeros((), c), stirling)
    return _finish(xp, loss, reduction, out)


# -- losses over a class or feature axis -----------------------------------------------------------

def _cosine_embedding(xp, x1, x2, target, margin=0.0, reduction=1):
    """``1 - cos(x1, x2)`` where ``target`` is 1, ``max(0, cos - margin)`` where it is -1, else 0
    (cos over the last dim, with 1e-12 added to each squared norm)."""
    nt = target.ndim
    if nt not in (0, 1):
        raise RuntimeError("0D or 1D target tensor expected, multi-target not supported")
    if x1.ndim != nt + 1 or x2.ndim != nt + 1:
        raise RuntimeError(f"{nt}D target tensor expects {nt + 1}D input tensors, but found "
                           f"inputs with sizes {_shape_text(x1.shape)} and "
                           f"{_shape_text(x2.shape)}.")
    out = _result(x1, x2, wrapped_float=True)
    broadcast_sizes(x1.shape, x2.shape)
    a, b = x1.astype(F64), x2.astype(F64)
    with np.errstate(all="ignore"):
        dot = xp.sum(a * b, axis=nt)
        denom = xp.sqrt((xp.sum(a * a, axis=nt) + 1e-12) * (xp.sum(b * b, axis=nt) + 1e-12))
        cos = dot / denom
        broadcast_sizes(cos.shape, target.shape)
        loss = xp.where(target == 1, 1 - cos, 0) + \
            xp.where(target == -1, xp.maximum(cos - margin, 0), 0)
    return _finish(xp, loss, reduction, out)


def _pairwise(xp, u, v, p, eps):
    """ATen's pairwise_distance: the ``p``-norm of ``u - v + eps`` over the last dim."""
    d = xp.abs(u - v + eps)
    if d.ndim == 0:
        d = d.reshape(1)
    with np.errstate(all="ignore"):
        if p == math.inf:
            return xp.max(d, axis=-1)
        if p == -math.inf:
            return xp.min(d, axis=-1)
        if p == 0:
            return xp.sum(d != 0, axis=-1).astype(F64)
        return xp.sum(d ** p, axis=-1) ** (1.0 / p)


def _triplet_margin(xp, anchor, positive, negative, margin=1.0, p=2.0, eps=1e-6, swap=False,
                    reduction=1):
    """``max(0, margin + d(anchor, positive) - d(anchor, negative))``, with ``d`` the
    pairwise distance (``swap``: the negative's distance is the smaller of its distances to the
    anchor and to the positive)."""
    dims = (anchor.ndim, positive.ndim, negative.ndim)
    if len(set(dims)) != 1:
        raise RuntimeError("The anchor, positive, and negative tensors are expected to have the "
                           "same number of dimensions, but got: anchor {}D, positive {}D, and "
                           "negative {}D inputs".format(*dims))
    broadcast_sizes(anchor.shape, positive.shape, negative.shape)
    out = to_float(_result(anchor, positive, negative))
    c = compute_dtype(out)
    a, pos, neg = (v.astype(c, copy=False).astype(F64) for v in (anchor, positive, negative))
    p = float(p)
    d_pos, d_neg = _pairwise(xp, a, pos, p, eps), _pairwise(xp, a, neg, p, eps)
    if swap:
        d_neg = xp.minimum(d_neg, _pairwise(xp, pos, neg, p, eps))
    with np.errstate(invalid="ignore"):
        loss = xp.maximum(margin + d_pos - d_neg, 0)
    return _finish(xp, loss, reduction, out)


def _frames(x):
    """(frames, classes) of a margin loss's input: (C,), (N, C) or a 0-d input (one class)."""
    nd = x.ndim
    if not ((nd == 2 and x.shape[1] != 0) or (nd == 1 and x.shape[0] != 0) or nd == 0):
        raise RuntimeError("Expected non-empty vector or matrix with optional 0-dim batch size, "
                           f"but got: {_shape_text(x.shape)}")
    if nd <= 1:
        return 1, 1 if nd == 0 else x.shape[0]
    return x.shape


def _frame_reduce(xp, per_frame, reduction, out, keep_frames):
    """A margin loss's per-frame losses (float64) reduced as ATen's CPU kernels do: a
    (frames,) result for ``none`` when ``keep_frames``, else the sum (mean: over frames)."""
    mode = int(reduction)
    if mode not in (0, 1, 2):
        raise RuntimeError(f"{reduction} is not a valid value for reduction")
    if mode == 0 and keep_frames:
        return per_frame.astype(out)
    total = xp.sum(per_frame)
    if mode == 1:
        total = total / per_frame.size if per_frame.size else np.nan
    return xp.asarray(total).astype(out)


def _multi_margin(xp, x, target, p=1, margin=1, weight=None, reduction=1):
    """Per frame: ``sum over classes d != y of w[y] * max(0, margin - x[y] + x[d]) ** p`` / C."""
    p = int(p)
    if p not in (1, 2):
        raise RuntimeError("only p == 1 and p == 2 supported")
    nframe, dim = _frames(x)
    if not (target.ndim <= 1 and target.size == nframe):
        raise RuntimeError("multi_margin_loss: target tensor should be 1-D with size equal to the "
                           "number of input samples (batch size). Expected target size "
                           f"[{nframe}], but got {_shape_text(target.shape)}. Input has shape "
                           f"{_shape_text(x.shape)}.")
    if weight is not None and not (weight.ndim <= 1 and weight.size == dim):
        raise RuntimeError(f"inconsistent weight size, expected {dim} but got "
                           f"{_shape_text(weight.shape)}")
    out = str(x.dtype)
    keep = target.ndim > 0
    if x.size == 0:
        return _frame_reduce(xp, xp.zeros(0, F64), reduction, out, keep)
    _check_float_kernel(x, "multi_margin_loss_cpu_kernel")
    _check_dtype(target, "int64")
    if weight is not None:
        _check_dtype(weight, out)
    y = target.reshape(nframe)
    if xp.any((y < 0) | (y >= dim)):
        raise RuntimeError("target out of range")
    v = x.reshape(nframe, dim).astype(F64)
    picked = xp.take_along_axis(v, y[:, None], axis=1)
    z = np.dtype(out).type(margin) - picked + v
    h = z if p == 1 else z * z
    if weight is not None:
        h = h * weight.reshape(dim).astype(F64)[y][:, None]
    keep_mask = (z > 0) & (xp.arange(dim)[None, :] != y[:, None])
    per_frame = xp.sum(xp.where(keep_mask, h, 0), axis=1) / dim
    return _frame_reduce(xp, per_frame, reduction, out, keep)


def _multilabel_margin(xp, x, target, reduction=1):
    """Per frame, over the target classes ``j`` (``target``'s entries before its first -1) and
    the other classes ``d``: ``sum max(0, 1 - x[j] + x[d]) / C``."""
    nframe, dim = _frames(x)
    ok = (target.ndim <= 1 and target.size == dim) if x.ndim <= 1 else \
        (target.ndim == 2 and tuple(target.shape) == (nframe, dim))
    if not ok:
        raise RuntimeError(f"inconsistent target size: {_shape_text(target.shape)} for input of "
                           f"size: {_shape_text(x.shape)}")
    out = str(x.dtype)
    keep = target.ndim > 1
    if x.size == 0:
        return _frame_reduce(xp, xp.zeros(0, F64), reduction, out, keep)
    if int(xp.min(target)) < -1 or int(xp.max(target)) >= dim:
        raise RuntimeError("argument #2 'target' is out of range")
    _check_float_kernel(x, "multilabel_margin_loss_forward_out_frame")
    _check_dtype(target, "int64")
    v = x.reshape(nframe, dim).astype(F64)
    t = target.reshape(nframe, dim)
    valid = xp.cumprod(t >= 0, axis=1).astype(bool)    # the entries before the first -1
    safe = xp.where(valid, t, 0)
    is_target = xp.any((safe[:, :, None] == xp.arange(dim)) & valid[:, :, None], axis=1)
    z = 1 - xp.take_along_axis(v, safe, axis=1)[:, :, None] + v[:, None, :]
    mask = valid[:, :, None] & ~is_target[:, None, :] & (z > 0)
    per_frame = xp.sum(xp.where(mask, z, 0), axis=(1, 2)) / dim
    return _frame_reduce(xp, per_frame, reduction, out, keep)


# -- type inference --------------------------------------------------------------------------------

def _infer_dtype(ts, wrapped_float=False):
    """The promoted dtype of tensor types (None when a dtype, or a needed rank, is unknown)."""
    dtypes = [t.dtype for t in ts]
    if any(d is None for d in dtypes):
        return None
    if len(set(dtypes)) == 1 and not wrapped_float:
        return dtypes[0]
    if any(t.shape is None for t in ts):
        return None
    infos = [(t.dtype, Priority.DIM if t.shape else Priority.ZERO_DIM) for t in ts]
    return result_type(infos + ([_WRAPPED_FLOAT] if wrapped_float else []))


def _infer_broadcast(ts):
    """The broadcast shape of tensor types (None when a rank is unknown or sizes clash)."""
    if any(t.shape is None for t in ts):
        return None
    n = max(len(t.shape) for t in ts)
    out = []
    for i in range(n):
        dims = {t.shape[len(t.shape) - n + i] for t in ts if len(t.shape) - n + i >= 0} - {1}
        out.append(None if None in dims or len(dims) > 1 else (dims.pop() if dims else 1))
    return tuple(out)


def _infer(tensors, red_index, dtype_of, shape_of):
    """An ``infer`` rule: ``dtype_of(types)``, and ``shape_of(types)`` when the reduction is
    none (0-d when it is mean or sum, unknown when the reduction is not a constant)."""
    def rule(node, types):
        ts = [tensor_in(types, i) for i in tensors]
        first = ts[0]
        dtype = dtype_of(ts)
        red = arg(node, red_index, 1)
        if red is UNKNOWN:
            shape = None
        elif red == 0:
            shape = shape_of(ts)
        else:
            shape = ()
        return [like(first, dtype=dtype, shape=shape)]
    return rule


def _float_dtype(wrapped=False):
    def rule(ts):
        d = _infer_dtype(ts, wrapped)
        return None if d is None else to_float(d)
    return rule


def _first_dtype(ts):
    return ts[0].dtype


def _cosine_shape(ts):
    x1, x2, t = ts
    if t.shape is None or len(t.shape) not in (0, 1):
        return None
    rows = _infer_broadcast([x1, x2])
    if rows is None or len(rows) != len(t.shape) + 1:
        return None
    return _infer_broadcast([TensorType(shape=rows[:-1]), t])


def _triplet_shape(ts):
    s = _infer_broadcast(ts)
    return None if s is None else s[:-1]


def _frames_shape(ts):
    """multi_margin_loss's ``none`` result: (N,) for a target with dims, else 0-d."""
    x, t = ts[0], ts[1]
    if t.shape is None or x.shape is None:
        return None
    if not t.shape:
        return ()
    return (x.shape[0],) if len(x.shape) == 2 else (1,)


def _multilabel_shape(ts):
    x, t = ts
    if t.shape is None or x.shape is None:
        return None
    return (x.shape[0],) if len(t.shape) > 1 else ()


# -- registration ----------------------------------------------------------------------------------

defop("aten::kl_div", "Tensor self, Tensor target, int reduction=1, bool log_target=False",
      _kl_div, category="reduction", infer=_infer((0, 1), 2, _infer_dtype, _infer_broadcast))
defop("aten::margin_ranking_loss", "Tensor input1, Tensor input2, Tensor target, "
      "float margin=0.0, int reduction=1", _margin_ranking, category="reduction",
      infer=_infer((0, 1, 2), 4, lambda ts: _infer_dtype(ts, True), _infer_broadcast))
defop("aten::hinge_embedding_loss", "Tensor self, Tensor target, float margin=1.0, "
      "int reduction=1", _hinge_embedding, category="reduction",
      infer=_infer((0, 1), 3, _first_dtype, _infer_broadcast))
defop("aten::soft_margin_loss", "Tensor self, Tensor target, int reduction=1", _soft_margin,
      category="reduction", infer=_infer((0, 1), 2, _first_dtype, lambda ts: ts[0].shape))
defop("aten::cosine_embedding_loss", "Tensor input1, Tensor input2, Tensor target, "
      "float margin=0.0, int reduction=1", _cosine_embedding, category="reduction",
      infer=_infer((0, 1, 2), 4, lambda ts: _infer_dtype(ts[:2], True), _cosine_shape))
defop("aten::multi_margin_loss", "Tensor self, Tensor target, Scalar p=1, Scalar margin=1, "
      "Tensor? weight=None, int reduction=1", _multi_margin, category="reduction",
      infer=_infer((0, 1), 5, _first_dtype, _frames_shape))
defop("aten::multilabel_margin_loss", "Tensor self, Tensor target, int reduction=1",
      _multilabel_margin, category="reduction",
      infer=_infer((0, 1), 2, _first_dtype, _multilabel_shape))
defop("aten::poisson_nll_loss", "Tensor input, Tensor target, bool log_input=True, "
      "bool full=False, float eps=1e-08, int reduction=1", _poisson_nll, category="reduction",
      infer=_infer((0, 1), 5, _float_dtype(), _infer_broadcast))
defop("aten::triplet_margin_loss", "Tensor anchor, Tensor positive, Tensor negative, "
      "float margin=1.0, float p=2.0, float eps=1e-06, bool swap=False, int reduction=1",
      _triplet_margin, category="reduction",
      infer=_infer((0, 1, 2), 7, _float_dtype(), _triplet_shape))
