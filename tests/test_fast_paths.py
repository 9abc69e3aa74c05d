"""Guarded fast paths (``cpu_backend/fast_paths.py``): a kernel calling sin, cos or tan runs
their Cody-Waite-only forms over a block and redoes the block with the exact helpers where an
argument needs the huge-argument reduction.  The compiled kernel must give the exact helpers'
bits everywhere -- blocks with no huge value, blocks with one, all huge, NaN and inf -- in the
flat, blocked 1-D strided, row (multi-dim strided) and parallel loop skeletons."""
import numpy as np
import pytest

from bench.accuracy import run_helper
from tests.differential import run_cpu
from torchlike import jit
from torchlike.cpu_backend import scalar_math
from torchlike.cpu_backend.fast_paths import BLOCK, FAST_PATHS, fast_body
from torchlike.fuser.codegen import codegen
from torchlike.fuser.partition import fusion_groups
from torchlike.ir import parse_graph

GRAPH = """
graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::{op}(%x)
  %2 : Tensor = aten::mul(%1, %y)
  return (%2)
"""


def _values(n, rng, huge_at=()):
    x = rng.uniform(-100.0, 100.0, n).astype(np.float32)
    for k in huge_at:
        x[k % n] = np.float32(1.0e6 + k)
    return x


def _expect(op, x, y):
    return run_helper(getattr(scalar_math, f"tl_{op}_f32"), (), x.ravel()).reshape(x.shape) * y


P = 1 << 16  # PARALLEL_THRESHOLD: smaller kernels do not take the guarded form

CASES = {
    # name: (shape of x, a layout transform, where huge values go)
    "flat, no huge value": ((P + 5 * BLOCK + 17,), None, ()),
    "flat, one huge value in the 3rd block": ((P + 5 * BLOCK + 17,), None, (2 * BLOCK + 5,)),
    "flat, huge in the last partial block": ((P + 17,), None, (P + 15,)),
    "flat, every value huge": ((P,), "all_huge", ()),
    "1-D strided, huge in block 2": ((2 * P,), "step2", (2 * BLOCK + 2,)),
    "rows (transposed), one huge": ((300, 250), "transpose", (777,)),
    "rows (transposed), huge values": ((512, 256), "transpose", (5, 70000, 100000)),
    "specials": ((P,), "specials", ()),
}


def _layout(x, how):
    if how == "transpose":
        return x.T
    if how == "step2":
        return x[::2]
    if how == "all_huge":
        return (x * np.float32(1e5)).astype(np.float32) + np.float32(9000.0)
    if how == "specials":
        x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 8191.999, 8192.0, -8192.0]
        return x
    return x


@pytest.mark.parametrize("op", ["sin", "cos", "tan"])
@pytest.mark.parametrize("case", list(CASES))
def test_fast_path_kernel_gives_the_exact_helpers_bits(op, case):
    shape, how, huge = CASES[case]
    rng = np.random.default_rng(len(case))
    x = _values(int(np.prod(shape)), rng, huge).reshape(shape)
    x = _layout(x, how)
    y = rng.uniform(0.5, 2.0, x.shape).astype(np.float32)
    graph = parse_graph(GRAPH.format(op=op))
    (source,) = codegen(graph, x, y)
    assert f"tl_{op}_fast_f32(" in source.source and "if bad:" in source.source
    (node,) = fusion_groups(jit.fuse(graph))
    (got,) = run_cpu(node, [x, y])  # strict: the compiled kernel ran, no fallback
    want = _expect(op, np.ascontiguousarray(x), y)
    np.testing.assert_array_equal(got, want)


def test_small_kernels_keep_one_loop():
    """Below the parallel threshold the kernel is the exact loop alone (compile time)."""
    x = np.ones((100, 100), np.float32)
    (source,) = codegen(parse_graph(GRAPH.format(op="sin")), x, x)
    assert "tl_sin_fast_f32" not in source.source and "tl_sin_f32(" in source.source


def test_fast_body_adds_one_guard_per_call():
    body = ["a0 = f0[i]", "v1 = tl_sin_f32(np.float32(a0 * a0))", "v2 = tl_cos_f32(v1) + tl_tan_f32(v1)",
            "o0[i] = v2"]
    fast = fast_body(body)
    assert fast == [
        "a0 = f0[i]",
        "v1 = tl_sin_fast_f32(np.float32(a0 * a0))",
        "bad |= tl_trig_huge_f32(np.float32(a0 * a0))",
        "v2 = tl_cos_fast_f32(v1) + tl_tan_fast_f32(v1)",
        "bad |= tl_trig_huge_f32(v1)",
        "bad |= tl_trig_huge_f32(v1)",
        "o0[i] = v2",
    ]
    assert fast_body(["v1 = tl_exp_f32(a0)"]) is None
    assert set(FAST_PATHS) == {"tl_sin_f32", "tl_cos_f32", "tl_tan_f32"}


def test_guard_marks_exactly_the_huge_finite_arguments():
    x = np.float32([0.0, 8191.999, 8192.0, -8192.0, 3e38, np.inf, -np.inf, np.nan])
    got = [bool(scalar_math.tl_trig_huge_f32.py_func(v)) for v in x]
    assert got == [False, False, True, True, True, False, False, False]
