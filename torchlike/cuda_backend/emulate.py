"""Run the exact source of generated CUDA kernels on the CPU (CI without a GPU).

The source is compiled by g++ with ``-DTL_EMULATE -include shim.h`` (``shim.h`` maps the CUDA
built-ins the kernels use onto C++) into a shared library, together with a generated launcher
per entry point::

    extern "C" void tl_launch_tl_fused_0f1e...(void** args, unsigned grid, unsigned block) {
      gridDim = {grid, 1, 1}; blockDim = {block, 1, 1};
      for (unsigned b = 0; b < grid; ++b)
        for (unsigned t = 0; t < block; ++t) {
          blockIdx = {b, 0, 0}; threadIdx = {t, 0, 0};
          tl_fused_0f1e...(*(const float32**)args[0], *(float32**)args[1], *(unsigned int*)args[2]);
        }
    }

called through ctypes with numpy arrays: threads run one after another, so grid-stride loops,
vector loads and their tails, strides and broadcasting all execute as written.  Libraries are
cached by source hash in ``<cache_dir>/cuda-emulated``.  ``build_many`` puts many kernels in one
library (g++ costs ~0.5 s per library, far more than per kernel).

``EmulatedCudaBackend`` is a ``fuser.backend.Backend`` over numpy arrays: the same differential
tests that run the CPU backend run the CUDA kernels' own code through it.
"""
from __future__ import annotations

import ctypes
import hashlib
import os
import shutil
import subprocess
import tempfile
import threading
from typing import Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..fuser.backend import ArraySpec, Backend, GroupSpec, KernelSource, Unsupported
from ..fuser.cache import kernel_dir
from ..fuser.stats import bump
from . import codegen, row_codegen, row_launch
from .codegen import CudaKernelInfo
from .compiler import CudaCompileError
from .launch import bind
from .layout import plan

SHIM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "shim.h")
GXX_FLAGS = ["-O1", "-std=c++17", "-DTL_EMULATE", "-fwrapv", "-fPIC", "-shared", "-w"]
EMU_GRID, EMU_BLOCK = 3, 5  # small and odd: every grid-stride loop wraps around, tails run
# row kernels: 2 blocks of 2 warps (a warp per row) or 3 warps (a block per row), so rows wrap
# around the grid and the cross-warp step folds an odd number of warps
EMU_ROW_GRID, EMU_WARP_BLOCK, EMU_ROW_BLOCK = 2, 64, 96
ORDERS = {"forward": 0, "reverse": 1, "alternate": 2, "skewed": 3, "skewed-reverse": 4}
_CTYPE = {"Q": ctypes.c_uint64, "I": ctypes.c_uint32, "i": ctypes.c_int32,
          "q": ctypes.c_int64, "d": ctypes.c_double, "?": ctypes.c_bool}
_lock = threading.Lock()
_LIBS: Dict[str, ctypes.CDLL] = {}  # source hash -> library holding that kernel


def _c_params(source: KernelSource) -> List[str]:
    info: CudaKernelInfo = source.info
    types = ["const long long*"] if info.table else [t for t, _ in info.params]
    return types + (["int*"] if info.uses_err else [])


def launcher_source(source: KernelSource) -> str:
    """The ``tl_launch_<entry>`` functions of one kernel module."""
    out = []
    types = _c_params(source)
    call_args = ", ".join(f"*({t}*)args[{k}]" for k, t in enumerate(types))
    if getattr(source.info, "barriers", False):  # cooperating threads: shim.h's fibers
        for entry in source.info.entries:
            out.append(f'static void tl_body_{entry}() {{\n'
                       f'  void** args = tl_emu->args;\n'
                       f'  {entry}({call_args});\n}}\n'
                       f'extern "C" int tl_launch_{entry}(void** args, unsigned grid, '
                       f'unsigned block, int order) {{\n'
                       f'  return tl_emu_launch(args, grid, block, order, tl_body_{entry});\n}}\n')
        return "\n".join(out)
    for entry in source.info.entries:
        out.append(f'extern "C" void tl_launch_{entry}(void** args, unsigned grid, '
                   f'unsigned block) {{\n'
                   f'  gridDim = {{grid, 1, 1}}; blockDim = {{block, 1, 1}};\n'
                   f'  for (unsigned b = 0; b < grid; ++b)\n'
                   f'    for (unsigned t = 0; t < block; ++t) {{\n'
                   f'      blockIdx = {{b, 0, 0}}; threadIdx = {{t, 0, 0}};\n'
                   f'      {entry}({call_args});\n'
                   f'    }}\n}}\n')
    return "\n".join(out)


