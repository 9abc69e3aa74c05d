"""``aten::cat`` of one fusion group's results as the group's ``prim::FusedConcat`` output
(``fuser/concat_outputs.py``): which cats are absorbed, the answers against the interpreter on
the CPU kernel (written in place, at offsets computed from the shapes) and the emulated CUDA
one (pieces concatenated by the launcher), and the LSTM cell's backward in one kernel."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import torchlike as tl
from tests.differential import run_emulated
from torchlike import jit
from torchlike.fuser.concat_outputs import fuse_concat_outputs
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

CASES = Path(__file__).resolve().parent / "corpus" / "cases"


def _kinds(graph):
    return [n.kind for n in graph.nodes]


def _three(dim):
    def f(x, y):
        a = tl.sin(x) * y
        return tl.cat([a, tl.exp(x), a + 1.0], dim)
    return f


def _want(x, y, dim):
    a = np.sin(x.astype(np.float64)) * y
    return np.concatenate([a, np.exp(x.astype(np.float64)), a + 1.0], dim)


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_cat_of_group_results_is_one_kernel_for_any_shape(strict_cpu, dim):
    rng = np.random.default_rng(0)
    x, y = rng.standard_normal((2, 4, 8)).astype(np.float32)
    f = jit.trace(_three(dim), (x, y))
    fused = f.graph_for(x, y)
    assert _kinds(fused) == ["prim::FusionGroup"], fused
    assert "prim::FusedConcat" in str(fused)
    jit.reset_stats()
    for k, shape in enumerate([(4, 8), (6, 3), (2, 5), (1, 5), (5, 1)]):
        x, y = rng.standard_normal((2,) + shape).astype(np.float32)
        got = f(x, y)
        np.testing.assert_allclose(got, _want(x, y, dim), rtol=2e-6, atol=1e-6)
        assert got.dtype == np.float32 and got.flags["C_CONTIGUOUS"]
        if k == 2:  # one kernel serves these shapes: the pieces' offsets come from the loops
            s = jit.stats()
            assert s["kernels_compiled"] + s["disk_hits"] <= 1 and s["cache_hits"] >= 2, s


def test_broadcast_piece_and_float64(strict_cpu):
    def f(x, r):
        return tl.cat([x * 2.0, tl.tanh(r) + x * 0.0, tl.exp(r)], 0)  # exp(r): a (1, n) piece

    x = np.random.default_rng(1).standard_normal((3, 7))
    r = np.random.default_rng(2).standard_normal((1, 7))
    t = jit.trace(f, (x, r))
    jit.reset_stats()
    got = t(x, r)
    assert "prim::FusedConcat" in str(t.graph_for(x, r))
    np.testing.assert_allclose(got, np.concatenate([x * 2, np.tanh(r) + x * 0, np.exp(r)], 0),
                               rtol=1e-12)
    assert got.shape == (7, 7) and not jit.stats()["fallbacks"]


GRAPH = """
graph(%x : Float(4, 6), %y : Float(4, 6)):
  %one : int = prim::Constant[value=1]()
  %a : Float(4, 6) = aten::sigmoid(%x)
  %b : Float(4, 6) = aten::mul(%a, %y)
  %c : Float(4, 6) = aten::tanh(%y)
  %l : Tensor[] = prim::ListConstruct(%b, %c, %a)
  %cat : Float(4, 18) = aten::cat(%l, %one)
  return (%cat)
