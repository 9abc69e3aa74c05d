"""parse_graph: PyTorch's printed graphs (the corpus and live torch), our printer's, and errors."""
import math
import warnings

import numpy as np
import pytest
from corpus_utils import CASES, CORPUS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from torchlike.errors import TorchlikeError
from torchlike.ir import (
    BOOL,
    FLOAT,
    INT,
    NONE,
    STR,
    ClassType,
    Graph,
    ListType,
    OptionalType,
    ParseError,
    TensorType,
    TupleType,
    parse_graph,
)
from torchlike.ir.parser import UnknownTensorValue
from torchlike.ir.types import ANY, DEVICE, FUNCTION, NUMBER

try:  # the torch-made graphs below need torch; everything else runs without it
    import torch
except ImportError:  # pragma: no cover
    torch = None

CORPUS_FILES = sorted(
    (case, which) for case in CASES
    for which in ("traced", "scripted", "te_fused", "te_fused_traced")
    if (CORPUS / case / f"{which}.txt").exists())


def _text(case, which):
    return (CORPUS / case / f"{which}.txt").read_text()


def _one_node(decl, *inputs):
    """Parse a graph holding the single node line ``decl`` and return that node."""
    params = ",\n      ".join(f"%{n} : {t}" for n, t in inputs)
    g = parse_graph(f"graph({params}):\n  {decl}\n  return ()\n")
    return g.nodes[0]


# -- the corpus -----------------------------------------------------------------------------

@pytest.mark.parametrize("case,which", CORPUS_FILES)
def test_corpus_round_trips_byte_for_byte(case, which):
    text = _text(case, which)
    graph = parse_graph(text)
    assert str(graph) == text
    again = parse_graph(str(graph))
    assert str(again) == text
    assert [n.kind for n in again.all_nodes()] == [n.kind for n in graph.all_nodes()]


def test_corpus_covers_every_file_kind():
    kinds = {which for _, which in CORPUS_FILES}
    assert kinds == {"traced", "scripted", "te_fused", "te_fused_traced"}
    assert len(CORPUS_FILES) > 80


def test_traced_module_graph_types_and_attributes():
    g = parse_graph(_text("mycell_module", "traced"))
    assert g.inputs[0].name == "self" and g.inputs[0].type == ClassType("__torch__.MyCell")
    assert g.inputs[1].type == TensorType("float32", (3, 4), (4, 1), "cpu", False)
    get_b = g.nodes[0]
    assert get_b.kind == "prim::GetAttr" and get_b.attrs == {"name": "b"}
    assert get_b.outputs[0].name == "b" and get_b.inputs == [g.inputs[0]]
    add = g.nodes[4]
    assert add.kind == "aten::add" and add.source == "make_corpus.py:75:0"
    assert [v.name for v in add.inputs] == ["7", "b", "8"]
    assert add.outputs[0].uses == [g.nodes[6]]
    tup = g.nodes[-1]
    assert tup.outputs[0].type == TupleType((g.inputs[1].type, g.inputs[1].type))
    assert g.outputs == tup.outputs


def test_te_fused_graph_has_typecheck_fallback_and_subgraph():
    g = parse_graph(_text("lstm_cell", "te_fused"))
    check = g.nodes[0]
    assert check.kind == "prim::TypeCheck"
    assert len(check.outputs) == 7 and check.outputs[-1].type == BOOL
    assert check.attrs["types"][4] == TensorType("float32", (3, 10), (10, 1), "cpu", False)
    branch = g.nodes[1]
    assert branch.kind == "prim::If" and len(branch.blocks) == 2
    group = branch.blocks[0].nodes[0]
    assert group.kind == "prim::TensorExprGroup"
    sub = group.attrs["Subgraph"]
    assert isinstance(sub, Graph)
    assert [v.name for v in sub.inputs] == ["c.1", "b.1", "h.1", "Wh.1", "x.1", "Wi.1"]
    assert [v.name for v in sub.outputs] == ["h_new.2", "c_new.2"]
    chunk = [n for n in sub.nodes if n.kind == "prim::ConstantChunk"][0]
    assert chunk.attrs == {"chunks": 4, "dim": 1} and len(chunk.outputs) == 4
    fallback = branch.blocks[1].nodes[0]
    assert fallback.outputs[0].type == FUNCTION
    assert fallback.attrs == {"name": "fallback_function", "fallback": 1}
    assert branch.blocks[1].returns == branch.blocks[1].nodes[2].outputs