def _digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:32]


def gxx_compile(text: str, path: str) -> None:
    """``text`` -> shared library ``path`` (written atomically).  Raises CudaCompileError."""
    gxx = shutil.which("g++")
    if gxx is None:
        raise CudaCompileError("g++ is not on PATH: the CUDA emulator needs a host C++ compiler")
    directory = os.path.dirname(path)
    fd, src = tempfile.mkstemp(dir=directory, prefix=".tmp-", suffix=".cpp")
    with os.fdopen(fd, "w") as f:
        f.write(text)
    tmp_out = src[:-4] + ".so"
    try:
        proc = subprocess.run([gxx, *GXX_FLAGS, "-include", SHIM, "-o", tmp_out, src],
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise CudaCompileError("g++ failed to compile the emulated CUDA source",
                                   proc.stderr[-8000:], text)
        os.replace(tmp_out, path)
    finally:
        for f in (src, tmp_out):
            if os.path.exists(f):
                os.unlink(f)


def _shim_text() -> str:
    global _SHIM_TEXT
    if _SHIM_TEXT is None:
        with open(SHIM) as f:
            _SHIM_TEXT = f.read()
    return _SHIM_TEXT


_SHIM_TEXT = None


def build_many(sources: Sequence[KernelSource]) -> ctypes.CDLL:
    """One shared library holding every kernel of ``sources`` (their exact text, concatenated:
    the prelude's guards let them share one translation unit) and their launchers."""
    unique = {s.source: s for s in sources}
    text = "\n".join(list(unique) + [launcher_source(s) for s in unique.values()])
    h = _digest(text + _shim_text())  # a changed shim.h builds anew
    with _lock:
        lib = _LIBS.get(h)
        if lib is None:
            path = os.path.join(kernel_dir("cuda-emulated"), f"{h}.so")
            if os.path.exists(path):
                bump("disk_hits")
            else:
                gxx_compile(text, path)
            lib = ctypes.CDLL(path)
            _LIBS[h] = lib
        for s in unique:
            _LIBS.setdefault(_digest(s), lib)
    return lib


class EmulationError(CudaCompileError):
    """An emulated kernel misused a barrier or a shuffle (shim.h's scheduler refused it)."""


class _HostDevice:
    """``launch.bind``'s device for the emulator: numpy arrays, ctypes calls."""

    def __init__(self, lib: ctypes.CDLL, grid: int, block: int, rows=None):
        self.lib, self.grid, self.block = lib, grid, block
        self.rows = rows or {}  # row kernels: grid, warp_block, block, order
        self.fns = {}
        self.launches: Dict[str, int] = {}  # entry point -> calls (which entry a launcher took)

    @staticmethod
    def empty(shape, dtype):
        return np.empty(shape, dtype)

    @staticmethod
    def pointer(a) -> int:
        return a.__array_interface__["data"][0]

    @staticmethod
    def zeros_err():
        return np.zeros(1, np.int32)

    @staticmethod
    def read_err(err) -> bool:
        return bool(err[0])

    @staticmethod
    def table(values: np.ndarray):
        return values, values.__array_interface__["data"][0]

    def launch(self, entry: str, packed, n: int, keep) -> None:
        fn = self.fns.get(entry)
        if fn is None:
            fn = self.fns[entry] = getattr(self.lib, f"tl_launch_{entry}")
            fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_uint]
            fn.restype = None
        self.launches[entry] = self.launches.get(entry, 0) + 1
        objs = [_CTYPE[k](int(v) if k in "QIiq" else v) for k, v in packed]
        argv = (ctypes.c_void_p * max(1, len(objs)))(*[ctypes.addressof(o) for o in objs])
        fn(argv, self.grid, self.block)

    def launch_rows(self, entry: str, packed, team: str, rows: int, n: int,
                    per_warp: int = 1) -> None:
        """A row kernel, on a small grid of its own (``EMU_ROW_*``), its threads as fibers."""
        fn = self.fns.get(entry)
        if fn is None:
            fn = self.fns[entry] = getattr(self.lib, f"tl_launch_{entry}")
            fn.argtypes = [ctypes.POINTER(ctypes.c_void_p), ctypes.c_uint, ctypes.c_uint,
                           ctypes.c_int]
            fn.restype = ctypes.c_int
        self.launches[entry] = self.launches.get(entry, 0) + 1
        opts = self.rows
        block = opts.get("warp_block", EMU_WARP_BLOCK) if team == "warp" else \
            opts.get("block", EMU_ROW_BLOCK)
        objs = [_CTYPE[k](int(v) if k in "QIiq" else v) for k, v in packed]
        argv = (ctypes.c_void_p * max(1, len(objs)))(*[ctypes.addressof(o) for o in objs])
        status = fn(argv, opts.get("grid", EMU_ROW_GRID), block,
                    ORDERS[opts.get("order", "forward")])
        if status:
            raise EmulationError(f"emulated kernel {entry}: " + (
                "a __syncthreads that not every thread of the block reached" if status == 1
                else "a warp shuffle whose lanes cannot all arrive (or of width != 32)"))


