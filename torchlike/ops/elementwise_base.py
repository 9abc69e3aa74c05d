"""The elementwise-op builder: one call defines an op's semantics for every consumer.

    elementwise("aten::mul", "Tensor self, Tensor other", ref=lambda xp, a, b: a * b,
                numba="{self} * {other}", cuda="{self} * {other}")

* ``ref(xp, *operands, **attrs)``: the reference, on arrays already cast to the compute dtype.
* ``dtype_rule((dtype, priority) per operand, attrs) -> (compute_dtype, out_dtype)``:
  ``same`` (result_type), ``float`` (int/bool become float32: exp, true div), ``compare``
  (compute in result_type, produce bool), ``bool`` (logical ops), or a custom function.
  ``dtypes=`` restricts the promoted input dtype (PyTorch's "not implemented for 'Bool'").
* templates: a scalar expression per language over the operand names and attribute names in
  braces; a dict picks by the compute dtype (``"float32"``), then its category (``"float"``,
  ``"int"``, ``"bool"``), then ``"default"``; a callable ``(compute_dtype, attrs) -> str``
  handles attribute-dependent code (div's rounding_mode).  Attributes are rendered as literals;
  operands as variables holding the compute dtype (``operand_dtypes`` says which operands keep
  their own dtype instead, e.g. ``where``'s condition); an absent optional operand (clamp's
  ``min=None``) renders as ``None``.  ``{T}`` in a template stands for the numpy scalar type
  name of the compute dtype (``np.{T}(1)`` -> ``np.float32(1)``).

An op whose code depends on more than its compute dtype (``sees_dtypes=True``: nan_to_num's
defaults are its *output* type's limits, nextafter steps in float16 ulps, ldexp computes as
PyTorch's dtype cases do) gets ``dtypes=OpDtypes(operands, out)`` as a keyword in its ref and
as ``attrs["dtypes"]`` in a callable template: each operand's own (dtype, priority) before the
cast to the compute dtype (None when absent) and the out dtype.

float16 and bfloat16 are computed in float32 (as PyTorch's CPU kernels and CUDA do) and
rounded once at the end, so every backend sees the same compute dtype: ``compute_dtype_of``.
An operand of another dtype is first rounded to the half common dtype, as PyTorch's CPU
kernels convert every input to it before widening (``x + 0.3`` adds 0.30004883 to a float16
x, an int32 2049 becomes 2048), except the ``exact_scalars`` an op reads at float32 when they
are Python scalars or 0-d tensors (``x * 0.3``, ``x / 0.3``: ``rounded_through``).

With no array among the operands (``aten::add(%i, %1)`` on ints in a scripted loop) an op is
TorchScript scalar arithmetic: it is computed on int64/float64/bool and returns a Python scalar
(int op int -> int, true div -> float, comparisons -> bool, int // 0 raises).
"""
from __future__ import annotations

from typing import Any, Callable, Dict, List, NamedTuple, Optional, Sequence, Tuple, Union

import numpy as np

from ..errors import ExecutionError, UnsupportedOpError
from . import casting
from .dtypes import (
    ALL_DTYPES,
    FLOAT_DTYPES,
    INT_DTYPES,
    Priority,
    is_float,
    is_int,
    operand_info,
    result_type,
    to_float,
)
from .registry import OpDef, parse_schema, register

# A template is a string, a dict keyed by dtype/category/"default", or a function
# (compute_dtype, attrs) -> string, for code that depends on an attribute (div's rounding_mode).
Template = Union[str, Dict[str, str], Callable[[str, Dict[str, Any]], str]]
HALF_DTYPES = ("float16", "bfloat16")  # computed in float32, rounded (compute_dtype_of)


class OpDtypes(NamedTuple):
    """What a ``sees_dtypes`` op is told: its operands' own (dtype, priority), schema order
    (None: absent), and its out dtype."""

    operands: Tuple[Optional[Tuple[str, Priority]], ...]
    out: str


