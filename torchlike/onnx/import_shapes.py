"""Shape arithmetic in imported models: ``Shape`` of a tensor with symbolic dims, and the
``Gather``/``Slice``/``Squeeze``/``Unsqueeze``/``Concat``/``Cast`` chains exporters build from
it to feed ``Reshape`` and ``Expand`` (``view(x.size(0), -1)`` with a dynamic batch).

Such a value is followed symbolically, as the list of its items (Python ints where a dim is
known, ``aten::size`` int values where it is not: a 0-d one is a list of one item, with
``scalar``); ``Reshape``/``Expand`` read the list as their size argument.  The node's output
is also bound to an int64 tensor holding the items (``aten::tensor``) for any other consumer;
dead code elimination drops it when nothing else reads it.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, List, Optional, Union

import numpy as np

from ..ir.graph import Value
from ..ir.types import INT, ListType, TensorType
from .importer import Importer

Item = Union[int, Value]


@dataclass
class ShapeList:
    items: List[Item]
    scalar: bool = False


def shape_list(imp: Importer, k: int) -> Optional[ShapeList]:
    """Input k as a shape list: followed symbolically, or an int constant of rank <= 1."""
    names = imp.node.input
    if k >= len(names) or not names[k]:
        return None
    known = imp.shape_lists.get(names[k])
    if known is not None:
        return known
    c = imp.const(imp.value(names[k]))
    if c is not None and c.dtype == np.int64 and c.ndim <= 1:
        return ShapeList([int(x) for x in c.reshape(-1)], scalar=c.ndim == 0)
    return None


def _emit(imp: Importer, result: ShapeList) -> List[Value]:
    """Record ``result`` for the node's output and bind a tensor holding it."""
    imp.shape_lists[imp.node.output[0]] = result
    if all(isinstance(x, int) for x in result.items):
        arr = np.array(result.items, np.int64)
        return [imp.py(arr[0] if result.scalar else arr)]
    items = imp.op("prim::ListConstruct", result.items, types=[ListType(INT)])[0]
    t = imp.op("aten::tensor", [items, 4, None, False],
               types=[TensorType("int64", (len(result.items),))])[0]
    if result.scalar:
        t = imp.op("aten::squeeze", [t, 0], types=[TensorType("int64", ())])[0]
    return [t]


def shape_aware(tensor_rule: Callable, list_rule: Callable, tracked=(0,)) -> Callable:
    """A rule that follows shape lists (``list_rule(imp, lists) -> ShapeList``) when the
    inputs at ``tracked`` positions include one that is being followed, else ``tensor_rule``."""
    def rule(imp: Importer) -> List[Value]:
        names = imp.node.input
        positions = [k for k in (range(len(names)) if tracked == "all" else tracked)
                     if k < len(names) and names[k]]
        followed = any(names[k] in imp.shape_lists for k in positions)
        # int64 constants fold too (an exporter's Unsqueeze(-1) next to a followed dim)
        if followed or (positions and all(shape_list(imp, k) is not None for k in positions)):
            lists = [shape_list(imp, k) for k in range(len(imp.node.input))]
            result = list_rule(imp, lists)
            if result is not None:
                return _emit(imp, result)
        return tensor_rule(imp)
    return rule


def shape(tensor_rule: Callable) -> Callable:
    def rule(imp: Importer) -> List[Value]:
        x = imp.input(0)
        dims = imp.shape(x)
        if dims is None or None not in dims:
            return tensor_rule(imp)
        a = imp.attrs()
        start, end = a.get("start", 0), a.get("end", len(dims))
        items = [d if d is not None else imp.op("aten::size", [x, i], types=[INT])[0]
                 for i, d in enumerate(dims)][start:end]
        return _emit(imp, ShapeList(items))
    return rule


def gather(imp: Importer, lists) -> Optional[ShapeList]:
    vec, idx = lists[0], lists[1]
    if vec is None or idx is None or imp.attrs().get("axis", 0) != 0:
        return None
    picked = [vec.items[i] for i in idx.items]
    return ShapeList(picked, scalar=idx.scalar)


def unsqueeze(imp: Importer, lists) -> Optional[ShapeList]:
    vec = lists[0]
    return ShapeList(vec.items) if vec is not None and vec.scalar else None


def squeeze(imp: Importer, lists) -> Optional[ShapeList]:
    vec = lists[0]
    return ShapeList(vec.items, scalar=True) if vec is not None and len(vec.items) == 1 else None


def concat(imp: Importer, lists) -> Optional[ShapeList]:
    if any(x is None or x.scalar for x in lists):
        return None
    return ShapeList([i for x in lists for i in x.items])


def slice_(imp: Importer, lists) -> Optional[ShapeList]:
    vec = lists[0]
    if vec is None or any(x is None for x in lists[1:3]):
        return None
    steps = lists[4].items[0] if len(lists) > 4 and lists[4] is not None else 1
    start, end = lists[1].items[0], lists[2].items[0]
    if not all(isinstance(v, int) for v in (start, end, steps)):
        return None
    return ShapeList(vec.items[slice(start, end, steps)])


def cast(imp: Importer, lists) -> Optional[ShapeList]:
    to = imp.attrs().get("to")
    return ShapeList(lists[0].items, lists[0].scalar) if lists[0] is not None and \
        to == 7 else None  # to int64: the items as they are


def size_arg(imp: Importer, k: int) -> Optional[List[Item]]:
    """Input k (a Reshape's or Expand's shape) as a size list, when it is being followed."""
    if imp.node.input[k] not in imp.shape_lists:
        return None
    return list(imp.shape_lists[imp.node.input[k]].items)
