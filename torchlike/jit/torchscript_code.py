"""The TorchScript code of a PyTorch archive (``code/__torch__/...py``), compiled by torchlike's
scripter without PyTorch.

PyTorch serializes every module class as Python-syntax source::

    class Linear(Module):
      __parameters__ = ["weight", "bias", ]
      __buffers__ = []
      weight : Tensor
      training : bool
      in_features : Final[int] = 4
      def forward(self: __torch__.torch.nn.modules.linear.Linear,
        input: Tensor) -> Tensor:
        weight = self.weight
        return torch.linear(input, weight, self.bias)

``parse_code_file`` reads one file into ``ArchiveClass``es (parameter and buffer names, typed
attributes, ``Final`` constants, methods) and free functions; nothing in it is executed (only
``ast.literal_eval`` of constants).  Each method is a ``SourceFunction``
(``frontend/script_source.py``) compiled by ``ArchiveLowering``, the scripter with the spellings
of serialized TorchScript:

- ``torch.X(...)`` and ``ops.aten.X(...)`` are the registry op ``aten::X`` (schema binding as
  usual, ``torch.add(x, y, alpha=1)``), ``ops.prim.X(...)`` is ``prim::X``; an op the registry
  lacks is a node of that kind (one tensor output), which raises ``UnsupportedOpError`` naming
  it and its source line when a call reaches it (a branch never taken costs nothing);
- ``(linear).forward(x, )`` is ``prim::CallMethod[name="forward"]``, another method of a module
  is inlined (``(lstm).forward__0(x, None, )``; ``(lstm).forward(x)`` of a module whose forward
  is overloaded inlines the first overload its argument types fit), ``getattr(self, "0")``
  reads the attribute ``0``; a ``List[Tensor]`` attribute of the module's own parameters
  (``self._flat_weights``) is a list of their reads;
- ``__torch__.torch.nn.functional.relu(...)`` calls a free function of the archive (inlined);
- ``annotate(List[int], [])``, ``unchecked_cast(Tensor, y)``, ``uninitialized(Tensor)``,
  ``torch.__is__``/``__isnot__`` with ``None`` (decided while compiling when the types say),
  ``CONSTANTS.c0`` (the archive's tensor constants);
- an ``if`` on a constant compiles only the branch taken, as TorchScript's inliner does (so
  ``relu(x, False)`` never reaches ``torch.relu_``).
"""
from __future__ import annotations

import ast
import math
from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional, Tuple

from ..errors import ScriptError
from ..frontend.script_source import FunctionSource, SourceFunction
from ..frontend.script_statements import StatementLowering
from ..frontend.script_values import (
    BoundMethod,
    Member,
    ModuleValue,
    PythonFunction,
    Seq,
    Static,
    Sugar,
)
from ..ir.graph import Value
from ..ir.types import (
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
    TupleType,
    Type,
    is_array,
    type_of_python_value,
)
from ..ops import registry
from .module_scripting import ModuleMembers

__all__ = ["ArchiveClass", "ArchiveCode", "ArchiveLowering", "ArchiveMembers",
           "annotation_type", "parse_code_file"]

_SIMPLE_TYPES = {"Tensor": TENSOR, "int": INT, "float": FLOAT, "bool": BOOL, "str": STR,
                 "NoneType": NONE, "None": NONE, "Device": DEVICE, "number": NUMBER,
                 "Scalar": NUMBER, "Any": ANY}


# ops whose arguments TorchScript passes as a variable list, and their result type
_VARIADIC = {"aten::format": STR}


def _dotted(e: ast.AST) -> Optional[str]:
    """``a.b.c`` as a string, or None for anything else."""
    parts = []
    while isinstance(e, ast.Attribute):
        parts.append(e.attr)
        e = e.value
    if not isinstance(e, ast.Name):
        return None
    parts.append(e.id)
    return ".".join(reversed(parts))


