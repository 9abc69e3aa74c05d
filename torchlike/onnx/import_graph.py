"""ONNX ``ModelProto`` -> torchlike graph (see ``importer`` for how nodes are read)."""
from __future__ import annotations

import re
from typing import List, Tuple

from ..ir.graph import Graph
from ..ir.types import TENSOR, TensorType
from .importer import Importer
from .op_table import IMPORT

_NAME = re.compile(r"[^A-Za-z0-9_]")


def import_model(model) -> Tuple[Graph, List[str]]:
    """The torchlike graph of ``model`` and its input names (sanitized ONNX names)."""
    imp = Importer(model, IMPORT)
    g = model.graph
    inits = {i.name for i in g.initializer}
    names = []
    for vi in g.input:
        if vi.name in inits:
            continue  # IR < 4 lists initializers as inputs too: they stay constants
        dtype, shape = imp.infos.get(vi.name, (None, None))
        hint = _NAME.sub("_", vi.name)
        if not hint or hint[0].isdigit():
            hint = "input_" + hint
        v = imp.graph.add_input(hint, TensorType(dtype, shape) if dtype else TENSOR)
        names.append(v.name.split(".")[0])
        imp.bind(vi.name, v)
    imp.run_nodes(g)
    imp.graph.set_outputs([imp.value(o.name) for o in g.output])
    return imp.graph, names
