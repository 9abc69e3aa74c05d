"""The partitioner: groups fusible elementwise nodes into ``prim::FusionGroup`` nodes.

``fuse(graph)`` returns a new graph (the input is left unchanged) in which every maximal region
of fusible nodes is one node holding its body as a subgraph, printed the way PyTorch prints
fusion groups::

    graph(%x : Float(2, 2),
          %y : Float(2, 2)):
      %3 : Float(2, 2) = aten::matmul(%x, %y)
      %5 : Float(2, 2) = prim::FusionGroup_0(%3, %x)
      return (%5)
    with prim::FusionGroup_0 = graph(%3 : Float(2, 2),
          %x : Float(2, 2)):
      %1 : float = prim::Constant[value=2.]()
      %2 : int = prim::Constant[value=1]()
      %4 : Float(2, 2) = aten::mul(%3, %1)
      %5 : Float(2, 2) = aten::add(%4, %x, %2)
      return (%5)

The group's inputs correspond one to one to the subgraph's inputs and its outputs to the
subgraph's outputs; scalar constants are cloned into the subgraph (folded into the kernel);
values computed in a group and used outside it are extra outputs.

The algorithm is PyTorch's TE fuser ``createFusionGroups``, without moving IR nodes around
while it works: each block is partitioned on its own (groups never cross a block edge) into
*items* (a lone node, or a group of nodes) carrying an ordering key.  The keys always form a
topological order of the graph in which each group is contracted to one node.  Items are
visited in reverse order and each consumer pulls its producers in; a merge of ``lo`` into
``hi`` is legal when no path leads from ``lo`` to ``hi`` through a third item (it would become
a cycle), which a search bounded by ``hi``'s key decides.  The items that ``lo`` reaches inside
that window are moved just after ``hi`` (as ``moveBeforeTopologicallyValid`` does).  Siblings
that read the same tensor are then merged the same way (horizontal fusion).  Finally the block
is rebuilt in key order.

Reductions (``row_reduce.py`` has the details).  A *row reduction* -- ``sum``, ``mean``,
``prod``, ``amax``, ``amin``, ``var``, ``std``, ``logsumexp``, 1/2/inf norms over constant
dims (or every dim), ``softmax``, ``log_softmax``, ``max``/``min``/``argmax`` over one --
is fusible like an elementwise op, so a
group grows around it the usual way: its elementwise producers (computed per element inside
the row's loop), the per-row arithmetic on its result (``var + eps``, ``rsqrt``), its epilogue
(elementwise consumers broadcasting the result back over the row, ``x - mean``, ``e / sum``)
and further reductions of the same rows (layer norm's second mean).  The CPU backend runs such
a group as one kernel, one parallel pass per row.  Where a group is cut, and why:

* a reduction with a ``dtype=`` or with non-constant dims/keepdim/correction, of a non-float
  input, ``argmax`` over every dim, a norm of another order than 1, 2, inf: not fusible, the group ends there (``decisions`` says which rule; docs/reductions.md
  has the whole table);
* two groups whose reductions reduce different shapes or dims (as far as the types know:
  a layer norm's backward has row sums and column sums) are not merged (``_reduced``); what
  one computes cheaply and the other reads (``x - mean``) is recomputed by the reader rather
  than written and read back (``recompute.py``), after which the reader may merge with other
  groups of its shape (both column sums in one kernel);
* at run time, when the exact inputs do not fit the row case -- a non-contiguous input, an
  input broadcast inside a row, reduced dims that are not one contiguous range (other
  dims than the trailing ones run as the CPU's transposed ``columns`` layout), a per-row
  value that meets a per-element one without ``keepdim``, reductions of different shapes in one group, a backend without reduction
  kernels (CUDA today) -- the executor *splits* the group: it runs the subgraph partitioned
  again with ``reductions=False`` (the reductions interpreted, the elementwise parts compiled as
  before), counted in ``stats()["groups_split"]``.  The answer is the interpreter's either way.

Concatenation (``concat_outputs.py``): once the groups are built, an ``aten::cat`` of one
group's results (an LSTM cell backward's four gate gradients) becomes the group's
``prim::FusedConcat`` output, which the CPU kernel writes in place, piece by piece.

With ``TORCHLIKE_DEBUG=1`` (``jit.set_debug(1)``) every decision is one line on the
``torchlike`` logger: each op refused and why, each group formed (its ops), each fusible region
left unfused because it is smaller than ``min_group_size``; ``decisions.recording()`` collects
the same decisions as records (``python -m torchlike explain`` prints them).
"""
from __future__ import annotations

