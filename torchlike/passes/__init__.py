"""Graph-to-graph passes.  Each takes a ``Graph``, rewrites it in place (blocks and fusion
subgraphs included) and returns it, so they chain::

    from torchlike.passes import infer_types, propagate_constants, eliminate_common_subexpressions
    g = eliminate_dead_code(eliminate_common_subexpressions(propagate_constants(
        infer_types(g, [x_type]))))

or, in one call, ``run_default_passes(g, input_types)``.  After every pass the graph satisfies
``torchlike.ir.verify.verify``.
"""
from __future__ import annotations

from typing import Any, Optional, Sequence

from ..ir.graph import Graph
from ..ir.verify import IRVerificationError, verify
from .constant_propagation import propagate_constants
from .cse import eliminate_common_subexpressions
from .dce import eliminate_dead_code
from .inline_functions import inline_functions
from .shape_inference import broadcast_shapes, infer_types, join
from .tuples import simplify_tuples

# Short aliases, named as TorchScript names its passes.
dce = eliminate_dead_code
cse = eliminate_common_subexpressions
constant_propagation = propagate_constants

__all__ = ["eliminate_dead_code", "eliminate_common_subexpressions", "propagate_constants",
           "inline_functions", "simplify_tuples",
           "infer_types", "join", "broadcast_shapes", "run_default_passes", "verify",
           "IRVerificationError", "dce", "cse", "constant_propagation"]


def run_default_passes(graph: Graph, input_types: Optional[Sequence[Any]] = None,
                       check: bool = False) -> Graph:
    """The standard clean-up pipeline, in place: inlining of graph-function calls
    (``inline_functions``: ``F.relu`` and friends), type inference (when ``input_types`` is
    given: ``Type``s or example values), constant propagation, CSE, then DCE.  ``check=True`` verifies
    the graph after each pass (tests do; it costs a walk of the graph).

    Example::

        graph(%x : Float(2)):                     graph(%x : Float(2)):
          %1 : int = prim::Constant[value=2]()      %3 : int = prim::Constant[value=6]()
          %2 : int = prim::Constant[value=3]()      %5 : Float(2, strides=[1]) = aten::mul(%x, %3)
          %3 : int = aten::mul(%1, %2)         ==>  return (%5)
          %4 : Tensor = aten::neg(%x)
          %5 : Tensor = aten::mul(%x, %3)
          return (%5)
    """
    steps = [inline_functions]
    if input_types is not None:
        steps.append(lambda g: infer_types(g, input_types))
    steps += [propagate_constants, eliminate_common_subexpressions, eliminate_dead_code]
    for step in steps:
        step(graph)
        if check:
            verify(graph)
    return graph
