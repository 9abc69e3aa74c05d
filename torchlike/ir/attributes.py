"""Conventions for node attributes that several layers read.

``SUBGRAPH_ATTR``: the attribute in which a node holding a graph (``prim::FusionGroup``,
``prim::TensorExprGroup``, ...) keeps it; PyTorch prints it as a ``with kind_N = graph(...)``
section after the graph.  ``UnknownTensorValue``: the value of a tensor constant whose data the
printed text does not fully hold.
"""
from __future__ import annotations

from typing import Optional

import numpy as np

SUBGRAPH_ATTR = "Subgraph"


class UnknownTensorValue:
    """A tensor constant whose data the text does not fully hold.

    PyTorch prints ``[value=<Tensor>]`` for more than 10 elements and a rounded table such as
    ``[value= 1  2  3 [ CPUFloatType{3} ]]`` for fewer; ``text`` keeps what was printed (the
    printer prints it back).  ``data`` is the array where the text is exact (integer and bool
    tables), else None.  Equality is identity: two ``<Tensor>``s are not known to be equal.
    """

    __slots__ = ("text", "data")

    def __init__(self, text: str = "<Tensor>", data: Optional[np.ndarray] = None):
        self.text = text
        self.data = data

    def __repr__(self) -> str:
        return f"UnknownTensorValue({self.text!r})"
