"""CUDA row-reduction kernels (``cuda_backend.row_codegen``) without a GPU.

Each kernel's exact source runs on the CPU through the emulator (``shim.h``: the threads of a
block are fibers; ``__syncthreads``, ``__shfl_*_sync`` and ``__shared__`` behave as on a GPU,
and misuse is an error), with both teams forced -- a warp per row and a block (3 warps) per
row -- over row lengths 1..4097 and several row counts, against the interpreter (and PyTorch
where it is installed), NaN/inf rows included.  Representative kernels compile with NVRTC
(empty log) and with nvcc for sm_80 and sm_90, where ``ptxas -v`` must show no spills, no
stack frame and no local memory.  Running kernels needs g++; compiling them NVRTC or nvcc:
a user without one skips those tests, the reason naming it (CI has all of them).
"""
import shutil

import numpy as np
import pytest
from differential import IN_CI, backend_missing, nvrtc_missing
from test_fused_reductions import (
    LAYER_NORM_STATS,
    RMS_NORM,
    SOFTMAX_MANUAL,
    close,
    data,
    interpreted,
    reduction_graph,
    reductions_inside,
    special_rows,
)

from torchlike.cuda_backend import row_codegen
from torchlike.cuda_backend.compiler import nvrtc_compile, ptxas_usage
from torchlike.cuda_backend.emulate import (
    EmulatedCudaBackend,
    EmulationError,
    _HostDevice,
    build_many,
)
from torchlike.cuda_backend.row_codegen import CudaRowKernelInfo
from torchlike.fuser import backend as fb
from torchlike.fuser import config, executor
from torchlike.fuser.backend import KernelSource, analyze, signature_of
from torchlike.fuser.partition import fuse
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

pytestmark = [pytest.mark.slow,
              pytest.mark.filterwarnings("ignore:.*degrees of freedom:UserWarning")]

NO_GXX = backend_missing("cuda-emulated")
NO_NVRTC = nvrtc_missing()
NO_NVCC = None if shutil.which("nvcc") else "needs nvcc (the CUDA toolkit) on PATH"
needs_gxx = pytest.mark.skipif(bool(NO_GXX) and not IN_CI, reason=str(NO_GXX))
needs_nvrtc = pytest.mark.skipif(bool(NO_NVRTC) and not IN_CI, reason=str(NO_NVRTC))
needs_nvcc = pytest.mark.skipif(bool(NO_NVCC) and not IN_CI, reason=str(NO_NVCC))

LENGTHS = (1, 7, 32, 33, 1000, 4097)
TEAMS = ("warp", "block")
# kind, keepdim, epilogue: every reduction, keepdim both ways, producers (x * 0.5) everywhere
KINDS = [("aten::sum", True, "sub"), ("aten::sum", False, "exp"), ("aten::mean", False, "exp"),
         ("aten::mean", True, "sub"), ("aten::amax", True, "sub"), ("aten::amin", False, ""),
         ("aten::softmax", True, ""), ("aten::log_softmax", True, ""), ("aten::var", True, "sub"),
         ("aten::std", False, ""), ("aten::logsumexp", True, "sub"),
         ("aten::logsumexp", False, "")]


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    yield
    config.set_cache_dir(None)


def group_of(graph):
    fused = fuse(graph)
    reductions_inside(fused)
    (node,) = [n for n in fused.nodes if n.kind == "prim::FusionGroup"]
    return node.attrs["Subgraph"]


def run_rows(sub, args, team, order="forward", source=None, launches=None):
    """``sub`` as the emulated CUDA row kernel, its ``team`` entry forced; ``launches`` (a
    dict) gets the entry points that ran, with their counts."""
    be = EmulatedCudaBackend(rows={"team": team, "order": order})
    spec = analyze(sub, signature_of(args))
    assert be.check(spec) is None and spec.rows is not None
    src = source or be.generate(spec)
    assert isinstance(src.info, CudaRowKernelInfo)
    kernel = be.compile(src)
    with np.errstate(all="ignore"):
        out = kernel.bind(spec, None)(list(args))
    if launches is not None:
        for entry, calls in kernel.device.launches.items():
            launches[entry] = launches.get(entry, 0) + calls
    return out




