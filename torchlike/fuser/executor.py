"""Run ``prim::FusionGroup`` nodes: dispatch on the exact input signature to a compiled kernel,
compiling (through the kernel cache) on a miss, and interpreting the subgraph when that fails.

    from torchlike.interpreter import Interpreter
    from torchlike.fuser.executor import run_fusion_group
    Interpreter(fused_graph, fusion_runner=run_fusion_group).run(x, y)

A warm call is one dictionary lookup on (group, signature) -- the signature is each input's
(dtype, shape, strides, writeable) or a scalar's Python type, scalar values being kernel
arguments -- and the launcher call, which allocates fresh outputs and calls the kernel.

On a miss: the backend named by ``config.get_backend()`` (``auto``: cuda for cupy inputs, cpu
for numpy) analyses the group, computes its kernel key and gets the kernel from ``cache.KERNELS``
(compiling on a miss).  Any failure -- backend missing, an op or dtype without a template, a
compile error -- makes the group run in the interpreter for that signature: the reason is
counted in ``stats()["fallbacks"]`` and logged once, or, in strict mode, ``FusionError`` is
raised.  Backend ``interpreter`` always interprets and counts nothing.  Integer division by
zero inside a kernel is re-run in the interpreter, which raises ``IntegerDivisionByZeroError``
naming the op, exactly as without fusion.

``config.debug_level()`` >= 1 logs one line per decision: the kernel a group runs, or the
fallback taken and its reason; >= 2 also the source of every kernel generated.
"""
from __future__ import annotations

import logging
import weakref
from typing import Any, Callable, Dict, List, Sequence

import numpy as np

from ..errors import FusionError, IntegerDivisionByZeroError
from ..interpreter import Interpreter
from ..ir.graph import Graph, Node
from . import config
from .backend import (
    InterpretInstead,
    Unsupported,
    analyze,
    get_backend_impl,
    signature_of,
    structure_key,
)
from .cache import KERNELS
from .partition import fuse
from .row_reduce import is_reduction_group
from .stats import bump, record_fallback, stats

__all__ = ["run_fusion_group", "clear_caches"]

logger = logging.getLogger("torchlike")
_ndarray = np.ndarray
_MAX_SIGNATURES = 256  # per group; beyond, the dispatch table starts over


class _GroupState:
    __slots__ = ("generation", "dispatch", "structure", "reductions", "split", "__weakref__")

    def __init__(self, sub: Graph):
        self.generation = config.generation
        self.dispatch: Dict[tuple, Callable] = {}
        self.structure = structure_key(sub)
        self.reductions = is_reduction_group(sub)
        self.split = None  # the subgraph fused again without its reductions


_GROUPS: "weakref.WeakKeyDictionary[Graph, _GroupState]" = weakref.WeakKeyDictionary()


def _signature(args: Sequence[Any]) -> tuple:
    sig = []
    for a in args:
        if type(a) is _ndarray:
            sig.append((a.dtype, a.shape, a.strides, a.flags.writeable))
        elif hasattr(a, "shape"):
            sig.append((type(a), str(a.dtype), a.shape, getattr(a, "strides", None)))
        else:
            sig.append(type(a))
    return tuple(sig)


def run_fusion_group(node: Node, xp, args: Sequence[Any]) -> List[Any]:
    """The interpreter's ``fusion_runner``: the group's outputs for ``args``."""
    sub = node.attrs["Subgraph"]
    state = _GROUPS.get(sub)
    if state is not None and state.generation == config.generation:
        launcher = state.dispatch.get(_signature(args))
        if launcher is not None:
            return launcher(args)
    return _miss(node, sub, xp, args)


def clear_caches() -> None:
    """Forget every dispatch decision and in-memory kernel (the disk cache stays)."""
    _GROUPS.clear()
    KERNELS.clear()


def _miss(node: Node, sub: Graph, xp, args: Sequence[Any]) -> List[Any]:
    state = _GROUPS.get(sub)
    if state is None or state.generation != config.generation:
        state = _GROUPS[sub] = _GroupState(sub)
    launcher = _decide(node, sub, state, xp, args)
    if len(state.dispatch) >= _MAX_SIGNATURES:
        state.dispatch.clear()
    state.dispatch[_signature(args)] = launcher
    return launcher(args)


