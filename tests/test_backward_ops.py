"""PyTorch's pointwise backward ops (``ops/elementwise_backward.py``) in a backward graph as
PyTorch prints it: parsed, fused into one CPU kernel with the ordinary ops around them, and
checked against the interpreter and against PyTorch."""
from __future__ import annotations

import numpy as np
import pytest

from torchlike import jit
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

T = "Float(8, 16, strides=[16, 1], requires_grad=0, device=cpu)"
B = "Bool(8, 16, strides=[16, 1], requires_grad=0, device=cpu)"

# The backward of out = sigmoid(h) * h, h = relu(x): d_h = sigmoid_backward(g h, s) + g s,
# d_x = threshold_backward(d_h, h, 0) (0 where h <= 0, relu's kink included).
SIGMOID_RELU = f"""
graph(%grad : {T},
      %s : {T},
      %h : {T}):
  %3 : int = prim::Constant[value=1]()
  %4 : int = prim::Constant[value=0]()
  %5 : {T} = aten::mul(%grad, %h) # <eval_with_key>.1:6:0
  %6 : {T} = aten::sigmoid_backward(%5, %s) # <eval_with_key>.1:7:0
  %7 : {T} = aten::mul(%grad, %s)
  %8 : {T} = aten::add(%6, %7, %3)
  %9 : {T} = aten::threshold_backward(%8, %h, %4) # <eval_with_key>.1:10:0
  return (%9)
"""

# The other backward ops in one graph: tanh, silu, logit with eps, dropout's bool mask.
OTHERS = f"""
graph(%grad : {T},
      %t : {T},
      %x : {T},
      %p : {T},
      %mask : {B}):
  %eps : float = prim::Constant[value=0.01]()
  %scale : float = prim::Constant[value=2.]()
  %one : int = prim::Constant[value=1]()
  %a : {T} = aten::native_dropout_backward(%grad, %mask, %scale)
  %b : {T} = aten::tanh_backward(%a, %t)
  %c : {T} = aten::silu_backward(%b, %x)
  %d : {T} = aten::logit_backward(%grad, %p, %eps)
  %e : {T} = aten::add(%c, %d, %one)
  return (%e, %b)
"""


def _kinds(graph):
    return [n.kind for n in graph.nodes if n.kind != "prim::Constant"]


def _group_kinds(graph):
    (node,) = [n for n in graph.nodes if n.kind == "prim::FusionGroup"]
    return {n.kind for n in node.attrs["Subgraph"].nodes}


def _fused_run(text, *inputs):
    """The graph fused into ONE kernel, run strictly: the counters show the compiled kernel."""
    fused = jit.fuse(parse_graph(text))
    assert _kinds(fused) == ["prim::FusionGroup"], fused
    jit.reset_stats()
    got = jit.run(fused, *inputs)
    s = jit.stats()
    assert s["fallbacks"] == {}, s
    assert s["kernels_compiled"] + s["disk_hits"] + s["cache_hits"] == 1, s
    return fused, got


def _inputs():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    x[0, :4] = [0.0, -0.0, np.nan, np.inf]  # relu's kink, NaN and inf through the mask
    h = np.maximum(x, np.float32(0))
    h[0, 2] = np.nan
    s = (1 / (1 + np.exp(-h))).astype(np.float32)
    g = rng.standard_normal((8, 16)).astype(np.float32)
    return g, s, h


def test_sigmoid_and_threshold_backward_fuse_with_ordinary_ops(strict_cpu, torch):
    g, s, h = _inputs()
    fused, got = _fused_run(SIGMOID_RELU, g, s, h)
    assert {"aten::sigmoid_backward", "aten::threshold_backward", "aten::mul",
            "aten::add"} <= _group_kinds(fused)
    want = Interpreter(parse_graph(SIGMOID_RELU)).run(g, s, h)
    assert got.dtype == want.dtype == np.float32
    np.testing.assert_array_equal(got, want)
    A, tg, ts, th = torch.ops.aten, *(torch.from_numpy(a) for a in (g, s, h))
    ref = A.threshold_backward(A.sigmoid_backward(tg * th, ts) + tg * ts, th, 0).numpy()
    np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-7)
    assert got[0, 0] == 0 and got[0, 1] == 0  # h = 0: relu's gradient is 0 at the kink
    assert np.isnan(got[0, 2])  # NaN h passes the (NaN) cotangent through


