"""The process environment every timed bench entry point runs under (``python -m bench``,
``bench.autodiff``, ``bench.onnx_bench``), so that their times compare.

* ``ALLOCATOR_ENV``: glibc keeps freed large blocks instead of returning them to the OS, so an
  output allocated per call is not a fresh ``mmap`` whose pages fault in (and are zeroed) on
  every call: a 16 MB output costs ~1 ms of page faults otherwise, for every mode alike.
* ``OPENMP_ENV``: torchlike's CPU backend sets OMP_WAIT_POLICY=PASSIVE (setdefault) when it is
  imported, but the OpenMP runtime reads it once, when it starts: in the harness torch's import
  or the copy floor's Numba prange loop would start it first and torchlike's kernels would run
  with active waiting, as no torchlike user's would (on a busy 2-core machine: 8 ms instead of
  0.5 ms per parallel region).  So the harness sets the same default before anything starts;
  every in-process mode (torchlike, Numba, PyTorch, Inductor share one libgomp) runs under it;
  a value in the caller's environment wins.  Runs record it (machine.thread_env).
"""
from __future__ import annotations

import os
import sys

ALLOCATOR_ENV = {"MALLOC_MMAP_MAX_": "0", "MALLOC_TRIM_THRESHOLD_": "68719476736"}
OPENMP_ENV = {"OMP_WAIT_POLICY": "PASSIVE"}


def same_environment(module: str) -> None:
    """Set OPENMP_ENV's defaults and, unless the allocator setting is already in effect,
    re-execute ``python -m <module>`` with the same arguments under it (glibc reads it at
    start-up)."""
    for k, v in OPENMP_ENV.items():
        os.environ.setdefault(k, v)
    if all(os.environ.get(k) == v for k, v in ALLOCATOR_ENV.items()):
        return
    env = dict(os.environ, **ALLOCATOR_ENV)
    os.execve(sys.executable, [sys.executable, "-m", module] + sys.argv[1:], env)
