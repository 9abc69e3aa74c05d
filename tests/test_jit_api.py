"""The public ``torchlike.jit`` API: ScriptFunction, .code, graph_for caching, save/load, run."""
import io
import json
import zipfile

import numpy as np
import pytest
from corpus_utils import CASES, graph_files, graph_text, input_sets

import torchlike
from torchlike import jit
from torchlike.errors import ExecutionError, UnsupportedOpError
from torchlike.ir import BOOL, INT, Graph, TensorType, TupleType
from torchlike.ir.parser import parse_graph
from torchlike.jit import ScriptFunction, SerializationError

F = TensorType()


def _affine_graph():
    """y = x * 2.5 + c0 where c0 is a 0-d float64 tensor constant whose text form is rounded."""
    g = Graph()
    x = g.add_input("x", F)
    two = g.insert_constant(2.5)
    c0 = g.insert_constant(np.array(0.123456789012345), TensorType("float64", (), (), "cpu", False))
    one = g.insert_constant(1)
    m = g.create("aten::mul", [x, two], [F]).output()
    g.set_outputs([g.create("aten::add", [m, c0, one], [F]).output()])
    return g


def _control_flow_graph():
    """if c: y = -x else: y = exp(x); then n times: y = y * y  (returns (y, x))."""
    g = Graph()
    x = g.add_input("x", F)
    c = g.add_input("c", BOOL)
    n = g.add_input("n", INT)
    node = g.create("prim::If", [c], [F], names=["y"])
    then, other = node.add_block(), node.add_block()
    then.returns = [g.create("aten::neg", [x], [F], block=then).output()]
    other.returns = [g.create("aten::exp", [x], [F], block=other).output()]
    t = g.insert_constant(True)
    loop = g.create("prim::Loop", [n, t, node.output()], [F], names=["y"])
    body = loop.add_block()
    body.add_param("i", INT)
    y = body.add_param("y", F)
    body.returns = [t, g.create("aten::mul", [y, y], [F], block=body).output()]
    g.set_outputs([g.create("prim::TupleConstruct", [loop.output(), x],
                            [TupleType((F, F))]).output()])
    return g


X = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)


def test_script_function_from_graph_computes_and_names_inputs():
    fn = ScriptFunction(_affine_graph(), name="affine")
    np.testing.assert_allclose(fn(X), X * 2.5 + 0.123456789012345, rtol=1e-6)
    assert fn.input_names == ["x"] and fn.kind == "graph"
    assert fn(X).dtype == np.float32
    with pytest.raises(TypeError, match="takes 1 arguments"):
        fn(X, X)


def test_tuple_output_returns_tuple_and_control_flow_runs():
    fn = ScriptFunction(_control_flow_graph())
    y, x = fn(X, True, 2)
    np.testing.assert_allclose(y, (-X) ** 4, rtol=1e-6)
    np.testing.assert_array_equal(x, X)
    y, _ = fn(X, False, 1)
    np.testing.assert_allclose(y, np.exp(X) ** 2, rtol=1e-6)


def test_code_renders_if_and_loop():
    code = ScriptFunction(_control_flow_graph()).code
    assert code.startswith("def forward(x: Tensor,")
    assert "-> Tuple[Tensor, Tensor]:" in code
    assert "\n  if c:\n" in code and "\n  else:\n" in code
    assert "for i in range(n):" in code
    assert "torch.neg(x)" in code and "torch.exp(x)" in code
    compile(code.replace("torch.", "math_"), "<code>", "exec")  # it is valid Python syntax


def test_code_spells_casts_and_print_as_the_registry_says():
    g = parse_graph("""graph(%x : Tensor):
  %1 : int = aten::Int(%x)
  %2 : float = aten::Float(%x)
   = prim::Print(%1, %2)
  return (%1)
""")
    code = ScriptFunction(g).code
    assert "= int(x)" in code and "= float(x)" in code and "print(_0, _1)" in code


def test_code_renders_while_loop_and_constants():
    g = Graph()
    x = g.add_input("x", F)
    n = g.add_input("n", INT)
    t = g.insert_constant(True)
    loop = g.create("prim::Loop", [n, t, x], [F])
    body = loop.add_block()
    body.add_param("i", INT)
    y = body.add_param(None, F)
    z = g.create("aten::mul", [y, g.insert_constant(0.5, block=body)], [F], block=body).output()
    flag = g.create("aten::lt", [body.params[0], g.insert_constant(3, block=body)], [BOOL],
                    block=body).output()
    body.returns = [flag, z]
    g.set_outputs([loop.output()])
    code = ScriptFunction(g).code
    assert "while " in code and "torch.mul(" in code and "0.5)" in code
    compile(code, "<code>", "exec")
    out = ScriptFunction(g)(X, 10)  # stops when i < 3 turns false: 4 trips
    np.testing.assert_allclose(out, X * 0.5 ** 4)