class EmulatedKernel:
    def __init__(self, source: KernelSource, lib: ctypes.CDLL, grid: int, block: int,
                 rows=None):
        self.source = source
        self.device = _HostDevice(lib, grid, block, rows)
        self.team = (rows or {}).get("team")

    def bind(self, spec: GroupSpec, on_error):
        if getattr(self.source.info, "barriers", False):
            return row_launch.bind(self.source, spec, on_error, self.device, self.team)
        return bind(self.source, spec, on_error, self.device)


class EmulatedCudaBackend(Backend):
    """The CUDA code generator, its kernels run on the CPU (numpy arrays; ``xp`` is numpy).

    ``grid``/``block``: the launch shape every kernel gets (small, so loops wrap).  ``rows``:
    how row kernels run -- ``grid``, ``warp_block``, ``block`` (threads; multiples of 32),
    ``order`` (``ORDERS``: the fibers' schedule) and ``team`` (``"warp"``/``"block"``: force
    that entry whatever the row length)."""

    name = "cuda-emulated"
    xp = np

    def __init__(self, grid: int = EMU_GRID, block: int = EMU_BLOCK,
                 max_param_bytes: Optional[int] = None, rows: Optional[dict] = None):
        self.grid, self.block, self.max_param_bytes = grid, block, max_param_bytes
        self.rows = dict(rows or {})

    def available(self) -> Tuple[bool, str]:
        if shutil.which("g++") is None:
            return False, "g++ is not on PATH"
        return True, ""

    def check(self, spec: GroupSpec) -> Optional[str]:
        reason = row_codegen.check(spec) if spec.reductions else None
        if reason is not None:
            return reason
        for s in spec.signature:
            if isinstance(s, ArraySpec) and s.module != "numpy":
                return f"backend unavailable: {self.name} takes numpy arrays, not {s.module}"
        return None

    def kernel_key(self, spec: GroupSpec) -> Tuple:
        if spec.rows is not None:
            return row_codegen.kernel_key(self.name, spec)
        p = plan(spec, self.max_param_bytes)
        return (self.name, codegen.VERSION, spec.structure, spec.input_key(), p.key())

    def generate(self, spec: GroupSpec) -> KernelSource:
        if spec.rows is not None:
            return row_codegen.render(spec, self.kernel_key(spec))
        p = plan(spec, self.max_param_bytes)
        key = (self.name, codegen.VERSION, spec.structure, spec.input_key(), p.key())
        return codegen.render(spec, p, key)

    def compile(self, source: KernelSource) -> EmulatedKernel:
        lib = _LIBS.get(_digest(source.source))
        if lib is None:
            try:
                lib = build_many([source])
            except CudaCompileError as e:
                raise Unsupported(f"compile failed: g++: {str(e).splitlines()[0][:200]}") \
                    from None
            bump("kernels_compiled")
        return EmulatedKernel(source, lib, self.grid, self.block, self.rows)
