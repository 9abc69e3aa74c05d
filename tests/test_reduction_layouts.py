"""Reductions over dims other than the trailing ones (the ``columns`` layout, ``fuser.column_plan``)
and over every dim (``x.sum()``: the row layout with one row), compiled in strict mode on the
cpu backend against PyTorch and the interpreter; layouts without a kernel split with the same
answer.  The helpers are ``test_fused_reductions``'s (every kernel ran, nothing split)."""
import numpy as np
import pytest
from test_fused_reductions import (
    close,
    data,
    interpreted,
    reduction_graph,
    reductions_inside,
    run_compiled,
)

from torchlike import jit
from torchlike.fuser import executor
from torchlike.fuser.partition import fuse
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

pytestmark = [pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning"),
              pytest.mark.filterwarnings("ignore:.*torch.jit.script.*:DeprecationWarning")]


def torch_fn(kind, dim, keepdim):
    import torch
    d = tuple(dim) if isinstance(dim, list) else dim
    return {
        "aten::sum": lambda x: torch.sum(x, d, keepdim=keepdim),
        "aten::mean": lambda x: torch.mean(x, d, keepdim=keepdim),
        "aten::amax": lambda x: torch.amax(x, d, keepdim=keepdim),
        "aten::amin": lambda x: torch.amin(x, d, keepdim=keepdim),
        "aten::var": lambda x: torch.var(x, d, keepdim=keepdim),
        "aten::std": lambda x: torch.std(x, d, keepdim=keepdim),
        "aten::logsumexp": lambda x: torch.logsumexp(x, d, keepdim=keepdim),
        "aten::softmax": lambda x: torch.softmax(x, d),
        "aten::log_softmax": lambda x: torch.log_softmax(x, d),
    }[kind]


KINDS = ["aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::var", "aten::std",
         "aten::logsumexp", "aten::softmax", "aten::log_softmax"]
# (dim as written, shape): a leading dim, a middle one, two leading ones, negative dims
COLUMN_CASES = [(0, (37, 21)), (1, (3, 40, 9)), (-2, (5, 6, 70)), ([0, 1], (4, 9, 11)),
                ([-3, -2], (2, 3, 5, 4)), (0, (300, 300))]  # the last one is parallel


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kind", KINDS)
def test_columns_against_pytorch(strict_cpu, torch, kind, dtype):
    """Each reduction over non-trailing dims, keepdim both ways, as one kernel; with NaN,
    +-inf in some columns (NaN propagates through amax/amin as in PyTorch)."""
    for dim, shape in COLUMN_CASES:
        if kind.endswith("softmax") and isinstance(dim, list):
            continue
        for keepdim in (True, False):
            if kind.endswith("softmax") and not keepdim:
                continue
            fused = fuse(parse_graph(reduction_graph(kind, dim=dim, keepdim=keepdim)))
            reductions_inside(fused)
            x = data(shape, dtype, seed=len(shape))
            if dtype != "float16":
                flat = x.reshape(-1)
                flat[1], flat[3], flat[-1] = np.nan, np.inf, -np.inf
            (got,) = run_compiled(fused, x)
            want = torch_fn(kind, dim, keepdim)(torch.from_numpy(x)).numpy()
            close(got, want, dtype, f"{kind} dim={dim} {shape} keepdim={keepdim}")


@pytest.mark.parametrize("post", ["sub", "exp"])
def test_columns_with_producers_and_epilogues(strict_cpu, post):
    """``x - x.mean(0, keepdim=True)`` and friends: producer, reduction and epilogue in one
    kernel, against the interpreter."""
    for kind in ("aten::mean", "aten::amax", "aten::var", "aten::logsumexp"):
        graph = parse_graph(reduction_graph(kind, dim=-2, keepdim=True, pre="mul", post=post))
        fused = fuse(graph)
        reductions_inside(fused)
        for shape in [(7, 5), (3, 33, 17), (2000, 3)]:
            x = data(shape, "float32")
            (got,), (want,) = run_compiled(fused, x), interpreted(graph, x)
            close(got, want, "float32", f"{kind} {post} {shape}")