def test_graph_for_is_cached_per_signature():
    fn = ScriptFunction(_affine_graph())
    g1 = fn.graph_for(X)
    assert fn.graph_for(X.copy()) is g1                              # same signature
    assert fn.graph_for(X.astype(np.float64)) is not g1              # another dtype
    assert fn.graph_for(X.reshape(3, 2)) is not g1                   # another shape
    assert fn.graph_for(np.asfortranarray(X)) is not g1              # another layout
    assert fn.graph_for(X) is g1
    assert fn.graph is not g1  # the captured graph stays as it was
    out_type = g1.outputs[0].type
    assert out_type.dtype == "float32" and out_type.shape == (2, 3)  # specialized
    g64 = fn.graph_for(X.astype(np.float64))
    assert g64.outputs[0].type.dtype == "float64"
    assert fn.graph.outputs[0].type == F


def test_scalar_arguments_are_keyed_by_type():
    fn = ScriptFunction(_control_flow_graph())
    assert fn.graph_for(X, True, 2) is fn.graph_for(X, False, 7)
    # As in TorchScript, an int is not a bool: refused, naming the argument.
    with pytest.raises(TypeError, match=r"argument 'c' \(%c\) expects a bool, got int"):
        fn.graph_for(X, 1, 2)


@pytest.mark.parametrize("bad, expected", [
    ([1.0, 2.0], "expects a Tensor .* got list: convert it first"),
    ((1.0,), "expects a Tensor .* got tuple"),
    (2.5, "expects a Tensor .* got float: wrap it as a 0-d array"),
])
def test_non_array_for_a_tensor_parameter_is_refused(bad, expected):
    fn = jit.trace(lambda x: x * 2.0, (X,))
    with pytest.raises(TypeError, match=expected):
        fn(bad)
    with pytest.raises(TypeError, match=expected):
        jit.run(fn.graph, bad)


def test_a_torch_tensor_is_refused_with_the_conversion(torch):
    """A PyTorch user's first call: a tensor has a shape and a dtype, but is not an array
    (it used to fail inside type inference with an AttributeError)."""
    fn = jit.trace(lambda x: x * 2.0, (X,))
    with pytest.raises(TypeError, match=r"expects a Tensor .* got a torch.Tensor of shape "
                                        r"\(2, 3\): .* pass x.numpy\(\)"):
        fn(torch.from_numpy(X))
    np.testing.assert_array_equal(fn(torch.from_numpy(X).numpy()), X * 2.0)
    with pytest.raises(UnsupportedOpError, match=r"cannot trace an input of type Tensor .*"
                                                 r"x.numpy\(\)"):
        jit.trace(lambda x: x * 2.0, (torch.from_numpy(X),))
    sfn = ScriptFunction(_control_flow_graph())
    with pytest.raises(TypeError, match=r"argument 'n' \(%n\) expects an int, got a "
                                        r"torch.Tensor of shape \(\): .* x.item\(\)"):
        sfn(X, True, torch.tensor(2))


def test_numpy_scalar_runs_as_a_0d_array():
    fn = jit.trace(lambda x: x * 2.0, (np.asarray(np.float32(3)),))
    out = fn(np.float32(3))
    assert isinstance(out, np.ndarray) and out.shape == () and out.dtype == np.float32
    assert out == 6.0


def test_array_for_a_scalar_parameter_is_refused():
    fn = ScriptFunction(_control_flow_graph())
    with pytest.raises(TypeError, match=r"argument 'n' \(%n\) expects an int, got an array"):
        fn(X, True, np.ones(2))


def test_fusion_switch_changes_the_specialization():
    g = Graph()
    x = g.add_input("x", F)
    a = g.create("aten::mul", [x, x], [F]).output()
    g.set_outputs([g.create("aten::tanh", [a], [F]).output()])
    fn = ScriptFunction(g)
    was = jit.fusion_enabled()
    try:
        jit.set_fusion_enabled(True)
        fused = [n.kind for n in fn.graph_for(X).nodes]
        jit.set_fusion_enabled(False)
        plain = [n.kind for n in fn.graph_for(X).nodes]
        np.testing.assert_allclose(fn(X), np.tanh(X * X), rtol=1e-6)
    finally:
        jit.set_fusion_enabled(was)
    assert fused == ["prim::FusionGroup"] and plain == ["aten::mul", "aten::tanh"]
    np.testing.assert_allclose(fn(X), np.tanh(X * X), rtol=1e-6)


