"""The sequence ops of ``nn.LSTM``, ``nn.GRU`` and ``nn.RNN``, as their scripted and traced
graphs call them, with PyTorch's (CPU) semantics::

    %o : Tensor, %h : Tensor, %c : Tensor = aten::lstm(%x, %hx, %params, %has_biases,
        %num_layers, %dropout, %train, %bidirectional, %batch_first)      # hx: [h0, c0]
    %o : Tensor, %h : Tensor = aten::gru(%x, %h0, %params, ...)           # rnn_tanh, rnn_relu
    %o : Tensor, %h : Tensor, %c : Tensor = aten::lstm(%data, %batch_sizes, %hx, %params,
        %has_biases, %num_layers, %dropout, %train, %bidirectional)       # a PackedSequence

Both overloads of each op have nine arguments; which one a node is follows from its second
(lstm: a list is ``hx``, a tensor ``batch_sizes``) or third argument (gru/rnn: a list is
``params``).  ``params`` is the module's ``_flat_weights``: per layer and direction ``w_ih,
w_hh, b_ih, b_hh`` (the biases only with ``has_biases``), then ``w_hr`` for an LSTM with
``proj_size``.  Gates as PyTorch orders them: LSTM ``i, f, g, o``; GRU ``r, z, n`` with
``n = tanh(W_in x + b_in + r * (W_hn h + b_hn))``.  Layers feed each other, a bidirectional
layer's outputs are concatenated (forward first) and its final states stacked as
``layer * 2 + direction``.  Everything runs in float64 and is rounded once to the input's
dtype.  Dropout between layers is a training-time effect: ``train`` with ``dropout > 0`` is
refused (load modules in eval mode).  Unbatched (2-D) inputs never reach these ops: the
module's own code unsqueezes them.

The cells of ``nn.LSTMCell``, ``nn.GRUCell`` and ``nn.RNNCell`` (one step of 2-D rows, the
same gate math)::

    %h : Tensor, %c : Tensor = aten::lstm_cell(%x, %hx, %w_ih, %w_hh, %b_ih, %b_hh)
    %h : Tensor = aten::gru_cell(%x, %h0, %w_ih, %w_hh, %b_ih, %b_hh)     # rnn_tanh_cell, ...

Also ``aten::device`` (``torch.device("cpu")`` in traced code): the device string.
"""
from __future__ import annotations

import numpy as np

from ..ir.types import DEVICE, ListType, TensorType
from .registry import defop
from .tensor_common import arg, like, tensor_in

F64 = np.float64


def _sigmoid(xp, v):
    return 0.5 * (1.0 + xp.tanh(0.5 * v))   # no overflow for large |v|


def _lstm_step(xp, gi, h, c, w_hh, b_hh, w_hr):
    """One LSTM step of the rows ``h``/``c`` (gi: the input's gates, biases added)."""
    g = gi + h @ w_hh.T
    if b_hh is not None:
        g = g + b_hh
    i, f, cand, o = xp.split(g, 4, axis=-1)
    c = _sigmoid(xp, f) * c + _sigmoid(xp, i) * xp.tanh(cand)
    h = _sigmoid(xp, o) * xp.tanh(c)
    return (h if w_hr is None else h @ w_hr.T), c


def _gru_step(xp, gi, h, w_hh, b_hh):
    gh = h @ w_hh.T
    if b_hh is not None:
        gh = gh + b_hh
    i_r, i_z, i_n = xp.split(gi, 3, axis=-1)
    h_r, h_z, h_n = xp.split(gh, 3, axis=-1)
    r, z = _sigmoid(xp, i_r + h_r), _sigmoid(xp, i_z + h_z)
    n = xp.tanh(i_n + r * h_n)
    return (1.0 - z) * n + z * h


def _rnn_step(mode):
    def step(xp, gi, h, w_hh, b_hh):
        g = gi + h @ w_hh.T
        if b_hh is not None:
            g = g + b_hh
        return xp.tanh(g) if mode == "tanh" else xp.maximum(g, 0.0)
    return step


_GATES = {"lstm": 4, "gru": 3, "rnn_tanh": 1, "rnn_relu": 1}


