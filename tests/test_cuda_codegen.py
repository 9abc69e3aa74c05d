"""The CUDA backend without a GPU: every generated kernel compiles (NVRTC for sm_90 with an empty
log, nvcc -Werror for sm_80 on a batch), and its exact source, run on the CPU through shim.h
(``EmulatedCudaBackend``), matches the interpreter for every registry op case x dtype x layout.

The registry matrix goes through the differential harness (``differential.py``): one group
holds every op case that accepts the dtype at hand (one kernel per dtype x layout); all kernels
are generated first, NVRTC-compiled on two threads (~0.1 s each) while g++ builds ONE shared
library for the emulator (g++ costs ~0.5 s per library).

Running kernels needs g++; compiling them for a GPU needs NVRTC (the cuda13 extra: cupy and
cuda-toolkit) or nvcc.  A user without one skips the tests that use it, the reason naming it;
CI installs all of them, so there a missing compiler is a failure.
"""
import shutil
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from corpus_utils import CORPUS
from differential import (
    DTYPES,
    IN_CI,
    LAYOUTS,
    Matrix,
    add_op,
    assert_same,
    backend_missing,
    build_emulated,
    const,
    emulated_backend,
    group_node,
    interpret,
    nvrtc_missing,
    op_cases,
    run_emulated,
    subgraph,
    use_emulator_as_cuda,
)

from torchlike import ops
from torchlike.cuda_backend import codegen, layout
from torchlike.cuda_backend.compiler import CudaCompileError, nvcc_compile, nvrtc_compile
from torchlike.cuda_backend.emulate import EmulatedCudaBackend
from torchlike.errors import IntegerDivisionByZeroError
from torchlike.fuser import backend as fb
from torchlike.fuser import config, executor
from torchlike.fuser.backend import ArraySpec, analyze, signature_of
from torchlike.ir.graph import Graph
from torchlike.ir.types import TENSOR

pytestmark = pytest.mark.slow  # compiles every CUDA kernel with NVRTC and g++: `-m "not slow"` skips it

NO_GXX = backend_missing("cuda-emulated")
NO_NVRTC = nvrtc_missing()
NO_NVCC = None if shutil.which("nvcc") else "needs nvcc (the CUDA toolkit) on PATH"
needs_gxx = pytest.mark.skipif(bool(NO_GXX) and not IN_CI, reason=str(NO_GXX))
needs_nvrtc = pytest.mark.skipif(bool(NO_NVRTC) and not IN_CI, reason=str(NO_NVRTC))
needs_nvcc = pytest.mark.skipif(bool(NO_NVCC) and not IN_CI, reason=str(NO_NVCC))

MATRIX = [(d, "contiguous") for d in DTYPES] + \
    [(d, lay) for d in ("int32", "float32", "float16", "uint8") for lay in LAYOUTS[1:]]


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    yield
    config.set_cache_dir(None)


def make_group(n_inputs, build):
    """A fusion subgraph over ``n_inputs`` tensor inputs; ``build(sub, params) -> outputs``."""
    return subgraph(group_node(n_inputs, build))


# -- the matrix: generated once, compiled in batches ------------------------------------------

@pytest.fixture(scope="module")
def matrix():
    """Every case generated; NVRTC runs on two threads (it releases the GIL) while g++ builds
    the one emulator library for all of them.  ``matrix.nvrtc[key]``: (cubin, log) futures."""
    m = Matrix("cuda-emulated", MATRIX)
    sources = m.generate()
    with ThreadPoolExecutor(2) as pool:
        m.nvrtc = {}
        if not NO_NVRTC:
            nvrtc_compile('extern "C" __global__ void warm() {}')  # NVRTC loads its builtins once
            m.nvrtc = {k: pool.submit(nvrtc_compile, s.source, "sm_90") for k, s in sources.items()}
        if not NO_GXX:
            m.build()
        yield m


def expected_path(layout):
    return "contig" if layout in ("contiguous", "misaligned", "0-d") else "strided"


@needs_gxx
@pytest.mark.parametrize("dtype,layout", MATRIX)
def test_registry_kernel_runs(matrix, dtype, layout):
    """The emulated kernel of every op case accepting ``dtype`` runs, indexing as planned."""
    case = matrix.check_case(dtype, layout)
    assert case.source.info["path"] == expected_path(layout)


