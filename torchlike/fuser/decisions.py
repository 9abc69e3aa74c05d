"""The partitioner's decisions, as records and as debug lines.

Each decision ``partition.fuse`` takes about a block is a ``Decision``: an op refused (and
why), a group formed (its node and members), a fusible region left alone because it is smaller
than ``min_group_size``.  Where they go:

* ``TORCHLIKE_DEBUG>=1`` (``jit.set_debug(1)``): one line each on the ``torchlike`` logger,
  e.g. ``fuser: refused aten::matmul(%8) at f.py:3:12: not an elementwise op``;
* inside ``with recording() as found:`` (this thread): appended to ``found``, which is how
  ``python -m torchlike explain`` reports them::

      with recording() as found:
          fused = partition.fuse(graph)
      for d in found:
          print(d.action, d.message)

The partitioner builds a decision only when someone listens (``wanted()``).
"""
from __future__ import annotations

import logging
import threading
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Iterator, List, Optional, Tuple

from ..ir.graph import Node
from . import config

__all__ = ["Decision", "REFUSED", "GROUPED", "TOO_SMALL", "RECOMPUTED", "recording", "wanted",
           "report"]

REFUSED = "refused"        # ``node`` may not join a group: ``reason``
GROUPED = "grouped"        # ``node`` is the new prim::FusionGroup holding ``members``
TOO_SMALL = "too small"    # ``members`` are fusible, but fewer ops than ``reason`` says
RECOMPUTED = "recomputed"  # ``node``'s value is recomputed (``members``) in a group reading it

logger = logging.getLogger("torchlike")
_local = threading.local()


@dataclass(frozen=True)
class Decision:
    """One decision: ``action`` (``REFUSED``, ``GROUPED``, ``TOO_SMALL`` or ``RECOMPUTED``), the
    ``node`` it is about (the refused node, the group node, the node whose value a group
    recomputes; None for ``TOO_SMALL``), the ``members`` of a region (in order; for
    ``RECOMPUTED`` the ops recomputed), ``ops`` (how many of them compute: chunks and unpacks
    do not count) and ``reason`` (why refused, or why a region was too small)."""

    action: str
    node: Optional[Node] = None
    members: Tuple[Node, ...] = ()
    ops: int = 0
    reason: str = ""

    @property
    def message(self) -> str:
        """The debug line (without the ``fuser:`` prefix)."""
        if self.action == REFUSED:
            return f"refused {self.node.describe()}: {self.reason}"
        if self.action == GROUPED:
            outputs = ", ".join(f"%{v.name}" for v in self.node.outputs)
            return (f"formed prim::FusionGroup of {self.ops} op(s) -> {outputs}: "
                    + ", ".join(m.kind for m in self.members))
        if self.action == RECOMPUTED:
            return (f"recomputed {self.node.describe()} in a group that reads it "
                    f"({self.reason}): " + ", ".join(m.kind for m in self.members))
        return (f"not grouped ({self.reason}): "
                + ", ".join(m.describe() for m in self.members))


def _listeners() -> List[List[Decision]]:
    stack = getattr(_local, "stack", None)
    if stack is None:
        stack = _local.stack = []
    return stack


@contextmanager
def recording() -> Iterator[List[Decision]]:
    """Collect the decisions this thread's partitioner takes inside the ``with`` block."""
    found: List[Decision] = []
    stack = _listeners()
    stack.append(found)
    try:
        yield found
    finally:
        stack.remove(found)


def wanted() -> bool:
    """Whether anyone listens: the debug level is >= 1 or a ``recording()`` is open."""
    return config.debug_level() >= 1 or bool(getattr(_local, "stack", None))


def report(decision: Decision) -> None:
    """Log ``decision`` (debug level >= 1) and hand it to every open ``recording()``."""
    if config.debug_level() >= 1:
        logger.info("fuser: %s", decision.message)
    for found in _listeners():
        found.append(decision)