def test_scripted_by_pytorch_other_dims_and_full(strict_cpu, torch):
    """What PyTorch prints for statistics over the leading dims, a standardize without
    keepdim, full reductions to 0-d, a softmax over dim 1 of a 3-d tensor, batch-norm style
    statistics with per-channel weights."""
    def col_standardize(x):
        return (x - x.mean(0)) / (x.std(0) + 1e-5)

    def full_sum(x):
        return x.sum() * 2.0

    def full_center(x):
        return x - x.mean()

    def full_var(x):
        return x.var() + x.std(unbiased=False)

    def mid_softmax(x):
        return torch.softmax(x * 0.5, 1)

    def channel_norm(x, w, b):
        m = x.mean(dim=(0, 1), keepdim=True)
        v = x.var(dim=(0, 1), keepdim=True, unbiased=False)
        return (x - m) * torch.rsqrt(v + 1e-5) * w + b

    def mse(x, y):
        return ((x - y) ** 2).mean()

    rng = np.random.default_rng(7)
    x3 = rng.standard_normal((6, 20, 33)).astype(np.float32)
    x2 = rng.standard_normal((64, 48)).astype(np.float32)
    w = rng.standard_normal(33).astype(np.float32)
    b = rng.standard_normal(33).astype(np.float32)
    cases = [(col_standardize, (x2,)), (full_sum, (x3,)), (full_center, (x3,)),
             (full_var, (x2,)), (mid_softmax, (x3,)), (channel_norm, (x3, w, b)),
             (mse, (x2, x2[::-1].copy()))]
    for fn, args in cases:
        graph = parse_graph(str(torch.jit.script(fn).graph))
        fused = jit.fuse(graph)
        reductions_inside(fused)
        assert len([n for n in fused.nodes if n.kind == "prim::FusionGroup"]) == 1, fused
        (got,) = run_compiled(fused, *args)
        want = fn(*(torch.from_numpy(a) for a in args)).numpy()
        close(got, want, "float32", fn.__name__)


def test_empty_reduced_dims_as_pytorch(strict_cpu, torch):
    """Over an empty dim: sum 0, mean nan, a zero-size kept dim an empty result; amax raises
    PyTorch's error (the interpreter's, naming the op)."""
    for kind in ("aten::sum", "aten::mean"):
        fused = fuse(parse_graph(reduction_graph(kind, dim=0, keepdim=False)))
        for shape in [(0, 5), (4, 0), (0, 3, 2)]:
            x = np.zeros(shape, np.float32)
            got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
            close(got, torch_fn(kind, 0, False)(torch.from_numpy(x)).numpy(), "float32", kind)
    fused = fuse(parse_graph(reduction_graph("aten::amax", dim=0)))
    with pytest.raises(RuntimeError, match="amax"):
        Interpreter(fused, fusion_runner=executor.run_fusion_group).run(np.zeros((0, 4),
                                                                                 np.float32))


def test_unhandled_layouts_split_with_the_same_answer(strict_cpu):
    """Non-contiguous reduced dims (0 and 2), a transposed input: the executor splits."""
    cases = [(reduction_graph("aten::sum", dim=[0, 2], pre="mul", post="sub"),
              data((4, 5, 6), "float32")),
             (reduction_graph("aten::var", dim=0, pre="mul"), data((9, 7), "float32").T)]
    for text, x in cases:
        graph = parse_graph(text)
        fused = fuse(graph)
        reductions_inside(fused)
        executor.clear_caches()
        jit.reset_stats()
        got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
        s = jit.stats()
        assert s["groups_split"] == 1 and s["fallbacks"] == {}, s
        close(got, interpreted(graph, x)[0], "float32")


def test_rows_only_backends_refuse_columns():
    """``plan_rows`` gives a columns plan only to a caller that asks for it (a backend that
    knows only the row layout gets ``Unsupported``)."""
    from torchlike.fuser.backend import Unsupported, analyze, signature_of
    from torchlike.fuser.row_plan import plan_rows
    fused = fuse(parse_graph(reduction_graph("aten::sum", dim=0, pre="mul")))
    (group,) = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    spec = analyze(group.attrs["Subgraph"], signature_of([data((5, 7), "float32")]))
    with pytest.raises(Unsupported):
        plan_rows(spec)
    plan = plan_rows(spec, layouts=("rows", "columns"))
    assert plan.layout == "columns" and plan.dims == (0,) and plan.k == 1


LN_BACKWARD_SHAPED = """
graph(%g : Float(64, 96), %x : Float(64, 96), %rs : Float(64, 1), %w : Float(96)):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %cols : int[] = prim::Constant[value=[0]]()
  %rows : int[] = prim::Constant[value=[-1]]()
  %one : int = prim::Constant[value=1]()
  %xh : Tensor = aten::mul(%x, %rs)
  %gx : Tensor = aten::mul(%g, %xh)
  %dw : Tensor = aten::sum(%gx, %cols, %false, %none)
  %db : Tensor = aten::sum(%g, %cols, %false, %none)
  %gw : Tensor = aten::mul(%g, %w)
  %s : Tensor = aten::sum(%gw, %rows, %true, %none)
  %dx : Tensor = aten::sub(%gw, %s, %one)
  return (%dx, %dw, %db)
"""