def test_scripted_loop_block_params_and_returns():
    g = parse_graph(_text("script_for_range", "scripted"))
    loop = next(n for n in g.nodes if n.kind == "prim::Loop")
    assert [v.name for v in loop.inputs] == ["n.1", "5", "x.1"]
    body = loop.blocks[0]
    assert [(p.name, p.type) for p in body.params] == [("6", INT), ("x.11", TensorType())]
    assert [v.name for v in body.returns] == ["5", "x.5"]
    assert body.returns[0] is g.nodes[1].outputs[0]  # an outer value returned from the body
    assert g.nodes[1].attrs["value"] is True  # [value=1] on a bool constant
    consts = {n.outputs[0].name: n.attrs["value"] for n in g.nodes if n.kind == "prim::Constant"}
    assert consts["10"] == 0.1 and consts["8"] == 1.1 and consts["11"] == 1


def test_zero_dim_tensor_constants_take_the_output_dtype():
    g = parse_graph(_text("broadcast_0d_scalar", "traced"))
    consts = [n for n in g.all_nodes() if isinstance(n.attrs.get("value"), np.ndarray)]
    assert consts
    for n in consts:
        value, t = n.attrs["value"], n.outputs[0].type
        assert value.shape == () and t.shape == ()
        assert value.dtype == np.dtype(t.dtype)


def test_names_are_claimed_so_fresh_names_do_not_collide():
    g = parse_graph(_text("script_for_range", "scripted"))
    names = {v.name for b in g.all_blocks() for v in b.params}
    names |= {v.name for n in g.all_nodes() for v in n.outputs}
    for hint in (None, "x", "x.1", "x.11", "6", "out"):
        new = g.fresh_name(hint)
        assert new not in names
        names.add(new)


# -- types --------------------------------------------------------------------------------

@pytest.mark.parametrize("text,expected", [
    ("Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)",
     TensorType("float32", (3, 4), (4, 1), "cpu", False)),
    ("Double(requires_grad=0, device=cpu)", TensorType("float64", (), None, "cpu", False)),
    ("Long(*, 4)", TensorType("int64", (None, 4))),
    ("Float(*, *, strides=[3, 1], requires_grad=1, device=cuda:0)",
     TensorType("float32", (None, None), (3, 1), "cuda:0", True)),
    ("Float", TensorType("float32")),
    ("FloatTensor", TensorType("float32")),
    ("BoolTensor(requires_grad=0)", TensorType("bool", None, None, None, False)),
    ("Double()", TensorType("float64", ())),
    ("Tensor", TensorType()),
    ("Tensor()", TensorType(shape=())),
    ("Tensor(requires_grad=0)", TensorType(requires_grad=False)),
    ("Tensor(3, *)", TensorType(None, (3, None))),
    ("Int(0, 4, strides=[4, 1], requires_grad=0, device=cpu)",
     TensorType("int32", (0, 4), (4, 1), "cpu", False)),
    ("Tensor[]", ListType(TensorType())),
    ("int[]", ListType(INT)),
    ("int[]?", OptionalType(ListType(INT))),
    ("Tensor?", OptionalType(TensorType())),
    ("(Tensor, (int, float[]), str)",
     TupleType((TensorType(), TupleType((INT, ListType(FLOAT))), STR))),
    ("(int)", TupleType((INT,))),
    ("__torch__.MyCell", ClassType("__torch__.MyCell")),
    ("__torch__.___torch_mangle_9.MyCell", ClassType("__torch__.___torch_mangle_9.MyCell")),
    ("__torch__.torch.nn.modules.linear.Linear",
     ClassType("__torch__.torch.nn.modules.linear.Linear")),
    ("int", INT), ("float", FLOAT), ("bool", BOOL), ("NoneType", NONE), ("str", STR),
    ("Device", DEVICE), ("Function", FUNCTION), ("Scalar", NUMBER), ("Any", ANY),
])
def test_types_parse(text, expected):
    g = parse_graph(f"graph(%a : {text}):\n  return (%a)\n")
    assert g.inputs[0].type == expected
    assert str(g.inputs[0].type) == {"Float": "FloatTensor"}.get(text, text)


