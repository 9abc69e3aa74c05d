"""Derivative rules of the losses and distances (see ``derivatives.py`` for the rule protocol),
with PyTorch's backward formulas and conventions (derivatives.yaml, FunctionsManual.cpp, the
CPU backward kernels; the composite losses through the autograd of their parts):

* a reduction ``mean`` (1) divides the cotangent by the loss's element count, ``sum`` (2) and
  ``none`` (0) pass it on; ``nll_loss`` / ``cross_entropy`` (class indices) divide by the
  summed weights of the targets that are not ``ignore_index``, whose rows get 0;
* integer targets get no gradient; where PyTorch refuses ``requires_grad`` on an argument
  (a class ``weight``, ``pos_weight``, ``soft_margin_loss``'s target) the rule raises
  ``UnsupportedOpError`` if one flows there;
* kinks: ``clamp_min(z, 0)`` (margin losses) passes the cotangent where ``z >= 0``; the
  smooth L1 / Huber kernels test ``x <= -beta`` then ``x >= beta`` (so beta = 0 gives -1 at a
  zero difference, as ``aten::smooth_l1_loss``), binary cross entropy divides by
  ``max(x (1 - x), 1e-12)``; ``min`` of the swapped triplet distances splits ties;
* distances: ``pairwise_distance`` and the triplet loss go through ``norm_backward``
  (``derivatives_nn.norm_grad``: 0 for a zero 2-norm); ``cdist`` follows ``_cdist_backward``
  (0 where a distance is 0; p = inf: every element at the max gets it, unshared) and, for
  p = 2, ``_euclidean_dist_backward``'s matmul form; ``cosine_similarity`` follows PyTorch 2's
  ``sum(x1 / max(|x1|, eps) * x2 / max(|x2|, eps))``, the clamp applied without a gradient.
"""
from __future__ import annotations

import math

import numpy as np

from ..errors import UnsupportedOpError
from .derivatives import attach
from .derivatives_elementwise import _Ops
from .derivatives_nn import is_none, norm_grad, refuse_grad, static_shape

_WEIGHT = "class weight"


def _numel(ctx, *idxs):
    """Element count of the broadcast shape of node inputs ``idxs``."""
    return math.prod(np.broadcast_shapes(*(static_shape(ctx, i) for i in idxs)))


def _scale(b, g, reduction, n):
    return b.div(g, float(max(n, 1))) if reduction == 1 else g


def _dtype_of(b, mask, like):
    """A bool mask as 0/1 in ``like``'s dtype."""
    return b.type_as(mask, like)


# -- pointwise losses --------------------------------------------------------------------------

def _smooth(kind):
    """smooth_l1_loss(x, t, reduction, beta) / huber_loss(x, t, reduction, delta): the CPU
    kernel's ``x <= -beta: -1, x >= beta: 1, else x / beta`` (Huber: scaled by delta); the
    target's cotangent is the same kernel with the operands swapped."""
    def rule(ctx, grads):
        b = _Ops(ctx)
        red, beta = ctx.static(2), float(ctx.static(3))
        g = _scale(b, grads[0], red, _numel(ctx, 0, 1))
        hi = g if kind == "smooth" else b.mul(g, beta)
        lo = b.neg(hi)

        def kernel(d):
            mid = hi if beta == 0 else (b.div(b.mul(d, g), beta) if kind == "smooth"
                                        else b.mul(d, g))
            return b.where(b.le(d, -beta), lo, b.where(b.ge(d, beta), hi, mid))
        x, t = ctx.input(0), ctx.input(1)
        return [kernel(b.sub(x, t)), kernel(b.sub(t, x)), None, None]
    return rule


def _bce(ctx, grads):
    """binary_cross_entropy(x, t, weight, reduction)."""
    refuse_grad(ctx, (2,), _WEIGHT)
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    red = ctx.static(3)
    g = grads[0]
    if not is_none(ctx, 2):
        g = b.mul(g, ctx.input(2))
    gx = b.div(b.mul(g, b.sub(x, t)), b.clamp_min(b.mul(b.rsub(x, 1.0), x), 1e-12))
    gt = b.mul(b.neg(b.logit(x)), g)
    return [_scale(b, gx, red, _numel(ctx, 0)), _scale(b, gt, red, _numel(ctx, 1)), None, None]


