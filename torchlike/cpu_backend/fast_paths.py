"""Guarded fast paths: helpers whose exact form is costly only for rare arguments.

The kernel helpers are branch-free so the loop vectorizes, which means every lane pays for every
path.  For sin, cos and tan that is the integer Payne-Hanek reduction, needed only for
|x| >= 8192 and half of sin's cost.  SLEEF's vector sinf branches once per *vector* ("any lane
huge?"); a Numba loop cannot, so the kernel does it per block of elements instead::

    for b in prange(nb):                       # blocks of BLOCK elements (or one row)
        lo = b * 2048
        hi = min(lo + 2048, n)
        bad = False
        for i_ in range(lo, hi):               # vectorized: the fast forms, plus the guards
            i = i_ & np.int64(0x7FFFFFFFFFFFFFFF)   # (codegen._from_offset: no index checks)
            v1 = tl_sin_fast_f32(a0)
            bad |= tl_trig_huge_f32(a0)        # an OR reduction, vectorized too
            o0[i] = v1
        if bad:                                # rare: redo the block with the exact forms
            for i_ in range(lo, hi):
                i = i_ & np.int64(0x7FFFFFFFFFFFFFFF)
                v1 = tl_sin_f32(a0)
                o0[i] = v1

Only parallel kernels (``codegen.size_class``) take this form: it doubles the
loop body and the compile time with it, which small inputs would not repay.  Redoing a block is
safe because kernel outputs are always fresh arrays (``compiler.launch``):
nothing a block reads can have been overwritten by its first pass, and the integer-division
error flag is only ever set.  A new guarded helper is one ``FAST_PATHS`` entry: the exact
helper's name, its fast form (same arguments) and a guard (same arguments, True where the fast
form may be wrong).
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Dict, List, Optional

__all__ = ["FastPath", "FAST_PATHS", "BLOCK", "fast_body"]

BLOCK = 2048  # elements per guarded block of a flat loop: a redo costs at most this much


@dataclass(frozen=True)
class FastPath:
    fast: str   # helper computing the same result where ``guard`` is False
    guard: str  # helper returning True where ``fast`` may be wrong


FAST_PATHS: Dict[str, FastPath] = {
    f"tl_{name}_f32": FastPath(f"tl_{name}_fast_f32", "tl_trig_huge_f32")
    for name in ("sin", "cos", "tan")
}


def _calls(line: str, helper: str) -> List[str]:
    """The argument texts of each ``helper(...)`` call in ``line`` (balanced parentheses)."""
    args, start = [], 0
    while True:
        k = line.find(helper + "(", start)
        if k < 0:
            return args
        if k > 0 and (line[k - 1].isalnum() or line[k - 1] == "_"):
            start = k + 1
            continue
        j, depth = k + len(helper), 0
        while j < len(line):
            depth += {"(": 1, ")": -1}.get(line[j], 0)
            if depth == 0:
                break
            j += 1
        args.append(line[k + len(helper) + 1:j])
        start = j


def fast_body(body: List[str]) -> Optional[List[str]]:
    """``body`` with each guarded helper replaced by its fast form and followed by
    ``bad |= <guard>(<same arguments>)``; None when no line calls a guarded helper."""
    out, found = [], False
    for line in body:
        guards = []
        for helper, path in FAST_PATHS.items():
            args = _calls(line, helper)
            if args:
                found = True
                line = _rename(line, helper, path.fast)
                guards += [f"bad |= {path.guard}({a})" for a in args]
        out.append(line)
        out += guards
    return out if found else None


def _rename(line: str, helper: str, new: str) -> str:
    parts = line.split(helper + "(")
    res = parts[0]
    for p in parts[1:]:
        sep = new if not res or not (res[-1].isalnum() or res[-1] == "_") else helper
        res += sep + "(" + p
    return res
