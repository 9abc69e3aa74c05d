"""Loop-invariant statements of a generated kernel body, moved before its loops.

A value computed only from 0-d inputs, scalar arguments and constants is the same for every
element (so is one computed from a broadcast input read at index 0 in every dim: ``in0[0, 0]``
of a (1, 1) or an expanded array): the kernel computes it once, before the loop nest, instead
of per element.  Besides the
work saved, this keeps LLVM from compiling a loop around long branchy invariant code: a float16
``fmax`` beside ``elu(hardsigmoid(atan2(x2, x1)))`` of 0-d inputs took LLVM's optimizer six
minutes (tests/test_fuzz_programs.py found it; with the chain hoisted, 3 s), and a (1,) input's
``logit(sigmoid(sinh(clamp(x))))`` beside ``erfc`` over a (3, 1) loop did not compile in 10
minutes (fuzz seed 9746) before broadcast reads joined the 0-d ones.

The body is the renderer's list of single-line statements (``v3 = tl_elu_f32(v2, k0, k1, k1)``).
A statement moves when it assigns a name and everything it reads is invariant: a kernel
parameter ``in<k>`` as a whole or read at ``[()]`` or ``[0, ..., 0]`` (such an array always
has that element, so the read is safe even when the loop runs zero times), a hoisted constant ``k<k>``, a name an
earlier moved statement assigned, a helper or numpy function.  Anything else -- a loop index,
another subscript, the ``err`` flag array (an integer division stays where the interpreter would
raise), a string -- keeps it in the loop.  Order is kept on both sides.
"""
from __future__ import annotations

import re
from typing import List, Set, Tuple

__all__ = ["hoist_invariants"]

_ASSIGN = re.compile(r"^([A-Za-z_]\w*) = (.+)$")
_NAME = re.compile(r"[A-Za-z_]\w*(?:\.\w+)*")
# a 0-d input's one element, or a broadcast input's first: an index of literal zeros only
# (every dim of size 1, or of stride 0 and size > 1: codegen.expanded_dims), so it exists
_ZERO_D = re.compile(r"\bin\d+\[(?:\(\)|0(?:, 0)*)\]")
_PARAM_OR_CONST = re.compile(r"^(?:in|k)\d+$")
_FUNCTION_ROOTS = ("np", "math", "numba")
_BUILTINS = {"min", "max", "abs", "bool", "int", "float", "if", "else", "and", "or", "not",
             "True", "False", "None"}


def _invariant(expr: str, known: Set[str]) -> bool:
    if "'" in expr or '"' in expr or "[" in _ZERO_D.sub("", expr):
        return False
    for name in _NAME.findall(expr):
        root = name.split(".")[0]
        if not (root in known or root in _FUNCTION_ROOTS or root in _BUILTINS
                or _PARAM_OR_CONST.match(root) or root.startswith(("tl_", "_f16_"))):
            return False
    return True


def hoist_invariants(body: List[str]) -> Tuple[List[str], List[str]]:
    """(statements to run once before the loops, the loop body left)."""
    before: List[str] = []
    rest: List[str] = []
    known: Set[str] = set()
    for line in body:
        m = _ASSIGN.match(line)
        if m and not line.startswith(" ") and _invariant(m.group(2), known):
            before.append(line)
            known.add(m.group(1))
        else:
            rest.append(line)
            if m:
                known.discard(m.group(1))  # reassigned in the loop: no longer invariant
    return before, rest