"""


def _group(graph):
    (node,) = [n for n in graph.nodes if n.kind == "prim::FusionGroup"]
    return node


def test_emulated_cuda_kernel_concatenates_its_pieces():
    rng = np.random.default_rng(3)
    x, y = rng.standard_normal((2, 4, 6)).astype(np.float32)
    fused = jit.fuse(parse_graph(GRAPH))
    node = _group(fused)
    assert node.outputs[0].uses == [] and len(node.outputs) == 1
    env = dict(zip(fused.inputs, (x, y)))
    got = run_emulated(node.attrs["Subgraph"], [env[v] for v in node.inputs])
    want = Interpreter(parse_graph(GRAPH)).run(x, y)
    np.testing.assert_allclose(got[0], want, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("text,why", [
    # a piece is also returned: it must exist on its own
    (GRAPH.replace("return (%cat)", "return (%cat, %b)"), "returned"),
    # pieces of two groups (the matmul between them is not fused)
    (GRAPH.replace("%c : Float(4, 6) = aten::tanh(%y)",
                   "%m : Float(4, 6) = aten::matmul(%b, %w)\n"
                   "  %c : Float(4, 6) = aten::tanh(%m)").replace(
        "%y : Float(4, 6))", "%y : Float(4, 6), %w : Float(6, 6))"), "two groups"),
    # a group input passed through as a piece
    (GRAPH.replace("prim::ListConstruct(%b, %c, %a)", "prim::ListConstruct(%b, %x)"),
     "input"),
    # int and float pieces: cat promotes
    (GRAPH.replace("%c : Float(4, 6) = aten::tanh(%y)",
                   "%c : Long(4, 6) = aten::gt(%y, %one)"), "dtypes"),
])
def test_cats_left_alone(text, why):
    fused = jit.fuse(parse_graph(text))
    assert "aten::cat" in _kinds(fused), why
    assert "prim::FusedConcat" not in str(fused), why
    assert fuse_concat_outputs(fused) == 0


def test_lstm_cell_backward_is_one_kernel_with_the_gate_gradients_concatenated(strict_cpu):
    """The gates' cotangent (four (n, 256) pieces, one per gate) is written in place: before,
    the group wrote the pieces and ``aten::cat`` copied them into the (n, 1024) result."""
    from torchlike.autodiff import compile_vjp
    prog = jit.ScriptFunction(parse_graph((CASES / "lstm_cell_pointwise" / "scripted.txt")
                                          .read_text()))
    rng = np.random.default_rng(4)
    gates = rng.standard_normal((32, 1024)).astype(np.float32)
    c = rng.standard_normal((32, 256)).astype(np.float32)
    v = compile_vjp(prog, gates, c)
    res = v.forward(gates, c)
    outs, saved = res[:v.num_outputs], res[v.num_outputs:]
    cots = [rng.standard_normal(o.shape).astype(np.float32) for o in outs]
    bwd = v.backward.graph_for(*cots, *saved)
    assert _kinds(bwd) == ["prim::FusionGroup"], bwd
    jit.reset_stats()
    d_gates, d_c = v.backward(*cots, *saved)
    assert jit.stats()["kernels_compiled"] + jit.stats()["disk_hits"] + \
        jit.stats()["cache_hits"] == 1 and not jit.stats()["fallbacks"]
    # against the same backward graph interpreted, unfused
    want = Interpreter(v.backward.graph).run(*cots, *saved)
    np.testing.assert_allclose(d_gates, want[0], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(d_c, want[1], rtol=1e-5, atol=1e-6)
    assert d_gates.shape == (32, 1024)


LEGACY = """
graph(%x : Float(4, 6), %y : Float(4, 6)):
  %2 : Float(4, 12) = prim::FusionGroup_0(%x, %y)
  return (%2)
with prim::FusionGroup_0 = graph(%0 : Float(4, 6), %1 : Float(4, 6)):
  %a : Float(4, 6) = aten::sigmoid(%0)
  %b : Float(4, 6) = aten::tanh(%1)
  %c : Float(4, 12) = prim::FusedConcat[dim=1](%a, %b)
  return (%c)
"""


def test_a_legacy_fused_concat_graph_runs_and_fuses_again(strict_cpu):
    """A graph printed after PyTorch's legacy fuser (its ``prim::FusedConcat``): interpreted
    as printed, and fused anew (the group inlined, its concat absorbed again)."""
    x, y = np.random.default_rng(5).standard_normal((2, 4, 6)).astype(np.float32)
    g = parse_graph(LEGACY)
    want = np.concatenate([1 / (1 + np.exp(-x.astype(np.float64))), np.tanh(y)], 1)
    np.testing.assert_allclose(Interpreter(g).run(x, y), want, rtol=1e-6)
    fused = jit.fuse(g)
    assert _kinds(fused) == ["prim::FusionGroup"] and "prim::FusedConcat" in str(fused)
    np.testing.assert_allclose(jit.ScriptFunction(g)(x, y), want, rtol=1e-6)
