"""Modules and compiled functions inside scripted code: ``self.linear(x)``, ``self.weight``,
``for layer in self.layers``, ``other_script_fn(x)``.

A method of a module is compiled with ``self`` bound to a ``ModuleValue``: the graph input
``%self`` typed with the module's class, plus a ``ModuleInfo`` (script_values.py) that
``torchlike.jit`` implements over ``nn.Module``.  What ``self.name`` becomes, as TorchScript
records it::

    %linear : __torch__.torchlike.nn.linear.Linear = prim::GetAttr[name="linear"](%self)
    %5 : Tensor = prim::CallMethod[name="forward"](%linear, %x)    # self.linear(x)
    %W : Tensor = prim::GetAttr[name="W"](%self)                    # self.W, a parameter
    %training : bool = prim::GetAttr[name="training"](%self)       # a bool/int/float attribute

Names in the class's ``__constants__`` (and ``None`` parameters) are constants; other Python
methods of the module are inlined; iterating a container (``Sequential``, ``ModuleList``,
``ModuleDict.values()``/``.items()``) unrolls the loop, one ``prim::GetAttr`` per child, as
TorchScript does.  A compiled function (``jit.script``/``jit.trace`` result) called from
scripted code has its graph copied in at the call.
"""
from __future__ import annotations

import ast
from typing import Any, Dict, List, Optional

from ..ir.graph import Value
from ..ir.types import ClassType
from ..passes.inline_functions import copy_nodes
from .script_values import (
    BoundMethod,
    Callee,
    Member,
    ModuleValue,
    ScriptCallee,
    Seq,
)

__all__ = ["BindValue", "ModuleLowering"]


class BindValue(ast.stmt):
    """A statement the scripter makes while unrolling a loop over modules: bind ``target`` to
    the compile-time value ``sv`` (the child module of this iteration)."""

    _fields = ("target",)

    def __init__(self, target, sv, where):
        super().__init__(target=target)
        self.sv = sv
        ast.copy_location(self, where)