@needs_nvrtc
@pytest.mark.parametrize("dtype,layout", MATRIX)
def test_registry_kernel_compiles_with_nvrtc(matrix, dtype, layout):
    """NVRTC compiles the case's kernel for sm_90 without a warning."""
    _, log = matrix.nvrtc[dtype, layout].result()
    assert log == "", log


@needs_gxx
@pytest.mark.parametrize("case", op_cases(), ids=lambda c: c.id)
def test_op_matches_interpreter(matrix, case):
    """The op case's outputs from the emulated kernels of every dtype x layout equal the
    interpreter's (ints/bools exactly, floats closely, NaN/inf/-0.0 alike)."""
    ran, failures = matrix.op_failures(case.id)
    assert ran, f"{case.id}: no case of the matrix ran it"
    assert not failures, "\n".join(failures[:12])


@needs_nvcc
def test_nvcc_sm80_batch(matrix):
    """nvcc with every warning an error, on several kernels in one translation unit."""
    sample = [matrix.case(k).source.source for k in
              [("float16", "contiguous"), ("int8", "contiguous"), ("float64", "contiguous"),
               ("float32", "broadcast"), ("uint8", "sliced"), ("bool", "contiguous")]]
    cubin = nvcc_compile("\n".join(sample), "sm_80")
    assert cubin[:4] == b"\x7fELF"


def test_vector_path_width(matrix):
    """Contiguous kernels get a 16-byte vector entry point, as wide as their widest element."""
    sub = make_group(2, lambda s, p: [add_op(s, "aten::sigmoid", [add_op(s, "aten::mul", p)])])
    x = np.ones((3, 5), np.float32)
    src = emulated_backend().generate(analyze(sub, signature_of([x, x])))
    assert src.info["entries"][1].endswith("_vec") and src.info["vector"] == 4
    assert "tl_vec<float32, 4>" in src.source and "tl_nvec * 4" in src.source
    for d in DTYPES:  # 16 bytes for the widest element of the kernel
        case = matrix.case((d, "contiguous"))
        spec = analyze(subgraph(case.node), signature_of(case.args))
        widest = max(layout.ITEMSIZE[v.dtype] for v in layout.plan(spec).writes)
        assert case.source.info["vector"] == 16 // max(widest, np.dtype(d).itemsize)


@needs_gxx
def test_vector_path_alignment():
    """The same kernel serves a misaligned view: alignment is checked per launch, and the
    misaligned view takes the scalar entry point."""
    a = np.arange(17, dtype=np.float32)
    sub = make_group(1, lambda s, p: [add_op(s, "aten::mul", [p[0], const(s, 3.0)])])
    for x in (a[:16], a[1:]):
        got = run_emulated(sub, [x])
        np.testing.assert_array_equal(got[0], x * np.float32(3))


# -- literals, constants, chunks ----------------------------------------------------------------

def test_literals_are_exact():
    lit = codegen.literal
    assert lit(0.1, "float32") == "0.100000001f"
    assert lit(0.1, "float64") == "0.10000000000000001"
    assert lit(2.0, "float32") == "2.0f" and lit(-0.0, "float32") == "(-0.0f)"
    assert lit(float("inf"), "float32") == "__int_as_float((int)0x7f800000U)"
    assert lit(float("-inf"), "float64") == \
        "__longlong_as_double((long long)0xfff0000000000000ULL)"
    assert lit(float("nan"), "float32").startswith("__int_as_float((int)0x7fc")
    assert lit(-(2 ** 63), "int64") == "(-9223372036854775807LL - 1)"
    assert lit(300, "uint8") == "((uint8)44)" and lit(2.7, "int32") == "2"
    assert lit(1, "bool") == "true" and lit(None, "float32") == "tl_none_t()"
    for v in (0.1, 1 / 3, 1e-40, 3.4028234663852886e38):  # round trip through the C spelling
        text = lit(v, "float32")
        assert np.float32(text.strip("()f")) == np.float32(v)
        assert float(lit(v, "float64").strip("()")) == v


