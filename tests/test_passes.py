"""IR verifier and graph passes (DCE, CSE, constant propagation, type/shape inference).

Graphs are built by hand with ``Graph.create``; every pass result is checked with ``verify`` and,
where it computes, against the interpreter run on the original graph.
"""
import numpy as np
import pytest
from corpus_utils import CASES, graph_files, graph_text, input_sets
from hypothesis import given, settings
from hypothesis import strategies as st

from torchlike.errors import IntegerDivisionByZeroError, TorchlikeError
from torchlike.interpreter import Interpreter
from torchlike.ir import (
    BOOL,
    FLOAT,
    INT,
    NONE,
    Graph,
    TensorType,
    TupleType,
    clone_graph,
    type_of_python_value,
)
from torchlike.ir.parser import parse_graph
from torchlike.ir.verify import IRVerificationError, verify
from torchlike.passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    infer_types,
    join,
    propagate_constants,
    run_default_passes,
)

F23 = TensorType("float32", (2, 3))


def kinds(graph):
    return [n.kind for n in graph.all_nodes()]


def run(graph, *args):
    return Interpreter(graph).run(*args)


def if_node(g, cond, out_types, block=None):
    node = g.create("prim::If", [cond], out_types, block=block)
    return node, node.add_block(), node.add_block()


def loop_node(g, trips, cond, inits, block=None):
    node = g.create("prim::Loop", [trips, cond] + inits, [v.type for v in inits], block=block)
    body = node.add_block()
    body.add_param(None, INT)
    for v in inits:
        body.add_param(None, v.type)
    return node, body


# -- verify ---------------------------------------------------------------------------------------

def _corpus_graphs():
    for case in CASES:
        for which in graph_files(case) + ["te_fused"]:
            yield pytest.param(case, which, id=f"{case}-{which}")


@pytest.mark.parametrize("case,which", list(_corpus_graphs()))
def test_verify_accepts_every_corpus_graph(case, which):
    verify(parse_graph(graph_text(case, which)))


def _simple():
    g = Graph()
    x = g.add_input("x", F23)
    a = g.create("aten::neg", [x], [F23]).output()
    b = g.create("aten::mul", [a, x], [F23]).output()
    g.set_outputs([b])
    return g, x, a, b


def test_verify_accepts_hand_built_graph():
    verify(_simple()[0])


def test_verify_rejects_use_before_definition():
    g, x, a, b = _simple()
    g.block.nodes.reverse()
    with pytest.raises(IRVerificationError, match="not defined before"):
        verify(g)


def test_verify_rejects_stale_and_missing_uses():
    g, x, a, b = _simple()
    a.uses.append(b.node)  # one use too many
    with pytest.raises(IRVerificationError, match="stale use"):
        verify(g)
    g, x, a, b = _simple()
    x.uses.remove(b.node)
    with pytest.raises(IRVerificationError, match="missing a use"):
        verify(g)


def test_verify_rejects_duplicate_names_and_wrong_owner():
    g, x, a, b = _simple()
    b.name = a.name
    with pytest.raises(IRVerificationError, match="duplicate value name"):
        verify(g)
    g, x, a, b = _simple()
    other = Graph()
    a.node.owning_block = other.block
    with pytest.raises(IRVerificationError, match="owning_block"):
        verify(g)


def test_verify_scoping_of_blocks():
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    node, then, other = if_node(g, c, [F23])
    t = g.create("aten::neg", [x], [F23], block=then).output()  # outer value: fine
    then.returns = [t]
    other.returns = [x]
    g.set_outputs([node.output()])
    verify(g)
    # a branch value used after the If: not dominated
    g.create("aten::neg", [t], [F23])
    with pytest.raises(IRVerificationError, match="not defined before"):
        verify(g)


def test_verify_rejects_value_from_sibling_branch_and_later_outer_value():
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    node, then, other = if_node(g, c, [F23])
    t = g.create("aten::neg", [x], [F23], block=then).output()
    then.returns = [t]
    other.returns = [t]  # the other branch's value
    g.set_outputs([node.output()])
    with pytest.raises(IRVerificationError, match="block return 0"):
        verify(g)
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    node, then, other = if_node(g, c, [F23])
    later = g.create("aten::neg", [x], [F23]).output()  # defined after the If
    u = g.create("aten::neg", [later], [F23], block=then).output()
    then.returns, other.returns = [u], [x]
    g.set_outputs([node.output()])
    with pytest.raises(IRVerificationError, match="not defined before"):
        verify(g)


