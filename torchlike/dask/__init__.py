"""``torchlike.dask``: a fused graph over Dask arrays, one task per chunk.

    import numpy as np, dask.array as da, torchlike as tl
    from torchlike import jit
    import torchlike.dask as tld

    def cell(x, w):
        return tl.softmax(tl.tanh(x) * w, -1)

    fn = jit.script(cell)
    x = da.random.random((2**20, 64), chunks=(2**16, 64)).astype("float32")
    w = np.ones(64, np.float32)
    y = tld.run(fn, x, w)          # lazy: y.shape, y.dtype, y.chunks known, nothing computed
    y.compute()                    # 16 tasks, each the fused graph on one chunk of rows
    fn(x, w)                       # the same: a ScriptFunction called with Dask arrays

``run(fn, *args)`` takes a ``ScriptFunction``, a ``Graph`` or a graph's text (as PyTorch prints
it) and arguments that are Dask arrays, numpy (or CuPy) arrays and Python scalars.  Which
dims may be cut, and which a row reduction, a norm or a size query needs whole, comes from the
graph (``axes.plan_chunks``); chunks are aligned under broadcasting and rechunked only where
needed (``arrays``); every task runs the whole graph, fused, on its chunk (``tasks``).  The
result's shapes, dtypes and chunks are known without computing it; several outputs come back
as a tuple.  Tasks carry the graph as text (no pickled functions), so any scheduler runs them:
the threaded one, processes, or ``dask.distributed`` on a cluster (workers import torchlike;
each compiles a kernel once per chunk signature or reads it from the on-disk cache).  An error
in a chunk (integer division by zero, a bad dtype) is raised by that task, naming the node.
CuPy-backed Dask arrays run the CUDA kernels, chunk by chunk.
"""
from __future__ import annotations

import warnings
from typing import Any, Sequence

import numpy as np

from ..ir.graph import Graph
from ..ir.parser import parse_graph
from ..ir.types import TensorType, type_of_python_value
from ..jit.arguments import check_arguments
from ..jit.script_function import COLLECTION_RUNNERS, ScriptFunction
from ..passes.shape_inference import contiguous_strides
from .arrays import build, is_dask_array
from .axes import (
    AxisClass,
    ChunkPlan,
    DaskPlanError,
    DaskPlanWarning,
    OutputPlan,
    plan_chunks,
)
from .tasks import graph_id

__all__ = ["run", "plan", "plan_chunks", "ChunkPlan", "AxisClass", "OutputPlan",
           "DaskPlanError", "DaskPlanWarning"]


def _graph(fn: Any) -> Graph:
    if isinstance(fn, ScriptFunction):
        return fn.graph
    if isinstance(fn, Graph):
        return fn
    if isinstance(fn, str):
        return parse_graph(fn)
    raise TypeError(f"torchlike.dask.run takes a ScriptFunction, a Graph or a graph's text, "
                    f"not a {type(fn).__name__} (jit.script or jit.trace a function first)")


def _input_type(a: Any):
    if hasattr(a, "dtype") and hasattr(a, "shape") and not isinstance(a, (int, float, bool)):
        shape = tuple(int(d) for d in a.shape)
        if any(d != d for d in a.shape):  # a Dask array of unknown chunk sizes: NaN dims
            raise ValueError("torchlike.dask.run: an input has unknown chunk sizes "
                             "(compute_chunk_sizes() first)")
        meta = getattr(a, "_meta", a)
        device = "cpu" if type(meta).__module__.startswith("numpy") else "cuda:0"
        return TensorType(str(a.dtype), shape, contiguous_strides(shape), device, False)
    return type_of_python_value(a)


def _arguments(fn: Any, graph: Graph, args: Sequence[Any]) -> list:
    """``args`` checked against the graph's inputs as a call would check them (a Dask array
    stands for an array of its dtype and shape), numpy scalars as 0-d arrays."""
    stand_ins = [np.broadcast_to(np.zeros((), a.dtype), a.shape) if is_dask_array(a) else a
                 for a in args]
    names = fn.input_names if isinstance(fn, ScriptFunction) else None
    return check_arguments(graph.inputs, stand_ins, "torchlike.dask.run", names).apply(args)


def plan(fn: Any, *args: Any) -> ChunkPlan:
    """The ``ChunkPlan`` ``run(fn, *args)`` would follow (which dims are cut, which whole and
    why, the outputs' shapes and dtypes), without building anything."""
    graph = _graph(fn)
    args = _arguments(fn, graph, args)
    return plan_chunks(graph, [_input_type(a) for a in args])


def run(fn: Any, *args: Any):
    """``fn`` (a ``ScriptFunction``, ``Graph`` or graph text) on ``args`` as a lazy Dask array,
    or a tuple of them for several outputs: one task per chunk, each running the fused graph.

        >>> def f(x):
        ...     return tl.tanh(x) * 2.0
        >>> y = torchlike.dask.run(jit.script(f), x)   # x: a float32 Dask array
        >>> y.chunks == x.chunks, y.dtype
        (True, dtype('float32'))
    """
    graph = _graph(fn)
    args = _arguments(fn, graph, args)
    chunk_plan = plan_chunks(graph, [_input_type(a) for a in args])
    cut = [a for a in args if is_dask_array(a) and any(len(c) > 1 for c in a.chunks)]
    if chunk_plan.notes and cut and not chunk_plan.chunked():
        warnings.warn("torchlike.dask.run: every dim runs as one chunk: "
                      + "; ".join(chunk_plan.notes), DaskPlanWarning, stacklevel=2)
    text = str(graph)
    from dask.base import tokenize

    name = "torchlike-" + graph_id(text) + "-" + tokenize(
        text, *[a.name if is_dask_array(a) else a for a in args])
    outs = build(text, chunk_plan, args, name)
    return outs[0] if len(outs) == 1 and not chunk_plan.packed else outs


COLLECTION_RUNNERS.append((is_dask_array, run))
