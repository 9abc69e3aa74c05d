"""``aten::layer_norm`` and ``aten::rms_norm`` lowered to a row reduction's parts
(``passes/decompose_norms.py``): the graphs PyTorch prints for ``F.layer_norm`` /
``nn.LayerNorm`` and ``F.rms_norm`` / ``nn.RMSNorm`` fuse with their surroundings into one row
kernel, which runs (the executor's counters, strict mode), gives the op's answer (the
interpreter's float64 ``aten::layer_norm``, and PyTorch where installed) and raises the op's
own errors; what cannot be lowered stays the op.
"""
import numpy as np
import pytest
from test_cuda_rows import emulated_cuda, needs_gxx, run_compiled  # noqa: F401 (fixture)
from test_fused_reductions import close, interpreted

import torchlike as tl
from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.fuser import executor
from torchlike.ir import parse_graph
from torchlike.passes.decompose_norms import decompose_norms

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.usefixtures("kernel_cache")]

# x + r, then nn.LayerNorm(D) (constant normalized shape), then gelu -- as torch.jit.trace prints
# it, with the inputs' types left unknown (the tests run float16 and float64 too)
RESIDUAL_LN_GELU = """graph(%x : Tensor,
      %r : Tensor,
      %w : Tensor,
      %b : Tensor):
  %4 : int = prim::Constant[value=1]() # f.py:3:0
  %h : Tensor = aten::add(%x, %r, %4) # f.py:3:0
  %6 : int = prim::Constant[value=D]() # torch/nn/functional.py:2987:0
  %7 : int[] = prim::ListConstruct(%6)
  %8 : float = prim::Constant[value=1.0000000000000001e-05]() # torch/nn/functional.py:2987:0
  %9 : bool = prim::Constant[value=1]() # torch/nn/functional.py:2987:0
  %y : Tensor = aten::layer_norm(%h, %7, %w, %b, %8, %9) # torch/nn/functional.py:2987:0
  %11 : str = prim::Constant[value="none"]() # f.py:4:0
  %z : Tensor = aten::gelu(%y, %11) # f.py:4:0
  return (%z)
"""

# F.rms_norm(x * 2, [x.size(-1)], w) as torch.jit.script prints its inlined call
RMS_SCRIPTED = """graph(%x.1 : Tensor,
      %w.1 : Tensor):
  %2 : int = prim::Constant[value=2]() # f.py:3:22
  %h.1 : Tensor = aten::mul(%x.1, %2) # f.py:3:22
  %4 : int = prim::Constant[value=-1]() # f.py:3:35
  %5 : int = aten::size(%h.1, %4) # f.py:3:35
  %6 : int[] = prim::ListConstruct(%5)
  %7 : NoneType = prim::Constant()
  %y.1 : Tensor = aten::rms_norm(%h.1, %6, %w.1, %EPS) # torch/nn/functional.py:3006:11
  return (%y.1)
"""


def rng_data(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 3


def ln_graph(d):
    return parse_graph(RESIDUAL_LN_GELU.replace("value=D", f"value={d}"))


def rms_graph(eps):
    text = RMS_SCRIPTED.replace(
        "%EPS", "%7" if eps is None else "%e").replace(
        "  %7 : NoneType = prim::Constant()\n",
        "  %7 : NoneType = prim::Constant()\n" + (
            "" if eps is None else f"  %e : float = prim::Constant[value={eps!r}]()\n"))
    return parse_graph(text)


def run_strict(fused, *args):
    """The fused graph through the executor: every group a compiled kernel (no fallback, no
    split); returns (outputs, kernels launched)."""
    executor.clear_caches()
    jit.reset_stats()
    with np.errstate(all="ignore"):
        out = jit.run(fused, *args)
    s = jit.stats()
    assert s["fallbacks"] == {} and s["groups_split"] == 0, s
    return (out if isinstance(out, tuple) else (out,)), s["cache_hits"] + s["cache_misses"]


def one_row_group(fused, lowered):
    kinds = [n.kind for n in fused.nodes if n.kind != "prim::Constant"]
    assert kinds == ["prim::FusionGroup"], fused
    inside = [n.kind for n in fused.nodes[-1].attrs["Subgraph"].nodes]
    assert lowered not in inside and "aten::mean" in inside, inside


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(5, 7), (3, 64), (2, 1000), (300, 300)])
def test_residual_layer_norm_gelu_is_one_row_kernel(strict_cpu, shape, dtype):
    graph = ln_graph(shape[-1])
    fused = jit.fuse(graph)
    one_row_group(fused, "aten::layer_norm")
    args = [rng_data(shape, dtype, 1), rng_data(shape, dtype, 2),
            rng_data(shape[-1:], dtype, 3), rng_data(shape[-1:], dtype, 4)]
    got, kernels = run_strict(fused, *args)
    assert kernels == 1
    close(got[0], interpreted(graph, *args)[0], dtype, f"{shape} {dtype}")