def test_verify_control_flow_arity():
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    node = g.create("prim::If", [c], [F23])
    node.add_block().returns = [x]
    g.set_outputs([node.output()])
    with pytest.raises(IRVerificationError, match="2 blocks"):
        verify(g)
    node.add_block().returns = []
    with pytest.raises(IRVerificationError, match="block1 returns 0 values for 1"):
        verify(g)

    g = Graph()
    x = g.add_input("x", F23)
    n = g.insert_constant(3)
    t = g.insert_constant(True)
    loop, body = loop_node(g, n, t, [x])
    body.returns = [t]  # the carried value is missing
    g.set_outputs([loop.output()])
    with pytest.raises(IRVerificationError, match="body returns 1 values, expected 2"):
        verify(g)
    body.returns = [t, body.params[1]]
    verify(g)
    loop.outputs.append(type(loop.output())("extra", F23, node=loop))
    with pytest.raises(IRVerificationError, match="2 outputs for 1 carried"):
        verify(g)


def _fusion_graph():
    sub = Graph()
    a = sub.add_input("a", F23)
    sub.set_outputs([sub.create("aten::neg", [a], [F23]).output()])
    g = Graph()
    x = g.add_input("x", F23)
    node = g.create("prim::FusionGroup", [x], [F23], attrs={"Subgraph": sub})
    g.set_outputs([node.output()])
    return g, sub, node


def test_verify_fusion_group_subgraph():
    g, sub, node = _fusion_graph()
    verify(g)
    sub.set_outputs(sub.outputs * 2)
    with pytest.raises(IRVerificationError, match="subgraph returns 2 values"):
        verify(g)
    g, sub, node = _fusion_graph()
    sub.nodes[0].inputs[0].uses.clear()  # broken inside the subgraph
    with pytest.raises(IRVerificationError, match="in subgraph"):
        verify(g)


def test_verification_error_is_a_torchlike_error():
    assert issubclass(IRVerificationError, TorchlikeError)


# -- dead code elimination ----------------------------------------------------------------------

def test_dce_removes_unused_pure_nodes_and_keeps_print():
    g = Graph()
    x = g.add_input("x", F23)
    g.create("aten::neg", [x], [F23])              # dead
    y = g.create("aten::mul", [x, x], [F23]).output()
    g.create("prim::Print", [x], [])               # side effect
    g.create("my::unknown", [x], [F23])            # unknown kind: assumed impure
    g.set_outputs([y])
    eliminate_dead_code(g)
    verify(g)
    assert kinds(g) == ["aten::mul", "prim::Print", "my::unknown"]


def test_dce_removes_pure_if_but_keeps_if_with_print():
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    node, then, other = if_node(g, c, [F23])
    then.returns = [g.create("aten::neg", [x], [F23], block=then).output()]
    other.returns = [x]
    node2, then2, other2 = if_node(g, c, [])
    g.create("prim::Print", [x], [], block=then2)
    g.set_outputs([x])
    eliminate_dead_code(g)
    verify(g)
    assert kinds(g) == ["prim::If", "prim::Print"]
    assert x.uses.count(node) == 0


def test_dce_drops_dead_if_outputs_and_loop_carried_values():
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    node, then, other = if_node(g, c, [F23, F23])
    then.returns = [x, g.create("aten::neg", [x], [F23], block=then).output()]
    other.returns = [x, x]
    n = g.insert_constant(3)
    t = g.insert_constant(True)
    loop, body = loop_node(g, n, t, [node.outputs[0], x])
    used = g.create("aten::mul", [body.params[1], body.params[1]], [F23], block=body).output()
    dead = g.create("aten::add", [body.params[2], body.params[2], n], [F23], block=body).output()
    body.returns = [t, used, dead]  # the second carried value is never read after the loop
    g.set_outputs([loop.outputs[0]])
    xv, cv = np.arange(6, dtype=np.float32).reshape(2, 3) / 7, True
    expected = run(g, xv, cv)
    eliminate_dead_code(g)
    verify(g)
    assert len(node.outputs) == 1 and len(loop.outputs) == 1 and len(body.params) == 2
    assert "aten::add" not in kinds(g) and "aten::neg" not in kinds(g)
    np.testing.assert_array_equal(run(g, xv, cv), expected)


