"""Derivative rules of linear algebra and attention (see ``derivatives.py`` for the rule
protocol); real dtypes only, so every conjugate transpose of PyTorch's formulas is a transpose.

* products: ``dot``, ``vdot``, ``mv``, ``outer`` / ``ger``, ``inner``, ``kron``, ``addmv``,
  ``addr``, ``addbmm``, ``chain_matmul``, ``linalg_multi_dot`` (each matrix's gradient is the
  product of the ones before it, transposed, the cotangent, and the ones after it, transposed),
  ``tensordot``, ``einsum`` (an operand's gradient is the einsum of the cotangent with the other
  operands, its ellipsis spelled out as letters; a letter summed in that operand alone comes
  back as a size-1 dim the engine broadcasts; a letter repeated within one operand -- a
  diagonal -- has no rule), ``bilinear``, ``linalg_vecdot``;
* ``det`` / ``linalg_det`` (``torchlike::linalg_det_backward``: ``g det A^-T``, 0 at det 0 as
  PyTorch), ``slogdet`` / ``linalg_slogdet`` (the ``logabsdet`` output: ``g A^-T``; ``sign``
  has none), ``logdet`` (``g A^-T`` where det > 0, none where the result is NaN),
  ``inverse`` / ``linalg_inv`` (``-Y^T g Y^T``), ``linalg_solve`` (left and right, vector
  right-hand sides), ``cholesky`` / ``linalg_cholesky`` (Murray's formula, symmetrized, as
  PyTorch), ``matrix_power`` / ``linalg_matrix_power`` (``sum_k (A^T)^k g (A^T)^(n-1-k)``;
  through the inverse for n < 0), ``linalg_eigh`` (PyTorch's formula; eigenvectors are only
  defined up to sign, so only sign-invariant uses of them match PyTorch's);
* ``scaled_dot_product_attention``: through its math, ``softmax(q k^T s + mask) v``, the
  probabilities recomputed from q and k; gradients for q, k, v and a float mask (a boolean
  mask and ``is_causal`` give -inf scores, hence no gradient there); ``dropout_p > 0`` has no
  rule (the forward's random mask is not saved).
"""
from __future__ import annotations

import math
from string import ascii_letters

import numpy as np

from ..errors import UnsupportedOpError
from .derivatives import attach
from .derivatives_elementwise import _Ops, _rest
from .derivatives_structured import _rank, _shape


def _fail(ctx, why):
    return UnsupportedOpError(f"no derivative for {ctx.node.describe()}: {why}")


def _ranks(ctx, *idx):
    out = [_rank(ctx.node.inputs[i]) for i in idx]
    if None in out:
        raise _fail(ctx, "the ranks of its inputs are unknown")
    return out


def _items(ctx, i):
    """The forward values of the list at input ``i`` (built by ``prim::ListConstruct``)."""
    src = ctx.node.inputs[i].node
    if src is None or src.kind != "prim::ListConstruct":
        raise _fail(ctx, "its list is not built by prim::ListConstruct in the graph")
    return src.inputs


def _ints_at(ctx, i):
    """An ``int[]`` argument: a constant, or a list built from constants (an empty one)."""
    v = ctx.node.inputs[i]
    if v.is_constant():
        return list(v.constant_value())
    items = _items(ctx, i)
    if not all(e.is_constant() for e in items):
        raise _fail(ctx, f"its argument %{v.name} must be a constant")
    return [e.constant_value() for e in items]


def _scaled(b, v, c):
    return v if c == 1 else b.mul(v, c)


def _mT(b, v):
    return b.transpose(v, -1, -2)


# -- products ----------------------------------------------------------------------------------

def _dot(ctx, grads):  # dot, vdot (real): each vector times the scalar cotangent
    b, g = _Ops(ctx), grads[0]
    return [b.mul(g, ctx.input(1)), b.mul(g, ctx.input(0))]


