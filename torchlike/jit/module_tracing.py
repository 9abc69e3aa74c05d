"""``jit.trace(module, example_inputs)``: a module's ``forward`` recorded on examples.

As ``torch.jit.trace`` does for modules, the graph starts with ``%self``; every parameter,
buffer and array attribute of the module tree is read through a ``prim::GetAttr`` chain (so
the traced module keeps using the live arrays), and a submodule call is recorded as
``prim::CallMethod[name="forward"]`` on that submodule, itself traced on the arguments it got::

    graph(%self : __torch__.MyCell,
          %x : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu),
          %h : Float(3, 4, strides=[4, 1], requires_grad=0, device=cpu)):
      %linear : __torch__.torchlike.nn.linear.Linear = prim::GetAttr[name="linear"](%self)
      %dg : __torch__.MyDecisionGate = prim::GetAttr[name="dg"](%self)
      %8 : Tensor = prim::CallMethod[name="forward"](%linear, %x)
      %9 : Tensor = prim::CallMethod[name="forward"](%dg, %8)
      ...

A submodule that is already a ``ScriptModule`` (scripted: its control flow) is called as it is,
so ``jit.trace`` of a module holding a scripted gate keeps the gate's ``if``.  Python control
flow of the traced code itself is evaluated on the examples (``TracerWarning`` for
data-dependent branches).  The module's arrays are swapped for traced values only while its
``forward`` runs, and put back afterwards, even on an error.
"""
from __future__ import annotations

import contextlib
from typing import Any, Dict, Iterator, List, Optional, Tuple

from ..frontend.calls import find_recorder
from ..frontend.traced_value import TracedValue
from ..frontend.tracer import Tracer, trace_graph
from ..ir.graph import Graph, Value
from ..ir.types import TENSOR, ClassType
from ..nn import module as nn_module
from ..nn.module import Module
from .module_scripting import forward_function, skeleton
from .script_function import ScriptFunction
from .script_module import ScriptModule

__all__ = ["trace_module"]


def _is_array(v: Any) -> bool:
    return hasattr(v, "dtype") and hasattr(v, "shape") and not isinstance(v, TracedValue)


def _tensor_slots(m: Module, path: Tuple[str, ...] = ()) -> Iterator[Tuple[Module, str, str,
                                                                            Tuple[str, ...]]]:
    """(module, dict name, attribute, path from the root) for every array of the tree."""
    for where in ("_parameters", "_buffers"):
        for name, v in getattr(m, where).items():
            if v is not None:
                yield m, where, name, path + (name,)
    for name, v in list(m.__dict__.items()):
        if not name.startswith("_") and (_is_array(v) or isinstance(v, TracedValue)):
            yield m, "__dict__", name, path + (name,)
    for name, c in m._modules.items():
        if c is not None and not isinstance(c, ScriptModule):
            yield from _tensor_slots(c, path + (name,))


def _module_paths(m: Module, path: Tuple[str, ...] = ()) -> Iterator[Tuple[Module, Tuple]]:
    yield m, path
    for name, c in m._modules.items():
        if c is not None:
            yield from _module_paths(c, path + (name,))


def _concrete(v: Any) -> Any:
    return v.concrete if isinstance(v, TracedValue) else v


class _ModuleTrace:
    """The state of one module's trace: its tracer, the ``prim::GetAttr`` values made so far
    (by path), the modules of its tree by id, and the memo of traced submodules."""

    def __init__(self, root: Module, sm: ScriptModule, memo: Dict[int, ScriptModule]):
        self.root, self.sm, self.memo = root, sm, memo
        self.tracer: Optional[Tracer] = None
        self.values: Dict[Tuple[str, ...], Value] = {}
        self.paths = {id(mod): (mod, p) for mod, p in _module_paths(root)}

    def attr_value(self, path: Tuple[str, ...], leaf_type) -> Value:
        """The value of ``self.<path>``, reading each prefix once."""
        v = self.values.get(path)
        if v is not None:
            return v
        parent = self.values[()] if len(path) == 1 else self.attr_value(
            path[:-1], ClassType(self._class_name(path[:-1])))
        v = self.tracer.graph.create("prim::GetAttr", [parent], [leaf_type], {"name": path[-1]},
                                     names=[path[-1]]).output()
        self.values[path] = v
        return v

    def _class_name(self, path: Tuple[str, ...]) -> str:
        obj = self.sm
        for name in path:
            obj = obj._modules[name]
        return obj._qualified_name

    @contextlib.contextmanager
    def prepare(self, tracer: Tracer, self_value: Value):
        """While ``forward`` runs: arrays -> traced ``prim::GetAttr`` reads, the call hook on."""
        self.tracer = tracer
        self.values[()] = self_value
        saved: List[Tuple[Any, str, Any]] = []
        hook = nn_module._call_hook
        try:
            for mod, where, name, path in list(_tensor_slots(self.root)):
                d = mod.__dict__ if where == "__dict__" else getattr(mod, where)
                current = d[name]
                saved.append((d, name, current))
                d[name] = TracedValue(tracer, self.attr_value(path, TENSOR), _concrete(current))
            nn_module._call_hook = self.call_hook
            yield
        finally:
            nn_module._call_hook = hook
            for d, name, current in reversed(saved):
                d[name] = current
            _prune_attribute_reads(tracer.graph)

    def call_hook(self, mod: Module, args: tuple, kwargs: dict) -> Any:
        """A module called while tracing: a submodule of the tree called on traced values is
        recorded as ``prim::CallMethod`` (NotImplemented: run it normally)."""
        if mod is self.root or kwargs or id(mod) not in self.paths:
            return NotImplemented
        if find_recorder(list(args)) is not self.tracer:
            return NotImplemented
        path = self.paths[id(mod)][1]
        concrete = [_concrete(a) for a in args]
        child = mod if isinstance(mod, ScriptModule) else self.memo.get(id(mod))
        if child is None or "forward" not in child._methods:
            child = trace_module(mod, tuple(concrete), self.memo)
        result = child(*concrete)
        target = self.attr_value(path, ClassType(child._qualified_name))
        return self.tracer.record_method_call(target, "forward", args, result)


def _prune_attribute_reads(graph: Graph) -> None:
    """Remove ``prim::GetAttr`` reads nothing uses (the tracer reads every array up front)."""
    changed = True
    while changed:
        changed = False
        for node in list(graph.block.nodes):
            if node.kind == "prim::GetAttr" and not node.outputs[0].uses \
                    and node.outputs[0] not in graph.outputs:
                graph.block.remove(node)
                changed = True


def _traced_child(c: Module, memo: Dict[int, ScriptModule]) -> ScriptModule:
    if isinstance(c, ScriptModule):
        return c
    if id(c) in memo:
        return memo[id(c)]
    return skeleton(c, "trace", memo, _traced_child)


def trace_module(m: Module, example_inputs, memo: Optional[Dict[int, ScriptModule]] = None
                 ) -> ScriptModule:
    """Trace ``m.forward`` on ``example_inputs`` into a ``ScriptModule`` (module docstring)."""
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    memo = {} if memo is None else memo
    sm = memo.get(id(m))
    if sm is None:
        sm = skeleton(m, "trace", memo, _traced_child)
    forward_function(m)  # a clear error for a module without one
    trace = _ModuleTrace(m, sm, memo)
    graph = trace_graph(m.forward, tuple(example_inputs), ClassType(sm._qualified_name),
                        trace.prepare)
    names = ["self"] + [v.name for v in graph.inputs[1:]]
    sm._define_method("forward", ScriptFunction(graph, name="forward", input_names=names,
                                                kind="trace", fn=None))
    return sm