def test_types_print_back_as_pytorch_does():
    # PyTorch prints a dtype-known, rank-unknown tensor as FloatTensor; bare "Float" is read too.
    assert str(TensorType("float32")) == "FloatTensor"
    assert str(TensorType("float32", None, None, "cpu", False)) == \
        "FloatTensor(requires_grad=0, device=cpu)"
    assert str(TensorType(requires_grad=False)) == "Tensor(requires_grad=0)"
    assert str(TensorType("float64", ())) == "Double()"


def test_union_and_dict_types_parse_and_print_back():
    # F.lp_pool2d's norm_type prints as Union(float, int); a Dict[str, Tensor] as Dict(...)
    text = ("graph(%p : Union(float, int),\n      %d : Dict(str, Tensor),\n"
            "      %o : Union(Tensor, NoneType)?):\n  return (%p)\n")
    g = parse_graph(text)
    assert [str(v.type) for v in g.inputs] == ["Union(float, int)", "Dict(str, Tensor)",
                                               "Union(Tensor, NoneType)?"]
    assert str(g) == text


@pytest.mark.parametrize("bad", ["Flot(3)", "Dict(str)", "Union()", "Float(3, x)",
                                 "Float(3, strides=[1, 1])", "Float(3, colour=red)", "MyCell"])
def test_bad_types_raise(bad):
    with pytest.raises(ParseError, match="bad type|expected"):
        parse_graph(f"graph(%a : {bad}):\n  return (%a)\n")


# -- attributes ---------------------------------------------------------------------------

@pytest.mark.parametrize("decl,value", [
    ('%1 : int = prim::Constant[value=1]()', 1),
    ('%1 : bool = prim::Constant[value=1]()', True),
    ('%1 : bool = prim::Constant[value=0]()', False),
    ('%1 : int = prim::Constant[value=-7]()', -7),
    ('%1 : float = prim::Constant[value=1.]()', 1.0),
    ('%1 : float = prim::Constant[value=0.10000000000000001]()', 0.1),
    ('%1 : float = prim::Constant[value=2.4999999999999999e-07]()', 2.5e-07),
    ('%1 : float = prim::Constant[value=1e+20]()', 1e20),
    ('%1 : float = prim::Constant[value=inf]()', math.inf),
    ('%1 : float = prim::Constant[value=-inf]()', -math.inf),
    ('%1 : str = prim::Constant[value="trunc"]()', "trunc"),
    ('%1 : str = prim::Constant[value="a\\n\\t\\"\\\'\\\\b"]()', "a\n\t\"'\\b"),
    ('%1 : str = prim::Constant[value="\\0)+\\/.)\\001"]()', "\u00e9\x01"),  # PyTorch's bytes
    ('%1 : Device = prim::Constant[value="cuda:0"]()', "cuda:0"),
    ('%1 : int[] = prim::Constant[value=[-1]]()', [-1]),
    ('%1 : float[] = prim::Constant[value=[1., 2.5]]()', [1.0, 2.5]),
    ('%1 : bool[] = prim::Constant[value=[True, False]]()', [True, False]),
    ('%1 : str[] = prim::Constant[value=["a"]]()', ["a"]),
    ('%1 : (int) = prim::Constant[value=(1,)]()', (1,)),
    ('%1 : (bool, NoneType, str, (float), int[]) = '
     'prim::Constant[value=(True, None, "s", (2.5,), [1, 2])]()',
     (True, None, "s", (2.5,), [1, 2])),
])
def test_attribute_values(decl, value):
    node = _one_node(decl)
    got = node.attrs["value"]
    assert got == value and type(got) is type(value)
    assert str(parse_graph(str(node.graph))) == str(node.graph)
    assert f"  {decl}\n" in str(node.graph)


