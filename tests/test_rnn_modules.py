"""``nn.LSTM``, ``nn.GRU`` and ``nn.RNN`` that PyTorch scripts or traces and saves
(``torch.jit.save``), loaded by ``jit.load`` and called with numpy inputs, against the modules
themselves in eval mode; and the sequence ops (``ops/rnn.py``) as one-node graphs, against
``torch.lstm`` & co.

A scripted LSTM's archive has no ``forward``: PyTorch saves its overloads as ``forward__0``
(a Tensor input) and ``forward__1`` (a PackedSequence), and a call picks the first that fits.
"""
import io
import zipfile

import numpy as np
import pytest

from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.ir import parse_graph

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning", "ignore::UserWarning",
                                        "ignore:Converting a tensor to a Python boolean")

CELLS = ["lstm", "gru", "rnn_tanh", "rnn_relu"]
CONFIGS = {  # num_layers, bidirectional, batch_first, bias
    "1-layer": dict(num_layers=1, bidirectional=False, batch_first=False),
    "2-layer-bidir-batch-first": dict(num_layers=2, bidirectional=True, batch_first=True),
    "2-layer-no-bias": dict(num_layers=2, bidirectional=False, batch_first=False, bias=False),
    "bidir": dict(num_layers=1, bidirectional=True, batch_first=False),
}
IN, HID = 6, 5


def make(torch, cell, dtype="float32", **config):
    torch.manual_seed(0)
    nn = torch.nn
    if cell == "lstm":
        m = nn.LSTM(IN, HID, **config)
    elif cell == "gru":
        m = nn.GRU(IN, HID, **config)
    else:
        m = nn.RNN(IN, HID, nonlinearity=cell[4:], **config)
    m = m.eval()
    return m.double() if dtype == "float64" else m


def inputs(torch, m, batch=3, steps=4, state=False, unbatched=False, dtype=None):
    dtype = dtype or next(m.parameters()).dtype
    shape = (steps, IN) if unbatched else \
        (batch, steps, IN) if m.batch_first else (steps, batch, IN)
    x = torch.randn(*shape, dtype=dtype)
    if not state:
        return (x,)
    dirs = 2 if m.bidirectional else 1
    hshape = (m.num_layers * dirs,) + (() if unbatched else (batch,))
    out = m.proj_size if getattr(m, "proj_size", 0) else m.hidden_size
    h = torch.randn(*hshape, out, dtype=dtype)
    if isinstance(m, torch.nn.LSTM):
        return (x, (h, torch.randn(*hshape, m.hidden_size, dtype=dtype)))
    return (x, h)


def numpy_args(args):
    return tuple(numpy_args(a) if isinstance(a, tuple) else a.numpy() for a in args)


def assert_same(got, want, atol=1e-5):
    """Values, dtypes, shapes and tuple structure."""
    if isinstance(want, tuple):
        assert isinstance(got, tuple) and len(got) == len(want), (type(got), got)
        for g, w in zip(got, want):
            assert_same(g, w, atol)
        return
    want = want.detach().numpy()
    assert isinstance(got, np.ndarray) and got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=atol)


def save_load(torch, compiled, tmp_path, name="m"):
    path = tmp_path / f"{name}.pt"
    torch.jit.save(compiled, str(path))
    return jit.load(path)


def check(torch, m, loaded, args):
    with torch.no_grad():
        want = m(*args)
    assert_same(loaded(*numpy_args(args)), want)


# -- modules ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("cell", CELLS)
def test_scripted(torch, tmp_path, cell, config):
    m = make(torch, cell, **CONFIGS[config])
    loaded = save_load(torch, torch.jit.script(m), tmp_path)
    assert "forward__0" in loaded._methods  # PyTorch's overload, picked by the call
    for state in (False, True):
        check(torch, m, loaded, inputs(torch, m, state=state))
    check(torch, m, loaded, inputs(torch, m, batch=1, steps=7))  # another signature