@pytest.mark.parametrize("eps", [None, 1e-5])
@pytest.mark.parametrize("wdtype", ["float32", "float64"])
def test_rms_norm_scripted_is_one_row_kernel_in_the_input_dtype(strict_cpu, eps, wdtype):
    graph = rms_graph(eps)
    fused = jit.fuse(graph)
    one_row_group(fused, "aten::rms_norm")
    for shape in [(4, 33), (64, 1024)]:
        args = [rng_data(shape, "float32"), rng_data(shape[-1:], wdtype, 5)]
        got, kernels = run_strict(fused, *args)
        assert kernels == 1 and got[0].dtype == np.float32  # PyTorch's: the input's dtype
        close(got[0], interpreted(graph, *args)[0], "float32", f"{shape} {eps} {wdtype}")


def test_layer_norm_over_two_trailing_dims(strict_cpu):
    text = RESIDUAL_LN_GELU.replace("  %7 : int[] = prim::ListConstruct(%6)",
                                    "  %5 : int = prim::Constant[value=3]()\n"
                                    "  %7 : int[] = prim::ListConstruct(%5, %6)")
    graph = parse_graph(text.replace("value=D", "value=8"))
    fused = jit.fuse(graph)
    one_row_group(fused, "aten::layer_norm")
    args = [rng_data((4, 3, 8), "float32", s) for s in (1, 2)] + \
        [rng_data((3, 8), "float32", s) for s in (3, 4)]
    got, _ = run_strict(fused, *args)
    close(got[0], interpreted(graph, *args)[0], "float32")


def ln_numpy_style(x, w, b):
    return tl.tanh(tl.layer_norm(x, [x.shape[-1]], w, b, 1e-5))


def rms_numpy_style(x, w, b):
    return tl.rms_norm(x * 2, [x.shape[-2], x.shape[-1]]) * 3  # sizes of x, not of x * 2


@pytest.mark.parametrize("fn", [ln_numpy_style, rms_numpy_style])
def test_scripted_numpy_style_norms_fuse(strict_cpu, fn):
    """``jit.script`` of torchlike code: ``[x.shape[-1]]`` is ``aten::__getitem__`` of
    ``aten::size``, the input's own size."""
    s = jit.script(fn)
    x, w = rng_data((6, 5, 40), "float32"), rng_data((40,), "float32", 1)
    executor.clear_caches()
    jit.reset_stats()
    got = s(x, w, w)
    assert [n.kind for n in s.graph_for(x, w, w).nodes
            if n.kind != "prim::Constant"] == ["prim::FusionGroup"]
    assert jit.stats()["cache_misses"] == 1 and jit.stats()["fallbacks"] == {}
    close(got, jit.run(s.graph, x, w, w), "float32", fn.__name__)


# -- the op's own errors ----------------------------------------------------------------------

