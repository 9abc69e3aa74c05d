"""``CudaBackend``: generated CUDA kernels compiled with NVRTC and launched on CuPy's current
stream.

Inputs are cupy arrays or anything exposing ``__cuda_array_interface__`` (a PyTorch CUDA tensor
through ``cupy.asarray(t)``, which does not copy); outputs are cupy arrays.  Each launch uses
``BLOCK`` threads per block and ``min(ceil(n / BLOCK), sm_count * BLOCKS_PER_SM)`` blocks: the
grid-stride loop covers the rest.

Kernels are compiled here, not by ``cupy.RawModule``: CuPy appends ``-ftz=true`` to every NVRTC
compile, which flushes subnormal operands and results to zero (``0.5 / 1e-38`` would be inf),
where PyTorch's CUDA kernels keep them.  NVRTC builds a cubin for the device (``sm_XY``; PTX for
the newest architecture it knows where the device is newer), with ``compiler.PRECISE``.  The
image is stored under ``kernel_dir("cuda")`` as ``<kernel>-<key>.cubin`` / ``.ptx``: a SHA-256
of the image, then the image; the key hashes the source, target, options and NVRTC version.
A file whose digest does not match is rebuilt, never handed to the driver.
"""
from __future__ import annotations

import hashlib
import logging
import os
from typing import Optional, Sequence, Tuple

import numpy as np

from ..fuser.backend import ArraySpec, Backend, GroupSpec, KernelSource, Unsupported
from ..fuser.cache import kernel_dir, write_bytes_atomic
from ..fuser.stats import bump
from . import codegen, row_codegen, row_launch
from .codegen import BLOCK
from .compiler import CudaCompileError, nvrtc_compile, nvrtc_options
from .launch import bind
from .layout import plan

logger = logging.getLogger("torchlike.cuda")

BLOCKS_PER_SM = 32
_NP = {"Q": np.uint64, "I": np.uint32, "i": np.int32, "q": np.int64, "d": np.float64,
       "?": np.bool_}


def nvrtc_target(cc: int, known: Sequence[int]) -> str:
    """NVRTC's target for a device of compute capability ``cc`` (90 for 9.0): the real
    ``sm_<cc>`` where NVRTC knows it (a cubin), else the virtual ``compute_<newest known below
    cc>`` (PTX, which the driver compiles for the device).

        >>> nvrtc_target(90, [75, 80, 86, 90, 100]), nvrtc_target(91, [80, 90])
        ('sm_90', 'compute_90')
    """
    if not known or cc in known:
        return f"sm_{cc}"
    lower = [a for a in known if a < cc]
    return f"compute_{max(lower)}" if lower else f"sm_{cc}"


def image_path(source: KernelSource, target: str, nvrtc_version) -> str:
    """Where the compiled image of ``source`` for ``target`` lives in the kernel cache."""
    key = "\0".join([source.source, target, *nvrtc_options(target), repr(nvrtc_version)])
    digest = hashlib.sha256(key.encode()).hexdigest()[:32]
    ext = "cubin" if target.startswith("sm_") else "ptx"
    return os.path.join(kernel_dir("cuda"), f"{source.name}-{digest}.{ext}")


def read_image(path: str) -> Optional[bytes]:
    """The image stored at ``path`` if its digest matches, else None (missing or corrupt)."""
    try:
        with open(path, "rb") as f:
            blob = f.read()
    except OSError:
        return None
    digest, image = blob[:32], blob[32:]
    if len(blob) <= 32 or hashlib.sha256(image).digest() != digest:
        logger.info("kernel cache entry %s is corrupt: rebuilding it", path)
        return None
    return image


def build_image(source: KernelSource, target: str) -> Tuple[bytes, bool]:
    """(the image the driver loads, whether it came from the disk cache): NVRTC's cubin (or
    NUL-terminated PTX) of ``source`` for ``target``, compiled and stored unless a sound copy is
    on disk.  Needs NVRTC, not a GPU.  Raises CudaCompileError."""
    from cupy.cuda import nvrtc
    path = image_path(source, target, nvrtc.getVersion())
    image = read_image(path)
    if image is not None:
        return image, True
    image, _log = nvrtc_compile(source.source, target, f"{source.name}.cu")
    if not target.startswith("sm_"):
        image += b"\0"  # the driver reads PTX as a NUL-terminated string
    write_bytes_atomic(path, hashlib.sha256(image).digest() + image)
    return image, False


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

    def launch_rows(self, entry: str, packed, team: str, rows: int, n: int,
                    per_warp: int = 1) -> None:
        fn = self.fns.get(entry)
        if fn is None:
            fn = self.fns[entry] = self.module.get_function(entry)
        grid, block = row_launch.gpu_shape(team, rows, n, self.sm_count, per_warp)
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
        self._target: Optional[str] = None  # nvrtc_target of the current device, once asked

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
        from cupy.cuda import nvrtc
        from cupy.cuda.function import Module
        dev = cupy.cuda.Device()
        if self._target is None:
            known = ()
            try:
                known = tuple(nvrtc.getSupportedArchs())
            except Exception:  # an NVRTC older than 11.2 cannot say: ask for the device's own
                pass
            self._target = nvrtc_target(int(dev.compute_capability), known)
            self._sm_count = int(dev.attributes["MultiProcessorCount"])
        try:
            image, hit = build_image(source, self._target)
        except CudaCompileError as e:
            first = str(e).strip().splitlines()[0]
            raise Unsupported(f"compile failed: NVRTC: {first[:200]}") from None
        module = Module()
        try:
            module.load(image)
            for entry in source.info.entries:
                module.get_function(entry)
        except Exception as e:
            first = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            raise Unsupported(f"the CUDA driver refused the compiled kernel: {first[:200]}"
                              ) from None
        bump("disk_hits" if hit else "kernels_compiled")
        return CudaKernel(source, module, self._sm_count)


__all__ = ["CudaBackend", "CudaKernel", "build_image", "image_path", "nvrtc_target", "read_image"]
