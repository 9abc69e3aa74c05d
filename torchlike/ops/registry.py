"""The op registry: everything about an op in one entry (JAX's primitives are the model).

An ``OpDef`` holds the op's schema (parameter names, types, defaults), its reference
implementation over an array module (numpy or cupy), its output-type rule, and, for elementwise
ops, its dtype rule and per-language scalar templates.  The interpreter, type inference, the
tracer, the scripter, the partitioner and both code generators all read these entries; nothing
about an op is written anywhere else.

    >>> get("aten::add").params[2]
    Param(name='alpha', type='Scalar', default=1)
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..errors import UnsupportedOpError
from .unsupported import UNSUPPORTED_POINTWISE

REQUIRED = object()  # a parameter without a default


@dataclass(frozen=True)
class Param:
    name: str
    type: str                    # schema type: Tensor, Scalar, int, float, bool, str, int[], Tensor?, ...
    default: Any = REQUIRED

    @property
    def is_operand(self) -> bool:
        """Tensor parameters are broadcast operands (a Python scalar there is a wrapped number)."""
        return self.type.rstrip("?") == "Tensor"


@dataclass
class OpDef:
    """One op.  ``impl(xp, *args)`` takes the node's inputs in schema order, all present."""

    name: str                               # "aten::add"
    params: Tuple[Param, ...]
    impl: Callable[..., Any]
    category: str = "other"                 # elementwise | reduction | shape | prim | control | other
    num_outputs: Optional[int] = 1          # None: as many as the node has (ListUnpack, ...)
    output_count: Optional[Callable] = None  # (bound input types) -> outputs a new node gets,
                                            # for ops whose overloads differ (max.dim: 2)
    infer: Optional[Callable] = None        # infer(node, input_types) -> list of output types
    pure: bool = True                       # False: never removed or merged by DCE/CSE (Print)
    mutates_list: bool = False              # changes its first input, a list, in place (append):
                                            # the list it is given is never a shared constant
    foldable: bool = True                   # False: never evaluated at compile time (random,
                                            # mode-dependent, or a result a constant can't hold)
    code_name: Optional[str] = None         # its call in ``.code`` if not torch.<name> (int(x))
    python_name: Optional[str] = None       # name in the torchlike namespace; None hides it
    aliases: Tuple[str, ...] = ()           # more namespace names (method names, numpy names)
    elementwise_overload: Optional[Callable] = None  # node -> the elementwise op kind this
                                            # node is for its inputs, or None (max(Tensor, Tensor)
                                            # is maximum); the fuser fuses it as that op
    # Elementwise ops only (see ops/elementwise_base.py):
    dtype_rule: Optional[Callable] = None   # (operand (dtype, priority) list, attrs) -> (compute, out)
    templates: Dict[str, Any] = field(default_factory=dict)  # language -> template (str or dict)
    ref: Optional[Callable] = None          # ref(xp, *operands_in_compute_dtype, **attrs)
    kept: Tuple[str, ...] = ()              # operands outside promotion and casts (where's cond)
    normalize: Optional[Callable] = None    # other overloads' inputs -> this schema (aten::to)
    scalar_out: Optional[str] = None        # all-scalar (TorchScript) result dtype if not the rule's
    precheck: Optional[Callable] = None     # precheck(operands, attrs): value-dependent errors
    fusible_if: Optional[Callable] = None   # fusible_if(const attrs) -> None or why not (dropout)
    commutative: bool = False               # its two operands may be swapped (np.multiply(2, x))
    sees_dtypes: bool = False               # ref and callable templates get ``dtypes``: the
                                            # operands' own dtypes and the out dtype (OpDtypes)
    exact_scalars: Tuple[str, ...] = ()     # operands that, as a 0-d tensor or Python scalar,
                                            # skip the rounding to a half common dtype
                                            # (elementwise_base.rounded_through: mul's other)
    half_attrs: Tuple[str, ...] = ()        # numeric attributes rounded to a half common dtype
                                            # first, as PyTorch's kernels read them (add's alpha)
    checked_scalars: Tuple[str, ...] = ()   # operands whose Python int must fit an integer
                                            # result dtype (clamp's min: PyTorch raises)
    vjp: Optional[Callable] = None          # derivative rule (ctx, grads) -> input cotangents
                                            # (ops/derivatives.py; None: not differentiable)
    python_params: Tuple[Param, ...] = ()   # an op of overloads (no ``params``) called from
                                            # Python with keywords binds by these: x.norm(dim=1)
    unpacks: bool = False                   # impl returns one value per node output, a sequence
                                            # even for one (ListUnpack of a one-element list)

    def node_value(self, result: Any, outputs: int) -> Any:
        """What a node with ``outputs`` outputs holds given ``impl``'s ``result``: an
        unpacking op's sequence of one is its element, so ``%v = prim::ListUnpack(%l)`` of
        ``unbind`` over a size-1 dim is the tensor, not a list."""
        if not self.unpacks or outputs != 1:
            return result
        if len(result) != 1:
            raise ValueError(f"{self.name} gives {len(result)} values for 1 output")
        return result[0]

    @property
    def max_inputs(self) -> Optional[int]:
        """The most inputs a node of an elementwise op may have (None: not checked).  A node
        with more is malformed: the builder's impl would ignore the extra inputs, a silently
        wrong answer.  Other ops' impls either take fixed arguments (extra ones raise) or read
        their overloads' inputs themselves (``sort.stable``), and ``normalize`` maps other
        overloads (``aten::to``) onto the schema."""
        if not self.is_elementwise or self.normalize is not None:
            return None
        return len(self.params)

    @property
    def is_elementwise(self) -> bool:
        return self.category == "elementwise"

    @property
    def calls_math_helper(self) -> bool:
        """Its Numba template calls a math helper (``tl_exp_f32``, ``tl_erf_f32``, ...: tens of
        vector instructions an element, where arithmetic is one)."""
        return "tl_" in repr(self.templates.get("numba"))

    @property
    def operand_names(self) -> Tuple[str, ...]:
        return tuple(p.name for p in self.params if p.is_operand)

    @property
    def attr_names(self) -> Tuple[str, ...]:
        return tuple(p.name for p in self.params if not p.is_operand)

    def bind(self, args: Sequence[Any], kwargs: Dict[str, Any]) -> List[Any]:
        """Positional + keyword arguments -> the full argument list, defaults filled in.
        A leading ``int[] size`` also takes its items as separate positional ints, as PyTorch's
        ``torch.zeros(3, 4)`` does."""
        if not self.params and self.python_params and kwargs:  # x.norm(dim=-1): every one
            return OpDef(self.name, self.python_params, self.impl).bind(args, kwargs)
        if not self.params:  # overloads told apart by argument count (arange, norm): as given
            if kwargs and not set(kwargs) <= set(_OPTIONS):
                raise TypeError(f"{self.name}() takes positional arguments only here, got "
                                f"{sorted(kwargs)}")
            # a factory's TensorOptions (arange(5, dtype=...)) go last, as graphs pass them
            return list(args) + ([kwargs.pop(k, None) for k in _OPTIONS] if kwargs else [])
        args = gather_size(self, args)
        names = {p.name for p in self.params}
        for alias, name in KWARG_ALIASES.items():  # x.sum(axis=0), as PyTorch also accepts
            if alias in kwargs and alias not in names and name in names and name not in kwargs:
                kwargs[name] = kwargs.pop(alias)
        if len(args) > len(self.params):
            raise TypeError(f"{self.name}() takes {len(self.params)} arguments, got {len(args)}")
        out = list(args)
        for p in self.params[len(args):]:
            if p.name in kwargs:
                out.append(kwargs.pop(p.name))
            elif p.default is not REQUIRED:
                out.append(p.default)
            else:
                raise TypeError(f"{self.name}() missing argument '{p.name}'")
        if kwargs:
            raise TypeError(f"{self.name}() got unexpected arguments {sorted(kwargs)}")
        return out


