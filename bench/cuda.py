"""The GPU half of the harness (``python -m bench --device cuda``), on CuPy.

Modes (each only where its library is installed and works on this GPU):

======================  ===================================================================
torchlike               the captured workload called on cupy arrays: fused CUDA kernels
interpreter             ``jit.run`` of the same graph on cupy arrays, op by op
cupy                    the workload's ``ref(cupy, ...)``: CuPy eager
cupy.fuse               ``cupy.fuse`` of that function (not every workload fuses: chunk/split)
cupy.ElementwiseKernel  a hand-written ``cupy.ElementwiseKernel`` (``KERNELS`` below)
torch                   PyTorch eager on CUDA tensors sharing the cupy arrays' memory
torch.compile           ``torch.compile(fn, dynamic=False)`` of the PyTorch version, a fresh
                        function per workload and size, checked to have compiled
                        (``torch_compile.py``; not with ``--quick`` unless ``--modes`` names it)
======================  ===================================================================

Corpus graphs (``corpus:<case>``) have no CuPy versions: their oracle is the interpreter.

Times (``median_s``) are per call over batches of calls launched back to back between two
device events, one sync per batch: the host's work for the next call overlaps this call's
kernel, as in a model's loop.  ``event_median_s`` is one call between two events
(``cupyx.profiler.benchmark``), host launch time included; ``host_median_s`` the host's time
per call.  Inputs rotate over copies; the roofline is a large device-to-device copy measured in
the same run.
Without CuPy or a GPU, ``unavailable_reason()`` says why and ``--device cuda`` exits with 2.
"""
from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Callable, Dict, List, Optional

import numpy as np

from . import common, compile_times
from .timing import FULL, QUICK, TimingPolicy
from .workloads import Workload, affine_chain_expr, capture, select


def unavailable_reason() -> Optional[str]:
    """None when CuPy sees a GPU, else a one-line reason (no traceback)."""
    try:
        import cupy
    except Exception as e:
        return f"CuPy is not installed or does not import ({type(e).__name__}: {e})"
    try:
        if cupy.cuda.runtime.getDeviceCount() < 1:
            return "CuPy sees no CUDA device"
        cupy.empty(1)                   # a driver/runtime mismatch shows up here
        cupy.cuda.Device().synchronize()
    except Exception as e:
        return f"no usable CUDA device ({type(e).__name__}: {str(e).splitlines()[0][:200]})"
    return None


def to_device_cuda(arrays: tuple) -> tuple:
    import cupy
    return tuple(cupy.asarray(x) for x in arrays)


def sync_cuda() -> None:
    import cupy
    cupy.cuda.Device().synchronize()


# -- hand-written ElementwiseKernels ---------------------------------------------------------
# Bodies compute in A (float for float16/float32, double for float64) and store T.

_PREAMBLE = """
template <typename T> struct Acc { typedef float type; };
template <> struct Acc<double> { typedef double type; };
"""
_A = "typedef Acc<T>::type A; "
_SIG = "(A(1) / (A(1) + exp(-({}))))"

_LSTM_TAIL = (f"A i_ = {_SIG.format('gi')}; A f_ = {_SIG.format('gf')}; A g_ = tanh(gg); "
              f"A o_ = {_SIG.format('go')}; A c_ = f_ * (A)c + i_ * g_; "
              "cy = (T)c_; hy = (T)(o_ * tanh(c_));")