def test_dce_keeps_carried_value_that_feeds_a_live_one():
    g = Graph()
    x = g.add_input("x", F23)
    n = g.insert_constant(2)
    t = g.insert_constant(True)
    loop, body = loop_node(g, n, t, [x, x])
    a, b = body.params[1], body.params[2]
    # a' = a * b (live), b' = neg(b): b's slot is unused after the loop but a reads it
    body.returns = [t, g.create("aten::mul", [a, b], [F23], block=body).output(),
                    g.create("aten::neg", [b], [F23], block=body).output()]
    g.set_outputs([loop.outputs[0]])
    xv = np.full((2, 3), 2.0, np.float32)
    expected = run(g, xv)
    eliminate_dead_code(g)
    verify(g)
    assert len(loop.outputs) == 2
    np.testing.assert_array_equal(run(g, xv), expected)


# -- common subexpression elimination -------------------------------------------------------------

def test_cse_merges_duplicates_and_constants_by_value_and_type():
    g = Graph()
    x = g.add_input("x", F23)
    c1, c2 = g.insert_constant(2.0), g.insert_constant(2.0)
    i1, b1 = g.insert_constant(2), g.insert_constant(True)
    m1 = g.create("aten::mul", [x, c1], [F23]).output()
    m2 = g.create("aten::mul", [x, c2], [F23]).output()
    s = g.create("aten::add", [m1, m2, i1], [F23]).output()
    s2 = g.create("aten::add", [s, b1, i1], [F23]).output()
    g.set_outputs([s2])
    xv = np.arange(6, dtype=np.float32).reshape(2, 3)
    expected = run(g, xv)
    eliminate_common_subexpressions(g)
    verify(g)
    consts = [n.attrs.get("value") for n in g.nodes if n.kind == "prim::Constant"]
    assert sorted(map(repr, consts)) == ["2", "2.0", "True"]
    assert kinds(g).count("aten::mul") == 1
    add = next(n for n in g.nodes if n.kind == "aten::add")
    assert add.inputs[0] is add.inputs[1]  # uses lists stay exact: verify() passed
    np.testing.assert_array_equal(run(g, xv), expected)


def test_cse_distinguishes_signed_zero_and_matches_nan():
    g = Graph()
    x = g.add_input("x", F23)
    vals = [g.insert_constant(v) for v in (0.0, -0.0, float("nan"), float("nan"))]
    g.set_outputs([g.create("prim::TupleConstruct", [x] + vals, [NONE]).output()])
    eliminate_common_subexpressions(g)
    verify(g)
    assert len([n for n in g.nodes if n.kind == "prim::Constant"]) == 3


def test_cse_does_not_merge_across_impure_ops():
    g = Graph()
    x = g.add_input("x", F23)
    a = g.create("aten::mul", [x, x], [F23]).output()
    g.create("my::mutate_", [x], [])
    b = g.create("aten::mul", [x, x], [F23]).output()
    g.set_outputs([a, b])
    eliminate_common_subexpressions(g)
    verify(g)
    assert kinds(g).count("aten::mul") == 2


def test_cse_outer_replaces_inner_never_the_reverse():
    g = Graph()
    x = g.add_input("x", F23)
    c = g.add_input("c", BOOL)
    outer = g.create("aten::neg", [x], [F23]).output()
    node, then, other = if_node(g, c, [F23, F23])
    in_then = g.create("aten::neg", [x], [F23], block=then).output()  # same as outer: merged
    only_then = g.create("aten::exp", [x], [F23], block=then).output()
    only_else = g.create("aten::exp", [x], [F23], block=other).output()  # sibling: kept
    then.returns, other.returns = [in_then, only_then], [x, only_else]
    after = g.create("aten::exp", [x], [F23]).output()  # after the If: must stay
    g.set_outputs([node.outputs[0], node.outputs[1], after])
    eliminate_common_subexpressions(g)
    verify(g)
    assert then.returns[0] is outer
    assert [n.kind for n in then.nodes] == ["aten::exp"]
    assert [n.kind for n in other.nodes] == ["aten::exp"]
    assert kinds(g).count("aten::exp") == 3


