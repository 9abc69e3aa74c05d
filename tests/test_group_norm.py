"""``aten::group_norm`` lowered to a row reduction over its input seen as rows of groups
(``passes/decompose_norms.py``), and the row plan's ``block`` inputs that make its per-channel
weight one kernel with it: broadcast within the row, constant over the row's last dims.  The
fused kernel runs (strict mode, the executor's counters), gives the op's answer (the
interpreter's float64 ``aten::group_norm``; PyTorch where installed) and raises the op's own
errors.
"""
import numpy as np
import pytest
from test_cuda_rows import emulated_cuda, needs_gxx, run_compiled  # noqa: F401 (fixture)
from test_fused_reductions import close, interpreted
from test_norm_lowering import rng_data, run_strict

import torchlike as tl
from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.fuser import executor
from torchlike.ir import parse_graph
from torchlike.passes.decompose_norms import decompose_norms

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.usefixtures("kernel_cache")]

# nn.GroupNorm(G, C) then SiLU, as torch.jit.trace prints it (a U-Net's block), types unknown
GROUP_NORM_SILU = """graph(%x : Tensor,
      %w : Tensor,
      %b : Tensor):
  %3 : int = prim::Constant[value=GROUPS]() # torch/nn/functional.py:3042:0
  %4 : float = prim::Constant[value=1.0000000000000001e-05]() # torch/nn/functional.py:3042:0
  %5 : bool = prim::Constant[value=1]() # torch/nn/functional.py:3042:0
  %y : Tensor = aten::group_norm(%x, %3, %w, %b, %4, %5) # torch/nn/functional.py:3042:0
  %z : Tensor = aten::silu(%y) # f.py:4:0
  return (%z)
"""


def gn_graph(groups):
    return parse_graph(GROUP_NORM_SILU.replace("GROUPS", str(groups)))


def kinds(graph):
    return [n.kind for n in graph.nodes if n.kind != "prim::Constant"]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape,groups", [((2, 6, 5, 7), 3), ((4, 8), 2), ((2, 6, 3, 4, 5), 6),
                                          ((3, 32, 9, 9), 1), ((2, 64, 30, 30), 32),
                                          ((0, 4, 3), 2), ((2, 4, 0), 2)])
def test_group_norm_and_its_activation_are_one_row_kernel(strict_cpu, shape, groups, dtype):
    graph = gn_graph(groups)
    fused = jit.fuse(graph)
    assert kinds(fused) == ["torchlike::group_norm_rows", "torchlike::group_norm_param",
                            "torchlike::group_norm_param", "prim::FusionGroup",
                            "aten::reshape_as"], fused
    inside = [n.kind for n in fused.nodes[-2].attrs["Subgraph"].nodes]
    assert "aten::mean" in inside and "aten::silu" in inside, inside
    args = [rng_data(shape, dtype, 1), rng_data(shape[1:2], dtype, 2),
            rng_data(shape[1:2], dtype, 3)]
    got, kernels = run_strict(fused, *args)
    assert kernels == 1
    close(got[0], interpreted(graph, *args)[0], dtype, f"{shape} {groups} {dtype}")


def test_float16_input_with_float32_parameters(strict_cpu):
    graph = gn_graph(2)
    args = [rng_data((3, 4, 10), "float16"), rng_data((4,), "float32", 1),
            rng_data((4,), "float32", 2)]
    got, kernels = run_strict(jit.fuse(graph), *args)
    assert kernels == 1 and got[0].dtype == np.float16  # PyTorch's: the input's dtype
    close(got[0], interpreted(graph, *args)[0], "float16")


def test_without_affine_parameters(strict_cpu):
    text = GROUP_NORM_SILU.replace("aten::group_norm(%x, %3, %w, %b,",
                                   "aten::group_norm(%x, %3, %n, %n,").replace(
        "  %5 : bool", "  %n : NoneType = prim::Constant()\n  %5 : bool")
    graph = parse_graph(text.replace("GROUPS", "4"))
    fused = jit.fuse(graph)
    assert "torchlike::group_norm_param" not in kinds(fused)
    args = [rng_data((2, 8, 6, 6), "float32"), rng_data((8,), "float32"),
            rng_data((8,), "float32")]
    got, kernels = run_strict(fused, *args)
    assert kernels == 1
    close(got[0], interpreted(graph, *args)[0], "float32")


