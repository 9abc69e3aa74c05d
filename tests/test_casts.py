"""Dtype conversions (``torchlike/ops/casting.py``): the interpreter against PyTorch on x86-64,
and the Numba and emulated CUDA kernels against the interpreter, over the values where C leaves
a conversion undefined (NaN, +-inf, negatives into unsigned, out of range, huge) and the
roundings that differ between one and two steps (float64 -> float16).

Each test fuses one group per source dtype holding every conversion as an output (one kernel
per backend) and runs it in strict mode, so a fallback would fail the test."""
import shutil
import warnings

import numpy as np
import pytest

from torchlike import backends, jit
from torchlike.fuser import backend as fb
from torchlike.fuser import config, executor
from torchlike.fuser.stats import reset_stats, stats
from torchlike.ir import parse_graph
from torchlike.ir.types import DTYPE_TO_SCALAR_TYPE_ENUM
from torchlike.ops import casting
from torchlike.ops.registry import get

try:
    import torch
except ImportError:  # pragma: no cover - torch is a test extra
    torch = None
try:
    import numba  # noqa: F401
    _NUMBA = True
except ImportError:  # pragma: no cover
    _NUMBA = False

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch")
needs_numba = pytest.mark.skipif(not _NUMBA, reason="needs numba")
needs_gxx = pytest.mark.skipif(shutil.which("g++") is None,
                               reason="g++ is not on PATH (the CUDA emulator compiles with it)")

