"""``CudaBackend``: generated CUDA kernels compiled with NVRTC (``cupy.RawModule``) and launched
on CuPy's current stream.

Inputs are cupy arrays or anything exposing ``__cuda_array_interface__`` (a PyTorch CUDA tensor
through ``cupy.asarray(t)``, which does not copy); outputs are cupy arrays.  Each launch uses
``BLOCK`` threads per block and ``min(ceil(n / BLOCK), sm_count * BLOCKS_PER_SM)`` blocks: the
grid-stride loop covers the rest.  Compiled modules persist in CuPy's own on-disk cache, placed
under ``TORCHLIKE_CACHE_DIR`` (as ``CUPY_CACHE_DIR``) when that is set.
"""
from __future__ import annotations

import os
from typing import Optional, Tuple

import numpy as np

from ..fuser.backend import ArraySpec, Backend, GroupSpec, KernelSource, Unsupported
from ..fuser.cache import kernel_dir
from ..fuser.stats import bump
from . import codegen, row_codegen, row_launch
from .codegen import BLOCK
from .compiler import PRECISE, cuda_include_dirs
from .launch import bind
from .layout import plan

BLOCKS_PER_SM = 32
_NP = {"Q": np.uint64, "I": np.uint32, "i": np.int32, "q": np.int64, "d": np.float64,
       "?": np.bool_}


def rawmodule_options() -> Tuple[str, ...]:
    """NVRTC options: C++17, precise math (never --use_fast_math)."""
    return ("--std=c++17", *PRECISE, *[f"-I{d}" for d in cuda_include_dirs()[:1]])


class _GpuDevice:
    """``launch.bind``'s device on a GPU: cupy allocations, RawKernel launches."""

    def __init__(self, module, sm_count: int):
        self.module = module
        self.max_grid = max(1, sm_count * BLOCKS_PER_SM)
        self.sm_count = sm_count
        self.fns = {}
        import cupy
        self.cupy = cupy

    def empty(self, shape, dtype):
        return self.cupy.empty(shape, dtype)

    @staticmethod
    def pointer(a) -> int:
        data = getattr(a, "data", None)
        ptr = getattr(data, "ptr", None)
        return ptr if ptr is not None else a.__cuda_array_interface__["data"][0]

    def zeros_err(self):
        return self.cupy.zeros(1, self.cupy.int32)

    @staticmethod
    def read_err(err) -> bool:
        return bool(int(err.get()[0]))

    def table(self, values: np.ndarray):
        dev = self.cupy.asarray(values)
        return dev, dev.data.ptr

    def launch(self, entry: str, packed, n: int, keep) -> None:
        fn = self.fns.get(entry)
        if fn is None:
            fn = self.fns[entry] = self.module.get_function(entry)
        grid = min((n + BLOCK - 1) // BLOCK, self.max_grid)
        fn((grid,), (BLOCK,), tuple(_NP[k](v) for k, v in packed))

    def launch_rows(self, entry: str, packed, team: str, rows: int, n: int) -> None:
        fn = self.fns.get(entry)
        if fn is None:
            fn = self.fns[entry] = self.module.get_function(entry)
        grid, block = row_launch.gpu_shape(team, rows, n, self.sm_count)
        fn((grid,), (block,), tuple(_NP[k](v) for k, v in packed))


class CudaKernel:
    def __init__(self, source: KernelSource, module, sm_count: int):
        self.source = source
        self.device = _GpuDevice(module, sm_count)

    def bind(self, spec: GroupSpec, on_error):
        if getattr(self.source.info, "barriers", False):
            return row_launch.bind(self.source, spec, on_error, self.device)
        return bind(self.source, spec, on_error, self.device)


class CudaBackend(Backend):
    """CUDA C through CuPy on the current device."""

    name = "cuda"

    def __init__(self):
        self._sm_count: Optional[int] = None

    def available(self) -> Tuple[bool, str]:
        try:
            import cupy
        except Exception as e:
            return False, f"cupy cannot be imported ({type(e).__name__}: {e})"
        try:
            count = cupy.cuda.runtime.getDeviceCount()
        except Exception as e:
            return False, f"no CUDA GPU present ({type(e).__name__}: {e})"
        if count == 0:
            return False, "no CUDA GPU present"
        return True, ""

    def check(self, spec: GroupSpec) -> Optional[str]:
        # the row plan first: ``codegen`` renders a group for numpy inputs too
        reason = row_codegen.check(spec) if spec.reductions else None
        if reason is not None:
            return reason
        for s in spec.signature:
            if isinstance(s, ArraySpec) and s.module == "numpy":
                return "backend unavailable: cuda backend takes GPU arrays, not numpy"
        return None

    def kernel_key(self, spec: GroupSpec) -> Tuple:
        if spec.rows is not None:  # a row-reduction kernel (row_codegen)
            return row_codegen.kernel_key(self.name, spec)
        return (self.name, codegen.VERSION, spec.structure, spec.input_key(), plan(spec).key())

    def generate(self, spec: GroupSpec) -> KernelSource:
        if spec.rows is not None:
            return row_codegen.render(spec, self.kernel_key(spec))
        p = plan(spec)
        key = (self.name, codegen.VERSION, spec.structure, spec.input_key(), p.key())
        return codegen.render(spec, p, key)

    def compile(self, source: KernelSource) -> CudaKernel:
        import cupy
        if os.environ.get("TORCHLIKE_CACHE_DIR") and "CUPY_CACHE_DIR" not in os.environ:
            os.environ["CUPY_CACHE_DIR"] = kernel_dir("cuda")
        try:
            module = cupy.RawModule(code=source.source, options=rawmodule_options())
            for entry in source.info.entries:
                module.get_function(entry)  # compiles (or loads from CuPy's disk cache) now
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise Unsupported(f"compile failed: NVRTC: {first[:200]}") from None
        bump("kernels_compiled")
        if self._sm_count is None:
            dev = cupy.cuda.Device()
            self._sm_count = int(dev.attributes["MultiProcessorCount"])
        return CudaKernel(source, module, self._sm_count)


__all__ = ["CudaBackend", "CudaKernel", "rawmodule_options"]
