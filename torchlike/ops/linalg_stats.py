"""Statistics, integration and the remaining tensor ops of the linear-algebra batch, interpreted
(numpy or cupy) with PyTorch's dtypes, shapes and errors (the checks and helpers are
``linalg_more.py``'s)::

    %c : Tensor = aten::cov(%x, %correction, %fweights, %aweights)
    %y : Tensor = aten::trapezoid(%y, %x_or_dx, %dim)           # trapezoid.x / trapezoid.dx
    %b : Tensor = aten::bilinear(%x1, %x2, %weight, %bias)       # F.bilinear

* ``cov`` (ATen's weighting and normalization; integers give float32), ``corrcoef``;
* ``trapezoid`` / ``trapz`` / ``cumulative_trapezoid``: the ``.x`` and ``.dx`` overloads print
  alike and are told apart by the type of the second argument (a tensor x or a number dx);
* ``vander`` (decreasing powers unless ``increasing``; integers give int64), ``linalg_vander``
  (increasing, batched), ``renorm``, ``bilinear``.
"""
from __future__ import annotations

import warnings

import numpy as np

from .dtypes import promote_types
from .linalg import _vector_norm
from .linalg_more import _TYPEMETA, _as, _broadcast, _floating, _require, _size
from .registry import defop
from .tensor_common import (
    compute_dtype,
    infer_same,
    like,
    not_implemented,
    scalar_name,
    tensor_in,
    wrap_dim,
)


def _cov(xp, x, correction=1, fweights=None, aweights=None):
    """ATen's steps: weights w = fweights * aweights, the weighted mean, the normalization
    ``sum(w) - correction * sum(w * aweights) / sum(w)`` clamped at 0 (with a warning); every
    size-1 dim squeezed."""
    _require(x.ndim <= 2, f"cov(): expected input to have two or fewer dimensions but got an "
             f"input with {x.ndim} dimensions")
    _require(x.dtype != np.bool_, "cov(): bool dtype is not supported for input")
    obs = x.reshape(1, -1) if x.ndim < 2 else x
    n, dt = obs.shape[1], str(x.dtype)
    for name, t, kinds, kind in (("fweights", fweights, "iu", "integral"),
                                 ("aweights", aweights, "f", "floating point")):
        if t is None:
            continue
        _require(t.ndim <= 1, f"cov(): expected {name} to have one or fewer dimensions but got "
                 f"{name} with {t.ndim} dimensions")
        _require(t.dtype.kind in kinds, f"cov(): expected {name} to have {kind} dtype but got "
                 f"{name} with {scalar_name(t.dtype)} dtype")
        _require(t.size == n, f"cov(): expected {name} to have the same numel as there are "
                 f"observations in the input but got {t.size} != {n}")
        _require(n == 0 or not bool((t < 0).any()), f"cov(): {name} cannot be negative")
        dt = promote_types(dt, str(t.dtype))
    out = dt if dt.startswith("float") else "float32"
    c = compute_dtype(out)
    aw = None if aweights is None else aweights.reshape(-1)
    w = fweights if fweights is None else fweights.reshape(-1)
    if aw is not None:  # in their promoted dtype: int64 * float32 is float32, as ATen's
        w = aw if w is None else _promoted(w, aw)[0] * _promoted(w, aw)[1]
    with np.errstate(all="ignore"):
        w_sum = None if w is None else w.sum()  # integers: exact, in int64
        _require(w is None or w_sum != 0, "cov(): weights sum to zero, can't be normalized")
        total = obs.sum(axis=1) if w is None else np.multiply(*_promoted(obs, w)).sum(axis=1)
        avg = total.astype(c) / _as(n if w is None else w_sum, c)
        if aw is not None and correction:  # in the weights' dtype, as ATen's
            ww, a2 = _promoted(w, aw)
            norm = w_sum - _as(correction, ww.dtype) * (ww * a2).sum() / w_sum
        else:
            norm = (n if w is None else w_sum) - correction
        if norm <= 0:
            warnings.warn("cov(): degrees of freedom is <= 0. Correction should be strictly less "
                          "than the number of observations.", RuntimeWarning, stacklevel=2)
            norm = 0
        obs = obs.astype(c) - avg[:, None]
        cmat = xp.matmul(obs, (obs if w is None else obs * w.astype(c)).T) / _as(norm, c)
    return xp.asarray(xp.squeeze(cmat)).astype(out)


def _promoted(a, b):
    """Two arrays in PyTorch's promoted dtype (numpy's promotion differs across categories)."""
    dt = promote_types(str(a.dtype), str(b.dtype))
    return a.astype(dt), b.astype(dt)