def _bce_logits(ctx, grads):
    """binary_cross_entropy_with_logits(x, t, weight, pos_weight, reduction)."""
    refuse_grad(ctx, (2,), _WEIGHT)
    refuse_grad(ctx, (3,), "pos_weight")
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    red = ctx.static(4)
    g = grads[0]
    if not is_none(ctx, 2):
        g = b.mul(g, ctx.input(2))
    if is_none(ctx, 3):
        dx, dt = b.sub(b.sigmoid(x), t), b.neg(x)
    else:
        pw = ctx.input(3)
        pt = b.mul(pw, t)
        dx = b.sub(b.mul(b.sub(b.add(pt, 1.0), t), b.sigmoid(x)), pt)
        dt = b.sub(b.log_sigmoid(b.neg(x)), b.mul(b.log_sigmoid(x), pw))
    return [_scale(b, b.mul(dx, g), red, _numel(ctx, 0)),
            _scale(b, b.mul(dt, g), red, _numel(ctx, 1)), None, None, None]


def _kl_div(ctx, grads):
    """kl_div(x, t, reduction, log_target): ATen's composite ``exp(t) (t - x)`` or
    ``xlogy(t, t) - t x``; xlogy's derivatives make the target's NaN at t == 0, as PyTorch's."""
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    g = _scale(b, grads[0], ctx.static(2), _numel(ctx, 0, 1))
    if ctx.static(3):
        e = b.exp(t)
        return [b.neg(b.mul(e, g)), b.mul(b.mul(e, b.add(b.sub(t, x), 1.0)), g), None, None]
    dxlogy = b.add(b.where(b.eq(t, 0.0), 0.0, b.log(t)), b.div(t, t))
    return [b.neg(b.mul(t, g)), b.mul(b.sub(dxlogy, x), g), None, None]


def _soft_margin(ctx, grads):
    """soft_margin_loss(x, t, reduction): the kernel's ``-t z / (1 + z)``, ``z = exp(-t x)``;
    PyTorch does not differentiate the target."""
    refuse_grad(ctx, (1,), "target")
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    z = b.exp(b.neg(b.mul(t, x)))
    gx = b.mul(b.div(b.mul(b.neg(t), z), b.add(z, 1.0)), grads[0])
    return [_scale(b, gx, ctx.static(2), _numel(ctx, 0)), None, None]


def _poisson_nll(ctx, grads):
    """poisson_nll_loss(x, t, log_input, full, eps, reduction): ATen's composite; the Stirling
    term (``full``) is masked where t <= 1, and its derivative flows as autograd's does (NaN at
    t == 0, 0 * log 0)."""
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    log_input, full, eps = ctx.static(2), ctx.static(3), ctx.static(4)
    g = _scale(b, grads[0], ctx.static(5), _numel(ctx, 0, 1))
    if log_input:
        gx, gt = b.mul(b.sub(b.exp(x), t), g), b.neg(b.mul(x, g))
    else:
        xe = b.add(x, eps)
        gx = b.mul(b.rsub(b.div(t, xe), 1.0), g)
        gt = b.neg(b.mul(b.log(xe), g))
    if full:
        gm = b.where(b.le(t, 1.0), 0.0, g)
        d = b.add(b.sub(b.add(b.mul(gm, b.log(t)), b.div(b.mul(gm, t), t)), gm),
                  b.div(b.mul(gm, 0.5), t))
        gt = b.add(gt, d)
    return [gx, gt, None, None, None, None]


def _margin_ranking(ctx, grads):
    """margin_ranking_loss(x1, x2, t, margin, reduction): ``clamp_min(-t (x1 - x2) + m, 0)``."""
    b, x1, x2, t = _Ops(ctx), ctx.input(0), ctx.input(1), ctx.input(2)
    g = _scale(b, grads[0], ctx.static(4), _numel(ctx, 0, 1, 2))
    d = b.sub(x1, x2)
    gz = b.where(b.ge(b.add(b.mul(b.neg(t), d), ctx.static(3)), 0.0), g, 0.0)
    return [b.neg(b.mul(t, gz)), b.mul(t, gz), b.neg(b.mul(d, gz)), None, None]