@pytest.mark.parametrize("cell", CELLS)
def test_scripted_unbatched(torch, tmp_path, cell):
    m = make(torch, cell, num_layers=2, bidirectional=True)
    loaded = save_load(torch, torch.jit.script(m), tmp_path)
    for state in (False, True):
        check(torch, m, loaded, inputs(torch, m, state=state, unbatched=True))


@pytest.mark.parametrize("state", [False, True], ids=["no-state", "state"])
@pytest.mark.parametrize("config", list(CONFIGS))
@pytest.mark.parametrize("cell", CELLS)
def test_traced(torch, tmp_path, cell, config, state):
    m = make(torch, cell, **CONFIGS[config])
    example = inputs(torch, m, state=state)
    loaded = save_load(torch, torch.jit.trace(m, example), tmp_path)
    check(torch, m, loaded, example)
    check(torch, m, loaded, inputs(torch, m, batch=2, state=state))  # batch size is traced


@pytest.mark.parametrize("mode", ["script", "trace"])
@pytest.mark.parametrize("cell", CELLS)
def test_float64(torch, tmp_path, cell, mode):
    m = make(torch, cell, "float64", num_layers=2, bidirectional=True, batch_first=True)
    args = inputs(torch, m, state=True)
    compiled = torch.jit.script(m) if mode == "script" else torch.jit.trace(m, args)
    loaded = save_load(torch, compiled, tmp_path)
    with torch.no_grad():
        want = m(*args)
    got = loaded(*numpy_args(args))
    assert got[0].dtype == np.float64
    assert_same(got, want, atol=1e-12)


@pytest.mark.parametrize("mode", ["script", "trace"])
def test_lstm_proj_size(torch, tmp_path, mode):
    torch.manual_seed(0)
    m = torch.nn.LSTM(IN, HID, num_layers=2, bidirectional=True, proj_size=3).eval()
    args = inputs(torch, m, state=True)
    compiled = torch.jit.script(m) if mode == "script" else torch.jit.trace(m, args)
    loaded = save_load(torch, compiled, tmp_path)
    check(torch, m, loaded, args)
    if mode == "script":
        check(torch, m, loaded, inputs(torch, m))


