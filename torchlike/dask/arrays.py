"""The Dask side of ``torchlike.dask.run``: chunks aligned to a ``ChunkPlan`` and the task graph
of one ``tasks.run_block`` task per chunk.

Chunks: every class of dims the plan lets inputs cut takes the common refinement of the Dask
inputs' chunks along its dims (``dask.array.core.common_blockdim``; a class only numpy inputs
hold takes Dask's ``"auto"`` chunks); a whole class is one chunk.  Inputs are rechunked only
where they differ from that (a row reduction: along the row only).  numpy arguments become
Dask arrays of those chunks, Python scalars stay literals of every task.

Tasks: the grid is the product of the cut classes' chunks.  Each grid point is one task
``(run_block, text_key, *blocks)``; an input's block is its chunk at the grid point (chunk 0
along a dim of size 1); the graph's text is one key of the Dask graph.  A graph with one
output that spans every cut class names its tasks as that output's blocks; otherwise each
output block is the task's array, or picks its item from the tuple the task returns, at the
grid point at chunk 0 of the classes the output does not span.
"""
from __future__ import annotations

import itertools
import operator
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from .axes import ChunkPlan
from .tasks import run_block, run_block_on_copies

__all__ = ["is_dask_array", "build"]


def is_dask_array(x: Any) -> bool:
    return type(x).__module__.startswith("dask.array") and hasattr(x, "__dask_graph__")


def _class_chunks(plan: ChunkPlan, args: Sequence[Any]) -> Dict[int, Tuple[int, ...]]:
    """Per class of the plan, the chunk sizes along it."""
    from dask.array.core import common_blockdim, normalize_chunks

    cut = set(plan.chunked())
    held: Dict[int, List[Tuple[int, ...]]] = {}
    auto: Dict[int, Tuple[int, ...]] = {}
    for a, dims in zip(args, plan.inputs):
        if dims is None:
            continue
        if is_dask_array(a):
            for c, ch in zip(dims, a.chunks):
                if c in cut:
                    held.setdefault(c, []).append(tuple(ch))
        else:
            for c, ch in zip(dims, normalize_chunks("auto", a.shape, dtype=a.dtype)):
                if c in cut:
                    auto.setdefault(c, ch)
    out = {}
    for i, cls in enumerate(plan.classes):
        if i in held:
            out[i] = tuple(common_blockdim(set(held[i])))
        elif i in auto:
            out[i] = auto[i]
        else:
            out[i] = (cls.size,)
    return out


def _aligned(a: Any, dims: Tuple[Optional[int], ...], chunks: Dict[int, Tuple[int, ...]]):
    import dask.array as da

    want = tuple((1,) if c is None else chunks[c] for c in dims)
    if is_dask_array(a):
        return a if tuple(a.chunks) == want else a.rechunk(want)
    return da.from_array(a, chunks=want)


def _meta(arrays: Sequence[Any], ndim: int, dtype: str):
    from dask.array.utils import meta_from_array

    for a in arrays:
        if is_dask_array(a):
            return meta_from_array(a._meta, ndim=ndim, dtype=np.dtype(dtype))
    return np.empty((0,) * ndim, dtype=dtype)


def build(text: str, plan: ChunkPlan, args: Sequence[Any], name: str):
    """The Dask arrays (one per graph output) of ``text`` run on ``args`` by ``plan``."""
    import dask.array as da
    from dask.highlevelgraph import HighLevelGraph

    chunks = _class_chunks(plan, args)
    inputs = [(_aligned(a, dims, chunks), dims) if dims is not None else (a, None)
              for a, dims in zip(args, plan.inputs)]
    deps = [a for a, dims in inputs if dims is not None]
    grid = plan.chunked()
    text_key = f"{name}-graph"
    main = f"{name}-chunk"
    outs = plan.outputs
    direct = len(outs) == 1 and not plan.packed and set(grid) <= set(outs[0].dims)
    if direct:
        main = name
    dsk: Dict[Any, Any] = {text_key: text}
    for point in itertools.product(*(range(len(chunks[c])) for c in grid)):
        at = dict(zip(grid, point))
        task_args = [(a.name,) + tuple(at.get(c, 0) for c in dims) if dims is not None else a
                     for a, dims in inputs]
        key = (main,) + (tuple(at.get(c, 0) for c in outs[0].dims) if direct else point)
        dsk[key] = (run_block_on_copies if plan.writes else run_block, text_key) + \
            tuple(task_args)
    graph = HighLevelGraph.from_collections(main, dsk, dependencies=deps)
    if direct:
        out = outs[0]
        return (da.Array(graph, name, _out_chunks(out, chunks),
                         meta=_meta(args, len(out.shape), out.dtype)),)
    arrays = []
    for i, out in enumerate(outs):
        out_chunks = _out_chunks(out, chunks)
        out_name = f"{name}-out{i}"
        picks = {}
        for block in itertools.product(*(range(len(ch)) for ch in out_chunks)):
            at = {c: b for c, b in zip(out.dims, block) if c is not None}
            source = (main,) + tuple(at.get(c, 0) for c in grid)
            # a task returns a tuple for several (or packed) outputs, else the array: an alias
            picks[(out_name,) + block] = (operator.getitem, source, i) \
                if len(outs) > 1 or plan.packed else source
        layers = dict(graph.layers)
        layers[out_name] = picks
        dependencies = dict(graph.dependencies)
        dependencies[out_name] = {main}
        arrays.append(da.Array(HighLevelGraph(layers, dependencies), out_name, out_chunks,
                               meta=_meta(args, len(out.shape), out.dtype)))
    return tuple(arrays)


def _out_chunks(out, chunks: Dict[int, Tuple[int, ...]]) -> Tuple[Tuple[int, ...], ...]:
    return tuple((1,) if c is None else chunks[c] for c in out.dims)
