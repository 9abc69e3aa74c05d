"""Compile CUDA C without a GPU: NVRTC (through CuPy's low-level bindings) and nvcc.

    cubin, log = nvrtc_compile(source, arch="sm_90")   # raises CudaCompileError with the log
    cubin = nvcc_compile(source, arch="sm_80")         # -Werror all-warnings

Both compile for a real architecture (a cubin, so the whole back end runs, not just the front
end), with precise math: no ``--use_fast_math``, denormals kept (``--ftz=false``), IEEE division
and square root, no contraction of ``a * b + c`` into an FMA (``--fmad=false``).  Headers
(``cuda_fp16.h``, ``cuda_bf16.h``) come from ``$CUDA_PATH/include`` or the ``cuda-toolkit`` pip
package (``site-packages/nvidia/cu13/include``).
"""
from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from typing import List, Optional, Tuple

from ..errors import TorchlikeError

# --fmad=false: a * b + c is two roundings, as in the interpreter, the CPU kernels and the
# emulator; contracted into one FMA it differs in the last bit and in the sign of a zero result
# (float16 logaddexp2(-1, -1) gave -0.0 on an H200).  Explicit fmaf() calls still fuse.
PRECISE = ["--ftz=false", "--prec-div=true", "--prec-sqrt=true", "--fmad=false"]


class CudaCompileError(TorchlikeError, RuntimeError):
    """NVRTC or nvcc refused a kernel; ``log`` holds the compiler's messages."""

    def __init__(self, message: str, log: str = "", source: str = ""):
        super().__init__(f"{message}\n{log}".rstrip())
        self.log = log
        self.source = source


def cuda_include_dirs() -> List[str]:
    """Directories holding ``cuda_fp16.h``: ``$CUDA_PATH/include``, then the pip packages'."""
    dirs = []
    for env in ("CUDA_PATH", "CUDA_HOME"):
        root = os.environ.get(env)
        if root and os.path.isfile(os.path.join(root, "include", "cuda_fp16.h")):
            dirs.append(os.path.join(root, "include"))
    for base in [p for p in sys.path if p.endswith("site-packages")]:
        for inc in sorted(glob.glob(os.path.join(base, "nvidia", "cu*", "include")), reverse=True):
            if os.path.isfile(os.path.join(inc, "cuda_fp16.h")):
                dirs.append(inc)
        inc = os.path.join(base, "nvidia", "cuda_runtime", "include")
        if os.path.isfile(os.path.join(inc, "cuda_fp16.h")):
            dirs.append(inc)
    nvcc = shutil.which("nvcc")
    if nvcc:
        inc = os.path.join(os.path.dirname(os.path.dirname(os.path.realpath(nvcc))), "include")
        if os.path.isfile(os.path.join(inc, "cuda_fp16.h")):
            dirs.append(inc)
    return list(dict.fromkeys(dirs))


def nvrtc_options(arch: str = "sm_90") -> List[str]:
    """What NVRTC compiles every kernel with: C++17, precise math (never --use_fast_math, never
    -ftz=true), the CUDA headers."""
    opts = [f"--gpu-architecture={arch}", "--std=c++17", *PRECISE]
    opts += [f"-I{d}" for d in cuda_include_dirs()[:1]]
    return opts


def nvrtc_compile(source: str, arch: str = "sm_90", name: str = "kernel.cu",
                  options: Optional[List[str]] = None) -> Tuple[bytes, str]:
    """(cubin, log) of ``source`` for ``arch`` (``sm_XY``), or (PTX, log) for a virtual
    ``compute_XY``; needs no GPU.  Raises CudaCompileError."""
    try:
        from cupy.cuda import nvrtc
    except Exception as e:  # cupy missing, or its NVRTC library
        raise CudaCompileError(f"NVRTC is not available ({type(e).__name__}: {e})") from None
    prog = nvrtc.createProgram(source, name, [], [])
    try:
        try:
            nvrtc.compileProgram(prog, list(options or nvrtc_options(arch)))
        except nvrtc.NVRTCError as e:
            raise CudaCompileError(f"NVRTC failed to compile {name} for {arch}: {e}",
                                   nvrtc.getProgramLog(prog), source) from None
        log = nvrtc.getProgramLog(prog).strip("\x00").strip()
        if arch.startswith("compute_"):
            ptx = nvrtc.getPTX(prog)
            return (ptx.encode() if isinstance(ptx, str) else ptx).rstrip(b"\x00"), log
        return nvrtc.getCUBIN(prog), log
    finally:
        nvrtc.destroyProgram(prog)


def nvcc_compile(source: str, arch: str = "sm_90") -> bytes:
    """The cubin nvcc builds from ``source`` with every warning an error."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise CudaCompileError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="torchlike-nvcc-") as tmp:
        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-std=c++17", "-Werror", "all-warnings",
               *PRECISE, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True)
        if proc.returncode != 0 or not os.path.exists(out):
            raise CudaCompileError(f"nvcc failed to compile for {arch} "
                                   f"(exit {proc.returncode})", proc.stdout + proc.stderr, source)
        with open(out, "rb") as f:
            return f.read()


def ptxas_usage(source: str, arch: str = "sm_90") -> dict:
    """Per entry point, what ``ptxas -v`` reports when nvcc builds ``source`` for ``arch``:
    ``{"registers", "stack", "spill_stores", "spill_loads", "lmem", "smem"}`` in registers and
    bytes (``lmem``: local memory; absent from ptxas's line means 0).  Raises
    CudaCompileError like ``nvcc_compile``."""
    nvcc = shutil.which("nvcc")
    if nvcc is None:
        raise CudaCompileError("nvcc is not on PATH")
    with tempfile.TemporaryDirectory(prefix="torchlike-ptxas-") as tmp:
        src, out = os.path.join(tmp, "kernel.cu"), os.path.join(tmp, "kernel.cubin")
        with open(src, "w") as f:
            f.write(source)
        cmd = [nvcc, "-cubin", f"-arch={arch}", "-std=c++17", "-Werror", "all-warnings",
               "-Xptxas", "-v", *PRECISE, "-o", out, src]
        proc = subprocess.run(cmd, capture_output=True, text=True)
    log = proc.stdout + proc.stderr
    if proc.returncode != 0:
        raise CudaCompileError(f"nvcc failed to compile for {arch} (exit {proc.returncode})",
                               log, source)
    usage: dict = {}
    entry = None
    for line in log.splitlines():
        m = re.search(r"Compiling entry function '(\w+)'", line) or \
            re.search(r"Function properties for (\w+)", line)
        if m:
            entry = m.group(1)
            usage.setdefault(entry, {"registers": 0, "stack": 0, "spill_stores": 0,
                                     "spill_loads": 0, "lmem": 0, "smem": 0})
            continue
        if entry is None:
            continue
        u = usage[entry]
        for key, pat in (("stack", r"(\d+) bytes stack frame"),
                         ("spill_stores", r"(\d+) bytes spill stores"),
                         ("spill_loads", r"(\d+) bytes spill loads"),
                         ("registers", r"Used (\d+) registers"),
                         ("lmem", r"(\d+) bytes lmem"), ("smem", r"(\d+) bytes smem")):
            m = re.search(pat, line)
            if m:
                u[key] = int(m.group(1))
    return usage