def _hinge_embedding(ctx, grads):
    """hinge_embedding_loss(x, t, margin, reduction): ``where(t != 1, clamp_min(m - x, 0), 0) +
    where(t != -1, x, 0)``; the target only selects (no gradient)."""
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    g = _scale(b, grads[0], ctx.static(3), _numel(ctx, 0, 1))
    clamp = b.where(b.ge(b.rsub(x, ctx.static(2)), 0.0), g, 0.0)
    gx = b.sub(b.where(b.ne(t, -1.0), g, 0.0), b.where(b.ne(t, 1.0), clamp, 0.0))
    return [gx, None, None, None]


# -- class losses -------------------------------------------------------------------------------

def _class_axis(ctx):
    return 0 if len(static_shape(ctx, 0)) == 1 else 1


def _nll_logp_grad(ctx, g, axis, red, ignore_index, weight_i):
    """Cotangent of the log-probabilities ``logp`` (input 0's shape) of ``nll_loss(logp, t)``:
    ``-w[t] g`` at each target class (divided by the summed weights for ``mean``), 0 in rows
    whose target is ``ignore_index``."""
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    valid = b.ne(t, ignore_index)
    safe = b.where(valid, t, 0)
    if is_none(ctx, weight_i):
        wt = _dtype_of(b, valid, x)
    else:
        wt = b.where(valid, b.take(ctx.input(weight_i), safe), 0.0)
    if red == 1:
        g = b.div(g, b.sum(wt))
    src = b.unsqueeze(b.neg(b.mul(g, wt)), axis)
    return b.scatter(b.zeros_like(x), axis, b.unsqueeze(safe, axis), src), valid


def _nll(ctx, grads):  # nll_loss / nll_loss_nd(x, t, weight, reduction, ignore_index)
    refuse_grad(ctx, (2,), _WEIGHT)
    red = ctx.static(3)
    gx, _ = _nll_logp_grad(ctx, grads[0], _class_axis(ctx), red, ctx.static(4), 2)
    return [gx, None, None, None, None]


def _through_log_softmax(b, G, x, axis):
    return b.sub(G, b.mul(b.softmax(x, axis), b.sum(G, [axis], True)))


def _cross_entropy(ctx, grads):
    """cross_entropy_loss(x, t, weight, reduction, ignore_index, label_smoothing): nll_loss of
    log_softmax (class indices) or ``-sum(logp * t' * w)`` (class probabilities, ``t'`` the
    smoothed target), differentiated as PyTorch's composite."""
    refuse_grad(ctx, (2,), _WEIGHT)
    b, g, x, t = _Ops(ctx), grads[0], ctx.input(0), ctx.input(1)
    red, ignore, eps = ctx.static(3), ctx.static(4), float(ctx.static(5) or 0.0)
    shape = static_shape(ctx, 0)
    axis = _class_axis(ctx)
    classes = shape[axis]
    has_w = not is_none(ctx, 2)
    if "float" in str(getattr(ctx.node.inputs[1].type, "dtype", "")):  # probabilities
        w = (b.reshape(ctx.input(2), [classes] + [1] * (len(shape) - 1 - axis))
             if has_w else None)
        gl = b.unsqueeze(g, axis) if red == 0 else _scale(b, g, red, math.prod(shape) //
                                                            max(classes, 1))
        if has_w:
            gl = b.mul(gl, w)
        tt = b.add(b.mul(t, 1.0 - eps), eps / classes) if eps else t
        gx = _through_log_softmax(b, b.neg(b.mul(tt, gl)), x, axis)
        gt = b.neg(b.mul(b.log_softmax(x, axis), gl))
        return [gx, b.mul(gt, 1.0 - eps) if eps else gt, None, None, None, None]
    if eps and has_w:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: label smoothing "
                                 f"with class weights (the forward refuses it too)")
    G, valid = _nll_logp_grad(ctx, g, axis, red, ignore, 2)
    if eps:  # (1 - eps) nll + eps / C * sum(-logp) over the valid rows
        G = b.mul(G, 1.0 - eps)
        gs = b.div(g, b.sum(valid)) if red == 1 else g
        gs = b.where(valid, b.mul(gs, -eps / classes), 0.0)
        G = b.add(G, b.unsqueeze(gs, axis))
    return [_through_log_softmax(b, G, x, axis), None, None, None, None, None]


