"""The CPU backend: one Numba kernel per fusion group and kernel key.

``codegen`` renders the kernel's Python source, ``compiler`` compiles it (through the on-disk
cache) and builds launchers, ``scalar_math`` holds the ``tl_*`` scalar helpers templates call.
"""
from __future__ import annotations

import hashlib
import os
import platform
import sys
from typing import Optional, Tuple

import numpy as np

# Numba's OpenMP pool spins while idle by default; on a busy machine with few cores the spinning
# threads compete with the caller and everything else (measured on 2 loaded cores: 8.0 ms for a
# 4M-element parallel multiply, 0.5 ms with passive waiting; idle, both take 0.4 ms).  The
# setting must be in the environment before the OpenMP runtime starts, i.e. before the first
# parallel kernel; a user's own value wins.
os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

from ..fuser.backend import ArraySpec, Backend, GroupSpec, KernelSource, Unsupported  # noqa: E402
from ..fuser.row_plan import plan_rows  # noqa: E402
from . import codegen, column_codegen, full_codegen, row_codegen  # noqa: E402
from .compiler import compile_kernel  # noqa: E402

__all__ = ["CpuBackend"]


def _fingerprint() -> str:
    """What the cached machine code also depends on: the toolchain and the helpers it inlines
    (Numba's own cache does not notice a changed callee in another module)."""
    parts = [sys.version, platform.machine()]
    parts.append(np.__version__)
    try:
        import numba
        parts.append(numba.__version__)
    except ImportError:
        pass
    parts.append(f"prefer-vector-width={codegen.vector_bits()}")
    here = os.path.dirname(__file__)
    # Every module of this backend (helpers such as math_f32 are inlined into kernels), plus
    # what the generated code depends on from below: the shared renderer and the casts.
    names = sorted(n for n in os.listdir(here) if n.endswith(".py"))
    names += [os.path.join("..", "fuser", "render.py"), os.path.join("..", "fuser", "kernel_spec.py"),
              os.path.join("..", "fuser", "row_reduce.py"),
              os.path.join("..", "fuser", "row_plan.py"),
              os.path.join("..", "fuser", "column_plan.py"),
              os.path.join("..", "ops", "casting.py")]
    for name in names:
        try:
            with open(os.path.join(here, name), "rb") as f:
                parts.append(hashlib.sha256(f.read()).hexdigest())
        except OSError:
            pass
    return hashlib.sha256("\n".join(parts).encode()).hexdigest()


class CpuBackend(Backend):
    """Numba on the CPU, for numpy arrays of every standard dtype but bfloat16."""

    name = "cpu"

    def __init__(self):
        self._fingerprint: Optional[str] = None

    def available(self) -> Tuple[bool, str]:
        try:
            import numba  # noqa: F401
        except Exception as e:  # ImportError, or a numba/numpy version mismatch
            return False, f"numba cannot be imported ({type(e).__name__}: {e})"
        return True, ""

    def check(self, spec: GroupSpec) -> Optional[str]:
        for s in spec.signature:
            if isinstance(s, ArraySpec):
                if s.module != "numpy":
                    return f"backend unavailable: cpu backend takes numpy arrays, not {s.module}"
                if s.dtype == "bfloat16":
                    return "unsupported dtype bfloat16"
        if spec.reductions:  # the row plan (row_codegen's input), or why there is no kernel
            try:
                spec.rows = plan_rows(spec, layouts=("rows", "columns"))
            except Unsupported as e:
                return e.reason
        return None

    def kernel_key(self, spec: GroupSpec) -> Tuple:
        key = ("cpu", codegen.VERSION, spec.structure, spec.input_key(), codegen.size_class(spec))
        return key if spec.rows is None else key + ("rows",) + spec.rows.key()

    def key_hash(self, key: Tuple) -> str:
        if self._fingerprint is None:
            self._fingerprint = _fingerprint()
        return hashlib.sha256((repr(key) + self._fingerprint).encode()).hexdigest()[:40]

    def generate(self, spec: GroupSpec) -> KernelSource:
        key = self.kernel_key(spec)
        h = self.key_hash(key)
        header = f"# torchlike-cpu-kernel v{codegen.VERSION} {h}"
        plan = spec.rows
        render = codegen.render if plan is None else \
            column_codegen.render if plan.layout == "columns" else \
            full_codegen.render if plan.k == len(plan.shape) else row_codegen.render
        src = render(spec, h, header)
        return KernelSource(src.name, src.source, key, src.info)

    def compile(self, source: KernelSource):
        return compile_kernel(source)
