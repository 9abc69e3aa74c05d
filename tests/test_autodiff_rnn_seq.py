"""Derivatives of the sequence ops ``aten::lstm``, ``gru``, ``rnn_tanh`` and ``rnn_relu``
(``ops/derivatives_rnn_seq.py``) against ``torch.autograd``: ``nn.LSTM``/``nn.GRU``/``nn.RNN``
in small models that PyTorch scripts or traces and saves, loaded by ``jit.load`` (the
parameters' gradients come back by name), and functions calling ``torch.lstm`` & co. with the
weights as arguments, run as ``ScriptFunction(parse_graph(str(graph)))``; the refusals
(PackedSequence, ``proj_size``, dropout in training mode) and the size of the emitted graph."""
from __future__ import annotations

import warnings
from typing import Tuple

import numpy as np
import pytest

from tests.autodiff_check import check_against_torch, torch_graph_text
from torchlike import ir, jit
from torchlike.autodiff.api import compile_vjp, run_vjp
from torchlike.errors import UnsupportedOpError
from torchlike.jit.script_function import ScriptFunction

torch = pytest.importorskip("torch")
nn = torch.nn
Tensor = torch.Tensor

pytestmark = [pytest.mark.filterwarnings("ignore::UserWarning", "ignore::DeprecationWarning"),
              pytest.mark.usefixtures("unfused")]  # the rules are what is tested here

IN, HID, STEPS, BATCH = 4, 3, 4, 2
CELLS = ["lstm", "gru", "rnn_tanh", "rnn_relu"]
CONFIGS = {
    "1-layer": dict(num_layers=1),
    "2-layer-bidir-batch-first": dict(num_layers=2, bidirectional=True, batch_first=True),
    "2-layer-no-bias": dict(num_layers=2, bias=False),
}
TOL = {"float64": dict(rtol=1e-9, atol=1e-11), "float32": dict(rtol=2e-4, atol=2e-5)}




# -- models around the modules: hx given or omitted, and which results leave the model -----------

class LstmFull(nn.Module):  # hx given; output, h_n and c_n returned
    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x, h0, c0) -> Tuple[Tensor, Tensor, Tensor]:
        out, (h, c) = self.rnn(x, (h0, c0))
        return out, h, c


class LstmOut(LstmFull):  # hx omitted; the output only
    def forward(self, x):
        out, (h, c) = self.rnn(x)
        return out


class LstmC(LstmFull):  # c_n only: no cotangent reaches the output or h_n
    def forward(self, x, h0, c0):
        out, (h, c) = self.rnn(x, (h0, c0))
        return c


class SeqFull(LstmFull):
    def forward(self, x, h0) -> Tuple[Tensor, Tensor]:
        out, h = self.rnn(x, h0)
        return out, h


class SeqOut(LstmFull):
    def forward(self, x):
        out, h = self.rnn(x)
        return out


class LstmH(LstmFull):  # h_n only, hx omitted: c_n unused
    def forward(self, x):
        out, (h, c) = self.rnn(x)
        return h


class SeqLastH(LstmFull):
    def forward(self, x):
        out, h = self.rnn(x)
        return h


FORMS = {"state-all": (LstmFull, SeqFull, True), "out": (LstmOut, SeqOut, False)}


def _rnn(cell, dtype, **kw):
    torch.manual_seed(0)
    if cell == "lstm":
        m = nn.LSTM(IN, HID, **kw)
    elif cell == "gru":
        m = nn.GRU(IN, HID, **kw)
    else:
        m = nn.RNN(IN, HID, nonlinearity=cell[4:], **kw)
    return (m.double() if dtype == "float64" else m).eval()


def _inputs(m, rnn, state, dtype, seed=0):
    rng = np.random.default_rng(seed)
    shape = (BATCH, STEPS, IN) if rnn.batch_first else (STEPS, BATCH, IN)
    arrays = [rng.uniform(-1, 1, shape)]
    if state:
        n = rnn.num_layers * (2 if rnn.bidirectional else 1)
        arrays += [rng.uniform(-1, 1, (n, BATCH, HID))
                   for _ in range(2 if isinstance(rnn, nn.LSTM) else 1)]
    return [a.astype(dtype) for a in arrays]