_OPTIONS = ("dtype", "layout", "device", "pin_memory")  # a factory's TensorOptions, in order

# numpy's keyword names that PyTorch's Python API also accepts for ``dim`` and ``keepdim``;
# and ``unbiased``, the bool of var/std's older overload (``var.dim(self, dim, bool unbiased,
# bool keepdim)``), which sits where ``correction`` does: PyTorch's graph passes the bool there
# (``aten::var(%x, %dims, %false, %true)``) and the op reads a bool as 0 or 1.
KWARG_ALIASES: Dict[str, str] = {"axis": "dim", "keepdims": "keepdim", "unbiased": "correction"}


def is_int_literal(a: Any) -> bool:
    return isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))


def gather_size(op: "OpDef", args: Sequence[Any], is_int: Callable[[Any], bool] = is_int_literal
                ) -> Sequence[Any]:
    """``(3, 4, ...)`` -> ``([3, 4], ...)`` for an op whose first parameter is ``int[] size``
    (``is_int`` tells the scripter's int values too)."""
    if len(args) < 2 or not op.params or op.params[0].name != "size" \
            or not op.params[0].type.startswith("int[") or not is_int(args[0]):
        return args
    k = 1
    while k < len(args) and is_int(args[k]):
        k += 1
    return args if k == 1 else [[int(a) if is_int_literal(a) else a for a in args[:k]]] + list(args[k:])