import heapq
import itertools
from typing import Dict, FrozenSet, Iterable, Iterator, List, Optional, Set, Tuple

import numpy as np

from ..ir.graph import Block, Graph, Node, Value, clone_graph
from ..ir.types import ANY, BOOL, FLOAT, INT, NUMBER, TensorType
from ..ops import registry
from ..ops.dtypes import ALL_DTYPES
from ..ops.elementwise_base import normalize_args
from ..ops.registry import OpDef
from ..passes.decompose_norms import decompose_norms
from ..passes.inline_functions import inline_functions
from ..passes.inline_groups import inline_groups
from ..passes.remove_mutation import PASS_THROUGH, aliases_a_write, remove_mutation
from ..passes.unroll_loops import unroll_loops
from . import decisions
from .chunk_motion import BROADCASTING_CHUNK, move_chunks
from .concat_outputs import fuse_concat_outputs
from .group_nodes import (
    FUSION_GROUP,
    build_group,
    reads_only_constants,
    remove_dead_constants,
)
from .mutation_order import mutation_order
from .recompute import dedupe, recompute_shared
from .row_reduce import reduced_signature, why_not_row_reduction

_CHUNKS = ("aten::chunk", BROADCASTING_CHUNK)

_SCALAR_TYPES = (INT, FLOAT, BOOL, NUMBER)
HORIZONTAL_REACH = 16  # reduction groups reading one tensor: each tries this many earlier ones



def _worth_a_line(node: Node) -> bool:
    """Whether refusing ``node`` is a decision worth a debug line: not for constants, control
    flow and the registry's structural prims (lists, tuples), which are never candidates."""
    if node.blocks or node.kind == "prim::Constant":
        return False
    op = registry.lookup(node.kind)
    return op is None or op.category != "prim"


# -- what may be fused ----------------------------------------------------------------------

class _Probe:
    """Stands for a non-constant input while a node's inputs are mapped onto the schema."""

    __slots__ = ("value",)

    def __init__(self, value: Value):
        self.value = value


def _dtype_supported(t) -> bool:
    return not isinstance(t, TensorType) or t.dtype is None or t.dtype in ALL_DTYPES


