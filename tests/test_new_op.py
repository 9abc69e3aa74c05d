"""Adding an elementwise op is ONE registry entry.

A brand-new op, ``test::cube_plus`` (``a * a * a + b``), is registered with one
``elementwise(...)`` call -- schema, numpy reference, Numba and CUDA templates -- and nothing
else.  It then runs through the same differential harness as every registry op (interpreter,
cpu, cuda-emulated; every dtype and several layouts), is listed by the harness's op list that
the parametrized op tests enumerate, is callable from the functional namespace, and traces,
fuses and compiles.  There is no PyTorch op to compare with: an independent numpy formula is
the reference instead.  The op is removed from the registry afterwards.
"""
import numpy as np
import pytest
from differential import (
    BACKENDS,
    DTYPES,
    Matrix,
    OpCase,
    assert_same,
    backend_missing,
    fuser_settings,
    nvrtc_missing,
    op_cases,
    registry_ops,
    require,
    subgraph,
)
from differential_reference import reference_failures

from torchlike import functional, jit
from torchlike.fuser import config
from torchlike.fuser.stats import reset_stats, stats
from torchlike.ops import registry
from torchlike.ops.elementwise_base import compute_dtype_of, elementwise

NAME = "test::cube_plus"
KEYS = [(d, "contiguous") for d in DTYPES] + [
    ("float32", "transposed"), ("int32", "broadcast"), ("float16", "mixed"), ("float64", "0-d"),
    ("int16", "empty")]


@pytest.fixture(scope="module")
def cube_plus(tmp_path_factory):
    """The new op, registered for this module only (with a fresh kernel cache)."""
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    op = elementwise(NAME, "Tensor self, Tensor other", ref=lambda xp, a, b: a * a * a + b,
                     numba="{self} * {self} * {self} + {other}",
                     cuda="{self} * {self} * {self} + {other}")
    try:
        yield op
    finally:
        registry.unregister(NAME)
        functional.__dict__.pop("cube_plus", None)  # the namespace caches functions it made
        config.set_cache_dir(None)
    assert NAME not in [o.name for o in registry_ops()]


def test_the_harness_lists_the_new_op(cube_plus):
    assert NAME in [op.name for op in registry_ops()]
    assert OpCase(NAME) in op_cases()
    assert "cube_plus-0" in [c.id for c in op_cases()]


@pytest.mark.parametrize("backend", BACKENDS)
def test_new_op_through_the_harness(cube_plus, backend):
    """Every dtype and several layouts: the backend's kernels match the interpreter."""
    require(backend_missing(backend))
    matrix = Matrix(backend, KEYS, cases=op_cases([cube_plus]))
    if backend == "cuda-emulated":
        matrix.build()
    for dtype, layout in KEYS:
        matrix.check_case(dtype, layout)
    ran, failures = matrix.op_failures("cube_plus-0")
    assert ran == len(KEYS) and not failures, "\n".join(failures)


def test_new_op_cuda_kernel_compiles_with_nvrtc(cube_plus):
    require(nvrtc_missing())
    from torchlike.cuda_backend.compiler import nvrtc_compile
    matrix = Matrix("cuda-emulated", [("float16", "contiguous"), ("int8", "sliced")],
                    cases=op_cases([cube_plus]))
    for source in matrix.generate().values():
        assert nvrtc_compile(source.source, "sm_90")[1] == ""


def numpy_formula(op, args):
    """``a * a * a + b`` in numpy: half types computed in float32 and rounded once (the
    documented rule), everything else in its own dtype (integers wrap)."""
    a, b = args
    dtype = np.result_type(a, b)
    compute = compute_dtype_of(str(dtype))
    a, b = a.astype(compute), b.astype(compute)
    with np.errstate(all="ignore"):
        return (a * a * a + b).astype(dtype)


def test_new_op_against_its_numpy_formula(cube_plus):
    """No torch op exists: the reference check runs against a numpy formula instead (same
    special values, same comparison rule; same-dtype operands, as numpy promotes otherwise)."""
    failures = reference_failures(OpCase(NAME), numpy_formula, mixed=False)
    assert not failures, "\n".join(failures[:12])


def test_new_op_from_the_namespace_and_traced(cube_plus):
    """``torchlike.functional`` finds the op by name, a trace records it, the fuser fuses it and
    the cpu backend compiles it (strictly: no fallback)."""
    x = np.linspace(-2, 2, 12, dtype=np.float32).reshape(3, 4)
    y = np.arange(4, dtype=np.float32)
    want = x * x * x + y
    assert_same([functional.apply("cube_plus", x, y)], [want])
    assert_same([functional.cube_plus(x, y)], [want])

    fn = jit.trace(lambda a, b: functional.cube_plus(a, b) * 2.0, (x, y))
    assert NAME in str(fn.graph)
    with fuser_settings("cpu", strict=True):
        reset_stats()
        got = fn(x, y)
        s = stats()
        graph = fn.graph_for(x, y)
    assert_same([got], [want * 2])
    groups = [n for n in graph.nodes if n.kind == "prim::FusionGroup"]
    assert len(groups) == 1 and NAME in [n.kind for n in subgraph(groups[0]).nodes]
    assert s["fallbacks"] == {} and s["kernels_compiled"] + s["disk_hits"] == 1