@needs_gxx
def test_constants_in_kernel():
    def build(s, p):
        a = add_op(s, "aten::mul", [p[0], const(s, 0.1)])
        b = add_op(s, "aten::add", [a, const(s, float("inf")), const(s, 1)])
        c = add_op(s, "aten::maximum", [p[0], p[1]])
        d = add_op(s, "aten::sub", [p[1], const(s, -(2 ** 40)), const(s, 1)])
        return [a, b, c, d]
    sub = make_group(2, build)
    for dt in ("float32", "float64"):
        x = np.array([1.0, -0.0, np.nan, 3.0, -2.0, 0.0], dt)
        y = np.array([np.nan, 0.0, 1.0, np.inf, -0.0, -0.0], dt)
        assert_same(run_emulated(sub, [x, y]), interpret(sub, [x, y]), dt)


@needs_gxx
def test_python_scalar_inputs():
    sub = Graph()
    x, s, k = sub.add_input("x", TENSOR), sub.add_input("s"), sub.add_input("k")
    a = add_op(sub, "aten::mul", [x, s])
    b = add_op(sub, "aten::add", [a, k, const(sub, 1)])
    sub.set_outputs([b])
    for args in ([np.arange(6, dtype=np.float32), 0.1, 3], [np.arange(6, dtype=np.int16), 7, -2],
                 [np.arange(6, dtype=np.int32), 2.5, True]):
        assert_same(run_emulated(sub, args), interpret(sub, args))


@needs_nvrtc
@needs_gxx
@pytest.mark.parametrize("dim", [0, 1])
def test_chunks_index_their_input(dim):
    """prim::ConstantChunk becomes a pointer offset (LSTM-cell style gates)."""
    def build(s, p):
        node = s.create("prim::ConstantChunk", [p[0]], [TENSOR] * 4, {"chunks": 4, "dim": dim})
        i, f, g, o = node.outputs
        c = add_op(s, "aten::add", [add_op(s, "aten::mul", [add_op(s, "aten::sigmoid", [f]), p[1]]),
                                    add_op(s, "aten::mul", [add_op(s, "aten::sigmoid", [i]),
                                                            add_op(s, "aten::tanh", [g])]),
                                    const(s, 1)])
        h = add_op(s, "aten::mul", [add_op(s, "aten::sigmoid", [o]), add_op(s, "aten::tanh", [c])])
        return [h, c, o]
    sub = make_group(2, build)
    rng = np.random.default_rng(0)
    gates = rng.standard_normal((8, 12) if dim == 0 else (3, 16)).astype(np.float32)
    cx = rng.standard_normal((2, 12) if dim == 0 else (3, 4)).astype(np.float32)
    spec = analyze(sub, signature_of([gates, cx]))
    src = emulated_backend().generate(spec)
    assert src.info["path"] == ("contig" if dim == 0 else "strided")
    assert nvrtc_compile(src.source)[1] == ""
    assert_same(run_emulated(sub, [gates, cx], src),
                interpret(sub, [gates, cx]))


@needs_nvrtc
@needs_gxx
@pytest.mark.parametrize("bias_shape", [(16,), (3, 1)])
def test_broadcasting_chunk_chunks_or_passes_each_input(bias_shape):
    """prim::BroadcastingChunk (chunk motion): the gates are chunked along dim 1; the bias is
    chunked with them when it spans the dim, passed whole to every chunk when broadcast."""
    def build(s, p):
        node = s.create("prim::BroadcastingChunk", [p[0], p[1]], [TENSOR] * 8,
                        {"chunks": 4, "dim": 1})
        g, b = node.outputs[:4], node.outputs[4:]
        i, f, z, o = (add_op(s, "aten::add", [g[k], b[k], const(s, 1)]) for k in range(4))
        c = add_op(s, "aten::add", [add_op(s, "aten::mul", [add_op(s, "aten::sigmoid", [f]), p[2]]),
                                    add_op(s, "aten::mul", [add_op(s, "aten::sigmoid", [i]),
                                                            add_op(s, "aten::tanh", [z])]),
                                    const(s, 1)])
        h = add_op(s, "aten::mul", [add_op(s, "aten::sigmoid", [o]), add_op(s, "aten::tanh", [c])])
        return [h, c]
    sub = make_group(3, build)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal(shape).astype(np.float32) for shape in ((3, 16), bias_shape, (3, 4))]
    spec = analyze(sub, signature_of(args))
    src = emulated_backend().generate(spec)
    assert nvrtc_compile(src.source)[1] == ""
    assert_same(run_emulated(sub, args, src), interpret(sub, args))


