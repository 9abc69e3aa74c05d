"""Idioms of scripted and traced models that used to stop a graph: each as PyTorch 2.13 prints
it, run interpreted, fused, and fused strictly, against numpy (and against eager PyTorch where
torch is installed).

* ``for i, r in enumerate(x)`` / ``zip(x, y)`` scripted: the trip count is ``prim::min`` of a
  list of lengths; ``for r in x`` traced: ``aten::unbind`` then ``prim::ListUnpack``;
* ``aten::flip``, ``aten::roll``, ``aten::isclose``;
* the tensor ops of ``ops/tensor_extras.py`` (``nonzero``, ``where(condition)``, ``narrow``,
  ``empty_like``, ``eye``, ``linspace``, ``dot``, ``outer``, ``nansum``, ``cosine_similarity``,
  ...), scripted and traced by torch, against torch;
* order statistics and searches (``median``, ``quantile``, ``cummax``, ``logcumsumexp``,
  ``bucketize``, ``searchsorted``) and ``tensor_split``, ``meshgrid``, ``take_along_dim``,
  ``kron``, ``torch.linalg.norm``, against torch, NaN and ties included;
* ``torch.clamp(x, min=torch.tensor(-0.5), ...)`` traced: ``aten::to`` of a 0-d constant, a
  would-be group that reads only constants and so is left to the interpreter (strict mode once
  failed on it: "unsupported scalar output of a fusion group").
"""
from __future__ import annotations

import warnings

import numpy as np
import pytest
from graph_modes import graph_modes, program_module

from torchlike import jit
from torchlike.ir import parse_graph

ENUMERATE = """graph(%x.1 : Tensor):
  %27 : int = prim::Constant[value=1]()
  %18 : bool = prim::Constant[value=1]() # m.py:81:4
  %5 : NoneType = prim::Constant()
  %2 : int = prim::Constant[value=0]() # m.py:80:27
  %11 : int = prim::Constant[value=9223372036854775807]() # m.py:81:16
  %4 : Tensor = aten::select(%x.1, %2, %2) # m.py:80:25
  %s.1 : Tensor = aten::zeros_like(%4, %5, %5, %5, %5, %5) # m.py:80:8
  %15 : int = aten::len(%x.1) # m.py:81:4
  %16 : int[] = prim::ListConstruct(%11, %15)
  %17 : int = prim::min(%16) # m.py:81:4
  %s : Tensor = prim::Loop(%17, %18, %s.1) # m.py:81:4
    block0(%i.1 : int, %s.11 : Tensor):
      %r.1 : Tensor = aten::select(%x.1, %2, %i.1) # m.py:81:4
      %26 : Tensor = aten::mul(%r.1, %i.1) # m.py:82:16
      %s.5 : Tensor = aten::add(%s.11, %26, %27) # m.py:82:12
      -> (%18, %s.5)
  return (%s)
"""

UNBIND = """graph(%x : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=0]() # torch/_tensor.py:1215:0
  %2 : Tensor[] = aten::unbind(%x, %1) # torch/_tensor.py:1215:0
  %r.1 : Float(4, strides=[1], requires_grad=0, device=cpu), %r.3 : Float(4, strides=[1], requires_grad=0, device=cpu), %r : Float(4, strides=[1], requires_grad=0, device=cpu) = prim::ListUnpack(%2)
  %6 : Long(requires_grad=0, device=cpu) = prim::Constant[value={2}]() # m.py:72:0
  %7 : Float(4, strides=[1], requires_grad=0, device=cpu) = aten::mul(%r.1, %6) # m.py:72:0
  %9 : Float(4, strides=[1], requires_grad=0, device=cpu) = aten::mul(%r.3, %6) # m.py:72:0
  %11 : Float(4, strides=[1], requires_grad=0, device=cpu) = aten::mul(%r, %6) # m.py:72:0
  %12 : Tensor[] = prim::ListConstruct(%7, %9, %11)
  %14 : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu) = aten::stack(%12, %1) # m.py:73:0
  return (%14)
"""

