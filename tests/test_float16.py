"""float16 in the CPU kernels (``cpu_backend/math_f16.py``): the conversions between float16
bits and float32, both the F16C one (LLVM ``half``) and the portable bit arithmetic, against
numpy's and PyTorch's float16 over every float16 and a dense sample of float32 (every
float32 exponent and sign, with the low mantissa bits where rounding changes: the ties, just
below and above them); and float16 kernels against PyTorch, with the kernel run counted."""
from __future__ import annotations

import numba
import numpy as np
import pytest

from torchlike import jit
from torchlike.cpu_backend import math_f16 as M
from torchlike.fuser import executor
from torchlike.interpreter import Interpreter
from torchlike.ir import parse_graph

pytestmark = pytest.mark.usefixtures("kernel_cache")


@numba.njit
def _from_bits(h, out, portable):
    for i in range(h.size):
        out[i] = M._f16_from_bits_portable(h[i]) if portable else M._f16_from_bits(h[i])


@numba.njit
def _to_bits(x, out, portable):
    for i in range(x.size):
        out[i] = M._f16_bits_portable(np.float32(x[i])) if portable else M._f16_bits(x[i])


@numba.njit
def _round(x, out):
    for i in range(x.size):
        out[i] = M._f16_round(x[i])


def _dense_float32() -> np.ndarray:
    """Every float32 sign and exponent with the upper 7 mantissa bits varied (2^16 patterns),
    each with low bits around float16's rounding points (bit 13 and below: ties, one ulp
    either side), the subnormal-range and overflow boundaries included."""
    hi = np.arange(1 << 16, dtype=np.uint32) << 16
    lo = np.array([0, 1, 0x0FFF, 0x1000, 0x1001, 0x1FFF, 0x2000, 0x2001, 0x3000, 0x5FFF,
                   0x6000, 0x6001, 0xE000, 0xFFFF], np.uint32)
    rng = np.random.default_rng(0)
    bits = (hi[:, None] | lo[None, :]).ravel()
    bits = np.concatenate([bits, rng.integers(0, 1 << 32, 1 << 20, dtype=np.uint64)
                          .astype(np.uint32)])
    return bits.view(np.float32)


@pytest.mark.parametrize("portable", [False, True], ids=["target", "portable"])
def test_every_float16_converts_exactly(portable):
    if not portable and not M.HAS_F16C:
        pytest.skip("needs a CPU with F16C for the target path (the portable one is tested)")
    h = np.arange(1 << 16, dtype=np.uint16)
    got = np.empty(h.size, np.float32)
    _from_bits(h, got, portable)
    want = h.view(np.float16).astype(np.float32)
    nan = np.isnan(want)
    np.testing.assert_array_equal(got.view(np.uint32)[~nan], want.view(np.uint32)[~nan])
    assert np.isnan(got[nan]).all()
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


@pytest.mark.parametrize("portable", [False, True], ids=["target", "portable"])
def test_float32_rounds_to_float16_as_numpy(portable):
    """Round to nearest even, overflow to inf, subnormals, signed zeros: numpy's astype (and
    PyTorch's, checked below) over the dense sample; a NaN stays a NaN of the same sign."""
    if not portable and not M.HAS_F16C:
        pytest.skip("needs a CPU with F16C for the target path (the portable one is tested)")
    x = _dense_float32()
    got = np.empty(x.size, np.uint16)
    _to_bits(x, got, portable)
    with np.errstate(over="ignore", invalid="ignore"):
        want = x.astype(np.float16).view(np.uint16)
    nan = np.isnan(x)
    np.testing.assert_array_equal(got[~nan], want[~nan])
    g = got[nan]
    assert ((g & 0x7C00) == 0x7C00).all() and ((g & 0x3FF) != 0).all()
    np.testing.assert_array_equal(g >> 15, np.signbit(x[nan]).astype(np.uint16))


def test_conversions_agree_with_pytorch(torch):
    """PyTorch's c10::Half: float32 and float64 (rounded to float32 first) to float16 bits,
    NaN payloads included on the F16C path (PyTorch's CPU conversion is the same instruction)."""
    x = _dense_float32()
    got = np.empty(x.size, np.uint16)
    _to_bits(x, got, False)
    want = torch.from_numpy(x).to(torch.float16).view(torch.int16).numpy().view(np.uint16)
    same = got == want
    if not M.HAS_F16C:
        same |= np.isnan(x)
    assert same.all(), [(hex(b), hex(g), hex(w)) for b, g, w in
                        zip(x.view(np.uint32)[~same][:5], got[~same][:5], want[~same][:5])]
    rng = np.random.default_rng(1)
    d = rng.standard_normal(1 << 16) * np.exp(rng.uniform(-30.0, 15.0, 1 << 16))
    got = np.empty(d.size, np.uint16)
    _to_bits(d, got, False)
    want = torch.from_numpy(d).to(torch.float16).view(torch.int16).numpy().view(np.uint16)
    np.testing.assert_array_equal(got, want)
    r = np.empty(d.size, np.float32)
    _round(d, r)
    np.testing.assert_array_equal(r, torch.from_numpy(d).to(torch.float16).float().numpy())


