"""``torchlike.jit``: capture a Python function as a graph, optimize and fuse it, run it.

    import numpy as np, torchlike
    from torchlike import jit

    def f(x, y):
        return torchlike.tanh(x * y + 1.0)

    x = np.random.rand(2, 3).astype(np.float32)
    fn = jit.trace(f, (x, x))        # or jit.script(f): control flow kept as prim::If/prim::Loop
    fn(x, x)                         # specialized, fused and cached per input signature
    print(fn.graph)                  # graph(%x : Float(2, 3, ...), ...)
    print(fn.graph_for(x, x))        # ... %4 : Float(2, 3) = prim::FusionGroup_0(%x, %y) ...
    fn.save("f.tlk"); g = jit.load("f.tlk")

Working on graphs directly: ``run(graph, *inputs)`` interprets (fusion groups go through the
fuser's executor), ``fuse(graph)`` partitions, ``codegen(graph, *inputs, backend="cpu")`` shows
the generated kernels, ``stats()``/``reset_stats()`` report the kernel cache and fallbacks.

Switches: the programmatic twins of the ``TORCHLIKE_*`` environment variables are re-exported
from ``torchlike.fuser.config`` (``set_fusion_enabled``, ``fusion_enabled``, ``set_backend``,
``set_strict``, ...).
"""
from __future__ import annotations

import inspect
from typing import Any, Callable, Dict, List

from .. import backends  # noqa: F401  (installs the fuser's backend table)
from ..autodiff import AutodiffError, grad, vjp, vjp_graphs  # noqa: F401  (re-exported)
from ..errors import ScriptError
from ..frontend.script import script_graph
from ..frontend.tracer import trace_graph
from ..fuser import codegen as _codegen
from ..fuser import partition as _partition
from ..fuser import stats as _stats
from ..fuser.config import *  # noqa: F403  (the switches' programmatic twins)
from ..fuser.config import __all__ as _config_names
from ..fuser.config import dont_fuse
from ..fuser.executor import run_fusion_group
from ..interpreter import Interpreter
from ..ir.graph import Graph
from ..nn.module import Module
from .arguments import check_arguments, with_plan
from .code import graph_to_code
from .module_scripting import script_module
from .module_serialization import is_module_file, load_any, load_module
from .module_tracing import trace_module
from .script_function import ScriptFunction
from .script_module import ScriptModule
from .serialization import SerializationError, load_function
from .torchscript_archive import is_torchscript_archive, load_torchscript

__all__ = ["ScriptFunction", "ScriptModule", "ScriptError", "SerializationError", "trace", "script", "load",
           "run", "fuse", "codegen", "stats", "reset_stats", "graph_to_code",
           "vjp", "grad", "vjp_graphs", "AutodiffError"] + list(_config_names)


