"""torchlike.onnx, checked against the real tools: every exported model passes
``onnx.checker.check_model(full_check=True)`` and ONNX Runtime gives torchlike's answers (same
dtype, same values); every imported model runs fused in torchlike with ONNX Runtime's answers.

Skipped, naming them, where the ``onnx`` extra (onnx, onnxruntime) is not installed.
"""
from __future__ import annotations

import numpy as np
import pytest

onnx = pytest.importorskip("onnx", reason="onnx not installed (pip install 'torchlike[onnx]')")
ort = pytest.importorskip("onnxruntime",
                          reason="onnxruntime not installed (pip install 'torchlike[onnx]')")

from corpus_utils import CASES, graph_files, graph_text, input_sets  # noqa: E402
from onnx import TensorProto as TP  # noqa: E402
from onnx import helper as oh  # noqa: E402
from onnx import numpy_helper  # noqa: E402
from readme_blocks import run_readme_block  # noqa: E402

import torchlike as tl  # noqa: E402
from torchlike import jit, nn  # noqa: E402
from torchlike import onnx as tlonnx  # noqa: E402
from torchlike.errors import UnsupportedOpError  # noqa: E402
from torchlike.ir import parse_graph  # noqa: E402

RNG = np.random.default_rng(0)


# -- helpers -------------------------------------------------------------------------------------

def _tensors(args):
    """The arguments ONNX sees: arrays and scalars as arrays (a module's object dropped)."""
    return [np.asarray(a) for a in args if isinstance(a, (np.ndarray, np.generic, int, float, bool))]


def run_ort(model, args):
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    names = [i.name for i in sess.get_inputs()]
    return sess.run(None, dict(zip(names, _tensors(args))))


def _flat(result):
    if isinstance(result, (tuple, list)):
        return [x for r in result for x in _flat(r)]
    return [np.asarray(result)]


def assert_same(got, want, what):
    got, want = _flat(got), _flat(want)
    assert len(got) == len(want), f"{what}: {len(got)} outputs, expected {len(want)}"
    for k, (g, w) in enumerate(zip(got, want)):
        assert g.dtype == w.dtype, f"{what} output {k}: dtype {g.dtype}, expected {w.dtype}"
        assert g.shape == w.shape, f"{what} output {k}: shape {g.shape}, expected {w.shape}"
        if g.dtype.kind == "f":
            tol = dict(rtol=1e-5, atol=1e-6) if g.dtype == np.float32 else dict(rtol=1e-10, atol=1e-12)
            np.testing.assert_allclose(g, w, equal_nan=True, err_msg=f"{what} output {k}", **tol)
        else:
            np.testing.assert_array_equal(g, w, err_msg=f"{what} output {k}")


def round_trip(fn, args, opset=None, expected=None):
    """Export ``fn`` on ``args``: check the file, compare ONNX Runtime with torchlike; import
    it back and compare the fused import with ONNX Runtime.  Returns the model."""
    model = tlonnx.to_model(fn, args, opset)
    onnx.checker.check_model(model, full_check=True)
    ours = fn(*args)
    if expected is not None:
        assert_same(ours, expected, "torchlike vs expected")
    theirs = run_ort(model, args)
    assert_same(theirs, ours, "ONNX Runtime vs torchlike")
    imported = tlonnx.from_model(model)
    assert_same(imported(*_tensors(args)), theirs, "imported (fused) vs ONNX Runtime")
    return model


# -- the corpus ------------------------------------------------------------------------------------

# unary_chain_20 holds erfc, which has no exact ONNX form (1 - Erf cancels): see op_table.py
CORPUS = [(c, w) for c in CASES if c != "unary_chain_20" for w in graph_files(c)
          if not w.startswith("te_")]


@pytest.mark.parametrize("case,which", CORPUS, ids=[f"{c}-{w}" for c, w in CORPUS])
def test_corpus_round_trip(case, which):
    fn = jit.ScriptFunction(parse_graph(graph_text(case, which)))
    for label, args, expected in input_sets(case):
        # a trace baked the branch its example took: other input sets differ from PyTorch's
        known = which != "traced" or label == "inputs"
        round_trip(fn, args, expected=[expected[f"out{i}"] for i in range(len(expected))]
                   if known else None)