def why_not_fusible(node: Node, dont_fuse: Iterable[str] = frozenset(),
                    reductions: bool = False) -> Optional[str]:
    """None if ``node`` may join a fusion group, else the reason (for the fuser's debug dump).

    With ``reductions``, a row reduction (``row_reduce.why_not_row_reduction``) may join too.

    Fusible: a registry op that ``is_elementwise``; its operands tensors (of a standard dtype, or
    of unknown type) or scalars; its other parameters (``alpha``, ``rounding_mode``, ...)
    ``prim::Constant``s; its outputs tensors (``aten::add`` on two ints is scalar arithmetic);
    not in ``dont_fuse``; and accepted by the op's own ``fusible_if`` (dropout: ``train=False``).
    ``aten::chunk`` is handled separately (see ``_chunk_unpack``).
    """
    if node.kind in dont_fuse:
        return "excluded by dont_fuse"
    op: Optional[OpDef] = registry.lookup(node.kind)
    if reductions and op is not None and op.category == "reduction" and not node.blocks:
        why = why_not_row_reduction(node)
        return None if why is None else f"a reduction that does not fuse: {why}"
    if op is None or not op.is_elementwise:
        return "not an elementwise op"
    if node.blocks:
        return "a node with blocks"
    if node.kind in PASS_THROUGH and aliases_a_write(node):
        return "may return its input itself, and one of them is written in place"
    # Map the node's overload onto the op's one schema (missing defaults, aten::to's forms) with
    # probes standing for non-constant inputs, to see which parameter each input lands on.
    probes = [_Probe(v) if not v.is_constant() else v.constant_value() for v in node.inputs]
    try:
        args = normalize_args(op, probes)
    except Exception as e:  # an overload the registry cannot map
        return f"inputs do not match the schema ({type(e).__name__}: {e})"
    if len(args) != len(op.params):
        return f"{len(node.inputs)} inputs do not match the schema"
    for param, arg in zip(op.params, args):
        if not param.is_operand:
            if isinstance(arg, _Probe):
                return f"parameter '{param.name}' is not a constant"
        elif isinstance(arg, _Probe):
            t = arg.value.type
            if isinstance(t, TensorType):
                if not _dtype_supported(t):
                    return f"operand '{param.name}' has unsupported dtype {t.dtype}"
            elif t not in _SCALAR_TYPES and t != ANY:
                return f"operand '{param.name}' of type {t} is not a tensor or scalar"
        elif not (arg is None or isinstance(arg, (bool, int, float, np.ndarray))):
            return f"operand '{param.name}' is the constant {arg!r}"
    if op.fusible_if is not None:
        why = op.fusible_if({p.name: a for p, a in zip(op.params, args) if not p.is_operand})
        if why is not None:
            return why
    for out in node.outputs:
        if not (isinstance(out.type, TensorType) or out.type == ANY):
            return f"output of type {out.type} is not a tensor"
        if not _dtype_supported(out.type):
            return f"output has unsupported dtype {out.type.dtype}"
    return None


def _chunk_unpack(node: Node, block_users: Dict[Value, List[Node]], returned: Set[Value],
                  dont_fuse: FrozenSet[str]) -> Optional[Node]:
    """The ``prim::ListUnpack`` of ``aten::chunk(x, <const>, <const>)`` when it is the chunk's
    only user: the pair fuses as one ``prim::ConstantChunk`` (indexing into ``x``)."""
    if node.kind != "aten::chunk" or "aten::chunk" in dont_fuse or len(node.inputs) != 3:
        return None
    x, chunks, dim = node.inputs
    if not (isinstance(x.type, TensorType) and _dtype_supported(x.type)):
        return None
    if not (isinstance(chunks.constant_value(), int) and isinstance(dim.constant_value(), int)):
        return None
    users = block_users.get(node.output(), [])
    if len(users) != 1 or len(node.output().uses) != 1 or node.output() in returned:
        return None
    unpack = users[0]
    if unpack.kind != "prim::ListUnpack" or unpack.owning_block is not node.owning_block:
        return None
    if len(unpack.outputs) != chunks.constant_value():
        return None
    return unpack


# -- the partition of one block ---------------------------------------------------------------

_WINDOW_LIMIT = 1000  # items a merge's cycle check may walk (try_merge)


class _Item:
    """A lone node or a group of nodes of one block; ``key`` orders items topologically."""

    __slots__ = ("members", "key", "fusible", "chunks", "alive", "succ", "pred")

    def __init__(self, members: List[Node], key: Tuple, fusible: bool):
        self.members = members
        self.key = key
        self.fusible = fusible
        self.chunks: List[Node] = [m for m in members if m.kind in _CHUNKS]
        self.alive = True
        self.succ: Set["_Item"] = set()  # the items reading this one's values (kept by merges)
        self.pred: Set["_Item"] = set()


def _reduced(item: _Item) -> Set[Tuple]:
    """The item's known ``reduced_signature``s.  A group joining two (a layer norm's backward:
    row and column sums) would split at run time, every reduction interpreted."""
    sigs = (reduced_signature(m) for m in item.members)
    return {s for s in sigs if s is not None}