# -- constant propagation --------------------------------------------------------------------------

def test_constprop_folds_int_arithmetic():
    g = Graph()
    x = g.add_input("x", F23)
    two, three, one = g.insert_constant(2), g.insert_constant(3), g.insert_constant(1)
    s = g.create("aten::add", [two, three, one], [INT]).output()     # 5
    p = g.create("aten::mul", [s, three], [INT]).output()           # 15
    y = g.create("aten::mul", [x, p], [F23]).output()
    g.set_outputs([y])
    xv = np.ones((2, 3), np.float32)
    expected = run(g, xv)
    run_default_passes(g, [F23], check=True)
    assert kinds(g) == ["prim::Constant", "aten::mul"]
    folded = g.nodes[1].inputs[1]
    assert folded.constant_value() == 15 and type(folded.constant_value()) is int
    assert folded.type == INT
    np.testing.assert_array_equal(run(g, xv), expected)


def test_constprop_leaves_raising_and_side_effecting_nodes():
    g = Graph()
    seven, zero = g.insert_constant(7), g.insert_constant(0)
    q = g.create("aten::floor_divide", [seven, zero], [INT]).output()
    g.create("prim::Print", [seven], [])
    g.set_outputs([q])
    propagate_constants(g)
    verify(g)
    assert kinds(g).count("aten::floor_divide") == 1 and "prim::Print" in kinds(g)
    with pytest.raises(IntegerDivisionByZeroError, match="floor_divide"):
        run(g)


def test_constprop_never_folds_ops_the_registry_marks_unfoldable():
    # dropout (OpDef.foldable=False) on a constant: its result depends on the mode, not only on
    # the inputs; an add of two constants beside it still folds.
    g = Graph()
    x = g.insert_constant(np.asarray(3.0, np.float32), TensorType("float32", ()))
    d = g.create("aten::dropout", [x, g.insert_constant(0.5), g.insert_constant(True)],
                 [TensorType("float32", ())]).output()
    s = g.create("aten::add", [g.insert_constant(2), g.insert_constant(3)], [INT]).output()
    g.set_outputs([d, s])
    propagate_constants(g)
    assert "aten::dropout" in kinds(g) and "aten::add" not in kinds(g)


def test_constprop_inlines_constant_if_and_skips_zero_trip_loop():
    g = Graph()
    x = g.add_input("x", F23)
    t = g.insert_constant(True)
    node, then, other = if_node(g, t, [F23])
    then.returns = [g.create("aten::neg", [x], [F23], block=then).output()]
    other.returns = [g.create("aten::exp", [x], [F23], block=other).output()]
    zero = g.insert_constant(0, index=len(g.nodes))
    loop, body = loop_node(g, zero, t, [node.output()])
    body.returns = [t, g.create("aten::exp", [body.params[1]], [F23], block=body).output()]
    g.set_outputs([loop.output()])
    xv = np.linspace(-1, 1, 6, dtype=np.float32).reshape(2, 3)
    propagate_constants(g)
    eliminate_dead_code(g)
    verify(g)
    assert kinds(g) == ["aten::neg"]
    np.testing.assert_array_equal(run(g, xv), -xv)


def test_constprop_folds_scalar_arithmetic_on_0d_constants():
    # 0-d tensor constants run as Python scalars, so their arithmetic folds to a scalar
    g = Graph()
    x = g.add_input("x", TensorType("int32", (2,)))
    a, b = g.insert_constant(np.array(2.5)), g.insert_constant(np.array(2.0))
    s = g.create("aten::add", [a, b, g.insert_constant(1)], [TensorType()]).output()
    g.set_outputs([g.create("aten::mul", [x, s], [TensorType()]).output()])
    xv = np.array([1, 2], np.int32)
    expected = run(g, xv)
    run_default_passes(g, [xv], check=True)
    assert "aten::add" not in kinds(g) and s.constant_value() == 4.5
    out = run(g, xv)
    assert out.dtype == expected.dtype == np.float32
    np.testing.assert_array_equal(out, expected)