KERNELS: Dict[str, tuple] = {   # name -> (in_params, out_params, body)
    "gelu_tanh": ("T x", "T y", _A + "A v = (A)x; y = (T)(A(0.5) * v * (A(1) + tanh("
                  "A(0.7978845608028654) * (v + A(0.044715) * v * v * v))));"),
    "gelu_erf": ("T x", "T y",
                 _A + "A v = (A)x; y = (T)(A(0.5) * v * (A(1) + erf(v * A(0.7071067811865476))));"),
    "silu_swish": ("T x", "T silu, T swish",
                   _A + "A v = (A)x; silu = (T)(v / (A(1) + exp(-v))); "
                   "swish = (T)(v / (A(1) + exp(A(-1.702) * v)));"),
    "softplus_threshold": ("T x", "T y", _A + "A v = (A)x; A b = v * A(2); "
                           "y = (T)(b > A(5) ? v : log1p(exp(b)) / A(2));"),
    "mish": ("T x", "T y", _A + "A v = (A)x; A sp = v > A(20) ? v : log1p(exp(v)); "
             "y = (T)(v * tanh(sp));"),
    "hardswish": ("T x", "T y", _A + "A v = (A)x; "
                  "y = (T)(v * min(max(v + A(3), A(0)), A(6)) / A(6));"),
    "lstm_cell_pointwise": (
        "raw T gates, T c, int32 H", "T hy, T cy",
        _A + "ptrdiff_t row = i / H, j = i % H, base = row * 4 * H + j; "
        "A gi = gates[base], gf = gates[base + H], gg = gates[base + 2 * H], "
        "go = gates[base + 3 * H]; " + _LSTM_TAIL),
    "milstm_cell_pointwise": (
        "raw T wx, raw T uz, T c, raw T alpha, raw T beta_i, raw T beta_h, raw T bias, int32 H",
        "T hy, T cy",
        _A + "ptrdiff_t row = i / H, j = i % H; A g4[4]; "
        "for (int k = 0; k < 4; ++k) { ptrdiff_t m = k * H + j, e = row * 4 * H + m; "
        "A w = wx[e], u = uz[e]; g4[k] = (A)alpha[m] * w * u + (A)beta_i[m] * w "
        "+ (A)beta_h[m] * u + (A)bias[m]; } "
        "A gi = g4[0], gf = g4[1], gg = g4[2], go = g4[3]; " + _LSTM_TAIL),
    "gru_cell_pointwise": (
        "raw T gi, raw T gh, T hx, raw T b_ih, raw T b_hh, int32 H", "T hy",
        _A + "ptrdiff_t row = i / H, j = i % H, e = row * 3 * H + j; "
        f"A r = {_SIG.format('(A)gi[e] + (A)b_ih[j] + (A)gh[e] + (A)b_hh[j]')}; "
        f"A z = {_SIG.format('(A)gi[e + H] + (A)b_ih[j + H] + (A)gh[e + H] + (A)b_hh[j + H]')}; "
        "A n = tanh((A)gi[e + 2 * H] + (A)b_ih[j + 2 * H] "
        "+ r * ((A)gh[e + 2 * H] + (A)b_hh[j + 2 * H])); "
        "hy = (T)((A(1) - z) * n + z * (A)hx);"),
    "chain_transcendental_8": (
        "T x", "T y", _A + "A v = log1p(exp(sin((A)x))); v = cos(sqrt(v)); "
        f"v = {_SIG.format('v')}; y = (T)expm1(tanh(v));"),
    "unary_chain_20": (
        "T x", "T y", _A + "A v = log1p(exp(cos(sin((A)x)))); v = A(1) / sqrt(sqrt(v)); "
        f"v = -(A(1) / v); v = tanh(fabs(v)); v = {_SIG.format('v')}; "
        "v = atan(expm1(erf(v))); v = -log(erfc(max(v, A(0)))); v = exp(v); "
        "y = (T)(v - trunc(v));"),
    "scale_shift": ("T x", "T y", _A + "y = (T)((A)x * A(2) + A(1));"),
    "bias_dropout_residual": ("T x, T b, T r", "T y", _A + "y = (T)((A)x + (A)b + (A)r);"),
    "broadcast_outer": ("T a, T b", "T y", _A + "A u = a, v = b; y = (T)((u + v) * u - v);"),
    "loop_square_5": ("T x", "T y", _A + "A v = x; for (int k = 0; k < 5; ++k) v = v * v; "
                      "y = (T)v;"),
    "int_bitmix": ("T a, T b", "T y", "T t = a * 3 + b; T r = t % 1000; "
                   "if (r != 0 && r < 0) r += 1000; y = r ^ (b & 255);"),
    "mixed_int_float": ("T x, int32 a", "T y", _A + "y = (T)((A)x * (A)a + A(0.5));"),
}
KERNELS["gelu_tanh_f64"] = KERNELS["gelu_tanh"]
KERNELS["gelu_tanh_f16"] = KERNELS["gelu_tanh"]
_HIDDEN = {"lstm_cell_pointwise": 1, "milstm_cell_pointwise": 2, "gru_cell_pointwise": 2}