@pytest.mark.parametrize("fused", [False, True])
def test_bad_calls_raise_the_ops_errors(fused):
    graph = ln_graph(8)
    run = (lambda *a: jit.run(jit.fuse(graph), *a)) if fused else \
        (lambda *a: jit.run(graph, *a))
    x, w = rng_data((4, 8), "float32"), rng_data((8,), "float32")
    cases = [
        ((rng_data((4, 7), "float32"), rng_data((4, 7), "float32"), w, w),
         "Given normalized_shape=[8], expected input with shape [*, 8], but got input of "
         "size[4, 7]"),
        ((x, x, rng_data((7,), "float32"), w), "weight of shape [7]"),
        ((x, x, w, rng_data((8,), "float64")), "mixed dtype (CPU)"),
        ((x.astype(np.int64), x.astype(np.int64), w, w),
         "\"LayerNormKernelImpl\" not implemented for 'Long'"),
    ]
    for args, message in cases:
        with pytest.raises(ExecutionError) as info:
            run(*args)
        assert message in str(info.value), str(info.value)
        assert "torch/nn/functional.py:2987:0" in str(info.value)  # the op's source line


def test_rms_norm_shape_error_names_the_size():
    fused = jit.fuse(rms_graph(None))
    with pytest.raises(ExecutionError, match=r"weight of shape \[5\]"):
        jit.run(fused, rng_data((4, 8), "float32"), rng_data((5,), "float32"))


# -- what stays the op ------------------------------------------------------------------------

def test_optional_weight_and_foreign_sizes_are_not_lowered():
    optional = RESIDUAL_LN_GELU.replace(
        "%w : Tensor,", "%w : Tensor?,")
    assert decompose_norms(parse_graph(optional.replace("value=D", "value=8"))) == 0
    # [x.size(-1)] of another tensor than the one normalized: not provably its own size
    foreign = RMS_SCRIPTED.replace("aten::size(%h.1, %4)", "aten::size(%x.1, %4)")
    assert decompose_norms(parse_graph(foreign.replace("%EPS", "%7"))) == 0
    assert decompose_norms(rms_graph(None)) == 1
    kept = jit.fuse(parse_graph(foreign.replace("%EPS", "%7")))
    assert "aten::rms_norm" in [n.kind for n in kept.nodes]
    args = [rng_data((4, 8), "float32"), rng_data((8,), "float32")]
    np.testing.assert_allclose(jit.run(kept, *args), interpreted(rms_graph(None), *args)[0],
                               rtol=1e-6, atol=1e-6)


def test_dont_fuse_keeps_the_op():
    fused = jit.fuse(ln_graph(8), dont_fuse={"aten::layer_norm"})
    assert "aten::layer_norm" in [n.kind for n in fused.nodes]


# -- the CUDA backend (emulated) ------------------------------------------------------------

@needs_gxx
def test_lowered_norms_run_as_one_cuda_kernel(emulated_cuda):  # noqa: F811
    for graph, full, per_column in ((ln_graph(33), 2, 2), (rms_graph(None), 1, 1)):
        fused = jit.fuse(graph)
        args = [rng_data((6, 33), "float32", s) for s in range(full)] + \
            [rng_data((33,), "float32", 10 + s) for s in range(per_column)]
        got = run_compiled(fused, *args)
        assert jit.stats()["cache_misses"] + jit.stats()["cache_hits"] == 1
        close(got[0], interpreted(graph, *args)[0], "float32", emulated_cuda)


# -- against PyTorch -----------------------------------------------------------------------------

def test_scripted_and_traced_norms_match_pytorch(torch, strict_cpu):
    F = torch.nn.functional

    def ln(x, w, b):
        return F.silu(F.layer_norm(x, [x.size(-1)], w, b, 1e-3)) + 1

    def ln_plain(x, w, b):
        return F.layer_norm(x, [x.size(-2), x.size(-1)])

    def rms(x, w, b):
        return F.rms_norm(x, [x.size(-1)], w) * 2

    def rms_eps(x, w, b):
        return F.rms_norm(x - 1, [16], None, 1e-4)

    for fn in (ln, ln_plain, rms, rms_eps):
        for capture in ("script", "trace"):
            args = (torch.randn(8, 3, 16), torch.randn(16), torch.randn(16))
            f = torch.jit.script(fn) if capture == "script" else torch.jit.trace(fn, args)
            fused = jit.fuse(parse_graph(str(f.graph)))
            groups = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
            assert len(groups) == 1 and not any(n.kind in ("aten::layer_norm", "aten::rms_norm")
                                                for n in fused.nodes), fused
            got, _ = run_strict(fused, *[a.numpy() for a in args])
            close(got[0], fn(*args).numpy(), "float32", f"{fn.__name__} {capture}")