FLIP_ROLL = """graph(%x.1 : Tensor):
  %2 : int = prim::Constant[value=1]() # m.py:28:37
  %m : int = prim::Constant[value=-1]() # m.py:28:37
  %3 : int[] = prim::ListConstruct(%2)
  %4 : Tensor = aten::flip(%x.1, %3) # m.py:28:22
  %7 : Tensor = aten::add(%4, %x.1, %2) # m.py:28:22
  %s : int[] = prim::ListConstruct(%m)
  %5 : Tensor = aten::roll(%7, %s, %3) # m.py:29:22
  return (%5)
"""

ISCLOSE = """graph(%x.1 : Tensor,
      %y.1 : Tensor):
  %5 : bool = prim::Constant[value=0]()
  %4 : float = prim::Constant[value=0.10000000000000001]() # m.py:95:53
  %6 : Tensor = aten::isclose(%x.1, %y.1, %4, %4, %5) # m.py:95:28
  return (%6)
"""

TENSOR_BOUNDS = """graph(%x : Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu)):
  %1 : Float(requires_grad=0, device=cpu) = prim::Constant[value={-0.5}]() # m.py:87:0
  %2 : Device = prim::Constant[value="cpu"]() # m.py:87:0
  %3 : int = prim::Constant[value=6]() # m.py:87:0
  %4 : bool = prim::Constant[value=0]() # m.py:87:0
  %6 : NoneType = prim::Constant()
  %7 : Float(requires_grad=0, device=cpu) = aten::to(%1, %2, %3, %4, %4, %6) # m.py:87:0
  %8 : Float(requires_grad=0, device=cpu) = aten::detach(%7) # m.py:87:0
  %9 : Float(requires_grad=0, device=cpu) = prim::Constant[value={0.5}]() # m.py:87:0
  %15 : Float(requires_grad=0, device=cpu) = aten::to(%9, %2, %3, %4, %4, %6) # m.py:87:0
  %16 : Float(requires_grad=0, device=cpu) = aten::detach(%15) # m.py:87:0
  %17 : Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu) = aten::clamp(%x, %8, %16) # m.py:87:0
  return (%17)
"""


def _run_all_modes(text, *args):
    """The graph's outputs interpreted, fused, and fused in strict mode (one list each)."""
    return [run(*args) for _, run in graph_modes(text)]


X = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


@pytest.mark.parametrize("text, args, want", [
    (ENUMERATE, (X,), sum(r * i for i, r in enumerate(X))),
    (UNBIND, (X,), X * 2),
    (FLIP_ROLL, (X,), np.roll(X[:, ::-1] + X, -1, 1)),
    (ISCLOSE, (X, X + np.float32(0.05)), np.isclose(X, X + np.float32(0.05), 0.1, 0.1)),
    (TENSOR_BOUNDS, (np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6),),
     np.clip(np.linspace(-1, 1, 24, dtype=np.float32).reshape(4, 6), -0.5, 0.5)),
], ids=["enumerate", "unbind", "flip_roll", "isclose", "tensor_bounds"])
def test_idiom(text, args, want):
    for mode, got in zip(("interpreted", "fused", "strict"), _run_all_modes(text, *args)):
        assert got.dtype == want.dtype, mode
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6, err_msg=mode)


def test_flip_roll_isclose_errors():
    from torchlike.errors import ExecutionError
    g = parse_graph(FLIP_ROLL.replace("%3 : int[] = prim::ListConstruct(%2)",
                                      "%3 : int[] = prim::ListConstruct(%2, %2)"))
    with pytest.raises(ExecutionError, match="aten::flip.*dims has duplicates"):
        jit.run(g, X)
    with pytest.raises(ExecutionError, match="aten::isclose.*did not match"):
        jit.run(parse_graph(ISCLOSE), X, X.astype(np.float64))