def _mv(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    return [b.outer(g, ctx.input(1)), b.mv(b.t(ctx.input(0)), g)]


def _outer(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    return [b.mv(g, ctx.input(1)), b.mv(b.t(g), ctx.input(0))]


def _inner(ctx, grads):
    """inner(a, b): the last dims contracted; out = a's other dims, then b's."""
    b, g = _Ops(ctx), grads[0]
    x, y = ctx.input(0), ctx.input(1)
    ra, rb = _ranks(ctx, 0, 1)
    if ra == 0 or rb == 0:
        return [b.mul(g, y), b.mul(g, x)]
    na, nb = ra - 1, rb - 1
    return [b.tensordot(g, y, list(range(na, na + nb)), list(range(nb))),
            b.tensordot(g, x, list(range(na)), list(range(na)))]


def _kron(ctx, grads):
    """out[i * bs + j] = a[i] b[j] per dim: the cotangent viewed as (a0, b0, a1, b1, ...)."""
    b, g = _Ops(ctx), grads[0]
    sa, sb = _shape(ctx.node.inputs[0]), _shape(ctx.node.inputs[1])
    if sa is None or sb is None:
        raise _fail(ctx, "the shapes of its inputs are unknown")
    r = max(len(sa), len(sb))
    pa, pb = (1,) * (r - len(sa)) + sa, (1,) * (r - len(sb)) + sb
    inter = [s for pair in zip(pa, pb) for s in pair]
    gi = b.reshape(g, inter)
    av = b.reshape(ctx.input(0), [s for d in pa for s in (d, 1)])
    bv = b.reshape(ctx.input(1), [s for d in pb for s in (1, d)])
    ga = b.sum(b.mul(gi, bv), list(range(1, 2 * r, 2)))
    gb = b.sum(b.mul(gi, av), list(range(0, 2 * r, 2)))
    return [b.reshape(ga, list(sa)), b.reshape(gb, list(sb))]


def _addmv(ctx, grads):  # beta * self + alpha * mat @ vec
    b, g = _Ops(ctx), grads[0]
    beta, alpha = ctx.static(3), ctx.static(4)
    return [_scaled(b, g, beta), _scaled(b, b.outer(g, ctx.input(2)), alpha),
            _scaled(b, b.mv(b.t(ctx.input(1)), g), alpha), None, None]


def _addr(ctx, grads):  # beta * self + alpha * outer(vec1, vec2)
    b, g = _Ops(ctx), grads[0]
    beta, alpha = ctx.static(3), ctx.static(4)
    return [_scaled(b, g, beta), _scaled(b, b.mv(g, ctx.input(2)), alpha),
            _scaled(b, b.mv(b.t(g), ctx.input(1)), alpha), None, None]


def _addbmm(ctx, grads):  # beta * self + alpha * sum_i batch1[i] @ batch2[i]
    b, g = _Ops(ctx), grads[0]
    beta, alpha = ctx.static(3), ctx.static(4)
    return [_scaled(b, g, beta), _scaled(b, b.matmul(g, _mT(b, ctx.input(2))), alpha),
            _scaled(b, b.matmul(_mT(b, ctx.input(1)), g), alpha), None, None]


def _chain(ctx, grads):
    """chain_matmul / linalg_multi_dot: matrix i's gradient is (M_0 .. M_i-1)^T g
    (M_i+1 .. M_n-1)^T; a 1-D first (last) operand is a row (column)."""
    b, g = _Ops(ctx), grads[0]
    items = _items(ctx, 0)
    ranks = [_rank(v) for v in items]
    if None in ranks:
        raise _fail(ctx, "the ranks of its matrices are unknown")
    n = len(items)
    lst = ctx.input(0)
    mats = [b.__getitem__(lst, i) for i in range(n)]
    if n == 1:
        return [[g]]
    row, col = ranks[0] == 1, ranks[-1] == 1
    if row:
        mats[0], g = b.unsqueeze(mats[0], 0), b.unsqueeze(g, 0)
    if col:
        mats[-1], g = b.unsqueeze(mats[-1], -1), b.unsqueeze(g, -1)
    before, after = [None] * n, [None] * n
    for i in range(1, n):
        before[i] = mats[0] if i == 1 else b.mm(before[i - 1], mats[i - 1])
    for i in range(n - 2, -1, -1):
        after[i] = mats[-1] if i == n - 2 else b.mm(mats[i + 1], after[i + 1])
    out = []
    for i in range(n):
        gi = g if before[i] is None else b.mm(b.t(before[i]), g)
        gi = gi if after[i] is None else b.mm(gi, b.t(after[i]))
        out.append(gi)
    if row:
        out[0] = b.squeeze(out[0], 0)
    if col:
        out[-1] = b.squeeze(out[-1], -1)
    return [out]


def _tensordot(ctx, grads):
    """The cotangent contracted with the other operand over that operand's free dims, then
    permuted back into the operand's dim order."""
    b, g = _Ops(ctx), grads[0]
    ra, rb = _ranks(ctx, 0, 1)
    sa, sb = _shape(ctx.node.inputs[0]), _shape(ctx.node.inputs[1])
    da, db = [d % max(ra, 1) for d in _ints_at(ctx, 2)], [d % max(rb, 1) for d in _ints_at(ctx, 3)]
    if sa is None or sb is None or any(sa[i] != sb[j] for i, j in zip(da, db)):
        raise _fail(ctx, "contracted dims of unknown or different (broadcast) sizes")
    free_a = [i for i in range(ra) if i not in da]
    free_b = [i for i in range(rb) if i not in db]
    na = len(free_a)
    ga = b.tensordot(g, ctx.input(1), list(range(na, na + len(free_b))), free_b)
    pos = {ax: j for j, ax in enumerate(free_a)}
    pos.update({i: na + sorted(db).index(j) for i, j in zip(da, db)})
    gb = b.tensordot(ctx.input(0), g, free_a, list(range(na)))
    pos_b = {j: sorted(da).index(i) for i, j in zip(da, db)}
    pos_b.update({ax: len(da) + j for j, ax in enumerate(free_b)})
    perm_a, perm_b = [pos[i] for i in range(ra)], [pos_b[j] for j in range(rb)]
    if perm_a != sorted(perm_a):
        ga = b.permute(ga, perm_a)
    if perm_b != sorted(perm_b):
        gb = b.permute(gb, perm_b)
    return [ga, gb, None, None]


def _einsum(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    eq = ctx.static(0).replace(" ", "")
    items = _items(ctx, 1)
    ranks = [_rank(v) for v in items]
    if None in ranks:
        raise _fail(ctx, "the ranks of its operands are unknown")
    lhs, arrow, rhs = eq.partition("->")
    ins = lhs.split(",")
    if not arrow:  # implicit output: the ellipsis, then the letters used once, sorted
        rhs = ("..." if "..." in lhs else "") + "".join(
            sorted(c for c in set(lhs) if c.isalpha() and lhs.count(c) == 1))
    # the ellipsis as letters (right-aligned across operands, as it broadcasts)
    spare = [c for c in ascii_letters if c not in eq]
    ells = [r - (len(s) - 3) if "..." in s else 0 for s, r in zip(ins, ranks)]
    top = max(ells)
    ins = [s.replace("...", "".join(spare[top - e:top])) for s, e in zip(ins, ells)]
    rhs = rhs.replace("...", "".join(spare[:top]))
    lst = ctx.input(1)
    ops = [b.__getitem__(lst, i) for i in range(len(items))]
    out = []
    for i, sub in enumerate(ins):
        if len(set(sub)) != len(sub):
            raise _fail(ctx, f"operand {i} repeats an index ({sub}: a diagonal)")
        others = [s for j, s in enumerate(ins) if j != i]
        seen = set(rhs).union(*others)
        keep = "".join(c for c in sub if c in seen)
        gi = b.einsum(",".join([rhs] + others) + "->" + keep, ctx.emit(
            "prim::ListConstruct", g, *[o for j, o in enumerate(ops) if j != i]))
        for pos, c in enumerate(sub):  # summed in this operand alone: broadcast back
            if c not in seen:
                gi = b.unsqueeze(gi, pos)
        out.append(gi)
    return [None, out, None]


def _bilinear(ctx, grads):  # y[..., o] = x1[..., i] w[o, i, j] x2[..., j] + bias[o]
    b, g = _Ops(ctx), grads[0]
    x1, x2, w = ctx.input(0), ctx.input(1), ctx.input(2)

    def es(eq, *vals):
        return b.einsum(eq, ctx.emit("prim::ListConstruct", *vals))
    has_bias = len(ctx.node.inputs) > 3 and not (ctx.node.inputs[3].is_constant() and
                                                 ctx.node.inputs[3].constant_value() is None)
    sw = _shape(ctx.node.inputs[2])
    if sw is None:
        raise _fail(ctx, "the weight's shape is unknown")
    flat = [b.reshape(v, [-1, n]) for v, n in ((g, sw[0]), (x1, sw[1]), (x2, sw[2]))]
    # numpy's einsum cannot sum an ellipsis away: the batch dims flattened into one for w
    return [es("...o,oij,...j->...i", g, w, x2), es("...o,oij,...i->...j", g, w, x1),
            es("bo,bi,bj->oij", *flat), g if has_bias else None]


def _vecdot(ctx, grads):  # sum over dim of x * y (broadcast): dim is the broadcast shape's
    b = _Ops(ctx)
    g = b.unsqueeze(grads[0], ctx.static(2))
    return [b.mul(g, ctx.input(1)), b.mul(g, ctx.input(0)), None]


# -- determinants, inverse, solve, cholesky, powers ----------------------------------------------

def _mat_scale(b, g):
    return b.unsqueeze(b.unsqueeze(g, -1), -1)


def _det(ctx, grads):
    return [ctx.emit("torchlike::linalg_det_backward", grads[0], ctx.output(0), ctx.input(0))]


def _inv_t(b, a):
    return _mT(b, b.linalg_inv(a))


def _slogdet(ctx, grads):  # (sign, logabsdet): sign is piecewise constant
    g = grads[1] if len(grads) > 1 else None
    if g is None:
        return [None]
    b = _Ops(ctx)
    return [b.mul(_mat_scale(b, g), _inv_t(b, ctx.input(0)))]


def _logdet(ctx, grads):
    """NaN where det < 0 (no gradient there, as PyTorch's where), else log|det|'s."""
    b, a = _Ops(ctx), ctx.input(0)
    g = b.where(b.isnan(ctx.output(0)), 0.0, grads[0])
    return [b.mul(_mat_scale(b, g), _inv_t(b, a))]


def _inverse(ctx, grads):
    b, y = _Ops(ctx), ctx.output(0)
    return [b.neg(b.matmul(b.matmul(_mT(b, y), grads[0]), _mT(b, y)))]


def _solve(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    ra, rb = _ranks(ctx, 0, 1)
    sa, sb = _shape(ctx.node.inputs[0]), _shape(ctx.node.inputs[1])
    left = ctx.static(2)
    vector = rb == 1 or (rb == ra - 1 and sa is not None and sb == sa[:-1])
    a, x = ctx.input(0), ctx.output(0)
    gb = b.linalg_solve(_mT(b, a), g, left)
    if not left:  # X A = B: gA = -X^T gB
        return [b.neg(b.matmul(_mT(b, x), gb)), gb, None]
    if vector:
        return [b.neg(b.mul(b.unsqueeze(gb, -1), b.unsqueeze(x, -2))), gb, None]
    return [b.neg(b.matmul(gb, _mT(b, x))), gb, None]


def _cholesky(ctx, grads):
    """PyTorch's ``cholesky_backward`` (Murray 2016): phi = tril(L^T gL) with its diagonal
    halved, gA = L^-T phi L^-1, symmetrized."""
    b, low, gl = _Ops(ctx), ctx.output(0), grads[0]
    if ctx.static(1):
        low, gl = _mT(b, low), _mT(b, gl)
    p = b.matmul(_mT(b, low), gl)
    phi = b.mul(b.add(b.tril(p, 0), b.tril(p, -1)), 0.5)
    inv = b.linalg_inv(low)
    s = b.matmul(b.matmul(_mT(b, inv), phi), inv)
    return [b.mul(b.add(s, _mT(b, s)), 0.5), None]


def _matrix_power(ctx, grads):
    b, g = _Ops(ctx), grads[0]
    n = int(ctx.static(1))
    if n == 0:
        return [None, None]
    base = ctx.input(0) if n > 0 else b.linalg_inv(ctx.input(0))
    m = abs(n)
    bt = _mT(b, base)
    powers = [None, bt]  # (A^T)^k; None: the identity
    for _ in range(2, m):
        powers.append(b.matmul(powers[-1], bt))
    total = None
    for k in range(m):
        term = g if powers[k] is None else b.matmul(powers[k], g)
        term = term if powers[m - 1 - k] is None else b.matmul(term, powers[m - 1 - k])
        total = term if total is None else b.add(total, term)
    if n < 0:  # through the inverse: -B^T gB B^T
        total = b.neg(b.matmul(b.matmul(bt, total), bt))
    return [total, None]


def _eigh(ctx, grads):
    """PyTorch's ``linalg_eig_backward`` for a symmetric input: gA = V (diag(gL) + skew(V^T gV)
    / E) V^T, E_ij = L_j - L_i (off the diagonal); no symmetrization, as PyTorch."""
    b = _Ops(ctx)
    gl, gv = (list(grads) + [None])[:2]
    lam, v = ctx.output(0), ctx.output(1)
    inner = None
    if gv is not None:
        vg = b.matmul(_mT(b, v), gv)
        skew = b.mul(b.sub(vg, _mT(b, vg)), 0.5)
        n = (_shape(ctx.node.inputs[0]) or (None,))[-1]
        if n is None:
            raise _fail(ctx, "the matrix size is unknown")
        eye = ctx.const(np.eye(n, dtype=bool))
        e = b.where(eye, 1.0, b.sub(b.unsqueeze(lam, -2), b.unsqueeze(lam, -1)))
        inner = b.where(eye, 0.0, b.div(skew, e))
    if gl is not None:
        d = b.diag_embed(gl)
        inner = d if inner is None else b.add(inner, d)
    if inner is None:
        return [None, None]
    return [b.matmul(b.matmul(v, inner), _mT(b, v)), None]


# -- attention ---------------------------------------------------------------------------------

def _sdpa(ctx, grads):
    """scores = q k^T s (+ mask), p = softmax(scores), out = p v; p is recomputed."""
    if ctx.static(4):
        raise _fail(ctx, "dropout_p > 0 draws a random mask that the forward does not save")
    b, g = _Ops(ctx), grads[0]
    q, k, v = ctx.input(0), ctx.input(1), ctx.input(2)
    sq, sk = _shape(ctx.node.inputs[0]), _shape(ctx.node.inputs[1])
    if sq is None or sk is None:
        raise _fail(ctx, "the shapes of query and key are unknown")
    scale = ctx.static(6)
    s = 1.0 / math.sqrt(sq[-1]) if scale is None else float(scale)
    scores = b.mul(b.matmul(q, _mT(b, k)), s)
    if ctx.static(5):
        keep = np.tril(np.ones((sq[-2], sk[-2]), bool))
        scores = b.where(ctx.const(keep), scores, -math.inf)
    node = ctx.node
    float_mask = False
    if len(node.inputs) > 3 and not (node.inputs[3].is_constant()
                                     and node.inputs[3].constant_value() is None):
        mask = ctx.input(3)
        if node.inputs[3].type.dtype == "bool":
            scores = b.where(mask, scores, -math.inf)
        else:
            scores, float_mask = b.add(scores, mask), True
    p = b.softmax(scores, -1)
    gv = b.matmul(_mT(b, p), g)
    gp = b.matmul(g, _mT(b, v))
    gs = b.mul(p, b.sub(gp, b.sum(b.mul(gp, p), [-1], True)))
    gq = b.mul(b.matmul(gs, k), s)
    gk = b.mul(b.matmul(_mT(b, gs), q), s)
    return _rest(ctx, [gq, gk, gv, gs if float_mask else None])


RULES = {
    "aten::dot": _dot,
    "aten::vdot": _dot,
    "aten::mv": _mv,
    "aten::outer": _outer,
    "aten::ger": _outer,
    "aten::inner": _inner,
    "aten::kron": _kron,
    "aten::addmv": _addmv,
    "aten::addr": _addr,
    "aten::addbmm": _addbmm,
    "aten::chain_matmul": _chain,
    "aten::linalg_multi_dot": _chain,
    "aten::tensordot": _tensordot,
    "aten::einsum": _einsum,
    "aten::bilinear": _bilinear,
    "aten::linalg_vecdot": _vecdot,
    "aten::det": _det,
    "aten::linalg_det": _det,
    "aten::slogdet": _slogdet,
    "aten::linalg_slogdet": _slogdet,
    "aten::logdet": _logdet,
    "aten::inverse": _inverse,
    "aten::linalg_inv": _inverse,
    "aten::linalg_solve": _solve,
    "aten::cholesky": _cholesky,
    "aten::linalg_cholesky": _cholesky,
    "aten::matrix_power": _matrix_power,
    "aten::linalg_matrix_power": _matrix_power,
    "aten::linalg_eigh": _eigh,
    "aten::scaled_dot_product_attention": _sdpa,
}

attach(RULES)