@pytest.fixture(scope="module")
def kind_kernels():
    """Every (kind, keepdim, epilogue) x dtype kernel generated; ONE g++ library for all.
    Generated for rows of 1000 (whole-warp teams) and run on every length: a kernel computes
    any row length, only its speed depends on the one it was made for."""
    out, sources = {}, []
    for kind, keep, post in KINDS:
        graph = parse_graph(reduction_graph(kind, keepdim=keep, pre="mul", post=post))
        sub = group_of(graph)
        for dtype in ("float32", "float64", "float16"):
            x = data((3, 1000), dtype)
            spec = analyze(sub, signature_of([x]))
            be = EmulatedCudaBackend()
            assert be.check(spec) is None, (kind, dtype)
            src = be.generate(spec)
            out[kind, keep, post, dtype] = (graph, sub, src)
            sources.append(src)
    if not NO_GXX:
        build_many(sources)
    return out


@needs_gxx
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("kind,keepdim,post", KINDS)
def test_reduction_matches_interpreter(kind_kernels, kind, keepdim, post, dtype):
    graph, sub, src = kind_kernels[kind, keepdim, post, dtype]
    for rows in (1, 3, 5):
        for n in LENGTHS:
            if (rows * n > 12000 and rows > 1) or rows * n == 1:
                continue  # one element: plan_rows calls the input uniform (the group splits)
            x = data((rows, n), dtype, seed=rows + n)
            want = interpreted(sub, x)
            for team in TEAMS:
                got = run_rows(sub, [x], team, source=src)
                for g, w in zip(got, want, strict=True):
                    close(g, w, dtype, f"{kind} {dtype} {team} {(rows, n)}")


@needs_gxx
def test_vector_entries_run_where_aligned(kind_kernels):
    """A row length that is a multiple of the vector width runs the ``_vec`` twin (the
    launcher's choice, seen in the bound entry); 33 runs the scalar one; both agree."""
    graph, sub, src = kind_kernels["aten::softmax", True, "", "float32"]
    assert src.info.vector == 4 and any(e.endswith("_block_vec") for e in src.info.entries)
    assert "tl_vec<float32, 4>" in src.source
    graph, sub, src = kind_kernels["aten::softmax", True, "", "float16"]
    assert src.info.vector == 8 and "tl_vec<__half, 8>" in src.source
    calls = []
    be = EmulatedCudaBackend(rows={"team": "block"})
    for n in (32, 33):
        x = data((3, n), "float16")
        spec = analyze(sub, signature_of([x]))
        be.check(spec)
        kernel = be.compile(src)
        real = kernel.device.launch_rows
        kernel.device.launch_rows = lambda e, *a, real=real: (calls.append(e), real(e, *a))
        (got,) = kernel.bind(spec, None)([x])
        close(got, interpreted(sub, x)[0], "float16")
    assert calls[0].endswith("_block_vec") and calls[1].endswith("_block"), calls


@needs_gxx
@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
def test_warp_vector_entry_keeps_rows_in_registers(kind_kernels, dtype):
    """The warp's ``_vec`` entry reads a row's per-element input once into registers (its
    first WARP_MAX_N elements; float64 rows stay in memory: over the budget) and every pass
    reuses them; a longer row forced onto a warp reads the rest from memory."""
    from torchlike.cuda_backend.row_codegen import CACHE_BYTES
    from torchlike.cuda_backend.row_launch import WARP_MAX_N
    calls = {}
    for kind, keep, post in (("aten::softmax", True, ""), ("aten::var", True, "sub"),
                             ("aten::logsumexp", True, "sub")):
        graph, sub, src = kind_kernels[kind, keep, post, dtype]
        cached = 32 * np.dtype(dtype).itemsize <= CACHE_BYTES
        assert ("C0[k]" in src.source) is cached
        be = EmulatedCudaBackend(rows={"team": "warp"})
        for n in (64, WARP_MAX_N, 2 * WARP_MAX_N + 8 * 4):
            x = data((3, n), dtype, seed=n)
            spec = analyze(sub, signature_of([x]))
            be.check(spec)
            kernel = be.compile(src)
            with np.errstate(all="ignore"):
                got = kernel.bind(spec, None)([x])
            for g, w in zip(got, interpreted(sub, x), strict=True):
                close(g, w, dtype, f"{kind} {dtype} {n}")
            calls.update(kernel.device.launches)
    assert calls and all(e.endswith("_warp_vec") for e in calls), calls