# -- dtypes numpy lacks: bfloat16 as uint16 bit patterns ----------------------------------------

def bf16_bits(x):
    u = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(x), np.uint16(0x7FC0), r)


def bf16_value(bits):
    return (np.asarray(bits, np.uint32) << 16).view(np.float32)


@needs_nvrtc
@needs_gxx
def test_bfloat16():
    def build(s, p):
        a = add_op(s, "aten::mul", [p[0], p[1]])
        b = add_op(s, "aten::tanh", [a])
        c = add_op(s, "aten::maximum", [p[0], p[1]])
        d = s.create("aten::to", [b, const(s, 6)], [TENSOR]).output()
        return [a, b, c, d]
    sub = make_group(2, build)
    x = bf16_bits(np.array([1.5, -2.25, np.nan, 0.3, np.inf, -0.0, 100.0, 3.0, 7.0], np.float32))
    y = bf16_bits(np.array([2.0, 0.5, 1.0, -0.7, 1.0, 5.0, 0.01, np.nan, -1.0], np.float32))
    sig = tuple(ArraySpec("bfloat16", (9,), (2,), "C", True, "numpy") for _ in range(2))
    spec = analyze(sub, sig)
    src = emulated_backend().generate(spec)
    assert "__nv_bfloat16" in src.source and src.info["vector"] == 4
    assert nvrtc_compile(src.source)[1] == ""
    got = run_emulated(sub, [x, y], src, signature=sig)
    ref = interpret(sub, [bf16_value(x), bf16_value(y)])
    for k in range(3):  # bfloat16 outputs (uint16 bits): the reference rounded once
        assert got[k].dtype == np.uint16
        np.testing.assert_allclose(bf16_value(got[k]), bf16_value(bf16_bits(ref[k])),
                                   rtol=1e-2, atol=1e-6, equal_nan=True)
    assert got[3].dtype == np.float32
    np.testing.assert_array_equal(got[3], bf16_value(got[1]))


# -- errors, index width, argument limits ---------------------------------------------------------

@needs_gxx
def test_integer_division_by_zero_sets_the_flag():
    sub = make_group(2, lambda s, p: [add_op(s, "aten::floor_divide", [p[0], p[1]]),
                                      add_op(s, "aten::remainder", [p[0], p[1]])])
    x = np.arange(-6, 6, dtype=np.int32)
    ok = np.array([3, -1, 2] * 4, np.int32)
    src = emulated_backend().generate(analyze(sub, signature_of([x, ok])))
    assert "int* __restrict__ err" in src.source and "atomicExch(err, 1)" in src.source
    assert_same(run_emulated(sub, [x, ok]), interpret(sub, [x, ok]))
    with pytest.raises(IntegerDivisionByZeroError):
        run_emulated(sub, [x, np.where(x == 4, 0, ok).astype(np.int32)])


@needs_gxx
@pytest.mark.parametrize("divisor,dtype,flag", [(1000, "int32", False), (-3, "int32", False),
                                               (0, "int32", True), (256, "int8", True)])
def test_constant_divisor_needs_no_flag(divisor, dtype, flag):
    """A nonzero constant divisor cannot divide by zero: the kernel takes no flag, so a GPU
    launcher need not read one back (a synchronization per call); a zero constant keeps it,
    and so does 256 meeting int8 (it wraps to 0)."""
    sub = make_group(1, lambda s, p: [
        add_op(s, "aten::floor_divide", [p[0], const(s, divisor)]),
        add_op(s, "aten::remainder", [p[0], const(s, divisor)]),
        add_op(s, "aten::fmod", [p[0], const(s, divisor)]),
        add_op(s, "aten::div", [p[0], const(s, divisor), const(s, "trunc")])])
    x = np.arange(-5000, 5000, 7).astype(dtype)
    src = emulated_backend().generate(analyze(sub, signature_of([x])))
    assert src.info.uses_err is flag and ("int* __restrict__ err" in src.source) is flag
    if flag:
        with pytest.raises(IntegerDivisionByZeroError):
            run_emulated(sub, [x], src)
    else:
        assert_same(run_emulated(sub, [x], src), interpret(sub, [x]))

