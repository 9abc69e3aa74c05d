"""``ScriptModule``: a module compiled by ``jit.script`` or ``jit.trace``, or read by ``jit.load``.

It is an ``nn.Module`` (parameters, buffers, submodules, ``state_dict``, ``train``/``eval``)
whose methods are graphs that read the module through ``%self``, as PyTorch prints them::

    >>> cell = jit.script(MyCell())
    >>> print(cell.graph)
    graph(%self : __torch__.MyCell,
          %x : Tensor,
          %h : Tensor):
      %linear : __torch__.torchlike.nn.linear.Linear = prim::GetAttr[name="linear"](%self)
      %4 : Tensor = prim::CallMethod[name="forward"](%linear, %x) # cell.py:9:20
      ...
    >>> cell.linear                    # a ScriptModule too
    >>> cell(x, h)                     # specialized per signature, fused, cached

Parameters and buffers are the original module's arrays (shared, not copied): writing into
one, or assigning a new array to ``cell.linear.weight``, changes the next result.  A call is
specialized on its arguments and on the module's state -- every parameter's dtype, shape and
strides and every bool/int/float/str attribute's value (``_specialization_key``) -- so a
``prim::GetAttr`` of ``training`` folds to a constant and ``eval()`` re-specializes.

``.graph`` is ``forward``'s graph as compiled (``prim::CallMethod`` for submodule calls),
``.inlined_graph`` the same with every call inlined, ``.code`` the Python-like source,
``.graph_for(*args)`` the optimized graph a call runs (fusion groups across module
boundaries).  ``save(path)`` writes code, graphs, constants and parameters to one file
(``torchlike.jit.module_serialization``).
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Tuple

from ..errors import TorchlikeError
from ..ir.graph import Graph, clone_graph
from ..ir.types import ClassType, is_array
from ..nn.module import Module
from .arguments import check_arguments
from .code import graph_to_code
from .module_graphs import inline_methods
from .module_serialization import save_module
from .script_function import ScriptFunction

__all__ = ["ScriptModule", "qualified_class_name"]

_ATTRIBUTE_TYPES = (bool, int, float, str)


def _with_defaults(fn: ScriptFunction, args: Tuple, defaults: Optional[Dict[str, Any]]
                   ) -> Tuple:
    """``args`` and the defaults of the parameters after them (``forward(x, y=None)`` called
    as ``forward(x)``), when every missing one has a default."""
    missing = fn.input_names[1 + len(args):]
    if missing and defaults and all(n in defaults for n in missing):
        return tuple(args) + tuple(defaults[n] for n in missing)
    return tuple(args)


def qualified_class_name(cls: type) -> str:
    """PyTorch's name of a module class in graphs: ``__torch__.MyCell`` for a class of the
    main script, ``__torch__.<module>.<Class>`` otherwise."""
    mod = getattr(cls, "__module__", "__main__") or "__main__"
    name = cls.__qualname__.replace(".<locals>", "")
    return f"__torch__.{name}" if mod == "__main__" else f"__torch__.{mod}.{name}"


class ScriptModule(Module):
    """A compiled module: ``nn.Module`` state plus compiled methods (module docstring).

    Built by ``torchlike.jit.script(module)``, ``torchlike.jit.trace(module, inputs)`` and
    ``torchlike.jit.load(path)``; not constructed directly."""

    def __init__(self, qualified_name: str, kind: str, original_name: Optional[str] = None):
        super().__init__()
        d = self.__dict__
        d["_qualified_name"] = qualified_name
        d["_kind"] = kind                      # how it was made: "script" or "trace" (kept by save/load)
        d["_methods"]: Dict[str, ScriptFunction] = {}
        d["_constants"]: Dict[str, Any] = {}
        d["_method_defaults"]: Dict[str, Dict[str, Any]] = {}  # forward__0's hx=None, ...
        d["_skipped_overloads"]: Dict[str, str] = {}  # forward__N -> why it did not compile
        d["original_name"] = original_name or qualified_name.rsplit(".", 1)[-1]

    # -- compiled methods --------------------------------------------------------------------
    def _define_method(self, name: str, fn: ScriptFunction) -> None:
        self._methods[name] = fn

    def method_graph(self, name: str) -> Graph:
        """The graph of the compiled method ``name`` (``prim::CallMethod`` reads it)."""
        fn = self._methods.get(name)
        if fn is None:
            raise TorchlikeError(self._no_method(name))
        return fn.graph

    def _no_method(self, name: str) -> str:
        if self._kind == "trace" and name == "forward":
            return (f"{self.original_name} was never called while its parent was traced, so "
                    f"it has no traced forward: trace it on its own (jit.trace(module, inputs))")
        have = ", ".join(sorted(self._methods)) or "none"
        return f"{self.original_name} has no compiled method '{name}' (compiled: {have})"

    def forward(self, *args: Any) -> Any:
        fn = self._methods.get("forward")
        if fn is None:
            if self.forward_overloads():
                fn, args = self.pick_overload(args)
                return fn(self, *args)
            raise TorchlikeError(self._no_method("forward"))
        return fn(self, *_with_defaults(fn, args, self.__dict__.get("_forward_defaults")))

    def forward_overloads(self) -> List[str]:
        """``forward__0``, ``forward__1``, ...: the compiled overloads of a ``forward`` that
        PyTorch saved overloaded (``nn.LSTM``: a Tensor or a PackedSequence input)."""
        names = [n for n in self._methods if n.startswith("forward__")
                 and n[len("forward__"):].isdigit()]
        return sorted(names, key=lambda n: int(n[len("forward__"):]))

    def pick_overload(self, args: Tuple) -> Tuple[ScriptFunction, Tuple]:
        """The first overload whose parameters accept ``args`` (defaults filled in), and the
        arguments to call it with; a ``TypeError`` saying why each refused otherwise."""
        why = []
        for name in self.forward_overloads():
            fn = self._methods[name]
            full = _with_defaults(fn, args, self._method_defaults.get(name))
            try:
                check_arguments(fn.graph.inputs[1:], full, name, fn.input_names[1:])
                for p, a in zip(fn.graph.inputs[1:], full):
                    if isinstance(p.type, ClassType) and (is_array(a) or a is None):
                        raise TypeError(f"{name}() argument '{p.name}' expects a "
                                        f"{p.type.qualified_name}, got {type(a).__name__}")
            except TypeError as e:
                why.append(str(e))
                continue
            return fn, full
        why += [f"{n} was not compiled: {e.splitlines()[0]}"
                for n, e in self._skipped_overloads.items()]
        raise TypeError(f"{self.original_name}.forward: no overload accepts these arguments ("
                        + "; ".join(why) + ")")

    @property
    def graph(self) -> Graph:
        """``forward``'s graph as compiled: ``%self`` first, submodule calls as
        ``prim::CallMethod``."""
        return self.method_graph("forward")

    @property
    def inlined_graph(self) -> Graph:
        """``forward``'s graph with every ``prim::CallMethod`` inlined (a copy)."""
        return inline_methods(clone_graph(self.graph), self)

    @property
    def code(self) -> str:
        """``forward`` as Python-like source (``def forward(self, x: Tensor) -> Tensor:``)."""
        fn = self._methods.get("forward")
        if fn is None:
            raise TorchlikeError(self._no_method("forward"))
        return graph_to_code(fn.graph, "forward", ["self"] + fn.input_names[1:])

    def graph_for(self, *args: Any) -> Graph:
        """The optimized graph ``self(*args)`` runs: methods inlined, attributes resolved,
        fusion groups formed (``ScriptFunction.graph_for``)."""
        fn = self._methods.get("forward")
        if fn is None:
            raise TorchlikeError(self._no_method("forward"))
        return fn.graph_for(self, *args)

    # -- containers --------------------------------------------------------------------------
    def _container_kind(self) -> Optional[str]:
        """"list" for a compiled Sequential/ModuleList, "dict" for a ModuleDict (by class name,
        so modules loaded from archives behave the same), else None."""
        last = self._qualified_name.rsplit(".", 1)[-1]
        return "list" if last in ("Sequential", "ModuleList") else \
            "dict" if last == "ModuleDict" else None

    def __getitem__(self, index):
        """``seq[0]``, ``layers[-1]``, ``heads["q"]``: a child of a compiled container."""
        kind = self._container_kind()
        if kind is None:
            raise TypeError(f"'{self.original_name}' is not a container of modules")
        if kind == "dict" or isinstance(index, str):
            return self._modules[index]
        if isinstance(index, slice):
            raise TypeError("slicing a compiled container is not supported; index it")
        return list(self._modules.values())[index]

    def __len__(self) -> int:
        if self._container_kind() is None:
            raise TypeError(f"'{self.original_name}' is not a container of modules")
        return len(self._modules)

    def __bool__(self) -> bool:  # a module is true, a container when it holds something
        return self._container_kind() is None or bool(self._modules)

    def __iter__(self):
        kind = self._container_kind()
        if kind is None:
            raise TypeError(f"'{self.original_name}' is not a container of modules")
        return iter(self._modules) if kind == "dict" else iter(self._modules.values())

    # -- specialization key --------------------------------------------------------------------
    def _specialization_key(self) -> Tuple:
        """What a call's specialization depends on besides its arguments: the layout of every
        tensor attribute, the value of every scalar attribute, the compiled methods."""
        parts: List[Any] = [id(self._methods)]
        for d in (self._parameters, self._buffers):
            for k, v in d.items():
                parts.append((k, None) if v is None else
                             (k, type(v), v.dtype, v.shape, getattr(v, "strides", None)))
        for k, v in self.__dict__.items():
            if isinstance(v, _ATTRIBUTE_TYPES) or v is None:
                parts.append((k, v))
        for k, m in self._modules.items():
            key = m._specialization_key() if isinstance(m, ScriptModule) else id(m)
            parts.append((k, key))
        return tuple(parts)

    # -- persistence ---------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write this module -- its methods' graphs and code, constants, parameters, buffers,
        attributes and submodules -- to ``path``; ``torchlike.jit.load(path)`` reads it back in
        any process, without the Python source."""
        save_module(self, path)

    def _get_name(self) -> str:
        return "RecursiveScriptModule"

    def extra_repr(self) -> str:
        return f"original_name={self.original_name}"