def _kernel_spec(name: str):
    if name.startswith("chain_affine_"):
        expr = affine_chain_expr(int(name.rsplit("_", 1)[1]), "v").replace("abs(", "fabs(")
        for c in ("-0.75", "0.75", "0.5", "0.25"):
            expr = expr.replace(c, f"A({c})")
        return "T x", "T y", _A + f"A v = (A)x; y = (T)({expr});"
    return KERNELS.get(name)


def elementwise_kernel(w: Workload) -> Optional[Callable]:
    spec = _kernel_spec(w.name)
    if spec is None:
        return None
    import cupy
    kernel = cupy.ElementwiseKernel(*spec, name=f"bench_{w.name}", preamble=_PREAMBLE)
    hidden_arg = _HIDDEN.get(w.name)
    if hidden_arg is None:
        return kernel
    return lambda *xs: kernel(*xs, np.int32(xs[hidden_arg].shape[1]))


class CudaDevice(common.Device):
    name = "cuda"

    def __init__(self):
        import cupy
        self.cupy = cupy
        torch = common.optional("torch")
        self.torch = torch if torch is not None and torch.cuda.is_available() else None
        self.torch_why = ("torch is not installed" if torch is None
                          else "torch has no CUDA here" if self.torch is None else None)

    def default_sizes(self, quick: bool) -> List[int]:
        return [10, 16, 20] if quick else [10, 12, 14, 16, 18, 20, 22, 24, 26]

    def to_device(self, arrays: tuple) -> tuple:
        return to_device_cuda(arrays)

    def sync(self) -> None:
        sync_cuda()

    def time(self, fn, input_sets, policy: TimingPolicy) -> dict:
        from cupyx.profiler import benchmark
        k = [0]

        def call():
            fn(*input_sets[k[0] % len(input_sets)])
            k[0] += 1
        res = benchmark(call, (), n_repeat=policy.max_repeats, n_warmup=policy.warmup_calls + 2,
                        max_duration=policy.min_time_s)
        gpu, cpu = list(res.gpu_times[0]), list(res.cpu_times)
        if len(gpu) < policy.min_repeats:
            more = benchmark(call, (), n_repeat=policy.min_repeats - len(gpu), n_warmup=0)
            gpu += list(more.gpu_times[0])
            cpu += list(more.cpu_times)
        from .timing import summarize
        event = summarize(gpu)
        stats = summarize(self._back_to_back(call, event["median_s"], policy))
        stats.update({f"event_{k}": v for k, v in event.items()})
        stats["host_median_s"] = float(np.median(cpu))
        return stats

    def _back_to_back(self, call, one_s: float, policy: TimingPolicy) -> List[float]:
        """Seconds per call over batches of calls launched back to back between two events
        (one sync per batch): the throughput a model's loop sees, where the host's work for
        the next call overlaps the kernel of this one.  A batch lasts about 2 ms."""
        cupy = self.cupy
        n = max(5, min(500, int(2e-3 / max(one_s, 1e-7))))
        start, end = cupy.cuda.Event(), cupy.cuda.Event()
        out: List[float] = []
        for _ in range(max(policy.min_repeats, 7)):
            start.record()
            for _ in range(n):
                call()
            end.record()
            end.synchronize()
            out.append(cupy.cuda.get_elapsed_time(start, end) / 1e3 / n)
        return out

    def _torch_view(self):
        """Inputs as CUDA tensors sharing memory, converted once per array (cached by id)."""
        torch, seen = self.torch, {}

        def view(x):
            hit = seen.get(id(x))
            if hit is None:
                hit = seen[id(x)] = (x, torch.as_tensor(x, device="cuda"))
            return hit[1]
        return view

    def modes(self, w: Workload, example: tuple, quick: bool, wanted: set, cache: dict,
              log2n: int):
        from torchlike import jit

        from .torch_compile import TorchCompiled
        cupy = self.cupy
        modes: Dict[str, Callable] = {}
        why_not: Dict[str, str] = {}
        on = lambda m: not wanted or m in wanted
        fn = capture(w, example, cache)
        if on("torchlike"):
            modes["torchlike"] = fn
        if on("interpreter"):
            graph = fn.graph
            modes["interpreter"] = lambda *xs: jit.run(graph, *xs)
        for mode in ("cupy", "cupy.fuse"):
            if on(mode) and w.ref_kind != "numpy":
                why_not[mode] = "corpus graph: no hand-written version"
        if on("cupy") and w.ref_kind == "numpy":
            modes["cupy"] = lambda *xs: w.ref(cupy, *xs)
        if on("cupy.fuse") and w.ref_kind == "numpy":
            if "fuse" not in cache:
                cache["fuse"] = cupy.fuse(kernel_name=f"fuse_{w.name}")(
                    lambda *xs: w.ref(cupy, *xs))
            modes["cupy.fuse"] = cache["fuse"]
        if on("cupy.ElementwiseKernel"):
            if "ek" not in cache:
                cache["ek"] = elementwise_kernel(w)
            if cache["ek"] is None:
                why_not["cupy.ElementwiseKernel"] = "no hand-written kernel"
            else:
                modes["cupy.ElementwiseKernel"] = cache["ek"]
        for mode in ("torch", "torch.compile"):
            if not on(mode):
                continue
            if self.torch is None:
                why_not[mode] = self.torch_why
            elif w.torch is None:
                why_not[mode] = "not expressible in PyTorch"
            elif mode == "torch.compile" and quick and mode not in wanted:
                why_not[mode] = "skipped with --quick (compiles for minutes; name it in --modes)"
            else:
                torch, view = self.torch, self._torch_view()
                if mode == "torch":
                    modes[mode] = lambda *xs, torch=torch, view=view: w.torch(torch, *map(view, xs))
                else:          # a fresh function per workload and size, checked (see above)
                    modes[mode] = TorchCompiled(torch, w.torch, w.name, log2n, view)
        return modes, why_not