def _interpreter_launcher(sub: Graph) -> Callable:
    interp = Interpreter(sub)
    return lambda args: interp.run_outputs(list(args))


def _decide(node: Node, sub: Graph, state: _GroupState, xp, args) -> Callable:
    name = config.get_backend()
    if name == "auto":
        name = "cpu" if xp is np else "cuda"
    if name == "interpreter":
        return _interpreter_launcher(sub)
    backend = get_backend_impl(name)
    try:
        if backend is None:
            raise Unsupported(f"backend unavailable: {name}")
        ok, why = backend.available()
        if not ok:
            raise Unsupported(f"backend unavailable: {name}: {why}")
        spec = analyze(sub, signature_of(args), state.structure)
        reason = backend.check(spec)
        if reason is not None:
            raise Unsupported(reason)
        kernel = KERNELS.get_or_build(backend.kernel_key(spec), lambda: _build(backend, spec))
        if config.debug_level() >= 1:
            logger.info("%s: running kernel %s for %s", node.describe(), kernel.source.name,
                        _describe(spec.signature))
        return kernel.bind(spec, _division_error(node, sub))
    except InterpretInstead:
        if config.debug_level() >= 1:
            logger.info("%s: interpreted for %s (the interpreter raises the error these inputs "
                        "cause)", node.describe(), _describe(signature_of(args)))
        return _interpreter_launcher(sub)  # the interpreter raises the user's error
    except Unsupported as e:
        if state.reductions:
            return _split_launcher(node, sub, state, args, e.reason)
        if config.strict():
            raise FusionError(f"{node.describe()}: cannot compile the fusion group "
                              f"(strict mode): {e.reason}") from None
        _fallback(node, args, e.reason)
        return _interpreter_launcher(sub)


def _split_launcher(node: Node, sub: Graph, state: _GroupState, args, reason: str) -> Callable:
    """A group with reductions that has no kernel for these inputs (another layout or shape
    than the row case, a backend without reductions) runs as it would have without reduction
    fusion: its subgraph fused again with every reduction left out, the reductions
    interpreted and each elementwise part a group of its own (compiled, or falling back and
    counted as any group).  Not a fallback: the same groups as before reductions fused."""
    if state.split is None:
        state.split = fuse(sub, reductions=False)
    bump("groups_split")
    if config.debug_level() >= 1:
        logger.info("%s: reductions interpreted for %s (%s); its elementwise parts run as "
                    "groups of their own", node.describe(), _describe(signature_of(args)),
                    reason)
    interp = Interpreter(state.split, fusion_runner=run_fusion_group)
    return lambda args: interp.run_outputs(list(args))


def _fallback(node: Node, args, reason: str) -> None:
    """Count the fallback; at debug level >= 1 log it (one line each: ``record_fallback``
    already logs the first one of each reason)."""
    if config.debug_level() >= 1 and reason in stats()["fallbacks"]:
        logger.info("fusion group %s falls back to the interpreter for %s: %s",
                    node.describe(), _describe(signature_of(args)), reason)
    record_fallback(reason, node.describe())


def _build(backend, spec):
    source = backend.generate(spec)
    if config.debug_level() >= 2:
        logger.debug("generated %s kernel %s:\n%s", backend.name, source.name, source.source)
    return backend.compile(source)


def _division_error(node: Node, sub: Graph) -> Callable:
    def raise_it(args):
        # The interpreter names the op that divided by zero, exactly as without fusion.
        Interpreter(sub).run_outputs(list(args))
        raise IntegerDivisionByZeroError(f"{node.describe()}: integer division by zero", node)
    return raise_it


def _describe(signature) -> str:
    parts = []
    for s in signature:
        parts.append(s.__name__ if isinstance(s, type) else
                     f"{s.dtype}{list(s.shape)}{'' if s.layout == 'C' else s.layout}")
    return "(" + ", ".join(parts) + ")"