SOURCE = '''
import torch
import torch.nn.functional as F


def enumerate_rows(x):
    s = torch.zeros_like(x[0])
    for i, r in enumerate(x):
        s = s + r * i
    return s


def zip_rows(x, y):
    s = torch.zeros_like(x[0])
    for a, b in zip(x, y):
        s = s + a * b
    return s


def stack_rows(x):
    ys = []
    for r in x:
        ys.append(r * 2)
    return torch.stack(ys)


def flip_roll(x):
    return torch.roll(torch.flip(x, [1]) + x, (1, -1), (0, 1))


def close(x, y):
    return torch.isclose(x, y, rtol=0.1, atol=0.1) & torch.isclose(x, x, equal_nan=True)


def tensor_bounds(x):
    return torch.clamp(x, min=torch.tensor(-0.5), max=torch.tensor(0.5))


def any_all(x):
    return (x > 0).any(1) | (x < -1).all(0).any()
'''


def _against_torch(torch, mod, cases):
    """Each function of ``mod``, scripted and traced by torch, run every way against eager."""
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    for name, args in cases.items():
        fn = getattr(mod, name)
        want = fn(*args)
        want = [w.numpy() for w in (want if isinstance(want, tuple) else (want,))]
        for capture in ("script", "trace"):
            f = torch.jit.script(fn) if capture == "script" else torch.jit.trace(fn, args)
            for got in _run_all_modes(str(f.graph), *[a.numpy() for a in args]):
                got = got if isinstance(got, (tuple, list)) and len(want) > 1 else [got]
                for g, w in zip(got, want):
                    assert g.dtype == w.dtype and g.shape == w.shape, (name, capture)
                    np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6,
                                               err_msg=f"{name} ({capture})")


def test_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "model_idioms", SOURCE)
    x = torch.randn(5, 4)
    x[1, 2] = float("nan")
    y = x + 0.05 * torch.randn(5, 4)
    _against_torch(torch, mod, {
        "enumerate_rows": (x,), "zip_rows": (x, y), "stack_rows": (x,), "flip_roll": (x,),
        "close": (x, y), "tensor_bounds": (x,), "any_all": (x,)})


EXTRAS = """graph(%x.1 : Tensor):
  %none : NoneType = prim::Constant()
  %0 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %2 : int = prim::Constant[value=2]()
  %4 : int = prim::Constant[value=4]()
  %f : float = prim::Constant[value=0.]()
  %m : Tensor = aten::gt(%x.1, %f)
  %nz : Tensor = aten::nonzero(%m)
  %w : Tensor[] = aten::where(%m)
  %n : Tensor = aten::narrow(%x.1, %1, %1, %2)
  %e : Tensor = aten::empty_like(%x.1, %none, %none, %none, %none, %none)
  %i : Tensor = aten::eye(%4, %none, %none, %none, %none)
  %l : Tensor = aten::linspace(%0, %1, %4, %none, %none, %none, %none)
  %c : Tensor = aten::count_nonzero(%m, %1)
  return (%nz, %w, %n, %e, %i, %l, %c)
"""


def test_tensor_extras_interpreted():
    x = np.array([[1.0, -2.0, 3.0, np.nan], [0.0, 5.0, -1.0, 2.0]], np.float32)
    nz, w, n, e, i, lin, c = jit.run(parse_graph(EXTRAS), x)
    np.testing.assert_array_equal(nz, np.argwhere(x > 0))
    assert nz.dtype == np.int64 and nz.shape == (4, 2)
    assert len(w) == 2 and all(v.dtype == np.int64 for v in w)
    np.testing.assert_array_equal(np.stack(w, 1), nz)
    np.testing.assert_array_equal(n, x[:, 1:3])
    assert e.shape == x.shape and e.dtype == x.dtype and not e.any()  # zeros, never garbage
    np.testing.assert_array_equal(i, np.eye(4, dtype=np.float32))
    np.testing.assert_allclose(lin, np.linspace(0, 1, 4, dtype=np.float32))
    np.testing.assert_array_equal(c, [2, 2])
    bad = EXTRAS.replace("aten::narrow(%x.1, %1, %1, %2)", "aten::narrow(%x.1, %1, %2, %4)")
    from torchlike.errors import ExecutionError
    with pytest.raises(ExecutionError, match="aten::narrow.*exceeds dimension size"):
        jit.run(parse_graph(bad), x)