@pytest.mark.parametrize("dtype,folds", [("float16", True), ("int32", False)])
def test_constprop_folds_0d_tensor_only_where_promotion_cannot_change(dtype, folds):
    # NumToTensor(2.5) is a 0-d float64 *tensor* at run time; as a constant it would rank as a
    # wrapped number: harmless next to float16 (float16 either way), not next to int32
    # (float64 as a 0-d tensor, float32 as a wrapped number).
    g = Graph()
    x = g.add_input("x", TensorType(dtype, (2,)))
    s = g.create("prim::NumToTensor", [g.insert_constant(2.5)], [TensorType()]).output()
    g.set_outputs([g.create("aten::mul", [x, s], [TensorType()]).output()])
    xv = np.array([1, 2], dtype=dtype)
    expected = run(g, xv)
    run_default_passes(g, [xv], check=True)
    assert ("prim::NumToTensor" not in kinds(g)) == folds
    out = run(g, xv)
    assert out.dtype == expected.dtype
    np.testing.assert_array_equal(out, expected)


# -- type and shape inference ----------------------------------------------------------------------

def _binary_graph(op, a_kind, b_kind, a, b):
    """A graph computing ``op(a, b)``; each operand is an input or a constant."""
    g = Graph()
    inputs, operands = [], []
    for kind, v in ((a_kind, a), (b_kind, b)):
        if kind == "input":
            operands.append(g.add_input(None, type_of_python_value(v)))
            inputs.append(v)
        else:
            operands.append(g.insert_constant(v, index=len(g.nodes)))
    extra = [g.insert_constant(1, index=len(g.nodes))] if op in ("aten::add", "aten::sub") else []
    g.set_outputs([g.create(op, operands + extra, [TensorType()]).output()])
    return g, inputs


def _operand(draw_kind, dtype, shape):
    rng = np.random.default_rng(0)
    if draw_kind == "tensor":
        return "input", (rng.random(shape) * 4 + 1).astype(dtype)
    if draw_kind == "0d":
        return "input", np.asarray(3, dtype=dtype)
    if draw_kind == "0d_const":
        return "const", np.asarray(3, dtype=dtype)
    return "input", {"int": 3, "float": 2.5, "bool": True}[draw_kind]


DTYPES = ["bool", "uint8", "int32", "int64", "float16", "float32", "float64"]
OPERANDS = st.sampled_from(["tensor", "0d", "0d_const", "int", "float", "bool"])
SHAPES = st.sampled_from([(2, 3), (3,), (1, 3), (2, 1), (1,)])


@settings(max_examples=120, deadline=None)
@given(op=st.sampled_from(["aten::add", "aten::mul", "aten::div", "aten::gt", "aten::maximum",
                           "aten::sub"]),
       ka=st.sampled_from(["tensor", "0d", "0d_const"]), kb=OPERANDS,
       da=st.sampled_from(DTYPES), db=st.sampled_from(DTYPES), sa=SHAPES, sb=SHAPES)