def _corrcoef(xp, x):
    _require(x.ndim <= 2, f"corrcoef(): expected input to have two or fewer dimensions but got "
             f"an input with {x.ndim} dimensions")
    c = _cov(xp, x)
    with np.errstate(all="ignore"):
        if c.ndim == 0:  # NaN for a variance of 0, NaN or inf, else 1
            return c / c
        std = xp.sqrt(xp.diagonal(c))
        return xp.clip(c / std[:, None] / std[None, :], -1, 1)


def _trapezoid(what: str, cumulative: bool):
    """``trapezoid`` / ``trapz`` / ``cumulative_trapezoid`` of a tensor ``x`` (viewed along
    ``dim`` if 1-D, else left-padded to y's rank; its differences broadcast with y's, as numpy's)
    or a number ``dx``.  Integers integrate to float32."""
    def impl(xp, y, x=1, dim=-1):
        is_x = hasattr(x, "ndim") and not isinstance(x, np.generic)
        _require(not cumulative or y.ndim > 0 or is_x,
                 "slice() cannot be applied to a 0-dim tensor.", IndexError)
        _require(y.ndim > 0 or (cumulative and x.ndim == 0), f"Dimension specified as "
                 f"{0 if is_x else dim} but tensor has no dimensions", IndexError)
        d = wrap_dim(dim, y.ndim)
        if not cumulative and y.shape[d] == 0:  # numpy's 0 for no samples
            return xp.zeros(y.shape[:d] + y.shape[d + 1:], y.dtype)
        _require(y.dtype != np.bool_ and not (is_x and x.dtype == np.bool_), f"{what}: received "
                 f"a bool input for `{'x` or `y' if is_x else 'y'}`, but bool is not supported")
        _require(is_x or not isinstance(x, (bool, np.bool_)),
                 f"{what}: Currently, we only support dx as a real number.")
        out = str(y.dtype)
        if is_x:
            _require(x.ndim != 1 or x.shape[0] == y.shape[d],
                     f"{what}: There must be one `x` value for each sample point")
            x = x.reshape((1,) * d + (-1,) + (1,) * (y.ndim - d - 1)) if x.ndim == 1 else \
                x.reshape((1,) * (y.ndim - x.ndim) + x.shape) if x.ndim < y.ndim else x
            _require(x.ndim > 0, "slice() cannot be applied to a 0-dim tensor.", IndexError)
            out = promote_types(str(x.dtype), out)
        out = out if out.startswith("float") else "float32"
        c = compute_dtype(out)
        right, left = (tuple(slice(*s) if k == d else slice(None) for k in range(y.ndim))
                       for s in ((1, None), (0, -1)))
        with np.errstate(all="ignore"):
            pair = y[right] + y[left]  # in y's dtype, as ATen
            if is_x:
                step = x[right[:x.ndim]] - x[left[:x.ndim]]
                _broadcast(pair.shape, step.shape)
                pd = promote_types(str(step.dtype), str(pair.dtype))
                area = (step.astype(pd) * pair.astype(pd)).astype(c) * _as(0.5, c)
            elif cumulative:
                area = _as(float(x) / 2, c) * pair.astype(c)
            else:  # ATen's (sum(y) - (y[0] + y[-1]) / 2) * dx
                total = y.sum(axis=d, dtype=c if y.dtype.kind == "f" else np.int64)
                ends = y.take(0, axis=d) + y.take(-1, axis=d)
                area = (total.astype(c) - ends.astype(c) * _as(0.5, c)) * _as(float(x), c)
                return xp.asarray(area).astype(out)
            r = xp.cumsum(area, axis=d) if cumulative else area.sum(axis=d)
        return xp.asarray(r).astype(out)
    return impl


def _powers(xp, x, n, dtype):
    """``x[..., None] ** [0, n)`` as ATen builds them: ones, then a cumulative product
    (float16's accumulated in float32)."""
    out = xp.ones(x.shape + (n,), dtype)
    if n > 1:
        cols = xp.broadcast_to(x[..., None].astype(compute_dtype(dtype)), x.shape + (n - 1,))
        out[..., 1:] = xp.cumprod(cols, axis=-1).astype(dtype)
    return out


def _vander(xp, x, N=None, increasing=False):
    _require(x.ndim == 1, "x must be a one-dimensional tensor.")
    n = x.shape[0] if N is None else int(N)
    _require(n >= 0, "N must be non-negative.")
    out = _powers(xp, x, n, promote_types(str(x.dtype), "int64"))
    return out if increasing else xp.ascontiguousarray(out[:, ::-1])


