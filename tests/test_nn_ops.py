"""Non-fusible ops around fusible regions, run by the interpreter (ops/nn_ops.py,
ops/factories.py, the ``_cast_*`` conversions): linear, layer_norm, batch_norm, group_norm,
embedding and the tensor factories, against PyTorch (functions scripted and traced by torch,
their printed graphs parsed, run interpreted and fused) and, without torch, against numpy."""
from __future__ import annotations

import numpy as np
import pytest

from torchlike import jit
from torchlike.errors import TorchlikeError
from torchlike.interpreter import run
from torchlike.ir import parse_graph


def _torch_functions(torch):
    F = torch.nn.functional

    def linear(x, w, b):
        return F.linear(x, w, b).relu()

    def batch_norm(x, m, v, w, b):
        return torch.batch_norm(x, w, b, m, v, False, 0.1, 1e-5, False).relu()

    def layer_norm(x, w, b):
        return torch.layer_norm(x, [4], w, b, 1e-5, False) * 2

    def group_norm(x, w, b):
        return torch.group_norm(x, 2, w, b, 1e-5, False) - 1

    def tensor(x):
        return x + torch.tensor([1.0, 2.0, 3.0])

    def factories(x):
        return x * torch.ones(3) + torch.zeros(3) + torch.full([3], 2.0) + torch.arange(3)

    def arange_forms(x):
        return x + torch.arange(1, 4) + torch.arange(0.0, 1.5, 0.5)

    def casts(x):
        return torch._cast_Float(x) + torch._cast_Int(x * 3).float()

    def embedding(i, w):
        return torch.embedding(w, i, -1, False, False).relu()

    r = torch.randn
    return {
        linear: [r(2, 3, 4), r(5, 4), r(5)],
        batch_norm: [r(2, 3, 4), r(3), torch.rand(3) + 0.5, r(3), r(3)],
        layer_norm: [r(2, 3, 4), r(4), r(4)],
        group_norm: [r(2, 4, 3), r(4), r(4)],
        tensor: [r(2, 3)],
        factories: [r(2, 3)],
        arange_forms: [r(2, 3)],
        casts: [r(4).double()],
        embedding: [torch.tensor([[0, 2], [1, 1]]), r(3, 4)],
    }


@pytest.mark.parametrize("mode", ["script", "trace"])
def test_against_pytorch(torch, mode):
    torch.manual_seed(0)
    failures = []
    for fn, args in _torch_functions(torch).items():
        if mode == "trace" and fn.__name__ == "tensor":
            continue  # a traced tensor constant's data is not in the printed text
        s = torch.jit.script(fn) if mode == "script" else torch.jit.trace(fn, args)
        graph = parse_graph(str(s.graph))
        want = fn(*args).numpy()
        inputs = [a.numpy() for a in args]
        for g in (graph, jit.fuse(graph)):
            got = jit.run(g, *inputs)
            if got.dtype != want.dtype or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
                failures.append(fn.__name__)
    assert not failures


def test_layer_norm_against_numpy():
    g = parse_graph("""
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %true : bool = prim::Constant[value=1]()
  %n : int = prim::Constant[value=5]()
  %shape : int[] = prim::ListConstruct(%n)
  %y : Tensor = aten::layer_norm(%x, %shape, %w, %b, %eps, %true)
  return (%y)
""")
    rng = np.random.default_rng(0)
    x, w, b = (rng.standard_normal(s).astype(np.float32) for s in ((3, 5), (5,), (5,)))
    xd = x.astype(np.float64)
    want = (xd - xd.mean(-1, keepdims=True)) / np.sqrt(xd.var(-1, keepdims=True) + 1e-5) * w + b
    np.testing.assert_allclose(run(g, x, w, b), want, rtol=1e-5, atol=1e-6)
    with pytest.raises(TorchlikeError, match="normalized_shape"):
        run(g, rng.standard_normal((3, 4)).astype(np.float32), w, b)


def test_batch_norm_training_updates_running_stats():
    g = parse_graph("""
graph(%x : Tensor, %m : Tensor, %v : Tensor):
  %none : NoneType = prim::Constant()
  %true : bool = prim::Constant[value=1]()
  %mom : float = prim::Constant[value=0.10000000000000001]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %y : Tensor = aten::batch_norm(%x, %none, %none, %m, %v, %true, %mom, %eps, %true)
  return (%y)
""")
    x = np.arange(12, dtype=np.float32).reshape(4, 3)
    m, v = np.zeros(3, np.float32), np.ones(3, np.float32)
    y = run(g, x, m, v)
    np.testing.assert_allclose(m, 0.1 * x.mean(0), rtol=1e-6)
    np.testing.assert_allclose(v, 0.9 + 0.1 * x.var(0, ddof=1), rtol=1e-6)
    np.testing.assert_allclose(y, (x - x.mean(0)) / np.sqrt(x.var(0) + 1e-5), rtol=1e-5)


def test_embedding_index_out_of_range_names_the_node():
    g = parse_graph("""
graph(%w : Tensor, %i : Tensor):
  %p : int = prim::Constant[value=-1]()
  %f : bool = prim::Constant[value=0]()
  %y : Tensor = aten::embedding(%w, %i, %p, %f, %f)
  return (%y)
""")
    w = np.ones((3, 2), np.float32)
    np.testing.assert_array_equal(run(g, w, np.array([2, 0])), w[[2, 0]])
    with pytest.raises(TorchlikeError, match="aten::embedding.*index out of range"):
        run(g, w, np.array([3]))


def test_factory_dtypes_follow_pytorch():
    g = parse_graph("""
graph():
  %none : NoneType = prim::Constant()
  %three : int = prim::Constant[value=3]()
  %two : int = prim::Constant[value=2]()
  %half : float = prim::Constant[value=0.5]()
  %size : int[] = prim::ListConstruct(%two, %three)
  %a : Tensor = aten::arange(%three, %none, %none, %none, %none)
  %b : Tensor = aten::arange(%two, %three, %half, %none, %none, %none, %none)
  %c : Tensor = aten::full(%size, %three, %none, %none, %none, %none)
  %d : Tensor = aten::ones(%size, %none, %none, %none, %none)
  return (%a, %b, %c, %d)
""")
    a, b, c, d = run(g)
    assert a.dtype == np.int64 and a.tolist() == [0, 1, 2]
    assert b.dtype == np.float32 and b.tolist() == [2.0, 2.5]
    assert c.dtype == np.int64 and c.shape == (2, 3)
    assert d.dtype == np.float32 and d.shape == (2, 3)
