"""The backend table: the fuser's code generators by name, installed into its registry.

    >>> import torchlike
    >>> torchlike.backends.BACKENDS["cpu"]
    'torchlike.cpu_backend:CpuBackend'

Layering (each package imports only those to its left)::

    ir < ops < interpreter < {frontend, passes, functional} < fuser
       < {cpu_backend, cuda_backend} < {jit, backends}

The fuser keeps a registry (``fuser.backend.register_backend`` / ``get_backend_impl``) and
never imports a backend; the two backends never import each other (what both need lives in
``fuser.kernel_spec`` and ``fuser.render``).  This module, at the top, fills the registry from
one table of entry-point style ``"module:attribute"`` strings (or factories) and
``torchlike.jit`` imports it, so ``import torchlike`` registers every backend.  A string entry is
imported on first use: ``import torchlike`` needs neither numba nor cupy, and a backend whose
module cannot be imported is missing (``get_backend_impl`` returns None: the executor falls
back, counting why).
"""
from __future__ import annotations

import importlib
from typing import Callable, Dict, Mapping, Optional, Union

from .fuser.backend import Backend, register_backend

__all__ = ["BACKENDS", "install", "factory", "load"]

Entry = Union[str, Callable[[], Backend]]

BACKENDS: Dict[str, Entry] = {
    "cpu": "torchlike.cpu_backend:CpuBackend",                       # Numba, numpy arrays
    "cuda": "torchlike.cuda_backend.runtime:CudaBackend",            # NVRTC + CuPy, GPU arrays
    "cuda-emulated": "torchlike.cuda_backend.emulate:EmulatedCudaBackend",  # the CUDA C, g++
}


def load(entry: str) -> Callable[[], Backend]:
    """The class (or factory) an entry ``"package.module:attribute"`` names, imported now."""
    module, sep, attr = entry.partition(":")
    if not sep or not attr:
        raise ValueError(f"a backend entry is 'module:attribute', not {entry!r}")
    return getattr(importlib.import_module(module), attr)


def factory(entry: Entry) -> Callable[[], Backend]:
    """A registry factory for ``entry``: a string entry is imported when first called."""
    if callable(entry):
        return entry

    def make() -> Backend:
        return load(entry)()
    make.__qualname__ = make.__name__ = f"load({entry!r})"
    return make


def install(table: Optional[Mapping[str, Entry]] = None,
            register: Callable[[str, Callable[[], Backend]], None] = register_backend) -> None:
    """Register every backend of ``table`` (default ``BACKENDS``), replacing what the fuser's
    registry held under those names (and forgetting their instances)."""
    for name, entry in (BACKENDS if table is None else table).items():
        register(name, factory(entry))


install()
