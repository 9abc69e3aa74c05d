"""The scripting front end: Python source -> IR with its control flow kept (torch.jit.script).

``script_graph(fn)`` reads ``fn``'s source, parses it with ``ast`` and emits one typed graph.
``if`` becomes ``prim::If``, ``for i in range(...)`` and ``while`` become ``prim::Loop``, calls to
``tl.X`` / ``np.X`` / ``math.X`` / tensor methods become the registry op of that name, and calls to
other plain Python functions are inlined (as TorchScript does)::

    def f(x, n: int):                      # f.py, lines 3-6
        for _ in range(n):
            x = tl.sigmoid(x * 1.1)
        return x

    print(script_graph(f))
    graph(%x : Tensor,
          %n : int):
      %0 : bool = prim::Constant[value=1]() # f.py:4:4
      %2 : float = prim::Constant[value=1.1000000000000001]() # f.py:5:27
      %x.3 : Tensor = prim::Loop(%n, %0, %x) # f.py:4:4
        block0(%1 : int, %x.1 : Tensor):
          %3 : Tensor = aten::mul(%x.1, %2) # f.py:5:23
          %x.2 : Tensor = aten::sigmoid(%3) # f.py:5:12
          -> (%0, %x.2)
      return (%x.3)

``break``, ``continue`` and early ``return`` are lowered so that every block ends in one place: an
``if`` one of whose branches leaves absorbs the statements after it into the branch that goes on,
and a loop that may ``return`` carries a "returned" flag and the value, tested after the loop.
Anything outside the subset raises ``ScriptError`` quoting the line with a caret.

The scripter is layered by module: script_source.py (a function's AST and locations),
script_values.py (compile-time values, type unification), script_builder.py (nodes, constants,
names), script_expressions.py and script_statements.py (lowering); this module is the driver.
"""
from __future__ import annotations

import ast
import inspect
import types as pytypes
from typing import Optional, Sequence

from ..errors import ScriptError
from ..ir.graph import Graph
from ..ir.types import BOOL, FLOAT, INT, STR, TENSOR, ClassType, TupleType, Type
from .script_source import FunctionSource, SourceFunction
from .script_statements import FunctionScope, StatementLowering
from .script_values import ModuleInfo, ModuleValue, ObjectRef, Seq

__all__ = ["script_graph"]


def _annotation_type(frame: FunctionSource, ann) -> Type:
    """The graph input type a parameter annotation asks for (none: a tensor)."""
    if ann is None:
        return TENSOR
    if isinstance(ann, ast.Constant) and isinstance(ann.value, str):
        try:
            ann = ast.parse(ann.value, mode="eval").body
        except SyntaxError:
            raise frame.error(f"cannot read the annotation {ann.value!r}", ann) from None
    name = ann.id if isinstance(ann, ast.Name) else ann.attr if isinstance(ann, ast.Attribute) \
        else None
    simple = {"int": INT, "float": FLOAT, "bool": BOOL, "str": STR, "Tensor": TENSOR,
              "ndarray": TENSOR, "ArrayLike": TENSOR, "NDArray": TENSOR}
    if name in simple:
        return simple[name]
    if isinstance(ann, ast.Subscript):
        base = ann.value.id if isinstance(ann.value, ast.Name) else getattr(ann.value, "attr", "")
        if base in ("Tuple", "tuple"):
            elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
            return TupleType(tuple(_annotation_type(frame, e) for e in elts))
        if base == "NDArray":
            return TENSOR
    raise frame.error("unsupported type annotation (use int, float, bool, a tensor type or "
                      "Tuple[...])", ann)


def script_graph(fn, module: Optional[ModuleInfo] = None, lowering: type = StatementLowering,
                 input_types: Optional[Sequence[Type]] = None) -> Graph:
    """Compile the Python function ``fn`` into a graph that keeps its control flow.

    Parameters are tensors unless annotated ``int``, ``float``, ``bool`` or ``Tuple[...]``; a
    bound method's ``self`` is not a graph input (its scalar attributes become constants).
    With ``module`` (a method of a module, ``fn`` its function): the first parameter is the
    graph input ``%self`` typed with the module's class, read through ``prim::GetAttr`` and
    called through ``prim::CallMethod`` (script_modules.py).
    Raises ``ScriptError`` (quoting the line, with a caret) for anything outside the subset
    described in this module's docstring.

    ``fn`` may also be a ``SourceFunction`` (code known only as text), compiled by
    ``lowering`` (a ``StatementLowering`` subclass that knows its spellings) with the
    parameters (after ``self``) typed ``input_types`` instead of by their annotations."""
    bound = None
    if inspect.ismethod(fn):
        bound, fn = fn.__self__, fn.__func__
    if not isinstance(fn, (pytypes.FunctionType, SourceFunction)):
        raise ScriptError(f"script_graph expects a Python function, got {type(fn).__name__}")
    em = lowering()
    frame = em.frame = em.frame_of(fn)
    fargs = frame.fdef.args
    if fargs.vararg or fargs.kwarg or fargs.kwonlyargs:
        bad = fargs.vararg or fargs.kwarg or fargs.kwonlyargs[0]
        raise frame.error("*args, **kwargs and keyword-only parameters are not supported in "
                          "scripted functions", bad)
    params = fargs.posonlyargs + fargs.args
    if module is not None:
        if not params:
            raise frame.error("a module method needs a 'self' parameter", frame.fdef)
        me = em.graph.add_input(params[0].arg, ClassType(module.qualified_name))
        em.env[params[0].arg] = ModuleValue(me, module)
        params = params[1:]
    elif bound is not None and params:
        em.env[params[0].arg] = ObjectRef(bound)
        params = params[1:]
    if input_types is not None and len(input_types) != len(params):
        raise frame.error(f"{len(input_types)} parameter types for {len(params)} parameters",
                          frame.fdef)
    for i, a in enumerate(params):
        t = input_types[i] if input_types is not None else _annotation_type(frame, a.annotation)
        em.env[a.arg] = em.graph.add_input(a.arg, t)
    em.inlining.append(fn.__code__)
    result = em.stmts(frame.fdef.body, FunctionScope())[0]
    if isinstance(result, Seq) and result.kind == "tuple":  # PyTorch gives it no source line
        items = [em.materialize(i, frame.fdef) for i in result.items]
        result = em.create("prim::TupleConstruct", items,
                           [TupleType(tuple(v.type for v in items))], None).output()
    em.graph.set_outputs([em.materialize(result, frame.fdef)])
    return em.graph
