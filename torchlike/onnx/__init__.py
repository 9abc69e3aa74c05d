"""``torchlike.onnx``: write captured graphs as ONNX models, and read ONNX models as graphs
that fuse like any other.  Needs the ``onnx`` extra (``pip install "torchlike[onnx]"``:
``onnx``, and ``onnxruntime`` to run the files).

    import numpy as np, torchlike as tl
    from torchlike import jit, onnx as tlonnx

    def f(x, y):
        return tl.tanh(x * y + 1.0) * 0.5

    x = np.random.rand(4, 5).astype(np.float32)
    tlonnx.export(jit.trace(f, (x, x)), (x, x), "f.onnx")   # also: a function, an nn.Module
    g = tlonnx.load("f.onnx")                               # a ScriptFunction
    g(x, x)                                                 # fused, compiled, cached

Export (``export``): the function or module is captured (traced if it is not already a
``ScriptFunction``/``ScriptModule``), specialized on ``example_inputs`` (calls inlined,
types and shapes inferred, constants folded, dead code removed: every value gets its dtype and
shape), and written node by node through ``op_table.EXPORT``.  A module's parameters and
buffers are frozen into initializers.  PyTorch's type promotion is explicit in the file
(``Cast`` nodes and constants in the compute dtype).  ``prim::If``/``prim::Loop`` become
``If``/``Loop`` with their blocks as subgraphs.  A fusion group is written as the ops inside it
(its subgraph is inlined first): ONNX runtimes do their own fusion, and the ops are the
portable form.  Shapes are the example inputs', except the dims the graph declares unknown
and those ``dynamic_axes`` names, which are symbolic in the file.

Import (``load``): only the protobuf is read, nothing in the file is executed; each node
becomes registry ops through ``op_table.IMPORT`` (``LayerNormalization`` as its row
reductions, an equal ``Split`` as ``aten::chunk``: the forms the fuser fuses; ``Shape`` chains
on symbolic dims followed into ``Reshape``/``Expand`` sizes); the result is a
``ScriptFunction`` whose calls are specialized, fused and compiled as any other.  An op with no translation raises
``UnsupportedOpError`` naming the node and its op type.
"""
from __future__ import annotations

from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..ir.attributes import SUBGRAPH_ATTR
from ..ir.graph import Graph, Value, clone_graph
from ..ir.types import TENSOR, ClassType, ListType, TensorType, type_of_python_value
from ..jit import ScriptFunction, ScriptModule, trace
from ..jit.module_graphs import freeze
from ..nn.module import Module
from ..passes import (
    eliminate_common_subexpressions,
    eliminate_dead_code,
    infer_types,
    inline_functions,
    propagate_constants,
    simplify_tuples,
)
from ..passes.inline_functions import inline_call
from ..passes.inline_groups import fused_concat_as_cat, inline_groups
from ..passes.remove_mutation import remove_mutation
from ..passes.utils import replace_all_uses
from .emitter import ExportError
from .export_graph import export_model
from .import_graph import import_model

__all__ = ["export", "load", "to_model", "from_model", "prepare_graph", "ExportError",
           "DEFAULT_OPSET", "MIN_OPSET"]

DEFAULT_OPSET = 20   # Gelu is an ONNX op from 20 (below, its erf/tanh expansion is written)
MIN_OPSET = 17       # LayerNormalization is an ONNX op from 17


def _as_tuple(example_inputs) -> Tuple[Any, ...]:
    if not isinstance(example_inputs, (tuple, list)):
        example_inputs = (example_inputs,)
    return tuple(np.asarray(a) if isinstance(a, np.generic) else a for a in example_inputs)