def rule_same(infos, attrs) -> Tuple[str, str]:
    dt = result_type(infos)
    return dt, dt


def rule_float(infos, attrs) -> Tuple[str, str]:
    dt = to_float(result_type(infos))
    return dt, dt


def rule_compare(infos, attrs) -> Tuple[str, str]:
    return result_type(infos), "bool"


def rule_bool(infos, attrs) -> Tuple[str, str]:
    return "bool", "bool"


def rule_first(infos, attrs) -> Tuple[str, str]:
    """The first operand's dtype, others are cast to it (masked_fill's value)."""
    return infos[0][0], infos[0][0]


DTYPE_RULES = {"same": rule_same, "float": rule_float, "compare": rule_compare, "bool": rule_bool,
               "first": rule_first}

# Named sets for ``dtypes=``: the promoted *input* dtypes an op accepts.
DTYPE_SETS = {
    "all": ALL_DTYPES, "float": FLOAT_DTYPES, "int": INT_DTYPES, "int_bool": ("bool",) + INT_DTYPES,
    "number": INT_DTYPES + FLOAT_DTYPES,
}


def restricted(rule: Callable, allowed: Sequence[str], op_name: str) -> Callable:
    """Wrap ``rule`` so an input dtype outside ``allowed`` raises UnsupportedOpError."""
    allowed = frozenset(allowed)

    def checked(infos, attrs):
        dt = result_type(infos)
        if dt not in allowed:
            raise UnsupportedOpError(f"{op_name} is not implemented for dtype {dt} "
                                     f"(PyTorch has no such kernel either)")
        return rule(infos, attrs)
    return checked


def compute_dtype_of(dtype: str) -> str:
    """The dtype arithmetic happens in: half types widen to float32."""
    return "float32" if dtype in HALF_DTYPES else dtype


def category_name(dtype: str) -> str:
    return "float" if is_float(dtype) else "int" if is_int(dtype) else "bool"


def numpy_type_name(dtype: str) -> str:
    """``np.<name>`` spelling of a compute dtype (``bool`` is ``np.bool_``)."""
    return "bool_" if dtype == "bool" else dtype


