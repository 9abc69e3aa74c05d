"""``ScriptFunction``: what ``trace`` and ``script`` return, a graph you can call.

    >>> fn = torchlike.jit.trace(lambda x, y: x * y + 1.0, (a, b))
    >>> fn(a, b)                       # specialized for (a, b)'s types, fused, cached
    >>> print(fn.graph)                # the graph as captured
    >>> print(fn.code)                 # the same, as Python-like source
    >>> print(fn.graph_for(a, b))      # the optimized graph that fn(a, b) runs

A call is specialized on its arguments' signature: dtype, shape, strides and array type (numpy or
cupy, with the device) of each array, the type of each scalar.  The first call with a new
signature copies the graph, inlines calls of graph functions (``torch.nn.functional``'s), infers
its types from the arguments, propagates constants, merges
common subexpressions, removes dead code and, when fusion is enabled, forms fusion groups; the
result and an interpreter for it are cached, so a warm call is one signature and one dict lookup.
"""
from __future__ import annotations

import functools
import inspect
import logging
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Tuple

import numpy as np

from ..errors import TorchlikeError
from ..frontend.calls import Proxy, find_recorder
from ..frontend.script_values import Callee
from ..fuser import config
from ..fuser.executor import run_fusion_group
from ..fuser.partition import fuse
from ..interpreter import Interpreter
from ..ir.graph import Graph, clone_graph
from ..ir.types import ClassType, type_of_python_value
from ..passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    infer_types,
    inline_functions,
    propagate_constants,
    simplify_tuples,
)
from ..passes.shape_queries import fold_input_shape_queries
from .arguments import check_arguments, with_plan
from .code import graph_to_code
from .module_graphs import bind_attributes, freeze, inline_methods
from .serialization import save_function

_SCALAR_TYPES = (int, float, bool, type(None), str)
# (is_collection(arg), run(script_function, *args)): lazy array collections a call hands on
# instead of specializing (torchlike.dask registers Dask arrays; a layer above this one).
COLLECTION_RUNNERS: List[Tuple[Callable[[Any], bool], Callable[..., Any]]] = []
logger = logging.getLogger("torchlike")

# The passes a call's first run applies, in order (graph -> None, rewriting it in place).
_PASSES: Tuple[Tuple[str, Callable[[Graph], None]], ...] = (
    ("simplify_tuples", simplify_tuples),
    ("propagate_constants", propagate_constants),
    ("eliminate_common_subexpressions", eliminate_common_subexpressions),
    ("eliminate_dead_code", eliminate_dead_code),
)


@dataclass(frozen=True)
class Specialization:
    """One signature's optimized graph and the callable that runs it (with the argument
    plan applied: numpy scalars become 0-d arrays)."""

    graph: Graph
    run: Callable[..., Any]


def _arg_key(a: Any) -> Any:
    """The part of a call's signature one argument contributes (cheap: warm calls pay it)."""
    t = type(a)
    if t is np.ndarray:
        return (a.dtype, a.shape, a.strides)
    if t in _SCALAR_TYPES:
        return t
    if isinstance(a, Proxy):  # a traced value: __call__ records the call instead
        return t
    if hasattr(a, "__cuda_array_interface__"):  # cupy: the device matters too
        return (t, a.dtype, a.shape, a.strides, getattr(getattr(a, "device", None), "id", None))
    if hasattr(a, "dtype") and hasattr(a, "shape"):  # ndarray subclasses, 0-d numpy scalars
        return (t, a.dtype, a.shape, getattr(a, "strides", None))
    if t is tuple or t is list:
        return (t, tuple(_arg_key(x) for x in a))
    module_key = getattr(a, "_specialization_key", None)  # a ScriptModule as %self
    if module_key is not None:
        return (t, module_key())
    return t


def signature_of(args: Tuple[Any, ...]) -> Tuple[Any, ...]:
    """The cache key of a call: one entry per argument (see ``_arg_key``)."""
    return tuple(map(_arg_key, args))


