"""The kernel cache: a bounded in-memory LRU over kernel keys, and the on-disk store.

Two levels sit between a fusion group and its compiled code (``executor`` owns the first):

1. dispatch: (group, exact runtime signature) -> ready launcher; a warm call is one lookup.
2. kernels (here): kernel key -> compiled kernel.  The key holds only what the code depends on
   (ranks, size-1 dims, layouts, dtypes, size class), so new sizes of one layout share a kernel.

On disk, each generated kernel is a Python module ``<cache_dir>/<backend>/<hash>.py`` whose
first line names the generator version and hash; Numba's ``cache=True`` stores the machine
code beside it (``__pycache__``).  Files are written atomically (a temporary file in the same
directory, then ``os.replace``), and a file whose text is not exactly the expected source
(corrupt, truncated, foreign) is rewritten, so concurrent processes sharing one directory
always leave it valid.
"""
from __future__ import annotations

import logging
import os
import shutil
import tempfile
import threading
from collections import OrderedDict
from typing import Any, Callable, Dict, Hashable, Iterable, Optional, Tuple

from . import config
from .stats import bump

logger = logging.getLogger("torchlike")
_fallback_dirs: dict = {}


class KernelCache:
    """A thread-safe LRU of compiled kernels; counts ``cache_hits`` / ``cache_misses``."""

    def __init__(self, capacity: int = 512):
        self.capacity = capacity
        self._lock = threading.RLock()
        self._entries: "OrderedDict[Hashable, Any]" = OrderedDict()

    def get_or_build(self, key: Hashable, build: Callable[[], Any]) -> Any:
        """The kernel for ``key``, built by ``build()`` on a miss.  Building happens under the
        lock: two threads missing on one key compile it once."""
        with self._lock:
            kernel = self._entries.get(key)
            if kernel is not None:
                self._entries.move_to_end(key)
                bump("cache_hits")
                return kernel
            bump("cache_misses")
            kernel = build()
            self._entries[key] = kernel
            while len(self._entries) > self.capacity:
                self._entries.popitem(last=False)
            return kernel

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()

    def __len__(self) -> int:
        return len(self._entries)


KERNELS = KernelCache()


def kernel_dir(backend: str) -> str:
    """``<cache_dir>/<backend>``, created; a private temporary directory if that fails."""
    path = os.path.join(config.cache_dir(), backend)
    try:
        os.makedirs(path, exist_ok=True)
        if not os.access(path, os.W_OK):
            raise PermissionError(path)
        return path
    except OSError as e:
        if path not in _fallback_dirs:
            _fallback_dirs[path] = tempfile.mkdtemp(prefix=f"torchlike-{backend}-")
            logger.warning("kernel cache directory %s is not writable (%s); using %s for this "
                           "process", path, e, _fallback_dirs[path])
        return _fallback_dirs[path]


def read_text(path: str) -> Optional[str]:
    """The file's text, or None if it is missing or not text."""
    try:
        with open(path, "r", encoding="utf-8") as f:
            return f.read()
    except (OSError, UnicodeDecodeError):
        return None


def write_atomic(path: str, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old file or the whole new one."""
    write_bytes_atomic(path, text.encode("utf-8"))


def write_bytes_atomic(path: str, data: bytes) -> None:
    """``write_atomic`` for bytes (a compiled image)."""
    directory = os.path.dirname(path)
    fd, tmp = tempfile.mkstemp(dir=directory, prefix=".tmp-")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


def ensure_source(path: str, text: str) -> bool:
    """Make ``path`` hold exactly ``text``; True if it already did (a reusable entry)."""
    if read_text(path) == text:
        return True
    if os.path.exists(path):
        logger.info("kernel cache entry %s is stale or corrupt: rebuilding it", path)
    write_atomic(path, text)
    return False


# -- the disk cache as a whole (``python -m torchlike cache info|clear``) -----------------------

def _backend_dirs(backends: Iterable[str]) -> Dict[str, str]:
    """backend -> ``<cache_dir>/<backend>``, for those that exist (nothing is created)."""
    root = config.cache_dir()
    return {b: os.path.join(root, b) for b in backends if os.path.isdir(os.path.join(root, b))}


def disk_usage(backends: Iterable[str]) -> Dict[str, Tuple[int, int]]:
    """backend -> (kernels, bytes) on disk.  A kernel is a top-level file of the backend's
    directory (a ``<hash>.py`` module for cpu, a ``.cubin`` or ``.ptx`` image for cuda, a ``.so`` for
    cuda-emulated); the bytes count everything below it (Numba's machine code included).
    Backends without a directory are left out."""
    out: Dict[str, Tuple[int, int]] = {}
    for backend, path in _backend_dirs(backends).items():
        kernels = sum(1 for e in os.scandir(path) if e.is_file() and not e.name.startswith("."))
        size = 0
        for directory, _, files in os.walk(path):
            for f in files:
                try:
                    size += os.lstat(os.path.join(directory, f)).st_size
                except OSError:  # removed meanwhile by another process
                    pass
        out[backend] = (kernels, size)
    return out


def clear_disk(backends: Iterable[str]) -> Dict[str, Tuple[int, int]]:
    """Remove the directories of ``backends`` under the cache directory (only those: the
    directory itself may be shared); returns what they held, as ``disk_usage``.  Kernels
    already loaded in this process stay usable."""
    removed = disk_usage(backends)
    for path in _backend_dirs(removed).values():
        shutil.rmtree(path)
    return removed