def test_infer_types_matches_interpreter_on_binary_ops(op, ka, kb, da, db, sa, sb):
    (kind_a, a), (kind_b, b) = _operand(ka, da, sa), _operand(kb, db, sb)
    g, inputs = _binary_graph(op, kind_a, kind_b, a, b)
    try:
        real = run(g, *inputs)
    except TorchlikeError:
        return  # e.g. sub on bools: PyTorch refuses, so does the interpreter
    infer_types(g, [type_of_python_value(v) for v in inputs])
    t = g.outputs[0].type
    if not hasattr(real, "dtype"):  # two constants: TorchScript scalar arithmetic
        assert t == type_of_python_value(real)
        return
    assert isinstance(t, TensorType)
    assert (t.dtype, t.shape) == (str(real.dtype), real.shape)
    if real.ndim:
        assert t.strides == tuple(s // real.itemsize for s in np.ascontiguousarray(real).strides)


def test_infer_types_broadcasting_promotion_and_scalars():
    g = Graph()
    x = g.add_input("x", TensorType())
    y = g.add_input("y", TensorType())
    n = g.add_input("n", INT)
    one = g.insert_constant(1)
    m = g.create("aten::mul", [x, y], [TensorType()]).output()
    k = g.create("aten::add", [n, one], [TensorType()]).output()      # int + int: int
    q = g.create("aten::div", [n, k], [TensorType()]).output()        # int / int: float
    z = g.create("aten::mul", [m, q], [TensorType()]).output()
    g.set_outputs([z, k, q])
    infer_types(g, [TensorType("int32", (4, 1)), TensorType("int64", (3,)), INT])
    assert m.type == TensorType("int64", (4, 3), (3, 1))
    assert (k.type, q.type) == (INT, FLOAT)
    assert z.type.dtype == "float32" and z.type.shape == (4, 3)  # int tensor * float scalar
    out = run(g, np.ones((4, 1), np.int32), np.ones(3, np.int64), 2)
    assert out[0].dtype == np.float32 and out[1] == 3 and out[2] == pytest.approx(2 / 3)


@pytest.mark.parametrize("kind", ["aten::type_as", "aten::to"])
def test_infer_types_reads_the_dtype_of_a_tensor_target(kind):
    """x.type_as(y) and x.to(y) take y's dtype (not x's), as the interpreter does; an unknown
    dtype of y leaves the result's unknown."""
    g = parse_graph(f"""graph(%x : Tensor, %y : Tensor):
  %n : bool = prim::Constant[value=0]()
  %1 : Tensor = {kind}(%x, %y{', %n, %n' if kind == 'aten::to' else ''})
  return (%1)""")
    x, y = np.ones((2, 3), np.float32), np.ones(3, np.int16)
    infer_types(g, [TensorType("float32", (2, 3)), TensorType("int16", (3,))])
    assert g.outputs[0].type.dtype == str(run(g, x, y).dtype) == "int16"
    infer_types(g, [TensorType("float32", (2, 3)), TensorType(None, (3,))])
    assert g.outputs[0].type.dtype is None


@pytest.mark.parametrize("call,shape", [("aten::norm(%x, %p, %d, %k)", (3, 1)),
                                        ("aten::norm(%x, %p)", ()),
                                        ("aten::linalg_vector_norm(%x, %p, %d, %k, %n)", (3, 1))])
def test_infer_types_of_vector_norms(call, shape):
    g = parse_graph(f"""graph(%x : Tensor):
  %p : float = prim::Constant[value=2.]()
  %d : int[] = prim::Constant[value=[-1]]()
  %k : bool = prim::Constant[value=1]()
  %n : NoneType = prim::Constant()
  %1 : Tensor = {call}
  return (%1)""")
    x = np.ones((3, 4), np.float32)
    infer_types(g, [TensorType("float32", (3, 4))])
    out = run(g, x)
    assert (g.outputs[0].type.dtype, g.outputs[0].type.shape) == (str(out.dtype), out.shape)
    assert out.shape == shape


@pytest.mark.parametrize("call,shapes", [
    ("aten::addmm(%a, %b, %c, %one, %one)", [(5,), (3, 4), (4, 5)]),
    ("aten::mv(%a, %b)", [(3, 4), (4,)]),
    ("aten::narrow(%a, %one, %one, %one)", [(3, 4), (1,)]),
])
def test_infer_types_of_products_and_narrow(call, shapes):
    names = ["a", "b", "c"][:len(shapes)]
    g = parse_graph(f"""graph({', '.join(f'%{n} : Tensor' for n in names)}):
  %one : int = prim::Constant[value=1]()
  %1 : Tensor = {call}
  return (%1)""")
    args = [np.arange(np.prod(s), dtype=np.float32).reshape(s) for s in shapes]
    infer_types(g, [TensorType("float32", s) for s in shapes])
    out = run(g, *args)
    assert (g.outputs[0].type.dtype, g.outputs[0].type.shape) == (str(out.dtype), out.shape)


@pytest.mark.parametrize("call", [
    "aten::tensor(%data, %none, %none, %false)",
    "aten::zeros(%size, %none, %none, %none, %none, %none)",
    "aten::argsort(%x, %one, %false)",
    "aten::pad(%x, %pad, %mode, %none)",
    "aten::repeat(%x, %reps)",
    "aten::linspace(%one, %one, %three, %none, %none, %none, %none)",
    "aten::index_select(%x, %one, %idx)",
    "aten::gather(%x, %one, %idx2, %false)",
    "aten::scatter(%x, %one, %idx2, %x)",
])
def test_infer_types_shapes_from_constant_arguments(call):
    """Shapes that constant arguments state (sizes, data, pads, repeats, steps): as run."""
    g = parse_graph(f"""graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %data : int[][] = prim::Constant[value=[[1, 2, 3], [4, 5, 6]]]()
  %size : int[] = prim::Constant[value=[2, 0, 3]]()
  %pad : int[] = prim::Constant[value=[1, 2, 0, 3]]()
  %mode : str = prim::Constant[value="constant"]()
  %reps : int[] = prim::Constant[value=[2, 1, 3]]()
  %idx : Tensor = aten::tensor(%size, %none, %none, %false)
  %small : int[][] = prim::Constant[value=[[0, 1, 3], [2, 0, 1]]]()
  %idx2 : Tensor = aten::tensor(%small, %none, %none, %false)
  %1 : Tensor = {call}
  return (%1)""")
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    infer_types(g, [TensorType("float32", (3, 4))])
    out = run(g, x)
    assert g.outputs[0].type.shape == out.shape


def test_infer_types_overwrites_traced_shapes_and_handles_unknown_ops():
    g = Graph()
    x = g.add_input("x", F23)
    y = g.create("aten::neg", [x], [F23]).output()
    w = g.create("my::opaque", [y], [F23, INT])
    g.set_outputs([y] + w.outputs)
    infer_types(g, [TensorType("float64", (5,), (1,), "cpu", False)])
    assert y.type == TensorType("float64", (5,), (1,), "cpu", False)
    assert w.outputs[0].type == TensorType() and w.outputs[1].type == INT


def test_infer_types_if_join_and_loop_fixed_point():
    g = Graph()
    x = g.add_input("x", TensorType())
    c = g.add_input("c", BOOL)
    node, then, other = if_node(g, c, [TensorType(), TensorType()])
    # same type on both sides / different shapes of the same rank
    a = g.create("aten::neg", [x], [TensorType()], block=then).output()
    b = g.create("aten::exp", [x], [TensorType()], block=other).output()
    wide = g.create("aten::mul", [x, g.insert_constant(np.ones((1, 3), np.float32),
                                                       TensorType("float32", (1, 3)),
                                                       block=then)],
                    [TensorType()], block=then).output()
    then.returns, other.returns = [a, wide], [b, x]
    n = g.insert_constant(4, index=len(g.nodes))
    t = g.insert_constant(True, index=len(g.nodes))
    loop, body = loop_node(g, n, t, [x])
    body.returns = [t, g.create("aten::add", [body.params[1], body.params[1],
                                              g.insert_constant(1, block=body)],
                                [TensorType()], block=body).output()]
    # a carried value whose dtype changes from int32 to int64: the join loses the dtype
    loop2, body2 = loop_node(g, n, t, [x])
    two64 = g.insert_constant(np.ones(3, np.int64), TensorType("int64", (3,)), block=body2)
    body2.returns = [t, g.create("aten::mul", [body2.params[1], two64], [TensorType()],
                                 block=body2).output()]
    g.set_outputs(node.outputs + loop.outputs + loop2.outputs)
    infer_types(g, [TensorType("float32", (2, 3), (3, 1), "cpu", False), BOOL])
    assert node.outputs[0].type == TensorType("float32", (2, 3), (3, 1), "cpu", False)
    assert node.outputs[1].type == TensorType("float32", (2, 3), (3, 1), "cpu", False)
    assert loop.output().type == TensorType("float32", (2, 3), (3, 1), "cpu", False)
    assert loop2.output().type.dtype == "float32"  # float32 * int64 tensor stays float32
    infer_types(g, [TensorType("int32", (3,), (1,), "cpu", False), BOOL])
    t2 = loop2.output().type
    assert t2.dtype is None and t2.shape == (3,)  # int32 on entry, int64 after one trip
    real = run(g, np.ones(3, np.int32), True)
    assert real[3].dtype == np.int64 and real[2].dtype == np.int32


def test_join_rules():
    f = TensorType("float32", (2, 3), (3, 1), "cpu", False)
    assert join(f, f) is f
    j = join(f, TensorType("float32", (2, 4), (4, 1), "cpu", False))
    assert j == TensorType("float32", (2, None), (None, 1), "cpu", False)
    assert join(f, TensorType("int64", (5,))).shape is None
    assert join(f, TensorType("int64", (5,))).dtype is None
    assert join(INT, FLOAT) is None
    assert join(TupleType((f, INT)), TupleType((f, INT))) == TupleType((f, INT))


# -- the pipeline on the corpus --------------------------------------------------------------------

def _flat(x):
    if isinstance(x, (tuple, list)):
        for y in x:
            yield from _flat(y)
    else:
        yield x


@pytest.mark.parametrize("case,which", [(c, w) for c in CASES for w in graph_files(c)
                                        if not c.startswith("large")])
def test_default_passes_preserve_corpus_results(case, which):
    original = parse_graph(graph_text(case, which))
    for _label, args, _expected in input_sets(case):
        g = clone_graph(original)
        run_default_passes(g, [type_of_python_value(a) for a in args], check=True)
        want = list(_flat(run(original, *args)))
        got = list(_flat(run(g, *args)))
        assert len(got) == len(want)
        for a, b in zip(want, got):
            a, b = np.asarray(a), np.asarray(b)
            assert a.dtype == b.dtype and a.shape == b.shape
            np.testing.assert_allclose(b, a, rtol=1e-6, atol=0, equal_nan=True)
        # inferred output types agree with what actually came out, where known
        types = []
        for v in g.outputs:
            types.extend(v.type.elems if isinstance(v.type, TupleType) else [v.type])
        for t, b in zip(types, got):
            if isinstance(t, TensorType) and t.dtype is not None and t.shape is not None:
                assert (t.dtype, t.shape) == (str(np.asarray(b).dtype), np.asarray(b).shape)


def test_input_shape_queries_fold_in_a_specialization():
    """``x.dim()`` and ``x.size(0)`` of a graph input fold to this call's constants, so the
    branch not taken goes (a scripted nn.LSTM's ``is_batched``); a query of anything else, or
    of an input whose shape is unknown, stays."""
    from torchlike.ir.types import TensorType
    from torchlike.passes import infer_types
    from torchlike.passes.shape_queries import fold_input_shape_queries
    text = """graph(%x : Tensor, %y : Tensor):
  %zero : int = prim::Constant[value=0]()
  %three : int = prim::Constant[value=3]()
  %d : int = aten::dim(%x)
  %b : int = aten::size(%x, %zero)
  %all : int[] = aten::size(%x)
  %n : int = aten::numel(%x)
  %z : Tensor = aten::relu(%x)
  %dz : int = aten::dim(%z)
  %dy : int = aten::dim(%y)
  %bad : int = aten::size(%x, %three)
  return (%d, %b, %all, %n, %dz, %dy, %bad)"""
    g = infer_types(parse_graph(text), [TensorType("float32", (5, 2, 4)), TensorType()])
    assert fold_input_shape_queries(g) == 4
    kinds = [v.node.kind for v in g.outputs]
    assert kinds == ["prim::Constant"] * 4 + ["aten::dim", "aten::dim", "aten::size"]
    assert [v.constant_value() for v in g.outputs[:4]] == [3, 5, [5, 2, 4], 40]
    mutated = text.replace("  %z : Tensor = aten::relu(%x)", "  %z : Tensor = aten::relu_(%x)")
    g = infer_types(parse_graph(mutated), [TensorType("float32", (5, 2, 4)), TensorType()])
    assert fold_input_shape_queries(g) == 0