def pick_template(template: Template, compute_dtype: str,
                  attrs: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The template text for ``compute_dtype``, or None if the op has none for it.
    ``{T}`` is replaced by the compute dtype's numpy name; other braces are left to render."""
    if template is None:
        return None
    if isinstance(template, str):
        text = template
    elif callable(template):
        text = template(compute_dtype, attrs or {})
    else:
        text = None
        for key in (compute_dtype, category_name(compute_dtype), "default"):
            if key in template:
                text = template[key]
                break
    return None if text is None else text.replace("{T}", numpy_type_name(compute_dtype))


def kept_operands(op: OpDef) -> Tuple[str, ...]:
    """Operands not cast to the compute dtype and not in promotion (``where``'s condition)."""
    return op.kept


def normalize_args(op: OpDef, args: Sequence[Any]) -> List[Any]:
    """A node's inputs -> the full schema-ordered argument list (defaults filled in).
    Ops with several overloads (``aten::to``) map each overload onto their one schema here."""
    if op.normalize is not None:
        args = op.normalize(list(args))
    n = len(op.params)
    if len(args) < n:
        args = list(args) + [p.default for p in op.params[len(args):]]
    return list(args)


def signature_dtypes(op: OpDef, operand_infos, attrs) -> Tuple[str, str]:
    """(compute dtype, output dtype) of ``op`` for operands described as (dtype, priority) in
    schema order (None for an absent optional operand).  The compute dtype is the rule's; use
    ``compute_dtype_of`` for the dtype code computes in (float16 -> float32)."""
    names = op.operand_names
    present = [i for n, i in zip(names, operand_infos) if i is not None and n not in op.kept]
    return op.dtype_rule(present, attrs)


# TorchScript scalar arithmetic: a Python float is a double, an int an int64.
SCALAR_DTYPES = ("bool", "int64", "float64")


def scalar_dtype_of(v: Any) -> str:
    """The TorchScript scalar dtype of a Python value (``bool``, ``int64`` or ``float64``)."""
    return "bool" if isinstance(v, (bool, np.bool_)) else \
        "int64" if isinstance(v, (int, np.integer)) else "float64"


def scalar_signature_dtypes(op: OpDef, operand_dtypes: Sequence[Optional[str]],
                            attrs) -> Tuple[str, str]:
    """(compute, output) dtypes of ``op`` as TorchScript scalar arithmetic (no operand is an
    array; the result is a Python scalar): the one rule every consumer (interpreter, type
    inference, scripter, code generators) uses.  ``operand_dtypes`` are the operands' scalar
    dtypes in schema order (float32 reads as float64: a Python float is a double; None: absent).

        >>> scalar_signature_dtypes(get("aten::pow"), ["int64", "int64"], {})
        ('float64', 'float64')
    """
    infos = [None if d is None else ("float64" if d == "float32" else d, Priority.DIM)
             for d in operand_dtypes]
    compute, out = signature_dtypes(op, infos, attrs)
    if compute == "float32":  # to_float's default (float32) does not apply to Python floats
        compute = "float64"
    out = op.scalar_out or ("float64" if out == "float32" else out)
    if out == "float64":  # pow(int, int) and fmod(int, int) are float functions in TorchScript
        compute = "float64"
    return compute, out


def operand_dtypes(op: OpDef, operand_infos, attrs) -> List[Optional[str]]:
    """The dtype each operand variable holds in generated code: the compute dtype, except for
    kept operands (their own dtype) and absent ones (None)."""
    compute = compute_dtype_of(signature_dtypes(op, operand_infos, attrs)[0])
    return [None if i is None else (i[0] if n in op.kept else compute)
            for n, i in zip(op.operand_names, operand_infos)]


_EXACT_IN_HALF = ("bool", "uint8", "int8")  # every value is a float16 and a bfloat16


def rounded_through(op: OpDef, operand_infos, compute: str) -> List[Optional[str]]:
    """Per operand (schema order, (dtype, priority) or None): the half dtype it is rounded to
    before it widens to float32, or None.  ``compute`` is the op's rule's (unwidened) compute
    dtype.  PyTorch's CPU kernels convert every operand to the common dtype (float16 + 0.3
    adds half(0.3); float16 == 0.3 compares with it; an int32 2049 meeting float16 is 2048)
    and only then compute in float32; ``mul``, ``div`` and ``lerp`` read a Python-scalar or
    0-d ``other``/``weight`` at float32 (``iter.original_scalar_value``): ``op.exact_scalars``.

        >>> rounded_through(get("aten::add"), [("float16", Priority.DIM),
        ...                                    ("float64", Priority.WRAPPED)], "float16")
        [None, 'float16']
    """
    if compute not in HALF_DTYPES:
        return [None] * len(operand_infos)
    return [None if info is None or name in op.kept or info[0] in (compute,) + _EXACT_IN_HALF
            or (name in op.exact_scalars and info[1] != Priority.DIM) else compute
            for name, info in zip(op.operand_names, operand_infos)]


# PyTorch's Scalar.to<T>() overflow check (c10::overflows): a signed type takes its range, an
# unsigned one -max..max (two's complement wraps a small negative); its C names, as it says them
_C_INT = {"uint8": ("uint8_t", -255, 255), "int8": ("int8_t", -128, 127),
          "int16": ("short int", -(1 << 15), (1 << 15) - 1), "int32": ("int", -(1 << 31),
                                                                      (1 << 31) - 1)}


def check_scalars_fit(op: OpDef, operands: Sequence[Any], dtype: str) -> None:
    """Raise ExecutionError where a Python-int operand named in ``op.checked_scalars`` does not
    fit the integer result ``dtype``: ``clamp(int8_x, min=2049)``, ``where(c, uint8_x, 300)``
    and ``uint8_x ** 2049`` raise in PyTorch (its kernels read the scalar with a checked
    conversion), where ``int8_x + 2049`` wraps.  None marks an operand whose value is unknown."""
    limits = _C_INT.get(dtype)
    if limits is None:
        return
    for name, v in zip(op.operand_names, operands):
        if name in op.checked_scalars and isinstance(v, (int, np.integer)) and \
                not isinstance(v, (bool, np.bool_)) and not limits[1] <= int(v) <= limits[2]:
            raise ExecutionError(f"value cannot be converted to type {limits[0]} without "
                                 f"overflow")


def _cast(xp, v, dtype):
    """``v`` as ``dtype``, converted as PyTorch converts (``casting.cast``)."""
    if hasattr(v, "ndim"):
        return casting.cast(xp, v, dtype)
    # Python scalars wrap like PyTorch's casts (uint8 - 1 adds 255), never raise OverflowError.
    return casting.cast(xp, xp.asarray(v), dtype)


def _scalar_call(op: OpDef, operands, attrs):
    """TorchScript scalar arithmetic: no operand is an array; returns a Python scalar."""
    keep = op.kept
    compute, out = scalar_signature_dtypes(
        op, [None if v is None else scalar_dtype_of(v) for v in operands], attrs)
    cast = [None if v is None else (np.asarray(v) if n in keep else _cast(np, v, compute))
            for n, v in zip(op.operand_names, operands)]
    if op.sees_dtypes:
        attrs = dict(attrs, dtypes=OpDtypes(tuple(
            None if v is None else (scalar_dtype_of(v), Priority.WRAPPED) for v in operands), out))
    with np.errstate(all="ignore"):
        return np.asarray(op.ref(np, *cast, **attrs)).astype(out).item()


def _impl_for(op: OpDef, operand_idx, attr_idx, returns_self: bool = False):
    """The interpreter's entry point for ``op``: ``impl(xp, *args)`` in schema order.  With
    ``returns_self``, an array operand already of the result dtype is returned itself unless
    ``copy`` is asked (``x.to(torch.float16)`` of a float16 x is x, whose writes it shares;
    a half goes through float32 otherwise, a copy)."""
    params, n = op.params, len(op.params)
    names = op.operand_names
    attr_names = [params[i].name for i in attr_idx]
    keep = op.kept
    check = op.precheck
    normalizing = op.normalize is not None
    rule = op.dtype_rule
    no_rounding = [None] * len(names)

    def impl(xp, *args):
        if len(args) != n or normalizing:
            args = normalize_args(op, args)
        operands = [args[i] for i in operand_idx]
        attrs = {a: args[i] for a, i in zip(attr_names, attr_idx)}
        if check is not None:
            check(operands, attrs)
        if not any(hasattr(v, "ndim") for v in operands):
            return _scalar_call(op, operands, attrs)
        infos = [operand_info(v) for k, v in zip(names, operands) if v is not None and k not in keep]
        compute, out = rule(infos, attrs)
        if op.checked_scalars:
            check_scalars_fit(op, operands, out)
        if returns_self and getattr(operands[0], "dtype", None) == out and not attrs.get("copy"):
            return operands[0]
        through = no_rounding
        if compute in HALF_DTYPES:  # (the per-operand rounding only exists for half types)
            through = rounded_through(op, [None if v is None else operand_info(v)
                                           for v in operands], compute)
            for a in op.half_attrs:
                if isinstance(attrs.get(a), (int, float)) and not isinstance(attrs[a], bool):
                    attrs[a] = casting.round_float(attrs[a], compute)
        compute = compute_dtype_of(compute)
        cast = [v if v is None or k in keep else
                _cast(xp, v if r is None else _cast(xp, v, r), compute)
                for k, v, r in zip(names, operands, through)]
        if op.sees_dtypes:
            attrs["dtypes"] = OpDtypes(tuple(None if v is None else operand_info(v)
                                             for v in operands), out)
        with np.errstate(all="ignore"):
            result = xp.asarray(op.ref(xp, *cast, **attrs))
            return result if result.dtype == out else result.astype(out)
    return impl


def elementwise(name: str, schema: str, ref: Callable, *, dtype_rule: Any = "same",
                numba: Template = None, cuda: Template = None, python_name: Any = "",
                aliases: Sequence[str] = (), infer: Optional[Callable] = None,
                dtypes: Union[str, Sequence[str]] = "all", keep: Sequence[str] = (),
                normalize: Optional[Callable] = None, scalar_out: Optional[str] = None,
                precheck: Optional[Callable] = None,
                fusible_if: Optional[Callable] = None, foldable: bool = True,
                commutative: bool = False, sees_dtypes: bool = False,
                returns_self: bool = False, exact_scalars: Sequence[str] = (),
                half_attrs: Sequence[str] = (), checked_scalars: Sequence[str] = ()) -> OpDef:
    """Register an elementwise op (see the module docstring).

    ``dtypes``: accepted promoted input dtypes (a name in DTYPE_SETS or a tuple);
    ``keep``: operands excluded from promotion and casting; ``normalize(args) -> args`` maps
    other overloads onto the schema; ``scalar_out``: the TorchScript result dtype of the
    all-scalar form when it differs (``floor(float) -> int``); ``precheck(operands, attrs)``
    raises on value-dependent errors PyTorch raises (int tensor ** negative Python int);
    ``fusible_if(attrs) -> None | reason`` refuses fusion for some constant attributes
    (dropout in training mode); ``foldable=False`` keeps constant propagation from evaluating
    it at compile time (dropout: its result depends on the mode and the generator);
    ``commutative``: the two operands may be swapped (a traced ``np.multiply(2.0, x)`` records
    ``mul(%x, 2.)``, as PyTorch's ``Tensor.__rmul__`` does); ``sees_dtypes``: the ref and
    callable templates get ``dtypes`` (``OpDtypes``, see the module docstring);
    ``returns_self``: an operand already of the result dtype is the result itself, as PyTorch
    returns ``self`` from ``to`` and ``type_as`` (see ``_impl_for``); ``exact_scalars``:
    operands not rounded to a half common dtype when they are scalars (``rounded_through``);
    ``half_attrs``: numeric attributes that are (add's alpha, hardshrink's lambd);
    ``checked_scalars``: operands whose Python int must fit an integer result
    (``check_scalars_fit``).
    """
    params = parse_schema(schema)
    operand_idx = [i for i, p in enumerate(params) if p.is_operand]
    attr_idx = [i for i, p in enumerate(params) if not p.is_operand]
    rule = DTYPE_RULES[dtype_rule] if isinstance(dtype_rule, str) else dtype_rule
    allowed = DTYPE_SETS[dtypes] if isinstance(dtypes, str) else tuple(dtypes)
    if set(allowed) != set(ALL_DTYPES):
        rule = restricted(rule, allowed, name)
    templates = {k: v for k, v in (("numba", numba), ("cuda", cuda)) if v is not None}
    if python_name == "":  # default: the name after "::"; None hides the op (aten::__and__)
        python_name = name.split("::")[1]
    op = OpDef(name, params, None, category="elementwise", python_name=python_name,
               aliases=tuple(aliases), dtype_rule=rule, templates=templates, ref=ref, infer=infer,
               kept=tuple(keep), normalize=normalize, scalar_out=scalar_out, precheck=precheck,
               fusible_if=fusible_if, foldable=foldable, commutative=commutative,
               sees_dtypes=sees_dtypes, exact_scalars=tuple(exact_scalars),
               half_attrs=tuple(half_attrs), checked_scalars=tuple(checked_scalars))
    op.impl = _impl_for(op, operand_idx, attr_idx, returns_self)
    return register(op)