# -- the op's own errors ----------------------------------------------------------------------

@pytest.mark.parametrize("fused", [False, True])
def test_bad_calls_raise_the_ops_errors(fused):
    graph = gn_graph(2)
    run = (lambda *a: jit.run(jit.fuse(graph), *a)) if fused else \
        (lambda *a: jit.run(graph, *a))
    x, w = rng_data((2, 4, 5), "float32"), rng_data((4,), "float32")
    cases = [
        ((rng_data((2, 5, 5), "float32"), rng_data((5,), "float32"), rng_data((5,), "float32")),
         "Expected number of channels in input to be divisible by num_groups, but got input "
         "of shape [2, 5, 5] and num_groups=2"),
        ((x, rng_data((3,), "float32"), w),
         "Expected weight to be a vector of size equal to the number of channels in input, "
         "but got weight of shape [3] and input of shape [2, 4, 5]"),
        ((x, w, rng_data((2, 2), "float32")), "bias of shape [2, 2]"),
        ((x.astype(np.int32), w, w), "\"GroupNormKernelImpl\" not implemented for 'Int'"),
        ((x, w, w.astype(np.float64)), "mixed dtype (CPU)"),
        ((rng_data((4,), "float32"), w, w), "Dimension out of range"),
    ]
    for args, message in cases:
        with pytest.raises(ExecutionError) as info:
            run(*args)
        assert message in str(info.value), str(info.value)
        assert "torch/nn/functional.py:3042:0" in str(info.value)  # the op's source line


def test_zero_groups_is_the_ops_error():
    with pytest.raises(ExecutionError, match="Expected num groups to be greater than 0, got 0"):
        jit.run(jit.fuse(gn_graph(0)), rng_data((2, 4, 5), "float32"),
                rng_data((4,), "float32"), rng_data((4,), "float32"))


def test_optional_weight_is_not_lowered():
    graph = parse_graph(GROUP_NORM_SILU.replace("%w : Tensor,", "%w : Tensor?,")
                        .replace("GROUPS", "2"))
    assert decompose_norms(graph) == 0
    assert decompose_norms(gn_graph(2)) == 1


# -- what follows the view back ---------------------------------------------------------------

def test_only_consumers_without_other_tensors_move_before_the_view(strict_cpu):
    """``silu(gn(x)) * 2 + x``: the activation and the scale join the row kernel; the residual
    add, whose other operand is a tensor of the input's shape, stays after the view back."""
    text = GROUP_NORM_SILU.replace("  return (%z)", """  %s : int = prim::Constant[value=2]()
  %m : Tensor = aten::mul(%z, %s)
  %one : int = prim::Constant[value=1]()
  %r : Tensor = aten::add(%m, %x, %one)
  return (%r)""")
    graph = parse_graph(text.replace("GROUPS", "2"))
    fused = jit.fuse(graph)
    assert kinds(fused)[-3:] == ["prim::FusionGroup", "aten::reshape_as", "prim::FusionGroup"]
    row = [n.kind for n in fused.nodes if n.kind == "prim::FusionGroup"][0]
    assert row
    first = [n for n in fused.nodes if n.kind == "prim::FusionGroup"][0].attrs["Subgraph"]
    assert {"aten::silu", "aten::mul"} <= {n.kind for n in first.nodes}
    args = [rng_data((3, 4, 7, 7), "float32"), rng_data((4,), "float32", 1),
            rng_data((4,), "float32", 2)]
    got, kernels = run_strict(fused, *args)
    assert kernels == 2
    close(got[0], interpreted(graph, *args)[0], "float32")


# -- block inputs of a row kernel -------------------------------------------------------------

