"""The CUDA backend: CUDA C kernels generated from the registry's ``cuda`` templates.

``codegen`` renders a kernel per fusion group and kernel key (``layout`` decides indexing:
contiguous with 16-byte vectors, or strided with broadcasting); a group with row reductions is
``row_codegen``'s (a warp or a block per row, launched by ``row_launch``); ``compiler`` compiles with NVRTC
or nvcc (no GPU needed), ``emulate`` runs the exact source on the CPU through ``shim.h`` and
g++, ``runtime`` launches it on a GPU with CuPy.  ``torchlike.backends`` registers the last two
as the fuser's ``cuda-emulated`` and ``cuda`` backends.
"""
from .compiler import CudaCompileError, nvcc_compile, nvrtc_compile
from .emulate import EmulatedCudaBackend
from .runtime import CudaBackend

__all__ = ["CudaBackend", "EmulatedCudaBackend", "CudaCompileError", "nvrtc_compile",
           "nvcc_compile"]
