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
"""
from __future__ import annotations

import ast
import builtins
import inspect
import math
import os
import textwrap
import types as pytypes
from typing import Any, Dict, List, Optional

from ..errors import ScriptError
from ..ir.graph import Block, Graph, Value
from ..ir.types import (BOOL, FLOAT, INT, NONE, STR, TENSOR, ListType, TupleType, Type,
                        type_of_python_value)
from ..ops import elementwise_base, registry
from ..ops.dtypes import Priority
from ..ops.registry import OpDef, Param

__all__ = ["script_graph"]

INT64_MAX = 9223372036854775807

_BINOPS = {ast.Add: "aten::add", ast.Sub: "aten::sub", ast.Mult: "aten::mul", ast.Div: "aten::div",
           ast.FloorDiv: "aten::floor_divide", ast.Mod: "aten::remainder", ast.Pow: "aten::pow",
           ast.BitAnd: "aten::__and__", ast.BitOr: "aten::__or__", ast.BitXor: "aten::__xor__",
           ast.MatMult: "aten::matmul"}
_CMPOPS = {ast.Eq: "aten::eq", ast.NotEq: "aten::ne", ast.Lt: "aten::lt", ast.LtE: "aten::le",
           ast.Gt: "aten::gt", ast.GtE: "aten::ge"}
# Result types of the scalar ops the front end emits itself (not elementwise in the registry).
_SCALAR_RESULT = {"aten::Float": FLOAT, "aten::Int": INT, "aten::Bool": BOOL, "aten::len": INT,
                  "aten::__not__": BOOL}
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
_BUILTINS = {id(getattr(builtins, n)): n for n in ("float", "int", "bool", "len", "print",
                                                     "range", "abs")}
# numpy spellings whose registry alias may be missing (the registry's aliases come first).
_NUMPY_NAMES = {"multiply": "mul", "subtract": "sub", "divide": "div", "true_divide": "div",
                "negative": "neg", "power": "pow", "absolute": "abs", "mod": "remainder",
                "clip": "clamp", "greater": "gt", "less": "lt", "equal": "eq"}
_NUMPY_KWARGS = {"axis": "dim", "keepdims": "keepdim"}


# -- compile-time values -------------------------------------------------------------------------
class _Sugar:
    """A compile-time value: a module, a function, a bound method, a tuple literal, ..."""

    def describe(self) -> str:
        return type(self).__name__.strip("_").lower()


class _Module(_Sugar):
    def __init__(self, mod):
        self.mod = mod
        self.root = mod.__name__.split(".")[0]

    def describe(self):
        return f"module '{self.mod.__name__}'"


class _OpName(_Sugar):
    """``tl.tanh``, ``np.exp``, ``math.exp``: a registry op looked up by name when called."""

    def __init__(self, name: str, origin: str):
        self.name, self.origin = name, origin

    def describe(self):
        return f"function '{self.origin}.{self.name}'"


class _Method(_Sugar):
    def __init__(self, value: Value, name: str):
        self.value, self.name = value, name

    def describe(self):
        return f"attribute '{self.name}' of a {self.value.type} value"


class _Builtin(_Sugar):
    def __init__(self, name: str):
        self.name = name

    def describe(self):
        return f"builtin '{self.name}'"


class _Function(_Sugar):
    def __init__(self, fn):
        self.fn = fn

    def describe(self):
        return f"function '{self.fn.__name__}'"


class _Object(_Sugar):
    """``self`` of a bound method: only its Python scalar attributes can be read."""

    def __init__(self, obj):
        self.obj = obj


class _Seq(_Sugar):
    """A tuple or list literal, kept as its items until it must become one value."""

    def __init__(self, items: list, kind: str = "tuple"):
        self.items, self.kind = list(items), kind


class _Static(_Sugar):
    """A condition known while compiling (``x is None``): only the taken branch is compiled."""

    def __init__(self, value: bool):
        self.value = value


class _Undefined(_Sugar):
    """A name that is not defined on every path; using it is an error with this message."""

    def __init__(self, message: str):
        self.message = message


class _Pending(Type):
    """The type of a loop's "returned value" slot before any ``return`` in the loop was seen."""

    def __init__(self):
        self.resolved: Optional[Type] = None

    def __str__(self):
        return str(self.resolved) if self.resolved is not None else "Any"


def _deref(t: Type) -> Type:
    while isinstance(t, _Pending) and t.resolved is not None:
        t = t.resolved
    return t


def _unify(a: Type, b: Type) -> Optional[Type]:
    """The common type of two values merged by an if or a loop, or None if they differ."""
    a, b = _deref(a), _deref(b)
    if isinstance(a, _Pending) or isinstance(b, _Pending):
        if a is b:
            return a
        pending, other = (a, b) if isinstance(a, _Pending) else (b, a)
        pending.resolved = other
        return other
    if a == b:
        return a
    if a.is_tensor() and b.is_tensor():
        return TENSOR
    if isinstance(a, TupleType) and isinstance(b, TupleType) and len(a.elems) == len(b.elems):
        elems = [_unify(x, y) for x, y in zip(a.elems, b.elems)]
        return None if any(e is None for e in elems) else TupleType(tuple(elems))
    return None




def _scalar_dtype(t: Type) -> str:
    return {BOOL: "bool", INT: "int64"}.get(t, "float64")


def _list_elem(param: Param) -> Optional[Type]:
    """``int[]``, ``int[1]?``, ``Tensor[]`` -> the element type; None for other schema types
    (a generic ``t[]`` takes any list, tuple or tensor as it is)."""
    if "[" not in param.type:
        return None
    return {"int": INT, "float": FLOAT, "bool": BOOL, "Tensor": TENSOR}.get(
        param.type.split("[")[0])