def test_dont_fuse_setting_reaches_the_partitioner():
    g = Graph()
    x = g.add_input("x", F)
    a = g.create("aten::mul", [x, x], [F]).output()
    b = g.create("aten::add", [a, x, g.insert_constant(1)], [F]).output()
    g.set_outputs([g.create("aten::tanh", [b], [F]).output()])
    fn = ScriptFunction(g)
    was_on, was_excluded = jit.fusion_enabled(), jit.dont_fuse()
    try:
        jit.set_fusion_enabled(True)
        jit.set_dont_fuse([])
        before = fn.graph_for(X)
        jit.set_dont_fuse(["aten::tanh"])  # a settings change drops the specializations
        after = fn.graph_for(X)
        assert after is not before
        assert [n.kind for n in after.nodes] == ["prim::FusionGroup", "aten::tanh"]
        np.testing.assert_allclose(fn(X), np.tanh(X * X + X), rtol=1e-6)
    finally:
        jit.set_fusion_enabled(was_on)
        jit.set_dont_fuse(sorted(was_excluded))


def test_save_load_round_trip(tmp_path):
    for graph, args in ((_affine_graph(), (X,)), (_control_flow_graph(), (X, True, 3))):
        fn = ScriptFunction(graph, name="f", kind="script")
        path = tmp_path / "f.tlk"
        fn.save(path)
        back = jit.load(path)
        assert str(back.graph) == str(fn.graph)
        assert (back.name, back.input_names, back.kind) == ("f", fn.input_names, "script")
        want, got = fn(*args), back(*args)
        want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
        assert len(got) == len(want)
        for a, b in zip(want, got):
            np.testing.assert_array_equal(a, b)


def test_save_keeps_exact_tensor_constants(tmp_path):
    fn = ScriptFunction(_affine_graph())
    path = tmp_path / "a.tlk"
    fn.save(path)
    with zipfile.ZipFile(path) as z:
        assert sorted(z.namelist()) == ["constants.npz", "graph.txt", "meta.json"]
        meta = json.loads(z.read("meta.json"))
        assert meta == {"format": "torchlike.ScriptFunction", "version": 1, "name": "forward",
                        "input_names": ["x"], "kind": "graph"}
        assert "{0.123457}" in z.read("graph.txt").decode()  # the text alone is rounded
    back = jit.load(path)
    const = [n for n in back.graph.nodes if n.kind == "prim::Constant"
             and isinstance(n.attrs.get("value"), np.ndarray)]
    assert const[0].attrs["value"].item() == 0.123456789012345
    assert const[0].attrs["value"].dtype == np.float64
    np.testing.assert_array_equal(back(X), fn(X))


def _rewrite(path, out, **changes):
    with zipfile.ZipFile(path) as z:
        members = {n: z.read(n) for n in z.namelist()}
    meta = json.loads(members["meta.json"])
    meta.update(changes)
    members["meta.json"] = json.dumps(meta).encode()
    with zipfile.ZipFile(out, "w") as z:
        for n, data in members.items():
            z.writestr(n, data)


def test_load_rejects_newer_or_foreign_files(tmp_path):
    path = tmp_path / "a.tlk"
    ScriptFunction(_affine_graph()).save(path)
    _rewrite(path, tmp_path / "new.tlk", version=2)
    with pytest.raises(SerializationError, match="version 2, newer"):
        jit.load(tmp_path / "new.tlk")
    _rewrite(path, tmp_path / "other.tlk", format="something.else")
    with pytest.raises(SerializationError, match="does not describe"):
        jit.load(tmp_path / "other.tlk")
    (tmp_path / "junk.tlk").write_bytes(b"not a zip")
    with pytest.raises(SerializationError, match="not a saved torchlike function"):
        jit.load(tmp_path / "junk.tlk")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("meta.json", "{}")
    buf.seek(0)
    with pytest.raises(SerializationError, match="missing"):
        jit.load(buf)


def test_run_interprets_a_graph_and_errors_are_exported():
    np.testing.assert_allclose(jit.run(_affine_graph(), X), X * 2.5 + 0.123456789012345,
                               rtol=1e-6)
    assert issubclass(jit.ScriptError, torchlike.errors.TorchlikeError)