FLOATS = ["float16", "float32", "float64"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
TARGETS = ["bool"] + INTS

SPECIALS = [np.nan, np.inf, -np.inf, -0.0, 0.0, -1.0, -1.5, -0.5, 0.5, 1.5, 2.5, 127.5, 128.0,
            255.0, 255.5, 256.0, 257.0, 300.0, -129.0, -255.0, -256.0, -257.0, 32767.5, 32768.0,
            65504.0, 65535.0, 65536.0, 70000.0, -32769.0, 2.0 ** 31 - 0.5, 2.0 ** 31,
            2.0 ** 31 + 5, 2.0 ** 31 + 256, -2.0 ** 31, -2.0 ** 31 - 0.5, -2.0 ** 31 - 1,
            -2.0 ** 31 - 256, 2.0 ** 32 + 7, 1e10, -1e10, 2.0 ** 40 + 3, -2.0 ** 40 - 3,
            2.0 ** 53 + 2, 2.0 ** 62 + 1792, 2.0 ** 63, -2.0 ** 63, -2.0 ** 63 - 4096, 2.0 ** 64,
            1e19, 1e20, -1e20, 3.4e38, -3.4e38, 1e300, 1e-45, 5e-324, 0.1]
INT_SPECIALS = [0, 1, -1, 127, 128, 255, 256, 300, -128, -129, -256, 32767, 32768, 65535, 70000,
                -70000, 2 ** 31 - 1, 2 ** 31 + 5, -2 ** 31, -2 ** 40 - 3, 2 ** 62 + 7,
                2 ** 63 - 1, -2 ** 63]


@pytest.fixture(scope="module", autouse=True)
def _cache(tmp_path_factory):
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    yield
    config.set_cache_dir(None)
    config.set_backend("auto")
    config.set_strict(False)
    executor.clear_caches()


def as_dtype(values, dtype, n=96):
    """``values`` converted to ``dtype`` (floats round, ints wrap), tiled to at least ``n``
    elements: PyTorch's vectorized path runs on contiguous tensors of 64+ elements."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if dtype in INTS or dtype == "bool":
            a = np.array(values, dtype=np.int64).astype(dtype)
        else:
            a = np.array(values, dtype=np.float64).astype(dtype)
    return np.resize(a, max(n, a.size))


def cast_graph(targets, via_op=False):
    """``aten::to(x, t)`` for each target dtype; ``via_op``: of ``x * 1`` instead (the value
    converted is a computed one, not a load)."""
    lines = ["graph(%x : Tensor):",
             "  %f : bool = prim::Constant[value=0]()",
             "  %one : int = prim::Constant[value=1]()"]
    src = "%x"
    if via_op:
        lines.append("  %m : Tensor = aten::mul(%x, %one)")
        src = "%m"
    outs = []
    for k, t in enumerate(targets):
        lines.append(f"  %d{k} : int = prim::Constant[value={DTYPE_TO_SCALAR_TYPE_ENUM[t]}]()")
        lines.append(f"  %o{k} : Tensor = aten::to({src}, %d{k}, %f, %f)")
        outs.append(f"%o{k}")
    lines.append(f"  return ({', '.join(outs)})")
    return parse_graph("\n".join(lines))


def interpret(graph, *args):
    out = jit.run(graph, *args)
    return list(out) if isinstance(out, tuple) else [out]


def run_fused(graph, backend, *args):
    """The graph fused and run with ``backend`` in strict mode (no fallback possible); the
    emulator runs registered as the fuser's ``cuda`` backend (it takes numpy arrays)."""
    fused = jit.fuse(graph, min_group_size=1)
    assert any(n.kind == "prim::FusionGroup" for n in fused.nodes)
    saved = fb.BACKENDS.get("cuda")
    if backend == "cuda-emulated":
        backends.install({"cuda": backends.BACKENDS["cuda-emulated"]})
        backend = "cuda"
    config.set_backend(backend)
    config.set_strict(True)
    try:
        executor.clear_caches()
        reset_stats()
        out = interpret(fused, *args)
        ran = stats()  # the group's kernel was fetched (compiled, from disk or memory), not skipped
        assert ran["cache_hits"] + ran["cache_misses"] >= 1 and not ran["fallbacks"], ran
        return out
    finally:
        config.set_strict(False)
        config.set_backend("auto")
        fb.register_backend("cuda", saved)
        executor.clear_caches()


def assert_equal(got, want, label):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{label}: dtype {got.dtype} != {want.dtype}"
    if got.dtype.kind == "f":
        same = (got == want) | (np.isnan(got) & np.isnan(want))
        same &= np.signbit(got) == np.signbit(want)
    else:
        same = got == want
    if not same.all():
        bad = np.flatnonzero(~same)[:8]
        raise AssertionError(f"{label}: differs at {bad.tolist()}: got {got[bad].tolist()}, "
                             f"expected {want[bad].tolist()}")


def torch_to(x, dtype, zero_d=False):
    """``x.to(dtype)`` in PyTorch: on the whole (contiguous, vectorized) tensor, or element by
    element on 0-d tensors."""
    t = torch.from_numpy(np.ascontiguousarray(x))
    td = getattr(torch, dtype)
    if zero_d:
        return np.array([t[i].clone().to(td).item() for i in range(t.numel())], dtype=dtype)
    return t.to(td).numpy()


# -- the interpreter ----------------------------------------------------------------------------

@pytest.mark.parametrize("src", FLOATS)
def test_float_to_int_and_bool_matches_torch(src):
    x = as_dtype(SPECIALS, src)
    got = interpret(cast_graph(TARGETS), x)
    for dst, g in zip(TARGETS, got, strict=True):
        assert_equal(g, casting.cast(np, x, dst), f"{src}->{dst} casting.cast")
        if torch is not None:
            assert_equal(g, torch_to(x, dst), f"{src}->{dst} vs torch (vectorized)")
            assert_equal(g[:len(SPECIALS)], torch_to(x[:len(SPECIALS)], dst, zero_d=True),
                         f"{src}->{dst} vs torch (0-d)")
    if torch is None:
        pytest.skip("needs torch (the interpreter was checked against casting.cast only)")


@pytest.mark.parametrize("src", ["bool"] + INTS)
def test_int_to_narrower_int_wraps_as_torch(src):
    x = as_dtype(INT_SPECIALS, src)
    got = interpret(cast_graph(TARGETS + ["float16", "float32"]), x)
    if torch is None:
        pytest.skip("needs torch")
    for dst, g in zip(TARGETS + ["float16", "float32"], got, strict=True):
        assert_equal(g, torch_to(x, dst), f"{src}->{dst} vs torch")


ROUNDING = [1 + 2 ** -11 + 2 ** -40, 1 + 2 ** -11, 1 + 3 * 2 ** -11, 65519.99, 65519.9999999,
            65520.0, 2 ** -25 + 2 ** -40, 2 ** -25, 1e-8, -1e-8, 1 + 2 ** -8 + 2 ** -30,
            np.nan, np.inf, -np.inf, -0.0, 3.4e38, 1e300, 2.0 ** -149, 1e-46]


@pytest.mark.parametrize("src", ["float32", "float64", "int64"])
def test_float16_rounding_matches_torch(src):
    """float64 -> float16 rounds through float32, as PyTorch does (two roundings)."""
    values = ROUNDING if src != "int64" else INT_SPECIALS + [2049, 2 ** 24 + 1, 65519]
    x = as_dtype(values, src)
    (got, got32) = interpret(cast_graph(["float16", "float32"]), x)
    if src == "float64":
        assert got[0] == 1.0 and np.isinf(got[4])  # one rounding would give 1.0009765625, 65504
    if torch is None:
        pytest.skip("needs torch")
    assert_equal(got, torch_to(x, "float16"), f"{src}->float16 vs torch")
    assert_equal(got32, torch_to(x, "float32"), f"{src}->float32 vs torch")


def test_operand_and_scalar_casts_use_the_same_semantics():
    """``_cast`` (an operand cast to a compute dtype, Python scalars included) converts as
    ``aten::to`` does."""
    from torchlike.ops.elementwise_base import _cast
    x = as_dtype(SPECIALS, "float64")
    for dst in TARGETS:
        assert_equal(_cast(np, x, dst), casting.cast(np, x, dst), f"_cast float64->{dst}")
        for v in (-1.0, 1e10, float("nan"), 300.0):
            assert _cast(np, v, dst)[()] == casting.cast_value(v, dst)
    assert casting.cast_value(-1.0, "uint8") == 255
    assert casting.cast_value(2.0 ** 31 + 5, "uint8") == 5
    assert casting.cast_value(2.0 ** 31 + 5, "int8") == 0
    assert casting.cast_value(float("nan"), "int64") == np.iinfo(np.int64).min
    assert casting.cast_value(float("nan"), "bool")
    to = get("aten::to")
    assert to.impl(np, np.array([-1.0, 256.5], np.float32), 0).tolist() == [255, 0]


# -- the kernels against the interpreter ---------------------------------------------------------

BACKENDS = [pytest.param("cpu", marks=needs_numba),
            pytest.param("cuda-emulated", marks=needs_gxx)]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("src", FLOATS)
def test_kernels_convert_floats_as_the_interpreter(backend, src):
    x = as_dtype(SPECIALS, src)
    for via_op in (False, True):
        graph = cast_graph(TARGETS, via_op)
        want = interpret(graph, x)
        got = run_fused(graph, backend, x)
        for dst, g, w in zip(TARGETS, got, want, strict=True):
            assert_equal(g, w, f"{backend} {src}->{dst}{' of x * 1' if via_op else ''}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernels_convert_ints_and_round_halves_as_the_interpreter(backend):
    for src, values, targets in [("int64", INT_SPECIALS, TARGETS + ["float16", "float32"]),
                                 ("uint8", INT_SPECIALS, TARGETS + ["float16"]),
                                 ("bool", [0, 1, 2], TARGETS + ["float16"]),
                                 ("float64", ROUNDING, ["float16", "float32"]),
                                 ("float32", ROUNDING, ["float16"])]:
        x = as_dtype(values, src)
        graph = cast_graph(targets)
        want = interpret(graph, x)
        got = run_fused(graph, backend, x)
        for dst, g, w in zip(targets, got, want, strict=True):
            assert_equal(g, w, f"{backend} {src}->{dst}")


@pytest.mark.parametrize("backend", BACKENDS)
def test_kernels_convert_float_constants_into_int_operands(backend):
    """A float constant meeting an int compute dtype (masked_fill's value) is converted by the
    same rule: a hoisted ``tl_float_to_int32`` in Numba, a folded literal in CUDA."""
    graph = parse_graph("""graph(%x : Tensor, %m : Tensor):
  %v : float = prim::Constant[value=-2.75]()
  %y : Tensor = aten::masked_fill(%x, %m, %v)
  return (%y)""")
    x = np.arange(-6, 6, dtype=np.int32)
    m = np.arange(12) % 3 == 0
    (want,) = interpret(graph, x, m)
    (got,) = run_fused(graph, backend, x, m)
    assert_equal(got, want, f"{backend} masked_fill int32 with -2.75")
    assert want[0] == -2


def test_cuda_literals_follow_casting():
    """A constant converted while rendering CUDA C gets the same value."""
    from torchlike.cuda_backend.codegen import literal
    for dst in INTS:
        for v in SPECIALS:
            text = literal(v, dst)  # 5LL, (-5LL), (-2147483647 - 1), ((uint8)255)
            value = eval(text.replace("LL", "").replace(f"({dst})", ""))  # noqa: S307
            assert value == casting.cast_value(v, dst), (v, dst, text)


def test_generated_casts_compile_warning_free_with_nvrtc():
    """The prelude's tl_float_to_* helpers on the real CUDA compiler (no GPU needed)."""
    from torchlike.cuda_backend.compiler import CudaCompileError, nvrtc_compile
    from torchlike.fuser.backend import analyze, get_backend_impl, signature_of
    fused = jit.fuse(cast_graph(TARGETS + ["float16"], via_op=True))
    group = next(n for n in fused.nodes if n.kind == "prim::FusionGroup")
    be = get_backend_impl("cuda-emulated")
    for src in ("float32", "float64"):
        spec = analyze(group.attrs["Subgraph"], signature_of([as_dtype(SPECIALS, src)]))
        source = be.generate(spec).source
        assert "tl_float_to_uint8(" in source and "tl_float_to_int64(" in source
        try:
            _, log = nvrtc_compile(source, "sm_90")
        except CudaCompileError as e:
            if "not available" in str(e):
                pytest.skip(f"NVRTC is missing: {e}")
            raise
        assert log == "", log


@pytest.mark.parametrize("fused", [False, True])
def test_cast_to_bfloat16_is_a_clear_error(fused):
    """numpy has no bfloat16: ``x.bfloat16()`` (a traced ``aten::to``) raises an
    UnsupportedOpError naming the node, interpreted and fused (never a KeyError in codegen)."""
    from torchlike.errors import UnsupportedOpError
    g = parse_graph("""graph(%x : Float(4, strides=[1], requires_grad=0, device=cpu)):
  %1 : int = prim::Constant[value=15]()
  %2 : bool = prim::Constant[value=0]()
  %3 : NoneType = prim::Constant()
  %4 : BFloat16(4, strides=[1], requires_grad=0, device=cpu) = aten::to(%x, %1, %2, %2, %3) # f.py:3:0
  %5 : int = prim::Constant[value=6]()
  %6 : Float(4, strides=[1], requires_grad=0, device=cpu) = aten::to(%4, %5, %2, %2, %3) # f.py:3:0
  return (%6)
""")
    saved = config.strict()
    config.set_strict(fused)
    try:
        with pytest.raises(UnsupportedOpError, match=r"aten::to\(%4\) at f.py:3:0: bfloat16 "
                                                     r"tensors are not supported"):
            jit.run(jit.fuse(g) if fused else g, np.ones(4, np.float32))
    finally:
        config.set_strict(saved)
