"""Derivative rules of the sequence ops ``aten::lstm``, ``gru``, ``rnn_tanh`` and ``rnn_relu``
(``nn.LSTM``, ``nn.GRU``, ``nn.RNN``; forward and argument conventions in ``ops/rnn.py``, the
rule protocol in ``derivatives.py``), padded overload only::

    aten::lstm(input, hx, params, has_biases, num_layers, dropout, train, bidirectional,
               batch_first)                                   # hx: [h0, c0]; gru/rnn: h0

Nothing but the inputs is saved: the rule emits the forward again (per layer and direction one
``linear`` for every step's input gates, then the recurrence unrolled over the static number
of steps, keeping each step's gates), then backpropagates through time in reverse order, layer
by layer from the top, with the cells' formulas (``derivatives_rnn.py``, after PyTorch's
``_thnn_fused_lstm_cell_backward`` / ``_thnn_fused_gru_cell_backward``).  A step's backward is
elementwise work and one matmul (``dgates W_hh`` into the previous state); the input's and the
weights' cotangents are then one matmul each over all steps::

    dX = dG W_ih    dW_ih = dG^T X    dW_hh = dG_hid^T H_prev    db = sum(dG)    (G: T*B rows)

A bidirectional layer's reverse direction runs over the steps backwards; its outputs are the
upper half of the features, its final states the odd rows (``layer * 2 + direction``).  The
cotangent of ``params`` is a list, one entry per weight in ``_flat_weights`` order.  Refused
(``UnsupportedOpError``): the PackedSequence overload, ``proj_size`` (``w_hr`` in params), and
dropout in training mode (a random mask the forward does not keep).
"""
from __future__ import annotations

from ..errors import UnsupportedOpError
from ..ir.types import ListType
from .derivatives import attach
from .derivatives_elementwise import _Ops
from .derivatives_rnn import _cat
from .derivatives_structured import _shape
from .registry import REQUIRED, lookup

_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


class _Builder(_Ops):
    """``_Ops`` whose Python-scalar arguments, defaults included (``add``'s alpha), become one
    shared constant each: the unrolled steps would otherwise add a constant node per use."""

    def __init__(self, ctx):
        super().__init__(ctx)
        self.consts = {}

    def __getattr__(self, name):
        def emit(*args):
            kind = "aten::" + name
            rest = [p.default for p in lookup(kind).params[len(args):]]
            if REQUIRED not in rest:
                args += tuple(rest)
            return self.ctx.emit(kind, *[self._const(a) for a in args])
        return emit

    def _const(self, a):
        if isinstance(a, (bool, int, float)):
            key = (type(a), a)
            if key not in self.consts:
                self.consts[key] = self.ctx.const(a)
            return self.consts[key]
        return a


def _refuse(ctx, why):
    raise UnsupportedOpError(f"no derivative for {ctx.node.describe()}: {why}")


def _param_shapes(ctx):
    """The static shapes of the ``params`` list's items (built by ListConstruct or constant)."""
    v = ctx.node.inputs[2]
    if v.node is not None and v.node.kind == "prim::ListConstruct":
        shapes = [_shape(p) for p in v.node.inputs]
    elif v.is_constant() and isinstance(v.constant_value(), (list, tuple)):
        shapes = [tuple(getattr(p, "shape", ())) or None for p in v.constant_value()]
    else:
        _refuse(ctx, "its weight list is not built by prim::ListConstruct in the graph")
    if None in shapes:
        _refuse(ctx, "a weight's shape is unknown")
    return shapes


class _Config:
    """The node's static description, after the checks that refuse what has no rule."""

    def __init__(self, ctx, mode):
        node = ctx.node
        if len(node.inputs) != 9 or not isinstance(
                node.inputs[1 if mode == "lstm" else 2].type, ListType):  # where they differ
            _refuse(ctx, "the PackedSequence overload (batch_sizes) has no derivative rule; "
                         "pad the sequences (pad_packed_sequence) instead")
        self.mode, self.gates = mode, _GATES[mode]
        self.has_bias = bool(ctx.static(3))
        self.layers, dropout, train = int(ctx.static(4)), ctx.static(5), ctx.static(6)
        self.dirs = 2 if ctx.static(7) else 1
        self.batch_first = bool(ctx.static(8))
        if train and dropout > 0 and self.layers > 1:
            _refuse(ctx, f"dropout={dropout} in training mode draws random masks that the "
                         f"forward does not save (call module.eval())")
        xs = _shape(node.inputs[0])
        if xs is None or len(xs) != 3:
            _refuse(ctx, f"its input must be 3-D of a known shape, got {xs}")
        self.steps, self.batch = (xs[1], xs[0]) if self.batch_first else (xs[0], xs[1])
        shapes = _param_shapes(ctx)
        self.per = 4 if self.has_bias else 2
        groups = self.layers * self.dirs
        if mode == "lstm" and len(shapes) == groups * (self.per + 1):
            _refuse(ctx, "an LSTM with proj_size (w_hr among its weights) has no derivative "
                         "rule yet")
        if len(shapes) != groups * self.per:
            _refuse(ctx, f"expected {groups * self.per} weights for {groups} layer-direction(s), "
                         f"got {len(shapes)}")
        self.hidden = shapes[1][1]


