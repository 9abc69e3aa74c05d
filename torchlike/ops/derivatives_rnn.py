"""Derivative rules of the recurrent cells ``aten::lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``
and ``rnn_relu_cell`` (``nn.LSTMCell`` & co.; see ``derivatives.py`` for the rule protocol).

The cells' forward is one interpreted op; their rules recompute the gate pre-activations from
the inputs (two ``linear``s: a cell saves only what it was given and its outputs) and emit
the gates' backward as elementwise ops, which the fuser makes one kernel, then the matmuls of
the weights' and inputs' cotangents::

    gates = x W_ih^T + b_ih + h W_hh^T + b_hh           (LSTM: i, f, g, o; GRU: r, z, n)
    dgates  ->  dx = dgates W_ih,  dh = dgates W_hh,  dW_ih = dgates^T x,  db = sum(dgates, 0)

(the GRU's ``n`` gate reads ``r * (h W_hn^T + b_hn)``, so its input and hidden gate cotangents
differ in that block).  The formulas are those of PyTorch's fused cell backward kernels
(``_thnn_fused_lstm_cell_backward``, ``_thnn_fused_gru_cell_backward``).  A cotangent that
reaches only one of an LSTM cell's two outputs leaves the other's terms out.  The inputs are
2-D rows, as the modules pass them (they unsqueeze a single sample themselves).
"""
from __future__ import annotations

from ..errors import UnsupportedOpError
from .derivatives import attach
from .derivatives_elementwise import _Ops
from .derivatives_structured import _shape


def _rows(ctx):
    """(hidden size, whether the biases are given); 2-D rows only."""
    xs, ws = _shape(ctx.node.inputs[0]), _shape(ctx.node.inputs[3])
    if xs is None or ws is None or len(xs) != 2:
        raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: its input must be "
                                 f"2-D rows of a known shape, got {xs}")
    has_bias = [not (i >= len(ctx.node.inputs) or (ctx.node.inputs[i].is_constant() and
                                                    ctx.node.inputs[i].constant_value() is None))
                for i in (4, 5)]
    return ws[1], has_bias


def _linear(b, x, w, bias):
    return b.linear(x, w, bias)


def _bias(ctx, i, has):
    return ctx.input(i) if has else None


def _gate(b, t, k, size):
    return b.narrow(t, 1, k * size, size)


def _param_grads(b, ctx, d_in, d_hid, x, h, has_bias):
    """dx, dh (before any direct term), dW_ih, dW_hh, db_ih, db_hh from the gate cotangents."""
    dx = b.mm(d_in, ctx.input(2))
    dh = b.mm(d_hid, ctx.input(3))
    dw_ih, dw_hh = b.mm(b.t(d_in), x), b.mm(b.t(d_hid), h)
    db_ih = b.sum(d_in, [0]) if has_bias[0] else None
    db_hh = b.sum(d_hid, [0]) if has_bias[1] else None
    return dx, dh, dw_ih, dw_hh, db_ih, db_hh


def _cat(b, parts):
    return b.cat(b.ctx.emit("prim::ListConstruct", *parts), 1)


def _lstm_cell(ctx, grads):
    size, has_bias = _rows(ctx)
    b, x = _Ops(ctx), ctx.input(0)
    hx = ctx.input(1)
    h, c = ctx.emit("aten::__getitem__", hx, 0), ctx.emit("aten::__getitem__", hx, 1)
    gates = b.add(_linear(b, x, ctx.input(2), _bias(ctx, 4, has_bias[0])),
                  _linear(b, h, ctx.input(3), _bias(ctx, 5, has_bias[1])))
    i, f, g, o = (_gate(b, gates, k, size) for k in range(4))
    i, f, o, g = b.sigmoid(i), b.sigmoid(f), b.sigmoid(o), b.tanh(g)
    gh, gc = grads[0], grads[1]
    c1 = ctx.output(1)
    tc = b.tanh(c1)
    zero = b.zeros_like(c1)
    do = b.mul(gh, tc) if gh is not None else zero
    dc = gc if gc is not None else zero
    if gh is not None:  # h' = o tanh(c'): through tanh into c'
        dc = b.add(dc, b.mul(b.mul(gh, o), b.rsub(b.mul(tc, tc), 1.0)))
    di, df, dg = b.mul(dc, g), b.mul(dc, c), b.mul(dc, i)
    sig = lambda y, d: b.mul(d, b.mul(y, b.rsub(y, 1.0)))  # noqa: E731 (sigmoid's slope)
    dgates = _cat(b, [sig(i, di), sig(f, df), b.mul(dg, b.rsub(b.mul(g, g), 1.0)), sig(o, do)])
    dx, dh, dw_ih, dw_hh, db_ih, db_hh = _param_grads(b, ctx, dgates, dgates, x, h, has_bias)
    return [dx, [dh, b.mul(dc, f)], dw_ih, dw_hh, db_ih, db_hh][:len(ctx.node.inputs)]


def _gru_cell(ctx, grads):
    size, has_bias = _rows(ctx)
    b, x, h, g = _Ops(ctx), ctx.input(0), ctx.input(1), grads[0]
    gi = _linear(b, x, ctx.input(2), _bias(ctx, 4, has_bias[0]))
    gh = _linear(b, h, ctx.input(3), _bias(ctx, 5, has_bias[1]))
    r = b.sigmoid(b.add(_gate(b, gi, 0, size), _gate(b, gh, 0, size)))
    z = b.sigmoid(b.add(_gate(b, gi, 1, size), _gate(b, gh, 1, size)))
    hn = _gate(b, gh, 2, size)
    n = b.tanh(b.add(_gate(b, gi, 2, size), b.mul(r, hn)))
    dn = b.mul(b.mul(g, b.rsub(z, 1.0)), b.rsub(b.mul(n, n), 1.0))
    dz = b.mul(b.mul(g, b.sub(h, n)), b.mul(z, b.rsub(z, 1.0)))
    dr = b.mul(b.mul(dn, hn), b.mul(r, b.rsub(r, 1.0)))
    d_in = _cat(b, [dr, dz, dn])
    d_hid = _cat(b, [dr, dz, b.mul(dn, r)])
    dx, dh, dw_ih, dw_hh, db_ih, db_hh = _param_grads(b, ctx, d_in, d_hid, x, h, has_bias)
    return [dx, b.add(dh, b.mul(g, z)), dw_ih, dw_hh, db_ih, db_hh][:len(ctx.node.inputs)]


def _rnn_cell(kind):
    def rule(ctx, grads):
        _, has_bias = _rows(ctx)
        b, x, h, g, y = _Ops(ctx), ctx.input(0), ctx.input(1), grads[0], ctx.output(0)
        if kind == "tanh":
            d = b.mul(g, b.rsub(b.mul(y, y), 1.0))
        else:  # relu: 0 where the result is 0, as threshold_backward
            d = b.where(b.le(y, 0.0), 0.0, g)
        dx, dh, dw_ih, dw_hh, db_ih, db_hh = _param_grads(b, ctx, d, d, x, h, has_bias)
        return [dx, dh, dw_ih, dw_hh, db_ih, db_hh][:len(ctx.node.inputs)]
    return rule


RULES = {
    "aten::lstm_cell": _lstm_cell,
    "aten::gru_cell": _gru_cell,
    "aten::rnn_tanh_cell": _rnn_cell("tanh"),
    "aten::rnn_relu_cell": _rnn_cell("relu"),
}

attach(RULES)