def annotation_type(ann: Optional[ast.AST]) -> Type:
    """The IR type a TorchScript annotation names (``Optional[Tensor]``, ``Tuple[Tensor,
    Tensor]``, ``List[int]``, ``Final[int]``, ``__torch__.X``); ``ValueError`` otherwise."""
    if ann is None:
        return TENSOR
    if isinstance(ann, ast.Constant) and ann.value is None:
        return NONE
    name = _dotted(ann)
    if name is not None:
        if name in _SIMPLE_TYPES:
            return _SIMPLE_TYPES[name]
        if name.startswith("__torch__."):
            return ClassType(name)
        raise ValueError(f"unsupported type '{name}'")
    if isinstance(ann, ast.Subscript):
        base = _dotted(ann.value)
        elts = ann.slice.elts if isinstance(ann.slice, ast.Tuple) else [ann.slice]
        if base == "Tuple":
            return TupleType(tuple(annotation_type(a) for a in elts))
        if base == "Optional" and len(elts) == 1:
            return OptionalType(annotation_type(elts[0]))
        if base == "List" and len(elts) == 1:
            return ListType(annotation_type(elts[0]))
        if base == "Dict" and len(elts) == 2:
            return DictType(annotation_type(elts[0]), annotation_type(elts[1]))
        if base == "Final" and len(elts) == 1:
            return annotation_type(elts[0])
        raise ValueError(f"unsupported type '{ast.unparse(ann)}'")
    raise ValueError(f"unsupported type '{ast.unparse(ann)}'")


def _fits(t: Type, want: Type) -> bool:
    """Whether a value of type ``t`` can be passed where ``want`` is declared, as far as
    choosing between overloads needs (tensors, classes, optionals; other types pass)."""
    if isinstance(want, OptionalType):
        return t == NONE or _fits(t, want.elem)
    if want.is_tensor():
        return t.is_tensor()
    if isinstance(want, ClassType) or isinstance(t, ClassType):
        return t == want
    return True


def _literal(e: ast.AST) -> Any:
    """A constant's value (``ast.literal_eval``, plus ``inf``/``nan`` spellings)."""
    try:
        return ast.literal_eval(e)
    except ValueError:
        text = ast.unparse(e)
        table = {"inf": math.inf, "-inf": -math.inf, "nan": math.nan, "math.inf": math.inf,
                 "-math.inf": -math.inf, "math.nan": math.nan}
        if text in table:
            return table[text]
        raise


@dataclass
class ArchiveClass:
    """One class of the archive's code: what its objects hold and its methods."""

    qualified_name: str
    parameters: List[str] = field(default_factory=list)
    buffers: List[str] = field(default_factory=list)
    attributes: Dict[str, ast.AST] = field(default_factory=dict)   # name -> annotation
    constants: Dict[str, Any] = field(default_factory=dict)        # Final attributes
    methods: Dict[str, SourceFunction] = field(default_factory=dict)

    @property
    def name(self) -> str:
        return self.qualified_name.rsplit(".", 1)[-1]


def _defaults(fdef: ast.FunctionDef, where: str) -> Tuple[Any, ...]:
    out = []
    for d in fdef.args.defaults:
        try:
            out.append(_literal(d))
        except (ValueError, SyntaxError):
            raise ScriptError(f"{where}: the default {ast.unparse(d)!r} of '{fdef.name}' is not "
                              f"a constant") from None
    return tuple(out)


def _source_function(lines: List[str], fdef: ast.FunctionDef, path: str, qualname: str,
                     namespace: Dict[str, Any]) -> SourceFunction:
    first = fdef.decorator_list[0].lineno if fdef.decorator_list else fdef.lineno
    text = "".join(lines[first - 1:fdef.end_lineno])
    frame = FunctionSource.from_text(text, path, first, namespace, qualname)
    return SourceFunction(frame, fdef.name, _defaults(fdef, f"{path}:{fdef.lineno}"), qualname)