def test_reductions_of_different_layouts_form_groups_of_their_own(strict_cpu):
    """A layer norm's backward: per-row sums and the weight's column sums (of ``g * x * rs``,
    ``rs`` one value per row) are different kernels; the partitioner keeps them apart (one
    group of both would split, every reduction interpreted) and a per-row input of a column
    reduction is read once per swept row (``rowval``)."""
    graph = parse_graph(LN_BACKWARD_SHAPED)
    f = jit.ScriptFunction(graph)
    shape = (64, 96)
    g, x, w = data(shape, "float32"), data(shape, "float32"), data(shape[1:], "float32")
    rs = np.abs(data((shape[0], 1), "float32")) + np.float32(0.5)
    fused = f.graph_for(g, x, rs, w)  # specialized: the shapes decide the groups
    groups = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    assert len(groups) >= 2, str(fused)
    jit.reset_stats()
    got = f(g, x, rs, w)
    s = jit.stats()
    assert s["groups_split"] == 0 and s["fallbacks"] == {} and s["cache_misses"] >= 2, s
    for a, b in zip(got, interpreted(graph, g, x, rs, w), strict=True):
        close(a, b, "float32", "ln backward")


LN_BACKWARD_STATS = """
graph(%g : Float(64, 96), %x : Float(64, 96), %m : Float(64, 1), %v : Float(64, 1),
      %y : Float(64, 96), %z : Float(64, 96)):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %true : bool = prim::Constant[value=1]()
  %cols : int[] = prim::Constant[value=[0]]()
  %rows : int[] = prim::Constant[value=[-1]]()
  %one : int = prim::Constant[value=1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %xc : Tensor = aten::sub(%x, %m, %one)
  %ve : Tensor = aten::add(%v, %eps, %one)
  %rs : Tensor = aten::rsqrt(%ve)
  %xh : Tensor = aten::mul(%xc, %rs)
  %gx : Tensor = aten::mul(%g, %xh)
  %s : Tensor = aten::sum(%gx, %rows, %true, %none)
  %t : Tensor = aten::mul(%xh, %s)
  %dx : Tensor = aten::sub(%g, %t, %one)
  %dw : Tensor = aten::sum(%gx, %cols, %false, %none)
  %db : Tensor = aten::sum(%g, %cols, %false, %none)
  %e : Tensor = aten::exp(%x)
  %es : Tensor = aten::sum(%e, %rows, %true, %none)
  %ec : Tensor = aten::sum(%e, %cols, %false, %none)
  %yz : Tensor = aten::add(%y, %z, %one)
  %yzg : Tensor = aten::add(%yz, %g, %one)
  %ys : Tensor = aten::sum(%yzg, %rows, %true, %none)
  %yc : Tensor = aten::sum(%yzg, %cols, %false, %none)
  return (%dx, %dw, %db, %es, %ec, %ys, %yc)
"""


def test_cheap_values_are_recomputed_not_passed_between_groups(strict_cpu):
    """fuser/recompute.py: the columns' group recomputes ``g * (x - m) * rsqrt(v + eps)``
    (cheap, from what it reads anyway and per-row values) instead of reading it from the rows'
    group; an ``exp`` (a math helper) and ``y + z + g`` (two more full-size reads) are passed
    as before.  No longer depending on the rows' group, the columns' sums of the same rows
    share one kernel, and the answer is the interpreter's."""
    from torchlike.fuser import decisions
    graph = parse_graph(LN_BACKWARD_STATS)
    shape = (64, 96)
    g, x, y, z = (data(shape, "float32", seed=i) for i in range(4))
    m, v = data((64, 1), "float32", seed=5), np.abs(data((64, 1), "float32", seed=6))
    with decisions.recording() as made:  # specialized: the shapes decide the groups
        fused = jit.ScriptFunction(graph).graph_for(g, x, m, v, y, z)
    recomputed = [d.node.outputs[0].name for d in made if d.action == decisions.RECOMPUTED]
    assert "gx" in recomputed and not {"e", "yzg"} & set(recomputed), recomputed
    groups = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    passed = {v.name for gr in groups for v in gr.outputs} - {o.name for o in fused.outputs}
    assert passed == {"e", "yzg"}, str(fused)  # gx is neither written nor read back
    sums = [[n.outputs[0].name for n in gr.attrs["Subgraph"].nodes if n.kind == "aten::sum"]
            for gr in groups]
    assert ["dw", "db"] in [[s for s in ss if s in ("dw", "db")] for ss in sums], sums
    got = run_compiled(fused, g, x, m, v, y, z)
    for a, b in zip(got, interpreted(graph, g, x, m, v, y, z), strict=True):
        close(a, b, "float32", "recomputed")