@needs_gxx
@pytest.mark.parametrize("team", TEAMS)
def test_special_values_rows(kind_kernels, team):
    """NaN, +-inf and all-inf rows propagate as in the interpreter (PyTorch's rules)."""
    x = special_rows((7, 33))
    for (kind, _keep, _post, dtype), (_graph, sub, src) in kind_kernels.items():
        if dtype != "float32":
            continue
        want = interpreted(sub, x)
        got = run_rows(sub, [x], team, source=src)
        for g, w in zip(got, want, strict=True):
            close(g, w, "float32", f"{kind} {team}")


@needs_gxx
@pytest.mark.parametrize("order", ["reverse", "alternate", "skewed", "skewed-reverse"])
def test_thread_schedules_agree(kind_kernels, order):
    """The answer does not depend on the order the emulator runs the fibers in."""
    for key in [("aten::softmax", True, "", "float32"), ("aten::var", True, "sub", "float64"),
                ("aten::sum", False, "exp", "float32")]:
        graph, sub, src = kind_kernels[key]
        x = data((5, 257), key[3])
        for team in TEAMS:
            got = run_rows(sub, [x], team, order, source=src)
            close(got[0], interpreted(sub, x)[0], key[3], f"{key} {team} {order}")


# -- composites through the executor: the fused CUDA kernel ran --------------------------------

def _team_backend(team):
    class Forced(EmulatedCudaBackend):
        def __init__(self):
            super().__init__(rows={"team": team})
    return Forced


def run_compiled(fused, *args):
    """The fused graph through the executor (strict, backend "cuda" = the emulator): every
    group ran as a compiled row kernel -- no fallback, no split, each launch a kernel-cache
    lookup, and the kernel bound is a row kernel whose entries ran."""
    from torchlike import jit
    launches, entries = [], []

    def counting(node, xp, a):
        launches.append(node)
        return executor.run_fusion_group(node, xp, a)

    executor.clear_caches()
    jit.reset_stats()
    real = _HostDevice.launch_rows
    _HostDevice.launch_rows = lambda self, e, *a: (entries.append(e), real(self, e, *a))[1]
    try:
        with np.errstate(all="ignore"):
            out = Interpreter(fused, fusion_runner=counting).run(*args)
    finally:
        _HostDevice.launch_rows = real
    s = jit.stats()
    assert s["fallbacks"] == {} and s["groups_split"] == 0, s
    assert launches and s["cache_hits"] + s["cache_misses"] == len(launches), s
    assert len(entries) == len(launches) and all(e.startswith("tl_rows_") for e in entries)
    return out if isinstance(out, tuple) else (out,)


@pytest.fixture(params=TEAMS)
def emulated_cuda(request):
    """The emulator registered as the fuser's "cuda" backend (``run_compiled``: strict)."""
    saved = fb.BACKENDS.get("cuda"), config.get_backend(), config.strict()
    fb.register_backend("cuda", _team_backend(request.param))
    config.set_backend("cuda")
    config.set_strict(True)
    yield request.param
    config.set_strict(saved[2])
    config.set_backend(saved[1])
    fb.register_backend("cuda", saved[0]) if saved[0] else fb.BACKENDS.pop("cuda", None)
    fb._instances.pop("cuda", None)
    executor.clear_caches()


@needs_gxx
@pytest.mark.parametrize("dtype", ["float32", "float16"])
def test_composites_run_as_one_cuda_kernel(emulated_cuda, dtype):
    """softmax by hand, RMS norm, layer norm with a per-row output: one fusion group each,
    run by the executor as the emulated CUDA kernel (strict: no fallback, no split)."""
    from torchlike import jit
    rng = np.random.default_rng(3)
    for text, n_in in ((SOFTMAX_MANUAL, 1), (RMS_NORM, 2), (LAYER_NORM_STATS, 3)):
        graph = parse_graph(text)
        fused = fuse(graph)
        reductions_inside(fused)
        for shape in [(8, 33), (3, 1024), (2, 4097)]:
            args = [data(shape, dtype)] + [rng.standard_normal(shape[-1:]).astype(dtype)
                                           for _ in range(n_in - 1)]
            got = run_compiled(fused, *args)
            s = jit.stats()
            assert s["cache_misses"] + s["cache_hits"] == 1, s  # one group, one kernel
            assert any(n.kind.endswith("softmax") or n.kind == "aten::mean" or
                       n.kind == "aten::amax" for n in graph.nodes)
            for g, w in zip(got, interpreted(graph, *args), strict=True):
                close(g, w, dtype, f"{text.splitlines()[-1]} {shape} {emulated_cuda}")