def parse_code_file(text: str, path: str, module: str, namespace: Dict[str, Any]
                    ) -> Tuple[List[ArchiveClass], Dict[str, SourceFunction]]:
    """The classes and free functions of one code file (``module`` is its qualified module
    name, ``__torch__.torch.nn.modules.linear``); ``namespace`` resolves the names its code
    uses.  Statements the loader has no use for (imports, ``op_version_set``) are skipped."""
    try:
        tree = ast.parse(text, filename=path)
    except SyntaxError as e:
        raise ScriptError(f"{path}, line {e.lineno}: cannot parse the archive's code: {e.msg}") \
            from None
    lines = text.splitlines(keepends=True)
    classes: List[ArchiveClass] = []
    functions: Dict[str, SourceFunction] = {}
    for stmt in tree.body:
        if isinstance(stmt, ast.FunctionDef):
            functions[stmt.name] = _source_function(lines, stmt, path, f"{module}.{stmt.name}",
                                                    namespace)
        elif isinstance(stmt, ast.ClassDef):
            classes.append(_parse_class(stmt, lines, path, module, namespace))
    return classes, functions


def _string_list(e: ast.AST) -> List[str]:
    value = _literal(e)
    return [str(v) for v in value] if isinstance(value, (list, tuple)) else []


def _parse_class(cdef: ast.ClassDef, lines, path, module, namespace) -> ArchiveClass:
    cls = ArchiveClass(f"{module}.{cdef.name}")
    for s in cdef.body:
        if isinstance(s, ast.FunctionDef):
            cls.methods[s.name] = _source_function(lines, s, path,
                                                   f"{cls.qualified_name}.{s.name}", namespace)
        elif isinstance(s, ast.Assign) and len(s.targets) == 1:
            target = s.targets[0]
            if isinstance(target, ast.Name) and target.id == "__parameters__":
                cls.parameters = _string_list(s.value)
            elif isinstance(target, ast.Name) and target.id == "__buffers__":
                cls.buffers = _string_list(s.value)
            elif isinstance(target, ast.Subscript) and _dotted(target.value) == "__annotations__":
                key = target.slice
                if isinstance(key, ast.Constant) and isinstance(key.value, str):
                    cls.attributes[key.value] = s.value
        elif isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name):
            cls.attributes[s.target.id] = s.annotation
            is_final = isinstance(s.annotation, ast.Subscript) \
                and _dotted(s.annotation.value) == "Final"
            if s.value is not None and is_final:
                try:
                    cls.constants[s.target.id] = _literal(s.value)
                except (ValueError, SyntaxError):
                    pass  # a constant that is not a literal: read from the object instead
    return cls


# -- names the archive's code uses ---------------------------------------------------------------
@dataclass(eq=False)
class OpNamespace(Sugar):
    """``torch`` (aten ops), ``ops.aten``, ``ops.prim``; ``ops`` itself has no prefix."""

    prefix: Optional[str]
    spelling: str

    def describe(self):
        return f"namespace '{self.spelling}'"


@dataclass(eq=False)
class OpSymbol(Sugar):
    """``torch.tanh``: the op ``aten::tanh``, waiting for its call."""

    kind: str
    spelling: str

    def describe(self):
        return f"op '{self.spelling}'"


@dataclass(eq=False)
class ArchivePath(Sugar):
    """A prefix of a qualified name of the archive (``__torch__.torch.nn``)."""

    path: str

    def describe(self):
        return f"'{self.path}'"


@dataclass(eq=False)
class SpecialForm(Sugar):
    """``annotate``, ``unchecked_cast``, ``uninitialized``, ``getattr``, ``isinstance``."""

    name: str

    def describe(self):
        return f"'{self.name}'"


@dataclass(eq=False)
class ModuleForward(Sugar):
    """``(linear).forward``: a ``prim::CallMethod`` once called; of a module whose forward
    was saved overloaded (``forward__0``, ``forward__1``: nn.LSTM), the first overload whose
    parameter types fit the arguments, inlined."""

    module: ModuleValue
    overloads: Tuple[SourceFunction, ...] = ()

    def describe(self):
        return f"method 'forward' of {self.module.describe()}"