# -- fused row reductions (cuda_backend.row_codegen): each program at three row lengths ------

ROW_LENGTHS = (64, 1024, 32768)  # a warp per row, a warp per row at its limit, a block per row
_HEAD = """graph(%x : Tensor{extra}):
  %none : NoneType = prim::Constant()
  %keep : bool = prim::Constant[value=1]()
  %one : int = prim::Constant[value=1]()
  %m1 : int = prim::Constant[value=-1]()
  %dims : int[] = prim::ListConstruct(%m1)
  %eps : float = prim::Constant[value=1e-05]()
"""
ROW_PROGRAMS = {  # name -> (extra inputs, body, numpy/cupy reference, PyTorch version)
    "softmax": ("", "  %y : Tensor = aten::softmax(%x, %m1, %none)\n  return (%y)",
                lambda xp, x: (lambda e: e / e.sum(-1, keepdims=True))(
                    xp.exp(x - x.max(-1, keepdims=True))),
                lambda t, x: t.softmax(x, -1)),
    "log_softmax": ("", "  %y : Tensor = aten::log_softmax(%x, %m1, %none)\n  return (%y)",
                    lambda xp, x: (lambda s: s - xp.log(xp.exp(s).sum(-1, keepdims=True)))(
                        x - x.max(-1, keepdims=True)),
                    lambda t, x: t.log_softmax(x, -1)),
    "logsumexp": ("", "  %y : Tensor = aten::logsumexp(%x, %dims, %keep)\n  return (%y)",
                  lambda xp, x: (lambda m: xp.log(xp.exp(x - m).sum(-1, keepdims=True)) + m)(
                      x.max(-1, keepdims=True)),
                  lambda t, x: t.logsumexp(x, -1, keepdim=True)),
    "layer_norm": (", %w : Tensor, %b : Tensor", """\
  %mean : Tensor = aten::mean(%x, %dims, %keep, %none)
  %xc : Tensor = aten::sub(%x, %mean, %one)
  %sq : Tensor = aten::mul(%xc, %xc)
  %var : Tensor = aten::mean(%sq, %dims, %keep, %none)
  %ve : Tensor = aten::add(%var, %eps, %one)
  %r : Tensor = aten::rsqrt(%ve)
  %n : Tensor = aten::mul(%xc, %r)
  %y : Tensor = aten::mul(%n, %w)
  %z : Tensor = aten::add(%y, %b, %one)
  return (%z)""",
                   lambda xp, x, w, b: (x - x.mean(-1, keepdims=True)) / xp.sqrt(
                       x.var(-1, keepdims=True) + 1e-5) * w + b,
                   lambda t, x, w, b: t.nn.functional.layer_norm(x, x.shape[-1:], w, b)),
    "rms_norm": (", %w : Tensor", """\
  %sq : Tensor = aten::mul(%x, %x)
  %ms : Tensor = aten::mean(%sq, %dims, %keep, %none)
  %a : Tensor = aten::add(%ms, %eps, %one)
  %r : Tensor = aten::rsqrt(%a)
  %y : Tensor = aten::mul(%x, %r)
  %z : Tensor = aten::mul(%y, %w)
  return (%z)""",
                 lambda xp, x, w: x / xp.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * w,
                 lambda t, x, w: x * t.rsqrt((x * x).mean(-1, keepdim=True) + 1e-5) * w),
    "standardize": ("", """\
  %c : int = prim::Constant[value=1]()
  %mean : Tensor = aten::mean(%x, %dims, %keep, %none)
  %sd : Tensor = aten::std(%x, %dims, %c, %keep)
  %xc : Tensor = aten::sub(%x, %mean, %one)
  %y : Tensor = aten::div(%xc, %sd)
  return (%y)""",
                    lambda xp, x: (x - x.mean(-1, keepdims=True)) / x.std(-1, ddof=1,
                                                                          keepdims=True),
                    lambda t, x: (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)),
    "mse": (", %t : Tensor", """\
  %d : Tensor = aten::sub(%x, %t, %one)
  %sq : Tensor = aten::mul(%d, %d)
  %y : Tensor = aten::mean(%sq, %dims, %keep, %none)
  return (%y)""",
            lambda xp, x, t: ((x - t) ** 2).mean(-1, keepdims=True),
            lambda tt, x, t: ((x - t) ** 2).mean(-1, keepdim=True)),
}