def _loaded(model, arrays, capture, tmp_path):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        compiled = torch.jit.script(model) if capture == "script" else \
            torch.jit.trace(model, tuple(torch.from_numpy(a) for a in arrays))
    path = tmp_path / "m.pt"
    torch.jit.save(compiled, str(path))
    return jit.load(path)


def check_module(loaded, model, arrays, rtol, atol, prefix=""):
    """``jit.vjp`` of the loaded model against autograd on the model: outputs, the inputs'
    gradients and every parameter's (the dict by name)."""
    outs, pullback = jit.vjp(loaded, *arrays)
    outs = outs if isinstance(outs, tuple) else (outs,)
    rng = np.random.default_rng(1)
    cots = [rng.standard_normal(o.shape).astype(o.dtype) for o in outs]
    grads = pullback(tuple(cots) if len(cots) > 1 else cots[0])
    ts = [torch.tensor(a, requires_grad=True) for a in arrays]
    model.zero_grad()
    ref = model(*ts)
    ref = ref if isinstance(ref, tuple) else (ref,)
    torch.autograd.backward(list(ref), [torch.from_numpy(c) for c in cots])
    for o, r in zip(outs, ref):
        np.testing.assert_allclose(o, r.detach().numpy(), rtol=max(rtol, 1e-6), atol=1e-6)
    assert len(grads) == len(arrays) + 1
    for i, (g, t) in enumerate(zip(grads, ts)):
        assert g.dtype == arrays[i].dtype
        np.testing.assert_allclose(g, t.grad.numpy(), rtol=rtol, atol=atol,
                                   err_msg=f"input {i}")
    params = dict(model.named_parameters())
    assert sorted(grads[-1]) == sorted(prefix + n for n in params)
    for name, p in params.items():
        np.testing.assert_allclose(grads[-1][prefix + name], p.grad.numpy(), rtol=rtol,
                                   atol=atol, err_msg=name)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("conf", list(CONFIGS))
@pytest.mark.parametrize("cell", CELLS)
def test_module_gradients_match_torch(tmp_path, cell, conf, form, dtype):
    rnn = _rnn(cell, dtype, **CONFIGS[conf])
    lstm_cls, seq_cls, state = FORMS[form]
    model = (lstm_cls if cell == "lstm" else seq_cls)(rnn)
    arrays = _inputs(model, rnn, state, dtype)
    check_module(_loaded(model, arrays, "trace", tmp_path), model, arrays, **TOL[dtype])


# A scripted nn.LSTM & co. checks ``input.dim()`` and unsqueezes an unbatched input in a
# ``prim::If``: the autodiff pipeline folds the input's shape queries (passes/shape_queries.py),
# so the branch not taken goes and the sequence op's input has a static shape; a given h0 of
# nn.GRU/nn.RNN (``Optional[Tensor]``) passes through ``prim::unchecked_cast`` (the identity).
@pytest.mark.parametrize("form", list(FORMS))
@pytest.mark.parametrize("cell", CELLS)
def test_scripted_module_gradients_match_torch(tmp_path, cell, form):
    rnn = _rnn(cell, "float64", **CONFIGS["2-layer-bidir-batch-first"])
    lstm_cls, seq_cls, state = FORMS[form]
    model = (lstm_cls if cell == "lstm" else seq_cls)(rnn)
    arrays = _inputs(model, rnn, state, "float64")
    check_module(_loaded(model, arrays, "script", tmp_path), model, arrays, **TOL["float64"])


@pytest.mark.parametrize("name", ["lstm_h", "lstm_c", "gru_h", "rnn_relu_h"])
def test_final_state_cotangent_only(tmp_path, name):
    """Only h_n (or c_n) leaves the model: the rule gets None for the other outputs."""
    cell = name.rsplit("_", 1)[0]
    rnn = _rnn(cell, "float64", num_layers=2, bidirectional=True)
    model = LstmC(rnn) if name == "lstm_c" else LstmH(rnn) if cell == "lstm" else SeqLastH(rnn)
    arrays = _inputs(model, rnn, name == "lstm_c", "float64", seed=2)
    check_module(_loaded(model, arrays, "trace", tmp_path), model, arrays, **TOL["float64"])