def test_nan_constant_and_attribute_order():
    node = _one_node('%1 : float = prim::Constant[value=nan]()')
    assert math.isnan(node.attrs["value"])
    node = _one_node('%1 : Function = prim::Constant[name="fallback_function", fallback=1]()')
    assert list(node.attrs.items()) == [("name", "fallback_function"), ("fallback", 1)]
    node = _one_node('%1 : NoneType = prim::Constant()')
    assert node.attrs == {} and node.outputs[0].type == NONE


@pytest.mark.parametrize("out_type,text,dtype,value", [
    ("Double(requires_grad=0, device=cpu)", "{2}", np.float64, 2.0),
    ("Float(requires_grad=0, device=cpu)", "{0.797885}", np.float32, 0.797885),
    ("Long(requires_grad=0, device=cpu)", "{3}", np.int64, 3),
    ("Bool(requires_grad=0, device=cpu)", "{1}", np.bool_, True),
    ("Tensor", "{1e-05}", np.float64, 1e-05),
    ("Tensor", "{2}", np.int64, 2),
])
def test_zero_dim_tensor_constant(out_type, text, dtype, value):
    node = _one_node(f"%1 : {out_type} = prim::Constant[value={text}]()")
    got = node.attrs["value"]
    assert isinstance(got, np.ndarray) and got.shape == () and got.dtype == dtype
    assert got == np.array(value, dtype)
    assert f"[value={text}]" in str(node.graph)


def test_unprinted_tensor_constants_keep_their_text():
    node = _one_node("%1 : Float(6, 2, strides=[2, 1], requires_grad=0, device=cpu) = "
                     "prim::Constant[value=<Tensor>]()")
    assert isinstance(node.attrs["value"], UnknownTensorValue) and node.attrs["value"].data is None
    table = "%1 : Long(3, strides=[1], requires_grad=0, device=cpu) = " \
            "prim::Constant[value= 1  2 -3 [ CPULongType{3} ]]() # f.py:3:0"
    node = _one_node(table)
    np.testing.assert_array_equal(node.attrs["value"].data, np.array([1, 2, -3]))
    assert node.attrs["value"].data.dtype == np.int64 and node.source == "f.py:3:0"
    assert f"  {table}\n" in str(node.graph)
    floats = "%1 : Float(3, strides=[1], requires_grad=0, device=cpu) = " \
             "prim::Constant[value= 1.5000  2.0000 [ CPUFloatType{3} ]]()"
    node = _one_node(floats)  # rounded by PyTorch's printing: no data
    assert node.attrs["value"].data is None and f"  {floats}\n" in str(node.graph)
    scaled = floats.replace(" 1.5000  2.0000", "1.23457e+08          1")
    assert _one_node(scaled).attrs["value"].data is None  # 123456789 printed to 6 digits


def test_float_tables_printed_as_integers_are_exact():
    # PyTorch prints a float table without decimals only when every value is an integer
    # (torch.tensor([-0., 1., nan, -inf]) in a trace)
    node = _one_node("%1 : Float(2, 2, strides=[2, 1], requires_grad=0, device=cpu) = "
                     "prim::Constant[value=-0  1 nan -inf [ CPUFloatType{2,2} ]]()")
    data = node.attrs["value"].data
    assert data.dtype == np.float32 and data.shape == (2, 2)
    np.testing.assert_array_equal(data, np.array([[-0.0, 1.0], [np.nan, -np.inf]], np.float32))
    assert np.signbit(data[0, 0])
    half = _one_node("%1 : Half(2, strides=[1], requires_grad=0, device=cpu) = "
                     "prim::Constant[value= 65504      1 [ CPUHalfType{2} ]]()")
    assert half.attrs["value"].data.tolist() == [65504.0, 1.0]


