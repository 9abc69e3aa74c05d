"""Single ops against another implementation (PyTorch, or an op's numpy formula).

The companion of ``differential``: the same special values (``value_grid``) and the same rule
(``compare``), applied op by op to the interpreter's implementation (``op.impl``, what the
interpreter runs for a node) and to a *reference*: ``reference(op, args)`` returns a numpy array
or a Python scalar, raises ``NoReference`` when it has no overload for these argument kinds (not
a semantic refusal: nothing is compared), or raises anything else to refuse, and then ours must
refuse too (a ``TorchlikeError`` or ``ZeroDivisionError``).

``reference_failures(case, reference)`` runs one op case over every dtype's grid of special
values (and again without zero divisors when integer division raised), then mixed dtypes,
0-d tensors and Python scalars on the second operand.
"""
from __future__ import annotations

import itertools
from typing import Any, Callable, Dict, List, Optional, Sequence, Set, Tuple

import numpy as np
from differential import DTYPES, OpCase, compare, special_values, term_atol, value_grid

from torchlike.errors import TorchlikeError
from torchlike.ops.elementwise_base import kept_operands
from torchlike.ops.registry import OpDef

Reference = Callable[[OpDef, List[Any]], Any]
# quirk(args) -> bool mask of elements where the reference is known to be wrong (float32/16
# results only, unless marked ``every_float``)
Quirk = Callable[[List[Any]], Any]
_QUIRK_DTYPES = (np.float32, np.float16)


def every_float(quirk: Quirk) -> Quirk:
    """Mark ``quirk`` as applying to float64 results too: a PyTorch quirk of a code path (its
    vectorized loop against its scalar one), not of float32 or float16 rounding."""
    quirk.every_float = True
    return quirk


class NoReference(Exception):
    """The reference has no overload for these argument kinds: nothing to compare."""


def ours(op: OpDef, args: Sequence[Any]) -> Any:
    """The interpreter's implementation of ``op`` on ``args`` (schema order, all present)."""
    with np.errstate(all="ignore"):
        return op.impl(np, *args)


def check_reference(op: OpDef, args: List[Any], reference: Reference,
                    quirk: Optional[Quirk] = None, zero_sign: bool = True) -> Optional[str]:
    """None if ours and the reference agree on ``args`` (both refusing counts), else a message.
    ``quirk``: elements of float32/float16 results (every float result: ``every_float``)
    where the reference is known to be wrong;
    ``zero_sign=False``: a zero's sign is not compared (ops whose choice between two tied
    zeros is the implementation's: max(-0.0, 0.0))."""
    try:
        theirs = reference(op, args)
    except NoReference:
        return None
    except Exception as e:  # the reference refuses: we must refuse with a typed error
        try:
            ours(op, args)
        except (TorchlikeError, ZeroDivisionError):
            return None
        return f"reference raised {type(e).__name__}: {str(e)[:60]} but we did not"
    try:
        mine = ours(op, args)
    except Exception as e:
        return f"we raised {type(e).__name__}: {e} but the reference did not"
    if not isinstance(theirs, np.ndarray):
        return None if mine == theirs else f"scalar {mine!r} vs {theirs!r}"
    if not isinstance(mine, np.ndarray):
        return f"not an ndarray: {type(mine).__name__}"
    widths = (np.float64,) + _QUIRK_DTYPES if getattr(quirk, "every_float", False) else \
        _QUIRK_DTYPES
    if quirk is not None and theirs.dtype in widths and mine.shape == theirs.shape:
        skip = np.broadcast_to(quirk(args), mine.shape)
        if skip.any():
            theirs = theirs.copy()
            theirs[skip] = mine[skip]
    if not zero_sign and mine.dtype.kind == "f" and mine.shape == theirs.shape:
        ties = (mine == 0) & (theirs == 0)
        if ties.any():
            theirs = theirs.copy()
            theirs[ties] = mine[ties]
    return compare(mine, theirs, extra_atol=term_atol(
        op.name, [a for p, a in zip(op.params, args) if p.is_operand]))


def build_args(op: OpDef, operands: Sequence[Any], attrs: Dict[str, Any]) -> List[Any]:
    """Operands in schema order, attributes from ``attrs`` or the schema defaults."""
    it = iter(operands)
    return [next(it) if p.is_operand else attrs.get(p.name, p.default) for p in op.params]


