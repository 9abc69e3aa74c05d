"""Python spellings of ops: namespace names, operators, builtins and numpy functions.

The registry says what each op is called in Python (``OpDef.python_name`` and ``aliases``, numpy
spellings such as ``multiply`` or ``clip`` among them); ``find_op`` looks ops up by those names.
Syntax that reaches an op without naming it -- ``a + b``, ``-x``, ``a < b``, ``abs(x)``,
``float(x)`` -- is one table, ``OPERATORS``, that every front end reads: the tracer generates
its proxy's dunder methods from it, the scripter maps ``ast`` operator nodes through it.  numpy
calls on traced values map through the same names (``ufunc_op``) and, for array functions whose
arguments are spelled differently (``np.sum(a, axis=1)``), ``NUMPY_FUNCTIONS``::

    >>> find_op("multiply").name, operator_for_ast(ast.Mult).ops
    ('aten::mul', ('aten::mul',))

Everything here is a fact about ops and Python, so it lives beside the registry (and imports
nothing above it); front ends must not keep tables of their own.
"""
from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any, Dict, Mapping, Optional, Sequence, Tuple, Union

from ..ir.types import BOOL, FLOAT, INT, Type
from . import registry
from .registry import KWARG_ALIASES, OpDef

__all__ = ["NUMPY_ARGUMENT_NAMES", "NUMPY_FUNCTIONS", "OPERATORS",
           "NumpyFunction", "PythonOperator", "Reflected", "find_op", "first_registered",
           "is_commutative", "is_registered", "numpy_function", "numpy_function_op",
           "operator_for_ast",
           "operator_for_builtin", "ops_by_python_name", "ufunc_op"]


# -- ops by Python name -----------------------------------------------------------------------
_INDEX: Dict[str, OpDef] = {}
_INDEXED_VERSION = -1


def ops_by_python_name() -> Mapping[str, OpDef]:
    """``python_name``/alias -> op, for every op the namespace exports.

    Rebuilt whenever the registry has grown, since ops may register after this module is
    imported.  An op's own ``python_name`` always wins over another op's alias of the same
    spelling, and among aliases the first registered op wins."""
    global _INDEXED_VERSION
    if _INDEXED_VERSION != registry.version:
        index: Dict[str, OpDef] = {}
        ops = list(registry.REGISTRY.values())
        for op in ops:  # python_names first: an alias never hides another op's own name
            if op.python_name and op.python_name not in index:
                index[op.python_name] = op
        for op in ops:
            if op.python_name:
                for alias in op.aliases:
                    index.setdefault(alias, op)
        _INDEX.clear()
        _INDEX.update(index)
        _INDEXED_VERSION = registry.version
    return _INDEX


def find_op(name: str) -> Optional[OpDef]:
    """The op whose python_name or alias is ``name`` (or the op named ``name``, such as
    ``aten::slice``, which has no python name), or None."""
    if "::" in name:
        return registry.lookup(name)
    return ops_by_python_name().get(name)


def ufunc_op(ufunc_name: str) -> Optional[OpDef]:
    """The op a numpy ufunc maps to, by its name (``multiply`` -> ``aten::mul``), or None.

    Ufunc names are looked up among the registry's python names and aliases: an op reachable
    as ``np.<ufunc>`` carries the numpy spelling as an alias."""
    return ops_by_python_name().get(ufunc_name)


def is_registered(kind: str) -> bool:
    """Whether the registry has the op ``kind`` (``aten::rsub``)."""
    return registry.lookup(kind) is not None


def first_registered(kinds: Sequence[str]) -> str:
    """The first of ``kinds`` the registry has, else the first (whose lookup then reports it)."""
    for kind in kinds:
        if is_registered(kind):
            return kind
    return kinds[0]


def is_commutative(op: OpDef) -> bool:
    """Whether ``op``'s two operands may be swapped without changing its result: a traced
    ``np.multiply(2.0, x)`` records ``mul(%x, 2.)``, as PyTorch's ``Tensor.__rmul__`` does."""
    return op.commutative


# -- Python operators and builtins ------------------------------------------------------------
@dataclass(frozen=True)
class Reflected:
    """How ``other OP proxy`` is recorded when only the right operand is traced: as PyTorch's
    ``Tensor.__rOP__`` does, ``op(proxy', other)`` where ``proxy'`` is the proxy, first passed
    through the unary op ``self_through`` if one is given.  Used only when every op named here
    is registered; otherwise the operator's own op runs on the swapped operands."""

    op: str                             # "aten::rsub": 2 - x records rsub(%x, 2)
    self_through: Optional[str] = None  # "aten::reciprocal": 2 / x is reciprocal(%x) * 2

    @property
    def kinds(self) -> Tuple[str, ...]:
        """Every op this form records (all must be registered for it to be used)."""
        return (self.op,) if self.self_through is None else (self.op, self.self_through)