def prepare_graph(fn_or_module, example_inputs, dynamic_axes=None
                  ) -> Tuple[Graph, list, List[Dict[int, str]]]:
    """The graph ``export`` writes: captured, frozen (a module), specialized on the inputs
    (their dims, but for the dynamic ones: ``export``).  Returns the graph, its input names
    and each input's symbolic dims (index -> name)."""
    args = _as_tuple(example_inputs)
    target = fn_or_module
    if isinstance(target, Module) and not isinstance(target, ScriptModule):
        target = trace(target, args)
    elif isinstance(target, Graph):
        target = ScriptFunction(target)
    elif not isinstance(target, (ScriptFunction, ScriptModule)):
        target = trace(target, args)
    if isinstance(target, ScriptModule):
        g = _without_self(freeze(clone_graph(target.graph), target))
        names = [v.name.split(".")[0] for v in g.inputs]
    else:
        g = clone_graph(target.graph)
        names = list(target.input_names)
        if g.inputs and isinstance(g.inputs[0].type, ClassType):
            # a method's graph, its module (or any object with the attributes) first
            if not args:
                raise ExportError(f"%{g.inputs[0].name} needs its object as the first input")
            g = _without_self(freeze(g, args[0]))
            names, args = names[1:], args[1:]
    types, symbolic = _input_types(g, args, names, dynamic_axes or {})
    inline_groups(g)
    _inline_fusion_groups(g)
    g = inline_functions(g)
    infer_types(g, types)
    for run_pass in (simplify_tuples, propagate_constants, eliminate_common_subexpressions,
                     eliminate_dead_code, remove_mutation, eliminate_dead_code):
        run_pass(g)  # remove_mutation: x.add_(y) on a fresh x is aten::add (ONNX has no writes)
    return g, names, symbolic


def _input_types(g: Graph, args, names, dynamic_axes) -> Tuple[list, List[Dict[int, str]]]:
    """The example inputs' types, with the dims the graph declares unknown (``Float(*, 3)``)
    and those ``dynamic_axes`` names (by input name or index: a list of dims, or a dict of
    dim -> symbol) left unknown; and each input's symbolic dims."""
    unknown = set(dynamic_axes) - set(names) - set(range(len(names)))
    if unknown:
        raise ValueError(f"dynamic_axes names no input {sorted(map(str, unknown))}; the inputs "
                         f"are {names}")
    types, symbolic = [], []
    for k, (v, a) in enumerate(zip(g.inputs, args)):
        t = type_of_python_value(a)
        dyn: Dict[int, str] = {}
        if isinstance(t, TensorType):
            declared = v.type
            if isinstance(declared, TensorType) and declared.rank == t.rank and declared.shape:
                dyn.update({d: f"{names[k]}_{d}" for d, n in enumerate(declared.shape) if n is None})
            spec = dynamic_axes.get(names[k], dynamic_axes.get(k))
            if spec is not None:
                spec = spec if isinstance(spec, dict) else {d: f"{names[k]}_{d}" for d in spec}
                dyn.update({int(d) % max(t.rank, 1): str(n) for d, n in spec.items()})
            if dyn:
                t = t.with_(shape=tuple(None if d in dyn else n for d, n in enumerate(t.shape)),
                            strides=None)
        types.append(t)
        symbolic.append(dyn)
    return types, symbolic


def _inline_fusion_groups(g: Graph) -> None:
    """Replace each ``prim::FusionGroup`` (a graph that ``graph_for`` returned) by the ops of
    its subgraph: the file holds the ops, and ONNX runtimes fuse as they do."""
    for node in list(g.all_nodes()):
        if node.kind == "prim::FusionGroup" and SUBGRAPH_ATTR in node.attrs:
            sub = node.attrs[SUBGRAPH_ATTR]
            if not inline_call(g, node, sub, list(node.inputs)):
                raise ExportError(f"{node.describe()}: its subgraph does not match its inputs "
                                  f"and outputs")
    for node in list(g.all_nodes()):
        if node.kind in ("prim::ConstantChunk", "prim::BroadcastingChunk"):
            _as_aten_chunks(g, node)
        elif node.kind == "prim::FusedConcat":
            fused_concat_as_cat(g, node)


