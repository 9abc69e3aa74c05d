"""What a Dask worker runs: ``run_block(graph_text, *blocks)``, one task per chunk.

A task receives the graph as its printed text (a key of the Dask graph: each worker fetches it
once) and the chunk's blocks, never a pickled function of the user's: the worker parses the
text once per process (``_FUNCTIONS``), and the ``ScriptFunction`` it makes specializes and
fuses once per chunk signature, its kernels compiled once per process or read from the
on-disk kernel cache (``TORCHLIKE_CACHE_DIR``), which workers on one host share.  At
``TORCHLIKE_DEBUG=1`` the first task of a graph in a process and each new chunk signature
(with the kernel cache misses it caused) are logged on the ``torchlike`` logger.
"""
from __future__ import annotations

import hashlib
import logging
import os
import threading
from typing import Any, Dict

from ..fuser import config
from ..fuser.stats import stats
from ..ir.parser import parse_graph
from ..jit.script_function import ScriptFunction

__all__ = ["run_block", "run_block_on_copies", "graph_id"]

logger = logging.getLogger("torchlike")
_FUNCTIONS: Dict[str, ScriptFunction] = {}
_LOCK = threading.Lock()


def graph_id(text: str) -> str:
    """A short name for a graph's text in logs and task keys."""
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def _where() -> str:
    try:  # the Dask worker's name, where there is one
        from distributed import get_worker
        return f"worker {get_worker().name} (pid {os.getpid()})"
    except (ImportError, ValueError):
        return f"pid {os.getpid()}, thread {threading.current_thread().name}"


def _function(text: str) -> ScriptFunction:
    fn = _FUNCTIONS.get(text)
    if fn is None:
        with _LOCK:
            fn = _FUNCTIONS.get(text)
            if fn is None:
                fn = ScriptFunction(parse_graph(text), name=f"dask_{graph_id(text)}",
                                    fusion=True)
                _FUNCTIONS[text] = fn
                if config.debug_level() >= 1:
                    logger.info("torchlike.dask: first task of graph %s on %s",
                                graph_id(text), _where())
    return fn


def run_block(text: str, *blocks: Any) -> Any:
    """The graph of ``text`` fused and run on one chunk's blocks (arrays and scalars, in the
    graph's input order); one output as an array, several as a tuple."""
    fn = _function(text)
    if config.debug_level() >= 1 and not fn.graph_cached(blocks):
        before = stats()
        out = fn(*blocks)
        after = stats()
        logger.info("torchlike.dask: graph %s specialized on %s for %s: %s", graph_id(text),
                    _where(), ", ".join(map(_describe, blocks)),
                    ", ".join(f"{after[k] - before[k]} {k.replace('_', ' ')}"
                              for k in ("cache_misses", "disk_hits", "kernels_compiled")))
        return out
    return fn(*blocks)


def _describe(block: Any) -> str:
    if hasattr(block, "shape") and hasattr(block, "dtype"):
        return f"{block.dtype}[{', '.join(map(str, block.shape))}]"
    return type(block).__name__


def run_block_on_copies(text: str, *blocks: Any) -> Any:
    """``run_block`` for a graph that writes into tensors in place: its array blocks are
    copied first, since a block may be a view of a Dask input (numpy data ``from_array``
    wraps, a persisted chunk other tasks read) and Dask arrays never change."""
    return run_block(text, *[b.copy() if hasattr(b, "shape") and hasattr(b, "copy") else b
                             for b in blocks])