# -- source locations ------------------------------------------------------------------------------
class _Frame:
    """One Python function being compiled: its source, its AST and where its names come from."""

    def __init__(self, fn):
        self.fn = fn
        try:
            lines, first = inspect.getsourcelines(fn)
            path = inspect.getsourcefile(fn) or fn.__code__.co_filename
        except (OSError, TypeError) as e:
            raise ScriptError(f"cannot script '{getattr(fn, '__qualname__', fn)}': its source "
                              f"is not available ({e})") from None
        self.path, self.filename = path, os.path.basename(path)
        self.first = max(first, 1)
        self.lines = lines
        dedented = textwrap.dedent("".join(lines))
        self.dedented = dedented.splitlines()
        first_text = next((ln for ln in lines if ln.strip()), "")
        self.indent = len(first_text) - len(textwrap.dedent(first_text))
        try:
            tree = ast.parse(dedented)
        except SyntaxError as e:
            raise ScriptError(f"cannot parse the source of '{fn.__qualname__}': {e}") from None
        fdef = tree.body[0] if tree.body else None
        if not isinstance(fdef, ast.FunctionDef):
            what = "lambdas" if fn.__name__ == "<lambda>" else "this kind of callable"
            raise ScriptError(f"{what} cannot be scripted: '{fn.__qualname__}' needs a def "
                              f"statement (File \"{path}\", line {self.first})")
        self.fdef = fdef
        self.globals = fn.__globals__
        self.closure: Dict[str, Any] = {}
        for name, cell in zip(fn.__code__.co_freevars, fn.__closure__ or ()):
            try:
                self.closure[name] = cell.cell_contents
            except ValueError:
                pass

    def loc(self, node) -> tuple:
        """(line in the file, 1-based; column in the file's line, 0-based)."""
        lineno = getattr(node, "lineno", 1)
        col = getattr(node, "col_offset", 0)
        text = self.dedented[lineno - 1] if 0 < lineno <= len(self.dedented) else ""
        col = len(text.encode()[:col].decode(errors="ignore"))  # ast counts UTF-8 bytes
        return self.first + lineno - 1, col + self.indent

    def source(self, node) -> str:
        line, col = self.loc(node)
        return f"{self.filename}:{line}:{col}"

    def error(self, message: str, node) -> ScriptError:
        line, col = self.loc(node)
        index = line - self.first
        text = self.lines[index].rstrip("\r\n") if 0 <= index < len(self.lines) else ""
        lead = len(text) - len(text.lstrip())
        caret = " " * (4 + max(col - lead, 0)) + "^"
        return ScriptError(f"{message}\n  File \"{self.path}\", line {line}\n"
                           f"    {text.strip()}\n{caret}")


# -- scopes: what a block hands back when control leaves it ---------------------------------------
class _FuncScope:
    """A function body: every path ends with its return value."""

    loop = False

    def slot_names(self) -> List[str]:
        return ["the return value"]

    def exit(self, em: "_Emitter", kind: str, stmt) -> list:
        if kind == "return" and stmt.value is not None:
            return [em.expr(stmt.value)]
        return [em.const(None)]


class _LoopScope:
    """A loop body: every path ends with ``(continue?, *carried)``."""

    loop = True

    def __init__(self, carried: List[str], test: Optional[ast.expr]):
        self.carried, self.test = carried, test

    def slot_names(self) -> List[str]:
        names = [n if not n.startswith("$") else "the value returned inside the loop"
                 for n in self.carried]
        return ["the loop condition"] + [f"'{n}'" if not n.startswith("the") else n
                                         for n in names]

    def exit(self, em: "_Emitter", kind: str, stmt) -> list:
        if kind == "return":
            value = em.expr(stmt.value) if stmt.value is not None else em.const(None)
            em.env["$returned"] = em.const(True)
            em.env["$retval"] = em.materialize(value, stmt)
            cond = em.const(False)
        elif kind == "break":
            cond = em.const(False)
        elif self.test is not None:  # while: the condition is computed again at the end
            cond = em.condition_value(self.test)
        else:
            cond = em.const(True)
        return [cond] + [em.materialize(em.lookup(n, stmt), stmt) for n in self.carried]