def test_type_list_attribute():
    node = _one_node("%2 : Float(2, strides=[1], requires_grad=0, device=cpu), %3 : bool = "
                     "prim::TypeCheck[types=[Float(2, strides=[1], requires_grad=0, device=cpu)]]"
                     "(%x)", ("x", "Tensor"))
    assert node.attrs["types"] == [TensorType("float32", (2,), (1,), "cpu", False)]


# -- hand-written graphs ------------------------------------------------------------------

HAND_WRITTEN = """\
graph(%x.1 : Tensor,
      %n.1 : int):
  %2 : bool = prim::Constant[value=1]()
  %3 : str = prim::Constant[value="x is"]()
  %4 : int = prim::Constant[value=0]() # f.py:2:10
   = prim::Print(%3, %x.1) # f.py:2:4
  %x : Tensor, %k : int = prim::Loop(%n.1, %2, %x.1, %4) # f.py:3:4
    block0(%i : int, %x.11 : Tensor, %k.3 : int):
      %7 : bool = aten::gt(%i, %4) # f.py:4:11
      %x.5 : Tensor = prim::If(%7) # f.py:4:8
        block0():
          %y.1 : Tensor = prim::FusionGroup_0(%x.11)
          -> (%y.1)
        block1():
          -> (%x.11)
      %k.5 : int = aten::add(%k.3, %i)
      -> (%2, %x.5, %k.5)
  %z : Tensor = prim::FusionGroup_1(%x)
  return (%z, %k)
with prim::FusionGroup_0 = graph(%0 : Tensor):
  %1 : Tensor = aten::sigmoid(%0)
  %2 : Tensor = prim::FusionGroup_0(%1)
  return (%2)
with prim::FusionGroup_0 = graph(%a : Tensor):
  %b : Tensor = aten::tanh(%a) # <string>:3:9
  return (%b)
with prim::FusionGroup_1 = graph(%0 : Tensor):
  %1 : Tensor = aten::relu(%0)
  return (%1)
"""


def test_hand_written_graph_with_blocks_print_and_nested_subgraphs():
    g = parse_graph(HAND_WRITTEN)
    assert str(g) == HAND_WRITTEN
    assert [n.kind for n in g.nodes] == ["prim::Constant"] * 3 + [
        "prim::Print", "prim::Loop", "prim::FusionGroup"]
    printer, loop, group1 = g.nodes[3], g.nodes[4], g.nodes[5]
    assert printer.outputs == [] and printer.source == "f.py:2:4"
    assert [v.name for v in loop.outputs] == ["x", "k"]
    body = loop.blocks[0]
    branch = body.nodes[1]
    assert branch.kind == "prim::If" and branch.inputs == body.nodes[0].outputs
    assert branch.blocks[1].nodes == [] and branch.blocks[1].returns == [body.params[1]]
    group0 = branch.blocks[0].nodes[0]
    assert group0.kind == "prim::FusionGroup" and group0.inputs == [body.params[1]]
    sub0 = group0.attrs["Subgraph"]
    inner = sub0.nodes[1]
    assert inner.kind == "prim::FusionGroup"
    assert inner.attrs["Subgraph"].nodes[0].kind == "aten::tanh"
    assert inner.attrs["Subgraph"].nodes[0].source == "<string>:3:9"
    assert group1.attrs["Subgraph"].nodes[0].kind == "aten::relu"
    assert g.outputs == [group1.outputs[0], loop.outputs[1]]
    # each graph has its own namespace: %0 .. %2 exist in the subgraphs, not in the outer graph
    assert "0" not in g._names and {"0", "1", "2"} <= sub0._names


def test_built_graph_with_nested_subgraphs_round_trips():
    inner = Graph()
    a = inner.add_input("a", TensorType("float32", (2,)))
    inner.set_outputs(inner.create("aten::neg", [a], [a.type]).outputs)
    mid = Graph()
    b = mid.add_input("b", TensorType("float32", (2,)))
    mid.set_outputs(mid.create("prim::FusionGroup", [b], [b.type],
                               attrs={"Subgraph": inner}).outputs)
    g = Graph()
    x = g.add_input("x", TensorType("float32", (2,)))
    y = g.create("prim::FusionGroup", [x], [x.type], attrs={"Subgraph": mid}).output()
    z = g.create("prim::TensorExprGroup", [y], [x.type], attrs={"Subgraph": inner.copy()})
    g.set_outputs(z.outputs)
    text = str(g)
    assert text.count("with prim::FusionGroup_0 = graph(") == 2  # numbering restarts per graph
    assert "with prim::TensorExprGroup_1 = graph(" in text
    again = parse_graph(text)
    assert str(again) == text
    assert again.nodes[0].attrs["Subgraph"].nodes[0].attrs["Subgraph"].nodes[0].kind == "aten::neg"