def _default_input_names(graph: Graph) -> List[str]:
    names = []
    for v in graph.inputs:
        base = v.name.split(".")[0] if not v.name[0].isdigit() else f"arg{len(names)}"
        names.append(base)
    return names


class ScriptFunction:
    """A captured function: its graph plus per-signature optimized versions of it.

    Build one with ``torchlike.jit.trace``, ``torchlike.jit.script`` or ``torchlike.jit.load``,
    or directly from a graph::

        g = torchlike.ir.parse_graph('''
        graph(%x : Tensor):
          %1 : float = prim::Constant[value=2.]()
          %2 : Tensor = aten::mul(%x, %1)
          return (%2)''')
        double = ScriptFunction(g, name="double")
        double(np.ones(3, np.float32))        # array([2., 2., 2.], dtype=float32)

    ``kind`` records how the graph was made: ``"trace"``, ``"script"`` or ``"graph"``.
    ``fusion``: True or False fuses or not whatever the setting; None (the default) follows
    ``TORCHLIKE_FUSION`` (``jit.set_fusion_enabled``).  Called with Dask arrays, it runs
    through ``torchlike.dask.run`` (one fused task per chunk; a lazy result).
    """

    def __init__(self, graph: Graph, name: str = "forward",
                 input_names: Optional[List[str]] = None, kind: str = "graph",
                 fn: Optional[Callable] = None, fusion: Optional[bool] = None):
        self._graph = graph
        self.fusion = fusion
        self.name = name
        self.input_names = list(input_names) if input_names else _default_input_names(graph)
        self.kind = kind
        self.fn = fn
        # signature -> Specialization, valid for one generation of the fuser's settings
        # (fusion on/off, dont_fuse, ...): any setter empties it.
        self._cache: Dict[Tuple, Specialization] = {}
        self._generation = config.generation
        if fn is not None:
            functools.update_wrapper(self, fn, assigned=("__module__", "__name__", "__qualname__",
                                                         "__doc__"), updated=())

    # -- the captured program ---------------------------------------------------------------
    @property
    def graph(self) -> Graph:
        """The graph as captured (not specialized; see ``graph_for``)."""
        return self._graph

    @property
    def code(self) -> str:
        """The graph as Python-like source, like PyTorch's ``.code``::

            def forward(x: Tensor) -> Tensor:
              _0 = torch.mul(x, 2.)
              return _0
        """
        return graph_to_code(self._graph, self.name, self.input_names)

    # -- specialization ---------------------------------------------------------------------
    def graph_for(self, *args: Any) -> Graph:
        """The optimized graph that ``self(*args)`` runs: typed for these arguments, with
        constants folded, duplicates merged, dead code removed and (if fusion is enabled)
        ``prim::FusionGroup`` nodes.  The same object is returned for the same signature."""
        return self._specialization_for(args).graph

    def _specialization_for(self, args: Tuple[Any, ...]) -> Specialization:
        if config.generation != self._generation:
            self.clear_cache()
        key = signature_of(args)
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._specialize(args)
        return entry

    def _specialize(self, args: Tuple[Any, ...]) -> Specialization:
        plan = check_arguments(self._graph.inputs, args, self.name, self.input_names)
        g = clone_graph(self._graph)
        if _is_module_self(g, args):  # a module's method: calls inlined, attributes resolved
            inline_methods(g, args[0])
            _log_graph("inline_methods", g)
            bind_attributes(g, args[0])
            _log_graph("bind_attributes", g)
        g = inline_functions(g)  # F.relu & co.: their ops, typed below
        _log_graph("inline_functions", g)
        infer_types(g, [type_of_python_value(a) for a in plan.apply(args)])
        _log_graph("infer_types", g)
        if fold_input_shape_queries(g):  # input.dim() == 3: this call's, a constant
            infer_types(g, [type_of_python_value(a) for a in plan.apply(args)])
            _log_graph("fold_input_shape_queries", g)
        for name, run_pass in _PASSES:
            run_pass(g)
            _log_graph(name, g)
        if config.fusion_enabled() if self.fusion is None else self.fusion:
            g = fuse(g, dont_fuse=config.dont_fuse())
            _log_graph("fuse", g)
        return Specialization(g, with_plan(plan, Interpreter(g, run_fusion_group).run))

    def graph_cached(self, args: Tuple[Any, ...]) -> bool:
        """Whether a call on ``args`` finds its specialization made (a warm call)."""
        return config.generation == self._generation and signature_of(args) in self._cache

    def clear_cache(self) -> None:
        """Forget every specialization (the next call of each signature re-optimizes)."""
        self._cache.clear()
        self._generation = config.generation

    def __call__(self, *args: Any) -> Any:
        # The warm path: one settings check, one signature, one lookup, then the interpreter.
        entry = self._cache.get(tuple(map(_arg_key, args)))
        if entry is None or config.generation != self._generation:
            recorder = find_recorder(args)
            if recorder is not None:  # called while tracing: record our graph there
                return self._record_call(recorder, args)
            for handles, run in COLLECTION_RUNNERS:  # Dask arrays: torchlike.dask.run
                if any(map(handles, args)):
                    return run(self, *args)
            entry = self._specialization_for(args)
        return entry.run(*args)

    def _record_call(self, recorder, args: Tuple[Any, ...]) -> Any:
        """Called on traced values: the result on the examples, and this graph copied into
        the trace (control flow kept); a module method is frozen first (its attributes are
        constants of the trace, as PyTorch bakes a module used from a traced function)."""
        concrete = tuple(a.concrete if isinstance(a, Proxy) else a for a in args)
        result = self(*concrete)
        graph = self._graph
        if _is_module_self(graph, concrete):
            graph = freeze(clone_graph(graph), concrete[0])
            return recorder.record_graph_call(_drop_self(graph), args[1:],
                                              result)
        return recorder.record_graph_call(graph, args, result)

    def scripted_callee(self):
        """``(graph, Callee)``: how scripted code calls this function (its graph is copied in
        at the call; ``frontend.script_modules``)."""
        fn = self.fn
        defaults = {}
        if fn is not None:
            try:
                sig = inspect.signature(fn)
                defaults = {p.name: p.default for p in sig.parameters.values()
                            if p.default is not inspect.Parameter.empty}
            except (TypeError, ValueError):
                pass
        return self._graph, Callee(tuple(self.input_names), defaults,
                                   tuple(v.type for v in self._graph.outputs))

    # -- persistence --------------------------------------------------------------------------
    def save(self, path) -> None:
        """Write this function to ``path`` (see ``torchlike.jit.serialization`` for the
        format); ``torchlike.jit.load(path)`` gives it back."""
        save_function(path, self._graph, self.name, self.input_names, self.kind)

    def __repr__(self) -> str:
        return (f"<ScriptFunction {self.name}({', '.join(self.input_names)}) [{self.kind}], "
                f"{len(self._cache)} specializations>")


def _is_module_self(graph: Graph, args: Tuple[Any, ...]) -> bool:
    """Whether ``graph`` is a module's method called on a compiled module object."""
    return bool(graph.inputs) and isinstance(graph.inputs[0].type, ClassType) and bool(args) \
        and hasattr(type(args[0]), "method_graph")


def _drop_self(graph: Graph) -> Graph:
    """A frozen method's graph without its (now unused) ``%self`` input."""
    me = graph.inputs[0]
    if me.uses:
        raise TorchlikeError(f"%{me.name} is still used after freezing the module's attributes")
    graph.block.params.remove(me)
    return graph


def _log_graph(pass_name: str, graph: Graph) -> None:
    """``TORCHLIKE_DEBUG=2``: the graph after each pass of a specialization."""
    if config.debug_level() >= 2:
        logger.debug("graph after %s:\n%s", pass_name, graph)