def _as_aten_chunks(g: Graph, node) -> None:
    """A fusion group's ``prim::(Broadcasting|Constant)Chunk[chunks, dim](x...)`` as what it
    stands for: each input (broadcast to their common shape) ``aten::chunk``ed, unpacked."""
    chunks, dim = int(node.attrs["chunks"]), int(node.attrs["dim"])
    shapes = [getattr(v.type, "shape", None) for v in node.inputs]
    if any(s is None or None in s for s in shapes):
        raise ExportError(f"{node.describe()}: the shapes of its inputs are not known")
    common = [int(d) for d in np.broadcast_shapes(*map(tuple, shapes))]
    block, outs = node.owning_block, list(node.outputs)

    def before(kind, inputs, types):  # a node just before ``node`` (constants: block start)
        args = [x if isinstance(x, Value) else g.insert_constant(x, block=block) for x in inputs]
        return g.create(kind, args, types, block=block, index=block.nodes.index(node))

    for k, (v, shape) in enumerate(zip(node.inputs, shapes)):
        if list(shape) != common:
            v = before("aten::expand", [v, common, False], [TENSOR]).output()
        lst = before("aten::chunk", [v, chunks, dim], [ListType(TENSOR)]).output()
        unpack = before("prim::ListUnpack", [lst], [TENSOR] * chunks)
        for old, new in zip(outs[k * chunks:(k + 1) * chunks], unpack.outputs):
            replace_all_uses(old, new, g)
    block.remove(node)


def _without_self(g: Graph) -> Graph:
    """A frozen method's graph without its (now unused) ``%self`` input."""
    me = g.inputs[0]
    if me.uses:
        raise ExportError(f"%{me.name} is still used after freezing its attributes")
    g.block.params.remove(me)
    return g


def to_model(fn_or_module, example_inputs, opset: Optional[int] = None, dynamic_axes=None):
    """The ``onnx.ModelProto`` that ``export`` writes."""
    import onnx
    opset = opset or DEFAULT_OPSET
    newest = onnx.defs.onnx_opset_version()
    if not MIN_OPSET <= opset <= newest:
        raise ValueError(f"opset {opset}: torchlike writes opsets {MIN_OPSET} to {newest} "
                         f"(the newest this onnx package knows)")
    g, names, symbolic = prepare_graph(fn_or_module, example_inputs, dynamic_axes)
    return export_model(g, opset, input_names=names, symbolic_dims=symbolic)


def export(fn_or_module, example_inputs: Sequence[Any], path, opset: Optional[int] = None,
           dynamic_axes=None):
    """Write ``fn_or_module`` (a ``ScriptFunction``, ``ScriptModule``, ``nn.Module``, a graph,
    or a Python function, which is traced) specialized on ``example_inputs`` as an ONNX model
    at ``path`` (opset ``opset``, default ``DEFAULT_OPSET``; 17 and up).  Returns the model.

    Every dim is the example's, except the dims the graph's input types leave unknown
    (``Float(*, 8)``) and those ``dynamic_axes`` names, as ``torch.onnx.export`` takes it
    (``{"x": {0: "batch"}}`` or ``{"x": [0]}``; keys are input names or indices): those are
    symbolic in the file, and the ops that need them read them at run time (``Shape``) or,
    where that is not written (a split or squeeze of that dim), export raises ``ExportError``."""
    import onnx
    model = to_model(fn_or_module, example_inputs, opset, dynamic_axes)
    onnx.save(model, str(path) if not hasattr(path, "write") else path)
    return model


def from_model(model, name: Optional[str] = None) -> ScriptFunction:
    """A ``ScriptFunction`` running the ``onnx.ModelProto`` ``model`` (see ``load``)."""
    graph, names = import_model(model)
    return ScriptFunction(graph, name=name or "forward", input_names=names, kind="graph")


def load(path) -> ScriptFunction:
    """Read the ONNX model at ``path`` (a file name or a binary file object) as a
    ``ScriptFunction``: calling it specializes, fuses and compiles its graph as any other.
    Only the protobuf is parsed; nothing in the file is executed."""
    import onnx
    model = onnx.load(path if hasattr(path, "read") else str(path))
    return from_model(model)