@needs_gxx
def test_executor_runs_emulated_kernels_strictly(emulated_as_cuda):
    """Wired as the fuser's "cuda" backend (numpy arrays, strict mode): the executor compiles
    and runs the kernel, and a zero divisor raises IntegerDivisionByZeroError naming the node."""
    outer = Graph()
    a, b = outer.add_input("a", TENSOR), outer.add_input("b", TENSOR)
    sub = make_group(2, lambda s, p: [add_op(s, "aten::div", [p[0], p[1], const(s, "floor")])])
    node = outer.create("prim::FusionGroup", [a, b], [TENSOR], {"Subgraph": sub})
    outer.set_outputs(node.outputs)
    x = np.arange(12, dtype=np.int64).reshape(3, 4).T
    y = np.array([2, -3, 5], np.int64)
    got = executor.run_fusion_group(node, np, [x, y])
    np.testing.assert_array_equal(got[0], x // y)
    with pytest.raises(IntegerDivisionByZeroError, match="division by zero"):
        executor.run_fusion_group(node, np, [x, np.array([2, 0, 5], np.int64)])


@pytest.fixture
def emulated_as_cuda():
    """The emulator registered as the fuser's "cuda" backend, strict mode on."""
    with use_emulator_as_cuda(strict=True):
        yield


@needs_nvrtc
@needs_gxx
def test_corpus_through_emulated_kernels(emulated_as_cuda):
    """PyTorch's corpus graphs, fused, as CUDA kernels: ``codegen(..., backend="cuda")`` gives
    their sources (all compile with NVRTC, warning-free), and running them in strict mode
    reproduces PyTorch's outputs."""
    from corpus_utils import CASES, assert_matches, flatten_outputs, graph_text, input_sets

    from torchlike import jit
    from torchlike.fuser.stats import reset_stats, stats
    from torchlike.ir import parse_graph
    runs, sources = [], []
    for case in CASES:
        if not (CORPUS / case / "scripted.txt").exists():
            continue
        graph = jit.fuse(parse_graph(graph_text(case, "scripted")))
        for label, args, expected in input_sets(case):
            try:
                sources += jit.codegen(graph, *args, backend="cuda")
            except Exception as e:  # a group no kernel expresses: interpreted, not compiled
                runs.append((case, label, graph, args, expected, str(e)))
                continue
            runs.append((case, label, graph, args, expected, None))
    assert len(sources) >= 20
    build_emulated(sources)
    for s in {s.source for s in sources}:
        assert nvrtc_compile(s)[1] == ""
    compiled = 0
    for case, label, graph, args, expected, why in runs:
        config.set_strict(why is None)
        reset_stats()
        out = flatten_outputs(jit.run(graph, *args))
        for k, got in enumerate(out):
            assert_matches(got, expected[f"out{k}"], f"{case}/{label} out{k}")
        compiled += why is None and stats()["fallbacks"] == {}
    print(f"{compiled} of {len(runs)} corpus runs compiled:",
          [(r[0], r[5][:80]) for r in runs if r[5]])
    assert compiled >= len(runs) * 3 // 4


@needs_nvrtc
def test_64bit_indexing_choice():
    sub = make_group(2, lambda s, p: [add_op(s, "aten::add", [p[0], p[1], const(s, 1)])])

    def sig(shape, strides):
        return tuple(ArraySpec("float32", shape, strides, "A", True, "numpy") for _ in range(2))
    small = analyze(sub, sig((4, 5), (4, 80)))
    big = analyze(sub, sig((2 ** 16, 2 ** 15 + 1), (8, 2 ** 19)))       # > 2**31 elements
    far = analyze(sub, sig((2, 3), (8, 2 ** 33)))                      # offsets > 2**31
    assert layout.plan(small).index_bits == 32
    assert layout.plan(big).index_bits == 64 and layout.plan(far).index_bits == 64
    be = emulated_backend()
    assert be.kernel_key(small) != be.kernel_key(big)
    assert be.kernel_key(big) == be.kernel_key(far)  # sizes alone never recompile
    src = be.generate(big)
    assert "unsigned long long i" in src.source and "long long st" in src.source
    assert nvrtc_compile(src.source)[1] == ""


@needs_gxx
def test_64bit_variant_runs(monkeypatch):
    """The 64-bit variant's code, run on small arrays by lowering the threshold."""
    monkeypatch.setattr(layout, "INT32_MAX", 7)
    sub = make_group(2, lambda s, p: [add_op(s, "aten::mul", [p[0], p[1]])])
    x = np.arange(30, dtype=np.float64).reshape(5, 6)[:, ::2]
    y = np.arange(3, dtype=np.float64)
    spec = analyze(sub, signature_of([x, y]))
    src = emulated_backend().generate(spec)
    assert src.info["index_bits"] == 64
    np.testing.assert_array_equal(run_emulated(sub, [x, y], src)[0], x * y)


@needs_nvrtc
@needs_gxx
def test_argument_limit_uses_a_pointer_table():
    """A group whose parameters would pass 4 KB reads them from one device table instead."""
    n_in = 130

    def build(s, p):
        acc = p[0]
        for q in p[1:]:
            acc = add_op(s, "aten::add", [acc, q, const(s, 1)])
        return [acc]
    sub = make_group(n_in, build)
    rng = np.random.default_rng(1)
    args = [rng.standard_normal((4, 3, 4)).astype(np.float32)[:, :, ::2].transpose(2, 0, 1)
            for _ in range(n_in)]  # strided (not dense in any order): sizes and strides travel
    spec = analyze(sub, signature_of(args))
    p = layout.plan(spec)
    assert p.table and 8 * p.param_count() > layout.MAX_PARAM_BYTES
    src = emulated_backend().generate(spec)
    assert "const long long* __restrict__ tl_table" in src.source
    assert nvrtc_compile(src.source)[1] == ""
    assert_same(run_emulated(sub, args, src), interpret(sub, args))
    # forced on a small group too (scalars and err travel correctly)
    small = EmulatedCudaBackend(max_param_bytes=16)
    sub2 = make_group(2, lambda s, p: [add_op(s, "aten::remainder", [p[0], p[1]])])
    x, y = np.arange(-6, 6, dtype=np.int16).reshape(3, 4).T, np.array([3, -2, 5], np.int16)
    assert_same(run_emulated(sub2, [x, y], backend=small), interpret(sub2, [x, y]))
    with pytest.raises(IntegerDivisionByZeroError):
        run_emulated(sub2, [x, np.array([3, 0, 5], np.int16)], backend=small)


def test_every_elementwise_op_has_its_cuda_template():
    """DESIGN.md: an op is one registry entry.  Every elementwise entry carries a ``cuda``
    template, and it renders (no dtype left without text) for every compute dtype."""
    from torchlike.ops.elementwise_base import pick_template
    ew = ops.registry.elementwise_ops()
    assert len(ew) >= 86
    missing = [op.name for op in ew if op.templates.get("cuda") is None]
    assert missing == []
    for op in ew:
        for dt in ("bool", "uint8", "int8", "int16", "int32", "int64", "float32", "float64"):
            text = pick_template(op.templates["cuda"], dt, {})
            assert text and "np." not in text and "{T}" not in text, (op.name, dt, text)


@needs_nvrtc
def test_real_cuda_backend_generates_without_a_gpu():
    """``codegen(..., backend="cuda")`` is the real CuPy backend's CUDA C, from numpy inputs, on
    any machine; without a GPU, running with backend "cuda" falls back (counted) or, strictly,
    raises FusionError."""
    from torchlike import jit
    from torchlike.cuda_backend.runtime import CudaBackend
    from torchlike.errors import FusionError
    from torchlike.fuser.stats import reset_stats, stats
    from torchlike.ir import parse_graph
    be = fb.get_backend_impl("cuda")
    assert isinstance(be, CudaBackend)
    graph = jit.fuse(parse_graph("""graph(%x : Float(4, 8), %y : Float(8)):
  %one : int = prim::Constant[value=1]()
  %a : Float(4, 8) = aten::sigmoid(%x)
  %b : Float(4, 8) = aten::mul(%a, %y)
  %c : Float(4, 8) = aten::sub(%b, %x, %one)
  return (%c)"""))
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8)
    y = np.linspace(1, 2, 8, dtype=np.float32)
    (src,) = jit.codegen(graph, x, y, backend="cuda")
    assert src.key[0] == "cuda" and 'extern "C" __global__' in src.source
    assert f" {src.name}(" in src.source
    assert "tl_sigmoid(" in src.source
    assert nvrtc_compile(src.source)[1] == ""
    if be.available()[0]:
        return  # a GPU is here: test_cuda_gpu.py runs the kernels
    expected = 1 / (1 + np.exp(-x)) * y - x
    try:
        config.set_backend("cuda")
        reset_stats()
        np.testing.assert_allclose(jit.run(graph, x, y), expected, rtol=1e-6)
        (reason, count), = stats()["fallbacks"].items()
        assert reason.startswith("backend unavailable: cuda: ") and count == 1
        config.set_strict(True)
        executor.clear_caches()
        with pytest.raises(FusionError, match="strict mode.*backend unavailable: cuda"):
            jit.run(graph, x, y)
    finally:
        config.set_strict(False)
        config.set_backend("auto")
        executor.clear_caches()


