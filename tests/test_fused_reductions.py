"""Row reductions fused into CPU kernels (``fuser.row_reduce``, ``cpu_backend.row_codegen``).

Each compiled-path test fuses a graph, checks that the reductions are inside a fusion group,
runs it through the executor in strict mode with backend ``cpu`` (a fallback would raise) and
checks the counters: every group that ran was a compiled kernel, none was split.  Answers are
compared with the interpreter (always) and with PyTorch where it is installed.
"""
import numpy as np
import pytest
from corpus_utils import assert_matches, graph_text, input_sets

from torchlike import jit
from torchlike.fuser import executor
from torchlike.fuser.partition import fuse
from torchlike.fuser.row_reduce import ROW_REDUCTIONS
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

# PyTorch warns about rows shorter than a var/std correction, and that jit.script is deprecated
pytestmark = [pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning"),
              pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning"),
              pytest.mark.usefixtures("kernel_cache")]


# -- graphs --------------------------------------------------------------------------------------

def reduction_graph(kind: str, dim=-1, keepdim=True, pre: str = "", post: str = "",
                    correction=("int", 1)) -> str:
    """``%y = <pre>(%x)``, reduced by ``kind``, then ``post`` applied to the result."""
    dims = dim if isinstance(dim, list) else [dim]
    lines = ["graph(%x : Tensor):",
             "  %none : NoneType = prim::Constant()",
             f"  %keep : bool = prim::Constant[value={int(keepdim)}]()",
             "  %one : int = prim::Constant[value=1]()",
             "  %half : float = prim::Constant[value=0.5]()"]
    lines += [f"  %d{i} : int = prim::Constant[value={d}]()" for i, d in enumerate(dims)]
    lines.append(f"  %dims : int[] = prim::ListConstruct({', '.join(f'%d{i}' for i in range(len(dims)))})")
    src = "%x"
    if pre == "mul":
        lines.append("  %p : Tensor = aten::mul(%x, %half)")
        src = "%p"
    if kind in ("aten::sum", "aten::mean"):
        lines.append(f"  %r : Tensor = {kind}({src}, %dims, %keep, %none)")
    elif kind in ("aten::amax", "aten::amin", "aten::logsumexp"):
        lines.append(f"  %r : Tensor = {kind}({src}, %dims, %keep)")
    elif kind in ("aten::var", "aten::std"):
        lines.append(f"  %c : {correction[0]} = prim::Constant[value={correction[1]}]()")
        lines.append(f"  %r : Tensor = {kind}({src}, %dims, %c, %keep)")
    else:
        lines.append(f"  %r : Tensor = {kind}({src}, %d0, %none)")
    out = "%r"
    if post == "sub":  # the epilogue broadcasts the reduced value back over the row
        lines.append("  %q : Tensor = aten::sub(%x, %r, %one)")
        out = "%q"
    elif post == "exp":
        lines.append("  %q : Tensor = aten::exp(%r)")
        out = "%q"
    lines.append(f"  return ({out})")
    return "\n".join(lines)


