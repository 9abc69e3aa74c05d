"""The accuracy matrix of fused reductions against PyTorch: every fusible reduction op x dtype
(float32, float64, float16) x dims (the last, the first, every dim) x keepdim, on data with
NaN, +inf, -inf and a row of -inf; each compiled in strict mode on the cpu backend (the
kernel ran: ``run_compiled`` checks the counters).  Integer sums and products are not fused:
they run interpreted with PyTorch's int64 promotion."""
import numpy as np
import pytest
from test_fused_reductions import close, reductions_inside, run_compiled

from torchlike import jit
from torchlike.fuser import executor
from torchlike.fuser.partition import fuse
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

pytestmark = [pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")]


def graph_of(op: str, dim, keepdim: bool, scale: bool = True) -> str:
    """``%y = op(%x * 1.5, dim, keepdim)`` in PyTorch's printed form (dim None: every dim;
    without ``scale``, of ``%x`` itself)."""
    lines = ["graph(%x : Tensor):",
             "  %none : NoneType = prim::Constant()",
             f"  %keep : bool = prim::Constant[value={int(keepdim)}]()",
             "  %s : float = prim::Constant[value=1.5]()",
             "  %p : Tensor = aten::mul(%x, %s)" if scale else "  %p : Tensor = aten::neg(%x)"]
    if dim is None:
        lines.append("  %dims : NoneType = prim::Constant()")
    else:
        lines += [f"  %d : int = prim::Constant[value={dim}]()",
                  "  %dims : int[] = prim::ListConstruct(%d)"]
    kind, _, extra = op.partition(":")
    if kind in ("sum", "mean"):
        call = f"aten::{kind}(%p, %dims, %keep, %none)"
    elif kind in ("amax", "amin", "logsumexp"):
        call = f"aten::{kind}(%p, %dims, %keep)"
    elif kind in ("var", "std"):
        lines.append(f"  %c : int = prim::Constant[value={extra or 1}]()")
        call = f"aten::{kind}(%p, %dims, %c, %keep)"
    elif kind == "norm":
        lines.append(f"  %o : float = prim::Constant[value={extra}]()")
        call = "aten::linalg_vector_norm(%p, %o, %dims, %keep, %none)"
    elif kind == "prod":
        lines[-1] = f"  %dims : int = prim::Constant[value={dim}]()"
        call = "aten::prod(%p, %dims, %keep, %none)"
    elif kind in ("max", "min"):
        lines[-1:] = []
        lines.append(f"  %dims : int = prim::Constant[value={dim}]()")
        lines.append(f"  %r : Tensor, %i : Tensor = aten::{kind}(%p, %dims, %keep)")
        return "\n".join(lines + ["  return (%r)"])
    else:  # softmax, log_softmax
        lines[-1:] = []
        lines.append(f"  %dims : int = prim::Constant[value={dim}]()")
        call = f"aten::{kind}(%p, %dims, %none)"
    return "\n".join(lines + [f"  %r : Tensor = {call}", "  return (%r)"])


def torch_of(torch, op: str, x, dim, keepdim: bool):
    kind, _, extra = op.partition(":")
    x = x * 1.5
    d = () if dim is None else dim
    if kind in ("sum", "mean", "amax", "amin"):
        return getattr(torch, kind)(x, d, keepdim=keepdim)
    if kind == "logsumexp":
        return torch.logsumexp(x, d, keepdim=keepdim)
    if kind in ("var", "std"):
        return getattr(torch, kind)(x, dim, correction=int(extra or 1), keepdim=keepdim)
    if kind == "norm":
        return torch.linalg.vector_norm(x, float(extra), dim, keepdim=keepdim)
    if kind == "prod":
        return torch.prod(x, dim, keepdim=keepdim)
    if kind in ("max", "min"):
        return getattr(torch, kind)(x, dim, keepdim=keepdim)[0]
    return getattr(torch, kind)(x, dim)


OPS = ["sum", "mean", "amax", "amin", "prod", "var", "std:0", "norm:1", "norm:2", "norm:inf",
       "logsumexp", "softmax", "log_softmax", "max", "min"]
# no every-dim form here (logsumexp over every dim is an error in PyTorch)
PER_DIM_ONLY = ("prod", "logsumexp", "softmax", "log_softmax", "max", "min")


def special(shape, dtype, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    x = np.round(x * 4) / 8 + 1.0  # products stay finite; float16 holds them exactly
    flat = x.reshape(-1)
    flat[3], flat[7], flat[11] = np.nan, np.inf, -np.inf
    x[-1] = -np.inf  # a whole last slice of -inf
    return x.astype(dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op", OPS)
def test_accuracy_matrix(strict_cpu, torch, op, dtype):
    for dim in (-1, 0, None):
        if dim is None and op.split(":")[0] in PER_DIM_ONLY:
            continue
        for keepdim in (True, False):
            if op.endswith("softmax") and not keepdim:
                continue
            fused = fuse(parse_graph(graph_of(op, dim, keepdim)))
            reductions_inside(fused)
            for shape in [(5, 9), (3, 4, 40)]:
                x = special(shape, dtype, seed=shape[-1])
                (got,) = run_compiled(fused, x)
                want = torch_of(torch, op, torch.from_numpy(x), dim, keepdim).numpy()
                close(got, want, dtype, f"{op} dim={dim} keepdim={keepdim} {shape}")


def test_nan_propagation_exact(strict_cpu, torch):
    """amax/amin/max of a slice with a NaN are NaN, in both layouts."""
    x = np.arange(24, dtype=np.float32).reshape(4, 6)
    x[1, 2] = np.nan
    for op in ("amax", "amin", "max", "norm:inf"):
        for dim in (-1, 0):
            (got,) = run_compiled(fuse(parse_graph(graph_of(op, dim, False))), x)
            want = torch_of(torch, op, torch.from_numpy(x), dim, False).numpy()
            np.testing.assert_array_equal(np.isnan(got), np.isnan(want), err_msg=op)
            assert np.isnan(got).sum() == 1, (op, dim, got)


def test_integer_sum_and_prod_promote_to_int64(torch):
    """Integer reductions have no kernel (float only): the group splits at run time and the
    reduction is interpreted, with PyTorch's int64 result."""
    x = np.arange(1, 13, dtype=np.int32).reshape(3, 4)
    for op in ("sum", "prod"):
        fused = fuse(parse_graph(graph_of(op, -1, False, scale=False)))
        executor.clear_caches()
        jit.reset_stats()
        got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
        assert jit.stats()["groups_split"] == 1, jit.stats()
        want = getattr(torch, op)(-torch.from_numpy(x), -1)
        assert str(np.asarray(got).dtype) == "int64" and str(want.dtype) == "torch.int64"
        np.testing.assert_array_equal(got, want.numpy())


def test_empty_dims_as_pytorch(strict_cpu, torch):
    """sum over an empty dim is 0, prod 1, norm 0; amax raises naming the op."""
    x = np.zeros((3, 0), np.float32)
    for op in ("sum", "prod", "norm:2"):
        fused = fuse(parse_graph(graph_of(op, -1, False)))
        got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
        close(got, torch_of(torch, op, torch.from_numpy(x), -1, False).numpy(), "float32", op)
    fused = fuse(parse_graph(graph_of("amax", -1, False)))
    with pytest.raises(RuntimeError, match="amax"):
        Interpreter(fused).run(x)


INDEX_GRAPH = """graph(%x : Tensor):
  %keep : bool = prim::Constant[value={keep}]()
  %s : float = prim::Constant[value=1.5]()
  %d : int = prim::Constant[value={dim}]()
  %p : Tensor = aten::mul(%x, %s)
  {call}
  return ({ret})"""


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kind", ["max", "min", "argmax", "argmin"])
def test_indices_first_extreme_and_first_nan(strict_cpu, torch, kind, dtype):
    """``max.dim``/``min.dim`` with both outputs and ``argmax``/``argmin``, over the last, the
    first and a middle dim: the index of the first extreme among ties, of the first NaN in a
    slice with NaNs, as PyTorch; the rows and the columns layouts."""
    for dim in (-1, 0, 1):
        for keepdim in (True, False):
            if kind in ("max", "min"):
                call, ret = f"%v : Tensor, %i : Tensor = aten::{kind}(%p, %d, %keep)", "%v, %i"
            else:
                call, ret = f"%i : Tensor = aten::{kind}(%p, %d, %keep)", "%i"
            fused = fuse(parse_graph(INDEX_GRAPH.format(keep=int(keepdim), dim=dim, call=call,
                                                        ret=ret)))
            reductions_inside(fused)
            for shape in [(6, 9), (4, 30, 5)]:
                x = np.round(np.random.default_rng(2).standard_normal(shape) * 2).astype(dtype)
                flat = x.reshape(-1)
                flat[4], flat[7], flat[8] = np.nan, np.nan, np.inf
                got = run_compiled(fused, x)
                tx = torch.from_numpy(x) * 1.5
                want = (getattr(torch, kind)(tx, dim, keepdim=keepdim)
                        if kind in ("max", "min") else
                        (getattr(torch, kind)(tx, dim, keepdim=keepdim),))
                label = f"{kind} dim={dim} keepdim={keepdim} {shape}"
                np.testing.assert_array_equal(got[-1], want[-1].numpy(), err_msg=label)
                if kind in ("max", "min"):
                    close(got[0], want[0].numpy(), dtype, label)


def test_indices_over_every_dim_split(strict_cpu, torch):
    """``argmax`` of a 1-d tensor reduces every dim: no kernel has partial indices, so the
    group splits, with PyTorch's answer."""
    fused = fuse(parse_graph(INDEX_GRAPH.format(
        keep=0, dim=0, call="%i : Tensor = aten::argmax(%p, %d, %keep)", ret="%i")))
    x = np.array([1.0, 3.0, np.nan, 3.0, np.nan], np.float32)
    executor.clear_caches()
    jit.reset_stats()
    got = Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
    assert jit.stats()["groups_split"] == 1, jit.stats()
    assert int(got) == int(torch.argmax(torch.from_numpy(x))) == 2


def test_bad_input_errors_name_the_node(strict_cpu):
    """A dim that does not exist, a repeated dim, amax over an empty dim: the group hands the
    inputs to the interpreter, whose error names the reduction node, as without fusion."""
    from torchlike.errors import ExecutionError
    cases = [("sum", 5, np.ones((3, 4), np.float32), "out of range"),
             ("amax", 0, np.ones((0, 4), np.float32), "amax")]
    for op, dim, x, match in cases:
        fused = fuse(parse_graph(graph_of(op, dim, False)))
        reductions_inside(fused)
        with pytest.raises(ExecutionError, match=f"aten::{op}.*{match}"):
            Interpreter(fused, fusion_runner=executor.run_fusion_group).run(x)