def _frames(ctx):
    shape = static_shape(ctx, 0)
    if len(shape) == 2:
        return shape
    return 1, (shape[0] if shape else 1)


def _frame_grad(ctx, b, g, red, nframe, dim, keep):
    """A margin loss's per-element scale: ``g / dim`` per frame (``mean``: over the frames
    too), shaped to broadcast against (frames, classes)."""
    if red == 0 and keep:
        g = b.reshape(g, [nframe, 1])
    return b.div(g, float(dim * (nframe if red == 1 else 1)))


def _multi_margin(ctx, grads):
    """multi_margin_loss(x, t, p, margin, weight, reduction): per frame, for each class d != y
    with ``z = margin - x[y] + x[d] > 0``: ``h = g / C`` (p = 2: ``2 z g / C``, times w[y]) to
    x[d], minus their sum to x[y] (the CPU kernel)."""
    refuse_grad(ctx, (4,), _WEIGHT)
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    p, margin, red = int(ctx.static(2)), ctx.static(3), ctx.static(5)
    nframe, dim = _frames(ctx)
    xr = b.reshape(x, [nframe, dim])
    y = b.reshape(t, [nframe, 1])
    picked = b.gather(xr, 1, y)
    onehot = b.scatter(b.zeros_like(xr), 1, y, b.ones_like(picked))
    z = b.add(b.rsub(picked, margin), xr)
    h = _frame_grad(ctx, b, grads[0], red, nframe, dim, len(static_shape(ctx, 1)) > 0)
    if p == 2:
        h = b.mul(b.mul(z, 2.0), h)
    if not is_none(ctx, 4):
        h = b.mul(h, b.take(ctx.input(4), y))
    h = b.where(b.logical_and(b.gt(z, 0.0), b.eq(onehot, 0.0)), h, 0.0)
    gx = b.sub(h, b.mul(onehot, b.sum(h, [1], True)))
    return [b.reshape(gx, list(static_shape(ctx, 0))), None, None, None, None, None]


def _multilabel_margin(ctx, grads):
    """multilabel_margin_loss(x, t, reduction): for each target class j (t's entries before
    its first -1) and non-target class d with ``z = 1 - x[j] + x[d] > 0``: ``g / C`` to x[d],
    minus it to x[j] (the CPU kernel)."""
    b, x, t = _Ops(ctx), ctx.input(0), ctx.input(1)
    red = ctx.static(2)
    nframe, dim = _frames(ctx)
    xr = b.reshape(x, [nframe, dim])
    tr = b.reshape(t, [nframe, dim])
    valid = b.ne(b.cumprod(b.ge(tr, 0), 1), 0)
    safe = b.where(valid, tr, 0)
    validf = _dtype_of(b, valid, xr)
    is_target = b.gt(b.scatter_add(b.zeros_like(xr), 1, safe, validf), 0.0)
    z = b.add(b.rsub(b.unsqueeze(b.gather(xr, 1, safe), 2), 1.0), b.unsqueeze(xr, 1))
    mask = b.logical_and(b.logical_and(b.unsqueeze(valid, 2),
                                       b.logical_not(b.unsqueeze(is_target, 1))), b.gt(z, 0.0))
    m = _dtype_of(b, mask, xr)  # (frames, target slot j, class d)
    to_j = b.scatter_add(b.zeros_like(xr), 1, safe, b.sum(m, [2]))
    scale = _frame_grad(ctx, b, grads[0], red, nframe, dim, len(static_shape(ctx, 1)) > 1)
    gx = b.mul(b.sub(b.sum(m, [1]), to_j), scale)
    return [b.reshape(gx, list(static_shape(ctx, 0))), None, None]


# -- distances ------------------------------------------------------------------------------------

