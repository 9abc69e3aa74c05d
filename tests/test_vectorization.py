"""LLVM vectorizes the fused CPU kernels: representative groups go through the real fuser
(codegen -> the cpu backend's compile), and the LLVM IR Numba produced for the kernel must hold
float vector arithmetic of the width LLVM uses on this machine and no libm call (expf, logf,
tanhf, ...) in the loop.

The width comes from the CPU's features: 16 float lanes with AVX-512, 8 with AVX2.  LLVM's
tuning for recent Intel cores (skylake-avx512 .. emeraldrapids) prefers 256-bit vectors; the
kernels ask for the full width (``cpu_backend/vector_width.py``), and a test checks that the
request is what makes the difference.
"""
from __future__ import annotations

import re

import numpy as np
import pytest

from torchlike.fuser import config
from torchlike.fuser.backend import get_backend_impl
from torchlike.fuser.codegen import codegen
from torchlike.ir import parse_graph

llvm = pytest.importorskip("llvmlite.binding")


def _features():
    try:
        with open("/proc/cpuinfo") as f:
            return set(re.findall(r"\b(avx512f|avx2|avx|sse2)\b", f.read()))
    except OSError:
        return set()


FEATURES = _features()
# float32 lanes of the machine's full vector width (see the module docstring)
LANES = 16 if "avx512f" in FEATURES else 8 if "avx2" in FEATURES else 4

GRAPHS = {
    "gelu_tanh+silu": ("""
graph(%x : Tensor):
  %a : str = prim::Constant[value="tanh"]()
  %1 : Tensor = aten::gelu(%x, %a)
  %2 : Tensor = aten::silu(%1)
  return (%2)
""", lambda: [np.ones((64, 64), np.float32)]),
    "exp/log/tanh/sigmoid/mish": ("""
graph(%x : Tensor):
  %1 : Tensor = aten::exp(%x)
  %2 : Tensor = aten::log1p(%1)
  %3 : Tensor = aten::tanh(%2)
  %4 : Tensor = aten::sigmoid(%3)
  %5 : Tensor = aten::mish(%4)
  %6 : Tensor = aten::log(%5)
  return (%6)
""", lambda: [np.ones((64, 64), np.float32)]),
    "erf/erfc/erfinv/gelu": ("""
graph(%x : Tensor):
  %a : str = prim::Constant[value="none"]()
  %1 : Tensor = aten::erf(%x)
  %2 : Tensor = aten::erfc(%1)
  %3 : Tensor = aten::erfinv(%2)
  %4 : Tensor = aten::gelu(%3, %a)
  return (%4)
""", lambda: [np.ones((64, 64), np.float32)]),
    "broadcast exp(x) * y": ("""
graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::exp(%x)
  %2 : Tensor = aten::mul(%1, %y)
  return (%2)
""", lambda: [np.ones((64, 64), np.float32), np.ones((64,), np.float32)]),
    "inverse trig and hyperbolic": ("""
graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::atan(%x)
  %2 : Tensor = aten::asin(%1)
  %3 : Tensor = aten::acos(%2)
  %4 : Tensor = aten::sinh(%3)
  %5 : Tensor = aten::cosh(%4)
  %6 : Tensor = aten::asinh(%5)
  %7 : Tensor = aten::acosh(%6)
  %8 : Tensor = aten::atanh(%7)
  %9 : Tensor = aten::atan2(%8, %y)
  return (%9)
""", lambda: [np.ones((64, 64), np.float32), np.ones((64, 64), np.float32)]),
    "int32 * float32, sigmoid": ("""
graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::mul(%x, %y)
  %2 : Tensor = aten::sigmoid(%1)
  return (%2)
""", lambda: [np.ones((64, 64), np.int32), np.ones((64, 64), np.float32)]),
    "sin/cos/tan": ("""
graph(%x : Tensor):
  %1 : Tensor = aten::sin(%x)
  %2 : Tensor = aten::cos(%1)
  %3 : Tensor = aten::tan(%2)
  return (%3)
""", lambda: [np.ones((64, 64), np.float32)]),
    "sin/cos/tan, parallel (guarded fast forms)": ("""
graph(%x : Tensor):
  %1 : Tensor = aten::sin(%x)
  %2 : Tensor = aten::cos(%1)
  %3 : Tensor = aten::tan(%2)
  return (%3)
""", lambda: [np.ones((256, 256), np.float32)]),
    "pointwise: logaddexp/xlogy/hypot/ldexp/logit/i0e/fmax": ("""
graph(%x : Tensor, %y : Tensor, %e : Tensor):
  %eps : float = prim::Constant[value=1e-06]()
  %1 : Tensor = aten::logaddexp(%x, %y)
  %2 : Tensor = aten::xlogy(%1, %y)
  %3 : Tensor = aten::hypot(%2, %x)
  %4 : Tensor = aten::ldexp(%3, %e)
  %5 : Tensor = aten::logit(%4, %eps)
  %6 : Tensor = aten::special_i0e(%5)
  %7 : Tensor = aten::fmax(%6, %x)
  return (%7)
""", lambda: [np.ones((64, 64), np.float32), np.ones((64, 64), np.float32),
              np.ones((64, 64), np.int32)]),
}