def _linalg_vander(xp, x, N=None):
    _require(x.dtype in (np.float32, np.float64) or x.dtype.kind in "iu", f"linalg.vander "
             f"supports floating point, complex, and integer tensors, but got "
             f"{scalar_name(x.dtype)}")
    x = x.reshape(1) if x.ndim == 0 else x
    n = x.shape[-1] if N is None else int(N)
    _require(n > 1, "N must be greater than 1.")
    return _powers(xp, x, n, str(x.dtype) if x.dtype.kind == "f" else "int64")


def _renorm(xp, x, p, dim, maxnorm):
    """Each slice along ``dim`` whose p-norm exceeds maxnorm scaled by maxnorm / (norm + 1e-7)
    (float16: the norm and factor in float32)."""
    _require(float(p) > 0, "renorm: non-positive-norm not supported")
    _require(float(maxnorm) >= 0,
             f"renorm: expected maxnorm to be >= 0 but got {float(maxnorm):g}")
    _require(x.ndim > 1, f"renorm: input needs at least 2 dimensions, got {x.ndim} dimensions")
    d = wrap_dim(dim, x.ndim)
    _floating(x, "linalg.vector_norm")
    c = compute_dtype(str(x.dtype))
    norm = _vector_norm(xp, x, p, [k for k in range(x.ndim) if k != d], True, c)
    m = _as(maxnorm, c)
    with np.errstate(all="ignore"):
        factor = xp.where(norm > m, m / (norm + _as(1e-7, c)), _as(1, c)).astype(x.dtype)
        return xp.asarray(x * factor)


def _bilinear(xp, x1, x2, w, bias=None):
    """``y[..., o] = x1[..., i] w[o, i, j] x2[..., j] + bias[o]``."""
    named = [("input1", x1), ("input2", x2), ("weight", w)] + [("bias", bias)] * (bias is not None)
    _require(all(t.dtype == x1.dtype for _, t in named), "All tensors must have the same dtype, "
             "got " + ", ".join(f"{k}: {_TYPEMETA.get(str(t.dtype))}" for k, t in named))
    _require(x1.ndim == x2.ndim, f"bilinear(): input dimensions do not match: got {x1.ndim} and "
             f"{x2.ndim}")
    for i, (s1, s2) in enumerate(zip(x1.shape[:-1], x2.shape[:-1])):
        _require(s1 == s2, f"bilinear(): input batch dimensions do not match at dim {i}: got {s1} "
                 f"and {s2}")
    for name, t, d in (("input1", x1, 1), ("input2", x2, 2)):
        _require(_size(t, t.ndim - 1) == _size(w, d), f"bilinear(): {name} size does not match "
                 f"weight size: got {t.shape[-1]} but expected {w.shape[d]}")
    if bias is not None:
        _require(_size(bias, 0) == w.shape[0], f"bilinear(): bias size does not match weight "
                 f"size: got {bias.shape[0]} but expected {w.shape[0]}")
    if x1.dtype == np.bool_:
        raise not_implemented("bmm", x1.dtype)
    c = compute_dtype(str(x1.dtype))
    a, b = x1.reshape(-1, x1.shape[-1]).astype(c), x2.reshape(-1, x2.shape[-1]).astype(c)
    out = xp.einsum("boj,bj->bo", xp.einsum("bi,oij->boj", a, w.astype(c)), b)
    out = out.reshape(x1.shape[:-1] + (w.shape[0],))
    return xp.asarray(out if bias is None else out + bias.astype(c)).astype(x1.dtype)


for _name, _schema, _impl, _infer in (
        ("cov", "Tensor self, int correction=1, Tensor? fweights=None, Tensor? aweights=None",
         _cov, None),
        ("corrcoef", "Tensor self", _corrcoef, None),
        # ``x`` is the x tensor or the number dx: the .x and .dx overloads print alike
        ("trapezoid", "Tensor y, Any x=1, int dim=-1", _trapezoid("trapezoid", False), None),
        ("trapz", "Tensor y, Any x=1, int dim=-1", _trapezoid("trapezoid", False), None),
        ("cumulative_trapezoid", "Tensor y, Any x=1, int dim=-1",
         _trapezoid("cumulative_trapezoid", True), None),
        ("vander", "Tensor x, int? N=None, bool increasing=False", _vander, None),
        ("linalg_vander", "Tensor x, int? N=None", _linalg_vander, None),
        ("renorm", "Tensor self, Scalar p, int dim, Scalar maxnorm", _renorm, infer_same),
        ("bilinear", "Tensor input1, Tensor input2, Tensor weight, Tensor? bias=None", _bilinear,
         lambda node, types: [like(tensor_in(types), shape=None)])):
    defop(f"aten::{_name}", _schema, _impl, infer=_infer)
