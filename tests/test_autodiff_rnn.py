"""Derivatives of the recurrent cells (``aten::lstm_cell``, ``gru_cell``, ``rnn_tanh_cell``,
``rnn_relu_cell``: ``ops/derivatives_rnn.py``) as PyTorch scripts them, and of the same cells as
PyTorch *traces* them -- decomposed into ``linear``, ``add_``, ``unsafe_chunk`` and in-place
``sigmoid_``/``tanh_`` on the chunks, which ``passes/remove_mutation.py`` makes functional
(pieces of a fresh tensor nobody else reads) -- against ``torch.autograd``."""
from __future__ import annotations

import numpy as np
import pytest

from tests.autodiff_check import TOLERANCES, check_against_torch, torch_graph_text
from torchlike import ir, jit
from torchlike.ir.types import type_of_python_value
from torchlike.jit.script_function import ScriptFunction
from torchlike.passes import infer_types
from torchlike.passes.remove_mutation import remove_mutation

torch = pytest.importorskip("torch")

N, I, H = 3, 4, 5


def lstm(x, h, c, wi, wh, bi, bh):
    h1, c1 = torch.lstm_cell(x, (h, c), wi, wh, bi, bh)
    return h1 * 2.0, c1


def lstm_h_only(x, h, c, wi, wh):
    h1, c1 = torch.lstm_cell(x, (h, c), wi, wh)
    return h1


def lstm_c_only(x, h, c, wi, wh, bi, bh):
    h1, c1 = torch.lstm_cell(x, (h, c), wi, wh, bi, bh)
    return c1 + 1.0


def gru(x, h, wi, wh, bi, bh):
    return torch.gru_cell(x, h, wi, wh, bi, bh)


def rnn_tanh(x, h, wi, wh, bi, bh):
    return torch.rnn_tanh_cell(x, h, wi, wh, bi, bh)


def rnn_relu(x, h, wi, wh):
    return torch.rnn_relu_cell(x, h, wi, wh)


def _shapes(gates, bias, hidden_state=1):
    s = [(N, I)] + [(N, H)] * hidden_state + [(gates * H, I), (gates * H, H)]
    return s + ([(gates * H,), (gates * H,)] if bias else [])


CASES = {
    "lstm": (lstm, _shapes(4, True, 2)),
    "lstm_h_only": (lstm_h_only, _shapes(4, False, 2)),
    "lstm_c_only": (lstm_c_only, _shapes(4, True, 2)),
    "gru": (gru, _shapes(3, True)),
    "rnn_tanh": (rnn_tanh, _shapes(1, True)),
    "rnn_relu": (rnn_relu, _shapes(1, False)),
}


pytestmark = pytest.mark.usefixtures("unfused")  # the rules are what is tested here


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("capture", ["script", "trace"])
@pytest.mark.parametrize("name", list(CASES))
def test_cell_gradients_match_torch(name, capture, dtype):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(len(name))
    arrays = [rng.uniform(-1, 1, s).astype(dtype) for s in shapes]
    text = torch_graph_text(fn, arrays, capture)
    if capture == "script":
        assert f"aten::{name.split('_')[0] if name.startswith('lstm') else name}_cell" in text
    check_against_torch(ScriptFunction(ir.parse_graph(text)), fn, arrays, **TOLERANCES[dtype])


def test_traced_cell_mutations_become_functional():
    """PyTorch's traced LSTM cell writes in place into the chunks of a fresh gate tensor and
    into a fresh sum: nothing else reads them, so every in-place op is made functional."""
    arrays = [np.random.default_rng(0).uniform(-1, 1, s).astype(np.float32)
              for s in _shapes(4, True, 2)]
    g = ir.parse_graph(torch_graph_text(lstm, arrays, "trace"))
    assert any(n.kind.endswith("_") for n in g.nodes)
    infer_types(g, [type_of_python_value(a) for a in arrays])
    remove_mutation(g)
    assert not [n.kind for n in g.nodes if n.kind.endswith("_")], g
    want = [t.numpy() for t in lstm(*map(torch.from_numpy, arrays))]
    for got, w in zip(jit.run(g, *arrays), want):
        np.testing.assert_allclose(got, w, rtol=1e-5, atol=1e-6)


def test_a_piece_read_elsewhere_stays_in_place():
    """The write into a chunk is kept when the chunked tensor is read again afterwards."""
    text = """graph(%x : Float(2, 4)):
  %two : int = prim::Constant[value=2]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%x, %two)
  %l : Tensor[] = aten::chunk(%y, %two, %one)
  %a : Tensor, %b : Tensor = prim::ListUnpack(%l)
  %s : Tensor = aten::sigmoid_(%a)
  %r : Tensor = aten::add(%y, %one, %one)
  return (%s, %r)"""
    g = ir.parse_graph(text)
    infer_types(g, [type_of_python_value(np.ones((2, 4), np.float32))])
    remove_mutation(g)
    assert "aten::sigmoid_" in [n.kind for n in g.nodes]
    x = np.arange(8, dtype=np.float32).reshape(2, 4)
    s, r = jit.run(ir.parse_graph(text), x)
    y = x * 2
    y[:, :2] = 1 / (1 + np.exp(-y[:, :2]))
    np.testing.assert_allclose(r, y + 1, rtol=1e-6)
