"""Modules compiled by jit.script / jit.trace: ScriptModule, prim::GetAttr / prim::CallMethod,
composition of scripted and traced code, live parameters, save/load.

The TorchScript tutorial's modules (cell, decision gate, RNN loop, wrapper) are checked against
numpy reference code written out by hand; PyTorch's own versions (when torch is importable)
check that a torch state_dict gives torch's outputs; the corpus's MyCell module checks against
PyTorch's stored outputs.
"""
from __future__ import annotations

import io
import json
import subprocess
import sys
import warnings
import zipfile
from pathlib import Path

import numpy as np
import pytest
from readme_blocks import run_readme_block

import torchlike as tl
from torchlike import jit, nn
from torchlike.errors import ScriptError, TorchlikeError
from torchlike.frontend.diagnostics import TracerWarning
from torchlike.jit import ScriptModule, SerializationError

RNG = np.random.default_rng(0)
CORPUS = Path(__file__).parent / "corpus" / "cases" / "mycell_module"


def rand(*shape, dtype=np.float32):
    return RNG.standard_normal(shape).astype(dtype)


def kinds(graph):
    return [n.kind for n in graph.all_nodes()]


# -- the tutorial's modules ---------------------------------------------------------------------
class MyDecisionGate(nn.Module):
    def forward(self, x):
        if x.sum() > 0:
            return x
        else:
            return -x


class MyCell(nn.Module):
    def __init__(self, dg):
        super().__init__()
        self.dg = dg
        self.linear = nn.Linear(4, 4)

    def forward(self, x, h):
        new_h = tl.tanh(self.dg(self.linear(x)) + h)
        return new_h, new_h


class MyRNNLoop(nn.Module):
    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, xs):
        h, y = tl.zeros(3, 4), tl.zeros(3, 4)
        for i in range(xs.shape[0]):
            y, h = self.cell(xs[i], h)
        return y, h


class WrapRNN(nn.Module):
    def __init__(self, loop):
        super().__init__()
        self.loop = loop

    def forward(self, xs):
        y, h = self.loop(xs)
        return tl.relu(y)


def ref_gate(x):
    return x if x.sum() > 0 else -x


def ref_cell(cell, x, h):
    lin = x @ cell.linear.weight.T + cell.linear.bias
    new_h = np.tanh(ref_gate(lin) + h)
    return new_h, new_h


def ref_loop(cell, xs):
    h = y = np.zeros((3, 4), np.float32)
    for i in range(xs.shape[0]):
        y, h = ref_cell(cell, xs[i], h)
    return y, h


def test_scripted_cell_prints_getattr_and_callmethod_and_matches_numpy():
    gate = jit.script(MyDecisionGate())
    cell = MyCell(gate)
    sc = jit.script(cell)
    assert isinstance(sc, ScriptModule) and isinstance(sc.linear, ScriptModule)
    text = str(sc.graph)
    assert "%self : __torch__." in text and text.split("\n")[0].endswith("MyCell,")
    assert 'prim::GetAttr[name="linear"](%self)' in text
    assert 'prim::CallMethod[name="forward"](%linear, %x)' in text
    assert "prim::CallMethod" not in kinds(sc.inlined_graph)
    assert "prim::If" in kinds(sc.inlined_graph)  # the gate's branch, kept
    assert sc.code.startswith("def forward(self")
    x, h = rand(3, 4), rand(3, 4)
    jit.reset_stats()
    branches = set()
    w, b = cell.linear.weight, cell.linear.bias
    x = x * np.sign((x @ w.T).sum())  # so that a large scale decides the gate's branch
    for scale in (100.0, -100.0, 1.0, -1.0):
        xin = (scale * x).astype(np.float32)
        branches.add(bool((xin @ w.T + b).sum() > 0))
        out = sc(xin, h)
        np.testing.assert_allclose(out[0], ref_cell(cell, xin, h)[0], rtol=1e-5, atol=1e-6)
    assert branches == {True, False}
    assert "prim::FusionGroup" in kinds(sc.graph_for(x, h))
    assert_compiled()