# float64 graphs: the math_f64 helpers vectorize at the full width too (LANES / 2 doubles)
GRAPHS64 = {
    "f64 exp/log1p/tanh/sigmoid/mish/log/sinh/cosh/exp2": ("""
graph(%x : Tensor):
  %1 : Tensor = aten::exp(%x)
  %2 : Tensor = aten::log1p(%1)
  %3 : Tensor = aten::tanh(%2)
  %4 : Tensor = aten::sigmoid(%3)
  %5 : Tensor = aten::mish(%4)
  %6 : Tensor = aten::log(%5)
  %7 : Tensor = aten::sinh(%6)
  %8 : Tensor = aten::cosh(%7)
  %9 : Tensor = aten::exp2(%8)
  return (%9)
""", lambda: [np.ones((64, 64), np.float64)]),
    "f64 gelu_tanh/silu/softplus/elu/log_sigmoid/expm1/log2/log10": ("""
graph(%x : Tensor):
  %a : str = prim::Constant[value="tanh"]()
  %b : int = prim::Constant[value=2]()
  %t : int = prim::Constant[value=5]()
  %1 : Tensor = aten::gelu(%x, %a)
  %2 : Tensor = aten::silu(%1)
  %3 : Tensor = aten::softplus(%2, %b, %t)
  %4 : Tensor = aten::elu(%3)
  %5 : Tensor = aten::log_sigmoid(%4)
  %6 : Tensor = aten::expm1(%5)
  %7 : Tensor = aten::log2(%6)
  %8 : Tensor = aten::log10(%7)
  return (%8)
""", lambda: [np.ones((64, 64), np.float64)]),
    "f64 int32 * float64, exp": ("""
graph(%x : Tensor, %y : Tensor):
  %1 : Tensor = aten::mul(%x, %y)
  %2 : Tensor = aten::exp(%1)
  return (%2)
""", lambda: [np.ones((64, 64), np.int32), np.ones((64, 64), np.float64)]),
}
GRAPHS.update(GRAPHS64)
# float16 arrays are read and written through their bits (math_f16): the conversions are in
# the vector loop, the arithmetic in float32 vectors
GRAPHS["f16 gelu(x) + y"] = ("""
graph(%x : Tensor, %y : Tensor):
  %a : str = prim::Constant[value="none"]()
  %one : int = prim::Constant[value=1]()
  %1 : Tensor = aten::gelu(%x, %a)
  %2 : Tensor = aten::add(%1, %y, %one)
  return (%2)
""", lambda: [np.ones((64, 64), np.float16), np.ones((64, 64), np.float16)])

VECTOR_DOUBLE = re.compile(r"\b(?:fmul|fadd|fsub|fdiv) (?:\w+ )*<(\d+) x double>")
VECTOR_FLOAT = re.compile(r"\b(?:fmul|fadd|fsub|fdiv) (?:\w+ )*<(\d+) x float>")
LIBM_CALL = re.compile(r"call [^@\n]*@((?:exp|log|tanh|erf|pow|a?sin|a?cos|atan|sqrt)\w*)\(")


pytestmark = pytest.mark.usefixtures("kernel_cache")


_IR = {}


def kernel_ir(name):
    """The LLVM IR of the group's compiled kernel function (not Numba's Python wrapper; with
    the loop function of a parallel kernel).
    Compiled once per test module into a fresh cache folder: Numba cannot inspect a kernel
    loaded from its on-disk cache."""
    if name not in _IR:
        _IR[name] = _compile_ir(name)
    return _IR[name]


def _compile_ir(name):
    text, make = GRAPHS[name]
    (source,) = codegen(parse_graph(text), *make())
    dispatcher = get_backend_impl("cpu").compile(source).dispatcher
    ir = dispatcher.inspect_llvm(dispatcher.signatures[0])
    # a parallel kernel's loop is in the gufunc Numba's parfor pass outlined from it
    bodies = [b for b in ir.split("\ndefine ")[1:]
              if (source.name in b.split("\n", 1)[0] or "numba_parfor_gufunc" in b.split("\n", 1)[0])
              and "cpython" not in b.split("\n", 1)[0]]
    assert bodies, f"{name}: kernel {source.name} not found in the IR"
    return "\n".join(bodies)


def widths(ir):
    return {int(w) for w in VECTOR_FLOAT.findall(ir)}


