"""The elementwise-op builder: one call defines an op's semantics for every consumer.

    elementwise("aten::mul", "Tensor self, Tensor other", ref=lambda xp, a, b: a * b,
                numba="{self} * {other}", cuda="{self} * {other}")

* ``ref(xp, *operands, **attrs)``: the reference, on arrays already cast to the compute dtype.
* ``dtype_rule((dtype, priority) per operand, attrs) -> (compute_dtype, out_dtype)``:
  ``same`` (result_type), ``float`` (int/bool become float32: exp, true div), ``compare``
  (compute in result_type, produce bool), or a custom function.
* templates: a scalar expression per language over the operand names and attribute names in
  braces; a dict picks by the compute dtype (``"float32"``), then its category (``"float"``,
  ``"int"``, ``"bool"``), then ``"default"``.  Attributes are rendered as literals; operands as
  variables holding the compute dtype.

float16 and bfloat16 are computed in float32 (as PyTorch's CPU kernels and CUDA do) and
rounded once at the end, so every backend sees the same compute dtype: ``compute_dtype_of``.
"""
from __future__ import annotations

from typing import Any, Callable, Dict, Optional, Sequence, Tuple, Union

import numpy as np

from .dtypes import Priority, is_bool, is_float, is_int, operand_info, result_type, to_float
from .registry import OpDef, parse_schema, register

# A template is a string, a dict keyed by dtype/category/"default", or a function
# (compute_dtype, attrs) -> string, for code that depends on an attribute (div's rounding_mode).
Template = Union[str, Dict[str, str], Callable[[str, Dict[str, Any]], str]]


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


DTYPE_RULES = {"same": rule_same, "float": rule_float, "compare": rule_compare, "bool": rule_bool}


def compute_dtype_of(dtype: str) -> str:
    """The dtype arithmetic happens in: half types widen to float32."""
    return "float32" if dtype in ("float16", "bfloat16") else dtype


def category_name(dtype: str) -> str:
    return "float" if is_float(dtype) else "int" if is_int(dtype) else "bool"


def pick_template(template: Template, compute_dtype: str,
                  attrs: Optional[Dict[str, Any]] = None) -> Optional[str]:
    """The template text for ``compute_dtype``, or None if the op has none for it."""
    if isinstance(template, str):
        return template
    if callable(template):
        return template(compute_dtype, attrs or {})
    for key in (compute_dtype, category_name(compute_dtype), "default"):
        if key in template:
            return template[key]
    return None


def signature_dtypes(op: OpDef, operand_infos, attrs) -> Tuple[str, str]:
    """(compute dtype, output dtype) of ``op`` for operands described as (dtype, priority)."""
    present = [i for i in operand_infos if i is not None]
    return op.dtype_rule(present, attrs)


def _impl_for(op_ref: Callable, operand_idx, attr_names, attr_idx, name: str):
    def impl(xp, *args):
        operands = [args[i] for i in operand_idx]
        attrs = {n: args[i] for n, i in zip(attr_names, attr_idx)}
        op = _BY_NAME[name]
        compute, out = signature_dtypes(op, [None if v is None else operand_info(v)
                                             for v in operands], attrs)
        compute = compute_dtype_of(compute)
        cast = [None if v is None else xp.asarray(v, dtype=compute) for v in operands]
        with np.errstate(all="ignore"):
            result = op_ref(xp, *cast, **attrs)
        return xp.asarray(result).astype(out, copy=False)
    return impl


_BY_NAME: Dict[str, OpDef] = {}


def elementwise(name: str, schema: str, ref: Callable, *, dtype_rule: Any = "same",
                numba: Template = None, cuda: Template = None, python_name: Optional[str] = None,
                aliases: Sequence[str] = (), infer: Optional[Callable] = None) -> OpDef:
    """Register an elementwise op (see the module docstring)."""
    params = parse_schema(schema)
    operand_idx = [i for i, p in enumerate(params) if p.is_operand]
    attr_idx = [i for i, p in enumerate(params) if not p.is_operand]
    attr_names = [params[i].name for i in attr_idx]
    rule = DTYPE_RULES[dtype_rule] if isinstance(dtype_rule, str) else dtype_rule
    templates = {k: v for k, v in (("numba", numba), ("cuda", cuda)) if v is not None}
    op = OpDef(name, params, _impl_for(ref, operand_idx, attr_names, attr_idx, name),
               category="elementwise", python_name=python_name or name.split("::")[1],
               aliases=tuple(aliases), dtype_rule=rule, templates=templates, ref=ref, infer=infer)
    _BY_NAME[name] = op
    return register(op)