@needs_nvrtc
@needs_nvcc
def test_compile_errors_are_typed():
    with pytest.raises(CudaCompileError, match="NVRTC") as e:
        nvrtc_compile('extern "C" __global__ void k() { undefined_thing(); }')
    assert "undefined_thing" in e.value.log
    with pytest.raises(CudaCompileError):  # a warning is an error for nvcc
        nvcc_compile('extern "C" __global__ void k(int* p) { int unused; p[0] = 1; }', "sm_80")


@needs_nvrtc
def test_cuda_images_keep_subnormals_and_are_cached(tmp_path):
    """The real backend compiles with NVRTC itself (CuPy's RawModule appends -ftz=true, which
    flushed 0.5 / 1e-38 to inf on a GPU): the PTX divides with ``div.rn.f32``, no ``.ftz``
    anywhere, and ``a * b + c`` is not contracted into an FMA (the interpreter's rounding).  Images are cached on disk behind a SHA-256: the second build is a hit, and a
    corrupt or truncated file is rebuilt, never handed to the driver."""
    from torchlike import jit
    from torchlike.cuda_backend.runtime import build_image, image_path, nvrtc_target
    from torchlike.ir import parse_graph
    assert nvrtc_target(90, [80, 90, 100]) == "sm_90"
    assert nvrtc_target(95, [80, 90, 100]) == "compute_90"  # newer than NVRTC: PTX for the driver
    graph = jit.fuse(parse_graph("""graph(%x : Tensor, %y : Tensor):
  %a : Tensor = aten::div(%x, %y)
  %b : Tensor = aten::sqrt(%a)
  %c : Tensor = aten::mul(%b, %y)
  %one : int = prim::Constant[value=1]()
  %d : Tensor = aten::add(%c, %x, %one)
  return (%d)"""))
    x = np.array([0.5, 1e-38, 3.0, 1e-45], np.float32)
    (src,) = jit.codegen(graph, x, x, backend="cuda")
    saved = config.cache_dir()
    config.set_cache_dir(tmp_path)
    try:
        ptx, hit = build_image(src, "compute_90")
        text = ptx.rstrip(b"\0").decode()
        assert not hit and ptx.endswith(b"\0")
        assert "div.rn.f32" in text and "sqrt.rn.f32" in text and ".ftz" not in text
        assert "mul.rn.f32" in text and "fma." not in text  # b * y + x: two roundings
        cubin, hit = build_image(src, "sm_90")
        assert not hit and cubin[:4] == b"\x7fELF"
        assert build_image(src, "sm_90") == (cubin, True)
        from cupy.cuda import nvrtc
        path = image_path(src, "sm_90", nvrtc.getVersion())
        assert path.endswith(".cubin") and path.startswith(str(tmp_path))
        flip = lambda b: b[:40] + bytes([b[40] ^ 1]) + b[41:]  # one bit of the image
        for damage in (lambda b: b[:-100], flip, lambda b: b""):
            with open(path, "rb") as f:
                blob = f.read()
            with open(path, "wb") as f:
                f.write(damage(blob))
            assert build_image(src, "sm_90") == (cubin, False)
        assert build_image(src, "sm_90") == (cubin, True)
    finally:
        config.set_cache_dir(saved)