@pytest.mark.parametrize("name", [g for g in GRAPHS if g not in GRAPHS64])
def test_kernel_vectorizes_at_full_width(name):
    ir = kernel_ir(name)
    assert not LIBM_CALL.findall(ir), f"{name}: libm calls left: {set(LIBM_CALL.findall(ir))}"
    seen = widths(ir)
    assert seen and max(seen) >= LANES, f"{name}: float vector widths {seen}, want {LANES}"


@pytest.mark.parametrize("name", list(GRAPHS64))
def test_float64_kernel_vectorizes_at_full_width(name):
    """math_f64's helpers: no libm call, double arithmetic LANES / 2 wide (8 with AVX-512)."""
    ir = kernel_ir(name)
    assert not LIBM_CALL.findall(ir), f"{name}: libm calls left: {set(LIBM_CALL.findall(ir))}"
    seen = {int(w) for w in VECTOR_DOUBLE.findall(ir)}
    assert seen and max(seen) >= LANES // 2, \
        f"{name}: double vector widths {seen}, want {LANES // 2}"


def test_float16_conversions_are_vector_instructions():
    """With F16C the float16 loads and stores convert a vector at a time (``fpext``/``fptrunc``
    of ``<N x half>``, one vcvtph2ps / vcvtps2ph each); without it the bit arithmetic is
    vectorized as integer vectors of the same width."""
    from torchlike.cpu_backend.math_f16 import HAS_F16C
    ir = kernel_ir("f16 gelu(x) + y")
    if HAS_F16C:
        ext = {int(w) for w in re.findall(r"fpext <(\d+) x half>", ir)}
        trunc = {int(w) for w in re.findall(r"fptrunc <(\d+) x float> .* to <(?:\d+) x half>", ir)}
        assert ext and max(ext) >= LANES and trunc and max(trunc) >= LANES, (ext, trunc)
    else:
        assert {int(w) for w in re.findall(r"<(\d+) x i16>", ir)} & {LANES, 2 * LANES}


@pytest.mark.skipif("avx512f" not in FEATURES,
                    reason="needs an AVX-512 CPU: elsewhere 256 bits is the full width")
def test_full_width_is_what_the_kernel_asks_for(monkeypatch, tmp_path):
    """With the request lowered to 256 bits the same kernel gets 8 lanes: the 16 above come
    from ``tl_wide_vectors``, not from LLVM's default for this CPU."""
    before = config.cache_dir()
    monkeypatch.setenv("TORCHLIKE_CPU_VECTOR_BITS", "256")
    config.set_cache_dir(tmp_path)  # a fresh cache: the kernel is compiled, not loaded
    try:
        ir = _compile_ir("broadcast exp(x) * y")
    finally:
        config.set_cache_dir(before)
    assert max(widths(ir)) == 8
    assert '"prefer-vector-width"="256"' in ir or "prefer-vector-width" not in ir


def test_vector_bits_setting_is_checked(monkeypatch):
    from torchlike.cpu_backend.codegen import vector_bits
    monkeypatch.setenv("TORCHLIKE_CPU_VECTOR_BITS", "384")
    with pytest.raises(ValueError, match="TORCHLIKE_CPU_VECTOR_BITS"):
        vector_bits()
    monkeypatch.setenv("TORCHLIKE_CPU_VECTOR_BITS", "256")
    assert vector_bits() == 256

def test_trig_huge_argument_reduction_is_in_the_vector_loop():
    """sin/cos/tan compute two argument reductions per element and select: the huge-argument
    one, 64-bit integer products of the mantissa and a window of 2/pi, must be in the vector
    loop too (8 lanes wide as the float work; a memory table there stopped the vectorizer)."""
    ir = kernel_ir("sin/cos/tan")
    products = {int(w) for w in re.findall(r"\bmul (?:\w+ )*<(\d+) x i64>", ir)}
    assert products and max(products) >= LANES, f"i64 products not vectorized: {products}"


def test_trig_fast_loop_and_its_guard_are_vectorized():
    """The guarded fast loop (``cpu_backend/fast_paths.py``) ORs the guards of a whole vector
    of lanes at once: an ``or <LANES x i1>`` reduction, no scalar loop around the fast forms."""
    ir = kernel_ir("sin/cos/tan, parallel (guarded fast forms)")
    ors = {int(w) for w in re.findall(r"\bor (?:\w+ )*<(\d+) x i1>", ir)}
    assert ors and max(ors) >= LANES, f"guard reduction not vectorized: {ors}"


VECTOR_LOAD = re.compile(r"\bload <(\d+) x float>")
GATHER = re.compile(r"@llvm\.masked\.gather")


