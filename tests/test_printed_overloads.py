"""Spellings PyTorch prints that torchlike must read: a ``NamedTuple(...)`` type (a named tuple
such as ``torch.aminmax``'s returned whole), ``prim::abs`` (Python's ``abs`` of a number or a
tensor in a scripted function) and the ``sort.stable`` / ``argsort.stable`` overloads
(``stable=`` given: ``aten::sort(%x, %stable, %dim, %descending)``)."""
import numpy as np
import pytest
from graph_modes import against_torch, graph_modes

from torchlike.ir import parse_graph
from torchlike.ir.types import TupleType

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

NAMED = """graph(%y : Tensor):
  %3 : NoneType = prim::Constant()
  %4 : bool = prim::Constant[value=0]()
  %29 : Tensor, %30 : Tensor = aten::aminmax(%y, %3, %4)
  %31 : NamedTuple(min : Tensor, max : Tensor) = prim::TupleConstruct(%29, %30)
  %32 : (Tensor, NamedTuple(min : Tensor, max : Tensor)) = prim::TupleConstruct(%y, %31)
  return (%32)
"""


def test_named_tuple_type_parses_prints_and_runs():
    g = parse_graph(NAMED)
    t = g.nodes[-2].outputs[0].type
    assert isinstance(t, TupleType) and t.names == ("min", "max") and t == TupleType(t.elems)
    assert str(parse_graph(str(g))) == str(g) and "NamedTuple(min : Tensor, max : Tensor)" in str(g)
    x = np.array([3.0, -1.0, 2.0], np.float32)
    for mode, run in graph_modes(NAMED):
        y, (lo, hi) = run(x)
        assert lo == -1.0 and hi == 3.0, mode


def test_named_tuple_type_errors_name_the_place():
    with pytest.raises(Exception, match="field name"):
        parse_graph(NAMED.replace("NamedTuple(min : Tensor, max", "NamedTuple(: Tensor, max"))


def scalar_abs(x, y):
    return abs(x) * 2 + abs(float(y.sum()))


def test_prim_abs_of_numbers_and_tensors_matches_pytorch(torch):
    args = (torch.tensor([[-1.5, 2.0], [0.5, -0.0]]), torch.tensor([-3.0, 1.0]))
    against_torch(torch, scalar_abs, args, captures=("script",))


def test_stable_sort_overloads_match_pytorch(torch):
    def sorts(x, y):
        s, i = torch.sort(x, dim=1, descending=True, stable=True)
        return s, i, torch.argsort(y, dim=0, stable=True, descending=True), \
            torch.sort(y, stable=False)[1]

    x = torch.tensor([[1.0, 3.0, 1.0, float("nan"), 3.0], [0.0, -1.0, 0.0, 2.0, 2.0]])
    y = torch.tensor([[2.0, 1.0], [2.0, 1.0], [1.0, 5.0]])
    against_torch(torch, sorts, (x, y))
    g = str(torch.jit.script(sorts).graph)
    assert "aten::sort(%x.1, %" in g  # the four-argument overload
