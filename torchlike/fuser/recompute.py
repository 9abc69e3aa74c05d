"""Recompute cheap values in the groups that read them instead of passing them between groups.

When two groups cannot merge (their reductions reduce different shapes: a layer norm's
backward has row sums and column sums), a value one computes and the other reads is written to
memory by the first kernel and read back by the second.  If that value is a few arithmetic ops
away from what the reader can read itself, the reader recomputes it (TorchInductor inlines
pointwise producers into every consumer the same way)::

    group A:  %xc = aten::sub(%x, %mean)            group A:  %xc = aten::sub(%x, %mean)
              ... row sums of %xc ...         ->              ... row sums of %xc ...
    group B:  column sums of (%dy * %xc)            group B:  %xc' = aten::sub(%x, %mean)
                                                              column sums of (%dy * %xc')

A full-size array is then neither written nor read back, and group B no longer depends on
group A, so groups reading the same tensors can merge horizontally (both column sums in one
pass).

The rule, per value a fusible group passes to another fusible group:

* its *cone* -- the members of the producing group it is computed from, back to the group's
  inputs or to values known to be at most 1/16 of its size (a per-row mean, which the reader
  then reads: passing it costs little) -- has at most ``MAX_OPS`` deterministic elementwise
  ops, none calling a math helper (``OpDef.calls_math_helper``: an ``exp`` costs tens of
  instructions an element, a write and read of a float a fraction of that), no reduction, no
  chunk;
* the recomputation adds at most one full-size read to the reader: the cone's tensor inputs
  that the reader does not read already, not counting those known to be at most 1/16 of the
  value's size (a per-row mean) -- reading ``%a`` and ``%b`` to save reading ``%a + %b`` is no
  gain;
* the block writes no tensor in place (a recomputation placed after the write would read
  the new contents).

The original cone stays in the producer while something else uses it; what is left unused is
dropped (it was only written for the reader).  ``TORCHLIKE_DEBUG`` prints each recomputation.
"""
from __future__ import annotations

import math
from typing import Dict, List, Optional, Set

from ..ir.graph import Node, Value
from ..ir.types import TensorType
from ..ops import registry
from . import decisions

MAX_OPS = 8
_CHUNKS = ("aten::chunk", "prim::BroadcastingChunk", "prim::ConstantChunk")
SMALL_FRACTION = 16


def _cheap(node: Node) -> bool:
    """Elementwise, no math helper, and deterministic: a copy gives the same values (not
    dropout or rrelu, whose training mode draws random numbers)."""
    op = registry.lookup(node.kind)
    return (op is not None and op.is_elementwise and not op.calls_math_helper
            and op.pure and op.foldable and not node.blocks)


def _cone(value: Value, members: Set[Node]) -> Optional[List[Node]]:
    """The members ``value`` is computed from (topological order), or None if too many or one
    is not cheap.  The cone stops at small values (a per-row mean): the reader reads those."""
    seen: Set[Node] = set()
    order: List[Node] = []

    def visit(node: Node) -> bool:
        if node in seen:
            return True
        if not _cheap(node) or len(node.outputs) != 1:
            return False
        seen.add(node)
        if len(seen) > MAX_OPS:
            return False
        for v in node.inputs:
            if v.node in members and not _small(v, value) and not visit(v.node):
                return False
        order.append(node)
        return True

    return order if value.node in members and visit(value.node) else None


def _numel(v: Value) -> Optional[int]:
    t = v.type
    if not isinstance(t, TensorType) or t.shape is None or any(d is None for d in t.shape):
        return None
    return math.prod(t.shape)


def _small(v: Value, than: Value) -> bool:
    """``v`` is known to be at most 1/SMALL_FRACTION of ``than``'s size (a per-row value)."""
    n, size = _numel(v), _numel(than)
    return n is not None and size is not None and n * SMALL_FRACTION <= size


def _full_reads(leaves: List[Value], value: Value, already: Set[Value]) -> int:
    """How many tensors the cone's ``leaves`` add to a reader reading ``already``."""
    return sum(1 for v in leaves if not (v in already or v.is_constant() or _small(v, value)
                                         or not isinstance(v.type, TensorType)))


def _key(kind: str, inputs: List[Value]):
    """What identifies a pure node's result: its kind and inputs, constants by value."""
    return kind, tuple(("=", repr(v.constant_value())) if v.is_constant() else v for v in inputs)