GELU_ADD = """
graph(%x : Tensor, %y : Tensor):
  %a : str = prim::Constant[value="none"]()
  %one : int = prim::Constant[value=1]()
  %g : Tensor = aten::gelu(%x, %a)
  %s : Tensor = aten::add(%g, %y, %one)
  %m : Tensor = aten::mul(%s, %x)
  return (%m)
"""


@pytest.mark.parametrize("n", [1000, 1 << 17], ids=["serial", "parallel"])
def test_float16_kernel_matches_pytorch(strict_cpu, torch, n):
    """A float16 group (PyTorch rounds each op's result to float16) in a compiled kernel, with
    special values, against eager PyTorch; the kernel ran (counters), nothing fell back."""
    rng = np.random.default_rng(n)
    x = (rng.standard_normal(n) * 30).astype(np.float16)
    y = (rng.standard_normal(n) * 1e4).astype(np.float16)
    x[:8] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 6e-8, -65504, 65504]
    y[8:12] = [65504, -65504, np.inf, 1e-7]
    g = jit.fuse(parse_graph(GELU_ADD))
    jit.reset_stats()
    executor.clear_caches()
    got = Interpreter(g, fusion_runner=executor.run_fusion_group).run(x, y)
    stats = jit.stats()
    assert stats["kernels_compiled"] + stats["disk_hits"] == 1, stats
    assert stats["groups_split"] == 0 and not stats["fallbacks"], stats
    tx, ty = torch.from_numpy(x), torch.from_numpy(y)
    want = ((torch.nn.functional.gelu(tx) + ty) * tx).numpy()
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, want)


# a float64 tensor's .half() under asinh: alone, and as the fuzz test's seed 866 had it
HALF_OF_DOUBLE = ["""
graph(%x : Tensor):
  %5 : int = prim::Constant[value=5]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %h : Tensor = aten::to(%x, %5, %f, %f, %none)
  %a : Tensor = aten::asinh(%h)
  return (%a)
""", """
graph(%x : Tensor):
  %5 : int = prim::Constant[value=5]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %one : float = prim::Constant[value=1.]()
  %i : int = prim::Constant[value=1]()
  %h : Tensor = aten::to(%x, %5, %f, %f, %none)
  %a : Tensor = aten::asinh(%h)
  %t : Tensor = aten::tanh(%a)
  %c : Tensor = aten::ceil(%x)
  %e : Tensor = aten::elu(%c, %one, %i, %i)
  return (%t, %e)
"""]


@pytest.mark.parametrize("shape", [(17, 33), (1 << 17,)], ids=["serial", "parallel"])
@pytest.mark.parametrize("which", [0, 1], ids=["asinh", "seed866"])
def test_half_of_a_float64_under_asinh_runs(strict_cpu, shape, which):
    """LLVM folded the float64 -> float32 -> float16 conversions into a call of __truncdfhf2,
    which the JIT lacked: the kernel jumped to address 0 (a segfault; found by the fuzz test).
    math_f16 provides it, rounding through float32: equal to the interpreter bit for bit,
    special values and float32 ties included; the kernel ran."""
    x = np.random.default_rng(0).standard_normal(shape) * 3
    x.reshape(-1)[:9] = [np.nan, np.inf, -np.inf, 0.0, -0.0, 1e300, 65520.0,
                         1 + 2.0 ** -11 + 2.0 ** -40, 2.0 ** -25]
    g = jit.fuse(parse_graph(HALF_OF_DOUBLE[which]))
    jit.reset_stats()
    executor.clear_caches()
    got = Interpreter(g, fusion_runner=executor.run_fusion_group).run(x)
    stats = jit.stats()
    assert stats["kernels_compiled"] + stats["disk_hits"] == 1 and not stats["fallbacks"], stats
    want = Interpreter(parse_graph(HALF_OF_DOUBLE[which])).run(x)
    for a, b in zip(got if which else (got,), want if which else (want,)):
        assert a.dtype == b.dtype
        np.testing.assert_array_equal(a, b)