def _param_names(fn: Callable, count: int) -> List[str]:
    try:
        params = [p.name for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    return params[:count] if len(params) >= count else None


def trace(fn: Callable, example_inputs):
    """Run ``fn`` once on ``example_inputs`` (a tuple of arrays and Python scalars, or one
    array), recording every op into a graph, and return it as a ``ScriptFunction``.  Python
    control flow is evaluated during tracing: the graph holds the branch the example took.
    An ``nn.Module`` gives a ``ScriptModule`` (``jit/module_tracing.py``): its arrays read
    through ``prim::GetAttr``, its submodules called through ``prim::CallMethod``.

        >>> fn = jit.trace(lambda x: x * 2.0, np.ones(3, np.float32))
        >>> print(fn.graph)
        graph(%x : Float(3, strides=[1], requires_grad=0, device=cpu)):
          %1 : float = prim::Constant[value=2.]()
          %2 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::mul(%x, %1)
          return (%2)
    """
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    if isinstance(fn, Module):
        return trace_module(fn, tuple(example_inputs))
    graph = trace_graph(fn, tuple(example_inputs))
    name = getattr(fn, "__name__", "forward")
    return ScriptFunction(graph, name="forward" if name == "<lambda>" else name,
                          input_names=_param_names(fn, len(graph.inputs)), kind="trace", fn=fn)


def script(fn: Callable):
    """Compile ``fn``'s Python source (the scriptable subset: arithmetic, calls of torchlike
    ops, ``if``/``for``/``while``) into a graph that keeps its control flow; raises
    ``ScriptError`` quoting the offending line otherwise.  An ``nn.Module`` gives a
    ``ScriptModule`` (``jit/module_scripting.py``): ``forward`` compiled with ``self`` read
    through ``prim::GetAttr`` and submodules called through ``prim::CallMethod``.  Usable as a
    decorator::

        @jit.script
        def f(x, n: int):
            for _ in range(n):
                x = torchlike.sigmoid(x * 1.1)
            return x
    """
    if isinstance(fn, (Module, ScriptFunction)):
        return script_module(fn) if isinstance(fn, Module) else fn
    if not callable(fn) or (hasattr(fn, "forward") and not inspect.isfunction(fn)
                            and not inspect.ismethod(fn)):
        raise ScriptError(f"jit.script of a {type(fn).__name__} object: pass a function, or "
                          f"make it a torchlike.nn.Module subclass")
    graph = script_graph(fn)
    return ScriptFunction(graph, name=getattr(fn, "__name__", "forward"),
                          input_names=_param_names(fn, len(graph.inputs)), kind="script", fn=fn)


def load(path):
    """Read a function written by ``ScriptFunction.save`` (format: ``torchlike.jit.serialization``)
    or a module written by ``ScriptModule.save`` (``torchlike.jit.module_serialization``), in
    any process: nothing from the file is executed.  Raises ``SerializationError`` for a file
    of another format, a damaged one, or one from a newer version.

    A TorchScript archive written by PyTorch's ``torch.jit.save`` loads too, without PyTorch
    (``torchlike.jit.torchscript_archive``): a module as a ``ScriptModule``, a function as a
    ``ScriptFunction``; its pickles are read with an allowlist of globals and its code is
    compiled by torchlike's scripter."""
    if is_torchscript_archive(path):
        return load_torchscript(path)
    meta = load_any(path)
    if hasattr(path, "seek"):
        path.seek(0)
    if is_module_file(meta):
        return load_module(path, ScriptModule)
    loaded: Dict[str, Any] = load_function(path)
    return ScriptFunction(loaded["graph"], name=loaded["name"],
                          input_names=loaded["input_names"], kind=loaded["kind"])


def run(graph: Graph, *inputs: Any) -> Any:
    """Interpret ``graph`` on ``inputs`` as is (no passes); its ``prim::FusionGroup`` nodes run
    through the fuser's executor (compiled kernels).  Inputs are checked against the graph's
    parameter types (``torchlike.jit.arguments``).  One output is returned as is, several as a
    tuple."""
    plan = check_arguments(graph.inputs, inputs, "run")
    return with_plan(plan, Interpreter(graph, fusion_runner=run_fusion_group).run)(*inputs)


def fuse(graph: Graph, **options) -> Graph:
    """A copy of ``graph`` with its fusible elementwise regions grouped into
    ``prim::FusionGroup`` nodes (``torchlike.fuser.partition.fuse``; options pass through;
    ``dont_fuse`` defaults to the ``TORCHLIKE_DONT_FUSE`` setting)."""
    options.setdefault("dont_fuse", dont_fuse())
    return _partition.fuse(graph, **options)


def codegen(graph: Graph, *inputs: Any, backend: str = "cpu"):
    """The kernels generated for ``graph``'s fusion groups when run on ``inputs``, for
    ``backend`` (``"cpu"``: Numba source, ``"cuda"``: CUDA C); see
    ``torchlike.fuser.codegen.codegen``."""
    return _codegen.codegen(graph, *inputs, backend=backend)


def stats() -> Dict[str, Any]:
    """Counters of the fuser: kernel cache hits and misses, compiles, fallbacks by reason."""
    return _stats.stats()


def reset_stats() -> None:
    """Zero the counters that ``stats()`` reports."""
    _stats.reset_stats()