def _broadcastable(a: _Item, b: _Item) -> bool:
    """False where merging two readers of one tensor makes a group whose values cannot
    broadcast (a run-time fallback): known sizes other than 1 that differ in one dim of their
    elementwise outputs, or a chunk of a tensor the other reads whole."""
    chunked = {c.inputs[0] for c in a.chunks + b.chunks if c.kind == "aten::chunk"}
    sizes: Dict[int, int] = {}
    for m in a.members + b.members:
        if m.kind not in _CHUNKS and any(v in chunked for v in m.inputs):
            return False
        if reduced_signature(m) is not None:
            continue
        for out in m.outputs:
            shape = out.type.shape if isinstance(out.type, TensorType) else None
            for k, d in enumerate(reversed(shape or ())):
                if d is not None and d != 1 and sizes.setdefault(k, d) != d:
                    return False
    return True


class _Desc:
    """Heap entry wrapper: the largest key pops first."""

    __slots__ = ("key",)

    def __init__(self, key):
        self.key = key

    def __lt__(self, other):
        return self.key > other.key


class _BlockPartition:
    def __init__(self, block: Block, dont_fuse: FrozenSet[str], reductions: bool = False):
        self.block = block
        self.nodes = list(block.nodes)
        self.index = {n: i for i, n in enumerate(self.nodes)}
        self.users = self._block_users()
        self.owner: Dict[Node, _Item] = {}
        self.items: List[_Item] = []
        self.move_counter = itertools.count(1)
        self.seq = itertools.count()
        self.moved: List[_Item] = []  # items try_merge moved after a group
        self.returned = self._returned_values()
        self.ordered = mutation_order(self.nodes)  # no read moves across an in-place write
        paired: Set[Node] = set()
        for i, node in enumerate(self.nodes):
            if node in paired:
                continue
            unpack = _chunk_unpack(node, self.users, self.returned, dont_fuse)
            if unpack is not None:
                paired.add(unpack)
                item = _Item([node, unpack], (i,), True)
            elif node.kind == BROADCASTING_CHUNK:  # made by chunk motion: views, like a chunk
                item = _Item([node], (i,), True)
            else:
                why = why_not_fusible(node, dont_fuse, reductions)
                if why is not None and decisions.wanted() and _worth_a_line(node):
                    decisions.report(decisions.Decision(decisions.REFUSED, node, reason=why))
                item = _Item([node], (i,), why is None)
            self.items.append(item)
            for m in item.members:
                self.owner[m] = item
        self.refresh_edges()

    def refresh_edges(self) -> None:
        """The item graph (``succ``/``pred``), which each merge then updates (try_merge);
        recomputed after ``recompute.py`` rewires nodes between items."""
        for item in self.items:
            item.succ, item.pred = set(), set()
        for item in self.items:
            if item.alive:
                item.succ = self._successors_of(item)
                for s in item.succ:
                    s.pred.add(item)

    def _block_users(self) -> Dict[Value, List[Node]]:
        """For each value defined in this block, the nodes of this block that need it: users,
        ancestors of users in nested blocks, and ancestors of nested blocks returning it."""
        block = self.block
        users: Dict[Value, List[Node]] = {}

        def ancestor(node: Node) -> Node:
            while node.owning_block is not block:
                node = node.owning_block.owning_node
            return node

        for node in self.nodes:
            for out in node.outputs:
                users[out] = [ancestor(u) for u in out.uses]
        for node in self.nodes:
            stack = list(node.blocks)
            while stack:
                b = stack.pop()
                for v in b.returns:
                    if v in users:
                        users[v].append(node)
                for n in b.nodes:
                    stack.extend(n.blocks)
        return users

    def _returned_values(self) -> Set[Value]:
        """Values returned by this block or a block nested in it (uses don't list those)."""
        returned = set(self.block.returns)
        stack = [b for n in self.nodes for b in n.blocks]
        while stack:
            b = stack.pop()
            returned.update(b.returns)
            stack.extend(inner for n in b.nodes for inner in n.blocks)
        return returned

    # -- graph of items ---------------------------------------------------------------------
    def successors(self, item: _Item) -> Set[_Item]:
        return item.succ

    def _successors_of(self, item: _Item) -> Set[_Item]:
        out = set()
        for m in item.members:
            for v in m.outputs:
                for u in self.users[v]:
                    out.add(self.owner[u])
            for u in self.ordered.get(m, ()):
                out.add(self.owner[u])
        out.discard(item)
        return out

    def producer_nodes(self, item: _Item) -> List[Node]:
        return [v.node for m in item.members for v in m.inputs if v.node in self.index]

    # -- merging -----------------------------------------------------------------------------
    def try_merge(self, a: _Item, b: _Item) -> bool:
        """Merge the earlier of ``a``, ``b`` into the later one, unless that makes a cycle or
        joins reductions of different shapes (``_reduced``)."""
        if a is b or not (a.fusible and b.fusible and a.alive and b.alive):
            return False
        ra, rb = _reduced(a), _reduced(b)
        if ra and rb and ra != rb:
            return False
        lo, hi = (a, b) if a.key < b.key else (b, a)
        for chunk in lo.chunks + hi.chunks:  # a chunk's inputs must stay group inputs
            chunked = chunk.inputs if chunk.kind == BROADCASTING_CHUNK else chunk.inputs[:1]
            for src in (v.node for v in chunked):
                if src in self.owner and self.owner[src] in (lo, hi):
                    return False
        # Items that lo reaches before hi; reaching hi through one of them would be a cycle.
        # The walk is bounded: in a graph of tens of thousands of nodes (an unrolled RNN's
        # backward) a far producer would make every merge attempt walk most of the graph, so
        # past _WINDOW_LIMIT items the merge is declined (a missed fusion, never a wrong one).
        window: Set[_Item] = set()
        stack = [s for s in lo.succ if s is not hi and s.key < hi.key]
        window.update(stack)
        while stack:
            for s in stack.pop().succ:
                if s is hi:
                    return False
                if s not in window and s.key < hi.key:
                    window.add(s)
                    stack.append(s)
            if len(window) > _WINDOW_LIMIT:
                return False
        hi.members.extend(lo.members)
        hi.chunks.extend(lo.chunks)
        for m in lo.members:
            self.owner[m] = hi
        lo.alive = False
        for p in lo.pred:  # lo's edges become hi's
            p.succ.discard(lo)
            if p is not hi:
                p.succ.add(hi)
                hi.pred.add(p)
        for q in lo.succ:
            q.pred.discard(lo)
            if q is not hi:
                q.pred.add(hi)
                hi.succ.add(q)
        hi.succ.discard(lo)
        hi.pred.discard(lo)
        # Whatever depends on lo now has to come after the group: place it right after hi.
        tag = -next(self.move_counter)  # smaller than every earlier tag: sorts right after hi
        for i, item in enumerate(sorted(window, key=lambda it: it.key)):
            item.key = hi.key + (tag, i)
            self.moved.append(item)
        return True

    def absorb(self, group: _Item) -> None:
        """Pull ``group``'s producers in, latest first, until none can join."""
        heap: List = []

        def push(nodes):
            for n in nodes:
                heapq.heappush(heap, (_Desc(self.owner[n].key), next(self.seq), n))

        push(self.producer_nodes(group))
        failed: List = []
        while heap and group.alive:
            entry = heapq.heappop(heap)
            producer = self.owner[entry[2]]
            if producer is group or not producer.fusible:
                continue
            if self.try_merge(producer, group):
                push(self.producer_nodes(producer))
                for f in failed:  # a merge can remove the path that blocked them
                    heapq.heappush(heap, f)
                failed = []
            else:
                failed.append(entry)

    def vertical(self) -> None:
        """Visit items latest first; each fusible one pulls in its producers."""
        heap = [(_Desc(it.key), next(self.seq), it) for it in self.items if it.fusible]
        heapq.heapify(heap)
        while heap:
            _, _, item = heapq.heappop(heap)
            if not item.alive:
                continue
            self.moved = []
            self.absorb(item)
            for it in self.moved:  # moved after the group: visit them (again) at their new key
                heapq.heappush(heap, (_Desc(it.key), next(self.seq), it))
        self.moved = []

    def horizontal(self) -> None:
        """Merge fusible items that read the same tensor, when no path between them."""
        readers: Dict[Value, List[Node]] = {}
        for node in sorted(self.owner, key=self.index.__getitem__):  # with recomputed nodes
            if not self.owner[node].fusible:
                continue
            for v in node.inputs:
                if not v.is_constant() and (isinstance(v.type, TensorType) or v.type == ANY):
                    readers.setdefault(v, []).append(node)
        self.moved = []
        for nodes in readers.values():
            # Latest reader first, so the growing group is the later one and each merge only
            # walks the small earlier item (try_merge's cost is in the item it moves).
            for first, second in reversed(list(zip(nodes, nodes[1:]))):
                if _broadcastable(self.owner[first], self.owner[second]):
                    self.try_merge(self.owner[first], self.owner[second])
            # Reduction groups that are not neighbours: two column sums of a layer norm's
            # backward with the row sums' group reading the same tensor between them.
            items = list(dict.fromkeys(self.owner[n] for n in nodes if self.owner[n].alive))
            for i in range(len(items) - 1, 0, -1)[:HORIZONTAL_REACH]:
                sig = _reduced(items[i]) if items[i].alive else set()
                if not sig:
                    continue
                for j in range(i - 1, max(-1, i - 1 - HORIZONTAL_REACH), -1):
                    if items[j].alive and _reduced(items[j]) == sig \
                            and self.try_merge(items[j], items[i]):
                        break
        self.moved = []

    # -- rebuilding the block ------------------------------------------------------------------
    def rebuild(self, min_compute: int) -> Set[Value]:
        """Lay the block out in key order, each big enough group as one node; returns the
        values that lost uses."""
        block = self.block
        removed: Set[Node] = set()
        touched: Set[Value] = set()
        order: List[Node] = []
        for item in sorted((it for it in self.items if it.alive), key=lambda it: it.key):
            members = sorted(item.members, key=self.index.__getitem__)
            compute = sum(1 for m in members if m.kind not in _CHUNKS + ("prim::ListUnpack",))
            # members that read only constants (aten::to of a traced torch.tensor(0.5)) compute
            # one value, not an array: nothing for a kernel to do
            constant_only = item.fusible and reads_only_constants(members)
            if not item.fusible or compute < max(1, min_compute) or constant_only:
                if item.fusible and compute and decisions.wanted():
                    decisions.report(decisions.Decision(
                        decisions.TOO_SMALL, None, tuple(members), compute,
                        "it reads only constants" if constant_only else
                        f"{compute} op(s), fewer than {max(1, min_compute)}"))
                order.extend(members)
                continue
            group = build_group(members, self.users, self.returned)
            if decisions.wanted():
                decisions.report(decisions.Decision(decisions.GROUPED, group, tuple(members),
                                                    compute))
            group.owning_block = block
            order.append(group)
            removed.update(members)
            for m in members:
                touched.update(m.inputs)
        for v in touched:
            v.uses = [u for u in v.uses if u not in removed]
        block.nodes = [n for n in order if n not in removed]
        return touched