# A layer norm over (C, H, W) written from its parts, with a per-channel weight (C, 1, 1) and a
# per-sample-and-channel bias (N, C, 1, 1): both broadcast within the row
BLOCK_PARTS = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %dims : int[] = prim::Constant[value=[-3, -2, -1]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %eps : float = prim::Constant[value=1e-5]()
  %m : Tensor = aten::mean(%x, %dims, %t, %none)
  %v : Tensor = aten::var(%x, %dims, %f, %t)
  %d : Tensor = aten::sub(%x, %m, %one)
  %ve : Tensor = aten::add(%v, %eps, %one)
  %r : Tensor = aten::rsqrt(%ve)
  %y0 : Tensor = aten::mul(%d, %r)
  %y1 : Tensor = aten::mul(%y0, %w)
  %y : Tensor = aten::add(%y1, %b, %one)
  return (%y)"""


def block_args(n=4, c=6, h=5, w=7):
    return [rng_data((n, c, h, w), "float32"), rng_data((c, 1, 1), "float32", 1),
            rng_data((n, c, 1, 1), "float32", 2)]


def test_inputs_broadcast_within_the_row_are_one_kernel(strict_cpu):
    graph = parse_graph(BLOCK_PARTS)
    fused = jit.fuse(graph)
    for shape in [(4, 6, 5, 7), (3, 2, 1, 9), (1, 5, 3, 3)]:
        args = block_args(*shape)
        got, kernels = run_strict(fused, *args)
        assert kernels == 1
        x = args[0].astype(np.float64)
        mean, var = x.mean(axis=(1, 2, 3), keepdims=True), x.var(axis=(1, 2, 3), keepdims=True)
        want = ((x - mean) / np.sqrt(var + 1e-5) * args[1] + args[2]).astype(np.float32)
        close(got[0], want, "float32", str(shape))


@needs_gxx
def test_block_inputs_run_in_one_cuda_row_kernel(emulated_cuda):  # noqa: F811
    """The CUDA row kernel reads a block input at ``oc + j / bi`` (its row's offset, the
    elements sharing one value): the group norm and the layer norm with per-channel
    parameters are one kernel each, with the CPU's answer (both entries, vectorized or not)."""
    for graph, args in ((parse_graph(BLOCK_PARTS), block_args()),
                        (parse_graph(BLOCK_PARTS), block_args(2, 3, 4, 8)),
                        (gn_graph(4), [rng_data((3, 8, 5, 6), "float32"),
                                       rng_data((8,), "float32", 1),
                                       rng_data((8,), "float32", 2)]),
                        (gn_graph(2), [rng_data((2, 4, 40, 40), "float32"),
                                       rng_data((4,), "float32", 1),
                                       rng_data((4,), "float32", 2)])):
        got = run_compiled(jit.fuse(graph), *args)
        close(got[0], interpreted(graph, *args)[0], "float32", emulated_cuda)
    # the U-Net ResBlock: a producer and a residual moved across the view (group_rows.py)
    for t_shape in ((2, 8, 1, 1), (2, 1, 1, 1), (1, 8, 5, 5)):
        args = _resblock_args(np.random.default_rng(4), t_shape)
        fused = jit.trace(resblock, args).graph_for(*args)
        got = run_compiled(fused, *args)
        close(got[0], interpreted(fused, *args)[0], "float32", f"{emulated_cuda} {t_shape}")


# -- against PyTorch -----------------------------------------------------------------------------

def test_scripted_and_traced_group_norm_match_pytorch(torch, strict_cpu):
    F = torch.nn.functional

    def unet_block(x, w, b):
        return F.silu(F.group_norm(x, 4, w, b) + 1)

    def plain(x, w, b):
        return F.group_norm(x, 2, eps=1e-3) * 2

    for fn in (unet_block, plain):
        for capture in ("script", "trace"):
            args = (torch.randn(3, 8, 5, 6), torch.randn(8), torch.randn(8))
            f = torch.jit.script(fn) if capture == "script" else torch.jit.trace(fn, args)
            fused = jit.fuse(parse_graph(str(f.graph)))
            assert "aten::group_norm" not in kinds(fused)
            assert kinds(fused).count("prim::FusionGroup") == 1, fused
            got, kernels = run_strict(fused, *[a.numpy() for a in args])
            assert kernels == 1
            close(got[0], fn(*args).numpy(), "float32", f"{fn.__name__} {capture}")


def run_saved(torch, m, x, tmp_path):
    """``m`` scripted, saved by PyTorch, loaded by ``jit.load`` and called on ``x`` with fresh
    kernel caches and counters: (its output, the loaded module)."""
    torch.jit.save(torch.jit.script(m), str(tmp_path / "m.pt"))
    loaded = jit.load(str(tmp_path / "m.pt"))
    executor.clear_caches()
    jit.reset_stats()
    return loaded(x.numpy()), loaded


def test_group_norm_module_matches_pytorch(torch, strict_cpu, tmp_path):
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.GroupNorm(4, 8),
                            torch.nn.SiLU()).eval()
    x = torch.randn(2, 3, 12, 12)
    got, _ = run_saved(torch, m, x, tmp_path)
    assert jit.stats()["fallbacks"] == {} and jit.stats()["cache_misses"] == 1
    close(got, m(x).detach().numpy(), "float32")