def _walk(stmts, into_loops=True):
    """Every AST node under ``stmts``; with into_loops=False, loop bodies are skipped."""
    stack = list(stmts)
    while stack:
        node = stack.pop()
        yield node
        if not into_loops and isinstance(node, (ast.For, ast.While)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def _loop_targets(stmts) -> List[str]:
    """Names bound by for loops under ``stmts`` (undefined after their loop, never carried)."""
    return sorted({n.target.id for n in _walk(stmts)
                   if isinstance(n, ast.For) and isinstance(n.target, ast.Name)})


def _assigned_names(stmts) -> List[str]:
    targets = set(_loop_targets(stmts))
    return sorted({node.id for node in _walk(stmts) if isinstance(node, ast.Name)
                   and isinstance(node.ctx, ast.Store) and node.id not in targets})


def _contains_return(stmts) -> bool:
    return any(isinstance(n, ast.Return) for n in _walk(stmts))


def _may_exit(stmt, scope) -> bool:
    if _contains_return([stmt]):
        return True
    return scope is not None and scope.loop and any(
        isinstance(n, (ast.Break, ast.Continue)) for n in _walk([stmt], into_loops=False))


# -- the emitter -----------------------------------------------------------------------------------
class _Emitter:
    def __init__(self):
        self.graph = Graph()
        self.block: Block = self.graph.block
        self.env: Dict[str, Any] = {}
        self.frame: Optional[_Frame] = None
        self.inlining: List[Any] = []      # code objects being compiled (recursion guard)
        self._frames: Dict[Any, _Frame] = {}
        self._consts: Dict[tuple, Value] = {}
        self._nconsts = 0

    def error(self, message: str, node) -> ScriptError:
        return self.frame.error(message, node)

    def frame_of(self, fn) -> _Frame:
        frame = self._frames.get(fn.__code__)
        if frame is None:
            frame = self._frames[fn.__code__] = _Frame(fn)
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
        return self.graph.create(kind, inputs, out_types, block=self.block, names=names,
                                 source=self.frame.source(node) if node is not None else None)

    def add_outputs(self, n, types_, names):
        for t, name in zip(types_, names):
            n.outputs.append(Value(self.graph.fresh_name(name), t, node=n))
        return n.outputs

    def ops_by_name(self, name: str) -> Optional[OpDef]:
        from ..functional import find_op  # the namespace's own lookup (python_name, aliases)
        return find_op(name) if "::" not in name else None

    def find_op(self, name: str, origin: str, node) -> OpDef:
        op = self.ops_by_name(name)
        if op is None and origin == "numpy":
            op = self.ops_by_name(_NUMPY_NAMES.get(name, ""))
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
            if op.params:
                try:
                    bound = op.bind(args, dict(kwargs))
                except TypeError as e:
                    raise self.error(f"bad arguments for {op.name}: {e}", node) from None
                inputs = [self.argument(a, p, node) for a, p in zip(bound, op.params)]
            else:
                inputs = [self.materialize(a, node) for a in args]
        result_types = self.result_types(op, kind, inputs)
        n = self.create(kind, inputs, result_types, node)
        if op is not None and op.infer is not None and any(t.is_tensor() for t in result_types):
            try:  # the registry may know more (a list from chunk); keep our guess otherwise
                inferred = op.infer(n, [v.type for v in inputs])
                if len(inferred) == len(n.outputs) and all(isinstance(t, Type) for t in inferred):
                    for v, t in zip(n.outputs, inferred):
                        v.type = t
            except Exception:  # noqa: BLE001 - inference is optional here
                pass
        return n.outputs[0] if len(n.outputs) == 1 else _Seq(n.outputs)

    def result_types(self, op: Optional[OpDef], kind: str, inputs: List[Value]) -> List[Type]:
        if kind in _SCALAR_RESULT:
            return [_SCALAR_RESULT[kind]]
        if op is not None and op.is_elementwise:
            operands = [v for p, v in zip(op.params, inputs) if p.is_operand]
            if operands and not any(v.type.is_tensor() for v in operands):
                # All scalars: TorchScript scalar arithmetic, a Python scalar (see
                # elementwise_base._scalar_call, whose result dtype this mirrors).
                dtypes = [None if v.type == NONE else _scalar_dtype(v.type) for v in operands]
                attrs = {p.name: v.constant_value() for p, v in zip(op.params, inputs)
                         if not p.is_operand}
                try:
                    out = elementwise_base.scalar_signature_dtypes(op, dtypes, attrs)[1]
                except Exception:  # noqa: BLE001
                    return [TENSOR]
                return [BOOL if out == "bool" else FLOAT if "float" in out else INT]
            return [TENSOR]
        if kind in ("aten::chunk", "aten::split", "aten::unbind"):
            return [ListType(TENSOR)]
        n = op.num_outputs if op is not None and op.num_outputs else 1
        return [TENSOR] * n

    def argument(self, arg, param: Param, node) -> Value:
        """One bound argument as a Value: defaults become constants, ints for ``int[]`` lists."""
        if not isinstance(arg, (Value, _Sugar)):
            return self.const(arg)
        elem = _list_elem(param)
        if elem is not None:
            if isinstance(arg, _Seq):
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
        if isinstance(sv, _Seq):
            items = [self.materialize(i, node) for i in sv.items]
            if sv.kind == "list":
                elem = items[0].type if items else TENSOR
                return self.create("prim::ListConstruct", items, [ListType(elem)], node).output()
            t = TupleType(tuple(v.type for v in items))
            return self.create("prim::TupleConstruct", items, [t], node).output()
        if isinstance(sv, _Static):
            return self.const(sv.value, node)
        if isinstance(sv, _Undefined):
            raise self.error(sv.message, node)
        raise self.error(f"{sv.describe()} cannot be used as a value in a scripted function", node)

    def enter(self, block: Block, env: Dict[str, Any]):
        saved = (self.block, self.env)
        self.block, self.env = block, env
        return saved

    def leave(self, saved):
        self.block, self.env = saved

    # -- names -----------------------------------------------------------------------------------
    def lookup(self, name: str, node):
        if name in self.env:
            sv = self.env[name]
            if isinstance(sv, _Undefined):
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
            return _Seq([self.const(o, node) for o in obj])
        if isinstance(obj, pytypes.ModuleType):
            return _Module(obj)
        if id(obj) in _BUILTINS and getattr(builtins, _BUILTINS[id(obj)]) is obj:
            return _Builtin(_BUILTINS[id(obj)])
        if isinstance(obj, pytypes.BuiltinFunctionType) \
                and getattr(math, obj.__name__, None) is obj:
            return _OpName(obj.__name__, "math")
        root = (getattr(obj, "__module__", None) or "").split(".")[0]
        if isinstance(obj, pytypes.FunctionType) and root not in ("torchlike", "torch"):
            return _Function(obj)
        fname = getattr(obj, "__name__", None)
        if callable(obj) and fname and (root in ("torchlike", "torch", "numpy")
                                        or type(obj).__name__ == "ufunc"):
            return _OpName(fname, "numpy" if root != "torchlike" and root != "torch" else root)
        if isinstance(obj, builtins.type(len)):
            raise self.error(f"builtin '{name}' is not supported in scripted functions", node)
        raise self.error(f"'{name}' (a {type(obj).__name__}) cannot be used in a scripted "
                         f"function", node)

    def attribute(self, sv, e: ast.Attribute):
        attr = e.attr
        if isinstance(sv, _Module):
            if sv.root in ("torchlike", "torch") and self.ops_by_name(attr) is not None:
                return _OpName(attr, sv.root)
            if not hasattr(sv.mod, attr):
                if sv.root == "numpy" and self.ops_by_name(_NUMPY_NAMES.get(attr, "")):
                    return _OpName(attr, "numpy")
                if sv.root in ("torchlike", "torch"):
                    raise self.error(f"{sv.root}.{attr} has no op in torchlike's registry", e)
                raise self.error(f"module '{sv.mod.__name__}' has no attribute '{attr}'", e)
            obj = getattr(sv.mod, attr)
            if isinstance(obj, (bool, int, float)) or isinstance(obj, pytypes.ModuleType):
                return self.python_value(obj, attr, e)
            if callable(obj):
                return _OpName(attr, sv.root)
            raise self.error(f"'{sv.mod.__name__}.{attr}' cannot be used in a scripted function",
                             e)
        if isinstance(sv, Value):
            return _Method(sv, attr)
        if isinstance(sv, _Object):
            obj = getattr(sv.obj, attr, None)
            if obj is None or isinstance(obj, (bool, int, float, str)):
                return self.const(obj, e)
            raise self.error(f"attribute 'self.{attr}' ({type(obj).__name__}) is not supported; "
                             f"pass it as an argument", e)
        raise self.error(f"{sv.describe()} has no attribute '{attr}' in a scripted function", e)

    # -- expressions ---------------------------------------------------------------------------
    def expr(self, e):
        method = getattr(self, "expr_" + type(e).__name__, None)
        if method is None:
            what = _UNSUPPORTED.get(type(e), f"{type(e).__name__} expressions")
            raise self.error(f"{what} are not supported in scripted functions", e)
        return method(e)

    def expr_Constant(self, e):
        if e.value is None or isinstance(e.value, (bool, int, float, str)):
            return self.const(e.value, e)
        raise self.error(f"constants of type {type(e.value).__name__} are not supported", e)

    def expr_Name(self, e):
        return self.lookup(e.id, e)

    def expr_Attribute(self, e):
        return self.attribute(self.expr(e.value), e)

    def expr_Tuple(self, e):
        return _Seq([self.expr(x) for x in e.elts])

    def expr_List(self, e):
        return _Seq([self.expr(x) for x in e.elts], "list")

    def expr_BinOp(self, e):
        kind = _BINOPS.get(type(e.op))
        if kind is None:
            raise self.error(f"operator {type(e.op).__name__} is not supported", e)
        left = self.materialize(self.expr(e.left), e.left)
        right = self.materialize(self.expr(e.right), e.right)
        return self.binary(kind, left, right, e)

    def binary(self, kind, left: Value, right: Value, e):
        if kind == "aten::floor_divide" and not (left.type.is_tensor() or right.type.is_tensor()):
            # TorchScript: floordiv on Python numbers, floor_divide on tensors.
            if registry.lookup("aten::floordiv") is not None or \
                    registry.lookup("aten::floor_divide") is None:
                kind = "aten::floordiv"
        return self.emit_op(kind, [left, right], {}, e)

    def expr_UnaryOp(self, e):
        if isinstance(e.op, (ast.USub, ast.UAdd)) and isinstance(e.operand, ast.Constant) \
                and type(e.operand.value) in (int, float):
            value = e.operand.value
            return self.const(-value if isinstance(e.op, ast.USub) else value, e)
        if isinstance(e.op, ast.Not):
            return self.emit_op("aten::__not__", [self.condition(e.operand)], {}, e)
        v = self.materialize(self.expr(e.operand), e.operand)
        if isinstance(e.op, ast.UAdd):
            return v
        kind = "aten::neg" if isinstance(e.op, ast.USub) else "aten::bitwise_not"
        return self.emit_op(kind, [v], {}, e)

    def expr_BoolOp(self, e):
        # a and b -> if a: b else: False;  a or b -> if a: True else: b  (short-circuit)
        result = self.condition(e.values[0])
        for operand in e.values[1:]:
            result = self.short_circuit(result, operand, isinstance(e.op, ast.And), e)
        return result

    def short_circuit(self, first: Value, operand, is_and: bool, e) -> Value:
        n = self.create("prim::If", [first], [], e)
        for i in range(2):
            block = n.add_block()
            saved = self.enter(block, dict(self.env))
            if (i == 0) == is_and:
                block.returns = [self.condition(operand)]
            else:
                block.returns = [self.const(not is_and)]
            self.leave(saved)
        return self.add_outputs(n, [BOOL], [None])[0]

    def expr_Compare(self, e):
        left = self.expr(e.left)
        result = None
        for op, comparator in zip(e.ops, e.comparators):
            right = self.expr(comparator)
            if isinstance(op, (ast.Is, ast.IsNot)):
                cmp = self.identity(left, right, isinstance(op, ast.Is), e)
            elif type(op) in _CMPOPS:
                cmp = self.emit_op(_CMPOPS[type(op)], [self.materialize(left, e.left),
                                                       self.materialize(right, comparator)], {}, e)
            else:
                raise self.error(f"comparison operator {type(op).__name__} is not supported", e)
            if result is None:
                result = cmp
            else:  # a < b < c: (a < b) and (b < c), b computed once
                first, second = self.truth(result, e), self.truth(cmp, e)
                n = self.create("prim::If", [first], [], e)
                b0, b1 = n.add_block(), n.add_block()
                b0.returns = [second]
                b1.returns = [self.const(False)]
                result = self.add_outputs(n, [BOOL], [None])[0]
            left = right
        return result

    def identity(self, left, right, is_, e):
        types_ = [(sv.type if isinstance(sv, Value) else None) for sv in (left, right)]
        if NONE in types_:
            other = types_[1] if types_[0] == NONE else types_[0]
            if other is not None:
                return _Static((other == NONE) == is_)
        raise self.error("'is' is only supported for comparisons with None", e)

    def expr_IfExp(self, e):
        cond = self.condition(e.test)
        if isinstance(cond, _Static):
            return self.expr(e.body if cond.value else e.orelse)
        n = self.create("prim::If", [cond], [], e)
        results = []
        for branch in (e.body, e.orelse):
            block = n.add_block()
            saved = self.enter(block, dict(self.env))
            block.returns = [self.materialize(self.expr(branch), branch)]
            results.append(block.returns[0])
            self.leave(saved)
        t = _unify(results[0].type, results[1].type)
        if t is None:
            raise self.error(f"the branches of this conditional expression have different types "
                             f"({results[0].type} and {results[1].type})", e)
        return self.add_outputs(n, [t], [None])[0]

    def expr_Subscript(self, e):
        base = self.expr(e.value)
        index = e.slice
        if isinstance(index, (ast.Slice, ast.Tuple)):
            raise self.error("slicing and multi-dimensional indexing are not supported in "
                             "scripted functions", e)
        idx = self.materialize(self.expr(index), index)
        i = idx.constant_value()
        if idx.type == INT and i is not None:  # a literal index (x[-1] folds to a constant)
            if isinstance(base, _Seq):
                if not -len(base.items) <= i < len(base.items):
                    raise self.error(f"index {i} is out of range for a tuple of "
                                     f"{len(base.items)} items", e)
                return base.items[i]
            if isinstance(base, Value) and isinstance(base.type, TupleType):
                elems = base.type.elems
                if not -len(elems) <= i < len(elems):
                    raise self.error(f"index {i} is out of range for {base.type}", e)
                return self.create("prim::TupleIndex", [base, self.const(i)], [elems[i]],
                                   e).output()
        if isinstance(base, Value) and isinstance(base.type, ListType) and idx.type == INT:
            return self.create("aten::__getitem__", [base, idx], [base.type.elem], e).output()
        raise self.error("indexing is only supported for tuples and lists (tensor indexing and "
                         "slicing are not supported in scripted functions)", e)

    def truth(self, sv, node) -> Value:
        """A value as a bool Value: tensors and numbers go through aten::Bool."""
        if isinstance(sv, _Static):
            return self.const(sv.value, node)
        v = self.materialize(sv, node)
        if v.type == BOOL:
            return v
        if v.type.is_tensor() or v.type in (INT, FLOAT):
            return self.emit_op("aten::Bool", [v], {}, node)
        raise self.error(f"a value of type {v.type} cannot be used as a condition", node)

    def condition(self, e):
        """A condition: a bool Value, or _Static when known while compiling."""
        sv = self.expr(e)
        return sv if isinstance(sv, _Static) else self.truth(sv, e)

    def condition_value(self, e) -> Value:
        return self.truth(self.condition(e), e)

    # -- calls -----------------------------------------------------------------------------------
    def expr_Call(self, e):
        callee = self.expr(e.func)
        for a in e.args:
            if isinstance(a, ast.Starred):
                raise self.error("starred arguments (*args) are not supported in scripted "
                                 "functions", a)
        for k in e.keywords:
            if k.arg is None:
                raise self.error("keyword argument unpacking (**kwargs) is not supported in "
                                 "scripted functions", k.value)
        if isinstance(callee, _Builtin) and callee.name == "range":
            raise self.error("range() is only supported as the iterable of a for loop", e)
        args = [self.expr(a) for a in e.args]
        kwargs = {k.arg: self.expr(k.value) for k in e.keywords}
        if isinstance(callee, _OpName):
            op = self.find_op(callee.name, callee.origin, e.func)
            if callee.origin == "numpy":
                kwargs = {_NUMPY_KWARGS.get(k, k): v for k, v in kwargs.items()}
            return self.emit_op(op.name, args, kwargs, e, op=op)
        if isinstance(callee, _Method):
            op = self.ops_by_name(callee.name)
            if op is None or not op.params or op.params[0].name != "self":
                raise self.error(f"tensor method '{callee.name}' has no op in torchlike's "
                                 f"registry", e.func)
            return self.emit_op(op.name, [callee.value] + args, kwargs, e, op=op)
        if isinstance(callee, _Builtin):
            return self.call_builtin(callee.name, args, kwargs, e)
        if isinstance(callee, _Function):
            return self.inline(callee.fn, args, kwargs, e)
        desc = callee.describe() if isinstance(callee, _Sugar) else f"a {callee.type} value"
        raise self.error(f"{desc} is not callable in a scripted function", e.func)

    def call_builtin(self, name, args, kwargs, e):
        if kwargs and name != "print":
            raise self.error(f"{name}() takes no keyword arguments here", e)
        if name == "print":
            if kwargs:
                raise self.error("print() keyword arguments (sep, end, file) are not supported", e)
            values = [self.materialize(a, e) for a in args]
            self.create("prim::Print", values, [], e)
            return self.const(None)
        if len(args) != 1:
            raise self.error(f"{name}() takes exactly one argument here", e)
        if name == "len":
            arg = args[0]
            if isinstance(arg, _Seq):
                return self.const(len(arg.items), e)
            v = self.materialize(arg, e)
            if isinstance(v.type, TupleType):
                return self.const(len(v.type.elems), e)
            return self.emit_op("aten::len", [v], {}, e)
        v = self.materialize(args[0], e)
        if name == "abs":
            return self.emit_op("aten::abs", [v], {}, e)
        target = {"float": FLOAT, "int": INT, "bool": BOOL}[name]
        if v.type == target:
            return v
        if not (v.type.is_tensor() or v.type in (INT, FLOAT, BOOL)):
            raise self.error(f"{name}() of a {v.type} value is not supported", e)
        return self.emit_op("aten::" + name.capitalize(), [v], {}, e)

    def inline(self, fn, args, kwargs, e):
        """Compile a helper's body in place (TorchScript inlines calls too)."""
        if fn.__code__ in self.inlining:
            raise self.error(f"recursive call of '{fn.__name__}': recursion is not supported in "
                             f"scripted functions", e)
        frame = self.frame_of(fn)
        fargs = frame.fdef.args
        if fargs.vararg or fargs.kwarg or fargs.kwonlyargs:
            raise frame.error("*args, **kwargs and keyword-only parameters are not supported in "
                              "scripted functions", frame.fdef)
        params = [a.arg for a in fargs.posonlyargs + fargs.args]
        if len(args) > len(params):
            raise self.error(f"{fn.__name__}() takes {len(params)} arguments, got {len(args)}", e)
        env = dict(zip(params, args))
        defaults = fn.__defaults__ or ()
        first_default = len(params) - len(defaults)
        for i, p in enumerate(params[len(args):], start=len(args)):
            if p in kwargs:
                env[p] = kwargs.pop(p)
            elif i >= first_default:
                env[p] = self.python_value(defaults[i - first_default], p, e)
            else:
                raise self.error(f"{fn.__name__}() is missing argument '{p}'", e)
        if kwargs:
            raise self.error(f"{fn.__name__}() got unexpected arguments {sorted(kwargs)}", e)
        saved = (self.env, self.frame)
        self.env, self.frame = env, frame
        self.inlining.append(fn.__code__)
        try:
            result = self.stmts(frame.fdef.body, _FuncScope())[0]
        finally:
            self.inlining.pop()
            self.env, self.frame = saved
        return result

    # -- statements ----------------------------------------------------------------------------
    def stmts(self, stmts, scope) -> list:
        """Emit a statement list; returns the values ``scope`` hands back at its end."""
        stmts = list(stmts)
        for i, s in enumerate(stmts):
            rest = stmts[i + 1:]
            if isinstance(s, ast.Return):
                return scope.exit(self, "return", s)
            if isinstance(s, (ast.Break, ast.Continue)):
                word = "break" if isinstance(s, ast.Break) else "continue"
                if scope is None or not scope.loop:
                    raise self.error(f"'{word}' outside a loop", s)
                return scope.exit(self, word, s)
            if isinstance(s, ast.If) and _may_exit(s, scope):
                return self.if_exit(s.test, s.body + rest, s.orelse + rest, scope, s)
            if isinstance(s, (ast.For, ast.While)):
                if self.loop(s):  # it may have returned: test the flag, the rest goes on else
                    test = ast.copy_location(ast.Name("$returned", ast.Load()), s)
                    ret = ast.copy_location(ast.Return(ast.Name("$retval", ast.Load())), s)
                    ret.value = ast.copy_location(ret.value, s)
                    return self.if_exit(test, [ret], rest, scope, s)
                continue
            self.stmt(s)
        return scope.exit(self, "fall", None) if scope is not None else []

    def stmt(self, s):
        method = getattr(self, "stmt_" + type(s).__name__, None)
        if method is None:
            what = _UNSUPPORTED.get(type(s), f"{type(s).__name__} statements")
            raise self.error(f"{what} are not supported in scripted functions", s)
        method(s)

    def stmt_Pass(self, s):
        pass

    def stmt_Expr(self, s):
        if isinstance(s.value, ast.Constant) and isinstance(s.value.value, str):
            return  # a docstring
        self.expr(s.value)

    def stmt_Assign(self, s):
        value = self.expr(s.value)
        for target in s.targets:
            self.assign(target, value, s)

    def stmt_AnnAssign(self, s):
        if s.value is None:
            raise self.error("a declaration without a value is not supported", s)
        self.assign(s.target, self.expr(s.value), s)

    def stmt_AugAssign(self, s):
        if not isinstance(s.target, ast.Name):
            raise self.error("augmented assignment is only supported to plain names", s.target)
        kind = _BINOPS.get(type(s.op))
        if kind is None:
            raise self.error(f"operator {type(s.op).__name__} is not supported", s)
        left = self.materialize(self.lookup(s.target.id, s.target), s.target)
        right = self.materialize(self.expr(s.value), s.value)
        self.assign(s.target, self.binary(kind, left, right, s), s)

    def assign(self, target, value, s):
        if isinstance(target, ast.Name):
            if isinstance(value, Value) and value.node is not None and value.name.isdigit() \
                    and value.node.kind != "prim::Constant":
                value.name = self.graph.fresh_name(target.id)  # %new_h, as TorchScript names it
            self.env[target.id] = value
        elif isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(t, ast.Starred) for t in target.elts):
                raise self.error("starred assignment is not supported", target)
            n = len(target.elts)
            if isinstance(value, _Seq):
                items = value.items
            else:
                v = self.materialize(value, s.value if hasattr(s, "value") else s)
                if isinstance(v.type, TupleType):
                    items = self.create("prim::TupleUnpack", [v], list(v.type.elems), s).outputs
                elif isinstance(v.type, ListType):
                    items = self.create("prim::ListUnpack", [v], [v.type.elem] * n, s).outputs
                else:
                    raise self.error(f"cannot unpack a value of type {v.type}", target)
            if len(items) != n:
                raise self.error(f"cannot unpack {len(items)} values into {n} names", target)
            for t, item in zip(target.elts, items):
                self.assign(t, item, s)
        elif isinstance(target, ast.Subscript):
            raise self.error("assignment to an index or slice (x[i] = ...) is not supported in "
                             "scripted functions", target)
        elif isinstance(target, ast.Attribute):
            raise self.error("attribute assignment is not supported in scripted functions",
                             target)
        else:
            raise self.error(f"cannot assign to {type(target).__name__}", target)

    def stmt_Assert(self, s):
        cond = self.condition(s.test)
        if isinstance(cond, _Static) and cond.value:
            return
        if s.msg is not None and not (isinstance(s.msg, ast.Constant)
                                      and isinstance(s.msg.value, str)):
            raise self.error("assert messages must be string literals", s.msg)
        message = self.const("AssertionError: " + (s.msg.value if s.msg is not None else ""),
                             s.msg or s)
        n = self.create("prim::If", [self.truth(cond, s)], [], s)
        n.add_block()
        fail = n.add_block()
        saved = self.enter(fail, self.env)
        self.create("prim::RaiseException", [message, self.const(None)], [], s)
        self.leave(saved)

    def stmt_If(self, s):
        """An if that every path leaves normally: outputs are the names either branch set."""
        cond = self.condition(s.test)
        if isinstance(cond, _Static):
            self.stmts(s.body if cond.value else s.orelse, None)
            return
        n = self.create("prim::If", [cond], [], s)
        before = self.env
        envs, blocks = [], []
        for branch in (s.body, s.orelse):
            block = n.add_block()
            saved = self.enter(block, dict(before))
            self.stmts(branch, None)
            envs.append(self.env)
            blocks.append(block)
            self.leave(saved)
        names = [k for k in dict.fromkeys(list(envs[0]) + list(envs[1]))
                 if envs[0].get(k) is not before.get(k) or envs[1].get(k) is not before.get(k)]
        merged, out_names, out_types = [], [], []
        line = self.frame.loc(s)[0]
        for name in names:
            a, b = envs[0].get(name), envs[1].get(name)
            missing = [side for side, v in (("true", a), ("false", b))
                       if v is None or isinstance(v, _Undefined)]
            if missing:
                self.env[name] = _Undefined(f"'{name}' is not defined in the {missing[0]} branch "
                                            f"of the if at line {line}")
                continue
            if isinstance(a, (_Module, _Function, _OpName, _Builtin)) and a is b:
                self.env[name] = a
                continue
            values = []
            for block, v in zip(blocks, (a, b)):
                saved = self.enter(block, self.env)
                values.append(self.materialize(v, s))
                self.leave(saved)
            t = _unify(values[0].type, values[1].type)
            if t is None:
                raise self.error(f"'{name}' has type {values[0].type} in the true branch and "
                                 f"{values[1].type} in the false branch", s)
            merged.append(values)
            out_names.append(name)
            out_types.append(t)
        blocks[0].returns = [v[0] for v in merged]
        blocks[1].returns = [v[1] for v in merged]
        for name, out in zip(out_names, self.add_outputs(n, out_types, out_names)):
            self.env[name] = out

    def if_exit(self, test, body, orelse, scope, where) -> list:
        """An if with a branch that leaves the scope: both branches run to the scope's end,
        so the if's outputs are what the scope hands back."""
        cond = self.condition(test)
        if isinstance(cond, _Static):
            return self.stmts(body if cond.value else orelse, scope)
        n = self.create("prim::If", [cond], [], where)
        results = []
        for branch in (body, orelse):
            block = n.add_block()
            saved = self.enter(block, dict(self.env))
            block.returns = [self.materialize(v, where) for v in self.stmts(branch, scope)]
            results.append(block.returns)
            self.leave(saved)
        out_types = []
        for i, (a, b) in enumerate(zip(*results)):
            t = _unify(a.type, b.type)
            if t is None:
                slot = scope.slot_names()[min(i, len(scope.slot_names()) - 1)]
                raise self.error(f"{slot} has type {a.type} on one path and {b.type} on another",
                                 where)
            out_types.append(t)
        return self.add_outputs(n, out_types, [None] * len(out_types))

    def loop(self, s) -> bool:
        """Emit a for-range or while loop as prim::Loop; True if a return may leave it."""
        kind = "for" if isinstance(s, ast.For) else "while"
        if s.orelse:
            raise self.error(f"{kind}-else is not supported in scripted functions", s)
        start = step = None
        if isinstance(s, ast.For):
            if not isinstance(s.target, ast.Name):
                raise self.error("for loops must bind a single name", s.target)
            it = s.iter
            callee = self.expr(it.func) if isinstance(it, ast.Call) else None
            if not (isinstance(callee, _Builtin) and callee.name == "range"):
                raise self.error("for loops are only supported over range(...) in scripted "
                                 "functions", it)
            if it.keywords or not 1 <= len(it.args) <= 3:
                raise self.error("range() takes 1 to 3 positional arguments", it)
            bounds = [self.materialize(self.expr(a), a) for a in it.args]
            for a, v in zip(it.args, bounds):
                if v.type != INT:
                    raise self.error(f"range() arguments must be int, not {v.type}", a)
            if len(bounds) == 1:
                trip = bounds[0]
            else:
                start, stop = bounds[0], bounds[1]
                step = bounds[2] if len(bounds) == 3 else self.const(1)
                # As TorchScript: the trip count is __range_length(start, stop, step) and the
                # loop variable __derive_index(iteration, start, step).
                trip = self.emit_op("aten::__range_length", [start, stop, step], {}, it)
            init_cond = self.const(True, s)
            test = None
            body_names = [n for n in _assigned_names(s.body) if n != s.target.id]
        else:
            init_cond = self.truth(self.condition(s.test), s.test)
            trip = self.const(INT64_MAX, s)
            test = s.test
            body_names = _assigned_names(s.body)
        carried = [n for n in body_names if isinstance(self.env.get(n), (Value, _Seq, _Static))]
        may_return = _contains_return(s.body)
        pending = None
        if may_return:
            self.env["$returned"] = self.const(False)
            if "$retval" not in self.env:
                pending = _Pending()
                self.env["$retval"] = self.create("prim::Uninitialized", [], [pending],
                                                  None).output()
            carried += ["$returned", "$retval"]
        inits = [self.materialize(self.env[n], s) for n in carried]
        n = self.create("prim::Loop", [trip, init_cond] + inits, [], s)
        body = n.add_block()
        index = body.add_param(None, INT)
        env = dict(self.env)
        for name, v in zip(carried, inits):
            env[name] = body.add_param(name.lstrip("$"), v.type)
        saved = self.enter(body, env)
        if isinstance(s, ast.For):
            if step is not None:
                index = self.emit_op("aten::__derive_index", [index, start, step], {}, s.iter)
            self.env[s.target.id] = index
        returns = [self.materialize(v, s) for v in self.stmts(s.body, _LoopScope(carried, test))]
        body.returns = returns
        self.leave(saved)
        out_types = []
        for name, param, v in zip(carried, body.params[1:], returns[1:]):
            t = _unify(param.type, v.type)
            if t is None:
                raise self.error(f"loop-carried variable '{name}' has type {param.type} before "
                                 f"the loop and {v.type} at the end of its body", s)
            out_types.append(t)
        if pending is not None:
            _resolve_pending(self.env["$retval"], body)
        out_types = [_deref(t) for t in out_types]
        for name, out in zip(carried, self.add_outputs(n, out_types, [c.lstrip("$")
                                                                      for c in carried])):
            self.env[name] = out
        line = self.frame.loc(s)[0]
        for name in body_names:
            if name not in carried and name not in self.env:
                self.env[name] = _Undefined(f"'{name}' is assigned inside the loop at line {line} "
                                            f"but not defined before it")
        for name in _loop_targets([s]):
            self.env[name] = _Undefined(f"the loop variable '{name}' cannot be used after the "
                                        f"loop at line {line}")
        return may_return