# -- public entry points ------------------------------------------------------------------------

def fuse(graph: Graph, dont_fuse: Iterable[str] = frozenset(), min_group_size: int = 1, *,
         loop_min_group_size: int = 1, unroll: bool = True, reductions: bool = True) -> Graph:
    """A copy of ``graph`` whose fusible regions are ``prim::FusionGroup`` nodes.

    ``dont_fuse``: op kinds never fused.  ``min_group_size``: the fewest compute ops (constants
    and chunk indexing excluded) worth a group.  It is 1: a lone elementwise op becomes a group
    too, since its kernel (parallel and vectorized) beats a numpy ufunc on large inputs and the
    interpreter's per-node cost on small ones; 2 is PyTorch's legacy rule.  Inside a
    ``prim::Loop`` body ``loop_min_group_size`` applies instead (1 by default): the body runs
    once per iteration, and PyTorch's fuser, which unrolls loops first, fuses even a one-op body.
    ``unroll``: short loops with a constant trip count are unrolled first
    (``passes.unroll_loops``), so their iterations fuse into one group.
    Calls of graph functions (``prim::CallFunction`` of ``F.relu``, ...) are inlined first
    (``passes.inline_functions``), so their ops join groups.
    ``reductions``: row reductions join groups (see "Reductions" in the module docstring),
    and ``aten::layer_norm`` / ``aten::rms_norm`` are lowered to theirs first
    (``passes.decompose_norms``); False keeps every reduction out, as the executor does when
    it splits a group.
    """
    result = inline_functions(clone_graph(graph))  # F.relu's call -> aten::relu, fusible
    inline_groups(result)  # PyTorch's own groups (a graph printed after its fuser): regrouped
    remove_mutation(result)  # x.add_(y) on a fresh x -> aten::add, fusible
    if unroll:
        unroll_loops(result)
    dont_fuse = frozenset(dont_fuse)
    if reductions:
        decompose_norms(result, dont_fuse)  # F.layer_norm -> mean, var, ...: a row kernel
    _elementwise_overloads(result, dont_fuse)
    if "aten::chunk" not in dont_fuse:
        move_chunks(result, lambda n: why_not_fusible(n, dont_fuse) is None)
    touched: Set[Value] = set()
    _fuse_block(result.block, frozenset(dont_fuse), min_group_size, loop_min_group_size, False,
                touched, reductions)
    if "aten::cat" not in dont_fuse:
        fuse_concat_outputs(result, touched)  # a cat of one group's results: written in place
    remove_dead_constants(result, touched)
    return result