@dataclass(eq=False)
class ConstantTable(Sugar):
    """``CONSTANTS``: the archive's ``constants.pkl`` (``CONSTANTS.c0``, ...)."""

    values: Tuple[Any, ...]

    def describe(self):
        return "CONSTANTS"


class ArchiveCode:
    """Every class and free function of one archive's code, and the namespace its code sees."""

    def __init__(self, constants: Tuple[Any, ...] = ()):
        self.classes: Dict[str, ArchiveClass] = {}
        self.functions: Dict[str, SourceFunction] = {}
        self.namespace: Dict[str, Any] = {
            "torch": OpNamespace("aten", "torch"), "ops": OpNamespace(None, "ops"),
            "__torch__": ArchivePath("__torch__"), "CONSTANTS": ConstantTable(tuple(constants)),
            "math": math, "inf": math.inf, "nan": math.nan,
            "__archive__": self,
        }
        for name in ("annotate", "unchecked_cast", "uninitialized", "getattr", "isinstance"):
            self.namespace[name] = SpecialForm(name)

    def add_file(self, text: str, path: str, module: str) -> None:
        classes, functions = parse_code_file(text, path, module, self.namespace)
        for c in classes:
            self.classes[c.qualified_name] = c
        for name, fn in functions.items():
            self.functions[f"{module}.{name}"] = fn


class ArchiveMembers(ModuleMembers):
    """The scripter's view of a module loaded from an archive: ``ModuleMembers`` plus the
    methods of its archive class."""

    def __init__(self, sm):
        super().__init__(sm)
        self.archive_class: Optional[ArchiveClass] = sm.__dict__.get("_archive_class")

    def member(self, name: str) -> Optional[Member]:
        m = super().member(name)
        if m is not None and m.kind == "module":
            return Member("module", module=ArchiveMembers(self.sm._modules[name]))
        if m is None and self.archive_class is not None and name in self.archive_class.methods:
            return Member("method", value=self.archive_class.methods[name])
        v = self.sm.__dict__.get(name) if m is not None and m.kind == "constant" else None
        if isinstance(v, list) and v and all(is_array(t) for t in v):
            # a List[Tensor] attribute of other tensors: read when the module runs
            return Member("scalar", ListType(TENSOR))
        return m

    def tensor_list(self, name: str) -> Optional[List[str]]:
        """For a List[Tensor] attribute whose items are all the module's own parameters or
        buffers (nn.LSTM's ``_flat_weights``), their names; else None."""
        v = self.sm.__dict__.get(name)
        if not isinstance(v, list) or not v or name in self.sm._modules:
            return None
        owned = {id(t): n for d in (self.sm._buffers, self.sm._parameters)
                 for n, t in d.items() if t is not None}
        names = [owned.get(id(t)) for t in v]
        return None if None in names else names

    def children(self):
        return [(n, ArchiveMembers(m)) for n, m in self.sm._modules.items() if m is not None]


