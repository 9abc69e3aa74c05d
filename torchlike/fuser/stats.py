"""Counters of the kernel cache and of fallbacks, safe to bump from several threads.

    >>> reset_stats(); stats()
    {'kernels_compiled': 0, 'cache_hits': 0, 'cache_misses': 0, 'disk_hits': 0, 'groups_split': 0, 'fallbacks': {}}

* ``kernels_compiled``: kernels a backend compiled (Numba ran its compiler).
* ``disk_hits``: kernels loaded ready-made from the on-disk cache instead.
* ``cache_hits`` / ``cache_misses``: lookups of the in-memory kernel cache, made when a group
  meets an input signature for the first time (a warm call never looks there).
* ``groups_split``: (group, signature) pairs of a group with reductions that had no kernel
  (another layout than the row case, a backend without reductions) and ran split: reductions
  interpreted, the elementwise parts as groups of their own (``executor._split_launcher``).
* ``fallbacks``: reason -> how many (group, signature) pairs fell back to the interpreter for it.
  Reasons are short stable strings: ``"backend unavailable: ..."``, ``"unsupported op aten::foo"``,
  ``"unsupported dtype bfloat16"``, ``"compile failed: ..."``.  The first time a reason is seen
  it is logged once at WARNING level on the ``torchlike`` logger.
"""
from __future__ import annotations

import logging
import threading
from typing import Any, Dict

__all__ = ["stats", "reset_stats"]

logger = logging.getLogger("torchlike")
_lock = threading.Lock()
_counters: Dict[str, int] = {}
_fallbacks: Dict[str, int] = {}
_logged: set = set()
_NAMES = ("kernels_compiled", "cache_hits", "cache_misses", "disk_hits", "groups_split")


def bump(name: str, n: int = 1) -> None:
    with _lock:
        _counters[name] = _counters.get(name, 0) + n


def record_fallback(reason: str, where: str = "") -> None:
    """Count a fallback; log the reason the first time it appears."""
    with _lock:
        _fallbacks[reason] = _fallbacks.get(reason, 0) + 1
        first = reason not in _logged
        _logged.add(reason)
    if first:
        logger.warning("fusion group %sfalls back to the interpreter: %s",
                       f"{where} " if where else "", reason)


def stats() -> Dict[str, Any]:
    """A snapshot: plain ints and a plain dict of fallback reasons."""
    with _lock:
        out: Dict[str, Any] = {name: _counters.get(name, 0) for name in _NAMES}
        out["fallbacks"] = dict(_fallbacks)
    return out


def reset_stats() -> None:
    """Zero every counter (and let each fallback reason be logged again)."""
    with _lock:
        _counters.clear()
        _fallbacks.clear()
        _logged.clear()