def recompute_shared(part) -> bool:
    """Recompute, in each fusible reader, the cheap values fusible groups of ``part`` (a
    ``partition._BlockPartition``) pass to each other; True if anything changed."""
    if any(part.ordered.values()):  # an in-place write in this block: keep the program order
        return False
    changed = False
    for item in sorted((it for it in part.items if it.alive and it.fusible), key=lambda i: i.key):
        members = set(item.members)
        recomputed = False
        for node in list(item.members):
            for out in node.outputs:
                readers = {part.owner[u] for u in part.users[out]} - {item}
                readers = sorted((r for r in readers if r.fusible and r.alive),
                                 key=lambda i: i.key)
                cone = _cone(out, members) if readers else None
                for reader in readers if cone is not None else ():
                    recomputed |= _recompute_in(part, out, cone, reader)
        if recomputed:
            _drop_dead(part, item)
        changed |= recomputed
    return changed


def _recompute_in(part, out: Value, cone: List[Node], reader) -> bool:
    """Clone ``cone`` (computing ``out``) into ``reader`` if that adds at most one full-size
    read; the reader's uses of ``out`` then read the clone."""
    if any(u.kind in _CHUNKS for u in part.users[out] if part.owner[u] is reader):
        return False  # a chunk reads its input as a view of a group input, never computed
    inside = set(cone)
    leaves = list(dict.fromkeys(v for n in cone for v in n.inputs if v.node not in inside))
    already = {v for m in reader.members for v in m.inputs}
    if _full_reads(leaves, out, already) > 1:
        return False
    block = part.block
    env: Dict[Value, Value] = {}
    clones: List[Node] = []
    for node in cone:
        clone = Node(node.kind, [env.get(v, v) for v in node.inputs], dict(node.attrs),
                     node.source)
        clone.owning_block = block
        for o in node.outputs:
            nv = Value(block.graph.fresh_name(o.name.split(".")[0]), o.type, node=clone)
            clone.outputs.append(nv)
            env[o] = nv
            part.users[nv] = []
        for v in clone.inputs:
            part.users.setdefault(v, []).append(clone)
        # just after the original: before every reader of it, in the original order
        at = part.index[node]
        part.index[clone] = at + (1 - (at - math.floor(at))) / 2
        part.owner[clone] = reader
        clones.append(clone)
    new = env[out]
    for user in [u for u in part.users[out] if part.owner[u] is reader]:
        for i, v in enumerate(user.inputs):
            if v is out:
                user.replace_input(i, new)
        part.users[out] = [u for u in part.users[out] if u is not user]
        part.users[new].append(user)
    reader.members.extend(clones)
    if decisions.wanted():
        decisions.report(decisions.Decision(
            decisions.RECOMPUTED, out.node, tuple(cone), len(cone),
            "cheaper to recompute than to write and read back"))
    return True


def dedupe(part) -> None:
    """Within each group, one node per cheap computation: a recomputed value can meet its
    original again when the groups merge later (x - mean twice in one kernel)."""
    for item in part.items:
        if not item.alive:
            continue
        first: Dict = {}
        for node in sorted(item.members, key=part.index.__getitem__):
            if not _cheap(node) or len(node.outputs) != 1 or node.attrs:
                continue
            key = _key(node.kind, node.inputs)
            kept = first.setdefault(key, node)
            out = node.outputs[0]
            if kept is node or out in part.returned:
                continue
            for user in part.users[out]:
                for i, v in enumerate(user.inputs):
                    if v is out:
                        user.replace_input(i, kept.outputs[0])
                part.users[kept.outputs[0]].append(user)
            part.users[out] = []
        _drop_dead(part, item)


def _drop_dead(part, item) -> None:
    """Remove the members of ``item`` nothing uses any more (latest first)."""
    for node in sorted(item.members, key=part.index.__getitem__, reverse=True):
        if not _cheap(node) or any(part.users[o] or o in part.returned for o in node.outputs):
            continue
        item.members.remove(node)
        for v in node.inputs:
            v.uses.remove(node)
            if v in part.users:
                part.users[v] = [u for u in part.users[v] if u is not node]
        del part.owner[node]
    if not item.members:
        item.alive = False