def operand_arrays(op: OpDef, dtype: str, nonzero_rest: bool = False) -> List[np.ndarray]:
    """The grid of special values (without integer extremes) as ``op``'s operands."""
    arrays = value_grid(dtype, len(op.operand_names), nonzero_rest)
    keep = kept_operands(op)
    for k, name in enumerate(op.operand_names):
        if name in keep:  # where's condition, masked_fill's mask: a bool pattern
            arrays[k] = (np.arange(arrays[0].size) % 3 == 0)
    if op.name == "aten::type_as":
        arrays = [arrays[0]]
    if op.name == "aten::masked_fill":  # value is a 0-d tensor (PyTorch refuses more)
        arrays[2] = arrays[2][-1].copy()
    return arrays


def reference_failures(case: OpCase, reference: Reference, quirk: Optional[Quirk] = None,
                       known_gaps: Set[Tuple[str, str, Any]] = frozenset(),
                       dtypes: Sequence[str] = DTYPES, mixed: bool = True,
                       zero_sign: bool = True) -> List[str]:
    """Every dtype's special-value grid, same-dtype operands; then (``mixed``) mixed dtypes and
    0-d / Python-scalar second operands.  ``known_gaps``: (op name, dtype, scalar) not checked;
    ``quirk``, ``zero_sign``: see ``check_reference``."""
    op, attrs = case.op, case.attrs

    def check(args: List[Any]) -> Optional[str]:
        return check_reference(op, args, reference, quirk, zero_sign)

    failures = []
    for dtype in dtypes:
        operands = operand_arrays(op, dtype)
        if op.name == "aten::type_as":
            for other in ("float64", "int8", "bool"):
                msg = check([operands[0], np.zeros(1, other)])
                failures.append(msg and f"{dtype} as {other}: {msg}")
            continue
        msg = check(build_args(op, operands, attrs))
        if msg is None or "raised" in msg:
            # Integer division by zero raises on both sides: check values without zeros too.
            msg = msg or check(build_args(op, operand_arrays(op, dtype, nonzero_rest=True), attrs))
        failures.append(msg and f"{dtype}: {msg}")
    if mixed and len(op.operand_names) >= 2 and op.name != "aten::type_as":
        failures += _mixed(op, attrs, check, known_gaps, dtypes)
    return [f for f in failures if f]


def _mixed(op: OpDef, attrs, check, known_gaps, dtypes) -> List[str]:
    """Mixed dtypes and priorities on the second operand: tensor, 0-d tensor, Python scalar."""
    out = []
    keep = kept_operands(op)
    rng = np.random.default_rng(1)
    for da, db in itertools.product(dtypes, dtypes):
        if da == db:
            continue
        a = special_values(da)[:6]
        vb = special_values(db)
        seconds = [np.resize(vb[1:7], a.size), np.array(vb[-1])]  # a tensor, a 0-d tensor
        if db in ("int16", "int32", "int64"):  # ints that round when they meet float16
            seconds += [np.resize(np.array([2049, -4097, 32767], db), a.size),
                        np.array(2049, db)]
        for second in seconds:
            operands = []
            for name in op.operand_names:
                if name in keep:
                    operands.append(rng.random(a.shape) > 0.5)
                elif not operands or (len(operands) == 1 and op.operand_names[0] in keep):
                    operands.append(a)
                else:
                    operands.append(second if second.ndim == 0 else second[:a.size])
            msg = check(build_args(op, operands, attrs))
            if msg:
                out.append(f"{da} with {db}{'' if second.ndim else ' (0-d)'}: {msg}")
    for da in dtypes:
        a = np.resize(special_values(da)[:6], (2, 3))
        for scalar in (True, 2, -3, 1.5, 0.0, 0.3, 2049):  # 0.3, 2049: not float16 values
            operands = [a if i == 0 else scalar for i, _ in enumerate(op.operand_names)]
            operands = [(a > 0) if n in keep else v for n, v in zip(op.operand_names, operands)]
            if op.operand_names[0] in keep:
                operands[1] = a
            if (op.name, da, scalar) in known_gaps:
                continue
            msg = check(build_args(op, operands, attrs))
            if msg:
                out.append(f"{da} with scalar {scalar!r}: {msg}")
    return out