def test_printer_output_parses_back_with_strings_and_empty_lists():
    g = Graph()
    x = g.add_input("x", TensorType("float64", (3,), (1,), "cpu", False))
    s = g.insert_constant("tab\t quote\" é \x7f")
    empty = g.insert_constant([], ListType(INT))
    g.create("prim::Print", [s, x, empty], [])
    g.set_outputs([x])
    again = parse_graph(str(g))
    assert again.nodes[1].attrs["value"] == "tab\t quote\" é \x7f"
    assert again.nodes[0].attrs["value"] == [] and again.nodes[0].outputs[0].type == ListType(INT)
    assert str(again) == str(g)


def test_blank_lines_and_leading_newline_are_accepted():
    text = "\ngraph(%x : Tensor):\n\n  %1 : Tensor = aten::relu(%x)\n  return (%1)\n\n"
    g = parse_graph(text)
    assert str(g) == "graph(%x : Tensor):\n  %1 : Tensor = aten::relu(%x)\n  return (%1)\n"


def test_debug_scopes_are_read_and_dropped():
    g = parse_graph("graph(%x : Tensor):\n"
                    "  %1 : Tensor = aten::relu(%x), scope: __module.0 # f.py:1:0\n"
                    "  return (%1)\n")
    assert g.nodes[0].source == "f.py:1:0"


# -- errors -------------------------------------------------------------------------------

def _error(text):
    with pytest.raises(ParseError) as info:
        parse_graph(text)
    return info.value


@pytest.mark.parametrize("text,line,column,message", [
    ("graph(%x : Tensor,\n      %y : Tensor):\n  %2 : Tensor = aten::mul(%x %y)\n"
     "  return (%2)\n", 3, 30, "expected ')' after node inputs, found '%y'"),
    ("graph(%x : Tensor):\n  %2 : Tensor = aten::mul(%x, %z)\n  return (%2)\n",
     2, 30, "undefined value %z"),
    ("graph(%x : Tensor):\n  %2 : Tensor = aten::relu(%x)\n  return (%3)\n",
     3, 11, "undefined value %3"),
    ("graph(%x : Tensor):\n  %x : Tensor = aten::relu(%x)\n  return (%x)\n",
     2, 3, "redefinition of value %x"),
    ("graph(%x : Flaot(3)):\n  return (%x)\n", 1, 12, "bad type 'Flaot'"),
    ("graph(%x : Tensor):\n  %1 : Tensor = prim::If(%x)\n    block0():\n"
     "      %2 : Tensor = aten::relu(%x)\n", 5, 1,
     "unexpected end of input: block not closed by '->'"),
    ("graph(%x : Tensor):\n  %2 : Tensor = aten::relu(%x)\n", 3, 1,
     "unexpected end of input: graph not closed by 'return'"),
    ("graph(%x : Tensor):\n  %1 : Tensor = prim::If(%x)\n    block1():\n      -> (%x)\n"
     "  return (%1)\n", 3, 10, "expected 'block0', found 'block1'"),
    ("graph(%x : Tensor):\n  %1 : Tensor = prim::If(%x)\n    block0():\n"
     "      %2 : Tensor = aten::relu(%x)\n      -> (%2)\n  return (%2)\n",
     6, 11, "undefined value %2"),  # block-local values are not visible outside
    ("graph(%x : Tensor):\n  return (%x)\nwith prim::FusionGroup_0 = graph(%y : Tensor):\n"
     "  return (%y)\n", 3, 1, "no node of kind prim::FusionGroup_0"),
    ("hello world\n", 1, 1, "expected 'graph'"),
    ("graph(%x : Tensor):\n  %1 : int = prim::Constant[value=1()\n  return (%1)\n",
     2, 36, "expected ',' or ']' after attribute, found '('"),
    ('graph(%x : Tensor):\n  %1 : str = prim::Constant[value="abc]()\n  return (%1)\n',
     2, 35, "unterminated string"),
])
def test_errors_name_line_and_column(text, line, column, message):
    err = _error(text)
    assert isinstance(err, SyntaxError) and isinstance(err, TorchlikeError)
    assert (err.line, err.column) == (line, column)
    first, src, caret = str(err).split("\n")
    assert first == f"line {line}, column {column}: {message}" or \
        first.startswith(f"line {line}, column {column}: {message}")
    assert src == text.split("\n")[line - 1]
    assert caret == " " * (column - 1) + "^"