EXTRAS_SOURCE = '''
import torch
import torch.nn.functional as F


def searching(x):
    return (x > 0).nonzero(), torch.argwhere(x > 1), torch.where(x > 0)[1], \
        torch.count_nonzero(x > 0, dim=1)


def views(x):
    return x.narrow(1, 1, 3) * 2, x[0].broadcast_to(3, 6) + 1, \
        torch.movedim(x.reshape(2, 2, 6), 0, 2) - 1


def arrangements(x):
    y = x.clone()
    torch.diagonal(y, 1).zero_()  # a view: the write reaches y
    return torch.diagonal(x, -1) * 2, torch.diagonal(x.reshape(2, 2, 6), 0, -1, 0), y, \
        x.view_as(x.t()) + 1, torch.flipud(x), torch.fliplr(x) * 3, x.tile((2,)), \
        torch.tile(x[0], (2, 1, 2)), torch.cartesian_prod(x[0, :2], x[1, :3])


def factories(x):
    y = torch.empty_like(x)
    y.fill_(2.0)
    return y * x, x[:, :4] @ torch.eye(4), x * torch.linspace(0, 1, 6)


def products(x):
    return torch.dot(x[0], x[1]), torch.mv(x, x[0]), torch.outer(x[0], x[1]), \
        torch.trace(x[:, :4])


def nan_reductions(x):
    y = torch.where(x > 1, torch.full_like(x, float("nan")), x)
    return torch.nansum(y, 1), torch.nanmean(y, 0), torch.diff(x, dim=1)


def distances(x, y):
    return F.cosine_similarity(x, y, dim=1), F.pairwise_distance(x, y), \
        F.pairwise_distance(x, y, p=1.0, keepdim=True)


def cosines(x, y, z):
    # operands of different ranks broadcast; a row of norm below eps (each norm is clamped)
    return F.cosine_similarity(x, y[0], dim=-1), F.cosine_similarity(z * 1e-9, y, dim=1), \
        F.cosine_similarity(x.unsqueeze(0), z[:, :1], dim=0)
'''


def test_tensor_extras_against_torch(torch, tmp_path):
    mod = program_module(tmp_path, "tensor_extras_programs", EXTRAS_SOURCE)
    x = torch.randn(4, 6, generator=torch.Generator().manual_seed(0))
    y = torch.randn(4, 6, generator=torch.Generator().manual_seed(1))
    _against_torch(torch, mod, {
        "searching": (x,), "views": (x,), "arrangements": (x,), "factories": (x,),
        "products": (x,),
        "nan_reductions": (x,), "distances": (x, y), "cosines": (x, y, x.clone())})


ORDER_SOURCE = '''
import torch
import torch.nn.functional as F


def medians(x):
    v, i = torch.median(x, 1)
    w, j = x.nanmedian(0, keepdim=True)
    return torch.median(x), v, i, w, j, torch.nanmedian(x)


def quantiles(x):
    q = torch.linspace(0.1, 0.9, 3)  # not a tensor constant: traced text rounds those
    return torch.quantile(x, 0.3, dim=1), torch.quantile(x, q, dim=0, keepdim=True), \\
        torch.nanquantile(x, 0.5), torch.quantile(x, q, interpolation="nearest"), \\
        torch.quantile(x, 0.25, dim=1, interpolation="midpoint")


def scans(x):
    v, i = torch.cummax(x, 1)
    w, j = x.cummin(0)
    return v * 2, i, w, j, torch.logcumsumexp(x, 1)


def searches(x):
    b = torch.linspace(-1.0, 2.0, 4)
    s = torch.sort(x, 1)[0]
    return torch.bucketize(x, b), torch.bucketize(x, b, right=True, out_int32=True), \\
        torch.searchsorted(s, x), torch.searchsorted(b, x, side="right")


def pieces(x):
    a, b, c = torch.tensor_split(x, 3, dim=1)
    d, e = torch.tensor_split(x, [1], dim=0)
    gx, gy = torch.meshgrid(x[0], x[:, 0], indexing="ij")
    hx, hy = torch.meshgrid(x[0], x[:, 0], indexing="xy")
    idx = torch.argsort(x, 1)
    return a * 2, c + 1, e, gx + gy, hx * hy, torch.take_along_dim(x, idx, 1), \\
        torch.take_along_dim(x, idx[:, :1]), torch.kron(x[:2, :2], x[2:, 2:])


def norms(x):
    return torch.linalg.norm(x), torch.linalg.norm(x, dim=1), \\
        torch.linalg.norm(x, float("inf"), dim=(0, 1)), torch.linalg.norm(x, "nuc"), \\
        torch.linalg.norm(x, 1, dim=0, keepdim=True)


def torch_norms(x):  # scripted: a call of the function constant "norm" (torch.functional)
    return torch.norm(x, dim=1), torch.norm(x), torch.norm(x, p=1, dim=0, keepdim=True), \\
        torch.norm(x, "nuc"), torch.norm(x, float("inf")), torch.norm(x, 3.0, (0, 1))


def instance_norms(x, w, b):
    y = x.reshape(1, 5, 2, 3)
    return F.instance_norm(y, weight=w, bias=b, eps=1e-5) * 2, F.instance_norm(y)
'''


