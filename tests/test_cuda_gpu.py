"""The CUDA backend on a real GPU (CuPy): the corpus graphs fused and run on cupy inputs in strict
mode against PyTorch's answers, and the registry's ops against the interpreter.  Skipped, with
the reason "no CUDA GPU present", where cupy or a device is missing."""
import numpy as np
import pytest
from corpus_utils import CASES, assert_matches, flatten_outputs, graph_files, graph_text, input_sets
from differential import Matrix, to_gpu, to_host
from test_corpus import TRACE_BAKES_CONTROL_FLOW
from test_cuda_codegen import MATRIX

from torchlike import backends, jit
from torchlike.cuda_backend.runtime import CudaBackend
from torchlike.errors import IntegerDivisionByZeroError
from torchlike.fuser import backend as fb
from torchlike.fuser import config, executor
from torchlike.fuser.stats import reset_stats, stats
from torchlike.ir import parse_graph

_ok, _why = CudaBackend().available()
pytestmark = [pytest.mark.cuda,
              pytest.mark.skipif(not _ok, reason=f"no CUDA GPU present ({_why})")]


@pytest.fixture(scope="module", autouse=True)
def _cuda_backend(tmp_path_factory):
    saved = {k: fb.BACKENDS.get(k) for k in ("cuda", "cuda-emulated")}
    backends.install({k: backends.BACKENDS[k] for k in saved})
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    config.set_backend("cuda")
    config.set_strict(True)
    yield
    config.set_strict(False)
    config.set_backend("auto")
    config.set_cache_dir(None)
    for k, v in saved.items():
        if v is None:
            fb.BACKENDS.pop(k, None)
            fb._instances.pop(k, None)
        else:
            fb.register_backend(k, v)
    executor.clear_caches()


@pytest.mark.parametrize("case,which", [(c, w) for c in CASES for w in graph_files(c)])
def test_corpus_on_gpu(case, which):
    graph = jit.fuse(parse_graph(graph_text(case, which)))
    for label, args, expected in input_sets(case):
        if "traced" in which and label != "inputs" and case in TRACE_BAKES_CONTROL_FLOW:
            continue  # the trace baked in its example's branch (tests/corpus/README.md)
        reset_stats()
        out = flatten_outputs(jit.run(graph, *[to_gpu(a) for a in args]))
        for k, got in enumerate(out):
            assert_matches(to_host(got), expected[f"out{k}"], f"{case}/{which}/{label} out{k}")
        assert stats()["fallbacks"] == {}


@pytest.mark.parametrize("dtype,layout", MATRIX)
def test_registry_ops_on_gpu(dtype, layout):
    """The CPU emulator's matrix (tests/test_cuda_codegen.py: every registry op case over each
    dtype and layout, special values included), one compiled kernel per dtype and layout on the
    GPU, against the interpreter."""
    r = Matrix("cuda", [(dtype, layout)]).check_case(dtype, layout)
    failures = r.failures()
    assert not failures, "\n".join(failures[:12])



def test_every_op_rounds_mixed_operands_to_float16_on_gpu():
    """tests/test_float16.py's half-mixed matrix (every op of two or more operands on float16 x,
    int32 values that round in float16 and a 0-d float64) in CUDA kernels on the GPU."""
    from differential import op_cases

    from torchlike.ops.elementwise_base import kept_operands
    cases = [c for c in op_cases()
             if len([n for n in c.op.operand_names if n not in kept_operands(c.op)]) >= 2]
    r = Matrix("cuda", [("float16", "half-mixed")], cases=cases).check_case("float16",
                                                                          "half-mixed")
    assert len(r.cases) > 40
    failures = r.failures()
    assert not failures, "\n".join(failures[:12])


def test_half_common_dtype_on_gpu():
    """The float16 common-dtype graph (rounded operands, per-step half division) fused on the
    GPU equals the interpreter bit for bit (which equals PyTorch: tests/test_float16.py)."""
    from test_float16 import HALF_COMMON, _half_common_inputs

    from torchlike.interpreter import Interpreter
    graph = parse_graph(HALF_COMMON)
    args = _half_common_inputs()
    want = Interpreter(graph).run_outputs(list(args))
    reset_stats()
    got = flatten_outputs(jit.run(jit.fuse(graph), *[to_gpu(a) for a in args]))
    assert stats()["fallbacks"] == {} and stats()["groups_split"] == 0, stats()
    for k, (a, b) in enumerate(zip(got, want, strict=True)):
        np.testing.assert_array_equal(to_host(a), b, err_msg=f"output r{k}")