# -- fuzz ---------------------------------------------------------------------------------

FUZZ_SOURCES = [_text("script_for_range", "scripted"), _text("lstm_cell", "te_fused"),
                _text("mycell_module", "traced"), _text("decision_gate", "scripted"),
                HAND_WRITTEN]
_ALPHABET = st.sampled_from(list("%:=()[]{},.#\n -<>\"\\*?_0123456789abxyzFT") +
                            ["block0", "->", "return", "with ", "prim::", "Float", "Tensor"])


@st.composite
def _mutated(draw):
    text = draw(st.sampled_from(FUZZ_SOURCES))
    for _ in range(draw(st.integers(1, 3))):
        op = draw(st.sampled_from(["truncate", "delete", "insert", "replace"]))
        i = draw(st.integers(0, len(text)))
        if op == "truncate":
            text = text[:i]
        elif op == "delete":
            text = text[:i] + text[i + draw(st.integers(1, 8)):]
        elif op == "insert":
            text = text[:i] + draw(_ALPHABET) + text[i:]
        else:
            text = text[:i] + draw(_ALPHABET) + text[i + 1:]
    return text


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_mutated())
def test_mutated_text_parses_or_raises_parse_error(text):
    try:
        g = parse_graph(text)
    except ParseError as e:
        assert e.line >= 1 and e.column >= 1
        return
    printed = str(g)
    assert str(parse_graph(printed)) == printed


# -- graphs made by torch itself ----------------------------------------------------------

def _scripted_control(x, n: int):
    s = "tab\t \"q\" é"
    for i in range(n):
        if i % 2 == 0:
            x = x * 2.5e-7
        else:
            x = x.div(3, rounding_mode="trunc")
    print(s, x)
    return x, (x, [1.5, 2.0], float("inf"))


def _traced_constants(x):
    big = torch.arange(12.0).reshape(4, 3)
    return (x * torch.tensor([1, 2, 3]) + torch.tensor([[1.0] * 3] * 4).sum()
            + torch.tensor(2.5, dtype=torch.float64) + big.sum())


def _traced_pointwise(x, y):
    gate = torch.sigmoid(x * y + 0.5)
    return torch.where(gate > 0.3, gate, -y), x.view(-1)[:2]


def _constant_tuple(x):
    return x, (True, None, 1, "s", (2.5,), [1, 2])


def _check_against_torch(graph):
    """Round trip, and each node's kind and each tensor output's dtype/shape as torch has them."""
    text = str(graph)
    ours = parse_graph(text)
    assert str(ours) == text
    theirs = list(graph.nodes())
    assert [n.kind for n in ours.nodes] == [n.kind() for n in theirs]
    for mine, node in zip(ours.nodes, theirs):
        for v, tv in zip(mine.outputs, node.outputs()):
            assert v.name == tv.debugName()
            t = tv.type()
            if isinstance(t, torch._C.TensorType) and t.dim() is not None:
                assert v.type.shape == tuple(t.sizes())
                want = str(t.dtype()).replace("torch.", "")
                assert v.type.dtype == want
    return ours


