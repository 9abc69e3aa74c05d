"""Derivative rules: how an op's entry says what its vector-Jacobian product is.

An ``OpDef``'s ``vjp`` field holds ``rule(ctx, grads) -> list``: given the output cotangents
(``grads[i]`` for output ``i``: a backward-graph ``Value``, None when nothing flows into that
output, or a Python list of those for a list-typed output) it emits the backward nodes through
``ctx`` and returns one cotangent per node input (None: no gradient, e.g. a dim or a condition).
Rules never import the autodiff engine (a higher layer): ``ctx`` is the small builder below,
implemented by ``torchlike.autodiff``.  The rules themselves live next to each op family:
``derivatives_elementwise.py`` (pointwise ops) and ``derivatives_structured.py`` (reductions,
matmuls, norms, shapes, lists); ``attach`` puts them into the registry entries.

The builder (what a rule may call)::

    ctx.node                 # the forward node (types of its inputs/outputs: the forward's)
    ctx.input(i)             # node input i as a backward-graph value (saved or recomputed)
    ctx.needs_grad(i)        # whether node input i carries a gradient (depends on a primal)
    ctx.output(i=0)          # node output i, likewise
    ctx.static(i)            # node input i's constant Python value (a dim, alpha, ...)
    ctx.emit(kind, *args)    # one node, args Values or Python constants; returns its output
    ctx.sum_to(g, fwd_value) # g summed back to a forward value's shape (broadcast gradients)
    ctx.zeros_like(fwd_value)

Elementwise rules may return cotangents in the broadcast output shape and the compute dtype:
the engine sums each back to its input's shape and casts it to the input's dtype.

This module also registers the two helper ops that backward graphs use:
``aten::sum_to_size(Tensor self, int[] size)`` (PyTorch's op: reduce broadcast dims) and
``autodiff::append(t[] list, t el)`` (a new list with ``el`` appended: loops record their
per-iteration values with it, functionally, so no pass sees a mutation).
"""
from __future__ import annotations

from typing import Callable, Dict

from ..ir.types import ListType, TensorType
from .registry import OpDef, defop, lookup, register

VJPRule = Callable  # (ctx, grads) -> list of input cotangents


def attach(rules: Dict[str, VJPRule]) -> None:
    """Put each rule into its op's registry entry (``OpDef.vjp``)."""
    for name, rule in rules.items():
        op = lookup(name)
        if op is None:
            raise ValueError(f"derivative rule for unknown op {name}")
        op.vjp = rule


def _sum_to_size(xp, x, size):
    size = tuple(int(s) for s in size)
    lead = x.ndim - len(size)
    if lead > 0:
        x = x.sum(axis=tuple(range(lead)))
    axes = tuple(i for i, s in enumerate(size) if s == 1 and x.shape[i] != 1)
    if axes:
        x = x.sum(axis=axes, keepdims=True)
    return xp.asarray(x)


def _infer_sum_to_size(node, types):
    t = types[0]
    size = node.inputs[1].constant_value()
    if not isinstance(t, TensorType):
        return [TensorType()]
    if isinstance(size, list):
        shape = tuple(int(s) for s in size)
        strides, acc = [], 1
        for d in reversed(shape):
            strides.append(acc)
            acc *= max(d, 1)
        return [t.with_(shape=shape, strides=tuple(reversed(strides)))]
    return [t.with_(shape=None, strides=None)]


defop("aten::sum_to_size", "Tensor self, int[] size", _sum_to_size, infer=_infer_sum_to_size,
      python_name=None)


def _infer_append(node, types):
    t = types[0]
    return [t if isinstance(t, ListType) else ListType(types[1])]


register(OpDef("autodiff::append", (), lambda xp, lst, el: list(lst) + [el], category="prim",
               infer=_infer_append))