def _direction(xp, mode, x, sizes, reverse, weights, h0, c0):
    """One layer in one direction over padded steps ``x`` (T, B, in) of which the first
    ``sizes[t]`` rows are live at step t; returns (outputs (T, B, H_out), h, c)."""
    w_ih, w_hh, b_ih, b_hh, w_hr = weights
    gi_all = x @ w_ih.T                       # every step's input projection at once
    if b_ih is not None:
        gi_all = gi_all + b_ih
    h, c = h0.copy(), None if c0 is None else c0.copy()
    out = xp.zeros(x.shape[:2] + (h.shape[-1],), dtype=F64)
    steps = range(x.shape[0] - 1, -1, -1) if reverse else range(x.shape[0])
    step = _gru_step if mode == "gru" else None if mode == "lstm" else _rnn_step(mode[4:])
    for t in steps:
        b = sizes[t]
        if mode == "lstm":
            h[:b], c[:b] = _lstm_step(xp, gi_all[t, :b], h[:b], c[:b], w_hh, b_hh, w_hr)
        else:
            h[:b] = step(xp, gi_all[t, :b], h[:b], w_hh, b_hh)
        out[t, :b] = h[:b]
    return out, h, c


def _check(cond, message):
    if not cond:
        raise RuntimeError(message)


def _layer_weights(mode, params, has_biases, num_layers, num_dirs):
    """``params`` grouped per (layer, direction) as (w_ih, w_hh, b_ih, b_hh, w_hr) in float64."""
    params = list(params)
    base = 4 if has_biases else 2
    groups = num_layers * num_dirs
    _check(groups > 0 and len(params) % groups == 0
           and len(params) // groups in (base, base + (mode == "lstm")),
           f"{mode}: expected {base * groups} weight tensors (w_ih, w_hh"
           f"{', b_ih, b_hh' if has_biases else ''} for each of {num_layers} layer(s) and "
           f"{num_dirs} direction(s){', plus w_hr with proj_size' if mode == 'lstm' else ''}), "
           f"got {len(params)}")
    k = len(params) // groups
    out = []
    for g in range(groups):
        p = [w.astype(F64, copy=False) for w in params[g * k:(g + 1) * k]]
        w_ih, w_hh = p[0], p[1]
        b_ih, b_hh = (p[2], p[3]) if has_biases else (None, None)
        w_hr = p[-1] if k == base + 1 else None
        out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
    return out


def _run(xp, mode, x, sizes, hx, params, has_biases, num_layers, dropout, train,
         bidirectional):
    """The whole stack over padded ``x`` (T, B, in); hx: [h0] or [h0, c0] (L*D, B, H)."""
    name = f"aten::{mode}"
    if train and dropout > 0 and num_layers > 1:
        raise RuntimeError(f"{name}: dropout={dropout} in training mode is not supported "
                           f"(torchlike runs inference: call module.eval() before saving)")
    _check(x.dtype.kind == "f", f"{name}: expected a floating-point input, got {x.dtype}")
    dirs = 2 if bidirectional else 1
    layers = _layer_weights(mode, params, has_biases, int(num_layers), dirs)
    gates = _GATES[mode]
    h0 = hx[0]
    c0 = hx[1] if mode == "lstm" else None
    in_size = layers[0][0].shape[1]
    _check(x.shape[-1] == in_size, f"{name}: input.size(-1) must be equal to input_size. "
                                   f"Expected {in_size}, got {x.shape[-1]}")
    hidden = layers[0][1].shape[1]
    cell = layers[0][0].shape[0] // gates
    batch = x.shape[1]
    expected_h = (int(num_layers) * dirs, batch, hidden)
    _check(tuple(h0.shape) == expected_h,
           f"{name}: Expected hidden size {expected_h}, got {list(h0.shape)}")
    if c0 is not None:
        expected_c = (int(num_layers) * dirs, batch, cell)
        _check(tuple(c0.shape) == expected_c,
               f"{name}: Expected hidden[1] size {expected_c}, got {list(c0.shape)}")
    h0 = h0.astype(F64)
    c0 = None if c0 is None else c0.astype(F64)
    layer_in = x.astype(F64)
    hs, cs = [], []
    for layer in range(int(num_layers)):
        outs = []
        for d in range(dirs):
            g = layer * dirs + d
            w = layers[g]
            _check(w[0].shape == (gates * cell, layer_in.shape[-1]),
                   f"{name}: weight_ih of layer {layer} has shape {list(w[0].shape)}, "
                   f"expected {[gates * cell, layer_in.shape[-1]]}")
            o, h, c = _direction(xp, mode, layer_in, sizes, d == 1, w, h0[g],
                                 None if c0 is None else c0[g])
            outs.append(o)
            hs.append(h)
            cs.append(c)
        layer_in = outs[0] if dirs == 1 else xp.concatenate(outs, axis=-1)
    dt = x.dtype
    h_n = xp.stack(hs).astype(dt)
    if mode == "lstm":
        return layer_in.astype(dt), h_n, xp.stack(cs).astype(dt)
    return layer_in.astype(dt), h_n


