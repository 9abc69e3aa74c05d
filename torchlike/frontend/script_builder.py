"""The scripter's graph building: constants, op nodes, compile-time values, Python names.

``GraphBuilder`` holds the graph being built, the block new nodes go into and the environment
(Python name -> ``Value`` or compile-time value).  It emits op calls against their registry
schemas (``emit_op``: defaults filled in as constants, ``int[]`` arguments as lists), turns
compile-time values into graph values (``materialize``) and resolves the names a function uses
(locals, closures, globals, builtins, module attributes).  Expression and statement lowering
(script_expressions.py, script_statements.py) build on it.
"""
from __future__ import annotations

import ast
import builtins
import math
import types as pytypes
from typing import Any, Dict, List, Optional

import numpy as np

from ..errors import ScriptError
from ..ir.graph import Block, Graph, Value
from ..ir.types import (
    BOOL,
    FLOAT,
    INT,
    NONE,
    TENSOR,
    ListType,
    TupleType,
    Type,
    type_of_python_value,
)
from ..ops import elementwise_base, registry
from ..ops.python_names import OPERATORS, find_op
from ..ops.registry import OpDef, Param
from .calls import scalar_type
from .script_source import FunctionSource, SourceFunction
from .script_values import (
    Builtin,
    Callee,
    Method,
    ModuleRef,
    ModuleValue,
    ObjectRef,
    OpName,
    PythonFunction,
    ScriptCallee,
    Seq,
    Static,
    Sugar,
    Undefined,
)

__all__ = ["GraphBuilder", "unsupported"]

# Python constructs outside the scriptable subset, named for error messages.
_UNSUPPORTED = {
    ast.ListComp: "list comprehensions", ast.SetComp: "set comprehensions",
    ast.DictComp: "dict comprehensions", ast.GeneratorExp: "generator expressions",
    ast.Lambda: "lambdas", ast.Dict: "dict literals", ast.Set: "set literals",
    ast.JoinedStr: "f-strings", ast.Starred: "starred arguments (*args)",
    ast.NamedExpr: "assignment expressions (:=)", ast.Yield: "yield expressions",
    ast.YieldFrom: "yield expressions", ast.Await: "await expressions",
    ast.With: "with statements", ast.AsyncWith: "with statements", ast.Try: "try statements",
    ast.Global: "global declarations", ast.Nonlocal: "nonlocal declarations",
    ast.FunctionDef: "nested function definitions", ast.AsyncFunctionDef: "nested functions",
    ast.ClassDef: "class definitions", ast.Delete: "del statements",
    ast.Import: "import statements", ast.ImportFrom: "import statements",
    ast.AsyncFor: "async for loops", ast.Raise: "raise statements (use assert)"}
if hasattr(ast, "TryStar"):
    _UNSUPPORTED[ast.TryStar] = "try statements"
if hasattr(ast, "Match"):
    _UNSUPPORTED[ast.Match] = "match statements"
# Builtins the scripter knows: those that record an op (python_names.OPERATORS), print, range.
_BUILTINS = {id(getattr(builtins, n)): n
             for n in [o.builtin for o in OPERATORS if o.builtin] + ["print", "range"]}


def unsupported(node: ast.AST, default: str) -> str:
    """What to call ``node``'s construct in "... are not supported" errors."""
    return _UNSUPPORTED.get(type(node), default)


def _scalar_dtype(t: Type) -> str:
    return {BOOL: "bool", INT: "int64"}.get(t, "float64")


def _list_elem(param: Param) -> Optional[Type]:
    """``int[]``, ``int[1]?``, ``Tensor[]`` -> the element type; None for other schema types
    (a generic ``t[]`` takes any list, tuple or tensor as it is)."""
    if "[" not in param.type:
        return None
    return {"int": INT, "float": FLOAT, "bool": BOOL, "Tensor": TENSOR}.get(
        param.type.split("[")[0])


# tensor attributes read as values, and the op TorchScript records for each
TENSOR_PROPERTIES: Dict[str, str] = {"T": "aten::numpy_T", "shape": "aten::size",
                                     "ndim": "aten::dim"}