def _elementwise_overloads(graph: Graph, dont_fuse: FrozenSet[str]) -> None:
    """Nodes whose op is elementwise for their inputs (``OpDef.elementwise_overload``:
    ``aten::max(%a, %b)`` of two tensors) become that op, which the partitioner fuses."""
    for node in graph.all_nodes():
        op = registry.lookup(node.kind)
        if op is not None and op.elementwise_overload is not None and node.kind not in dont_fuse:
            kind = op.elementwise_overload(node)
            if kind is not None:
                node.kind = kind


def _fuse_block(block: Block, dont_fuse: FrozenSet[str], min_size: int, loop_min_size: int,
                in_loop: bool, touched: Set[Value], reductions: bool = False) -> None:
    for node in block.nodes:  # inner blocks first: groups never cross a block edge
        for inner in node.blocks:
            _fuse_block(inner, dont_fuse, min_size, loop_min_size,
                        in_loop or node.kind == "prim::Loop", touched, reductions)
    part = _BlockPartition(block, dont_fuse, reductions)
    if not any(it.fusible for it in part.items):
        return
    part.vertical()
    part.horizontal()
    part.vertical()  # sibling merges can open new producer-consumer merges
    if recompute_shared(part):  # groups no longer depending on each other may merge now
        part.refresh_edges()
        part.horizontal()
        part.vertical()
        dedupe(part)
    touched.update(part.rebuild(loop_min_size if in_loop else min_size))


def fusion_groups(graph: Graph) -> Iterator[Node]:
    """Every ``prim::FusionGroup`` node of ``graph``, in all blocks."""
    return (n for n in graph.all_nodes() if n.kind == FUSION_GROUP)