def test_sigmoid_and_threshold_backward_are_relu_sigmoid_gradients(strict_cpu, torch):
    """The graph is the backward of sigmoid(relu(x)) * relu(x): PyTorch's autograd agrees."""
    rng = np.random.default_rng(1)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    g = rng.standard_normal((8, 16)).astype(np.float32)
    h = np.maximum(x, np.float32(0))
    s = (1 / (1 + np.exp(-h))).astype(np.float32)
    _, got = _fused_run(SIGMOID_RELU, g, s, h)
    tx = torch.from_numpy(x).requires_grad_()
    th = torch.relu(tx)
    (torch.sigmoid(th) * th).backward(torch.from_numpy(g))
    np.testing.assert_allclose(got, tx.grad.numpy(), rtol=1e-5, atol=1e-6)


def test_other_backward_ops_fuse_into_one_kernel(strict_cpu, torch):
    rng = np.random.default_rng(2)
    g, x = rng.standard_normal((2, 8, 16)).astype(np.float32)
    t = np.tanh(rng.standard_normal((8, 16))).astype(np.float32)
    p = rng.uniform(-0.1, 1.1, (8, 16)).astype(np.float32)
    p[0, :3] = [0.0, 0.005, 1.0]  # logit's eps boundaries
    mask = rng.random((8, 16)) > 0.5
    fused, (got, got_b) = _fused_run(OTHERS, g, t, x, p, mask)
    assert {"aten::native_dropout_backward", "aten::tanh_backward", "aten::silu_backward",
            "aten::logit_backward"} <= _group_kinds(fused)
    want, want_b = Interpreter(parse_graph(OTHERS)).run(g, t, x, p, mask)
    np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    np.testing.assert_array_equal(got_b, want_b)
    A = torch.ops.aten
    tg, tt, tx, tp, tm = (torch.from_numpy(a) for a in (g, t, x, p, mask))
    ref_b = A.tanh_backward(A.native_dropout_backward(tg, tm, 2.0), tt)
    ref = A.silu_backward(ref_b, tx) + A.logit_backward(tg, tp, 0.01)
    np.testing.assert_allclose(got_b, ref_b.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(got, ref.numpy(), rtol=1e-5, atol=1e-6)
    # logit's part is 0 outside [eps, 1 - eps]: p = 0, 0.005 and 1 add nothing to silu's
    silu = A.silu_backward(ref_b, tx).numpy()
    np.testing.assert_allclose(got[0, :3], silu[0, :3], rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("threshold,dtype", [(0.5, np.float64), (-0.5, np.int32)])
def test_threshold_backward_converts_its_threshold_as_pytorch(strict_cpu, torch, threshold,
                                                              dtype):
    """An integer x <= -0.5 is x <= 0 in PyTorch (the threshold truncates to the dtype)."""
    name = "Double" if dtype == np.float64 else "Int"
    text = f"""
graph(%g : {name}(7), %x : {name}(7)):
  %t : float = prim::Constant[value={threshold}]()
  %r : {name}(7) = aten::threshold_backward(%g, %x, %t)
  return (%r)
"""
    g = np.arange(1, 8).astype(dtype)
    x = np.arange(-3, 4).astype(dtype)
    _, got = _fused_run(text, g, x)
    ref = torch.ops.aten.threshold_backward(torch.from_numpy(g), torch.from_numpy(x), threshold)
    np.testing.assert_array_equal(got, ref.numpy())