REGISTRY: Dict[str, OpDef] = {}
# Graph spellings of registered ops: TorchScript's NormalizeOps pass
# (torch/csrc/jit/passes/normalize_ops.cpp) rewrites these before a graph is printed, so
# PyTorch's own graphs never hold them, but a graph written or transformed by hand may.
# ``get``/``lookup`` resolve them to their op; ``elementwise_ops`` lists each op once.
KIND_ALIASES: Dict[str, str] = {
    f"aten::{alias}": f"aten::{name}" for alias, name in (
        ("absolute", "abs"), ("clip", "clamp"), ("true_divide", "div"), ("divide", "div"),
        ("multiply", "mul"), ("subtract", "sub"), ("negative", "neg"), ("fix", "trunc"),
        ("arccos", "acos"), ("arcsin", "asin"), ("arctan", "atan"), ("arctan2", "atan2"),
        ("arccosh", "acosh"), ("arcsinh", "asinh"), ("arctanh", "atanh"),
        ("greater", "gt"), ("greater_equal", "ge"), ("less", "lt"), ("less_equal", "le"),
        ("not_equal", "ne"), ("special_erf", "erf"), ("special_erfc", "erfc"),
        ("special_erfinv", "erfinv"), ("special_expit", "sigmoid"), ("special_exp2", "exp2"),
        ("special_expm1", "expm1"), ("special_log1p", "log1p"), ("special_logit", "logit"),
        ("special_round", "round"), ("special_sinc", "sinc"), ("special_digamma", "digamma"),
        ("special_psi", "digamma"), ("special_i0", "i0"), ("special_xlogy", "xlogy"),
        ("special_gammaln", "lgamma"))}
# TorchScript prints Python's builtin ``abs(v)`` as ``prim::abs``, of a number or a tensor
KIND_ALIASES["prim::abs"] = "aten::abs"
# Bumped by every register/unregister: indexes derived from the registry (ops by Python name)
# rebuild when it changes.
version = 0

_PARAM = re.compile(r"^\s*(?P<type>[\w\[\]?]+)\s+(?P<name>\w+)\s*(=\s*(?P<default>.+?))?\s*$")


def _parse_default(text: str) -> Any:
    if text == "None":
        return None
    if text in ("True", "False"):
        return text == "True"
    if text.startswith('"'):
        return text.strip('"')
    if text.startswith("["):
        return [int(t) for t in text.strip("[]").split(",") if t.strip()]
    try:
        return int(text)
    except ValueError:
        return float(text)


def parse_schema(schema: str) -> Tuple[Param, ...]:
    """``"Tensor self, Scalar alpha=1"`` -> Params (commas inside [] are not separators)."""
    params = []
    depth, start = 0, 0
    pieces = []
    for i, ch in enumerate(schema):
        depth += ch == "["
        depth -= ch == "]"
        if ch == "," and depth == 0:
            pieces.append(schema[start:i])
            start = i + 1
    pieces.append(schema[start:])
    for piece in pieces:
        if not piece.strip():
            continue
        m = _PARAM.match(piece)
        if not m:
            raise ValueError(f"bad schema parameter {piece!r}")
        default = REQUIRED if m.group("default") is None else _parse_default(m.group("default"))
        params.append(Param(m.group("name"), m.group("type"), default))
    return tuple(params)


def register(op: OpDef) -> OpDef:
    global version
    if op.name in REGISTRY:
        raise ValueError(f"op {op.name} registered twice")
    REGISTRY[op.name] = op
    version += 1
    return op


def unregister(name: str) -> None:
    """Remove the op called ``name`` (tests that register a temporary op); unknown: no error."""
    global version
    if REGISTRY.pop(name, None) is not None:
        version += 1


def defop(name: str, schema: str, impl: Callable, **kwargs) -> OpDef:
    """Register a non-elementwise op; ``python_name`` defaults to the name after ``::``."""
    kwargs.setdefault("python_name", name.split("::")[1])
    return register(OpDef(name, parse_schema(schema), impl, **kwargs))


def get(name: str) -> OpDef:
    op = REGISTRY.get(name) or REGISTRY.get(KIND_ALIASES.get(name, ""))
    if op is None:
        why = UNSUPPORTED_POINTWISE.get(name, "it has no entry in torchlike's registry")
        raise UnsupportedOpError(f"unsupported op '{name}': {why}")
    return op


def lookup(name: str) -> Optional[OpDef]:
    """The op called ``name`` (or the op a ``KIND_ALIASES`` spelling stands for), or None."""
    op = REGISTRY.get(name)
    return op if op is not None else REGISTRY.get(KIND_ALIASES.get(name, ""))


def elementwise_ops() -> List[OpDef]:
    return [op for op in REGISTRY.values() if op.is_elementwise]