def _row_inputs(name: str, length: int):
    def make(n: int, rng) -> tuple:
        rows = max(1, n // length)
        x = rng.standard_normal((rows, length)).astype(np.float32)
        if name in ("layer_norm", "rms_norm"):
            extra = [rng.standard_normal(length).astype(np.float32) for _ in
                     range(2 if name == "layer_norm" else 1)]
        elif name == "mse":
            extra = [rng.standard_normal((rows, length)).astype(np.float32)]
        else:
            extra = []
        return (x, *extra)
    return make


def row_workloads(total: int = 0) -> List[Workload]:
    """``<program>/row<L>`` for every ``ROW_PROGRAMS`` entry and ``ROW_LENGTHS`` length: a
    graph (PyTorch's printed form) over float32 rows of length L, as many rows as the size
    holds (at least one); ``total`` is unused (the size comes per run)."""
    out = []
    for name, (extra, body, ref, torch_fn) in ROW_PROGRAMS.items():
        text = _HEAD.format(extra=extra) + body
        for length in ROW_LENGTHS:
            out.append(Workload(name=f"{name}/row{length}", fn=None,
                                make_inputs=_row_inputs(name, length), ref=ref, torch=torch_fn,
                                capture="graph", graph_text=text, gpu_only=True,
                                tags=("rows",)))
    return out


def copy_bandwidth(nbytes: int) -> float:
    """Device-to-device copy rate (GB/s, read + write) of one large buffer (cudaMemcpyAsync)."""
    import cupy
    from cupyx.profiler import benchmark
    src = cupy.ones(nbytes // 4, cupy.float32)
    dst = cupy.empty_like(src)
    res = benchmark(lambda: dst.data.copy_from_device_async(src.data, nbytes), (),
                    n_repeat=20, n_warmup=3)
    return 2 * nbytes / float(np.median(res.gpu_times[0])) / 1e9


def gpu_info() -> dict:
    import cupy
    rt = cupy.cuda.runtime
    props = rt.getDeviceProperties(cupy.cuda.Device().id)
    name = props.get("name", b"?")
    info = {"gpu_name": name.decode() if isinstance(name, bytes) else str(name),
            "gpu_memory_bytes": props.get("totalGlobalMem"),
            "cuda_runtime_version": rt.runtimeGetVersion(),
            "cuda_driver_version": rt.driverGetVersion()}
    clock_khz, bus_bits = props.get("memoryClockRate"), props.get("memoryBusWidth")
    if clock_khz and bus_bits:    # DDR: two transfers per clock
        info["gpu_peak_bandwidth_gbps"] = 2 * clock_khz * 1e3 * bus_bits / 8 / 1e9
    return info


def run_cuda(args, allocator_env: dict, cache_dir: str) -> int:
    from torchlike import jit
    dev = CudaDevice()
    sizes = [int(s) for s in args.sizes.split(",") if s] or dev.default_sizes(args.quick)
    wanted = set(m for m in args.modes.split(",") if m)
    pieces = [p for p in args.filter.split(",") if p]
    workloads = select(args.filter, "cuda", args.suite) + [
        w for w in row_workloads() if not pieces or any(p in w.name for p in pieces)]
    if not workloads:
        print(f"no workload matches --filter {args.filter!r}", file=sys.stderr)
        return 2
    policy = QUICK if args.quick else FULL
    copy_bytes = 1 << 28 if args.quick else 1 << 30
    bandwidth = copy_bandwidth(copy_bytes)
    compile_section = None if args.no_compile_times else compile_times.section(
        "cuda", workloads, sizes, to_device_cuda, sync_cuda, cache_dir)
    jit.reset_stats()
    loop = common.run_workloads(dev, workloads, sizes, wanted, args.quick, policy, bandwidth)
    from . import corpus
    run = {"device": "cuda", "created_unix": time.time(), "quick": bool(args.quick),
           "command": " ".join(["python -m bench"] + sys.argv[1:]),
           "machine": common.machine_info(gpu_info()),
           "libraries": common.library_versions(), "allocator_env": allocator_env,
           "cache_dir": cache_dir,
           "timing": dict(policy.as_dict(), clock="cuda events, back-to-back batches"),
           "copy_bandwidth": {"gbps": bandwidth, "bytes": copy_bytes,
                              "method": "cudaMemcpyAsync device to device, read + write bytes"},
           "corpus": {"dir": str(corpus.corpus_dir()), "excluded": corpus.excluded()},
           "sizes": sizes, "modes": sorted({r["mode"] for r in loop["results"]}), **loop,
           "compile": compile_section,
           "fuser_stats": jit.stats(), "seed_loop": None}
    doc = common.write_outputs(run, Path(args.out))
    from .report import render_report
    print(render_report({"schema": doc["schema"], "runs": [run]}, Path(args.out)))
    return 1 if loop["failures"] else 0