@dataclass(frozen=True)
class PythonOperator:
    """One piece of Python syntax that records an op.

    ``ops`` are candidates, the first registered one wins (``&`` is ``aten::__and__`` as
    TorchScript spells it, else ``bitwise_and``); no ops means the operand itself (unary ``+``).
    ``dunder`` is the method traced values define for it; None where the tracer does not record
    the syntax (``not x`` and ``float(x)`` call ``__bool__``/``__float__``, which bake the example
    into the trace, as PyTorch's tracer does).  ``ast_node`` is the scripter's node type for it,
    ``builtin`` the builtin function spelling it (``abs``); a conversion builtin (``float``)
    records nothing on a value that already has the type it ``converts_to``."""

    symbol: str                               # how the syntax reads: "+", "-x", "abs()"
    ops: Tuple[str, ...]
    arity: int = 2
    dunder: Optional[str] = None              # "__add__"
    reflected_dunder: Optional[str] = None    # "__radd__"
    reflected: Optional[Reflected] = None     # None: ``other OP x`` is op(other, x)
    ast_node: Optional[type[ast.AST]] = None  # ast.Add
    builtin: Optional[str] = None             # "abs"
    converts_to: Optional[Type] = None        # float(): a float is left as it is
    scalar_op: Optional[str] = None           # TorchScript's op when no operand is a tensor

    @property
    def is_identity(self) -> bool:
        """Whether the syntax records nothing and gives its operand back (unary ``+``)."""
        return not self.ops

    @property
    def kind(self) -> str:
        """The op this syntax records (the first registered candidate)."""
        return first_registered(self.ops)

    def scalar_kind(self) -> str:
        """The op recorded when every operand is a Python number (``//`` on ints is
        ``aten::floordiv``, on tensors ``aten::floor_divide``)."""
        if self.scalar_op is None:
            return self.kind
        return first_registered((self.scalar_op,) + self.ops)


def _binary(symbol: str, op: str, name: str, node: type[ast.AST], **more: Any) -> PythonOperator:
    return PythonOperator(symbol, (op,), 2, f"__{name}__", f"__r{name}__", ast_node=node, **more)


def _compare(symbol: str, op: str, name: str, node: type[ast.AST]) -> PythonOperator:
    # No reflected form: Python itself turns ``2 < x`` into ``x > 2``.
    return PythonOperator(symbol, (op,), 2, f"__{name}__", ast_node=node)


OPERATORS: Tuple[PythonOperator, ...] = (
    # The reflected forms of + and * keep the proxy first (PyTorch's __radd__ is add(self, other)).
    _binary("+", "aten::add", "add", ast.Add, reflected=Reflected("aten::add")),
    _binary("-", "aten::sub", "sub", ast.Sub, reflected=Reflected("aten::rsub")),
    _binary("*", "aten::mul", "mul", ast.Mult, reflected=Reflected("aten::mul")),
    _binary("/", "aten::div", "truediv", ast.Div,
            reflected=Reflected("aten::mul", self_through="aten::reciprocal")),
    _binary("//", "aten::floor_divide", "floordiv", ast.FloorDiv, scalar_op="aten::floordiv"),
    _binary("%", "aten::remainder", "mod", ast.Mod),
    _binary("**", "aten::pow", "pow", ast.Pow),
    _binary("@", "aten::matmul", "matmul", ast.MatMult),
    PythonOperator("&", ("aten::__and__", "aten::bitwise_and"), 2, "__and__", "__rand__",
                   ast_node=ast.BitAnd),
    PythonOperator("|", ("aten::__or__", "aten::bitwise_or"), 2, "__or__", "__ror__",
                   ast_node=ast.BitOr),
    PythonOperator("^", ("aten::__xor__", "aten::bitwise_xor"), 2, "__xor__", "__rxor__",
                   ast_node=ast.BitXor),
    PythonOperator("<<", ("aten::__lshift__", "aten::bitwise_left_shift"), 2, "__lshift__",
                   "__rlshift__", ast_node=ast.LShift),
    PythonOperator(">>", ("aten::__rshift__", "aten::bitwise_right_shift"), 2, "__rshift__",
                   "__rrshift__", ast_node=ast.RShift),
    _compare("==", "aten::eq", "eq", ast.Eq),
    _compare("!=", "aten::ne", "ne", ast.NotEq),
    _compare("<", "aten::lt", "lt", ast.Lt),
    _compare("<=", "aten::le", "le", ast.LtE),
    _compare(">", "aten::gt", "gt", ast.Gt),
    _compare(">=", "aten::ge", "ge", ast.GtE),
    PythonOperator("-x", ("aten::neg",), 1, "__neg__", ast_node=ast.USub),
    PythonOperator("+x", (), 1, "__pos__", ast_node=ast.UAdd),
    PythonOperator("~x", ("aten::bitwise_not",), 1, "__invert__", ast_node=ast.Invert),
    PythonOperator("not x", ("aten::__not__",), 1, ast_node=ast.Not),
    PythonOperator("abs()", ("aten::abs",), 1, "__abs__", builtin="abs"),
    PythonOperator("float()", ("aten::Float",), 1, builtin="float", converts_to=FLOAT),
    PythonOperator("int()", ("aten::Int",), 1, builtin="int", converts_to=INT),
    PythonOperator("bool()", ("aten::Bool",), 1, builtin="bool", converts_to=BOOL),
    PythonOperator("len()", ("aten::len",), 1, builtin="len"),
)