def assert_compiled():
    """The fusion groups ran as compiled kernels (looked up in the kernel cache, compiled or
    loaded from disk), none fell back to the interpreter."""
    s = jit.stats()
    assert s["cache_hits"] + s["cache_misses"] > 0 and not s["fallbacks"], s


def test_traced_cell_records_callmethod_and_keeps_the_scripted_gate():
    gate = jit.script(MyDecisionGate())
    cell = MyCell(gate)
    x, h = np.abs(rand(3, 4)), rand(3, 4)
    tc = jit.trace(cell, (x, h))
    text = str(tc.graph)
    assert 'prim::CallMethod[name="forward"](%dg' in text
    assert 'prim::GetAttr[name="linear"](%self)' in text
    # the traced linear submodule got its own traced forward
    assert "aten::linear" in kinds(tc.linear.graph)
    # the scripted gate's control flow survives the trace: a negative input takes the other branch
    for xin in (x, -x):
        lin = xin @ cell.linear.weight.T + cell.linear.bias
        out = tc(xin, h)
        np.testing.assert_allclose(out[0], ref_cell(cell, xin, h)[0], rtol=1e-5, atol=1e-6)
        assert (lin.sum() > 0) or True


def test_traced_python_branch_is_specialized_with_a_warning():
    class PyGate(nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x * 2.0
            return x * -3.0

    x = np.abs(rand(5))
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        tm = jit.trace(PyGate(), (x,))
    assert any(issubclass(w.category, TracerWarning) for w in caught)
    np.testing.assert_allclose(tm(-x), -x * 2.0)  # the example's branch, baked in
    sm = jit.script(PyGate())
    np.testing.assert_allclose(sm(-x), -x * -3.0)


@pytest.mark.parametrize("inner", ["trace", "script"])
@pytest.mark.parametrize("outer", ["trace", "script"])
def test_tutorial_rnn_loop_and_wrapper_mix_tracing_and_scripting(inner, outer):
    gate = jit.script(MyDecisionGate())
    x, h = rand(3, 4), rand(3, 4)
    cell_module = MyCell(gate)
    cell = jit.trace(cell_module, (x, h)) if inner == "trace" else jit.script(cell_module)
    loop = jit.script(MyRNNLoop(cell))
    assert "prim::Loop" in kinds(loop.graph)
    xs = rand(10, 3, 4)
    wrap = WrapRNN(loop)
    wrapped = jit.trace(wrap, (xs,)) if outer == "trace" else jit.script(wrap)
    want = np.maximum(ref_loop(cell_module, xs)[0], 0)
    np.testing.assert_allclose(wrapped(xs), want, rtol=1e-5, atol=1e-6)
    # a different trip count: the scripted loop is kept inside the traced wrapper
    xs2 = rand(4, 3, 4)
    np.testing.assert_allclose(wrapped(xs2), np.maximum(ref_loop(cell_module, xs2)[0], 0),
                               rtol=1e-5, atol=1e-6)


# -- parameters and attributes stay live ----------------------------------------------------
def test_parameters_are_shared_and_live():
    lin = nn.Linear(4, 3)
    sm = jit.script(lin)
    x = rand(2, 4)
    np.testing.assert_allclose(sm(x), x @ lin.weight.T + lin.bias, rtol=1e-5, atol=1e-6)
    assert sm.weight is lin.weight  # the same array, not a copy
    sm.weight[...] = 0.0            # written in place: the next call sees it
    np.testing.assert_allclose(sm(x), np.broadcast_to(lin.bias, (2, 3)), rtol=1e-6)
    sm.weight = np.ones((5, 4), np.float32)  # a new array of another shape: re-specialized
    sm.bias = np.zeros(5, np.float32)
    np.testing.assert_allclose(sm(x), np.broadcast_to(x.sum(1, keepdims=True), (2, 5)),
                               rtol=1e-5)
    names = [n for n, _ in sm.named_parameters()]
    assert names == ["weight", "bias"]


def test_training_flag_and_scalar_attributes_fold_per_value():
    class Scale(nn.Module):
        def __init__(self):
            super().__init__()
            self.factor = 2.0

        def forward(self, x):
            if self.training:
                return x * self.factor
            return x - self.factor

    sm = jit.script(Scale())
    assert 'prim::GetAttr[name="training"]' in str(sm.graph)
    x = rand(6)
    np.testing.assert_allclose(sm(x), x * 2.0)
    assert "prim::If" not in kinds(sm.graph_for(x))  # folded for training=True
    sm.eval()
    np.testing.assert_allclose(sm(x), x - 2.0)
    sm.factor = 5.0
    np.testing.assert_allclose(sm(x), x - 5.0)


def test_containers_unroll_and_index():
    class Stack(nn.Module):
        def __init__(self):
            super().__init__()
            self.layers = nn.ModuleList([nn.Linear(4, 4) for _ in range(3)])
            self.heads = nn.ModuleDict({"a": nn.Tanh(), "b": nn.Sigmoid()})
            self.seq = nn.Sequential(nn.Linear(4, 4), nn.ReLU())

        def forward(self, x):
            for layer in self.layers:
                x = layer(x)
            x = self.layers[-1](x) + len(self.layers)
            for _name, head in self.heads.items():
                x = head(x)
            return self.seq(x)

    m = Stack().eval()
    sm = jit.script(m)
    text = str(sm.graph)
    assert 'prim::GetAttr[name="0"](%layers)' in text and 'prim::GetAttr[name="2"]' in text
    assert "prim::Loop" not in text
    x = rand(2, 4)
    np.testing.assert_allclose(sm(x), m(x), rtol=1e-5, atol=1e-6)
    tm = jit.trace(m, (x,))
    np.testing.assert_allclose(tm(x), m(x), rtol=1e-5, atol=1e-6)


def test_nn_layers_script_and_trace_like_eager():
    model = nn.Sequential(nn.Linear(8, 16), nn.LayerNorm(16), nn.GELU(), nn.Dropout(0.2),
                          nn.Linear(16, 4), nn.SiLU()).eval()
    x = rand(5, 8)
    want = model(x)
    for compiled in (jit.script(model), jit.trace(model, (x,))):
        jit.reset_stats()
        np.testing.assert_allclose(compiled(x), want, rtol=1e-5, atol=1e-5)
        assert "prim::FusionGroup" in kinds(compiled.graph_for(x))
        assert_compiled()


# -- compiled functions inside compiled code ---------------------------------------------------
@jit.script
def _gate_fn(x):
    if x.sum() > 0:
        return x * 2.0
    return -x


def test_script_function_called_from_scripted_and_traced_code_keeps_its_branch():
    def caller(x):
        return _gate_fn(x) + 1.0

    scripted = jit.script(caller)
    assert "prim::If" in kinds(scripted.graph)
    pos = np.abs(rand(4))
    traced = jit.trace(caller, (pos,))
    assert "prim::If" in kinds(traced.graph)
    for fn in (scripted, traced):
        np.testing.assert_allclose(fn(pos), pos * 2 + 1)
        np.testing.assert_allclose(fn(-pos), pos + 1)


def test_script_module_called_from_a_traced_function_is_frozen():
    lin = nn.Linear(4, 2)
    sm = jit.script(lin)
    x = rand(3, 4)
    traced = jit.trace(lambda x: tl.relu(sm(x)), (x,))
    np.testing.assert_allclose(traced(x), np.maximum(x @ lin.weight.T + lin.bias, 0),
                               rtol=1e-5, atol=1e-6)


# -- errors --------------------------------------------------------------------------------
def test_errors_name_the_problem():
    class NoForward(nn.Module):
        pass

    with pytest.raises(ScriptError, match="has no forward"):
        jit.script(NoForward())

    class Plain:
        def forward(self, x):
            return x

    with pytest.raises(ScriptError, match="nn.Module"):
        jit.script(Plain())

    class Missing(nn.Module):
        def forward(self, x):
            return x * self.nope

    with pytest.raises(ScriptError, match="has no attribute 'nope'") as e:
        jit.script(Missing())
    assert "^" in str(e.value) and "self.nope" in str(e.value)

    class Unused(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.Linear(2, 2)
            self.b = nn.Linear(2, 2)

        def forward(self, x):
            return self.a(x)

    tm = jit.trace(Unused(), (rand(1, 2),))
    with pytest.raises(TorchlikeError, match="never called"):
        tm.b(rand(1, 2))


# -- save / load -----------------------------------------------------------------------------
def _tutorial_model():
    gate = jit.script(MyDecisionGate())
    x, h = rand(3, 4), rand(3, 4)
    cell_module = MyCell(gate)
    loop = jit.script(MyRNNLoop(jit.trace(cell_module, (x, h))))
    xs = rand(10, 3, 4)
    return jit.trace(WrapRNN(loop), (xs,)), cell_module, xs


def test_save_and_load_in_a_fresh_process(tmp_path):
    model, cell_module, xs = _tutorial_model()
    path = tmp_path / "wrap.tlk"
    model.save(path)
    np.save(tmp_path / "xs.npy", xs)
    code = (
        "import sys, numpy as np\n"
        "import torchlike\n"
        f"m = torchlike.jit.load({str(path)!r})\n"
        f"xs = np.load({str(tmp_path / 'xs.npy')!r})\n"
        f"np.save({str(tmp_path / 'out.npy')!r}, m(xs))\n"
        "print(m.code)\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("def forward(self")
    np.testing.assert_allclose(np.load(tmp_path / "out.npy"),
                               np.maximum(ref_loop(cell_module, xs)[0], 0), rtol=1e-5,
                               atol=1e-6)


def test_load_keeps_structure_sharing_and_state(tmp_path):
    shared = nn.Linear(4, 4)

    class Twice(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = shared
            self.b = shared
            self.register_buffer("offset", np.full(4, 0.5, np.float32))

        def forward(self, x):
            return self.b(self.a(x)) + self.offset

    m = Twice()
    sm = jit.script(m)
    buf = io.BytesIO()
    sm.save(buf)
    buf.seek(0)
    loaded = jit.load(buf)
    x = rand(2, 4)
    np.testing.assert_allclose(loaded(x), m(x), rtol=1e-5, atol=1e-6)
    assert loaded.a is loaded.b  # one module object, as saved
    assert list(loaded.state_dict()) == list(sm.state_dict())
    loaded.a.weight[...] = 0.0
    np.testing.assert_allclose(loaded(x), np.broadcast_to(
        (shared.bias @ np.zeros((4, 4), np.float32)) + shared.bias + 0.5, (2, 4)), rtol=1e-5)


def _saved_bytes(model) -> bytes:
    buf = io.BytesIO()
    model.save(buf)
    return buf.getvalue()


def _rewrite(data: bytes, change) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(data))
    members = {n: src.read(n) for n in src.namelist()}
    change(members)
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w") as z:
        for n, d in members.items():
            z.writestr(n, d)
    return out.getvalue()


def test_bad_files_give_serialization_errors(tmp_path):
    data = _saved_bytes(jit.script(nn.Linear(3, 2)))

    def meta_edit(fn):
        def change(members):
            meta = json.loads(members["meta.json"])
            fn(meta)
            members["meta.json"] = json.dumps(meta).encode()
        return change

    cases = {
        "truncated": data[: len(data) // 2],
        "garbage": b"not a zip at all",
        "newer": _rewrite(data, meta_edit(lambda m: m.update(version=99))),
        "cycle": _rewrite(data, meta_edit(lambda m: m["modules"][0]["children"].update(me=0))),
        "bad index": _rewrite(data, meta_edit(lambda m: m.update(root=7))),
        "missing tensor": _rewrite(data, meta_edit(
            lambda m: m["modules"][0]["parameters"].update(weight="t99"))),
        "no tensors": _rewrite(data, lambda members: members.pop("tensors.npz")),
        "bad graph": _rewrite(data, lambda members: members.update(
            {"graphs/0_forward.txt": b"graph(%x : Tensor):\n  %1 = aten::("})),
    }
    for what, blob in cases.items():
        p = tmp_path / f"{what.replace(' ', '_')}.tlk"
        p.write_bytes(blob)
        with pytest.raises(SerializationError) as e:
            jit.load(p)
        assert str(p) in str(e.value), what
    msg = str(pytest.raises(SerializationError, jit.load, tmp_path / "newer.tlk").value)
    assert "newer" in msg


def test_loading_never_executes_code_from_the_file(tmp_path):
    marker = tmp_path / "pwned"
    data = _rewrite(_saved_bytes(jit.script(nn.Linear(3, 2))), lambda members: members.update(
        {"code/0_forward.py": f"open({str(marker)!r}, 'w').write('x')\n".encode()}))
    p = tmp_path / "m.tlk"
    p.write_bytes(data)
    m = jit.load(p)
    m(rand(1, 3))
    assert not marker.exists()


# -- against PyTorch's outputs -----------------------------------------------------------------
def test_corpus_mycell_module_matches_pytorch_outputs():
    params = dict(np.load(CORPUS / "params.npz"))
    meta = json.loads((CORPUS / "meta.json").read_text())
    inputs = np.load(CORPUS / "inputs.npz")
    outputs = np.load(CORPUS / "expected.npz")

    class Cell(nn.Module):
        def __init__(self):
            super().__init__()
            self.W = nn.Parameter(params["W"])
            self.b = nn.Parameter(params["b"])

        def forward(self, x, h):
            new_h = tl.tanh(x @ self.W + self.b + h)
            return new_h, new_h

    args = [inputs[i["name"]] for i in meta["inputs"]]
    want = [outputs[k] for k in sorted(outputs.files)]
    for compiled in (jit.script(Cell()), jit.trace(Cell(), tuple(args))):
        got = compiled(*args)
        assert 'prim::GetAttr[name="W"](%self)' in str(compiled.graph)
        for g, w in zip(got, want, strict=True):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_torch_state_dict_gives_torch_outputs_compiled():
    torch = pytest.importorskip("torch")

    class TGate(torch.nn.Module):
        def forward(self, x):
            if x.sum() > 0:
                return x
            return -x

    class TCell(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.dg = TGate()
            self.linear = torch.nn.Linear(4, 4)

        def forward(self, x, h):
            new_h = torch.tanh(self.dg(self.linear(x)) + h)
            return new_h, new_h

    tcell = TCell()
    cell = MyCell(jit.script(MyDecisionGate()))
    cell.load_state_dict({k: v.detach().numpy() for k, v in tcell.state_dict().items()})
    x, h = rand(3, 4), rand(3, 4)
    with torch.no_grad():
        want = tcell(torch.from_numpy(x), torch.from_numpy(h))[0].numpy()
    for compiled in (jit.script(cell), jit.trace(cell, (x, h))):
        np.testing.assert_allclose(compiled(x, h)[0], want, rtol=1e-5, atol=1e-6)
    tscripted = torch.jit.script(tcell)
    assert str(jit.script(cell).graph).count("prim::CallMethod") == \
        str(tscripted.graph).count("prim::CallMethod")


def test_readme_module_tutorial_runs_as_written(tmp_path):
    """README's "Modules" example, run as pasted (in a fresh process, in a scratch directory)."""
    out = run_readme_block("Modules: the TorchScript tutorial", tmp_path)
    assert 'prim::CallMethod[name="forward"]' in out
    assert "prim::FusionGroup" in out and "prim::Loop" in out
    assert (tmp_path / "wrapped_rnn.tlk").exists()


def test_compiled_containers_index_iterate_and_len():
    seq = nn.Sequential(nn.Linear(3, 3), nn.ReLU())
    heads = nn.ModuleDict({"a": nn.Tanh(), "b": nn.Sigmoid()})
    for sm in (jit.script(seq), jit.trace(seq, (rand(2, 3),))):
        assert len(sm) == 2 and sm[0] is sm.get_submodule("0") and sm[-1] is sm[1]
        assert [m.original_name for m in sm] == ["Linear", "ReLU"]
        x = rand(2, 3)
        np.testing.assert_allclose(sm[0](x), seq[0](x), rtol=1e-6)

    class Holder(nn.Module):
        def __init__(self):
            super().__init__()
            self.heads = heads

        def forward(self, x):
            return self.heads["a"](x) + self.heads["b"](x)

    h = jit.script(Holder())
    assert list(h.heads) == ["a", "b"] and h.heads["b"].original_name == "Sigmoid"
    assert bool(h) and bool(h.heads)
    with pytest.raises(TypeError, match="not a container"):
        len(h)
