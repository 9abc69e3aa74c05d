"""TorchScript lists that a program changes in place, and the list and boolean reductions
scripted models use around them.

* ``ys.append(y)`` in a loop, as PyTorch prints it (``aten::append`` on a ``prim::ListConstruct``
  whose value is used after the loop) and as ``jit.script`` records it: interpreted, fused and
  strict, the same answer on every call (the empty list is never folded into one shared
  constant, nor merged with a twin), and the mutation survives dead-code elimination.
* ``extend``, ``insert``, ``pop`` and ``clear`` from ``jit.script``; ``list + list``
  (``aten::add`` of two int lists) and ``aten::list`` from F.group_norm's scripted graph.
* ``aten::any`` / ``aten::all`` over a dim or everything: bool (uint8 for uint8), NaN is true.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_modes import graph_modes, program_module

from torchlike import jit
from torchlike.ir import parse_graph
from torchlike.passes import run_default_passes

# torch.jit.script(s_list).graph, PyTorch 2.13:
#     def s_list(x):
#         ys: List[torch.Tensor] = []
#         for i in range(3):
#             ys.append(x * i)
#         return torch.cat(ys, 0)
APPEND_LOOP = """graph(%x.1 : Tensor):
  %5 : bool = prim::Constant[value=1]() # test.py:71:4
  %2 : int = prim::Constant[value=3]() # test.py:71:19
  %13 : int = prim::Constant[value=0]() # test.py:73:25
  %ys.1 : Tensor[] = prim::ListConstruct()
   = prim::Loop(%2, %5) # test.py:71:4
    block0(%i.1 : int):
      %10 : Tensor = aten::mul(%x.1, %i.1) # test.py:72:18
      %11 : Tensor[] = aten::append(%ys.1, %10) # test.py:72:8
      -> (%5)
  %14 : Tensor = aten::cat(%ys.1, %13) # test.py:73:11
  return (%14)
"""

# torch.jit.script(lambda x: (x > 0).any(1) & (x < 3).all(1)).graph
ANY_ALL = """graph(%x.1 : Tensor):
  %5 : bool = prim::Constant[value=0]()
  %2 : int = prim::Constant[value=0]() # test.py:112:30
  %4 : int = prim::Constant[value=1]() # test.py:112:37
  %8 : int = prim::Constant[value=3]() # test.py:112:47
  %3 : Tensor = aten::gt(%x.1, %2) # test.py:112:26
  %6 : Tensor = aten::any(%3, %4, %5) # test.py:112:26
  %9 : Tensor = aten::lt(%x.1, %8) # test.py:112:43
  %11 : Tensor = aten::all(%9, %4, %5) # test.py:112:43
  %12 : Tensor = aten::__and__(%6, %11) # test.py:112:26
  return (%12)
"""

# torch.jit.script(lambda x: F.group_norm(x, 2)).graph: F.group_norm's own graph (from the
# package's table) builds its shape check's list as [n * c // g, g] + list(x.size()[2:])
GROUP_NORM = """graph(%x.1 : Tensor):
  %6 : Function = prim::Constant[name="group_norm"]()
  %5 : float = prim::Constant[value=1.0000000000000001e-05]()
  %3 : NoneType = prim::Constant()
  %2 : int = prim::Constant[value=2]() # test.py:81:43
  %7 : Tensor = prim::CallFunction(%6, %x.1, %2, %3, %3, %5) # test.py:81:27
  return (%7)
"""


def test_append_in_a_loop_as_pytorch_prints_it():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    want = np.concatenate([x * 0, x * 1, x * 2], 0)
    for name, run in graph_modes(APPEND_LOOP):
        for _ in range(2):  # a list folded into one constant would grow call after call
            np.testing.assert_array_equal(run(x), want, err_msg=name)


def test_the_mutated_list_is_neither_folded_nor_merged_nor_dropped():
    text = APPEND_LOOP.replace("  %14 : Tensor = aten::cat(%ys.1, %13)",
                               "  %zs : Tensor[] = prim::ListConstruct()\n"
                               "  %14 : Tensor = aten::cat(%ys.1, %13)")
    g = run_default_passes(parse_graph(text), check=True)
    kinds = [n.kind for n in g.all_nodes()]
    assert kinds.count("prim::ListConstruct") == 1  # the unused %zs went, %ys stayed
    assert "aten::append" in kinds
    assert len(jit.run(g, np.ones(2, np.float32))) == 6


# torch.jit.script(f).graph, PyTorch 2.13, for
#     def f(x0):
#         v0 = torch.relu(x0)
#         ys = []
#         for t in v0.unbind(0):
#             ys.append(t * 2 + 1)
#         v1 = torch.stack(ys, 0)
#         return torch.sqrt(v0.abs()), v1
# stack must stay below the loop that fills its list: the partitioner, merging relu with
# sqrt(abs) across the loop, once hoisted it ("stack expects a non-empty TensorList").
STACK_AFTER_LOOP = """graph(%x0.1 : Tensor):
  %10 : bool = prim::Constant[value=1]()
  %7 : int = prim::Constant[value=0]()
  %15 : int = prim::Constant[value=2]()
  %17 : int = prim::Constant[value=1]()
  %v0.1 : Tensor = aten::relu(%x0.1)
  %38 : Tensor[] = prim::ListConstruct()
  %8 : Tensor[] = aten::unbind(%v0.1, %7)
  %9 : int = aten::len(%8)
   = prim::Loop(%9, %10)
    block0(%11 : int):
      %t.1 : Tensor = aten::__getitem__(%8, %11)
      %16 : Tensor = aten::mul(%t.1, %15)
      %19 : Tensor = aten::add(%16, %17, %17)
      %20 : Tensor[] = aten::append(%38, %19)
      -> (%10)
  %v1.1 : Tensor = aten::stack(%38, %7)
  %24 : Tensor = aten::abs(%v0.1)
  %v2.1 : Tensor = aten::sqrt(%24)
  %28 : (Tensor, Tensor) = prim::TupleConstruct(%v2.1, %v1.1)
  return (%28)