_BY_AST: Dict[type[ast.AST], PythonOperator] = {
    o.ast_node: o for o in OPERATORS if o.ast_node is not None}
_BY_BUILTIN: Dict[str, PythonOperator] = {o.builtin: o for o in OPERATORS if o.builtin}


def operator_for_ast(node_type: type[ast.AST]) -> Optional[PythonOperator]:
    """The operator an ``ast`` operator node stands for (``ast.Add``), or None."""
    return _BY_AST.get(node_type)


def operator_for_builtin(name: str) -> Optional[PythonOperator]:
    """The operator a builtin function records (``abs``, ``float``, ``len``), or None."""
    return _BY_BUILTIN.get(name)


# -- numpy array functions --------------------------------------------------------------------
# numpy's spelling of argument names the ops spell PyTorch's way.
NUMPY_ARGUMENT_NAMES: Mapping[str, str] = KWARG_ALIASES


@dataclass(frozen=True)
class NumpyFunction:
    """A numpy array function (``np.sum``) that records an op on a traced value.

    ``ops`` are python names, the first registered one wins (``np.max`` is ``amax``, which
    returns values only, before ``max``).  ``arguments`` renames numpy's arguments to the op's;
    an int is the op's parameter by position (schemas call the first operand ``self`` or
    ``input``).  ``arity``, when given, is the number of arguments the op form needs
    (one-argument ``np.where`` is ``nonzero``); ``dropped`` are arguments left out when they
    hold that value (``np.round(x, decimals=0)``)."""

    name: str
    ops: Tuple[str, ...]
    arguments: Mapping[str, Union[int, str]]
    arity: Optional[int] = None
    dropped: Mapping[str, Any] = field(default_factory=dict)


_REDUCE: Mapping[str, Union[int, str]] = {"a": 0, "dtype": "dtype", **NUMPY_ARGUMENT_NAMES}
_AXIS = {"a": 0, "axis": "dim"}

NUMPY_FUNCTIONS: Tuple[NumpyFunction, ...] = (
    NumpyFunction("where", ("where",), {"condition": 0, "x": 1, "y": 2}, arity=3),
    NumpyFunction("sum", ("sum",), _REDUCE),
    NumpyFunction("mean", ("mean",), _REDUCE),
    NumpyFunction("prod", ("prod",), _REDUCE),
    NumpyFunction("max", ("amax", "max"), _REDUCE),
    NumpyFunction("amax", ("amax", "max"), _REDUCE),
    NumpyFunction("min", ("amin", "min"), _REDUCE),
    NumpyFunction("amin", ("amin", "min"), _REDUCE),
    NumpyFunction("all", ("all",), _REDUCE),
    NumpyFunction("any", ("any",), _REDUCE),
    NumpyFunction("matmul", ("matmul",), {"x1": 0, "x2": 1}),
    NumpyFunction("dot", ("matmul",), {"a": 0, "b": 1}),
    NumpyFunction("clip", ("clamp", "clip"), {"a": 0, "a_min": "min", "a_max": "max",
                                              "min": "min", "max": "max"}),
    NumpyFunction("concatenate", ("cat", "concatenate"), {"arrays": 0, "axis": "dim"}),
    NumpyFunction("stack", ("stack",), {"arrays": 0, "axis": "dim"}),
    NumpyFunction("expand_dims", ("unsqueeze",), _AXIS),
    NumpyFunction("squeeze", ("squeeze",), _AXIS),
    NumpyFunction("reshape", ("reshape",), {"a": 0, "newshape": "shape", "shape": "shape"}),
    NumpyFunction("transpose", ("permute",), {"a": 0, "axes": "dims"}),
    NumpyFunction("zeros_like", ("zeros_like",), {"a": 0, "dtype": "dtype"}),
    NumpyFunction("ones_like", ("ones_like",), {"a": 0, "dtype": "dtype"}),
    NumpyFunction("round", ("round",), {"a": 0}, dropped={"decimals": 0}),
    NumpyFunction("around", ("round",), {"a": 0}, dropped={"decimals": 0}),
    NumpyFunction("maximum", ("maximum",), {"x1": 0, "x2": 1}),
)
_NUMPY_BY_NAME: Dict[str, NumpyFunction] = {f.name: f for f in NUMPY_FUNCTIONS}


def numpy_function(name: str) -> Optional[NumpyFunction]:
    """The record for numpy array function ``name``, or None if it maps to no op."""
    return _NUMPY_BY_NAME.get(name)


def numpy_function_op(function: NumpyFunction) -> Optional[OpDef]:
    """The first of ``function.ops`` the registry has, else the op named like the function."""
    for name in function.ops + (function.name,):
        op = find_op(name)
        if op is not None:
            return op
    return None
