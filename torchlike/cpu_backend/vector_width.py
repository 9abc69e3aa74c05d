"""``tl_wide_vectors()``: the kernels' request for the CPU's full SIMD width.

LLVM's tuning for recent Intel cores with AVX-512 (skylake-avx512 up to emeraldrapids) sets
``prefer-vector-width=256``: the loop vectorizer then uses 8 float32 lanes although the machine
has 16.  The preference exists because 512-bit instructions lowered the clock of early AVX-512
parts when only a few of them ran; the fused kernels are long runs of vector arithmetic, where
twice the lanes wins (measured on an Emerald Rapids Xeon, 2 cores, 2^22 float32: the float32
tanh kernel 2.4-2.8 ms at 256 bits, 1.3-1.5 ms at 512; memory-bound kernels are unchanged).

The call is an intrinsic that emits no instruction; compiling it sets the LLVM function attribute
``"prefer-vector-width"="<bits>"`` on the function it is compiled into, i.e. the loop of the
generated kernel (for a ``prange`` loop, Numba's outlined loop body).  Only torchlike's kernels
are affected, not the user's own Numba code.  ``TORCHLIKE_CPU_VECTOR_BITS`` overrides the width
(``256`` restores LLVM's choice on these cores; ``0`` leaves the attribute out); the value is
part of the kernel cache fingerprint.  On a machine without AVX-512 the attribute caps at what
the target has (256 bits with AVX2).
"""
from __future__ import annotations

from llvmlite.ir import values as llvm_values
from numba.core import types
from numba.extending import intrinsic

from .codegen import vector_bits


class _PreferWidth(llvm_values.FunctionAttributes):
    """A function's attributes plus ``"prefer-vector-width"``: llvmlite's attribute set only
    takes the enum attributes it knows, so the string attribute is appended when printed."""

    bits = 512

    def __bool__(self):  # printed even when no enum attribute is set
        return True

    def _to_list(self, ret_type):
        return super()._to_list(ret_type) + [f'"prefer-vector-width"="{self.bits}"']


@intrinsic
def tl_wide_vectors(typingctx):
    """No instruction; marks the enclosing LLVM function (see the module docstring)."""
    def codegen(context, builder, sig, args):
        bits = vector_bits()
        attrs = builder.function.attributes
        if bits and type(attrs) is llvm_values.FunctionAttributes:
            attrs.__class__ = _PreferWidth
            attrs.bits = bits
        return context.get_dummy_value()
    return types.none(), codegen


__all__ = ["tl_wide_vectors"]