SOFTMAX_MANUAL = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %keep : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%m1)
  %m : Tensor = aten::amax(%x, %dims, %keep)
  %s : Tensor = aten::sub(%x, %m, %one)
  %e : Tensor = aten::exp(%s)
  %t : Tensor = aten::sum(%e, %dims, %keep, %none)
  %y : Tensor = aten::div(%e, %t)
  return (%y)"""

RMS_NORM = """graph(%x : Tensor, %w : Tensor):
  %none : NoneType = prim::Constant()
  %keep : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %eps : float = prim::Constant[value=1e-06]()
  %m1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%m1)
  %sq : Tensor = aten::pow(%x, %two)
  %ms : Tensor = aten::mean(%sq, %dims, %keep, %none)
  %a : Tensor = aten::add(%ms, %eps, %one)
  %r : Tensor = aten::rsqrt(%a)
  %y : Tensor = aten::mul(%x, %r)
  %z : Tensor = aten::mul(%y, %w)
  return (%z)"""

# mean and biased variance by hand, the variance also returned (a per-row output)
LAYER_NORM_STATS = """graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %none : NoneType = prim::Constant()
  %keep : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %eps : float = prim::Constant[value=1e-05]()
  %m1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%m1)
  %mean : Tensor = aten::mean(%x, %dims, %keep, %none)
  %xc : Tensor = aten::sub(%x, %mean, %one)
  %sq : Tensor = aten::mul(%xc, %xc)
  %var : Tensor = aten::mean(%sq, %dims, %keep, %none)
  %ve : Tensor = aten::add(%var, %eps, %one)
  %sd : Tensor = aten::sqrt(%ve)
  %n : Tensor = aten::div(%xc, %sd)
  %y : Tensor = aten::mul(%n, %w)
  %z : Tensor = aten::add(%y, %b, %one)
  return (%z, %var)"""


# -- helpers -------------------------------------------------------------------------------------

def reductions_inside(fused) -> None:
    """Every reduction of ``fused`` is inside a fusion group."""
    outside = [n.kind for n in fused.nodes if n.kind in ROW_REDUCTIONS]
    assert not outside, f"reductions left outside the groups: {outside}\n{fused}"
    inside = [n.kind for g in fused.all_nodes() if g.kind == "prim::FusionGroup"
              for n in g.attrs["Subgraph"].nodes if n.kind in ROW_REDUCTIONS]
    assert inside, f"no reduction in a fusion group\n{fused}"


def run_compiled(fused, *args):
    """The fused graph in strict mode on the cpu backend; every group ran as a kernel."""
    launches = []

    def counting(node, xp, a):
        launches.append(node)
        return executor.run_fusion_group(node, xp, a)

    executor.clear_caches()
    jit.reset_stats()
    with np.errstate(all="ignore"):
        out = Interpreter(fused, fusion_runner=counting).run(*args)
    s = jit.stats()
    assert s["fallbacks"] == {} and s["groups_split"] == 0, s
    assert launches and s["cache_hits"] + s["cache_misses"] == len(launches), s
    assert s["kernels_compiled"] + s["disk_hits"] == s["cache_misses"], s
    return out if isinstance(out, tuple) else (out,)


def interpreted(graph, *args):
    with np.errstate(all="ignore"):
        out = Interpreter(graph).run(*args)
    return out if isinstance(out, tuple) else (out,)


TOL = {"float16": dict(rtol=2e-3, atol=2e-3), "float32": dict(rtol=2e-5, atol=4e-6),
       "float64": dict(rtol=1e-12, atol=1e-13)}


def close(got, want, dtype, label=""):
    """Within float rounding: relative, and absolute relative to the largest finite value (a
    row's sum minus an element cancels; its rounding is the sum's)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (label, got.dtype, want.dtype,
                                                                got.shape, want.shape)
    finite = np.abs(want[np.isfinite(want)]).astype(np.float64)
    scale = max(1.0, float(finite.max())) if finite.size else 1.0
    tol = TOL[dtype]
    np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), equal_nan=True,
                               err_msg=label, rtol=tol["rtol"], atol=tol["atol"] * scale)


def data(shape, dtype, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype) * 3


def special_rows(shape):
    """float32 ``data`` whose rows hold NaN, all -inf, an inf, all inf, a -inf, and (from the
    sixth row on) a NaN and an inf side by side at the end of the row."""
    x = data(shape, "float32")
    x[0, 3] = np.nan
    x[1, :] = -np.inf
    x[2, 4] = np.inf
    x[3, :] = np.inf
    x[4, 2] = -np.inf
    if shape[0] > 5:
        x[5, -3], x[5, -2] = np.nan, np.inf
    return x


SHAPES = [(5, 7), (3, 64), (2, 1000), (4, 1), (1, 7), (300, 300)]  # the last one is parallel


# -- the partitioner -----------------------------------------------------------------------------

def test_partition_pulls_producers_and_epilogue_in():
    fused = fuse(parse_graph(SOFTMAX_MANUAL))
    (group,) = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    kinds = [n.kind for n in group.attrs["Subgraph"].nodes if n.kind != "prim::Constant"]
    assert kinds == ["aten::amax", "aten::sub", "aten::exp", "aten::sum", "aten::div"]
    assert [n.kind for n in fused.nodes] == ["prim::FusionGroup"]  # dim lists folded in