class GraphBuilder:
    """The graph being built and what the names in scope stand for.

    ``block`` is where nodes go, ``env`` maps Python names to ``Value``s or compile-time values
    (script_values.py), ``frame`` is the source of the function being compiled (a helper's while
    it is inlined)."""

    def __init__(self):
        self.graph = Graph()
        self.block: Block = self.graph.block
        self.env: Dict[str, Any] = {}
        self.frame: Optional[FunctionSource] = None
        self.inlining: List[Any] = []      # code objects being compiled (recursion guard)
        self._frames: Dict[Any, FunctionSource] = {}
        self._consts: Dict[tuple, Value] = {}
        self._nconsts = 0

    def error(self, message: str, node) -> ScriptError:
        """A ``ScriptError`` quoting ``node``'s line in the function being compiled."""
        return self.frame.error(message, node)

    def frame_of(self, fn) -> FunctionSource:
        """``fn``'s parsed source (parsed once per code object)."""
        if isinstance(fn, SourceFunction):  # code known only as text (an archive's)
            return fn.frame
        frame = self._frames.get(fn.__code__)
        if frame is None:
            frame = self._frames[fn.__code__] = FunctionSource(fn)
        return frame

    # -- graph building --------------------------------------------------------------------------
    def const(self, value, node=None) -> Value:
        """A prim::Constant in the top block (shared by equal constants, as PyTorch pools them)."""
        t = type_of_python_value(value)
        key = (str(t), repr(value))
        v = self._consts.get(key)
        if v is None:
            src = self.frame.source(node) if node is not None else None
            attrs = {} if value is None else {"value": value}
            v = self.graph.create("prim::Constant", [], [t], attrs, index=self._nconsts,
                                  source=src).output()
            self._nconsts += 1
            self._consts[key] = v
        return v

    def create(self, kind, inputs, out_types, node, names=None):
        """A node in the current block; ``node`` (an AST node or None) gives its source."""
        return self.graph.create(kind, inputs, out_types, block=self.block, names=names,
                                 source=self.frame.source(node) if node is not None else None)

    def add_outputs(self, n, types_, names):
        """Append outputs to a control-flow node once its blocks are built."""
        for t, name in zip(types_, names, strict=False):
            n.outputs.append(Value(self.graph.fresh_name(name), t, node=n))
        return n.outputs

    def ops_by_name(self, name: str) -> Optional[OpDef]:
        """The op a Python name (``tanh``, an alias such as numpy's ``multiply``) stands for.
        Qualified kinds (``aten::slice``) are not Python names: user code cannot reach them."""
        return find_op(name) if "::" not in name else None

    def find_op(self, name: str, origin: str, node) -> OpDef:
        """The op ``origin.name`` (``tl.tanh``, ``np.multiply``) calls, or a ScriptError."""
        op = self.ops_by_name(name)
        if op is None:
            raise self.error(f"{origin}.{name} has no op in torchlike's registry", node)
        return op

    def emit_op(self, kind: str, args: list, kwargs: dict, node, op: Optional[OpDef] = None):
        """Emit one op call; schema defaults are filled in as constants (aten::add's alpha)."""
        op = op if op is not None else registry.lookup(kind)
        if op is None:  # no schema: positional arguments as given
            inputs = [self.materialize(a, node) for a in args]
            if kwargs:
                raise self.error(f"{kind} takes no keyword arguments here", node)
        else:
            params = op.params or (op.python_params if kwargs else ())  # x.norm(dim=1)
            if params:
                # tl.zeros(3, 4): the leading ints are the size list (literals or int values)
                args = registry.gather_size(op, args, lambda a: registry.is_int_literal(a) or (
                    isinstance(a, Value) and a.type == INT))
                if args and isinstance(args[0], list):
                    args = [Seq(args[0], "list")] + list(args[1:])
                try:
                    bound = op.bind(args, dict(kwargs))
                except TypeError as e:
                    raise self.error(f"bad arguments for {op.name}: {e}", node) from None
                inputs = [self.argument(a, p, node) for a, p in zip(bound, params, strict=False)]
            else:  # overloads told apart by argument count; a factory's dtype=... goes last
                try:
                    bound = op.bind(list(args), dict(kwargs))
                except TypeError as e:
                    raise self.error(f"bad arguments for {op.name}: {e}", node) from None
                inputs = [self.materialize(a, node) for a in bound]
        result_types = self.result_types(op, kind, inputs)
        n = self.create(kind, inputs, result_types, node)
        if op is not None and op.infer is not None and any(t.is_tensor() for t in result_types):
            try:  # the registry may know more (a list from chunk); keep our guess otherwise
                inferred = op.infer(n, [v.type for v in inputs])
                if len(inferred) == len(n.outputs) and all(isinstance(t, Type) for t in inferred):
                    for v, t in zip(n.outputs, inferred, strict=False):
                        v.type = t
            except Exception:  # noqa: BLE001 - inference is optional here
                pass
        return n.outputs[0] if len(n.outputs) == 1 else Seq(n.outputs)

    def result_types(self, op: Optional[OpDef], kind: str, inputs: List[Value]) -> List[Type]:
        """The output types ``emit_op`` gives a node before the registry's ``infer`` is asked.
        Ops with a non-tensor result (``aten::Float``, ``aten::len``) get theirs from ``infer``
        there, replacing the ``Tensor`` guess."""
        if op is not None and op.is_elementwise:
            operands = [v for p, v in zip(op.params, inputs, strict=False) if p.is_operand]
            lists = [v.type for v in operands if isinstance(v.type, ListType)]
            if lists and kind == "aten::add":  # torch.add(list, list): concatenation
                return [lists[0]]
            if operands and not any(v.type.is_tensor() for v in operands):
                # All scalars: TorchScript scalar arithmetic, a Python scalar (see
                # elementwise_base._scalar_call, whose result dtype this mirrors).
                dtypes = [None if v.type == NONE else _scalar_dtype(v.type) for v in operands]
                attrs = {p.name: v.constant_value() for p, v in zip(op.params, inputs, strict=False)
                         if not p.is_operand}
                try:
                    out = elementwise_base.scalar_signature_dtypes(op, dtypes, attrs)[1]
                except Exception:  # noqa: BLE001
                    return [TENSOR]
                return [BOOL if out == "bool" else FLOAT if "float" in out else INT]
            return [TENSOR]
        if kind in ("aten::chunk", "aten::split", "aten::unbind"):
            return [ListType(TENSOR)]  # a Tensor[] result, unpacked by the caller
        n = op.num_outputs if op is not None and op.num_outputs else 1
        if op is not None and op.output_count is not None:
            n = op.output_count([v.type for v in inputs])
        return [TENSOR] * n

    def argument(self, arg, param: Param, node) -> Value:
        """One bound argument as a Value: defaults become constants, ints for ``int[]`` lists."""
        if not isinstance(arg, (Value, Sugar)):
            return self.const(arg)
        elem = _list_elem(param)
        if elem is not None:
            if isinstance(arg, Seq):
                items = [self.materialize(i, node) for i in arg.items]
                return self.create("prim::ListConstruct", items, [ListType(elem)], None).output()
            if isinstance(arg, Value) and arg.type == elem and elem != TENSOR:
                # PyTorch's int[1] convention: x.mean(-1) means dims [-1]
                return self.create("prim::ListConstruct", [arg], [ListType(elem)], None).output()
        return self.materialize(arg, node)

    def materialize(self, sv, node) -> Value:
        """A compile-time value as one graph value (a tuple literal becomes TupleConstruct)."""
        if isinstance(sv, Value):
            return sv
        if isinstance(sv, Seq):
            items = [self.materialize(i, node) for i in sv.items]
            if sv.kind == "list":
                elem = items[0].type if items else TENSOR
                return self.create("prim::ListConstruct", items, [ListType(elem)], node).output()
            t = TupleType(tuple(v.type for v in items))
            return self.create("prim::TupleConstruct", items, [t], node).output()
        if isinstance(sv, Static):
            return self.const(sv.value, node)
        if isinstance(sv, Undefined):
            raise self.error(sv.message, node)
        raise self.error(f"{sv.describe()} cannot be used as a value in a scripted function", node)

    def enter(self, block: Block, env: Dict[str, Any]):
        """Build into ``block`` with ``env`` until ``leave(saved)``; returns ``saved``."""
        saved = (self.block, self.env)
        self.block, self.env = block, env
        return saved

    def leave(self, saved):
        """Go back to the block and environment ``enter`` saved."""
        self.block, self.env = saved

    # -- names -----------------------------------------------------------------------------------
    def lookup(self, name: str, node):
        """What ``name`` stands for: a local, else a closure cell, a global or a builtin."""
        if name in self.env:
            sv = self.env[name]
            if isinstance(sv, Undefined):
                raise self.error(sv.message, node)
            return sv
        frame = self.frame
        for space in (frame.closure, frame.globals):
            if name in space:
                return self.python_value(space[name], name, node)
        if hasattr(builtins, name):
            return self.python_value(getattr(builtins, name), name, node)
        raise self.error(f"undefined name '{name}'", node)

    def python_value(self, obj, name: str, node):
        """A Python object reached through globals, closures or a module attribute."""
        if obj is None or isinstance(obj, (bool, int, float, str)):
            return self.const(obj, node)
        if isinstance(obj, tuple) and all(isinstance(o, (bool, int, float, str)) for o in obj):
            return Seq([self.const(o, node) for o in obj])
        if isinstance(obj, pytypes.ModuleType):
            return ModuleRef(obj)
        if isinstance(obj, SourceFunction):
            return PythonFunction(obj)
        if id(obj) in _BUILTINS and getattr(builtins, _BUILTINS[id(obj)]) is obj:
            return Builtin(_BUILTINS[id(obj)])
        if isinstance(obj, pytypes.BuiltinFunctionType) \
                and getattr(math, obj.__name__, None) is obj:
            return OpName(obj.__name__, "math")
        scripted = getattr(obj, "scripted_callee", None)
        if callable(scripted) and not isinstance(obj, type):
            # a jit.script / jit.trace result: (graph, Callee), copied in where it is called
            graph, callee = scripted()
            if isinstance(callee, Callee):
                return ScriptCallee(graph, getattr(obj, "name", name), callee)
        root = (getattr(obj, "__module__", None) or "").split(".")[0]
        if isinstance(obj, pytypes.FunctionType) and (
                root not in ("torchlike", "torch")
                or (root == "torchlike" and self.ops_by_name(obj.__name__) is None)):
            return PythonFunction(obj)  # a helper (torchlike.nn's too): inlined
        fname = getattr(obj, "__name__", None)
        if callable(obj) and fname and (root in ("torchlike", "torch", "numpy")
                                        or type(obj).__name__ == "ufunc"):
            return OpName(fname, "numpy" if root != "torchlike" and root != "torch" else root)
        if isinstance(obj, builtins.type(len)):
            raise self.error(f"builtin '{name}' is not supported in scripted functions", node)
        raise self.error(f"'{name}' (a {type(obj).__name__}) cannot be used in a scripted "
                         f"function", node)

    def attribute(self, sv, e: ast.Attribute):
        """``sv.attr``: an op of a module (``tl.tanh``), a method of a value, a scalar
        attribute of ``self``."""
        attr = e.attr
        if isinstance(sv, ModuleRef):
            if sv.root in ("torchlike", "torch") and self.ops_by_name(attr) is not None:
                return OpName(attr, sv.root)
            if not hasattr(sv.mod, attr):
                if sv.root in ("torchlike", "torch"):
                    raise self.error(f"{sv.root}.{attr} has no op in torchlike's registry", e)
                raise self.error(f"module '{sv.mod.__name__}' has no attribute '{attr}'", e)
            obj = getattr(sv.mod, attr)
            if isinstance(obj, np.dtype) or (isinstance(obj, type) and issubclass(obj, np.generic)):
                return self.const(scalar_type(obj), e)  # np.float64 -> its ScalarType int
            if isinstance(obj, (bool, int, float)) or isinstance(obj, pytypes.ModuleType):
                return self.python_value(obj, attr, e)
            if callable(obj):
                return OpName(attr, sv.root)
            raise self.error(f"'{sv.mod.__name__}.{attr}' cannot be used in a scripted function",
                             e)
        if isinstance(sv, Value):
            if sv.type.is_tensor() and attr in TENSOR_PROPERTIES:
                # x.T, x.shape, x.ndim: properties TorchScript records as ops
                out = self.emit_op(TENSOR_PROPERTIES[attr], [sv], {}, e)
                out.type = {"shape": ListType(INT), "ndim": INT}.get(attr, out.type)
                return out
            return Method(sv, attr)
        if isinstance(sv, ModuleValue):
            return self.module_attribute(sv, e)
        if isinstance(sv, ObjectRef):
            obj = getattr(sv.obj, attr, None)
            if obj is None or isinstance(obj, (bool, int, float, str)):
                return self.const(obj, e)
            raise self.error(f"attribute 'self.{attr}' ({type(obj).__name__}) is not supported; "
                             f"pass it as an argument", e)
        raise self.error(f"{sv.describe()} has no attribute '{attr}' in a scripted function", e)