# -- instance norm: the group norm of C groups -------------------------------------------------

# F.instance_norm(x, weight=w, bias=b) then relu, as torch.jit.trace prints it
INSTANCE_NORM_RELU = """graph(%x : Tensor,
      %w : Tensor,
      %b : Tensor):
  %3 : NoneType = prim::Constant()
  %4 : bool = prim::Constant[value=1]() # torch/nn/functional.py:2940:0
  %5 : float = prim::Constant[value=0.10000000000000001]() # torch/nn/functional.py:2940:0
  %6 : float = prim::Constant[value=1.0000000000000001e-05]() # torch/nn/functional.py:2940:0
  %y : Tensor = aten::instance_norm(%x, %w, %b, %3, %3, %4, %5, %6, %4) # torch/nn/functional.py:2940:0
  %z : Tensor = aten::relu(%y) # f.py:4:0
  return (%z)
"""


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("shape", [(2, 6, 5, 7), (3, 4, 10), (2, 3, 2, 3, 4), (1, 16, 1, 1)])
def test_instance_norm_is_one_row_kernel(strict_cpu, shape, dtype):
    graph = parse_graph(INSTANCE_NORM_RELU)
    fused = jit.fuse(graph)
    assert "aten::instance_norm" not in kinds(fused)
    assert kinds(fused).count("prim::FusionGroup") == 1, fused
    args = [rng_data(shape, dtype, 1), rng_data(shape[1:2], dtype, 2),
            rng_data(shape[1:2], dtype, 3)]
    got, kernels = run_strict(fused, *args)
    assert kernels == 1
    close(got[0], interpreted(graph, *args)[0], dtype, f"{shape} {dtype}")


@pytest.mark.parametrize("fused", [False, True])
def test_instance_norm_errors_are_the_ops(fused):
    graph = parse_graph(INSTANCE_NORM_RELU)
    run = (lambda *a: jit.run(jit.fuse(graph), *a)) if fused else \
        (lambda *a: jit.run(graph, *a))
    x, w = rng_data((2, 4, 5), "float32"), rng_data((4,), "float32")
    cases = [((x, rng_data((3,), "float32"), w), "weight should contain 8 elements not 6"),
             ((x.astype(np.int32), w, w), "\"batch_norm\" not implemented for 'Int'"),
             ((rng_data((4,), "float32"), w, w), "Dimension out of range")]
    for args, message in cases:
        with pytest.raises(ExecutionError) as info:
            run(*args)
        assert message in str(info.value), str(info.value)


def test_instance_norm_with_running_statistics_stays_the_op():
    tracked = INSTANCE_NORM_RELU.replace("%3, %3, %4, %5", "%w, %b, %4, %5")
    assert decompose_norms(parse_graph(tracked)) == 0
    assert decompose_norms(parse_graph(INSTANCE_NORM_RELU)) == 1


def test_instance_norm_module_matches_pytorch(torch, strict_cpu, tmp_path):
    m = torch.nn.Sequential(torch.nn.Conv2d(3, 8, 3), torch.nn.InstanceNorm2d(8, affine=True),
                            torch.nn.ReLU()).eval()
    with torch.no_grad():
        m[1].weight.normal_()
        m[1].bias.normal_()
    x = torch.randn(2, 3, 12, 12)
    got, loaded = run_saved(torch, m, x, tmp_path)
    assert jit.stats()["fallbacks"] == {} and jit.stats()["cache_misses"] >= 1
    close(got, m(x).detach().numpy(), "float32")
    assert not any(n.kind == "aten::instance_norm" for n in loaded.graph_for(x.numpy()).all_nodes())


# -- elementwise work moved across the view (passes/group_rows.py) -----------------------------

def resblock(x, t, w, b, r):
    """A diffusion U-Net's ResBlock around its second group norm: the time embedding added per
    sample and channel, the norm, SiLU, a residual of the input's shape."""
    return tl.silu(tl.group_norm(x + t, 4, w, b)) * 0.5 + r