def _add(b, x, y):
    return y if x is None else x if y is None else b.add(x, y)


def _sig_slope(b, d, y):
    return b.mul(d, b.mul(y, b.rsub(y, 1.0)))


def _tanh_slope(b, d, y):
    return b.mul(d, b.rsub(b.mul(y, y), 1.0))


def _step_forward(b, cfg, gi, h, c, w_hh, b_hh):
    """One step from the input gates ``gi`` and state h (c): (new h, new c, what the backward
    reads)."""
    size = cfg.hidden
    gh = b.linear(h, w_hh, b_hh)
    if cfg.mode == "lstm":
        gates = b.add(gi, gh)
        i = b.sigmoid(b.narrow(gates, 1, 0, size))
        f = b.sigmoid(b.narrow(gates, 1, size, size))
        g = b.tanh(b.narrow(gates, 1, 2 * size, size))
        o = b.sigmoid(b.narrow(gates, 1, 3 * size, size))
        c1 = b.add(b.mul(f, c), b.mul(i, g))
        tc = b.tanh(c1)
        return b.mul(o, tc), c1, (i, f, g, o, tc)
    if cfg.mode == "gru":
        rz = b.sigmoid(b.add(b.narrow(gi, 1, 0, 2 * size), b.narrow(gh, 1, 0, 2 * size)))
        r, z = b.narrow(rz, 1, 0, size), b.narrow(rz, 1, size, size)
        hn = b.narrow(gh, 1, 2 * size, size)
        n = b.tanh(b.add(b.narrow(gi, 1, 2 * size, size), b.mul(r, hn)))
        return b.add(n, b.mul(z, b.sub(h, n))), None, (r, z, n, hn)
    pre = b.add(gi, gh)
    y = b.tanh(pre) if cfg.mode == "rnn_tanh" else b.relu(pre)
    return y, None, (y,)


def _step_backward(b, cfg, saved, h, c, dh, dc, w_hh, need_prev):
    """One step's backward: (input-gate cotangent, hidden-gate cotangent, dh_prev, dc_prev)
    from the cotangents ``dh``/``dc`` of its new state (``dh`` not None here)."""
    if cfg.mode == "lstm":
        i, f, g, o, tc = saved
        dc = _add(b, dc, b.mul(b.mul(dh, o), b.rsub(b.mul(tc, tc), 1.0)))
        d = _cat(b, [_sig_slope(b, b.mul(dc, g), i), _sig_slope(b, b.mul(dc, c), f),
                     _tanh_slope(b, b.mul(dc, i), g), _sig_slope(b, b.mul(dh, tc), o)])
        return d, d, b.mm(d, w_hh) if need_prev else None, b.mul(dc, f)
    if cfg.mode == "gru":
        r, z, n, hn = saved
        dn = _tanh_slope(b, b.mul(dh, b.rsub(z, 1.0)), n)
        dz = _sig_slope(b, b.mul(dh, b.sub(h, n)), z)
        dr = _sig_slope(b, b.mul(dn, hn), r)
        d_in, d_hid = _cat(b, [dr, dz, dn]), _cat(b, [dr, dz, b.mul(dn, r)])
        prev = b.add(b.mm(d_hid, w_hh), b.mul(dh, z)) if need_prev else None
        return d_in, d_hid, prev, None
    (y,) = saved
    d = _tanh_slope(b, dh, y) if cfg.mode == "rnn_tanh" else \
        b.where(b.le(y, 0.0), 0.0, dh)  # relu: 0 where the result is 0 (threshold_backward)
    return d, d, b.mm(d, w_hh) if need_prev else None, None