class ArchiveLowering(StatementLowering):
    """The scripter, reading TorchScript's serialized spellings (module docstring)."""

    def lookup(self, name: str, node):
        if name not in self.env:
            found = self.frame.globals.get(name)
            if isinstance(found, Sugar):
                return found
        return super().lookup(name, node)

    def condition(self, e):
        sv = super().condition(e)
        if isinstance(sv, Value) and sv.is_constant() and isinstance(sv.constant_value(), bool):
            return Static(sv.constant_value())  # if False: ... compiles only what runs
        return sv

    def attribute(self, sv, e: ast.Attribute):
        attr = e.attr
        if isinstance(sv, OpNamespace):
            if sv.prefix is None:
                return OpNamespace(attr, f"ops.{attr}")
            return OpSymbol(f"{sv.prefix}::{attr}", f"{sv.spelling}.{attr}")
        if isinstance(sv, ArchivePath):
            path = f"{sv.path}.{attr}"
            archive: ArchiveCode = self.frame.globals["__archive__"]
            if path in archive.functions:
                return PythonFunction(archive.functions[path])
            return ArchivePath(path)
        if isinstance(sv, ConstantTable):
            index = int(attr[1:]) if attr[:1] == "c" and attr[1:].isdigit() else -1
            if not 0 <= index < len(sv.values):
                raise self.error(f"CONSTANTS has no '{attr}' ({len(sv.values)} constants)", e)
            return self.tensor_constant(index, sv.values[index], e)
        if isinstance(sv, ModuleValue):
            names = sv.info.tensor_list(attr) if isinstance(sv.info, ArchiveMembers) else None
            if names is not None:  # self._flat_weights: [self.weight_ih_l0, ...]
                return Seq([self.get_attr(sv.value, n, TENSOR) for n in names], "list")
            m = sv.info.member(attr)
            if m is not None and m.kind == "method":
                return ModuleForward(sv) if attr == "forward" else BoundMethod(sv, m.value)
            cls = getattr(sv.info, "archive_class", None)
            if m is None and attr == "forward" and cls is not None:
                overloads = sorted((n for n in cls.methods if n.startswith("forward__")
                                    and n[len("forward__"):].isdigit()),
                                   key=lambda n: int(n[len("forward__"):]))
                if overloads:
                    return ModuleForward(sv, tuple(cls.methods[n] for n in overloads))
        return super().attribute(sv, e)

    def tensor_constant(self, index: int, value: Any, e) -> Value:
        key = ("CONSTANTS", index)
        v = self._consts.get(key)
        if v is None:
            v = self.graph.create("prim::Constant", [], [type_of_python_value(value)],
                                  {"value": value}, index=self._nconsts).output()
            self._nconsts += 1
            self._consts[key] = v
        return v

    def expr_Call(self, e):
        func = e.func
        if isinstance(func, ast.Name) and func.id not in self.env \
                and isinstance(self.frame.globals.get(func.id), SpecialForm):
            return self.special_form(func.id, e)
        callee = self.expr(func) if isinstance(func, ast.Attribute) else None
        if isinstance(callee, (OpSymbol, ModuleForward)):
            args = [self.expr(a) for a in e.args]
            kwargs = {k.arg: self.expr(k.value) for k in e.keywords}
            if isinstance(callee, ModuleForward) and callee.overloads:
                args = [self.materialize(a, e) for a in args]
                kwargs = {k: self.materialize(v, e) for k, v in kwargs.items()}
                fn = self.pick_overload(callee.overloads, args, kwargs, e)
                return self.call_bound_method(BoundMethod(callee.module, fn), args, kwargs, e)
            if isinstance(callee, ModuleForward):
                return self.call_module(callee.module, args, kwargs, e)
            return self.call_op(callee, args, kwargs, e)
        return super().expr_Call(e)

    def call_op(self, sym: OpSymbol, args: list, kwargs: dict, e):
        kind = sym.kind
        if kind in ("aten::__is__", "aten::__isnot__"):
            return self.is_none(args, kind == "aten::__is__", e)
        op = registry.lookup(kind)
        if op is None:
            # PyTorch's modules carry branches a call never takes (F.interpolate's antialiased
            # modes, TransformerEncoder's nested-tensor fast path): the unknown op is compiled
            # as a node, and only running it raises UnsupportedOpError (naming it and its line)
            if kwargs:
                raise self.error(f"the op {kind} ({sym.spelling} in the archive's code) is not "
                                 f"supported by torchlike", e)
            inputs = [self.materialize(a, e) for a in args]
            return self.create(kind, inputs, [TENSOR], e).output()
        if kind == "prim::RaiseException":
            inputs = [self.materialize(a, e) for a in args]
            self.create(kind, inputs, [], e)
            return self.const(None)
        if kind in _VARIADIC:  # torch.format(fmt, *values): no fixed schema
            inputs = [self.materialize(a, e) for a in args]
            return self.create(kind, inputs, [_VARIADIC[kind]], e).output()
        if kind == "prim::NumToTensor":
            return self.create(kind, [self.materialize(args[0], e)], [TENSOR], e).output()
        return self.emit_op(kind, args, kwargs, e, op=op)

    def pick_overload(self, overloads, args: List[Value], kwargs: Dict[str, Value], e
                      ) -> SourceFunction:
        """The first of ``overloads`` whose parameters (after ``self``) take ``args`` and
        ``kwargs`` (values), by their types: a Tensor for ``Tensor``, the class itself for a class
        (``PackedSequence``), None or the element for ``Optional``."""
        got = [a.type for a in args]
        named = {k: v.type for k, v in kwargs.items()}
        for fn in overloads:
            fdef = fn.frame.fdef
            params = (fdef.args.posonlyargs + fdef.args.args)[1:]
            names = [p.arg for p in params]
            required = len(params) - len(fn.__defaults__)
            if len(got) > len(params) or not set(named) <= set(names[len(got):]) \
                    or any(n not in named for n in names[len(got):required]):
                continue
            try:
                want = {p.arg: annotation_type(p.annotation) for p in params}
            except ValueError:
                continue
            given = dict(zip(names, got), **named)
            if all(_fits(t, want[n]) for n, t in given.items()):
                return fn
        raise self.error(f"no overload of forward ({', '.join(f.__name__ for f in overloads)}) "
                         f"takes arguments of types ({', '.join(map(str, got))})", e)

    def is_none(self, args: list, is_: bool, e):
        if len(args) != 2:
            raise self.error("__is__/__isnot__ take two arguments", e)
        a, b = (self.materialize(x, e) for x in args)
        if b.type == NONE:
            a, b = b, a
        if a.type == NONE and not isinstance(b.type, OptionalType):
            return Static((b.type == NONE) == is_)
        kind = "aten::__is__" if is_ else "aten::__isnot__"
        return self.create(kind, [b, a], [BOOL], e).output()

    def special_form(self, name: str, e: ast.Call):
        def type_arg(a):
            try:
                return annotation_type(a)
            except ValueError as err:
                raise self.error(str(err), a) from None

        if name == "getattr":
            if len(e.args) != 2 or not isinstance(e.args[1], ast.Constant):
                raise self.error("getattr takes an object and a constant name here", e)
            attr = ast.copy_location(ast.Attribute(e.args[0], str(e.args[1].value), ast.Load()),
                                     e)
            return self.expr_Attribute(attr)
        if name == "uninitialized":
            return self.create("prim::Uninitialized", [], [type_arg(e.args[0])], None).output()
        if len(e.args) != 2:
            raise self.error(f"{name} takes two arguments", e)
        t = type_arg(e.args[0]) if name != "isinstance" else None
        if name == "annotate":
            if isinstance(e.args[1], ast.List) and not e.args[1].elts:
                if not isinstance(t, ListType):
                    raise self.error(f"an empty list annotated {t}", e)
                return self.create("prim::ListConstruct", [], [t], e).output()
            if isinstance(e.args[1], ast.Dict) and not e.args[1].keys:
                if not isinstance(t, DictType):
                    raise self.error(f"an empty dict annotated {t}", e)
                return self.create("prim::DictConstruct", [], [t], e).output()
            return self.expr(e.args[1])
        if name == "unchecked_cast":
            v = self.materialize(self.expr(e.args[1]), e.args[1])
            if v.type == t or (t.is_tensor() and v.type.is_tensor()):
                return v
            return self.create("prim::unchecked_cast", [v], [t], e).output()
        # isinstance(x, T): decided by the types
        v = self.materialize(self.expr(e.args[0]), e.args[0])
        t = type_arg(e.args[1])
        if isinstance(v.type, OptionalType):
            raise self.error("isinstance of an Optional value is not supported", e)
        return Static(v.type == t or (t.is_tensor() and v.type.is_tensor()))

    def materialize(self, sv, node) -> Value:
        if isinstance(sv, Seq) and sv.kind == "list" and not sv.items:
            raise self.error("an empty list needs a type: annotate(List[T], [])", node)
        return super().materialize(sv, node)