@pytest.mark.parametrize("node,message", [
    ("aten::exp(%x, %x, %x)", r"aten::exp\(Tensor self\) takes at most 1 input, the node has 3"),
    ("aten::mul(%x, %x, %x)", r"aten::mul\(Tensor self, Tensor other\) takes at most 2 inputs"),
    ("aten::relu(%x, %x)", r"aten::relu\(Tensor self\) takes at most 1 input, the node has 2")])
def test_a_node_with_more_inputs_than_its_schema_is_an_error(node, message):
    """Malformed text: the op's impl would have ignored the extra inputs (exp(x, x, x) ran as
    exp(x)); fused or not, the error names the node and its source line."""
    g = parse_graph(f"""graph(%x : Tensor):
  %y : Tensor = aten::neg(%x)
  %t : Tensor = {node} # model.py:7:12
  %z : Tensor = aten::mul(%t, %y)
  return (%z)""")
    for graph in (g, jit.fuse(g)):
        with pytest.raises(ExecutionError, match=r"%t\) at model.py:7:12: " + message):
            jit.run(graph, X)
    fmt = parse_graph("""graph(%s : str, %a : int, %b : float):
  %f : str = aten::format(%s, %a, %b)
  return (%f)""")
    assert jit.run(fmt, "{} and {}", 1, 2.5) == "1 and 2.5"  # format's arguments are its own


def test_fuse_and_stats_delegate_to_the_fuser():
    g = Graph()
    x = g.add_input("x", TensorType("float32", (2, 3)))
    a = g.create("aten::mul", [x, x], [F]).output()
    g.set_outputs([g.create("aten::neg", [a], [F]).output()])
    fused = jit.fuse(g)
    assert [n.kind for n in fused.nodes] == ["prim::FusionGroup"]
    jit.reset_stats()
    np.testing.assert_allclose(jit.run(fused, X), -(X * X))
    assert isinstance(jit.stats(), dict)


def _flat(x):
    if isinstance(x, (tuple, list)):
        for y in x:
            yield from _flat(y)
    else:
        yield x


@pytest.mark.parametrize("case,which", [(c, w) for c in CASES for w in graph_files(c)
                                        if not c.startswith("large")])
def test_corpus_graphs_through_script_function(case, which):
    fn = ScriptFunction(parse_graph(graph_text(case, which)))
    for label, args, expected in input_sets(case):
        if "traced" in which and label != "inputs":
            continue  # a trace baked in the example's branch (corpus README)
        got = list(_flat(fn(*args)))
        want = [expected[f"out{i}"] for i in range(len(expected))]
        assert len(got) == len(want)
        for a, b in zip(got, want):
            a = np.asarray(a)
            assert a.dtype == b.dtype and a.shape == b.shape, (case, label)
            np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6, equal_nan=True)
        # warm: the same specialization object serves the second call
        assert fn.graph_for(*args) is fn.graph_for(*args)


def test_trace_returns_script_function():
    def f(x, y):
        return torchlike.tanh(x * y + 1.0)

    fn = jit.trace(f, (X, X))
    assert isinstance(fn, ScriptFunction) and fn.kind == "trace" and fn.__name__ == "f"
    assert fn.input_names == ["x", "y"]
    np.testing.assert_allclose(fn(X, X), np.tanh(X * X + 1.0), rtol=1e-6)
    assert "def f(x: Tensor," in fn.code


def test_script_returns_script_function():
    def f(x, n: int):
        for _ in range(n):
            x = x * 2.0
        return x

    fn = jit.script(f)
    assert isinstance(fn, ScriptFunction) and fn.kind == "script"
    np.testing.assert_allclose(fn(X, 3), X * 8.0)
    assert "for " in fn.code


def test_interpreter_cached_per_signature_runs_same_result():
    fn = ScriptFunction(_affine_graph())
    first = fn(X)
    entry = fn._specialization_for((X,))
    assert entry.graph is fn.graph_for(X)
    assert fn._specialization_for((X,)) is entry
    np.testing.assert_array_equal(fn(X), first)


def test_codegen_delegates_to_the_fuser():
    g = Graph()
    x = g.add_input("x", TensorType("float32", (2, 3)))
    a = g.create("aten::mul", [x, x], [F]).output()
    g.set_outputs([g.create("aten::neg", [a], [F]).output()])
    kernels = jit.codegen(g, X, backend="cpu")
    assert len(kernels) == 1 and kernels[0].name in kernels[0].source