@pytest.mark.parametrize("cell", ["gru", "rnn_tanh"])
def test_bare_traced_module(tmp_path, cell):
    """The traced nn.GRU / nn.RNN itself (h0 given, (output, h_n) returned): parameters by
    their own names."""
    rnn = _rnn(cell, "float64", num_layers=2, bidirectional=True, batch_first=True)
    arrays = _inputs(rnn, rnn, True, "float64", seed=3)
    check_module(_loaded(rnn, arrays, "trace", tmp_path), rnn, arrays, **TOL["float64"])


# -- the ops called directly, weights as arguments -----------------------------------------------

def lstm_bidir(x, h, c, w0, w1, w2, w3, w4, w5, w6, w7):
    o, hn, cn = torch.lstm(x, [h, c], [w0, w1, w2, w3, w4, w5, w6, w7], True, 1, 0.0, False,
                           True, True)
    return o, hn, cn


def gru_2_layers(x, h, w0, w1, w2, w3):
    o, hn = torch.gru(x, h, [w0, w1, w2, w3], False, 2, 0.0, False, False, False)
    return o, hn


def rnn_tanh_h_only(x, h, w0, w1, w2, w3):
    o, hn = torch.rnn_tanh(x, h, [w0, w1, w2, w3], True, 1, 0.0, False, False, False)
    return hn


def rnn_relu_out_only(x, h, w0, w1):
    o, hn = torch.rnn_relu(x, h, [w0, w1], False, 1, 0.5, False, False, True)  # eval: no dropout
    return o


def _weights(gates, layers, dirs, bias):
    s = []
    for layer in range(layers):
        for _ in range(dirs):
            s += [(gates * HID, IN if layer == 0 else HID * dirs), (gates * HID, HID)]
            s += [(gates * HID,), (gates * HID,)] if bias else []
    return s


FUNCTIONS = {
    "lstm_bidir": (lstm_bidir, [(BATCH, STEPS, IN)] + [(2, BATCH, HID)] * 2
                   + _weights(4, 1, 2, True)),
    "gru_2_layers": (gru_2_layers, [(STEPS, BATCH, IN), (2, BATCH, HID)]
                     + _weights(3, 2, 1, False)),
    "rnn_tanh_h_only": (rnn_tanh_h_only, [(STEPS, BATCH, IN), (1, BATCH, HID)]
                        + _weights(1, 1, 1, True)),
    "rnn_relu_out_only": (rnn_relu_out_only, [(BATCH, STEPS, IN), (1, BATCH, HID)]
                          + _weights(1, 1, 1, False)),
}


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("capture", ["script", "trace"])
@pytest.mark.parametrize("name", list(FUNCTIONS))
def test_op_gradients_match_torch(name, capture, dtype):
    fn, shapes = FUNCTIONS[name]
    rng = np.random.default_rng(len(name))
    arrays = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    text = torch_graph_text(fn, arrays, capture)
    assert f"aten::{name[:8] if name.startswith('rnn') else name.split('_')[0]}(" in text
    check_against_torch(ScriptFunction(ir.parse_graph(text)), fn, arrays, **TOL[dtype])


def lstm_out_c(x, h, c, w0, w1, w2, w3):
    o, hn, cn = torch.lstm(x, [h, c], [w0, w1, w2, w3], True, 1, 0.0, False, False, False)
    return o, cn


@pytest.mark.parametrize("wrt", [(0,), (1, 2), (3, 6)], ids=["input", "state", "weights"])
def test_gradients_of_some_inputs(wrt):
    """Differentiating with respect to some inputs only (the rule emits no cotangents for the
    others: ``ctx.needs_grad``)."""
    rng = np.random.default_rng(5)
    shapes = [(STEPS, BATCH, IN), (1, BATCH, HID), (1, BATCH, HID)] + _weights(4, 1, 1, True)
    arrays = [rng.uniform(-1, 1, s) for s in shapes]
    fn = ScriptFunction(ir.parse_graph(torch_graph_text(lstm_out_c, arrays, "script")))
    outs, pullback = run_vjp(compile_vjp(fn, *arrays, wrt=list(wrt)), arrays)
    cots = [rng.standard_normal(o.shape) for o in outs]
    grads = pullback(tuple(cots))
    ts = [torch.tensor(a, requires_grad=i in wrt) for i, a in enumerate(arrays)]
    torch.autograd.backward(list(lstm_out_c(*ts)), [torch.from_numpy(c) for c in cots])
    assert len(grads) == len(wrt)
    for g, i in zip(grads, wrt):
        np.testing.assert_allclose(g, ts[i].grad.numpy(), rtol=1e-9, atol=1e-11)