def test_order_statistics_and_searches_against_torch(torch, tmp_path):
    """ops/order_stats.py and the pieces/products of ops/tensor_extras.py (median, quantile,
    cummax, logcumsumexp, bucketize, searchsorted, tensor_split, meshgrid, take_along_dim,
    kron, linalg.norm), ``torch.norm`` and ``F.instance_norm``, scripted and traced by torch,
    NaN included."""
    mod = program_module(tmp_path, "order_programs", ORDER_SOURCE)
    x = torch.randn(5, 6, generator=torch.Generator().manual_seed(0))
    x[0, 1] = x[0, 3]  # a tie: cummax/median take PyTorch's index
    nan = x.clone()
    nan[1, 2] = float("nan")
    nan[3, 0] = float("nan")
    _against_torch(torch, mod, {"medians": (nan,), "quantiles": (x,), "scans": (nan,),
                                "searches": (x,), "pieces": (x,), "norms": (x,),
                                "torch_norms": (x,), "instance_norms": (x, x[0, 1:], x[1, :5])})
    _against_torch(torch, mod, {"quantiles": (nan,)})


def test_order_statistics_errors_name_the_node():
    from torchlike.errors import ExecutionError
    text = """graph(%x : Tensor, %q : float):
  %none : NoneType = prim::Constant()
  %f : bool = prim::Constant[value=0]()
  %s : str = prim::Constant[value="linear"]()
  %0 : int = prim::Constant[value=0]()
  %y : Tensor = aten::quantile(%x, %q, %none, %f, %s) # m.py:3:4
  %z : Tensor = aten::logcumsumexp(%x, %0) # m.py:4:4
  return (%y, %z)
"""
    x = np.array([1.0, 2.0, 4.0], np.float32)
    with pytest.raises(ExecutionError, match=r"aten::quantile.*m.py:3:4.*range \[0, 1\]"):
        jit.run(parse_graph(text), x, 1.5)
    with pytest.raises(ExecutionError, match=r"aten::quantile.*float or double"):
        jit.run(parse_graph(text), x.astype(np.int64), 0.5)
    y, z = jit.run(parse_graph(text), x, 0.5)
    assert y == 2.0 and np.allclose(z, np.logaddexp.accumulate(x))


def test_instance_norm_updates_running_statistics_as_pytorch(torch):
    """``use_input_stats`` with running statistics (an InstanceNorm in training mode): the
    buffers are updated in place with the samples' average, as ATen does."""
    import torchlike as tl
    x = np.random.default_rng(0).standard_normal((3, 4, 5)).astype(np.float32)
    rm, rv = np.zeros(4, np.float32), np.ones(4, np.float32)
    trm, trv = torch.zeros(4), torch.ones(4)
    got = tl.instance_norm(x, None, None, rm, rv, True, 0.1, 1e-5, True)
    want = torch.instance_norm(torch.from_numpy(x), None, None, trm, trv, True, 0.1, 1e-5, True)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(rm, trm.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(rv, trv.numpy(), rtol=1e-6)
