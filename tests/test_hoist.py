"""Loop-invariant code motion in the CPU kernels (``cpu_backend/hoist.py``): what only 0-d
inputs, scalars and constants feed is computed once, before the loops, with the same answers
as the interpreter, in serial and parallel kernels and over empty inputs."""
from __future__ import annotations

import numpy as np
import pytest

from torchlike import jit
from torchlike.cpu_backend.hoist import hoist_invariants
from torchlike.fuser import executor
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

pytestmark = pytest.mark.usefixtures("kernel_cache")

# found by tests/test_fuzz_programs.py: with the atan2/elu chain in the loop beside the
# per-element fmax, LLVM's optimizer took six minutes over this kernel
GRAPH = """
graph(%x0 : Tensor, %x1 : Tensor, %x2 : Tensor, %s : float, %n : int):
  %12 : float = prim::Constant[value=1.]()
  %3 : int = prim::Constant[value=1]()
  %5 : Tensor = aten::fmax(%x0, %x1)
  %8 : Tensor = aten::atan2(%x2, %x1)
  %2 : Tensor = aten::hardsigmoid(%8)
  %r : Tensor = aten::elu(%2, %12, %3, %3)
  %q : Tensor = aten::floor_divide(%n, %x2)
  %w : Tensor = aten::mul(%r, %s)
  %z : Tensor = aten::where(%5, %w, %q)
  return (%5, %z)
"""


def test_statements_move_only_when_everything_they_read_is_invariant():
    before, rest = hoist_invariants([
        "a0 = in0[i0, 0]", "a1 = in1[()]", "v0 = tl_exp_f32(a1) * k0",
        "v1 = np.float32(v0 + a0)", "v2 = tl_int_div_floor(in2, a1, err)", "v3 = v2 + v0",
        "v4 = tl_gelu_f32(v0, 'tanh')", "out0[i0, 0] = v1"])
    assert before == ["a1 = in1[()]", "v0 = tl_exp_f32(a1) * k0"]
    assert rest[0] == "a0 = in0[i0, 0]" and "out0[i0, 0] = v1" in rest
    before, rest = hoist_invariants(["a0 = in0[0, 0]", "a1 = in1[0, i1]", "v0 = tl_exp_f32(a0)",
                                     "v1 = v0 * a1", "a2 = in2[(0 + 3 * c2) & k9, 0]"])
    assert before == ["a0 = in0[0, 0]", "v0 = tl_exp_f32(a0)"]


# fuzz seed 9746: a (1,) input's logit(sigmoid(sinh(clamp(x)))) and erfc beside a (3, 1) loop;
# read at in0[0] in the loop, LLVM had not compiled the kernel after ten minutes
BROADCAST_CHAIN = """
graph(%x1 : Tensor, %x0 : Tensor, %y : Tensor):
  %m5 : int = prim::Constant[value=-5]()
  %p5 : int = prim::Constant[value=5]()
  %m2 : int = prim::Constant[value=-2]()
  %p2 : int = prim::Constant[value=2]()
  %none : NoneType = prim::Constant()
  %e : Tensor = aten::erfc(%x1)
  %g : Tensor = aten::gt(%x0, %x1)
  %c : Tensor = aten::clamp(%x1, %m5, %p5)
  %s : Tensor = aten::sinh(%c)
  %c2 : Tensor = aten::clamp(%s, %m2, %p2)
  %sg : Tensor = aten::sigmoid(%c2)
  %l : Tensor = aten::logit(%sg, %none)
  %w : Tensor = aten::where(%g, %y, %l)
  %r : Tensor = aten::mul(%w, %e)
  return (%r)
"""


@pytest.mark.parametrize("x1_shape", [(1,), (1, 1)])
def test_chain_of_a_broadcast_input_is_computed_before_the_loops(strict_cpu, x1_shape):
    g = jit.fuse(parse_graph(BROADCAST_CHAIN))
    args = (np.full(x1_shape, 0.3, np.float32), np.linspace(-1, 1, 6, dtype=np.float32)
            .reshape(3, 2)[:, :1], np.arange(3, dtype=np.float32).reshape(3, 1))
    (kernel,) = jit.codegen(g, *args)
    src = kernel.source
    assert src.index("tl_sinh_f32") < src.index("for ") and \
        src.index("tl_log_f32") < src.index("for "), src
    jit.reset_stats()
    executor.clear_caches()
    got = Interpreter(g, fusion_runner=executor.run_fusion_group).run(*args)
    stats = jit.stats()
    assert stats["kernels_compiled"] + stats["disk_hits"] == 1 and not stats["fallbacks"], stats
    np.testing.assert_array_equal(got, jit.run(parse_graph(BROADCAST_CHAIN), *args))


@pytest.mark.parametrize("dtype", [np.float32, np.float16])
@pytest.mark.parametrize("shape", [(3, 1), (1 << 17, 2), (0, 2)],
                         ids=["serial", "parallel", "empty"])
def test_invariant_chain_is_computed_once_before_the_loops(strict_cpu, dtype, shape):
    g = jit.fuse(parse_graph(GRAPH))
    rng = np.random.default_rng(0)
    args = (rng.standard_normal(shape).astype(dtype), np.array(0.7, dtype),
            np.array(3, np.int32), 2.0, 7)
    (kernel,) = jit.codegen(g, *args)
    src = kernel.source
    assert src.index("tl_atan2_f32") < src.index("for ") and \
        src.index("tl_elu_f32") < src.index("for "), src
    assert src.index("tl_int_div_floor") > src.index("for ")  # may raise: stays per element
    jit.reset_stats()
    executor.clear_caches()
    got = Interpreter(g, fusion_runner=executor.run_fusion_group).run(*args)
    stats = jit.stats()
    assert stats["kernels_compiled"] + stats["disk_hits"] == 1 and not stats["fallbacks"], stats
    want = jit.run(parse_graph(GRAPH), *args)
    for a, b in zip(got, want):
        assert a.dtype == b.dtype and a.shape == b.shape
        np.testing.assert_array_equal(a, b)