def torch_resblock(F, x, t, w, b, r):
    return F.silu(F.group_norm(x + t, 4, w, b)) * 0.5 + r


def _resblock_args(rng, t_shape, n=2, c=8, h=5):
    return [rng.standard_normal(s, dtype=np.float32)
            for s in ((n, c, h, h), t_shape, (c,), (c,), (n, c, h, h))]


@pytest.mark.parametrize("t_shape", [(2, 8, 1, 1), (1, 8, 1, 1), (2, 1, 1, 1), (2, 8, 5, 5),
                                     (1, 8, 5, 5), ()])
def test_producers_and_consumers_join_the_row_kernel(torch, strict_cpu, t_shape):
    """``GroupNorm(h + temb)``'s add, and the SiLU, scale and residual add after it: one kernel,
    PyTorch's answer, scripted and traced."""
    F = torch.nn.functional
    args = _resblock_args(np.random.default_rng(3), t_shape)
    want = torch_resblock(F, *map(torch.from_numpy, args)).numpy()
    for capture in ("script", "trace"):
        fn = jit.script(resblock) if capture == "script" else jit.trace(resblock, args)
        executor.clear_caches()
        jit.reset_stats()
        got = fn(*args)
        s = jit.stats()
        assert s["fallbacks"] == {} and s["groups_split"] == 0, s
        assert s["cache_hits"] + s["cache_misses"] == 1, (capture, s)
        groups = [n for n in fn.graph_for(*args).all_nodes() if n.kind == "prim::FusionGroup"]
        assert len(groups) == 1
        close(got, want, "float32", f"{t_shape} {capture}")


def test_what_cannot_move_stays_and_gives_the_same_answer(torch, strict_cpu):
    """The producer's result used again (a residual of ``h`` itself), operands that broadcast
    in a way the rows cannot (over W only; over the channels, full over H*W), an integer
    operand: the work stays on its side of the view, as kernels of its own, with PyTorch's
    answer."""
    F = torch.nn.functional

    def reused(m, x, t, w, b):
        h = x + t
        return F.group_norm(h, 2, w, b) + h if m is torch else m.group_norm(h, 2, w, b) + h

    def trailing(m, x, t, w, b):
        g = (F if m is torch else m).group_norm(x, 2, w, b)
        return g * t[..., :1, :]

    def integer(m, x, t, w, b):
        i = (t * 4).int() if m is torch else (t * 4).astype(np.int32)
        return (F if m is torch else m).group_norm(x * 2 + i, 2, w, b)

    def channel_shared(m, x, t, w, b):   # (N, 1, H, W): shared by a group's channels
        return (F if m is torch else m).group_norm(x + t, 2, w, b)

    rng = np.random.default_rng(5)
    for fn, t_shape, one_kernel in ((reused, (2, 4, 3, 3), False),
                                    (trailing, (2, 4, 3, 3), False),
                                    (channel_shared, (2, 1, 3, 3), False),
                                    (integer, (2, 4, 3, 3), True)):
        args = [rng.standard_normal(s, dtype=np.float32)
                for s in ((2, 4, 3, 3), t_shape, (4,), (4,))]
        want = fn(torch, *map(torch.from_numpy, args)).numpy()
        scripted = jit.trace(lambda *a, fn=fn: fn(tl, *a), args)
        executor.clear_caches()
        jit.reset_stats()
        got = scripted(*args)
        s = jit.stats()
        assert s["fallbacks"] == {} and s["groups_split"] == 0, s
        assert (s["cache_hits"] + s["cache_misses"] == 1) == one_kernel, (fn.__name__, s)
        close(got, want, "float32", fn.__name__)


def test_the_ops_errors_survive_the_move():
    """The checks stay with an operand of the input's shape: a weight of the wrong size is the
    op's error, interpreted or fused."""
    x, t = np.ones((2, 6, 3, 3), np.float32), np.ones((2, 6, 1, 1), np.float32)
    fn = jit.trace(lambda x, t, w: tl.silu(tl.group_norm(x + t, 3, w)),
                   [x, t, np.ones(6, np.float32)])
    with pytest.raises(ExecutionError, match="Expected weight to be a vector of size equal"):
        fn(x, t, np.ones(5, np.float32))
