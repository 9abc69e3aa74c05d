"""The IR verifier (TorchScript's ``Graph::lint``): structural invariants every pass must keep.

``verify(graph)`` returns None for a well-formed graph and raises ``IRVerificationError``, naming
the offending node, for the first broken invariant it finds:

* SSA dominance: every use (node input or block return) refers to a value defined earlier in the
  same block, earlier in an enclosing block, or a parameter of the block or an enclosing block;
* ``Value.uses`` lists exactly the nodes that use the value, once per use;
* value names are unique within a graph;
* back links are right: ``node.owning_block``, ``block.owning_node``, ``value.node``,
  ``param.block``;
* ``prim::If``: a condition input, exactly 2 blocks, each returning one value per output;
* ``prim::Loop``: inputs ``(max_trip_count, cond, *carried)``, one block with params
  ``(i, *carried)`` returning ``(cond, *carried)``, outputs ``carried``;
* a node holding a subgraph (``attrs["Subgraph"]``: ``prim::FusionGroup``) has as many inputs and
  outputs as the subgraph, and the subgraph verifies on its own.

For example, a node using a value defined after it::

    graph(%x : Tensor):
      %1 : Tensor = aten::mul(%x, %2)   <- IRVerificationError: %2 is used before its definition
      %2 : Tensor = aten::neg(%x)
      return (%1)
"""
from __future__ import annotations

from collections import Counter
from typing import Dict, List, Set

from ..errors import TorchlikeError
from .attributes import SUBGRAPH_ATTR
from .graph import Block, Graph, Node, Value


class IRVerificationError(TorchlikeError, AssertionError):
    """A graph breaks an IR invariant; the message names the node (or block) at fault."""

    def __init__(self, message: str, node: Node = None):
        super().__init__(message)
        self.node = node


def verify(graph: Graph) -> None:
    """Check every invariant listed in the module docstring, recursing into blocks and
    fusion subgraphs.  Raises ``IRVerificationError`` on the first violation."""
    _Verifier(graph).run()


class _Verifier:
    def __init__(self, graph: Graph):
        self.graph = graph
        self.names: Dict[str, Value] = {}
        self.all_values: List[Value] = []
        self.expected_uses: Dict[int, Counter] = {}  # id(value) -> Counter(id(node))
        self.nodes: Set[int] = set()

    def fail(self, message: str, node: Node = None):
        where = f"{node.describe()}: " if node is not None else ""
        raise IRVerificationError(f"{where}{message}", node)

    def define(self, value: Value, node: Node = None) -> None:
        other = self.names.get(value.name)
        if other is not None:
            self.fail(f"duplicate value name %{value.name}", node)
        self.names[value.name] = value
        self.all_values.append(value)
        self.expected_uses[id(value)] = Counter()

    def run(self) -> None:
        if self.graph.block.graph is not self.graph:
            self.fail("the top block does not point back to its graph")
        if self.graph.block.owning_node is not None:
            self.fail("the top block has an owning node")
        self.check_block(self.graph.block, set())
        self.check_uses()

    def check_block(self, block: Block, visible: Set[int]) -> None:
        # ``visible`` holds ids of values that dominate the current point; a copy per block keeps
        # an inner block's definitions from leaking out.
        visible = set(visible)
        for p in block.params:
            if p.node is not None or p.block is not block:
                self.fail(f"block parameter %{p.name} does not point back to its block",
                          block.owning_node)
            self.define(p, block.owning_node)
            visible.add(id(p))
        for node in block.nodes:
            if node.owning_block is not block:
                self.fail("node.owning_block is not the block that holds it", node)
            if id(node) in self.nodes:
                self.fail("node appears twice in the graph", node)
            self.nodes.add(id(node))
            for i, v in enumerate(node.inputs):
                if id(v) not in visible:
                    self.fail(f"input {i} (%{v.name}) is not defined before this use", node)
                self.expected_uses[id(v)][id(node)] += 1
            self.check_node_shape(node)
            for b in node.blocks:
                if b.owning_node is not node:
                    self.fail("sub-block does not point back to its node", node)
                if b.graph is not self.graph:
                    self.fail("sub-block does not point back to the graph", node)
                self.check_block(b, visible)
            for o in node.outputs:
                if o.node is not node:
                    self.fail(f"output %{o.name} does not point back to its node", node)
                self.define(o, node)
                visible.add(id(o))
            sub = node.attrs.get(SUBGRAPH_ATTR)
            if isinstance(sub, Graph):
                try:
                    verify(sub)
                except IRVerificationError as e:
                    self.fail(f"in subgraph: {e}", node)
        for i, v in enumerate(block.returns):
            if id(v) not in visible:
                owner = block.owning_node
                what = "graph output" if owner is None else "block return"
                self.fail(f"{what} {i} (%{v.name}) is not defined before this use", owner)

    def check_node_shape(self, node: Node) -> None:
        kind = node.kind
        n_in, n_out = len(node.inputs), len(node.outputs)
        if kind == "prim::If":
            if n_in != 1:
                self.fail(f"prim::If takes 1 input (the condition), has {n_in}", node)
            if len(node.blocks) != 2:
                self.fail(f"prim::If must have 2 blocks, has {len(node.blocks)}", node)
            for j, b in enumerate(node.blocks):
                if b.params:
                    self.fail(f"prim::If block{j} must have no parameters", node)
                if len(b.returns) != n_out:
                    self.fail(f"prim::If block{j} returns {len(b.returns)} values for "
                              f"{n_out} outputs", node)
        elif kind == "prim::Loop":
            if n_in < 2:
                self.fail("prim::Loop needs inputs (max_trip_count, cond, *carried)", node)
            carried = n_in - 2
            if len(node.blocks) != 1:
                self.fail(f"prim::Loop must have 1 block, has {len(node.blocks)}", node)
            body = node.blocks[0]
            if len(body.params) != 1 + carried:
                self.fail(f"prim::Loop body has {len(body.params)} parameters, expected "
                          f"{1 + carried} (iteration + {carried} carried)", node)
            if len(body.returns) != 1 + carried:
                self.fail(f"prim::Loop body returns {len(body.returns)} values, expected "
                          f"{1 + carried} (condition + {carried} carried)", node)
            if n_out != carried:
                self.fail(f"prim::Loop has {n_out} outputs for {carried} carried values", node)
        elif node.blocks:
            pass  # other block-holding kinds (prim::Closure, ...) have no fixed arity here
        sub = node.attrs.get(SUBGRAPH_ATTR)
        if isinstance(sub, Graph):
            if len(sub.inputs) != n_in:
                self.fail(f"subgraph takes {len(sub.inputs)} inputs, node passes {n_in}", node)
            if len(sub.outputs) != n_out:
                self.fail(f"subgraph returns {len(sub.outputs)} values, node has {n_out} "
                          f"outputs", node)
        elif kind == "prim::FusionGroup":
            self.fail("prim::FusionGroup without a Subgraph attribute", node)

    def check_uses(self) -> None:
        for v in self.all_values:
            actual = Counter(id(n) for n in v.uses)
            expected = self.expected_uses[id(v)]
            if actual != expected:
                stale = [n for n in v.uses if actual[id(n)] > expected[id(n)]]
                if stale:
                    self.fail(f"%{v.name}.uses lists a node that does not use it that often "
                              f"(stale use by {stale[0].describe()})", stale[0])
                missing = next(k for k in expected if expected[k] > actual[k])
                node = next(n for n in self._nodes() if id(n) == missing)
                self.fail(f"%{v.name}.uses is missing a use by this node", node)

    def _nodes(self):
        return self.graph.all_nodes()