# -- refusals --------------------------------------------------------------------------------------

def lstm_packed(x, bs, h, c, w0, w1):
    o, hn, cn = torch.lstm(x, bs, [h, c], [w0, w1], False, 1, 0.0, False, False)
    return o


def gru_packed(x, bs, h, w0, w1):
    o, hn = torch.gru(x, bs, h, [w0, w1], False, 1, 0.0, False, False)
    return o


def gru_dropout_training(x, h, w0, w1, w2, w3):
    o, hn = torch.gru(x, h, [w0, w1, w2, w3], False, 2, 0.5, True, False, False)
    return o


def _refused(fn, arrays, match):
    g = ir.parse_graph(torch_graph_text(fn, arrays, "script"))
    with pytest.raises(UnsupportedOpError, match=match):
        jit.vjp(ScriptFunction(g), *arrays)


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_packed_sequence_is_refused(cell):
    rng = np.random.default_rng(0)
    gates = 4 if cell == "lstm" else 3
    x, bs = rng.uniform(-1, 1, (5, IN)), np.array([2, 2, 1])
    h = [rng.uniform(-1, 1, (1, 2, HID)) for _ in range(2 if cell == "lstm" else 1)]
    ws = [rng.uniform(-1, 1, s) for s in _weights(gates, 1, 1, False)]
    _refused(lstm_packed if cell == "lstm" else gru_packed, [x, bs] + h + ws,
             r"no derivative for .*aten::" + cell + r".*PackedSequence")


def test_dropout_in_training_is_refused():
    rng = np.random.default_rng(0)
    arrays = [rng.uniform(-1, 1, s) for s in [(STEPS, BATCH, IN), (2, BATCH, HID)]
              + _weights(3, 2, 1, False)]
    _refused(gru_dropout_training, arrays, r"no derivative for .*aten::gru.*dropout=0.5 in "
                                           r"training mode")


def test_proj_size_is_refused(tmp_path):
    torch.manual_seed(0)
    model = LstmFull(nn.LSTM(IN, HID, proj_size=2).double().eval())
    arrays = [np.random.default_rng(0).uniform(-1, 1, s)
              for s in [(STEPS, BATCH, IN), (1, BATCH, 2), (1, BATCH, HID)]]
    with pytest.raises(UnsupportedOpError, match=r"no derivative for .*aten::lstm.*proj_size"):
        jit.vjp(_loaded(model, arrays, "trace", tmp_path), *arrays)


# -- the emitted graph ------------------------------------------------------------------------------

def test_backward_graph_grows_linearly_with_steps():
    """One ``linear`` for all steps' input gates per layer and direction, one matmul per step
    of the recurrence forward and back, one matmul each for the input's and weights'
    cotangents: the graph has a bounded number of nodes per step."""
    fn, shapes = FUNCTIONS["lstm_bidir"]
    sizes = {}
    for steps in (8, 16):
        rng = np.random.default_rng(0)
        arrays = [rng.uniform(-1, 1, (BATCH, steps, IN))] + \
            [rng.uniform(-1, 1, s) for s in shapes[1:]]
        g = ir.parse_graph(torch_graph_text(fn, arrays, "script"))
        _, bwd = jit.vjp_graphs(ScriptFunction(g), *arrays)
        kinds = [n.kind for n in bwd.nodes]
        inputs_3d = [n for n in bwd.nodes if n.kind == "aten::linear"
                     and n.inputs[0].type.rank == 3]
        assert len(inputs_3d) == 2  # the two directions' input gates, all steps at once
        assert kinds.count("aten::mm") <= 2 * (2 * steps + 4)
        sizes[steps] = len(kinds)
    assert sizes[16] - sizes[8] <= 8 * 2 * 48  # about 44 nodes per step and direction