# -- eval-mode batch norm ------------------------------------------------------------------------

# nn.BatchNorm2d after eval(), then relu, as torch.jit.trace prints it (types left unknown)
BN_RELU = """graph(%x : Tensor,
      %w : Tensor,
      %b : Tensor,
      %mean : Tensor,
      %var : Tensor):
  %5 : bool = prim::Constant[value=TRAINING]() # torch/nn/functional.py:2898:0
  %6 : float = prim::Constant[value=0.10000000000000001]() # torch/nn/functional.py:2898:0
  %7 : float = prim::Constant[value=1.0000000000000001e-05]() # torch/nn/functional.py:2898:0
  %8 : bool = prim::Constant[value=1]() # torch/nn/functional.py:2898:0
  %y : Tensor = aten::batch_norm(%x, %w, %b, %mean, %var, %5, %6, %7, %8) # torch/nn/functional.py:2898:0
  %z : Tensor = aten::relu(%y) # f.py:4:0
  return (%z)
"""


def bn_graph(training=False, affine=True):
    text = BN_RELU.replace("value=TRAINING", f"value={int(training)}")
    if not affine:
        text = text.replace("aten::batch_norm(%x, %w, %b,", "aten::batch_norm(%x, %none, %none,")
        text = text.replace("  %5 : bool", "  %none : NoneType = prim::Constant()\n  %5 : bool")
    return parse_graph(text)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(4, 3), (2, 3, 7), (2, 5, 6, 7)])
@pytest.mark.parametrize("affine", [True, False])
def test_eval_batch_norm_is_one_elementwise_kernel(strict_cpu, shape, dtype, affine):
    graph = bn_graph(affine=affine)
    fused = jit.fuse(graph)
    kinds = [n.kind for n in fused.nodes if n.kind != "prim::Constant"]
    assert kinds == ["torchlike::batch_norm_affine", "prim::FusionGroup"], kinds
    c = shape[1]
    pdtype = "float32" if dtype == "float16" else dtype  # PyTorch's rule for half inputs
    args = [rng_data(shape, dtype, 1), rng_data((c,), pdtype, 2), rng_data((c,), pdtype, 3),
            rng_data((c,), pdtype, 4), np.abs(rng_data((c,), pdtype, 5)) + 0.1]
    got, kernels = run_strict(fused, *args)
    assert kernels == 1 and got[0].dtype == np.dtype(dtype)
    close(got[0], interpreted(graph, *args)[0], dtype, f"{shape} {dtype}")


def test_batch_norm_checks_and_training_mode():
    fused = jit.fuse(bn_graph())
    x, p = rng_data((2, 4, 5), "float32"), rng_data((4,), "float32")
    with pytest.raises(ExecutionError, match="running_mean should contain 4 elements not 3"):
        jit.run(fused, x, p, p, rng_data((3,), "float32"), np.abs(p))
    with pytest.raises(ExecutionError, match="mixed dtype"):
        jit.run(fused, x, p.astype(np.float64), p, p, np.abs(p))
    # training mode updates the running statistics in place: it stays the op
    assert "aten::batch_norm" in [n.kind for n in jit.fuse(bn_graph(training=True)).nodes]


def test_batch_norm_module_matches_pytorch(torch, strict_cpu, tmp_path):
    torch.manual_seed(0)
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3, padding=1), torch.nn.BatchNorm2d(8),
                            torch.nn.ReLU()).eval()
    with torch.no_grad():
        m[1].running_mean.normal_()
        m[1].running_var.uniform_(0.5, 2.0)
    path = tmp_path / "bn.pt"
    torch.jit.save(torch.jit.script(m), str(path))
    x = torch.randn(2, 3, 9, 9)
    loaded = jit.load(path)
    with torch.no_grad():
        want = m(x).numpy()
    close(loaded(x.numpy()), want, "float32")
    assert "torchlike::batch_norm_affine" in [n.kind for n in loaded.graph_for(x.numpy()).nodes]