@needs_gxx
def test_two_trailing_dims_rowvec_perrow_and_scalars(emulated_cuda):
    """A row of the last two dims; a weight broadcast over the rows, a per-row input
    (keepdim shape) and a Python scalar in the producers and the epilogue."""
    graph = parse_graph(reduction_graph("aten::mean", dim=[-2, -1], keepdim=True, post="sub"))
    x = data((4, 5, 6), "float32")
    (got,), (want,) = run_compiled(fuse(graph), x), interpreted(graph, x)
    close(got, want, "float32")
    text = """graph(%x : Tensor, %w : Tensor, %p : Tensor, %s : float):
  %none : NoneType = prim::Constant()
  %keep : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%m1)
  %a : Tensor = aten::mul(%x, %w)
  %b : Tensor = aten::add(%a, %p, %one)
  %t : Tensor = aten::sum(%b, %dims, %keep, %none)
  %u : Tensor = aten::mul(%t, %s)
  %y : Tensor = aten::sub(%b, %u, %one)
  return (%y, %u)"""
    graph = parse_graph(text)
    args = [data((6, 40), "float32"), data((40,), "float32", 1), data((6, 1), "float32", 2), 0.25]
    got, want = run_compiled(fuse(graph), *args), interpreted(graph, *args)
    for g, w in zip(got, want, strict=True):
        close(g, w, "float32")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_against_pytorch(dtype):
    torch = pytest.importorskip("torch")
    if NO_GXX:
        pytest.skip(NO_GXX)
    fns = {"aten::softmax": lambda x: torch.softmax(x, -1),
           "aten::log_softmax": lambda x: torch.log_softmax(x, -1),
           "aten::logsumexp": lambda x: torch.logsumexp(x, -1, keepdim=True),
           "aten::var": lambda x: torch.var(x, -1, keepdim=True),
           "aten::std": lambda x: torch.std(x, -1, keepdim=True),
           "aten::amax": lambda x: torch.amax(x, -1, keepdim=True)}
    for kind, fn in fns.items():
        sub = group_of(parse_graph(reduction_graph(kind)))
        for shape in [(4, 7), (3, 1000), (2, 4097)]:
            x = data(shape, dtype, seed=shape[-1])
            want = fn(torch.from_numpy(x)).numpy()
            for team in TEAMS:
                (got,) = run_rows(sub, [x], team)
                close(got, want, dtype, f"{kind} {shape} {team}")


# -- compiled for real GPUs: NVRTC, nvcc, ptxas -v ------------------------------------------------

def representative_sources(n=64):
    """softmax (f32), log_softmax (f16), logsumexp (f64), var (f32), layer norm with stats
    (f32, f16), RMS norm (f32) over rows of ``n``: each a module of four entries (warp, block,
    and _vec twins; the warp _vec entry's register cache is sized to ``n``); a group norm's
    rows with a block input (f32): warp and block entries."""
    out = []
    for kind, dtype in (("aten::softmax", "float32"), ("aten::log_softmax", "float16"),
                        ("aten::logsumexp", "float64"), ("aten::var", "float32")):
        sub = group_of(parse_graph(reduction_graph(kind, pre="mul", post="")))
        spec = analyze(sub, signature_of([data((2, n), dtype)]))
        be = EmulatedCudaBackend()
        assert be.check(spec) is None
        out.append(be.generate(spec).source)
    for text, n_in, dtype in ((LAYER_NORM_STATS, 3, "float32"), (LAYER_NORM_STATS, 3, "float16"),
                              (RMS_NORM, 2, "float32")):
        sub = group_of(parse_graph(text))
        args = [data((2, n), dtype)] + [data((n,), dtype) for _ in range(n_in - 1)]
        spec = analyze(sub, signature_of(args))
        be = EmulatedCudaBackend()
        assert be.check(spec) is None
        out.append(be.generate(spec).source)
    # a group norm's rows (N, G, C/G, HW) with its per-channel weight (G, C/G, 1): a block input
    sub = group_of(parse_graph(GROUP_ROWS))
    spec = analyze(sub, signature_of([data((2, 4, 2, 16), "float32"), data((4, 2, 1), "float32")]))
    be = EmulatedCudaBackend()
    assert be.check(spec) is None and "block" in spec.rows.inputs
    out.append(be.generate(spec).source)
    return out