def test_partition_takes_other_dims_and_full_reductions():
    """Any constant dims fuse (the layout is decided at run time: rows, columns, or a split);
    the reduction stays out with ``reductions=False`` and for a dtype= argument."""
    for dim in (0, 1, -2, [0, 1]):
        reductions_inside(fuse(parse_graph(reduction_graph("aten::sum", dim=dim, pre="mul"))))
    reductions_inside(fuse(parse_graph(reduction_graph("aten::softmax", dim=-2))))
    fused = fuse(parse_graph(reduction_graph("aten::amax", dim=[-2, -1], pre="mul")))
    reductions_inside(fused)  # the last two dims: a row of both
    fused = fuse(parse_graph(reduction_graph("aten::sum", pre="mul")), reductions=False)
    assert "aten::sum" in [n.kind for n in fused.nodes]
    text = reduction_graph("aten::sum", pre="mul").replace(
        "%keep, %none)", "%keep, %dt)").replace(
        "  %half", "  %dt : int = prim::Constant[value=7]()\n  %half")
    assert "aten::sum" in [n.kind for n in fuse(parse_graph(text)).nodes]


# -- each reduction, compiled, against the interpreter --------------------------------------------

@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("kind,keepdim,post", [
    ("aten::sum", True, "sub"), ("aten::mean", False, "exp"), ("aten::amax", True, "sub"),
    ("aten::amin", False, ""), ("aten::softmax", True, ""), ("aten::log_softmax", True, ""),
    ("aten::var", True, "sub"), ("aten::std", False, ""), ("aten::logsumexp", True, "sub")])
def test_reduction_matches_interpreter(strict_cpu, kind, keepdim, post, dtype):
    graph = parse_graph(reduction_graph(kind, keepdim=keepdim, pre="mul", post=post))
    fused = fuse(graph)
    reductions_inside(fused)
    for shape in SHAPES:
        x = data(shape, dtype)
        (got,), (want,) = run_compiled(fused, x), interpreted(graph, x)
        close(got, want, dtype, f"{kind} {shape}")


@pytest.mark.parametrize("kind", ["aten::sum", "aten::amax", "aten::softmax",
                                  "aten::log_softmax"])
def test_float16_accumulates_in_float32(strict_cpu, kind):
    graph = parse_graph(reduction_graph(kind))
    fused = fuse(graph)
    reductions_inside(fused)
    for shape in [(3, 7), (2, 1000)]:
        x = data(shape, "float16")
        (got,), (want,) = run_compiled(fused, x), interpreted(graph, x)
        close(got, want, "float16", f"{kind} {shape}")


def test_special_values_propagate_as_pytorch(strict_cpu):
    x = special_rows((6, 9))
    for kind in ("aten::amax", "aten::amin", "aten::softmax", "aten::log_softmax",
                 "aten::sum", "aten::mean", "aten::logsumexp", "aten::var"):
        graph = parse_graph(reduction_graph(kind))
        (got,), (want,) = run_compiled(fuse(graph), x), interpreted(graph, x)
        close(got, want, "float32", kind)
    amax = np.asarray(run_compiled(fuse(parse_graph(reduction_graph("aten::amax"))), x)[0])
    assert np.isnan(amax[0, 0]) and amax[1, 0] == -np.inf and amax[2, 0] == np.inf


def test_two_trailing_dims_and_three_d(strict_cpu):
    graph = parse_graph(reduction_graph("aten::mean", dim=[-2, -1], keepdim=True, post="sub"))
    fused = fuse(graph)
    reductions_inside(fused)
    x = data((4, 5, 6), "float32")
    (got,), (want,) = run_compiled(fused, x), interpreted(graph, x)
    close(got, want, "float32")
    graph = parse_graph(reduction_graph("aten::softmax"))
    x = data((2, 3, 17), "float64")
    (got,), (want,) = run_compiled(fuse(graph), x), interpreted(graph, x)
    close(got, want, "float64")


def test_composites_layer_norm_rms_norm_softmax(strict_cpu):
    rng = np.random.default_rng(3)
    for text, n_in in ((SOFTMAX_MANUAL, 1), (RMS_NORM, 2), (LAYER_NORM_STATS, 3)):
        graph = parse_graph(text)
        fused = fuse(graph)
        reductions_inside(fused)
        assert len([n for n in fused.nodes if n.kind == "prim::FusionGroup"]) == 1, fused
        for shape in [(8, 33), (64, 1024)]:
            args = [data(shape, "float32")] + [
                rng.standard_normal(shape[-1:]).astype(np.float32) for _ in range(n_in - 1)]
            got, want = run_compiled(fused, *args), interpreted(graph, *args)
            for g, w in zip(got, want, strict=True):
                close(g, w, "float32", text.splitlines()[-1])


