"""LLVM vectorizes the fused CPU kernels: representative groups go through the real fuser
(codegen -> the cpu backend's compile), and the LLVM IR Numba produced for the kernel must hold
float vector arithmetic of the width LLVM uses on this machine and no libm call (expf, logf,
tanhf, ...) in the loop.

The width comes from the CPU's features: 8 float lanes with AVX2.  With AVX-512, LLVM's tuning
for recent Intel cores (skylake-avx512 .. emeraldrapids) prefers 256-bit vectors
(``prefer-vector-width=256``), so the kernels use 8 lanes there too; 16 would need that
attribute changed in the kernel's compilation (an open point of the SIMD issue).
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
# float32 lanes LLVM uses (see the module docstring): 256-bit vectors with AVX2 or AVX-512
LANES = 8 if FEATURES & {"avx2", "avx512f"} else 4

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
}

VECTOR_FLOAT = re.compile(r"\b(?:fmul|fadd|fsub|fdiv) (?:\w+ )*<(\d+) x float>")
LIBM_CALL = re.compile(r"call [^@\n]*@((?:exp|log|tanh|erf|pow|a?sin|a?cos|atan|sqrt)\w*)\(")


@pytest.fixture(scope="module", autouse=True)
def _kernel_cache(tmp_path_factory):
    config.set_cache_dir(tmp_path_factory.mktemp("kernels"))
    yield
    config.set_cache_dir(None)


_IR = {}


def kernel_ir(name):
    """The LLVM IR of the group's compiled kernel function (not Numba's Python wrapper).
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
    bodies = [b for b in ir.split("\ndefine ")[1:]
              if source.name in b.split("\n", 1)[0] and "cpython" not in b.split("\n", 1)[0]]
    assert bodies, f"{name}: kernel {source.name} not found in the IR"
    return "\n".join(bodies)


def widths(ir):
    return {int(w) for w in VECTOR_FLOAT.findall(ir)}


@pytest.mark.parametrize("name", list(GRAPHS))
def test_kernel_vectorizes_at_llvm_preferred_width(name):
    ir = kernel_ir(name)
    assert not LIBM_CALL.findall(ir), f"{name}: libm calls left: {set(LIBM_CALL.findall(ir))}"
    seen = widths(ir)
    assert seen and max(seen) >= LANES, f"{name}: float vector widths {seen}, want {LANES}"