def test_erfc_is_refused_naming_the_node():
    fn = jit.ScriptFunction(parse_graph(graph_text("unary_chain_20", "traced")))
    _, args, _ = next(iter(input_sets("unary_chain_20")))
    with pytest.raises(UnsupportedOpError, match=r"aten::erfc\(%[\w.]+\) at make_corpus"):
        tlonnx.to_model(fn, args)


# -- modules ------------------------------------------------------------------------------------------

class MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 32)
        self.act = nn.GELU()
        self.norm = nn.LayerNorm(32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        return self.fc2(self.norm(self.act(self.fc1(x))))


@pytest.mark.parametrize("opset", [17, 20])
@pytest.mark.parametrize("form", ["module", "traced", "scripted"])
def test_mlp_module(form, opset, tmp_path):
    m = MLP()
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    target = {"module": m, "traced": jit.trace(m, (x,)), "scripted": jit.script(m)}[form]
    model = round_trip(target, (x,), opset)
    assert [i.name for i in model.graph.input] == ["x"]      # parameters are not inputs
    sizes = sorted(int(np.prod(i.dims)) for i in model.graph.initializer)
    assert sizes == sorted([32 * 8, 32, 32, 32, 4 * 32, 4])  # but initializers
    ops = {n.op_type for n in model.graph.node}
    assert "LayerNormalization" in ops and ("Gelu" in ops) == (opset >= 20)
    path = tmp_path / "mlp.onnx"
    tlonnx.export(target, (x,), path, opset=opset)
    loaded = tlonnx.load(path)
    assert_same(loaded(x), m(x), "loaded file vs module")
    top = [n.kind for n in loaded.graph_for(x).nodes if n.kind != "prim::Constant"]
    assert top.count("prim::FusionGroup") == 2, top  # bias+GELU+layer norm, then the last bias


@jit.script
def dynamic_head(x):
    y = tl.tanh(x).view([x.shape[0], -1, 2])
    return tl.softmax(y, 2) + y[:, :1].expand([-1, 4, 2]), x.flatten(1).sum(1)


def test_dynamic_batch_axis():
    """A symbolic batch dim: the file serves every batch size in ONNX Runtime, and so does its
    import; a scripted view(x.size(0), -1) and expand(-1, ...) read the batch at run time
    (Shape -> Gather -> Concat -> Reshape in the file, followed symbolically on import)."""
    m = MLP()
    x = RNG.standard_normal((5, 8)).astype(np.float32)
    for fn in (m, dynamic_head):
        model = tlonnx.to_model(fn, (x,), dynamic_axes={"x": {0: "batch"}})
        onnx.checker.check_model(model, full_check=True)
        dim = model.graph.input[0].type.tensor_type.shape.dim
        assert (dim[0].dim_param, dim[1].dim_value) == ("batch", 8)
        imported = tlonnx.from_model(model)
        for n in (1, 5, 11):
            xn = RNG.standard_normal((n, 8)).astype(np.float32)
            theirs = run_ort(model, [xn])
            assert_same(theirs, fn(xn), f"ONNX Runtime vs torchlike, batch {n}")
            assert_same(imported(xn), theirs, f"imported vs ONNX Runtime, batch {n}")
    g = parse_graph("graph(%x : Float(*, 6)):\n  %1 : Tensor = aten::tanh(%x)\n  return (%1)")
    declared = tlonnx.to_model(jit.ScriptFunction(g), (x[:, :6].copy(),))
    assert declared.graph.input[0].type.tensor_type.shape.dim[0].dim_param == "x_0"
    with pytest.raises(ValueError, match="dynamic_axes names no input"):
        tlonnx.to_model(m, (x,), dynamic_axes={"y": [0]})


def test_rank3_linear_and_gelu_tanh():
    m = nn.Sequential(nn.Linear(6, 10), nn.GELU(approximate="tanh"), nn.Linear(10, 3, bias=False))
    x = RNG.standard_normal((2, 4, 6)).astype(np.float32)
    round_trip(m, (x,))
    round_trip(m, (x,), 17)


def test_fused_graph_exports_the_ops_inside_its_groups():
    def f(x, y):
        return tl.tanh(x * y + 1.0) * 0.5 - tl.sigmoid(y)

    x = RNG.standard_normal((4, 5)).astype(np.float32)
    fused = jit.trace(f, (x, x)).graph_for(x, x)
    assert "prim::FusionGroup" in str(fused)
    model = round_trip(jit.ScriptFunction(fused), (x, x))
    assert {n.op_type for n in model.graph.node} >= {"Mul", "Add", "Tanh", "Sigmoid", "Sub"}
    round_trip(f, (x, x))                        # a plain function is traced
    gates = RNG.standard_normal((8, 64)).astype(np.float32)
    c = RNG.standard_normal((8, 16)).astype(np.float32)
    bias = RNG.standard_normal(64).astype(np.float32)
    cell = jit.trace(lambda g, b, c: lstm_tail(g + b, c, c, c[0], c[1])[:2], (gates, bias, c))
    fused = cell.graph_for(gates, bias, c)
    assert "prim::BroadcastingChunk" in str(fused)
    round_trip(jit.ScriptFunction(fused), (gates, bias, c))
    cat = jit.trace(lambda a, b: tl.cat([tl.sin(a) * b, tl.exp(a)], 1), (x, x))
    fused = cat.graph_for(x, x)
    assert "prim::FusedConcat" in str(fused)  # a group's cat output: aten::cat -> Concat
    model = round_trip(jit.ScriptFunction(fused), (x, x))
    assert "Concat" in {n.op_type for n in model.graph.node}
    with pytest.raises(ValueError, match="opset 13"):
        tlonnx.to_model(f, (x, x), opset=13)


# -- control flow -------------------------------------------------------------------------------------

@jit.script
def branchy(x, y):
    if x.mean() > 0:
        out = tl.tanh(x * y + 1.0)
    else:
        out = tl.sigmoid(x - y) * 2
    return out


@jit.script
def for_loop(x, n: int):
    for i in range(n):
        x = tl.sigmoid(x * 1.1) + i
    return x


@jit.script
def while_loop(x):
    k = 0
    while float(x.sum()) < 100.0:
        x = x * 2.0 + 1.0
        k += 1
    return x, k


@jit.script
def in_place(x):
    y = x * 2.0
    y += 1.0
    y.mul_(3.0)
    return y


def test_in_place_ops_on_fresh_tensors():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    round_trip(in_place, (x,))
    with pytest.raises(UnsupportedOpError, match=r"aten::add_.*no ONNX form"):
        tlonnx.to_model(writes_input, (x,))


@jit.script
def writes_input(x):
    x.add_(1.0)  # the caller sees the write: no ONNX form
    return x * 2.0


def test_if_both_branches():
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    y = RNG.standard_normal((3, 4)).astype(np.float32)
    model = round_trip(branchy, (np.abs(x), y))
    assert [n.op_type for n in model.graph.node].count("If") == 1
    round_trip(branchy, (-np.abs(x), y))


def test_for_and_while_loops():
    x = RNG.random((3, 4)).astype(np.float32)
    model = round_trip(for_loop, (x, 4))
    assert "Loop" in [n.op_type for n in model.graph.node]
    round_trip(for_loop, (x, 0))
    round_trip(while_loop, (x,))


# -- dtypes ---------------------------------------------------------------------------------------------

def mixed(a, b, m, x):
    return (a + b, a * 2.5, a / 2, a // 3, a % -3, tl.fmod(a, 3), tl.where(m, x, a),
            (a > 2) & m, ~m | (b < 0), tl.abs(-a), a.sum(1), x.mean(0), tl.maximum(a, b),
            x.to(tl.int32), a.to(tl.float64) * x, tl.clamp(a, -2, 5), b * True, m.sum())


def test_dtype_variety():
    a = RNG.integers(-9, 9, (3, 4)).astype(np.int32)
    b = RNG.integers(-9, 9, (3, 4)).astype(np.int64)
    m = RNG.random((3, 4)) > 0.5
    x = RNG.standard_normal((3, 4))
    round_trip(jit.trace(mixed, (a, b, m, x)), (a, b, m, x))


def activations(x):
    return (tl.gelu(x), tl.gelu(x, approximate="tanh"), tl.mish(x), tl.hardswish(x),
            tl.hardsigmoid(x), tl.leaky_relu(x, 0.2), tl.elu(x, 0.7), tl.softplus(x),
            tl.softplus(x, 2.0, 3.0), tl.silu(x), tl.relu6(x), tl.celu(x, 1.3), tl.selu(x),
            tl.sigmoid(x), tl.tanh(x), tl.erf(x), tl.relu(x), tl.rsqrt(tl.abs(x) + 1),
            tl.reciprocal(x + 10), tl.pow(tl.abs(x), 1.5), tl.sin(x), tl.cos(x), tl.exp(x),
            tl.log(tl.abs(x) + 0.5), tl.sqrt(tl.abs(x)), tl.floor(x), tl.ceil(x), tl.round(x),
            tl.trunc(x), tl.sign(x), tl.neg(x), tl.square(x), tl.log1p(x * 1e-3),
            tl.expm1(x * 1e-4), tl.clamp(x, -0.5, 0.5), tl.minimum(x, 0.3 * x), tl.isnan(x))


def activations64(x):
    """The float64 ops ONNX Runtime has CPU kernels for (it has none for Erf, Gelu, Mish,
    Elu, Selu, LeakyRelu, Softplus, HardSigmoid, HardSwish, Tan, Asin..., IsNaN in float64:
    those files are valid ONNX, which ONNX Runtime cannot run)."""
    return (tl.sigmoid(x), tl.tanh(x), tl.relu(x), tl.silu(x), tl.relu6(x), tl.celu(x, 1.3),
            tl.exp(x), tl.log(tl.abs(x) + 0.5), tl.sqrt(tl.abs(x)), tl.rsqrt(tl.abs(x) + 1),
            tl.pow(tl.abs(x), 1.5), tl.sin(x), tl.cos(x), tl.floor(x), tl.ceil(x), tl.round(x),
            tl.trunc(x), tl.sign(x), tl.square(x), tl.log1p(x * 1e-9), tl.expm1(x * 1e-9),
            tl.clamp(x, -0.5, 0.5), tl.maximum(x, 0.3 * x), tl.isnan(x))


@pytest.mark.parametrize("opset", [17, 20])
def test_activations(opset):
    x = (RNG.standard_normal((4, 33)) * 3).astype(np.float32)
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    round_trip(jit.trace(activations, (x,)), (x,), opset)


def test_float64_math():
    x = RNG.standard_normal((4, 33)) * 3
    x[0, :4] = [np.nan, np.inf, -np.inf, -0.0]
    round_trip(jit.trace(activations64, (x,)), (x,))


def more_ops(x, y, a, b):
    return (tl.div(x, y, rounding_mode="floor"), tl.div(x, y, rounding_mode="trunc"),
            tl.div(a, b, rounding_mode="trunc"), tl.div(a, b, rounding_mode="floor"),
            tl.remainder(x, y), tl.floor_divide(x, y), tl.rsub(x, y, alpha=2), x - 3 * y,
            tl.add(x, y, alpha=0.5), tl.addcdiv(x, x, y + 5, value=0.25),
            tl.addcmul(x, y, x, value=-1.5), tl.masked_fill(x, a > 0, 7.0),
            tl.zeros_like(a), tl.ones_like(x), tl.full_like(a, 3), tl.hardtanh(x, -0.3, 0.2),
            tl.threshold(x, 0.1, -2.0), tl.log2(tl.abs(x) + 1), tl.log10(tl.abs(x) + 1),
            tl.exp2(x), tl.bitwise_and(a, b), a | b, a ^ b, tl.bitwise_not(a),
            tl.elu(x, 1.0, 2.0, 0.5), tl.clamp(x, y, y + 1), tl.eq(a, b), tl.ne(x, y),
            tl.logical_xor(a, x), tl.round(x, decimals=2), a.sum(), (x > 0).sum(0),
            x.to(tl.bool), a.type_as(x))


def test_more_ops():
    x = (RNG.standard_normal((3, 5)) * 4).astype(np.float32)
    y = (RNG.standard_normal((3, 5)) * 2).astype(np.float32)
    a = RNG.integers(-50, 50, (3, 5)).astype(np.int64)
    b = RNG.integers(1, 9, (3, 5)).astype(np.int64) * np.where(RNG.random((3, 5)) > 0.5, 1, -1)
    round_trip(jit.trace(more_ops, (x, y, a, b)), (x, y, a, b))


def test_op_table_names_registry_ops():
    from torchlike.onnx.op_table import EXPORT, IMPORT, POINTWISE
    from torchlike.ops.registry import lookup
    assert [k for k in EXPORT if k.startswith("aten::") and lookup(k) is None] == []
    assert [k for k in POINTWISE if lookup(k) is None] == []
    schemas = {s.name for s in onnx.defs.get_all_schemas()}
    assert [k for k in IMPORT if k not in schemas] == []


def shapes(x, w):
    a, b = tl.chunk(x, 2, 1)
    parts = tl.split(x, 3, 1)
    y = x.reshape(4, 3, 2).permute(2, 0, 1).transpose(0, 2)
    return (a * b, tl.cat([parts[1], parts[0]], 1), y, x[:, 1:5:2], x.select(1, 2),
            x.unsqueeze(0).squeeze(0), tl.softmax(x, 1), tl.log_softmax(x, 0),
            x.amax(1, keepdim=True), x.amin(0), x.sum(), tl.matmul(x, w),
            x[:, :1].expand(4, 6), x.view(-1), tl.flatten(y), tl.stack([a, b], 0))


def test_shape_ops():
    x = RNG.standard_normal((4, 6)).astype(np.float32)
    w = RNG.standard_normal((6, 5)).astype(np.float32)
    round_trip(jit.trace(shapes, (x, w)), (x, w))


# -- import of models ONNX tools make -------------------------------------------------------------------

def _model(nodes, inputs, outputs, inits=(), opset=20):
    g = oh.make_graph(nodes, "g", inputs, outputs, initializer=list(inits))
    m = oh.make_model(g, opset_imports=[oh.make_opsetid("", opset)])
    m.ir_version = 9
    onnx.checker.check_model(m, full_check=True)
    return m


def _vi(name, elem, shape):
    return oh.make_tensor_value_info(name, elem, shape)


def test_import_handmade_model():
    """Ops and attribute forms torchlike's exporter does not write: Gemm with transA,
    equal Split, Slice with negative starts, HardSigmoid's default alpha, Softsign, PRelu,
    ReduceMean over axes, Flatten, Transpose without perm, Gather of indices, Max of three."""
    w = RNG.standard_normal((6, 4)).astype(np.float32)
    slope = np.full((1, 4), 0.1, np.float32)
    inits = [numpy_helper.from_array(w, "w"), numpy_helper.from_array(slope, "slope"),
             numpy_helper.from_array(np.array([-3], np.int64), "st"),
             numpy_helper.from_array(np.array([100], np.int64), "en"),
             numpy_helper.from_array(np.array([1], np.int64), "ax"),
             numpy_helper.from_array(np.array([0, 2], np.int64), "idx"),
             numpy_helper.from_array(np.array([1], np.int64), "rax")]
    nodes = [
        oh.make_node("Gemm", ["x", "w"], ["g"], transA=1, alpha=0.5),     # x: (6, 5) -> (5, 4)
        oh.make_node("HardSigmoid", ["g"], ["hs"]),
        oh.make_node("Softsign", ["g"], ["ss"]),
        oh.make_node("PRelu", ["g", "slope"], ["pr"]),
        oh.make_node("Max", ["hs", "ss", "pr"], ["mx"]),
        oh.make_node("Split", ["mx"], ["s0", "s1"], axis=1, num_outputs=2),
        oh.make_node("Slice", ["g", "st", "en", "ax"], ["sl"]),
        oh.make_node("ReduceMean", ["g", "rax"], ["rm"], keepdims=0),
        oh.make_node("Transpose", ["g"], ["tr"]),
        oh.make_node("Gather", ["tr", "idx"], ["ga"], axis=1),
        oh.make_node("Flatten", ["x"], ["fl"], axis=0),
        oh.make_node("Mul", ["s0", "s1"], ["pw"]),
    ]
    outs = [_vi("pw", TP.FLOAT, [5, 2]), _vi("sl", TP.FLOAT, [5, 3]), _vi("rm", TP.FLOAT, [5]),
            _vi("ga", TP.FLOAT, [4, 2]), _vi("fl", TP.FLOAT, [1, 30])]
    model = _model(nodes, [_vi("x", TP.FLOAT, [6, 5])], outs, inits)
    x = RNG.standard_normal((6, 5)).astype(np.float32)
    assert_same(tlonnx.from_model(model)(x), run_ort(model, [x]), "import vs ONNX Runtime")


def test_import_int_ops_and_casts():
    nodes = [oh.make_node("Div", ["a", "b"], ["d"]),                # C division on ints
             oh.make_node("Mod", ["a", "b"], ["r"]),                # Python's sign
             oh.make_node("Mod", ["a", "b"], ["f"], fmod=1),
             oh.make_node("Cast", ["a"], ["c"], to=TP.DOUBLE),
             oh.make_node("ReduceSum", ["a"], ["s"], keepdims=1),   # stays int32
             oh.make_node("Greater", ["a", "b"], ["gt"]),
             oh.make_node("Where", ["gt", "a", "b"], ["w"])]
    i32 = lambda n: _vi(n, TP.INT32, [3, 4])  # noqa: E731
    model = _model(nodes, [i32("a"), i32("b")],
                   [i32("d"), i32("r"), i32("f"), _vi("c", TP.DOUBLE, [3, 4]),
                    _vi("s", TP.INT32, [1, 1]), _vi("gt", TP.BOOL, [3, 4]), i32("w")])
    a = RNG.integers(-20, 20, (3, 4)).astype(np.int32)
    b = RNG.integers(1, 7, (3, 4)).astype(np.int32) * np.where(RNG.random((3, 4)) > 0.5, 1, -1).astype(np.int32)
    assert_same(tlonnx.from_model(model)(a, b), run_ort(model, [a, b]), "import vs ONNX Runtime")


def test_import_if_and_loop():
    then = oh.make_graph([oh.make_node("Mul", ["x", "x"], ["t"])], "then", [],
                         [_vi("t", TP.FLOAT, [3])])
    other = oh.make_graph([oh.make_node("Neg", ["x"], ["e"])], "else", [], [_vi("e", TP.FLOAT, [3])])
    body = oh.make_graph(
        [oh.make_node("Cast", ["i"], ["fi"], to=TP.FLOAT),
         oh.make_node("Add", ["acc", "fi"], ["acc2"]),
         oh.make_node("Identity", ["c"], ["c2"])], "body",
        [_vi("i", TP.INT64, []), _vi("c", TP.BOOL, []), _vi("acc", TP.FLOAT, [3])],
        [_vi("c2", TP.BOOL, []), _vi("acc2", TP.FLOAT, [3])])
    nodes = [oh.make_node("ReduceSum", ["x"], ["s"], keepdims=0),
             oh.make_node("Greater", ["s", "zero"], ["cond"]),
             oh.make_node("If", ["cond"], ["y"], then_branch=then, else_branch=other),
             oh.make_node("Loop", ["n", "", "y"], ["z"], body=body)]
    inits = [numpy_helper.from_array(np.array(0, np.float32), "zero")]
    model = _model(nodes, [_vi("x", TP.FLOAT, [3]), _vi("n", TP.INT64, [])],
                   [_vi("z", TP.FLOAT, [3])], inits)
    fn = tlonnx.from_model(model)
    for x in (np.array([1, 2, 3], np.float32), np.array([-1, -2, 0.5], np.float32)):
        n = np.array(5, np.int64)
        assert_same(fn(x, n), run_ort(model, [x, n]), "import vs ONNX Runtime")


def test_import_symbolic_batch_and_layer_norm():
    """A batch dim named "N": one imported function serves every batch size; Reshape's 0
    copies the input's dim; LayerNormalization over one and over two axes (written as its row
    reductions, which fuse)."""
    gamma = RNG.standard_normal((4, 6)).astype(np.float32)
    inits = [numpy_helper.from_array(gamma, "gamma"),
             numpy_helper.from_array(gamma[0], "g1"),
             numpy_helper.from_array(np.array([0, 24], np.int64), "flat"),
             numpy_helper.from_array(np.array([0, 4, 6], np.int64), "back")]
    nodes = [oh.make_node("Gelu", ["x"], ["g"], approximate="tanh"),
             oh.make_node("LayerNormalization", ["g", "gamma"], ["ln2"], axis=-2, epsilon=1e-3),
             oh.make_node("LayerNormalization", ["x", "g1"], ["ln1"]),
             oh.make_node("Reshape", ["ln2", "flat"], ["r"]),
             oh.make_node("Reshape", ["r", "back"], ["y"]),
             oh.make_node("Softmax", ["y"], ["sm"], axis=1),
             oh.make_node("Shape", ["x"], ["xs"]),
             oh.make_node("ConstantOfShape", ["xs"], ["ones"],
                          value=numpy_helper.from_array(np.array([1.5], np.float32))),
             oh.make_node("Mul", ["ln1", "ones"], ["ln1s"])]
    shape = ["N", 4, 6]
    model = _model(nodes, [_vi("x", TP.FLOAT, shape)],
                   [_vi("sm", TP.FLOAT, shape), _vi("ln1s", TP.FLOAT, shape)], inits)
    fn = tlonnx.from_model(model)
    for n in (1, 7):
        x = RNG.standard_normal((n, 4, 6)).astype(np.float32)
        assert_same(fn(x), run_ort(model, [x]), f"import vs ONNX Runtime, N={n}")


def test_import_refuses_unknown_ops_naming_them():
    nodes = [oh.make_node("Det", ["x"], ["d"], name="the_det")]
    model = _model(nodes, [_vi("x", TP.FLOAT, [3, 3])], [_vi("d", TP.FLOAT, [])])
    with pytest.raises(UnsupportedOpError, match="node 'the_det' \\(op type Det\\)"):
        tlonnx.from_model(model)
    custom = oh.make_model(oh.make_graph([oh.make_node("Foo", ["x"], ["y"], domain="my.ops")], "g",
                                         [_vi("x", TP.FLOAT, [2])], [_vi("y", TP.FLOAT, [2])]))
    with pytest.raises(UnsupportedOpError, match="op type Foo.*domain 'my.ops'"):
        tlonnx.from_model(custom)


# -- an imported elementwise model runs as fused compiled kernels ---------------------------------------

def lstm_tail(gates, c, x, gamma, beta):
    i, f, g, o = tl.chunk(gates, 4, 1)
    c2 = tl.sigmoid(f) * c + tl.sigmoid(i) * tl.tanh(g)
    h = tl.sigmoid(o) * tl.tanh(c2)
    y = tl.gelu(x * 1.5 + 0.1) * x
    mu = y.mean(1, keepdim=True)
    var = ((y - mu) * (y - mu)).mean(1, keepdim=True)
    return h, c2, (y - mu) * tl.rsqrt(var + 1e-5) * gamma + beta


def test_imported_model_runs_fused_kernels():
    gates = RNG.standard_normal((8, 64)).astype(np.float32)
    c = RNG.standard_normal((8, 16)).astype(np.float32)
    x = RNG.standard_normal((8, 32)).astype(np.float32)
    gamma, beta = np.ones(32, np.float32), np.zeros(32, np.float32)
    args = (gates, c, x, gamma, beta)
    model = round_trip(jit.trace(lstm_tail, args), args)
    fn = tlonnx.from_model(model)
    jit.reset_stats()
    jit.set_strict(True)
    try:
        got = fn(*args)
        got = fn(*args)
    finally:
        jit.set_strict(False)
    st = jit.stats()
    assert st["cache_hits"] + st["cache_misses"] > 0 and st["fallbacks"] == {}, st
    assert "prim::FusionGroup" in str(fn.graph_for(*args))
    assert_same(got, run_ort(model, args), "fused import vs ONNX Runtime")


def test_readme_onnx_example_runs_as_written(tmp_path):
    """README's "ONNX" block, run as pasted in a fresh process."""
    out = run_readme_block("ONNX\n", tmp_path)
    assert float(out.split("\n")[0]) < 1e-5
    assert "prim::FusionGroup" in out
