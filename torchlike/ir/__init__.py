"""The IR: typed SSA graphs in TorchScript's shape, with PyTorch's text form.

    >>> g = parse_graph('''
    ... graph(%x : Float(2, 3)):
    ...   %1 : float = prim::Constant[value=2.]()
    ...   %2 : Float(2, 3) = aten::mul(%x, %1)
    ...   return (%2)
    ... ''')
    >>> print(g)
    graph(%x : Float(2, 3)):
      %1 : float = prim::Constant[value=2.]()
      %2 : Float(2, 3) = aten::mul(%x, %1)
      return (%2)
    <BLANKLINE>
"""
from .attributes import SUBGRAPH_ATTR, UnknownTensorValue
from .graph import Block, Graph, Node, Value, clone_graph
from .parser import ParseError, parse_graph
from .types import (
                    ANY,
                    BOOL,
                    DEVICE,
                    FLOAT,
                    INT,
                    NONE,
                    NUMBER,
                    STR,
                    TENSOR,
                    ClassType,
                    DictType,
                    ListType,
                    OptionalType,
                    TensorType,
                    TupleType,
                    Type,
                    UnionType,
                    tensor_type_of,
                    type_of_python_value,
)

__all__ = ["Block", "Graph", "Node", "Value", "clone_graph", "ParseError", "SUBGRAPH_ATTR",
           "UnknownTensorValue", "parse_graph",
           "ANY", "BOOL", "DEVICE", "FLOAT", "INT", "NONE", "NUMBER", "STR", "TENSOR",
           "ClassType", "DictType", "ListType", "OptionalType", "TensorType", "TupleType", "Type",
           "UnionType",
           "tensor_type_of", "type_of_python_value"]