def _cosine_embedding(ctx, grads):
    """cosine_embedding_loss(x1, x2, t, margin, reduction): ATen's composite over the last
    dim, ``cos = sum(x1 x2) / sqrt((|x1|^2 + 1e-12)(|x2|^2 + 1e-12))``; 1 - cos where t == 1,
    clamp_min(cos - margin, 0) where t == -1."""
    b, x1, x2, t = _Ops(ctx), ctx.input(0), ctx.input(1), ctx.input(2)
    d = len(static_shape(ctx, 2))
    m1 = b.add(b.sum(b.mul(x1, x1), [d], True), 1e-12)
    m2 = b.add(b.sum(b.mul(x2, x2), [d], True), 1e-12)
    denom = b.sqrt(b.mul(m1, m2))
    cos = b.div(b.sum(b.mul(x1, x2), [d], True), denom)
    n = math.prod(np.broadcast_shapes(static_shape(ctx, 0)[:d], static_shape(ctx, 2)))
    red = ctx.static(4)
    g = b.unsqueeze(grads[0], d) if red == 0 else _scale(b, grads[0], red, n)
    tk = b.unsqueeze(t, d)
    neg = b.where(b.ge(b.sub(cos, ctx.static(3)), 0.0), g, 0.0)
    gc = b.add(b.where(b.eq(tk, 1.0), b.neg(g), 0.0), b.where(b.eq(tk, -1.0), neg, 0.0))
    gx1 = b.mul(gc, b.sub(b.div(x2, denom), b.div(b.mul(cos, x1), m1)))
    gx2 = b.mul(gc, b.sub(b.div(x1, denom), b.div(b.mul(cos, x2), m2)))
    return [gx1, gx2, None, None, None]


def _pdist_grad(ctx, u, v, p, eps, gk):
    """Cotangent of ``u`` for ``d = ||u - v + eps||_p`` over the last dim, kept (``gk``: d's
    cotangent); v's is its negation."""
    b = _Ops(ctx)
    diff = b.add(b.sub(u, v), eps)
    d = b.linalg_vector_norm(diff, p, [-1], True)
    return norm_grad(ctx, gk, diff, d, p, [-1], True)


def _pairwise_distance(ctx, grads):  # pairwise_distance(x1, x2, p, eps, keepdim)
    b = _Ops(ctx)
    gk = grads[0] if ctx.static(4) else b.unsqueeze(grads[0], -1)
    gu = _pdist_grad(ctx, ctx.input(0), ctx.input(1), float(ctx.static(2)), ctx.static(3), gk)
    return [gu, None if gu is None else b.neg(gu), None, None, None]


def _triplet_margin(ctx, grads):
    """triplet_margin_loss(a, pos, neg, margin, p, eps, swap, reduction): ATen's composite
    ``clamp_min(margin + d(a, pos) - d(a, neg), 0)``, d(a, neg) replaced by its minimum with
    d(pos, neg) when swapping (ties split)."""
    b, a, pos, neg = _Ops(ctx), ctx.input(0), ctx.input(1), ctx.input(2)
    margin, p, eps, swap, red = (ctx.static(i) for i in range(3, 8))
    p = float(p)
    n = math.prod(np.broadcast_shapes(*(static_shape(ctx, i) for i in range(3)))[:-1])
    g = _scale(b, grads[0], red, n)

    def dist(u, v):
        return b.linalg_vector_norm(b.add(b.sub(u, v), eps), p, [-1], False)
    d_pos, d_neg = dist(a, pos), dist(a, neg)
    d_sw = dist(pos, neg) if swap else None
    best = b.minimum(d_neg, d_sw) if swap else d_neg
    gz = b.where(b.ge(b.sub(b.add(d_pos, margin), best), 0.0), g, 0.0)
    out = [None, None, None]

    def add(i, v):
        if v is not None:
            out[i] = v if out[i] is None else b.add(out[i], v)

    def through(i, j, gd):
        gu = _pdist_grad(ctx, ctx.input(i), ctx.input(j), p, eps, b.unsqueeze(gd, -1))
        add(i, gu)
        add(j, None if gu is None else b.neg(gu))
    through(0, 1, gz)
    gneg = b.neg(gz)
    if swap:  # minimum's backward: equal operands share, the larger gets nothing
        half = b.where(b.eq(d_neg, d_sw), b.mul(gneg, 0.5), gneg)
        through(0, 2, b.where(b.gt(d_neg, d_sw), 0.0, half))
        through(1, 2, b.where(b.gt(d_sw, d_neg), 0.0, half))
    else:
        through(0, 2, gneg)
    return out + [None] * 5


