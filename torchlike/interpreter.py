"""The reference interpreter: runs any graph, control flow included, node by node.

It is the semantics every backend is checked against.  Values are numpy or cupy arrays
(the array module follows the inputs), Python scalars, None, lists and tuples.  Each node's
implementation comes from the op registry; control flow (``prim::If``, ``prim::Loop``) and
constants are handled here.  A failing node raises ``ExecutionError`` naming it::

    torchlike.errors.IntegerDivisionByZeroError: aten::floor_divide(%4) at f.py:3:9:
        integer division by zero
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, Optional, Sequence

import numpy as np

from .errors import ExecutionError, IntegerDivisionByZeroError, TorchlikeError
from .ir.attributes import SUBGRAPH_ATTR, UnknownTensorValue
from .ir.graph import Block, Graph, Node, Value
from .ops import registry
from .ops.executor_prims import SUBGRAPH_NODES
from .ops.functions import FunctionRef, function_value

# nodes that never do floating-point math through numpy (a fused graph is often only these)
_NO_ARRAY_MATH = frozenset({
    "prim::FusionGroup", "prim::Constant", "prim::ListConstruct", "prim::TupleConstruct",
    "prim::ListUnpack", "prim::TupleUnpack", "prim::TupleIndex", "prim::GetAttr"})

# A hook the fuser installs: run(node, xp, args) -> outputs for prim::FusionGroup nodes.
FusionGroupRunner = Callable[[Node, Any, List[Any]], Sequence[Any]]


def array_module(values: Sequence[Any]):
    """cupy if any value is a cupy array (or a sequence holding one), else numpy."""
    for v in values:
        if isinstance(v, (list, tuple)):
            mod = array_module(v)
            if mod is not np:
                return mod
        elif type(v).__module__.startswith("cupy"):
            import cupy
            return cupy
    return np


# the 0-d tensor constants that run as Python scalars (see constant_runtime_value)
WRAPPED_CONSTANT_DTYPES = (np.dtype(np.float64), np.dtype(np.int64))


def constant_runtime_value(node: Node, xp) -> Any:
    """A ``prim::Constant``'s value at run time.  A 0-d float64 or int64 tensor constant is a
    Python scalar: traces record Python scalars that way (``x * 0.5``: ``Double()``), and
    they promote as wrapped numbers.  A 0-d constant of another dtype cannot be a traced
    Python scalar (``torch.tensor(0.5)`` traces as ``Float()``): it stays a tensor."""
    value = node.attrs.get("value")
    if isinstance(value, UnknownTensorValue):
        if value.data is None:
            raise ExecutionError(f"{node.describe()}: the graph text does not hold this tensor "
                                 f"constant's data ({value.text}); load a saved ScriptFunction "
                                 "instead, which stores it", node)
        return xp.asarray(value.data)
    if isinstance(value, np.ndarray):
        if value.ndim == 0 and value.dtype in WRAPPED_CONSTANT_DTYPES:
            return value.item()
        return xp.asarray(value)
    return value


class Interpreter:
    """Runs a graph.  ``fusion_runner`` executes ``prim::FusionGroup`` nodes (the fuser's
    executor installs one); without it a group's subgraph is interpreted."""

    def __init__(self, graph: Graph, fusion_runner: Optional[FusionGroupRunner] = None):
        self.graph = graph
        self.fusion_runner = fusion_runner
        self._numpy_ops: Optional[bool] = None  # does any node compute with the array module?

    def run(self, *inputs: Any) -> Any:
        outputs = self.run_outputs(list(inputs))
        return outputs[0] if len(outputs) == 1 else tuple(outputs)

    def run_outputs(self, inputs: List[Any]) -> List[Any]:
        params = self.graph.inputs
        if len(inputs) != len(params):
            names = ", ".join(f"%{p.name}" for p in params)
            raise TypeError(f"graph takes {len(params)} inputs ({names}), got {len(inputs)}")
        xp = array_module(inputs)
        env: Dict[Value, Any] = dict(zip(params, inputs))
        if self._numpy_ops is None:
            self._numpy_ops = any(n.kind not in _NO_ARRAY_MATH for n in self.graph.all_nodes())
        if not self._numpy_ops:  # a fused graph's groups and glue: no errstate to pay for
            return self.run_block(self.graph.block, env, xp)
        # PyTorch computes inf - inf, 0 * inf, 1 / 0 and overflows silently; numpy warns (an
        # error under -W error).  Integer division by zero is checked by the ops themselves.
        with np.errstate(all="ignore"):
            return self.run_block(self.graph.block, env, xp)

    def run_block(self, block: Block, env: Dict[Value, Any], xp) -> List[Any]:
        for node in block.nodes:
            try:
                results = self.run_node(node, env, xp)
            except ExecutionError as e:
                if e.node is None:  # raised by an op: say which node (inner nodes already did)
                    e.node = node
                    e.args = (f"{node.describe()}: {e}",) + e.args[1:]
                raise
            except ZeroDivisionError as e:
                raise IntegerDivisionByZeroError(f"{node.describe()}: {e}", node) from e
            except AssertionError:
                raise
            except TorchlikeError as e:  # UnsupportedOpError, FusionError: same type, named node
                if str(e).startswith(node.describe()):
                    raise
                raise type(e)(f"{node.describe()}: {e}") from e
            except Exception as e:  # name the node; keep the original type in the chain
                raise ExecutionError(f"{node.describe()}: {type(e).__name__}: {e}", node) from e
            outs = node.outputs
            if len(outs) == 1:
                env[outs[0]] = results
            elif outs:
                if len(results) != len(outs):
                    raise ExecutionError(f"{node.describe()}: produced {len(results)} values for "
                                         f"{len(outs)} outputs", node)
                for v, r in zip(outs, results):
                    env[v] = r
        return [env[v] for v in block.returns]

    def run_node(self, node: Node, env: Dict[Value, Any], xp) -> Any:
        kind = node.kind
        args = [env[v] for v in node.inputs]
        if kind == "prim::Constant":
            if "name" in node.attrs and "value" not in node.attrs:
                # %f : Function = prim::Constant[name="fn"](): a function from ops.functions,
                # or a FunctionRef when the name is unknown (an error only if it is called).
                return function_value(node.attrs["name"])
            return constant_runtime_value(node, xp)
        if kind == "prim::If":
            branch = node.blocks[0] if bool(args[0]) else node.blocks[1]
            return _unpack(self.run_block(branch, env, xp), node)
        if kind == "prim::Loop":
            return _unpack(self.run_loop(node, args, env, xp), node)
        if kind == "prim::CallFunction" and args:
            fn = args[0].resolve() if isinstance(args[0], FunctionRef) else args[0]
            if isinstance(fn, Graph):
                outputs = Interpreter(fn, self.fusion_runner).run_outputs(list(args[1:]))
                return outputs[0] if len(outputs) == 1 else tuple(outputs)
        if kind in SUBGRAPH_NODES:  # PyTorch's own groups: their subgraph, as written
            sub = node.attrs[SUBGRAPH_ATTR]
            return _unpack(Interpreter(sub, self.fusion_runner).run_outputs(args), node)
        if kind == "prim::FusionGroup":
            if self.fusion_runner is not None:
                return _unpack(list(self.fusion_runner(node, xp, args)), node)
            sub = node.attrs[SUBGRAPH_ATTR]
            return _unpack(Interpreter(sub).run_outputs(args), node)
        op = registry.get(kind)
        most = op.max_inputs
        if most is not None and len(args) > most:
            schema = ", ".join(f"{p.type} {p.name}" for p in op.params)
            raise ExecutionError(f"{node.describe()}: {kind}({schema}) takes at most {most} "
                                 f"input{'s' * (most != 1)}, the node has {len(args)}", node)
        attrs = node.attrs
        result = op.impl(xp, *args, **attrs) if attrs else op.impl(xp, *args)
        return op.node_value(result, len(node.outputs))

    def run_loop(self, node: Node, args: List[Any], env: Dict[Value, Any], xp) -> List[Any]:
        """``prim::Loop(max_trip_count, initial_condition, *carried)``; the body block takes
        ``(iteration, *carried)`` and returns ``(condition, *carried)``."""
        max_trips, cond, carried = args[0], bool(args[1]), args[2:]
        body = node.blocks[0]
        i = 0
        while cond and i < max_trips:
            env[body.params[0]] = i
            for p, v in zip(body.params[1:], carried):
                env[p] = v
            results = self.run_block(body, env, xp)
            cond, carried = bool(results[0]), results[1:]
            i += 1
        return carried


def _unpack(results: List[Any], node: Node) -> Any:
    return results[0] if len(node.outputs) == 1 else results


def run(graph: Graph, *inputs: Any) -> Any:
    """Interpret ``graph`` on ``inputs``; one output is returned as is, several as a tuple."""
    return Interpreter(graph).run(*inputs)
