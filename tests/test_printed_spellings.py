"""Ops that PyTorch's own Python functions print when scripted: ``prim::layout`` (``torch.norm``
checks the input is strided), ``aten::_softmax`` / ``aten::_log_softmax`` (``F.softmax``'s
internals, ``torch._softmax``) and ``aten::dist``.  Each is checked interpreted and fused against
numpy, the private softmaxes fused into a row kernel (the kernel ran, strict mode), and with
torch installed the graphs PyTorch prints for these calls against eager PyTorch.
"""
import warnings

import numpy as np
import pytest
from differential import backend_missing, fuser_settings, use_emulator_as_cuda
from graph_modes import program_module

from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.fuser import config
from torchlike.fuser.stats import reset_stats, stats
from torchlike.ir import parse_graph

RNG = np.random.default_rng(5)


def _softmax(x, axis):
    e = np.exp(x - x.max(axis=axis, keepdims=True))
    return e / e.sum(axis=axis, keepdims=True)


PRIVATE = """graph(%x : Tensor):
  %false : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %dim : int = prim::Constant[value={dim}]()
  %two : float = prim::Constant[value=2.]()
  %y : Tensor = aten::mul(%x, %two)
  %s : Tensor = aten::{kind}(%y, %dim, %false)
  %z : Tensor = aten::add(%s, %two, %one)
  return (%z)"""


@pytest.mark.parametrize("kind", ["_softmax", "_log_softmax"])
@pytest.mark.parametrize("dim", [-1, 0])
def test_private_softmax_fuses_as_softmax(tmp_path, kind, dim):
    x = RNG.standard_normal((6, 40)).astype(np.float32)
    ref = _softmax(2.0 * x.astype(np.float64), dim)
    ref = (np.log(ref) if kind == "_log_softmax" else ref) + 2.0
    text = PRIVATE.replace("{kind}", kind).replace("{dim}", str(dim))
    g = parse_graph(text)
    np.testing.assert_allclose(jit.run(g, x), ref, rtol=2e-6, atol=2e-6)
    fused = jit.fuse(g)
    [group] = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    public = "aten::" + kind[1:]
    assert [n.kind for n in group.attrs["Subgraph"].nodes].count(public) == 1, fused
    config.set_cache_dir(tmp_path)  # a fresh cache: the kernel is compiled here
    try:
        with fuser_settings("cpu", strict=True):
            reset_stats()
            got = jit.run(fused, x)
        assert stats()["fallbacks"] == {} and stats()["kernels_compiled"] == 1, stats()
    finally:
        config.set_cache_dir(None)
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=2e-6)


def test_half_to_float_softmax_raises_as_on_the_cpu():
    """half_to_float exists on CUDA only: PyTorch's CPU kernel refuses it, naming the cause;
    the graph is not rewritten, so the fused graph raises the same."""
    text = PRIVATE.replace("{kind}", "_softmax").replace("{dim}", "-1").replace(
        "%false : bool = prim::Constant[value=0]()", "%false : bool = prim::Constant[value=1]()")
    x = RNG.standard_normal((3, 8)).astype(np.float16)
    for graph in (parse_graph(text), jit.fuse(parse_graph(text))):
        with pytest.raises(ExecutionError, match="half to float conversion is not supported on "
                                                 "CPU") as e:
            jit.run(graph, x)
        assert "aten::_softmax" in str(e.value)


DIST = """graph(%x : Tensor, %y : Tensor):
  %p : float = prim::Constant[value={p}]()
  %d : Tensor = aten::dist(%x, %y, %p)
  return (%d)"""


@pytest.mark.parametrize("p", ["2.", "1.", "inf", "0.", "3."])
def test_dist_is_the_norm_of_the_difference(p):
    x = RNG.standard_normal((5, 7)).astype(np.float32)
    y = RNG.standard_normal(7).astype(np.float64)  # promoted: a float64 result
    y[2] = x[0, 2]  # a zero difference (p = 0 counts the nonzero ones)
    got = jit.run(parse_graph(DIST.replace("{p}", p)), x, y)
    d = np.abs(x.astype(np.float64) - y)
    q = float(p)
    want = (d.max() if q == np.inf else np.count_nonzero(d) if q == 0
            else (d ** q).sum() ** (1 / q))
    assert got.dtype == np.float64 and got.shape == ()
    np.testing.assert_allclose(got, want, rtol=1e-12)


def test_dist_of_integers_raises_as_pytorch():
    x = np.arange(6, dtype=np.int32).reshape(2, 3)
    with pytest.raises(ExecutionError, match="input dtype should be either floating point or "
                                             "complex. Got Int instead"):
        jit.run(parse_graph(DIST.replace("{p}", "2.")), x, x)


LAYOUT = """graph(%x : Tensor):
  %zero : int = prim::Constant[value=0]()
  %l : int = prim::layout(%x)
  %strided : bool = aten::eq(%l, %zero)
  %r : Tensor = prim::If(%strided)
    block0():
      %a : Tensor = aten::abs(%x)
      -> (%a)
    block1():
      %n : Tensor = aten::neg(%x)
      -> (%n)
  return (%r)"""