def _hidden(mode, hx):
    if mode == "lstm":
        _check(isinstance(hx, (list, tuple)) and len(hx) == 2, "lstm expects two hidden states")
        return list(hx)
    return [hx]


def _padded(xp, mode, x, hx, params, has_biases, num_layers, dropout, train, bidirectional,
            batch_first):
    _check(x.ndim == 3, f"aten::{mode}: input must have 3 dimensions, got {x.ndim}")
    if batch_first:
        x = x.transpose(1, 0, 2)
    res = _run(xp, mode, x, [x.shape[1]] * x.shape[0], _hidden(mode, hx), params, has_biases,
               num_layers, dropout, train, bidirectional)
    out = res[0].transpose(1, 0, 2) if batch_first else res[0]
    return (xp.ascontiguousarray(out),) + tuple(res[1:])


def _packed(xp, mode, data, batch_sizes, hx, params, has_biases, num_layers, dropout, train,
            bidirectional):
    """A PackedSequence's ``data`` (sum(batch_sizes), in): padded, run, packed again."""
    sizes = [int(b) for b in np.asarray(batch_sizes).reshape(-1)]
    _check(data.ndim == 2, f"aten::{mode}: packed input must have 2 dimensions, got {data.ndim}")
    _check(sizes and all(a >= b > 0 for a, b in zip(sizes, sizes[1:])) and sizes[-1] > 0
           and sum(sizes) == data.shape[0],
           f"aten::{mode}: batch_sizes {sizes} do not describe {data.shape[0]} packed rows")
    padded = xp.zeros((len(sizes), sizes[0], data.shape[1]), dtype=data.dtype)
    start = 0
    for t, b in enumerate(sizes):
        padded[t, :b] = data[start:start + b]
        start += b
    res = _run(xp, mode, padded, sizes, _hidden(mode, hx), params, has_biases, num_layers,
               dropout, train, bidirectional)
    out = xp.concatenate([res[0][t, :b] for t, b in enumerate(sizes)], axis=0)
    return (out,) + tuple(res[1:])


def _lstm(xp, x, a, b, c, d, e, f, g, h):
    if isinstance(a, (list, tuple)):   # lstm.input(input, hx, params, has_biases, ...)
        return _padded(xp, "lstm", x, a, b, c, d, e, f, g, h)
    return _packed(xp, "lstm", x, a, b, c, d, e, f, g, h)  # lstm.data(data, batch_sizes, ...)


def _sequence(mode):
    def impl(xp, x, a, b, c, d, e, f, g, h):
        if isinstance(b, (list, tuple)):  # gru.input(input, hx, params, has_biases, ...)
            return _padded(xp, mode, x, a, b, c, d, e, f, g, h)
        return _packed(xp, mode, x, a, b, c, d, e, f, g, h)  # gru.data(data, batch_sizes, ...)
    impl.__name__ = f"_{mode}"
    return impl


def _infer(n):
    def infer(node, types):
        t = like(tensor_in(types), shape=None)
        return [t] * n
    return infer


