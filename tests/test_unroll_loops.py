"""Loop unrolling before fusion (``passes/unroll_loops.py``): a short loop with a constant trip
count becomes straight-line code whose iterations fuse into one kernel; other loops stay loops.
Every case compares the fused graph (strict mode: the kernel ran) with the interpreter on the
original graph."""
from __future__ import annotations

import numpy as np
import pytest

from torchlike import jit
from torchlike.fuser import config
from torchlike.fuser.partition import fusion_groups
from torchlike.interpreter import run
from torchlike.ir import parse_graph
from torchlike.passes.unroll_loops import unroll_loops

SQUARE = """
graph(%x.1 : Tensor):
  %true : bool = prim::Constant[value=1]()
  %n : int = prim::Constant[value={n}]()
  %x : Tensor = prim::Loop(%n, %true, %x.1)
    block0(%i : int, %x.13 : Tensor):
      %x.7 : Tensor = aten::mul(%x.13, %x.13)
      -> (%true, %x.7)
  return (%x)
"""

COUNTER = """
graph(%x.1 : Tensor):
  %true : bool = prim::Constant[value=1]()
  %n : int = prim::Constant[value=4]()
  %one : int = prim::Constant[value=1]()
  %x : Tensor = prim::Loop(%n, %true, %x.1)
    block0(%i : int, %x.13 : Tensor):
      %y : Tensor = aten::mul(%x.13, %i)
      %x.7 : Tensor = aten::add(%y, %one, %one)
      -> (%true, %x.7)
  return (%x)
"""


@pytest.fixture(autouse=True)
def _strict(tmp_path):
    config.set_cache_dir(tmp_path)
    config.set_strict(True)
    yield
    config.set_strict(False)
    config.set_cache_dir(None)


def _same(g, fused, x):
    jit.reset_stats()
    got, want = jit.run(fused, x), run(g, x)
    np.testing.assert_array_equal(got, want)
    assert not jit.stats()["fallbacks"]


@pytest.mark.parametrize("n", [0, 1, 5])
def test_constant_count_loop_becomes_one_group(n):
    g = parse_graph(SQUARE.replace("{n}", str(n)))
    fused = jit.fuse(g)
    assert not any(node.kind == "prim::Loop" for node in fused.all_nodes())
    assert len(list(fusion_groups(fused))) == (1 if n else 0)
    _same(g, fused, np.linspace(-1.5, 1.5, 24, dtype=np.float32).reshape(4, 6))


def test_each_copy_sees_its_iteration_number():
    g = parse_graph(COUNTER)
    fused = jit.fuse(g)
    [group] = fusion_groups(fused)
    assert sum(n.kind == "aten::mul" for n in group.attrs["Subgraph"].nodes) == 4
    _same(g, fused, np.arange(6, dtype=np.float32))  # ((((x*0+1)*1+1)*2+1)*3+1


def test_loops_that_may_stop_early_or_are_long_stay_loops():
    dynamic = parse_graph(SQUARE.replace("%n : int = prim::Constant[value={n}]()", "")
                          .replace("graph(%x.1 : Tensor)", "graph(%x.1 : Tensor, %n : int)"))
    assert unroll_loops(dynamic) == 0
    long = parse_graph(SQUARE.replace("{n}", "1000"))
    assert unroll_loops(long) == 0
    cond = parse_graph(SQUARE.replace("{n}", "3").replace("-> (%true, %x.7)", "-> (%c, %x.7)")
                       .replace("%x.7 : Tensor = aten::mul(%x.13, %x.13)",
                                "%x.7 : Tensor = aten::mul(%x.13, %x.13)\n"
                                "      %c : bool = aten::is_nonzero(%x.7)"))
    assert unroll_loops(cond) == 0


NESTED = """
graph(%x.1 : Tensor):
  %true : bool = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %three : int = prim::Constant[value=3]()
  %out : Tensor = prim::Loop(%two, %true, %x.1)
    block0(%j : int, %x.2 : Tensor):
      %t : Tensor = aten::tanh(%x.2)
      %sq : Tensor = prim::Loop(%three, %true, %t)
        block0(%i : int, %x.3 : Tensor):
          %x.4 : Tensor = aten::mul(%x.3, %x.3)
          -> (%true, %x.4)
      -> (%true, %sq)
  return (%out)
"""


def test_nested_loops_unroll_inner_first():
    g = parse_graph(NESTED)
    fused = jit.fuse(g)
    assert not any(node.kind == "prim::Loop" for node in fused.all_nodes())
    [group] = fusion_groups(fused)
    kinds = [n.kind for n in group.attrs["Subgraph"].nodes if n.kind != "prim::Constant"]
    assert kinds == (["aten::tanh"] + ["aten::mul"] * 3) * 2
    jit.reset_stats()
    x = np.linspace(-2, 2, 10, dtype=np.float32)
    np.testing.assert_allclose(jit.run(fused, x), run(g, x), rtol=1e-5)  # tanh: a few ulp
    assert not jit.stats()["fallbacks"]