def _model_class(torch):
    nn = torch.nn

    class Tagger(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb = nn.Embedding(20, 8)
            self.lstm = nn.LSTM(8, 16, batch_first=True)
            self.fc = nn.Linear(16, 3)

        def forward(self, x):
            y, (h, c) = self.lstm(self.emb(x))
            return self.fc(y[:, -1])

    return Tagger


@pytest.mark.parametrize("mode", ["script", "trace"])
def test_embedding_lstm_linear(torch, tmp_path, mode):
    torch.manual_seed(0)
    m = _model_class(torch)().eval()
    x = torch.randint(0, 20, (2, 5))
    compiled = torch.jit.script(m) if mode == "script" else torch.jit.trace(m, (x,))
    loaded = save_load(torch, compiled, tmp_path)
    check(torch, m, loaded, (x,))
    check(torch, m, loaded, (torch.randint(0, 20, (4, 7)),))


def test_parent_calls_overloaded_forward(torch, tmp_path):
    """The parent's code calls ``(lstm).forward__0(...)`` as PyTorch writes it, or
    ``(lstm).forward(...)`` (the archive rewritten): both pick the Tensor overload."""
    torch.manual_seed(0)
    m = _model_class(torch)().eval()
    path = tmp_path / "m.pt"
    torch.jit.save(torch.jit.script(m), str(path))
    buf = io.BytesIO()
    with zipfile.ZipFile(path) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename.endswith("code/__torch__.py"):
                assert b"(lstm).forward__0(" in data
                data = data.replace(b"(lstm).forward__0(", b"(lstm).forward(")
            dst.writestr(info, data)
    rewritten = tmp_path / "rewritten.pt"
    rewritten.write_bytes(buf.getvalue())
    x = torch.randint(0, 20, (2, 5))
    for p in (path, rewritten):
        check(torch, m, jit.load(p), (x,))


def test_overload_errors(torch, tmp_path):
    m = make(torch, "lstm")
    loaded = save_load(torch, torch.jit.script(m), tmp_path)
    with pytest.raises(TypeError, match="no overload accepts these arguments"):
        loaded([1.0, 2.0])
    # the archive's own check (check_input), with PyTorch's message
    with pytest.raises(ExecutionError, match="input.size\\(-1\\) must be equal to input_size. "
                                             "Expected 6, got 7"):
        loaded(np.zeros((4, 3, 7), np.float32))
    with pytest.raises(ExecutionError, match="Expected hidden\\[0\\] size \\(1, 3, 5\\), got "
                                             "\\[1, 2, 5\\]"):
        loaded(np.zeros((4, 3, 6), np.float32),
               (np.zeros((1, 2, 5), np.float32), np.zeros((1, 3, 5), np.float32)))


def test_traced_bad_input_names_the_node(torch, tmp_path):
    m = make(torch, "gru")
    loaded = save_load(torch, torch.jit.trace(m, inputs(torch, m)), tmp_path)
    with pytest.raises(ExecutionError, match="aten::gru.*input.size\\(-1\\) must be equal to "
                                             "input_size. Expected 6, got 7"):
        loaded(np.zeros((4, 3, 7), np.float32))


# -- the ops as one-node graphs --------------------------------------------------------------------

def _op_graph(cell, n_weights, packed, dirs):
    lstm = cell == "lstm"
    hs = ["%h0", "%c0"] if lstm else ["%h0"]
    ws = [f"%w{i}" for i in range(n_weights)]
    head = ["%x : Tensor"] + (["%bs : Tensor"] if packed else []) + \
        [f"{v} : Tensor" for v in hs + ws]
    outs = ["%o : Tensor", "%h : Tensor"] + (["%c : Tensor"] if lstm else [])
    hx = "%hx" if lstm else "%h0"
    args = ["%x"] + (["%bs"] if packed else []) + \
        [hx, "%p", "%true", "%layers", "%drop", "%false", "%bidir"] + ([] if packed else ["%false"])
    lines = [f"graph({', '.join(head)}):",
             f"  %hx : Tensor[] = prim::ListConstruct({', '.join(hs)})" if lstm else "",
             f"  %p : Tensor[] = prim::ListConstruct({', '.join(ws)})",
             "  %true : bool = prim::Constant[value=1]()",
             "  %false : bool = prim::Constant[value=0]()",
             f"  %bidir : bool = prim::Constant[value={int(dirs == 2)}]()",
             "  %layers : int = prim::Constant[value=2]()",
             "  %drop : float = prim::Constant[value=0.]()",
             f"  {', '.join(outs)} = aten::{cell}({', '.join(args)})",
             f"  return ({', '.join(v.split(' ')[0] for v in outs)})"]
    return parse_graph("\n".join(line for line in lines if line))


@pytest.mark.parametrize("packed", [False, True], ids=["padded", "packed"])
@pytest.mark.parametrize("cell", CELLS)
def test_ops_as_graphs(torch, cell, packed):
    m = make(torch, cell, num_layers=2, bidirectional=True)
    weights = [w.detach() for w in m._flat_weights]
    dirs = 2
    g = _op_graph(cell, len(weights), packed, dirs)
    torch.manual_seed(1)
    h0 = torch.randn(2 * dirs, 3, HID)
    hs = [h0, torch.randn(2 * dirs, 3, HID)] if cell == "lstm" else [h0]
    fn = getattr(torch, cell)
    if packed:  # three sequences of lengths 4, 3, 1
        bs = torch.tensor([3, 2, 2, 1])
        x = torch.randn(int(bs.sum()), IN)
        head = (x, bs)
        want = fn(x, bs, hs if cell == "lstm" else h0, weights, True, 2, 0.0, False, True)
    else:
        x = torch.randn(4, 3, IN)
        head = (x,)
        want = fn(x, hs if cell == "lstm" else h0, weights, True, 2, 0.0, False, True, False)
    got = jit.run(g, *[t.numpy() for t in list(head) + hs + weights])
    assert_same(tuple(got), tuple(want))


def test_op_refuses_dropout_in_training(torch):
    m = make(torch, "lstm", num_layers=2)
    x = np.zeros((4, 3, IN), np.float32)
    h = np.zeros((2, 3, HID), np.float32)
    text = """graph(%x : Tensor, %h : Tensor, %c : Tensor, %w0 : Tensor, %w1 : Tensor,
          %w2 : Tensor, %w3 : Tensor, %w4 : Tensor, %w5 : Tensor, %w6 : Tensor, %w7 : Tensor):
      %hx : Tensor[] = prim::ListConstruct(%h, %c)
      %p : Tensor[] = prim::ListConstruct(%w0, %w1, %w2, %w3, %w4, %w5, %w6, %w7)
      %t : bool = prim::Constant[value=1]()
      %f : bool = prim::Constant[value=0]()
      %n : int = prim::Constant[value=2]()
      %d : float = prim::Constant[value=0.5]()
      %o : Tensor, %hn : Tensor, %cn : Tensor = aten::lstm(%x, %hx, %p, %t, %n, %d, %t, %f, %f)
      return (%o)"""
    weights = [w.detach().numpy() for w in m._flat_weights]
    with pytest.raises(ExecutionError, match="aten::lstm.*dropout=0.5 in training mode"):
        jit.run(parse_graph(text), x, h, h, *weights)


# -- the cells: nn.LSTMCell, nn.GRUCell, nn.RNNCell (aten::lstm_cell & co.) -------------------

def make_cell(torch, cell, dtype="float32", bias=True):
    torch.manual_seed(0)
    nn = torch.nn
    m = nn.LSTMCell(IN, HID, bias=bias) if cell == "lstm" else nn.GRUCell(IN, HID, bias=bias) \
        if cell == "gru" else nn.RNNCell(IN, HID, bias=bias, nonlinearity=cell[4:])
    m = m.eval()
    return m.double() if dtype == "float64" else m


def cell_inputs(torch, cell, batch=3, state=False, unbatched=False, dtype=None):
    shape = (IN,) if unbatched else (batch, IN)
    x = torch.randn(*shape, dtype=dtype)
    if not state:
        return (x,)
    h = torch.randn(*shape[:-1], HID, dtype=dtype)
    return (x, (h, torch.randn(*shape[:-1], HID, dtype=dtype))) if cell == "lstm" else (x, h)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("cell", CELLS)
def test_scripted_cells(torch, tmp_path, cell, dtype):
    m = make_cell(torch, cell, dtype, bias=cell != "gru")
    loaded = save_load(torch, torch.jit.script(m), tmp_path)
    tdtype = getattr(torch, dtype)
    for state in (False, True):
        for unbatched in (False, True):
            check(torch, m, loaded, cell_inputs(torch, cell, state=state, unbatched=unbatched,
                                                dtype=tdtype))


def test_cell_size_mismatch_is_atens_error(torch, tmp_path):
    m = make_cell(torch, "gru")
    loaded = save_load(torch, torch.jit.script(m), tmp_path)
    bad = np.zeros((3, IN + 1), np.float32)
    with pytest.raises(Exception, match="input has inconsistent input_size: got 7 expected 6"):
        loaded(bad)
    with pytest.raises(RuntimeError, match="input has inconsistent input_size: got 7 expected 6"):
        m(torch.from_numpy(bad))


@pytest.mark.parametrize("cell", CELLS)
def test_traced_cells(torch, tmp_path, cell):
    """Traced, a cell is its gate math (``aten::unsafe_chunk`` of the gates, in-place
    activations), not the cell op."""
    m = make_cell(torch, cell)
    args = cell_inputs(torch, cell, state=True)
    loaded = save_load(torch, torch.jit.trace(m, args), tmp_path)
    check(torch, m, loaded, args)
    check(torch, m, loaded, cell_inputs(torch, cell, batch=5, state=True))