def test_torch_scripted_graph_with_blocks_and_strings(torch):
    ours = _check_against_torch(torch.jit.script(_scripted_control).graph)
    loop = next(n for n in ours.nodes if n.kind == "prim::Loop")
    assert loop.blocks[0].nodes[-1].kind == "prim::If"
    strings = [n.attrs["value"] for n in ours.nodes if n.outputs and n.outputs[0].type == STR]
    assert "tab\t \"q\" é" in strings and "trunc" in strings
    assert any(n.kind == "prim::Print" and not n.outputs for n in ours.nodes)


def test_torch_traced_graphs_with_tensor_constants(torch):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        traced = torch.jit.trace(_traced_constants, torch.ones(3, dtype=torch.int64))
    ours = _check_against_torch(traced.graph)
    values = [n.attrs["value"] for n in ours.nodes if "value" in n.attrs]
    tables = [v for v in values if isinstance(v, UnknownTensorValue)]
    assert any(v.text == "<Tensor>" for v in tables)
    assert any(v.data is not None and v.data.tolist() == [1, 2, 3] for v in tables)
    scalars = [v for v in values if isinstance(v, np.ndarray)]
    assert any(v.dtype == np.float64 and v == 2.5 for v in scalars)
    x, y = torch.randn(2, 3), torch.randn(2, 3)
    _check_against_torch(torch.jit.trace(_traced_pointwise, (x, y)).graph)


def test_torch_constant_propagated_tuple_constant(torch):
    if not hasattr(torch._C, "_jit_pass_constant_propagation"):
        pytest.skip("this torch has no constant propagation pass")
    graph = torch.jit.script(_constant_tuple).graph
    torch._C._jit_pass_constant_propagation(graph)
    ours = _check_against_torch(graph)
    values = [n.attrs.get("value") for n in ours.nodes if n.kind == "prim::Constant"]
    assert (True, None, 1, "s", (2.5,), [1, 2]) in values


def test_one_element_tensor_constant_keeps_its_printed_shape():
    """PyTorch prints every one-element tensor as ``{v}``; the output type gives its rank."""
    import numpy as np

    from torchlike.interpreter import run
    text = ("graph(%x : Tensor):\n"
            "  %c : Float(1, strides=[1], requires_grad=0, device=cpu) = prim::Constant[value={2}]()\n"
            "  %d : Double(requires_grad=0, device=cpu) = prim::Constant[value={0.5}]()\n"
            "  %y : Tensor = aten::mul(%x, %c)\n"
            "  return (%c, %d, %y)\n")
    g = parse_graph(text)
    assert str(g) == text
    c, d, y = run(g, np.ones((), np.float32))
    assert c.shape == (1,) and c.dtype == np.float32 and np.ndim(d) == 0
    assert y.shape == (1,)  # a 0-d input times a (1,) constant is (1,), as in PyTorch


def test_empty_typed_list_constant_round_trips():
    """PyTorch prints an empty list constant with its type (F.avg_pool1d's default stride)."""
    import numpy as np

    from torchlike.interpreter import run
    text = ("graph(%x.1 : Tensor):\n"
            "  %4 : int[] = prim::Constant[value=annotate(List[int], [])]()\n"
            "  %f : float[] = prim::Constant[value=annotate(List[float], [])]()\n"
            "  %n : int = aten::len(%4)\n"
            "  %m : int = aten::len(%f)\n"
            "  %s : int = aten::add(%n, %m)\n"
            "  return (%s)\n")
    g = parse_graph(text)
    assert str(g) == text
    assert [n.attrs["value"] for n in g.nodes if n.kind == "prim::Constant"] == [[], []]
    assert run(g, np.ones(2, np.float32)) == 0
    with pytest.raises(ParseError, match="annotate"):
        parse_graph(text.replace("annotate(List[int], [])", "annotate(List[int] [])"))


def test_empty_typed_list_against_torch(torch):
    def pool(x):
        return torch.nn.functional.avg_pool1d(x, 2)
    text = str(torch.jit.script(pool).graph)
    assert "annotate(List[int], [])" in text
    assert str(parse_graph(text)) == text