def test_recomputation_keeps_the_program_order_of_an_inplace_write():
    """A block that writes a tensor in place recomputes nothing: a copy placed after the write
    would read the new contents."""
    from torchlike.fuser import decisions
    text = LN_BACKWARD_STATS.replace(
        "  %e : Tensor = aten::exp(%x)\n",
        "  %w : Tensor = aten::mul_(%x, %one)\n  %e : Tensor = aten::exp(%x)\n")
    args = [data(s, "float32") for s in [(64, 96)] * 2 + [(64, 1)] * 2 + [(64, 96)] * 2]
    with decisions.recording() as made:
        jit.ScriptFunction(parse_graph(text)).graph_for(*args)
    assert not [d for d in made if d.action == decisions.RECOMPUTED]


COLUMN_SUMS = """
graph(%x : Tensor, %y : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=KEEP]()
  %two : int = prim::Constant[value=2]()
  %dims : int[] = prim::Constant[value=[DIMS]]()
  %one : int = prim::Constant[value=1]()
  %a : Tensor = aten::mul(%x, %y)
  %s : Tensor = aten::sum(%a, %dims, %false, %none)
  %m : Tensor = aten::mean(%x, %dims, %false, %none)
  %n : Tensor = aten::norm(%x, %two, %dims, %false)
  %t : Tensor = aten::add(%s, %m, %one)
  return (%t, %n)
"""


@pytest.mark.parametrize("shape,dims,keep", [((1000, 37), "0", 0), ((3, 517, 40), "1", 1),
                                             ((7, 5, 300), "0, 1", 0), ((20, 9), "0", 1)])
def test_column_sums_split_along_the_rows(strict_cpu, shape, dims, keep):
    """Sums, means and 2-norms over leading dims with nothing per element to write: the
    kernel cuts the rows into chunks (``part0``: partial sums, added up in chunk order) --
    rows not a multiple of the chunks, an outer dim (keepdim: without it a per-column value
    of an outer dim splits the group), two reduced dims, fewer rows than a chunk -- and gives
    the interpreter's answer."""
    from torchlike.cpu_backend import column_codegen
    from torchlike.fuser.backend import analyze, signature_of
    from torchlike.fuser.row_plan import plan_rows
    graph = parse_graph(COLUMN_SUMS.replace("DIMS", dims).replace("KEEP", str(keep)))
    x, y = data(shape, "float32"), data(shape[-1:], "float32", seed=1)
    fused = fuse(graph)
    (group,) = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    spec = analyze(group.attrs["Subgraph"], signature_of([x, y]))
    spec.rows = plan_rows(spec, layouts=("rows", "columns"))
    source = column_codegen.render(spec, "0" * 40, "#").source
    assert "part0 = np.empty((nc, O * I), np.float64)" in source, source
    got = run_compiled(fused, x, y)
    for a, b in zip(got, interpreted(graph, x, y), strict=True):
        close(a, b, "float32", f"{shape} over {dims}")


COLUMN_SUM_BESIDE_A_0D_INPUT = """
graph(%x : Tensor, %z : Tensor):
  %none : NoneType = prim::Constant()
  %false : bool = prim::Constant[value=0]()
  %dims : int[] = prim::Constant[value=[0]]()
  %lo : int = prim::Constant[value=-1]()
  %hi : int = prim::Constant[value=1]()
  %e : Tensor = aten::logaddexp(%x, %x)
  %s : Tensor = aten::sum(%e, %dims, %false, %none)
  %g : Tensor = aten::sign(%s)
  %c : Tensor = aten::clamp(%z, %lo, %hi)
  %a : Tensor = aten::acos(%c)
  %q : Tensor = aten::mul(%g, %a)
  return (%q)
"""


def test_column_sum_beside_a_0d_input(strict_cpu):
    """The split column-sum kernel computes per-column values of a 0-d input's expression
    (acos(clamp(z))) before the passes; the input was named after them: KeyError inside the
    fuser (found by tests/test_fuzz_programs.py, seed 392 of 1000)."""
    graph = parse_graph(COLUMN_SUM_BESIDE_A_0D_INPUT)
    x, z = data((5, 64), "float32"), np.array(0.25, np.float32)
    got = run_compiled(fuse(graph), x, z)
    for a, b in zip(got, interpreted(graph, x, z), strict=True):
        close(a, b, "float32")