@pytest.mark.parametrize("row", [64, 4096, 4097, 9000])
def test_row_sums_in_the_filling_loop_and_blocked(strict_cpu, row):
    """Rows of one sum block (<= 4096) sum a buffer in the loop that fills it; longer rows sum
    it block by block after the loop: both branches of the kernel give the interpreter's
    answer (softmax's sum of exp, layer norm's squared deviations, logsumexp, log_softmax)."""
    rng = np.random.default_rng(row)
    graphs = [(SOFTMAX_MANUAL, 1), (LAYER_NORM_STATS, 3), (reduction_graph("aten::logsumexp"), 1),
              (reduction_graph("aten::log_softmax"), 1)]
    for text, n_in in graphs:
        graph = parse_graph(text)
        fused = fuse(graph)
        reductions_inside(fused)
        args = [data((3, row), "float32")] + [
            rng.standard_normal(row).astype(np.float32) for _ in range(n_in - 1)]
        for g, w in zip(run_compiled(fused, *args), interpreted(graph, *args), strict=True):
            close(g, w, "float32", f"{text.splitlines()[-1]} rows of {row}")


ROW_STATS = """graph(%x : Tensor):
  %none : NoneType = prim::Constant()
  %keep : bool = prim::Constant[value=0]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%m1)
  %l : Tensor = aten::logsumexp(%x, %dims, %keep)
  %v : Tensor = aten::std(%x, %dims, %one, %keep)
  %mx : Tensor, %ix : Tensor = aten::max(%x, %m1, %keep)
  %sq : Tensor = aten::sqrt(%v)
  %y : Tensor = aten::add(%l, %sq, %one)
  %half : float = prim::Constant[value=0.5]()
  %pos : Tensor = aten::gt(%mx, %half)
  %z : Tensor = aten::where(%pos, %y, %l)
  return (%z, %mx, %ix, %pos)"""


