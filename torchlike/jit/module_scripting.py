"""``jit.script(module)``: an ``nn.Module`` tree compiled bottom-up into ``ScriptModule``s.

Each module's ``forward`` is compiled by the scripter with ``self`` described by a
``ModuleMembers`` (the scripter's ``ModuleInfo``): parameters, buffers and plain array
attributes are tensor reads (``prim::GetAttr``), submodules are module reads whose calls are
``prim::CallMethod``, bool/int/float/str attributes are reads too (specialized per value when
the module runs), names in the class's ``__constants__``, ``None`` and tuple/list attributes
are constants, and other methods of the class are inlined.  Children are compiled first (a
child that is already a ``ScriptModule`` -- scripted or traced -- is used as it is), and a
module shared by two parents is compiled once.
"""
from __future__ import annotations

import inspect
import types as pytypes
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ScriptError
from ..frontend.script import script_graph
from ..frontend.script_values import Callee, Member
from ..ir.types import TENSOR, type_of_python_value
from ..nn.module import Module
from .script_function import ScriptFunction
from .script_module import ScriptModule, qualified_class_name

__all__ = ["ModuleMembers", "forward_function", "script_module", "skeleton"]

_SCALARS = (bool, int, float, str)


def _is_array(v: Any) -> bool:
    return hasattr(v, "dtype") and hasattr(v, "shape")


# what a ScriptModule keeps in its __dict__ for itself (not attributes of the scripted module)
_INTERNAL = frozenset(k for k in vars(ScriptModule("_", "script")) if k.startswith("_")) | {
    "_forward_defaults", "_archive_class", "_py_class"}


class ModuleMembers:
    """The scripter's view of one ``ScriptModule`` (``frontend.script_values.ModuleInfo``)."""

    def __init__(self, sm: ScriptModule):
        self.sm = sm
        self.cls: Optional[type] = sm.__dict__.get("_py_class")
        self.qualified_name = sm._qualified_name

    def member(self, name: str) -> Optional[Member]:
        sm = self.sm
        if name in sm._constants:
            return Member("constant", value=sm._constants[name])
        for d in (sm._parameters, sm._buffers):
            if name in d:
                return Member("constant", value=None) if d[name] is None else \
                    Member("tensor", TENSOR)
        if name in sm._modules:
            child = sm._modules[name]
            if child is None:
                return Member("constant", value=None)
            return Member("module", module=ModuleMembers(child))
        if name in sm.__dict__ and name not in _INTERNAL:  # user attributes: _qkv_same_embed_dim
            v = sm.__dict__[name]
            if _is_array(v):
                return Member("tensor", TENSOR)
            if isinstance(v, _SCALARS):
                return Member("scalar", type_of_python_value(v))
            if v is None or isinstance(v, tuple):
                return Member("constant", value=v)
            if isinstance(v, list):
                return Member("constant", value=tuple(v))
            return None
        fn = getattr(self.cls, name, None) if self.cls is not None else None
        if isinstance(fn, pytypes.FunctionType):
            return Member("method", value=fn)
        return None

    def children(self) -> List[Tuple[str, "ModuleMembers"]]:
        return [(n, ModuleMembers(m)) for n, m in self.sm._modules.items() if m is not None]

    def forward_callee(self) -> Callee:
        graph = self.sm.method_graph("forward")
        fn = self.sm._methods["forward"]
        defaults = self.sm.__dict__.get("_forward_defaults", {})
        return Callee(tuple(fn.input_names[1:]), dict(defaults),
                      tuple(v.type for v in graph.outputs))


def forward_function(m: Module) -> pytypes.FunctionType:
    """The Python function of ``type(m).forward``, or a ``ScriptError`` saying what is wrong."""
    fn = getattr(type(m), "forward", None)
    base = getattr(Module, "forward", None)
    if fn is None or fn is base:
        raise ScriptError(f"{type(m).__name__} has no forward method to compile")
    if not isinstance(fn, pytypes.FunctionType):
        raise ScriptError(f"{type(m).__name__}.forward is a {type(fn).__name__}, not a Python "
                          f"function: it cannot be compiled")
    return fn


def _defaults(fn: pytypes.FunctionType) -> Dict[str, Any]:
    params = list(inspect.signature(fn).parameters.values())[1:]
    return {p.name: p.default for p in params if p.default is not inspect.Parameter.empty}


def skeleton(m: Module, kind: str, memo: Dict[int, ScriptModule], child) -> ScriptModule:
    """A ``ScriptModule`` holding ``m``'s state (the same arrays) and children made by
    ``child(submodule, memo)``, without compiled methods yet."""
    sm = ScriptModule(qualified_class_name(type(m)), kind, type(m).__name__)
    memo[id(m)] = sm
    d = sm.__dict__
    d["_py_class"] = type(m)
    d["training"] = bool(getattr(m, "training", True))
    sm._parameters.update(m._parameters)
    sm._buffers.update(m._buffers)
    sm._non_persistent_buffers_set.update(getattr(m, "_non_persistent_buffers_set", ()))
    for k, v in m.__dict__.items():
        if k.startswith("_") or k == "training" or k in d:
            continue
        if v is None or isinstance(v, _SCALARS + (tuple, list)) or _is_array(v):
            d[k] = v
    for name in getattr(type(m), "__constants__", ()) or ():
        if hasattr(m, name):
            sm._constants[name] = getattr(m, name)
    for name, c in m._modules.items():
        sm._modules[name] = None if c is None else child(c, memo)
    return sm


def has_forward(m: Module) -> bool:
    """Whether ``m``'s class defines a ``forward`` (containers such as ``ModuleList`` do not)."""
    return getattr(type(m), "forward", None) not in (None, getattr(Module, "forward", None))


def script_module(m: Module, memo: Optional[Dict[int, ScriptModule]] = None,
                  root: bool = True) -> ScriptModule:
    """Compile ``m`` and its submodules (module docstring).  A submodule without a
    ``forward`` (``ModuleList``, ``ModuleDict``) is kept as a container of compiled modules."""
    if isinstance(m, ScriptModule):
        return m
    if not isinstance(m, Module):
        raise ScriptError(f"jit.script of a {type(m).__name__} object: modules must subclass "
                          f"torchlike.nn.Module (parameters as nn.Parameter or registered "
                          f"buffers), or pass a function")
    memo = {} if memo is None else memo
    if id(m) in memo:
        return memo[id(m)]
    sm = skeleton(m, "script", memo, lambda c, memo: script_module(c, memo, root=False))
    if not root and not has_forward(m):
        return sm
    fn = forward_function(m)
    graph = script_graph(fn, module=ModuleMembers(sm))
    names = [p for p in inspect.signature(fn).parameters]
    sm.__dict__["_forward_defaults"] = _defaults(fn)
    sm._define_method("forward", ScriptFunction(graph, name="forward", input_names=names,
                                                kind="script"))
    return sm