class LossOfLstm(nn.Module):
    """A training step's shape: a loss reduced from the output (the sequence op's output
    shapes are inferred, so the reduction after it differentiates)."""

    def __init__(self, rnn):
        super().__init__()
        self.rnn = rnn

    def forward(self, x):
        out = self.rnn(x)[0]
        return (out * out).mean() + out[:, -1].sum()


@pytest.mark.parametrize("capture", ["script", "trace"])
@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_grad_of_a_loss_after_the_sequence_op(tmp_path, cell, capture):
    rnn = _rnn(cell, "float64", num_layers=2, bidirectional=True, batch_first=True)
    model = LossOfLstm(rnn)
    x = np.random.default_rng(4).uniform(-1, 1, (2, 4, rnn.input_size))
    loaded = _loaded(model, [x], capture, tmp_path)
    gx, gparams = jit.grad(loaded)(x)
    t = torch.tensor(x, requires_grad=True)
    model.zero_grad()
    model(t).backward()
    np.testing.assert_allclose(gx, t.grad.numpy(), rtol=1e-9, atol=1e-12)
    for name, p in model.named_parameters():
        np.testing.assert_allclose(gparams[name], p.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)


def test_nested_tuple_outputs(tmp_path):
    """A traced nn.LSTM itself returns ``(out, (h_n, c_n))``: the outputs come back nested so,
    and the pullback takes its cotangents nested the same way (None for a whole tuple)."""
    rnn = _rnn("lstm", "float64", num_layers=1)
    x = np.random.default_rng(5).uniform(-1, 1, (STEPS, BATCH, IN))
    loaded = _loaded(rnn, [x], "trace", tmp_path)
    (out, (h, c)), pullback = jit.vjp(loaded, x)
    rng = np.random.default_rng(6)
    cots = (rng.standard_normal(out.shape), (rng.standard_normal(h.shape), None))
    gx, gparams = pullback(cots)
    t = torch.tensor(x, requires_grad=True)
    rnn.zero_grad()
    tout, (th, tc) = rnn(t)
    torch.autograd.backward([tout, th], [torch.from_numpy(cots[0]), torch.from_numpy(cots[1][0])])
    np.testing.assert_allclose(out, tout.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(gx, t.grad.numpy(), rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose(gparams["weight_hh_l0"], rnn.weight_hh_l0.grad.numpy(), rtol=1e-9)
    gx2, _ = pullback((cots[0], None))   # no cotangent for (h_n, c_n)
    assert gx2.shape == x.shape
    with pytest.raises(jit.AutodiffError, match="nested like the outputs"):
        pullback((cots[0], cots[1][0]))


@pytest.mark.parametrize("cell", ["lstm", "gru"])
def test_bare_scripted_module_with_overloaded_forward(tmp_path, cell):
    """A scripted nn.LSTM / nn.GRU saves ``forward__0`` / ``forward__1`` (a tensor or a
    PackedSequence input): the overload the primals fit is differentiated, ``hx=None`` baked
    in as a constant."""
    rnn = _rnn(cell, "float64", num_layers=2, bidirectional=True)
    x = np.random.default_rng(7).uniform(-1, 1, (STEPS, BATCH, IN))
    loaded = _loaded(rnn, [x], "script", tmp_path)
    outs, pullback = jit.vjp(loaded, x)
    out = outs[0]
    cot = np.random.default_rng(8).standard_normal(out.shape)
    gx, gparams = pullback((cot, None))
    t = torch.tensor(x, requires_grad=True)
    rnn.zero_grad()
    rnn(t)[0].backward(torch.from_numpy(cot))
    np.testing.assert_allclose(gx, t.grad.numpy(), rtol=1e-9, atol=1e-12)
    for name, p in rnn.named_parameters():
        np.testing.assert_allclose(gparams[name], p.grad.numpy(), rtol=1e-9, atol=1e-12,
                                   err_msg=name)
