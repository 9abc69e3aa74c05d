"""What every backend's kernel for a ``GroupSpec`` writes, and how a launcher assembles the
group's outputs from it -- backend-neutral, so the CPU and CUDA backends share it (neither
imports the other).

    outs = kernel_outputs(spec)            # the values the kernel writes, in parameter order
    plan = output_plan(spec, outs)         # one OutputSource per group output
    assemble = output_assembler(plan)      # (kernel results, group args) -> group outputs

A group output is a kernel output (an op's result or a chunk the kernel copies), an input passed
straight through (a group that returns its own input), a constant (a group returning
``prim::Constant``), or the concatenation of kernel outputs (``prim::FusedConcat``,
``concat_outputs.py``: concatenated here; the CPU kernel writes its pieces into the
concatenation instead): only the first and the last kinds cost the kernel anything.
"""
from __future__ import annotations

import enum
import importlib
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple

import numpy as np

from ..interpreter import constant_runtime_value
from ..ir.graph import Value
from .backend import GroupSpec, ValueKind

__all__ = ["kernel_outputs", "piece_starts", "OutputKind", "OutputSource", "output_plan",
           "output_assembler"]


def kernel_outputs(spec: GroupSpec) -> List[Value]:
    """The distinct group outputs the kernel writes (op results and chunks); the others are
    passed through (an input returned as is, a constant)."""
    seen: Dict[Value, None] = {}
    for o in spec.outputs:
        info = spec.values[o]
        if info.kind == ValueKind.CONCAT:  # its pieces (concat_outputs.py)
            seen.update(dict.fromkeys(spec.concats[o].pieces))
        elif info.kind == ValueKind.OP or (info.kind == ValueKind.ARRAY and
                                           info.chunk is not None):
            seen[o] = None
    return list(seen)


def piece_starts(spec: GroupSpec) -> Dict[Value, Tuple[int, int, int]]:
    """Where each ``prim::FusedConcat`` piece starts in its concatenation: (dim, how many
    earlier pieces have the iteration's size along dim, how many have size 1 there), so that
    a kernel computes the start from its loop bounds (it serves every shape of its key)."""
    out: Dict[Value, Tuple[int, int, int]] = {}
    for c in spec.concats.values():
        full = ones = 0
        for p in c.pieces:
            out[p] = (c.dim, full, ones)
            one = spec.values[p].shape[c.dim] == 1
            full, ones = full + (not one), ones + one
    return out


class OutputKind(enum.Enum):
    KERNEL_OUTPUT = "kernel output"          # ``index``: the kernel's j-th output array
    INPUT_PASSTHROUGH = "input passthrough"  # ``index``: the group's input i, returned as is
    CONSTANT = "constant"                    # ``value``: a constant's runtime value
    CONCAT = "concat"                        # kernel outputs ``value`` (slots) along ``index``


@dataclass(frozen=True)
class OutputSource:
    """Where one group output comes from (see ``OutputKind``)."""

    kind: OutputKind
    index: int = -1
    value: Any = None


def output_plan(spec: GroupSpec, written: Sequence[Value]) -> List[OutputSource]:
    """How a launcher produces each group output, given the values its kernel writes (in
    order)."""
    slot = {v: j for j, v in enumerate(written)}
    plan: List[OutputSource] = []
    for v in spec.outputs:
        info = spec.values[v]
        if v in slot:
            plan.append(OutputSource(OutputKind.KERNEL_OUTPUT, slot[v]))
        elif info.kind == ValueKind.CONCAT:
            c = spec.concats[v]
            plan.append(OutputSource(OutputKind.CONCAT, c.dim, tuple(slot[p] for p in c.pieces)))
        elif info.kind in (ValueKind.ARRAY, ValueKind.SCALAR):
            plan.append(OutputSource(OutputKind.INPUT_PASSTHROUGH, info.input))
        else:
            plan.append(OutputSource(OutputKind.CONSTANT,
                                     value=constant_runtime_value(v.node, np)))
    return plan


def is_direct(plan: Sequence[OutputSource], n_written: int) -> bool:
    """The group's outputs are exactly the kernel's, in order."""
    return len(plan) == n_written and all(
        s.kind is OutputKind.KERNEL_OUTPUT and s.index == j for j, s in enumerate(plan))


def output_assembler(plan: Sequence[OutputSource]
                     ) -> Optional[Callable[[List[Any], Sequence[Any]], List[Any]]]:
    """``assemble(results, args) -> outputs`` for a launcher's warm path, or None when the
    kernel's results are the outputs as they are (``is_direct``)."""
    if is_direct(plan, sum(s.kind is OutputKind.KERNEL_OUTPUT for s in plan)):
        return None
    # (source, index or value) pairs with the kinds as small ints: the warm path compares ints
    # and reads no attributes.
    steps = [(_STEP[s.kind], s.value if s.kind is OutputKind.CONSTANT else
              (s.index, s.value) if s.kind is OutputKind.CONCAT else s.index) for s in plan]

    def assemble(results: List[Any], args: Sequence[Any]) -> List[Any]:
        return [results[x] if k == _RESULT else args[x] if k == _ARG else
                _concatenate([results[j] for j in x[1]], x[0]) if k == _CAT else x
                for k, x in steps]
    return assemble


def _concatenate(parts: List[Any], dim: int) -> Any:
    """numpy's or CuPy's concatenate, for the arrays' own module."""
    if isinstance(parts[0], np.ndarray):
        return np.concatenate(parts, axis=dim)
    return importlib.import_module(type(parts[0]).__module__.split(".")[0]).concatenate(
        parts, axis=dim)


_RESULT, _ARG, _CONST, _CAT = 0, 1, 2, 3
_STEP = {OutputKind.KERNEL_OUTPUT: _RESULT, OutputKind.INPUT_PASSTHROUGH: _ARG,
         OutputKind.CONSTANT: _CONST, OutputKind.CONCAT: _CAT}