"""


def test_a_list_read_stays_below_the_loop_that_fills_it():
    x = np.array([[-3.0, 4.0], [9.0, -0.5], [1.0, 0.0]], np.float32)
    relu = np.maximum(x, 0)
    for name, run in graph_modes(STACK_AFTER_LOOP):
        root, stacked = run(x)
        np.testing.assert_array_equal(root, np.sqrt(relu), err_msg=name)
        np.testing.assert_array_equal(stacked, relu * 2 + 1, err_msg=name)
    fused = jit.fuse(parse_graph(STACK_AFTER_LOOP))
    kinds = [n.kind for n in fused.nodes]
    assert kinds.index("prim::Loop") < kinds.index("aten::stack")


def test_scripted_list_methods():
    import torchlike as tl

    def f(x):
        ys = []
        for i in range(3):
            ys.append(x * i)
        ys.insert(0, x + 10)
        ys.extend([x - 1, x - 2])
        last = ys.pop()
        ys.pop(1)
        return tl.cat(ys, 0) + last.sum()

    s = jit.script(f)
    kinds = [n.kind for n in s.graph.all_nodes()]
    assert {"aten::append", "aten::insert", "aten::extend", "aten::pop"} <= set(kinds)
    x = np.arange(4, dtype=np.float32).reshape(2, 2)
    want = np.concatenate([x + 10, x * 1, x * 2, x - 1], 0) + (x - 2).sum()
    for _ in range(2):
        np.testing.assert_array_equal(s(x), want)

    def g(x):
        ys = [x]
        ys.clear()
        ys.append(x * 3)
        return ys[0]
    np.testing.assert_array_equal(jit.script(g)(x), x * 3)


def test_any_all():
    x = np.array([[1.0, -1.0, 2.0], [np.nan, -2.0, -3.0], [-1.0, -1.0, -1.0]], np.float32)
    want = (x > 0).any(1) & (x < 3).all(1)  # NaN < 3 is False: row 1 is not all
    for name, run in graph_modes(ANY_ALL):
        got = run(x)
        assert got.dtype == np.bool_, name
        np.testing.assert_array_equal(got, want, err_msg=name)
    from torchlike.interpreter import run as interpret
    g = parse_graph("""graph(%x : Tensor):
  %t : bool = prim::Constant[value=1]()
  %d : int[] = prim::Constant[value=[0, 1]]()
  %a : Tensor = aten::any(%x)
  %b : Tensor = aten::all(%x, %d, %t)
  return (%a, %b)""")
    a, b = interpret(g, np.array([[0, 3], [0, 0]], np.uint8))
    assert a.dtype == np.uint8 and a.shape == () and a == 1  # uint8 stays uint8, as in PyTorch
    assert b.shape == (1, 1) and b[0, 0] == 0
    a, b = interpret(g, np.array([[np.nan, 0.0]], np.float32))
    assert a.dtype == np.bool_ and bool(a) and not b.any()  # NaN counts as true


def test_any_all_against_torch(torch):
    x = np.array([[1.0, -1.0, 2.0], [np.nan, -2.0, -3.0], [0.0, -0.0, 0.0]], np.float32)
    t = torch.from_numpy(x)
    for fn in (lambda v: v.any(1), lambda v: v.all(0), lambda v: v.any(),
               lambda v: (v > 0).all(1, keepdim=True)):
        g = parse_graph(str(torch.jit.trace(fn, (t,)).graph))
        want = fn(t).numpy()
        got = jit.run(g, x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def _group_norm(x, groups, eps=1e-5):
    n = x.shape[0]
    g = x.reshape(n, groups, -1).astype(np.float64)
    out = (g - g.mean(-1, keepdims=True)) / np.sqrt(g.var(-1, keepdims=True) + eps)
    return out.reshape(x.shape)


def test_scripted_group_norm():
    x = np.random.default_rng(0).standard_normal((2, 4, 3)).astype(np.float32)
    for name, run in graph_modes(GROUP_NORM):
        np.testing.assert_allclose(run(x), _group_norm(x, 2), rtol=1e-5, atol=1e-5,
                                   err_msg=name)


def test_scripted_group_norm_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "group_norm_program",
                         "import torch.nn.functional as F\n\n\n"
                         "def gn(v):\n    return F.group_norm(v, 3)\n")
    F = torch.nn.functional
    x = np.random.default_rng(1).standard_normal((3, 6, 2, 2)).astype(np.float32)
    g = parse_graph(str(torch.jit.script(mod.gn).graph))
    want = F.group_norm(torch.from_numpy(x), 3).numpy()
    np.testing.assert_allclose(jit.run(jit.fuse(g), x), want, rtol=1e-5, atol=1e-5)
    with pytest.raises(Exception, match="Expected at least 2 dimensions"):
        jit.run(g, np.ones(4, np.float32))