@pytest.mark.parametrize("seed", [11, 12])
def test_strided_vector_entries_on_gpu(seed):
    """tests/test_cuda_strided_vector.py's named cases and 60 random layouts a seed (broadcast
    rows, columns and 0-d operands, chunks at offsets, transposes, broadcast-shaped outputs),
    each one compiled kernel on the GPU, against the interpreter."""
    from differential import assert_same, group_node, interpret, run_gpu
    from test_cuda_strided_vector import CASES, _bias_of_three, _case, random_layouts
    cases = [_case(name)[:2] for name in CASES] if seed == 11 else []
    cases += [(_bias_of_three, args) for args in random_layouts(seed, 60)]
    for build, args in cases:
        node = group_node(len(args), build)
        assert_same(run_gpu(node, args), interpret(node, args),
                    str([(a.dtype, a.shape, a.strides) for a in args]))

def test_integer_division_by_zero_on_gpu():
    import cupy

    from torchlike.ir.graph import Graph
    from torchlike.ir.types import TENSOR
    outer = Graph()
    a, b = outer.add_input("a", TENSOR), outer.add_input("b", TENSOR)
    sub = Graph()
    p, q = sub.add_input("p", TENSOR), sub.add_input("q", TENSOR)
    sub.set_outputs([sub.create("aten::remainder", [p, q], [TENSOR]).output()])
    node = outer.create("prim::FusionGroup", [a, b], [TENSOR], {"Subgraph": sub})
    x = cupy.arange(-5, 5, dtype=cupy.int32)
    np.testing.assert_array_equal(to_host(executor.run_fusion_group(node, cupy, [x, x * 0 + 3])[0]),
                                  np.arange(-5, 5) % 3)
    with pytest.raises(IntegerDivisionByZeroError):
        executor.run_fusion_group(node, cupy, [x, x])


# -- row reductions (cuda_backend.row_codegen) on the GPU ----------------------------------------
# The emulator runs these kernels' exact source in CI (tests/test_cuda_rows.py); here the
# launcher picks the team and the vector entry as it does for a user, over row lengths that take
# the warp, block, scalar-tail and vector paths, against the interpreter; short rows share a
# warp (row_codegen.team_width), row counts that leave part of the last warp idle.

ROW_SHAPES = [(3, 7), (5, 33), (4, 64), (3, 1000), (2, 4097), (700, 96), (16, 32768), (37, 20),
              (1001, 16), (13, 2)]


def _rows_on_gpu(graph, args, dtype, label):
    from test_fused_reductions import close, interpreted
    fused = jit.fuse(graph)
    assert any(n.kind == "prim::FusionGroup" for n in fused.nodes), label
    reset_stats()
    got = flatten_outputs(jit.run(fused, *[to_gpu(a) for a in args]))
    s = stats()
    assert s["fallbacks"] == {} and s["groups_split"] == 0, (label, s)
    for g, w in zip(got, interpreted(graph, *args), strict=True):
        close(to_host(g), w, dtype, label)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kind,keepdim,post", [
    ("aten::sum", True, "sub"), ("aten::sum", False, "exp"), ("aten::mean", True, "sub"),
    ("aten::amax", True, "sub"), ("aten::amin", False, ""), ("aten::softmax", True, ""),
    ("aten::log_softmax", True, ""), ("aten::var", True, "sub"), ("aten::std", False, ""),
    ("aten::logsumexp", True, "sub")])
def test_row_reductions_on_gpu(kind, keepdim, post, dtype):
    from test_fused_reductions import data, reduction_graph
    graph = parse_graph(reduction_graph(kind, keepdim=keepdim, pre="mul", post=post))
    for shape in ROW_SHAPES:
        _rows_on_gpu(graph, [data(shape, dtype, seed=shape[-1])], dtype,
                     f"{kind} keepdim={keepdim} {post} {dtype} {shape}")


def test_row_special_values_on_gpu():
    """NaN, +-inf and all-inf rows propagate as in the interpreter (PyTorch's rules)."""
    from test_fused_reductions import reduction_graph, special_rows
    x = special_rows((7, 1024))
    for kind in ("aten::sum", "aten::amax", "aten::amin", "aten::softmax", "aten::log_softmax",
                 "aten::var", "aten::logsumexp"):
        with np.errstate(all="ignore"):
            _rows_on_gpu(parse_graph(reduction_graph(kind)), [x], "float32", kind)


@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_row_composites_on_gpu(dtype):
    """softmax by hand, RMS norm, layer norm with per-row outputs: one group each, on the GPU."""
    from test_fused_reductions import LAYER_NORM_STATS, RMS_NORM, SOFTMAX_MANUAL, data
    rng = np.random.default_rng(3)
    for text, n_in in ((SOFTMAX_MANUAL, 1), (RMS_NORM, 2), (LAYER_NORM_STATS, 3)):
        for shape in [(8, 33), (3, 1024), (2, 4097), (512, 64)]:
            args = [data(shape, dtype)] + [rng.standard_normal(shape[-1:]).astype(dtype)
                                           for _ in range(n_in - 1)]
            _rows_on_gpu(parse_graph(text), args, dtype, f"{text.splitlines()[-1]} {shape}")