def _resolve_pending(uninit: Value, body: Block) -> None:
    """Give the loop's "returned value" slot its final type everywhere it was used."""
    uninit.type = _deref(uninit.type)
    stack = [body]
    while stack:
        block = stack.pop()
        for p in block.params:
            p.type = _deref(p.type)
        for node in block.nodes:
            for o in node.outputs:
                o.type = _deref(o.type)
            stack.extend(node.blocks)


def _annotation_type(frame: _Frame, ann) -> Type:
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


def script_graph(fn) -> Graph:
    """Compile the Python function ``fn`` into a graph that keeps its control flow.

    Parameters are tensors unless annotated ``int``, ``float``, ``bool`` or ``Tuple[...]``; a
    bound method's ``self`` is not a graph input (its scalar attributes become constants).
    Raises ``ScriptError`` (quoting the line, with a caret) for anything outside the subset
    described in this module's docstring."""
    bound = None
    if inspect.ismethod(fn):
        bound, fn = fn.__self__, fn.__func__
    if not isinstance(fn, pytypes.FunctionType):
        raise ScriptError(f"script_graph expects a Python function, got {type(fn).__name__}")
    em = _Emitter()
    frame = em.frame = em.frame_of(fn)
    fargs = frame.fdef.args
    if fargs.vararg or fargs.kwarg or fargs.kwonlyargs:
        bad = fargs.vararg or fargs.kwarg or fargs.kwonlyargs[0]
        raise frame.error("*args, **kwargs and keyword-only parameters are not supported in "
                          "scripted functions", bad)
    params = fargs.posonlyargs + fargs.args
    if bound is not None and params:
        em.env[params[0].arg] = _Object(bound)
        params = params[1:]
    for a in params:
        em.env[a.arg] = em.graph.add_input(a.arg, _annotation_type(frame, a.annotation))
    em.inlining.append(fn.__code__)
    result = em.stmts(frame.fdef.body, _FuncScope())[0]
    if isinstance(result, _Seq) and result.kind == "tuple":  # PyTorch gives it no source line
        items = [em.materialize(i, frame.fdef) for i in result.items]
        result = em.create("prim::TupleConstruct", items,
                           [TupleType(tuple(v.type for v in items))], None).output()
    em.graph.set_outputs([em.materialize(result, frame.fdef)])
    return em.graph