GROUP_ROWS = """graph(%x : Tensor, %w : Tensor):
  %dims : int[] = prim::Constant[value=[-2, -1]]()
  %t : bool = prim::Constant[value=1]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %m : Tensor = aten::mean(%x, %dims, %t, %none)
  %v : Tensor = aten::var(%x, %dims, %f, %t)
  %d : Tensor = aten::sub(%x, %m, %one)
  %r : Tensor = aten::rsqrt(%v)
  %y0 : Tensor = aten::mul(%d, %r)
  %y : Tensor = aten::mul(%y0, %w)
  return (%y)
"""


@needs_nvrtc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_nvrtc_compiles_row_kernels(arch):
    for s in representative_sources():
        assert nvrtc_compile(s, arch)[1] == ""


@needs_nvcc
@pytest.mark.parametrize("n", [64, 1024])
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptxas_no_spills_no_local_memory(arch, n):
    """nvcc -Werror, ``ptxas -v``: every entry of every representative kernel uses no local
    memory (0-byte stack frame, no spill stores or loads, no lmem), with the smallest and the
    largest register cache (rows of 64 and 1024)."""
    usage = ptxas_usage("\n".join(representative_sources(n)), arch)
    assert len(usage) == 7 * 4 + 2, sorted(usage)  # the block input's kernel: scalar entries
    for entry, u in usage.items():
        assert u["spill_stores"] == u["spill_loads"] == 0, (entry, u)
        assert u["stack"] == 0 and u["lmem"] == 0, (entry, u)
        assert 0 < u["registers"] <= 128, (entry, u)  # __launch_bounds__(512)
        assert u["smem"] <= 2 * 32 * 8 * 2 if entry.endswith(("_block", "_block_vec")) \
            else u["smem"] == 0, (entry, u)
    print(arch, {e[-9:]: (u["registers"], u["smem"]) for e, u in usage.items()})


# -- the emulator catches barrier and shuffle mistakes -------------------------------------------

@needs_gxx
def test_missing_barrier_fails_in_emulation(kind_kernels):
    """Dropping the block all-reduce's __syncthreads, or the alternation of the shared
    buffer a one-reduction kernel needs, gives wrong answers in at least one schedule (the
    second only when one warp runs ahead into the next row: the skewed schedules)."""
    graph, sub, src = kind_kernels["aten::sum", True, "sub", "float32"]
    x = data((6, 300), "float32")
    want = interpreted(sub, x)[0]
    barrier = "  if ((threadIdx.x & 31u) == 0) sh[threadIdx.x >> 5] = v;\n  __syncthreads();\n"
    assert barrier in src.source and "tl_par ^= 1u;" in src.source
    for broken in (src.source.replace(barrier, barrier.replace("__syncthreads();", "")),
                   src.source.replace("tl_par ^= 1u;", "")):
        bad = KernelSource(src.name, broken.replace("TL_PRELUDE", "TL_BROKEN_PRELUDE"),
                           src.key, src.info)
        build_many([bad])
        wrong = 0
        for order in ("forward", "reverse", "skewed", "skewed-reverse"):
            (got,) = run_rows(sub, [x], "block", order, source=bad)
            wrong += not np.allclose(got, want, rtol=1e-4, atol=1e-4, equal_nan=True)
        assert wrong, "a missing barrier went unnoticed"


MISUSE = """
extern "C" __global__ void tl_misuse_{name}(float* out, unsigned int R, unsigned int N) {{
  {body}
}}
"""


@needs_gxx
@pytest.mark.parametrize("name,body,error", [
    ("divergent", "if (threadIdx.x < 32) __syncthreads(); out[threadIdx.x] = 1.0f;",
     "__syncthreads"),
    ("partial_shuffle", "float v = 1.0f; if (threadIdx.x & 1) v = __shfl_xor_sync(0xffffffffu, "
     "v, 1); out[threadIdx.x] = v;", "shuffle"),
    ("ok", "float v = (float)threadIdx.x; v += __shfl_down_sync(0xffffffffu, v, 16); "
     "__syncthreads(); out[threadIdx.x] = v;", None)])