def _infer_sequence(n):
    """The padded overload's output shapes where the input's shape, the first weights' shapes
    (a ``ListConstruct`` of typed values, as a module's graph builds ``params``) and the
    flags are known: output (T, B, D * H_out) (batch_first: (B, T, ...)), h_n (L * D, B,
    H_out), an LSTM's c_n (L * D, B, H); H_out is w_hh's second dim (proj_size when given)."""
    plain = _infer(n)

    def infer(node, types):
        out = plain(node, types)
        x = tensor_in(types)
        # the PackedSequence overload has a tensor (batch_sizes) second, and for gru & co.
        # the hidden state third
        padded = not isinstance(types[1], TensorType) if n == 3 else (
            len(types) > 2 and isinstance(types[2], ListType))
        src = node.inputs[2].node if padded else None
        if src is None or src.kind != "prim::ListConstruct" or len(src.inputs) < 2 or \
                x.shape is None or len(x.shape) != 3 or None in x.shape:
            return out
        w_hh = src.inputs[1].type
        layers, bidir, batch_first = arg(node, 4, None), arg(node, 7, None), arg(node, 8, None)
        if not isinstance(w_hh, TensorType) or w_hh.shape is None or len(w_hh.shape) != 2 or \
                None in w_hh.shape or not isinstance(layers, int) or \
                not isinstance(bidir, bool) or not isinstance(batch_first, bool):
            return out
        dirs, h_out = 2 if bidir else 1, w_hh.shape[1]
        t, b = (x.shape[1], x.shape[0]) if batch_first else (x.shape[0], x.shape[1])
        seq = (b, t, dirs * h_out) if batch_first else (t, b, dirs * h_out)
        shapes = [seq, (layers * dirs, b, h_out)]
        if n == 3:
            shapes.append((layers * dirs, b, w_hh.shape[0] // 4))
        return [like(x, shape=s) for s in shapes]
    return infer


defop("aten::lstm", "Tensor input, Tensor[] hx, Tensor[] params, bool has_biases, "
      "int num_layers, float dropout, bool train, bool bidirectional, bool batch_first",
      _lstm, num_outputs=3, python_name=None, infer=_infer_sequence(3))
for _mode in ("gru", "rnn_tanh", "rnn_relu"):
    defop(f"aten::{_mode}", "Tensor input, Tensor hx, Tensor[] params, bool has_biases, "
          "int num_layers, float dropout, bool train, bool bidirectional, bool batch_first",
          _sequence(_mode), num_outputs=2, python_name=None, infer=_infer_sequence(2))


# -- the cells (nn.LSTMCell, nn.GRUCell, nn.RNNCell): one step of 2-D rows --------------------

def _cell_input(x, h, w_ih, b_ih):
    """The input's gates ``x @ w_ih.T + b_ih`` in float64, after ATen's size checks."""
    if x.shape[-1] != w_ih.shape[-1]:
        raise RuntimeError(f"input has inconsistent input_size: got {x.shape[-1]} expected "
                           f"{w_ih.shape[-1]}")
    if x.shape[0] != h.shape[0]:
        raise RuntimeError(f"Input batch size {x.shape[0]} doesn't match hidden0 batch size "
                           f"{h.shape[0]}")
    gi = x.astype(F64) @ w_ih.astype(F64).T
    return gi if b_ih is None else gi + b_ih.astype(F64)


def _f64(p):
    return None if p is None else p.astype(F64)


def _lstm_cell(xp, x, hx, w_ih, w_hh, b_ih=None, b_hh=None):
    h, c = hx
    gi = _cell_input(x, h, w_ih, b_ih)
    h1, c1 = _lstm_step(xp, gi, h.astype(F64), c.astype(F64), w_hh.astype(F64), _f64(b_hh), None)
    return h1.astype(x.dtype), c1.astype(x.dtype)


def _cell(mode):
    step = _gru_step if mode == "gru" else _rnn_step(mode.split("_")[1])

    def impl(xp, x, h, w_ih, w_hh, b_ih=None, b_hh=None):
        gi = _cell_input(x, h, w_ih, b_ih)
        return step(xp, gi, h.astype(F64), w_hh.astype(F64), _f64(b_hh)).astype(x.dtype)
    impl.__name__ = f"_{mode}_cell"
    return impl


_CELL_ARGS = "Tensor w_ih, Tensor w_hh, Tensor? b_ih=None, Tensor? b_hh=None"
defop("aten::lstm_cell", f"Tensor input, Tensor[] hx, {_CELL_ARGS}", _lstm_cell, num_outputs=2,
      python_name=None, infer=_infer(2))
for _mode in ("gru", "rnn_tanh", "rnn_relu"):
    defop(f"aten::{_mode}_cell", f"Tensor input, Tensor hx, {_CELL_ARGS}", _cell(_mode),
          python_name=None, infer=_infer(1))


def _device(xp, spec):
    """``torch.device("cpu")``: the device's string, as ``prim::device`` gives it."""
    return str(spec)


defop("aten::device", "str type", _device, python_name=None,
      infer=lambda node, types: [DEVICE])