def test_layout_is_strided():
    x = RNG.standard_normal((2, 3)).astype(np.float32)
    for graph in (parse_graph(LAYOUT), jit.fuse(parse_graph(LAYOUT))):
        np.testing.assert_array_equal(jit.run(graph, x), np.abs(x))


SOURCE = '''
import torch


def norms(x, y):
    return (torch.norm(x), torch.norm(x, dim=-1), torch.norm(x, p=1, dim=0, keepdim=True),
            torch.dist(x, y), torch.dist(x, y, 1.0))


def private_softmax(x):
    return torch._softmax(x * 2.0, -1, False) + torch._log_softmax(x, 0, False)
'''


@pytest.mark.parametrize("name", ["norms", "private_softmax"])
def test_printed_graphs_match_pytorch(torch, tmp_path, name):
    """What ``torch.jit.script`` prints for these calls (inlined: torch.norm is a Python
    function of torch.functional), interpreted and fused, against eager PyTorch."""
    fn = getattr(program_module(tmp_path, f"spellings_{name}", SOURCE), name)
    text = str(torch.jit.script(fn).inlined_graph)
    x = RNG.standard_normal((4, 9)).astype(np.float32)
    args = [x] + ([RNG.standard_normal(9).astype(np.float32)] if name == "norms" else [])
    want = fn(*[torch.from_numpy(a) for a in args])
    want = want if isinstance(want, tuple) else (want,)
    for graph in (parse_graph(text), jit.fuse(parse_graph(text))):
        got = jit.run(graph, *args)
        got = got if isinstance(got, tuple) else (got,)
        assert len(got) == len(want)
        for g, w in zip(got, want, strict=True):
            assert g.dtype == w.numpy().dtype and g.shape == tuple(w.shape)
            np.testing.assert_allclose(g, w.numpy(), rtol=2e-6, atol=1e-6)


TENSOR_CONSTANT = """graph(%x : Tensor):
  %c : {ctype}(requires_grad=0, device=cpu) = prim::Constant[value={{{value}}}]()
  %one : int = prim::Constant[value=1]()
  %y : Tensor = aten::mul(%x, %c)
  %z : Tensor = aten::add(%y, %c, %one)
  %w : Tensor = aten::sigmoid(%z)
  return (%z, %w)"""
# (constant type, value, input dtype) -> the dtype of z: a 0-d tensor constant promotes as a 0-d
# tensor (torch.tensor(0.3, dtype=torch.half) * int32 tensor is float16), except Double() and
# Long(), which are how traces record Python scalars (x * 0.5 on an int tensor stays float32)
CONSTANT_DTYPES = [("Half", "0.3", "int32", "float16"), ("Float", "0.3", "float16", "float16"),
                   ("Float", "0.3", "int32", "float32"), ("Int", "3", "float16", "float16"),
                   ("Int", "3", "uint8", "uint8"), ("Bool", "1", "int32", "int32"),
                   ("Double", "0.3", "int32", "float32"), ("Long", "3", "int32", "int32")]


@pytest.mark.parametrize("ctype,value,xdt,zdt", CONSTANT_DTYPES)
def test_tensor_constants_promote_as_pytorch(ctype, value, xdt, zdt):
    """Interpreted, fused into a CPU kernel and into a CUDA kernel (emulated), strictly: the
    same dtypes and values."""
    g = parse_graph(TENSOR_CONSTANT.format(ctype=ctype, value=value))
    x = np.arange(12).reshape(3, 4).astype(xdt)
    z, w = jit.run(g, x)
    assert str(z.dtype) == zdt
    c = float(value) if "." in value else int(value)
    np.testing.assert_allclose(z.astype(np.float64), x.astype(np.float64) * c + c, rtol=1e-3)
    backends = {"cpu": lambda: fuser_settings("cpu", strict=True)}
    if not backend_missing("cuda-emulated"):
        backends["cuda"] = lambda: use_emulator_as_cuda(strict=True)
    for backend, settings in backends.items():
        reset_stats()
        with settings():
            got = jit.run(jit.fuse(g), x)
        assert stats()["fallbacks"] == {}, stats()
        for a, b in zip(got, (z, w), strict=True):
            assert a.dtype == b.dtype, (backend, a.dtype, b.dtype)
            np.testing.assert_allclose(a.astype(np.float64), b.astype(np.float64), rtol=1e-3)


def test_traced_tensor_constant_keeps_its_dtype(torch, tmp_path):
    """torch.heaviside(x, torch.tensor(0.5)) traced: the constant is a Float() tensor, which
    heaviside requires to match x's dtype (a Python scalar would not)."""
    mod = program_module(tmp_path, "traced_constant", "import torch\n\n\ndef f(x):\n"
                         "    return torch.heaviside(x, torch.tensor(0.5)) * torch.tensor(3)\n")
    x = RNG.standard_normal((3, 4)).astype(np.float32)
    x[0, 0] = 0.0
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        text = str(torch.jit.trace(mod.f, (torch.from_numpy(x),)).graph)
    want = mod.f(torch.from_numpy(x)).numpy()
    for graph in (parse_graph(text), jit.fuse(parse_graph(text))):
        got = jit.run(graph, x)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