def _cosine_similarity(ctx, grads):
    """cosine_similarity(x1, x2, dim, eps): PyTorch 2's ``sum(x1 / n1 * x2 / n2)``, ``n = max(
    ||x||, eps)`` clamped without a gradient: the cotangent reaches the norms as if unclamped
    (a zero norm gives 0 there, as norm_backward)."""
    b = _Ops(ctx)
    shape = list(np.broadcast_shapes(static_shape(ctx, 0), static_shape(ctx, 1)))
    d = ctx.static(2) % max(len(shape), 1)
    eps = ctx.static(3)
    xs = [b.expand(ctx.input(i), shape) for i in (0, 1)]
    norms = [b.linalg_vector_norm(v, 2, [d], True) for v in xs]
    clamped = [b.clamp_min(n, eps) for n in norms]
    units = [b.div(v, n) for v, n in zip(xs, clamped)]
    g = b.unsqueeze(grads[0], d)
    out = []
    for i in (0, 1):
        ga = b.mul(g, units[1 - i])  # the cotangent of x_i / n_i
        gn = b.neg(b.sum(b.div(b.mul(ga, units[i]), clamped[i]), [d], True))
        out.append(b.add(b.div(ga, clamped[i]), norm_grad(ctx, gn, xs[i], norms[i], 2, [d],
                                                         True)))
    return out + [None, None]


def _cdist(ctx, grads):
    """cdist(x1, x2, p, compute_mode): ``_cdist_backward`` (p = 2: the matmul form of
    ``_euclidean_dist_backward``, the same values); 0 where a distance is 0, p = 0 none."""
    b, x1, x2 = _Ops(ctx), ctx.input(0), ctx.input(1)
    p = float(ctx.static(2))
    g, dist = grads[0], ctx.output(0)
    if p == 0.0:
        return [None, None, None, None]
    if p == 2.0:
        ratio = b.where(b.eq(dist, 0.0), 0.0, b.div(g, dist))
        g1 = b.sub(b.mul(x1, b.sum(ratio, [-1], True)), b.matmul(ratio, x2))
        g2 = b.sub(b.mul(x2, b.unsqueeze(b.sum(ratio, [-2]), -1)),
                   b.matmul(b.transpose(ratio, -1, -2), x1))
        return [g1, g2, None, None]
    diff = b.sub(b.unsqueeze(x1, -2), b.unsqueeze(x2, -3))   # (..., P, R, M)
    dk, gk = b.unsqueeze(dist, -1), b.unsqueeze(g, -1)
    sign, ad = b.sgn(diff), b.abs(diff)
    zero = b.eq(dk, 0.0)
    if p == 1.0:
        f = b.mul(gk, sign)
    elif math.isinf(p):
        f = b.mul(b.mul(gk, sign), _dtype_of(b, b.eq(ad, dk), diff))
    elif p < 2.0:
        if p < 1.0:
            zero = b.logical_or(zero, b.eq(diff, 0.0))
        f = b.where(zero, 0.0, b.div(b.mul(b.mul(sign, b.pow(ad, p - 1.0)), gk),
                                     b.pow(dk, p - 1.0)))
    else:
        f = b.where(zero, 0.0, b.div(b.mul(b.mul(diff, b.pow(ad, p - 2.0)), gk),
                                     b.pow(dk, p - 1.0)))
    return [b.sum(f, [-2]), b.neg(b.sum(f, [-3])), None, None]


RULES = {
    "aten::smooth_l1_loss": _smooth("smooth"),
    "aten::huber_loss": _smooth("huber"),
    "aten::binary_cross_entropy": _bce,
    "aten::binary_cross_entropy_with_logits": _bce_logits,
    "aten::kl_div": _kl_div,
    "aten::soft_margin_loss": _soft_margin,
    "aten::poisson_nll_loss": _poisson_nll,
    "aten::margin_ranking_loss": _margin_ranking,
    "aten::hinge_embedding_loss": _hinge_embedding,
    "aten::nll_loss": _nll,
    "aten::nll_loss_nd": _nll,
    "aten::cross_entropy_loss": _cross_entropy,
    "aten::multi_margin_loss": _multi_margin,
    "aten::multilabel_margin_loss": _multilabel_margin,
    "aten::cosine_embedding_loss": _cosine_embedding,
    "aten::triplet_margin_loss": _triplet_margin,
    "aten::pairwise_distance": _pairwise_distance,
    "aten::cosine_similarity": _cosine_similarity,
    "aten::cdist": _cdist,
}

attach(RULES)
