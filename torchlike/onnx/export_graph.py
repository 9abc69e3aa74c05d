"""torchlike graph -> ONNX ``ModelProto`` (see ``emitter`` for how values are written)."""
from __future__ import annotations

from ..ir.graph import Graph
from .emitter import Emitter, flat_values, output_names
from .op_table import EXPORT


def export_model(graph: Graph, opset: int, name: str = "torchlike", input_names=None,
                 symbolic_dims=None):
    """The ``ModelProto`` of ``graph`` (typed, tensor/scalar inputs) at ``opset``."""
    em = Emitter(opset, EXPORT)
    helper = em.helper
    em.push_scope()
    inputs = []
    for i, v in enumerate(graph.inputs):
        hint = input_names[i] if input_names and i < len(input_names) else v.name
        n = em.fresh(hint)
        em.bind(v, n)
        info = em.value_info(n, v)
        symbols = symbolic_dims[i] if symbolic_dims and i < len(symbolic_dims) else {}
        for d, symbol in symbols.items():
            dim = info.type.tensor_type.shape.dim[d]
            dim.Clear()
            dim.dim_param = symbol
        inputs.append(info)
    em.export_block(graph.block)
    outs = output_names(em, graph.outputs, produced_here=True)
    out_infos = [em.value_info(n, v) for n, v in zip(outs, flat_values(graph.outputs))]
    nodes = em.pop_scope()
    g = helper.make_graph(nodes, name, inputs, out_infos, initializer=em.initializers)
    model = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)],
                              producer_name="torchlike")
    model.ir_version = min(model.ir_version, _IR_VERSION_FOR_OPSET.get(opset, model.ir_version))
    _fill_output_shapes(model)
    return model


def _fill_output_shapes(model) -> None:
    """Graph outputs whose rank torchlike's types do not know (an item of an unpacked list)
    get the type ONNX shape inference gives them: the checker wants every output typed."""
    missing = [o for o in model.graph.output if not o.type.tensor_type.HasField("shape")]
    if not missing:
        return
    from onnx import shape_inference
    inferred = shape_inference.infer_shapes(model)
    known = {v.name: v for v in list(inferred.graph.value_info) + list(inferred.graph.output)}
    for o in missing:
        v = known.get(o.name)
        if v is not None and v.type.tensor_type.HasField("shape"):
            o.type.CopyFrom(v.type)


# The IR version each opset shipped with (onnx/helper.py's VERSION_TABLE): ONNX Runtime refuses
# a model whose ir_version is newer than it knows, so a model says the oldest that fits.
_IR_VERSION_FOR_OPSET = {17: 8, 18: 8, 19: 9, 20: 9, 21: 10, 22: 10}