def test_emulator_reports_barrier_and_shuffle_misuse(name, body, error):
    src = KernelSource(f"tl_misuse_{name}", MISUSE.format(name=name, body=body), (),
                       CudaRowKernelInfo(entries=(f"tl_misuse_{name}",),
                                         params=(("float*", "out"), ("unsigned int", "R"),
                                                 ("unsigned int", "N"))))
    lib = build_many([src])
    device = _HostDevice(lib, 1, 64, {"block": 64, "grid": 1})
    out = np.zeros(64, np.float32)
    packed = [("Q", out.__array_interface__["data"][0]), ("I", 1), ("I", 1)]
    if error is None:
        device.launch_rows(f"tl_misuse_{name}", packed, "block", 1, 1)
        lane = np.arange(64) % 32
        want = np.arange(64) + np.where(lane < 16, np.arange(64) + 16, np.arange(64))
        np.testing.assert_array_equal(out, want)
    else:
        with pytest.raises(EmulationError, match=error):
            device.launch_rows(f"tl_misuse_{name}", packed, "block", 1, 1)


# -- what the renderer does not know is refused (the executor splits the group) ---------------

def test_unknown_plan_features_are_refused(monkeypatch):
    sub = group_of(parse_graph(reduction_graph("aten::softmax", pre="mul")))
    x = data((5, 7), "float32")
    real = row_codegen.plan_rows

    def with_layout(spec):
        plan = real(spec)
        plan.layout = "columns"
        return plan
    monkeypatch.setattr(row_codegen, "plan_rows", with_layout)
    spec = analyze(sub, signature_of([x]))
    assert "layout" in EmulatedCudaBackend().check(spec) and spec.rows is None
    monkeypatch.setattr(row_codegen, "plan_rows", real)
    spec = analyze(sub, signature_of([x]))
    spec.reductions[0].red = type(spec.reductions[0].red)("aten::prod", (-1,), True)
    assert "aten::prod" in EmulatedCudaBackend().check(spec)
    spec = analyze(sub, signature_of([np.asfortranarray(data((5, 7), "float32"))]))
    assert "non-contiguous" in EmulatedCudaBackend().check(spec)


def test_workloads_of_the_cuda_bench_build():
    """bench/cuda.py's row workloads construct (graph captured, inputs made) without a GPU."""
    from bench.cuda import ROW_LENGTHS, row_workloads
    from bench.workloads import capture, input_rng
    ws = row_workloads()
    names = {w.name.split("/")[0] for w in ws}
    assert names == {"softmax", "log_softmax", "layer_norm", "rms_norm", "logsumexp",
                     "standardize", "mse"}
    assert ROW_LENGTHS == (64, 1024, 32768) and len(ws) == 21
    for w in ws:
        args = w.make_inputs(1 << 12, input_rng(w.name, 12))
        ref = w.ref(np, *args)
        assert np.all(np.isfinite(np.asarray(ref))), w.name
        graph = fuse(capture(w, args).graph)
        reductions_inside(graph)
        with np.errstate(all="ignore"):
            got = Interpreter(graph).run(*args)
        got = got[0] if isinstance(got, tuple) else got
        np.testing.assert_allclose(np.asarray(got, np.float64), np.asarray(ref, np.float64),
                                   rtol=1e-3, atol=1e-4, err_msg=w.name)


@needs_gxx
def test_reductions_the_cuda_kernels_lack_split_with_the_right_answer():
    """Groups the CPU now fuses but the CUDA row kernels do not render -- max.dim with its
    indices used, argmax, a full reduction's indices -- are refused by the CUDA backend and
    run split (the reductions interpreted), with the interpreter's answers."""
    from torchlike import jit
    saved = fb.BACKENDS.get("cuda"), config.get_backend(), config.strict()
    fb.register_backend("cuda", EmulatedCudaBackend)
    config.set_backend("cuda")
    try:
        x = np.random.default_rng(5).standard_normal((6, 9)).astype(np.float32)

        def values_and_indices(x):
            v, i = x.mul(2.0).max(-1)
            return v + 1.0, i

        traced = jit.trace(values_and_indices, (x,))
        jit.reset_stats()
        v, i = traced(x)
        np.testing.assert_allclose(v, (2 * x).max(-1) + 1, rtol=1e-6)
        np.testing.assert_array_equal(i, (2 * x).argmax(-1))
        assert jit.stats()["groups_split"] >= 1 and not jit.stats()["fallbacks"]
    finally:
        config.set_backend(saved[1])
        fb.register_backend("cuda", saved[0]) if saved[0] else fb.BACKENDS.pop("cuda", None)
        fb._instances.pop("cuda", None)
        executor.clear_caches()