# Operands meeting a float16 common dtype: PyTorch's CPU kernels round each one to float16
# first (a Python 0.3 is 0.30004883, an int32 2049 is 2048, add's alpha 3.3 is 3.3007812)
# except mul/div/lerp's Python-scalar other/weight, read at float32; its trunc and floor
# division round every step to float16 (trunc(7.5 / 0.025) is 300).
HALF_COMMON = """
graph(%x : Tensor, %y : Tensor, %i : Tensor):
  %one : int = prim::Constant[value=1]()
  %c3 : float = prim::Constant[value=0.3]()
  %c1 : float = prim::Constant[value=0.1]()
  %a : float = prim::Constant[value=3.3]()
  %pi : float = prim::Constant[value=3.14159]()
  %big : int = prim::Constant[value=2049]()
  %trunc : str = prim::Constant[value="trunc"]()
  %r0 : Tensor = aten::add(%x, %c3, %one)
  %r1 : Tensor = aten::sub(%x, %y, %a)
  %r2 : Tensor = aten::eq(%x, %c3)
  %r3 : Tensor = aten::mul(%x, %c3)
  %r4 : Tensor = aten::div(%x, %c3)
  %r5 : Tensor = aten::add(%i, %x, %one)
  %r6 : Tensor = aten::floor_divide(%x, %y)
  %r7 : Tensor = aten::div(%x, %y, %trunc)
  %r8 : Tensor = aten::hardshrink(%x, %c3)
  %r9 : Tensor = aten::pow(%x, %pi)
  %r10 : Tensor = aten::lerp(%x, %y, %c3)
  %r11 : Tensor = aten::lt(%i, %x)
  %r12 : Tensor = aten::remainder(%x, %c1)
  %r13 : Tensor = aten::rsub(%x, %big, %one)
  return (%r0, %r1, %r2, %r3, %r4, %r5, %r6, %r7, %r8, %r9, %r10, %r11, %r12, %r13)
"""


def _half_common_inputs():
    rng = np.random.default_rng(7)
    n = 4096
    x = (rng.standard_normal(n) * 30).astype(np.float16)
    x[::7] = np.float16(0.3)
    x[1::11] = np.float16(0.1) * rng.integers(1, 40, x[1::11].size).astype(np.float16)
    y = (rng.standard_normal(n) * 0.5).astype(np.float16)
    y[y == 0] = np.float16(0.25)
    i = rng.integers(-70000, 70000, n).astype(np.int32)
    i[:8] = [2049, -2049, 4097, 65519, 65520, -65521, 3, 0]
    return x, y, i


def _torch_half_common(torch, x, y, i):
    tx, ty, ti = (torch.from_numpy(a) for a in (x, y, i))
    F = torch.nn.functional
    outs = (tx + 0.3, torch.sub(tx, ty, alpha=3.3), tx == 0.3, tx * 0.3, tx / 0.3, ti + tx,
            tx // ty, torch.div(tx, ty, rounding_mode="trunc"), F.hardshrink(tx, 0.3),
            tx ** 3.14159, torch.lerp(tx, ty, 0.3), ti < tx, tx % 0.1, 2049 - tx)
    return [o.numpy() for o in outs]


@pytest.mark.parametrize("backend", ["interpreter", "cpu", "cuda-emulated"])
def test_half_common_dtype_rounds_operands_as_pytorch(strict_cpu, torch, backend):
    """Every output equals PyTorch's bit for bit (over 4096 elements: its vectorized loops),
    interpreted, in a Numba kernel and in the CUDA C kernel run on the CPU; the kernel ran."""
    from differential import backend_missing, run_emulated
    if backend_missing(backend):
        pytest.skip(backend_missing(backend))
    x, y, i = _half_common_inputs()
    graph = parse_graph(HALF_COMMON)
    if backend == "interpreter":
        got = Interpreter(graph).run_outputs([x, y, i])
    elif backend == "cuda-emulated":
        got = run_emulated(graph, [x, y, i])
    else:
        g = jit.fuse(graph)
        jit.reset_stats()
        got = Interpreter(g, fusion_runner=executor.run_fusion_group).run_outputs([x, y, i])
        stats = jit.stats()
        assert stats["kernels_compiled"] + stats["disk_hits"] >= 1, stats
        assert not stats["fallbacks"] and stats["groups_split"] == 0, stats
    want = _torch_half_common(torch, x, y, i)
    for k, (a, b) in enumerate(zip(got, want)):
        assert a.dtype == b.dtype, k
        np.testing.assert_array_equal(a, b, err_msg=f"output r{k}")


@pytest.mark.parametrize("backend", ["cpu", "cuda-emulated"])
def test_every_op_rounds_mixed_operands_to_float16_in_kernels(backend):
    """Every registry op with two or more operands on a float16 x, an int32 y holding values
    that round in float16 (2049, -4097, 65519) and a 0-d float64 0.3: the compiled kernels
    (Numba strictly, with the counters checked; the CUDA C through the emulator) equal the
    interpreter, whose rounding is checked against PyTorch in test_ops_elementwise."""
    from differential import Matrix, backend_missing, op_cases

    from torchlike.ops.elementwise_base import kept_operands
    if backend_missing(backend):
        pytest.skip(backend_missing(backend))
    cases = [c for c in op_cases()
             if len([n for n in c.op.operand_names if n not in kept_operands(c.op)]) >= 2]
    r = Matrix(backend, [("float16", "half-mixed")], cases=cases).check_case("float16",
                                                                             "half-mixed")
    assert len(r.cases) > 40, [c.id for c in r.cases]
    failures = r.failures()
    assert not failures, "\n".join(failures[:10])