@pytest.mark.parametrize("rows,row", [(700, 64), (40, 1000), (3, 5)])
def test_per_row_outputs_finish_in_lockstep(strict_cpu, rows, row):
    """A group whose outputs are all per row finishes its rows in lockstep: the passes row by
    row, then the finishing arithmetic (log, sqrt, ...) in one loop over the chunk's rows, the
    variables it reads (float32, float64 totals, int64 indices, bool) kept per chunk in their
    own dtype.  Several parallel chunks, rows of -inf, +inf and NaN: the interpreter's answer."""
    graph = parse_graph(ROW_STATS)
    fused = fuse(graph)
    reductions_inside(fused)
    x = data((rows, row), "float32")
    x[1, :] = -np.inf
    x[2, 0] = np.inf
    if rows > 3:
        x[3, row // 2] = np.nan
    got = run_compiled(fused, x)
    for g, w in zip(got, interpreted(graph, x), strict=True):
        if g.dtype.kind == "f":
            close(g, w, "float32", f"{rows}x{row}")
        else:
            np.testing.assert_array_equal(g, w)
    (src,) = jit.codegen(fused, x)  # this group's kernel, not another test's in the cache
    assert "for r in range(ra, rb):" in src.source and "s_t_" in src.source, src.source


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_softmax_scales_by_the_reciprocal_over_the_last_dim(strict_cpu, dtype):
    """PyTorch's CPU softmax multiplies exp(x - max) by 1 / sum over the last dim (its lastdim
    kernel) and divides by the sum over any other: the interpreter and the kernels do the
    same (the two differ in the last bit for some elements of these rows)."""
    x = data((64, 37), dtype)
    e = np.exp(x - x.max(-1, keepdims=True))
    s = e.sum(-1, keepdims=True)
    assert not np.array_equal(e * (1 / s), e / s)  # the rows tell the two apart
    for dim in (-1, 0):
        text = reduction_graph("aten::softmax", dim=dim)
        want = interpreted(parse_graph(text), x)[0]
        ee = np.exp(x - x.max(dim, keepdims=True))
        ss = ee.sum(dim, keepdims=True)
        np.testing.assert_array_equal(want, ee * (1 / ss) if dim == -1 else ee / ss)
        fused = fuse(parse_graph(text))
        reductions_inside(fused)
        close(run_compiled(fused, x)[0], want, dtype, f"dim {dim}")
        (src,) = jit.codegen(fused, x)
        assert ("* z0" in src.source) == (dim == -1), src.source


def test_corpus_layernorm_manual_one_kernel(strict_cpu):
    for which in ("scripted", "traced"):
        fused = jit.fuse(parse_graph(graph_text("layernorm_manual", which)))
        reductions_inside(fused)
        for label, args, expected in input_sets("layernorm_manual"):
            (got,) = run_compiled(fused, *args)
            assert_matches(got, expected["out0"], f"layernorm_manual/{which}/{label}")


# -- what has no kernel runs split, with the same answer -------------------------------------------

def test_unsupported_layouts_split_and_match(strict_cpu):
    graph = parse_graph(reduction_graph("aten::softmax", pre="mul"))
    fused = fuse(graph)
    for x in (data((7, 9), "float32").T, data((3, 4, 5), "float32")[:, :, ::2]):
        executor.clear_caches()
        jit.reset_stats()
        got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
        s = jit.stats()
        assert s["groups_split"] == 1 and s["fallbacks"] == {}, s
        close(got, interpreted(graph, x)[0], "float32")


def test_empty_rows_and_errors_match_interpreter(strict_cpu):
    x = np.zeros((3, 0), np.float32)
    for kind in ("aten::sum", "aten::mean", "aten::softmax"):
        graph = parse_graph(reduction_graph(kind))
        got = Interpreter(fuse(graph), fusion_runner=executor.run_fusion_group).run(x)
        close(got, interpreted(graph, x)[0], "float32", kind)
    graph = parse_graph(reduction_graph("aten::amax"))
    with pytest.raises(RuntimeError, match="amax"):
        Interpreter(fuse(graph), fusion_runner=executor.run_fusion_group).run(x)


# -- against PyTorch -----------------------------------------------------------------------------

TORCH_FNS = {
    "aten::sum": lambda t, x, k: t.sum(x, -1, keepdim=k),
    "aten::mean": lambda t, x, k: t.mean(x, -1, keepdim=k),
    "aten::amax": lambda t, x, k: t.amax(x, -1, keepdim=k),
    "aten::amin": lambda t, x, k: t.amin(x, -1, keepdim=k),
    "aten::softmax": lambda t, x, k: t.softmax(x, -1),
    "aten::log_softmax": lambda t, x, k: t.log_softmax(x, -1),
    "aten::var": lambda t, x, k: t.var(x, -1, keepdim=k),
    "aten::std": lambda t, x, k: t.std(x, -1, keepdim=k),
    "aten::logsumexp": lambda t, x, k: t.logsumexp(x, -1, keepdim=k),
}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("keepdim", [True, False])
def test_against_pytorch(strict_cpu, torch, dtype, keepdim):
    for kind, fn in TORCH_FNS.items():
        if not keepdim and kind.endswith("softmax"):
            continue
        fused = fuse(parse_graph(reduction_graph(kind, keepdim=keepdim)))
        for shape in [(4, 1), (5, 7), (3, 64), (2, 1000)]:
            x = data(shape, dtype, seed=len(shape) + shape[-1])
            if dtype != "float16":
                x[0, 0] = np.nan if kind != "aten::sum" else x[0, 0]
            (got,) = run_compiled(fused, x)
            want = fn(torch, torch.from_numpy(x), keepdim).numpy()
            close(got, want, dtype, f"{kind} {shape} keepdim={keepdim}")


MAX_DIM = """graph(%x : Tensor):
  %keep : bool = prim::Constant[value={keep}]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %v : Tensor, %i : Tensor = {kind}(%x, %m1, %keep)
  %y : Tensor = aten::sub(%x, %v, %one)
  return ({ret})"""


def test_max_min_values_only(strict_cpu, torch):
    """``x.max(-1)[0]``: values only, fused (NaN propagates as in PyTorch); with its indices
    used too, both come out of the kernel (``test_reduction_accuracy`` checks them)."""
    x = data((6, 33), "float32")
    x[1, 5] = np.nan
    for kind, fn in (("aten::max", torch.max), ("aten::min", torch.min)):
        graph = parse_graph(MAX_DIM.format(kind=kind, keep=1, ret="%y"))
        fused = fuse(graph)
        reductions_inside(fused)
        (got,) = run_compiled(fused, x)
        tx = torch.from_numpy(x)
        close(got, (tx - fn(tx, -1, keepdim=True)[0]).numpy(), "float32", kind)
        close(got, interpreted(graph, x)[0], "float32", kind)
        graph = parse_graph(MAX_DIM.format(kind=kind, keep=1, ret="%y, %i"))
        fused = fuse(graph)
        reductions_inside(fused)
        got = run_compiled(fused, x)
        want = fn(tx, -1, keepdim=True)
        np.testing.assert_array_equal(got[1], want[1].numpy())


def test_var_std_corrections(strict_cpu, torch):
    """``unbiased=False`` (bool), ``correction=0/2`` (int, float); rows shorter than the
    correction give inf or nan, as in PyTorch."""
    for kind in ("aten::var", "aten::std"):
        for correction, tc in ((("bool", 0), 0), (("int", 2), 2), (("float", 1.5), 1.5)):
            fused = fuse(parse_graph(reduction_graph(kind, correction=correction)))
            reductions_inside(fused)
            for shape in [(3, 1), (3, 2), (4, 50)]:
                x = data(shape, "float32")
                (got,) = run_compiled(fused, x)
                fn = torch.var if kind == "aten::var" else torch.std
                want = fn(torch.from_numpy(x), -1, correction=tc, keepdim=True).numpy()
                close(got, want, "float32", f"{kind} {correction} {shape}")


def test_scripted_by_pytorch(strict_cpu, torch):
    """Graphs PyTorch prints for a scripted softmax, log-softmax and RMS norm."""
    def softmax(x):
        return torch.softmax(x * 2.0, -1) + 1.0

    def log_softmax(x):
        return torch.log_softmax(x, dim=-1)

    def rms_norm(x, w):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w

    def centered(x):
        m = x.amax(-1, keepdim=True)
        return (x - m).exp().sum(-1)

    def layer_norm(x, w):
        mean = x.mean(-1, keepdim=True)
        var = x.var(-1, keepdim=True, unbiased=False)
        return (x - mean) / torch.sqrt(var + 1e-5) * w

    def lse(x):
        return torch.logsumexp(x * 0.5, -1, keepdim=True) - x.std(-1, keepdim=True)

    def max_shifted(x):
        return torch.exp(x - x.max(dim=-1, keepdim=True)[0])

    rng = np.random.default_rng(5)
    x = rng.standard_normal((16, 100)).astype(np.float32)
    w = rng.standard_normal(100).astype(np.float32)
    for fn, args in ((softmax, (x,)), (log_softmax, (x,)), (rms_norm, (x, w)), (centered, (x,)),
                     (layer_norm, (x, w)), (lse, (x,)), (max_shifted, (x,))):
        graph = parse_graph(str(torch.jit.script(fn).graph))
        fused = jit.fuse(graph)
        reductions_inside(fused)
        (got,) = run_compiled(fused, *args)
        want = fn(*(torch.from_numpy(a) for a in args)).numpy()
        close(got, want, "float32", fn.__name__)


def test_cuda_backends_refuse_reductions_and_groups_split(monkeypatch):
    """A layout the row plan has no kernel for (a transposed input): the CUDA backends refuse
    the group in ``check``; ``codegen`` lists the kernel of its elementwise part, and the
    executor splits a refused group (shown with the cpu backend refusing it the same way): the
    producer still runs as a kernel, strictly, the softmax interpreted."""
    from differential import backend_missing, emulated_backend, fuser_settings, require

    from torchlike.fuser.backend import analyze, get_backend_impl, signature_of
    graph = parse_graph(reduction_graph("aten::softmax", pre="mul"))
    fused = fuse(graph)
    reductions_inside(fused)
    (group,) = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    x = data((7, 5), "float32").T
    spec = analyze(group.attrs["Subgraph"], signature_of([x]))
    reason = get_backend_impl("cuda").check(spec)
    assert reason.startswith("unsupported non-contiguous input"), reason
    (source,) = jit.codegen(fused, x, backend="cuda")  # the mul's kernel, not the softmax
    assert "__global__" in source.source and "softmax" not in source.source
    require(backend_missing("cuda-emulated"))
    assert emulated_backend().check(spec) == reason

    cpu = type(get_backend_impl("cpu"))
    real_check = cpu.check
    monkeypatch.setattr(cpu, "check", lambda self, spec: reason if spec.reductions
                        else real_check(self, spec))
    with fuser_settings("cpu", strict=True):
        executor.clear_caches()
        jit.reset_stats()
        got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
        s = jit.stats()
    assert s["groups_split"] == 1 and s["fallbacks"] == {}, s
    assert s["cache_misses"] == 1, s  # the mul's group, compiled
    close(got, interpreted(graph, x)[0], "float32")