def test_guarded_blocks_read_with_vector_loads():
    """The blocks of the guarded loop start at an offset: indexed from there with a plain
    signed index, Numba's negative-index check stays in the loop and the reads become gathers
    (2.9x slower for sin at 2^22); ``codegen._from_offset`` makes them contiguous vector loads."""
    ir = kernel_ir("sin/cos/tan, parallel (guarded fast forms)")
    loads = {int(w) for w in VECTOR_LOAD.findall(ir)}
    assert loads and max(loads) >= LANES, f"no {LANES}-wide loads: {loads}"
    assert not GATHER.search(ir), "a contiguous read was compiled as a gather"


GRAPHS["layer norm rows, parallel"] = ("""
graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %dims : int[] = prim::Constant[value=[-1]]()
  %true : bool = prim::Constant[value=1]()
  %false : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %one : int = prim::Constant[value=1]()
  %eps : float = prim::Constant[value=1.0000000000000001e-05]()
  %mean : Tensor = aten::mean(%x, %dims, %true, %none)
  %var : Tensor = aten::var(%x, %dims, %false, %true)
  %c : Tensor = aten::sub(%x, %mean, %one)
  %ve : Tensor = aten::add(%var, %eps, %one)
  %s : Tensor = aten::sqrt(%ve)
  %n : Tensor = aten::div(%c, %s)
  %m : Tensor = aten::mul(%n, %w)
  %y : Tensor = aten::add(%m, %b, %one)
  return (%y)
""", lambda: [np.ones((256, 1024), np.float32), np.ones((1024,), np.float32),
              np.ones((1024,), np.float32)])


def test_row_reduction_sums_and_epilogue_vectorize():
    """A fused layer norm: the row sums (``row_math.tl_rsum_f32``, reassociated into partial
    sums) and the elementwise passes over the row are full-width vector code without gathers
    (the sums' blocks indexed from an offset were scalar: 15x slower)."""
    ir = kernel_ir("layer norm rows, parallel")
    sums = {int(w) for w in re.findall(r"\bfadd reassoc <(\d+) x float>", ir)}
    assert sums and max(sums) >= LANES, f"row sums not vectorized: {sums}"
    assert max(widths(ir)) >= LANES and not GATHER.search(ir)


GRAPHS["chunked gates + bias, parallel"] = ("""
graph(%gi : Tensor, %b : Tensor, %h : Tensor):
  %one : int = prim::Constant[value=1]()
  %three : int = prim::Constant[value=3]()
  %g : Tensor = aten::add(%gi, %b, %one)
  %parts : Tensor[] = aten::chunk(%g, %three, %one)
  %r : Tensor, %z : Tensor, %n : Tensor = prim::ListUnpack(%parts)
  %s : Tensor = aten::sigmoid(%r)
  %t : Tensor = aten::tanh(%n)
  %u : Tensor = aten::mul(%s, %t)
  %v : Tensor = aten::mul(%z, %h)
  %y : Tensor = aten::add(%u, %v, %one)
  return (%y)
""", lambda: [np.ones((256, 768), np.float32), np.ones((768,), np.float32),
              np.ones((256, 256), np.float32)])


def test_chunk_reads_are_vector_loads():
    """A chunk of the gates is read at ``i1 + k * c``, whose sign LLVM cannot know: indexed
    with it as is, the reads were gathers (the GRU cell 3x slower); masked, vector loads."""
    ir = kernel_ir("chunked gates + bias, parallel")
    loads = {int(w) for w in VECTOR_LOAD.findall(ir)}
    assert loads and max(loads) >= LANES, f"no {LANES}-wide loads: {loads}"
    assert not GATHER.search(ir), "a chunk read was compiled as a gather"


GRAPHS["softmax rows, parallel"] = ("""
graph(%x : Tensor):
  %dim : int = prim::Constant[value=-1]()
  %none : NoneType = prim::Constant()
  %y : Tensor = aten::softmax(%x, %dim, %none)
  return (%y)
""", lambda: [np.ones((1024, 64), np.float32)])


def test_row_reductions_are_inlined_and_the_exp_sum_is_one_loop():
    """Softmax over short rows: the row max and sum helpers are inlined (a call per row cost
    more than a 64-element reduction) and the sum of exp(x - max) accumulates, in vector
    partial sums, in the loop that stores it (``tl_radd``): no row helper is called."""
    ir = kernel_ir("softmax rows, parallel")
    sums = {int(w) for w in re.findall(r"\bfadd reassoc <(\d+) x float>", ir)}
    assert sums and max(sums) >= LANES, f"the exp sum is not vectorized: {sums}"
    calls = re.findall(r"call [^\n]*@\"?[\w.]*(tl_r\w+|_keys\w*|_top\w*)", ir)
    assert not calls, f"row helpers called, not inlined: {calls}"
    assert not GATHER.search(ir)
