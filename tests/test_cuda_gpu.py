"""The CUDA backend on a real GPU (CuPy): the corpus graphs fused and run on cupy inputs in strict
mode against PyTorch's answers, and the registry's ops against the interpreter.  Skipped, with
the reason "no CUDA GPU present", where cupy or a device is missing."""
import numpy as np
import pytest
from corpus_utils import CASES, assert_matches, flatten_outputs, graph_files, graph_text, input_sets

from torchlike import backends, jit
from torchlike.cuda_backend.runtime import CudaBackend
from torchlike.errors import IntegerDivisionByZeroError
from torchlike.fuser import backend as fb
from torchlike.fuser import config, executor
from torchlike.fuser.stats import reset_stats, stats
from torchlike.interpreter import Interpreter
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


def to_gpu(a):
    """A cupy array with ``a``'s values and layout (transposed, sliced, broadcast views kept)."""
    import cupy
    if not isinstance(a, np.ndarray):
        return a
    if a.flags.c_contiguous or a.ndim == 0:
        return cupy.asarray(a)
    if 0 in a.strides:
        index = tuple(slice(0, 1) if s == 0 else slice(None) for s in a.strides)
        return cupy.broadcast_to(cupy.asarray(np.ascontiguousarray(a[index])), a.shape)
    span = 1 + sum((n - 1) * abs(s) for n, s in zip(a.shape, a.strides)) // a.itemsize
    buf = cupy.zeros(max(span, 1), a.dtype)
    view = cupy.lib.stride_tricks.as_strided(buf, a.shape, tuple(abs(s) for s in a.strides))
    view[...] = cupy.asarray(np.ascontiguousarray(a))
    return view


def to_host(v):
    import cupy
    return cupy.asnumpy(v) if isinstance(v, cupy.ndarray) else v


@pytest.mark.parametrize("case,which", [(c, w) for c in CASES for w in graph_files(c)])
def test_corpus_on_gpu(case, which):
    graph = jit.fuse(parse_graph(graph_text(case, which)))
    for label, args, expected in input_sets(case):
        if which == "traced" and label != "inputs" and case in ("decision_gate",
                                                                "script_if_else_chains"):
            continue  # the trace baked in its example's branch (tests/corpus/README.md)
        reset_stats()
        out = flatten_outputs(jit.run(graph, *[to_gpu(a) for a in args]))
        for k, got in enumerate(out):
            assert_matches(to_host(got), expected[f"out{k}"], f"{case}/{which}/{label} out{k}")
        assert stats()["fallbacks"] == {}


def test_registry_ops_on_gpu():
    """The CPU emulator's matrix (tests/test_cuda_codegen.py), run on the GPU."""
    import cupy
    from test_cuda_codegen import MATRIX, Case, assert_same

    from torchlike.ir.graph import Graph
    from torchlike.ir.types import TENSOR
    for dtype, layout in MATRIX:
        case = Case(dtype, layout)
        outer = Graph()
        ins = [outer.add_input(f"x{i}", TENSOR) for i in range(4)]
        node = outer.create("prim::FusionGroup", ins, [TENSOR] * len(case.sub.outputs),
                            {"Subgraph": case.sub})
        with np.errstate(all="ignore"):
            expected = Interpreter(case.sub).run_outputs(list(case.args))
        got = executor.run_fusion_group(node, cupy, [to_gpu(a) for a in case.args])
        for op, g, e in zip(case.ops, got, expected):
            assert_same([to_host(g)], [e], f"{op.name} {dtype} {layout}")


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