class ModuleLowering:
    """Mixed into the scripter (``StatementLowering``): lowering of module members, module
    calls, loops over containers and calls of compiled functions."""

    # -- members ---------------------------------------------------------------------------------
    def module_attribute(self, mv: ModuleValue, e: ast.Attribute):
        """``module.name``: a ``prim::GetAttr``, a constant, a submodule or a method."""
        m: Optional[Member] = mv.info.member(e.attr)
        if m is None:
            raise self.error(f"module '{mv.info.qualified_name}' has no attribute '{e.attr}'",
                             e)
        if m.kind == "constant":
            return self.python_value(m.value, e.attr, e)
        if m.kind == "method":
            return BoundMethod(mv, m.value)
        if m.kind == "module":
            return self.child_module(mv, e.attr, m)
        return self.get_attr(mv.value, e.attr, m.type)

    def get_attr(self, obj: Value, name: str, t) -> Value:
        """``%name = prim::GetAttr[name="name"](%obj)`` (no source comment, as PyTorch prints)."""
        return self.graph.create("prim::GetAttr", [obj], [t], {"name": name}, block=self.block,
                                 names=[name]).output()

    def child_module(self, mv: ModuleValue, name: str, m: Member) -> ModuleValue:
        v = self.get_attr(mv.value, name, ClassType(m.module.qualified_name))
        return ModuleValue(v, m.module)

    def index_module(self, mv: ModuleValue, index, e):
        """``self.layers[0]``, ``self.heads["q"]``: a constant index picks a child."""
        key = self.materialize(self.expr(index), index).constant_value()
        children = mv.info.children()
        names = [n for n, _ in children]
        if isinstance(key, int) and not isinstance(key, bool):
            if not -len(children) <= key < len(children):
                raise self.error(f"index {key} is out of range for a container of "
                                 f"{len(children)} modules", e)
            name = names[key]
        elif isinstance(key, str) and key in names:
            name = key
        else:
            raise self.error(f"module '{mv.info.qualified_name}' can only be indexed by a "
                             f"constant int or one of its children's names (got {key!r})", e)
        return self.child_module(mv, name, mv.info.member(name))

    # -- calls -----------------------------------------------------------------------------------
    def bind_callee(self, callee: Callee, what: str, args: list, kwargs: Dict[str, Any], e):
        """The call's arguments in the callee's parameter order, defaults filled in."""
        names = list(callee.names)
        if len(args) > len(names):
            raise self.error(f"{what} takes {len(names)} arguments, got {len(args)}", e)
        bound = list(args)
        kwargs = dict(kwargs)
        for name in names[len(args):]:
            if name in kwargs:
                bound.append(kwargs.pop(name))
            elif name in callee.defaults:
                bound.append(self.python_value(callee.defaults[name], name, e))
            else:
                raise self.error(f"{what} is missing argument '{name}'", e)
        if kwargs:
            raise self.error(f"{what} got unexpected arguments {sorted(kwargs)}", e)
        return [self.materialize(a, e) for a in bound]

    def call_module(self, mv: ModuleValue, args: list, kwargs: Dict[str, Any], e):
        """``self.linear(x)``: ``prim::CallMethod[name="forward"]``, typed by the callee."""
        callee = mv.info.forward_callee()
        inputs = self.bind_callee(callee, f"{mv.info.qualified_name}.forward", args, kwargs, e)
        n = self.graph.create("prim::CallMethod", [mv.value] + inputs,
                              list(callee.output_types), {"name": "forward"}, block=self.block,
                              source=self.frame.source(e))
        return n.outputs[0] if len(n.outputs) == 1 else Seq(n.outputs)

    def call_bound_method(self, bm: BoundMethod, args: list, kwargs: Dict[str, Any], e):
        """``self.helper(x)``: the method's body compiled in place with ``self`` bound."""
        return self.inline(bm.fn, [bm.module] + list(args), kwargs, e)

    def call_script_function(self, sc: ScriptCallee, args: list, kwargs: Dict[str, Any], e):
        """A compiled function called from scripted code: its nodes copied in at the call."""
        inputs = self.bind_callee(sc.callee, sc.name, args, kwargs, e)
        env = dict(zip(sc.graph.inputs, inputs, strict=True))
        copy_nodes(self.graph, sc.graph.block, self.block, len(self.block.nodes), env)
        results = [env[v] for v in sc.graph.outputs]
        return results[0] if len(results) == 1 else Seq(results)

    # -- loops over containers -----------------------------------------------------------------
    def module_loop_items(self, it) -> Optional[List[tuple]]:
        """For ``for x in <it>``: ``[(name, child ModuleValue), ...]`` when ``it`` iterates a
        module container (``self.layers``, ``self.heads.values()``/``.items()``), with
        ``"items"`` marking (key, module) pairs; None for anything else."""
        mode = "values"
        base = it
        if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) \
                and it.func.attr in ("values", "items", "children") and not it.args:
            mode = "items" if it.func.attr == "items" else "values"
            base = it.func.value
        if not isinstance(base, (ast.Name, ast.Attribute)):
            return None
        if isinstance(base, ast.Name) and base.id not in self.env:
            return None
        mv = self.expr(base)
        if not isinstance(mv, ModuleValue):
            return None
        out = []
        for name, _ in mv.info.children():
            child = self.child_module(mv, name, mv.info.member(name))
            out.append((mode, name, child))
        return out

    def unroll_module_loop(self, s: ast.For) -> Optional[list]:
        """``for layer in self.layers: body`` as the body once per child, each copy preceded
        by the binding of ``layer`` (TorchScript unrolls these loops too); None if ``s`` does
        not iterate modules."""
        items = self.module_loop_items(s.iter)
        if items is None:
            return None
        if s.orelse:
            raise self.error("for-else is not supported in scripted functions", s)
        for node in _walk_no_loops(s.body):
            if isinstance(node, (ast.Break, ast.Continue)):
                raise self.error("break and continue are not supported in a loop over modules "
                                 "(it is unrolled)", node)
        out: list = []
        for mode, name, child in items:
            value = child
            if mode == "items":
                value = Seq([self.const(name, s), child])
            out.append(BindValue(s.target, value, s))
            out.extend(s.body)
        return out

    def stmt_BindValue(self, s: BindValue):
        self.assign(s.target, s.sv, s)


def _walk_no_loops(stmts):
    """Every AST node under ``stmts``, not entering nested loops (their break is their own)."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.For, ast.While)):
            continue
        stack.extend(ast.iter_child_nodes(node))
