"""The IR classes and printer, built by hand (the parser and corpus tests check the rest)."""
import numpy as np

from torchlike.interpreter import run
from torchlike.ir import (
    BOOL,
    FLOAT,
    INT,
    ClassType,
    Graph,
    ListType,
    OptionalType,
    TensorType,
    TupleType,
    clone_graph,
    tensor_type_of,
)
from torchlike.ir.printer import format_attr_value, format_float


def test_tensor_type_printing_matches_pytorch():
    assert str(TensorType("float32", (3, 4), (4, 1), "cpu", False)) == \
        "Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)"
    assert str(TensorType("float64", (), (), "cpu", False)) == "Double(requires_grad=0, device=cpu)"
    assert str(TensorType("int64", (None, 4))) == "Long(*, 4)"
    assert str(TensorType()) == "Tensor"
    assert str(ListType(TensorType())) == "Tensor[]"
    assert str(TupleType((TensorType(), INT))) == "(Tensor, int)"
    assert str(OptionalType(FLOAT)) == "float?"
    assert str(ClassType("__torch__.MyCell")) == "__torch__.MyCell"


def test_tensor_type_of_array_counts_strides_in_elements():
    a = np.zeros((3, 4), np.float32).T
    assert tensor_type_of(a) == TensorType("float32", (4, 3), (1, 4), "cpu", False)


def test_attribute_values_print_like_pytorch():
    assert format_float(1.0) == "1."
    assert format_float(0.1) == "0.10000000000000001"
    assert format_float(1e-5) == "1.0000000000000001e-05"
    assert format_float(float("-inf")) == "-inf"
    assert format_attr_value(np.array(0.7978845608028654)) == "{0.797885}"
    assert format_attr_value(np.array(3, dtype=np.int64)) == "{3}"
    assert format_attr_value([-1]) == "[-1]"
    assert format_attr_value("trunc") == '"trunc"'
    assert format_attr_value(True) == "1"


def _scale_shift_graph():
    g = Graph()
    x = g.add_input("x", TensorType("float32", (2, 3)))
    one = g.insert_constant(1)
    two = g.insert_constant(2.0)
    y = g.create("aten::mul", [x, two], [x.type], source="f.py:3:0").output()
    z = g.create("aten::add", [y, two, one], [x.type]).output()
    g.set_outputs([z])
    return g


def test_hand_built_graph_prints_and_runs():
    g = _scale_shift_graph()
    assert str(g) == (
        "graph(%x : Float(2, 3)):\n"
        "  %1 : float = prim::Constant[value=2.]()\n"
        "  %0 : int = prim::Constant[value=1]()\n"
        "  %2 : Float(2, 3) = aten::mul(%x, %1) # f.py:3:0\n"
        "  %3 : Float(2, 3) = aten::add(%2, %1, %0)\n"
        "  return (%3)\n")
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    out = run(g, x)
    assert out.dtype == np.float32
    np.testing.assert_array_equal(out, x * 2 + 2)


def test_blocks_print_with_params_and_returns():
    g = Graph()
    x = g.add_input("x")
    n = g.add_input("n", INT)
    true = g.insert_constant(True, BOOL)
    loop = g.create("prim::Loop", [n, true, x], [TensorType()], names=["y"])
    body = loop.add_block()
    body.add_param("i", INT)
    xi = body.add_param("x.1")
    two = g.insert_constant(2.0)
    sq = g.create("aten::mul", [xi, two], block=body).output()
    body.returns = [true, sq]
    g.set_outputs(loop.outputs)
    text = str(g)
    assert "    block0(%i : int, %x.1 : Tensor):\n" in text
    assert "      -> (%0, %2)\n" in text
    np.testing.assert_array_equal(run(g, np.ones(3, np.float32), 4), np.full(3, 16, np.float32))


def test_fresh_names_never_collide():
    g = Graph()
    assert g.fresh_name("x") == "x"
    assert g.fresh_name("x") == "x.1"
    assert g.fresh_name("x.1") == "x.2"
    g.claim_name("0")
    assert g.fresh_name() == "1"


def test_clone_is_deep_and_identical_in_text():
    g = _scale_shift_graph()
    c = clone_graph(g)
    assert str(c) == str(g)
    c.nodes[-1].kind = "aten::sub"
    assert "aten::sub" not in str(g)


def test_replace_all_uses_with_keeps_use_lists_exact():
    from torchlike.ir.verify import verify
    g = Graph()
    x = g.add_input("x")
    y = g.add_input("y")
    sq = g.create("aten::mul", [x, x]).output()
    g.set_outputs([sq, x])
    x.replace_all_uses_with(y)
    assert g.nodes[0].inputs == [y, y] and y.uses == [g.nodes[0], g.nodes[0]] and x.uses == []
    assert g.outputs == [sq, y]
    verify(g)