class _Direction:
    """One layer in one direction: its weights, its recomputed forward, its backward."""

    def __init__(self, b, cfg, weights, reverse):
        self.b, self.cfg, self.reverse = b, cfg, reverse
        self.w_ih, self.w_hh, self.b_ih, self.b_hh = weights
        self.order = list(range(cfg.steps))[::-1 if reverse else 1]

    def forward(self, x, h0, c0):
        """Recompute over ``x`` (T, B, in); returns the outputs (T, B, H) and final states."""
        b, cfg = self.b, self.cfg
        self.x = x
        gi = b.linear(x, self.w_ih, self.b_ih)  # every step's input gates at once
        h, c = h0, c0
        self.h_prev, self.c_prev, self.saved = {}, {}, {}
        outs = {}
        for t in self.order:
            self.h_prev[t], self.c_prev[t] = h, c
            h, c, self.saved[t] = _step_forward(b, cfg, b.select(gi, 0, t), h, c, self.w_hh,
                                                self.b_hh)
            outs[t] = h
        stacked = b.stack(b.ctx.emit("prim::ListConstruct", *[outs[t] for t in range(cfg.steps)]),
                          0)
        return stacked, h, c

    def backward(self, dout, dh, dc, need_x, need_state, need_w):
        """Backpropagation through time from the cotangents of the outputs (T, B, H) and of
        the final states; returns (dx, dh0, dc0, [dw_ih, dw_hh, db_ih, db_hh])."""
        b, cfg = self.b, self.cfg
        d_in, d_hid = {}, {}
        for k, t in enumerate(reversed(self.order)):
            dh = _add(b, dh, None if dout is None else b.select(dout, 0, t))
            if dh is None:  # nothing reached h yet (only c_n had a cotangent)
                dh = b.zeros_like(self.h_prev[t])
            need_prev = need_state or k + 1 < len(self.order)
            d_in[t], d_hid[t], dh, dc = _step_backward(
                b, cfg, self.saved[t], self.h_prev[t], self.c_prev[t], dh, dc, self.w_hh,
                need_prev)
        rows = cfg.steps * cfg.batch

        def stacked(parts):
            return b.stack(b.ctx.emit("prim::ListConstruct",
                                      *[parts[t] for t in range(cfg.steps)]), 0)

        g_in = stacked(d_in)
        g_hid = g_in if cfg.mode != "gru" else stacked(d_hid)
        dx = b.matmul(g_in, self.w_ih) if need_x else None
        grads = None
        if need_w:
            flat_in = b.reshape(g_in, [rows, -1])
            flat_hid = flat_in if g_hid is g_in else b.reshape(g_hid, [rows, -1])
            dw_ih = b.mm(b.t(flat_in), b.reshape(self.x, [rows, -1]))
            dw_hh = b.mm(b.t(flat_hid), b.reshape(stacked(self.h_prev), [rows, -1]))
            grads = [dw_ih, dw_hh]
            if cfg.has_bias:
                grads += [b.sum(flat_in, [0]), b.sum(flat_hid, [0])]
        return dx, dh, dc, grads


def _sequence(mode):
    def rule(ctx, grads):
        cfg = _Config(ctx, mode)
        b = _Builder(ctx)
        lstm = mode == "lstm"
        x = ctx.input(0)
        if cfg.batch_first:
            x = b.transpose(x, 0, 1)
        hx = ctx.input(1)
        h0 = b.__getitem__(hx, 0) if lstm else hx
        c0 = b.__getitem__(hx, 1) if lstm else None
        plist = ctx.input(2)
        params = [b.__getitem__(plist, k) for k in range(cfg.layers * cfg.dirs * cfg.per)]
        need_x, need_state, need_w = ctx.needs_grad(0), ctx.needs_grad(1), ctx.needs_grad(2)

        # the forward again, keeping every step
        stack, layer_in = [], x
        for layer in range(cfg.layers):
            dirs, outs = [], []
            for d in range(cfg.dirs):
                k = layer * cfg.dirs + d
                w = params[k * cfg.per:(k + 1) * cfg.per]
                run = _Direction(b, cfg, (w[0], w[1]) + ((w[2], w[3]) if cfg.has_bias else
                                                         (None, None)), d == 1)
                out, _, _ = run.forward(layer_in, b.select(h0, 0, k),
                                        b.select(c0, 0, k) if lstm else None)
                dirs.append(run)
                outs.append(out)
            stack.append(dirs)
            layer_in = outs[0] if cfg.dirs == 1 else _cat_features(b, outs)

        # backward, from the top layer down
        g_out = grads[0]
        if g_out is not None and cfg.batch_first:
            g_out = b.transpose(g_out, 0, 1)
        g_h, g_c = grads[1], grads[2] if lstm else None
        dh0, dc0 = {}, {}
        dparams = [None] * len(params)
        for layer in reversed(range(cfg.layers)):
            d_layer_in = None
            for d, run in enumerate(stack[layer]):
                k = layer * cfg.dirs + d
                dout = g_out if g_out is None or cfg.dirs == 1 else \
                    b.narrow(g_out, 2, d * cfg.hidden, cfg.hidden)
                dx, dh0[k], dc0[k], wg = run.backward(
                    dout, None if g_h is None else b.select(g_h, 0, k),
                    None if g_c is None else b.select(g_c, 0, k),
                    need_x or layer > 0, need_state, need_w)
                d_layer_in = _add(b, d_layer_in, dx)
                if wg is not None:
                    dparams[k * cfg.per:k * cfg.per + len(wg)] = wg
            g_out = d_layer_in
        dx = g_out
        if dx is not None and cfg.batch_first:
            dx = b.transpose(dx, 0, 1)
        dhx = None
        if need_state:
            groups = range(cfg.layers * cfg.dirs)
            dhx = _stack_states(b, [dh0[k] for k in groups])
            if lstm:
                dhx = [dhx, _stack_states(b, [dc0[k] for k in groups])]
        return [dx, dhx, dparams if need_w else None] + [None] * 6
    rule.__name__ = f"_{mode}"
    return rule


def _cat_features(b, parts):
    return b.cat(b.ctx.emit("prim::ListConstruct", *parts), 2)


def _stack_states(b, parts):
    """The initial states' cotangents stacked as ``layer * dirs + direction``."""
    return b.stack(b.ctx.emit("prim::ListConstruct", *parts), 0)


RULES = {f"aten::{mode}": _sequence(mode) for mode in _GATES}

attach(RULES)
