"""Render a reduction over EVERY dim (``x.sum()``, ``((x - y) ** 2).mean()``, ``x - x.mean()``:
the row layout with one row) into ONE Numba kernel that reduces in parallel, in two stages:
each pass cuts the elements into segments, run in parallel, each reducing its segment block by
block into a partial (a sum accumulates in the loop that computes its operand, in vector
partial sums: ``row_math.tl_radd``; max/min/prod compute it into a small buffer reduced by
``row_math``'s vectorized helpers); the partials are then combined in order (sums in float64,
max/min propagating NaN).  The per-row values (the mean, ``rsqrt(var + eps)``) are scalars between the passes, and
an epilogue runs over the segments in parallel too.  An MSE::

    N = in0.size
    nseg = max(1, (N + 65535) // 65536)
    Pb0_1 = np.empty(nseg, np.float64)
    for s in prange(nseg):
        lo = s * 65536
        hi = min(N, lo + 65536)
        tb0_1 = np.float64(0.0)
        for c in range(lo, hi, 4096):
            m = min(4096, hi - c)
            w0 = f0[c:c + m]
            w1 = f1[c:c + m]
            ab0_1 = np.float32(0.0)
            for j in range(m):
                ...                              # (x - y) ** 2
                ab0_1 = tl_radd_f32(ab0_1, np.float32(v1))
            tb0_1 += ab0_1
        Pb0_1[s] = tb0_1
    Tb0_1 = 0.0
    for s in range(nseg):
        Tb0_1 += Pb0_1[s]
    r0 = np.float32(np.float32(Tb0_1) / np.float32(N))
"""
from __future__ import annotations

from typing import List

from ..fuser.backend import GroupSpec, KernelSource, Unsupported
from ..fuser.row_reduce import RedInfo
from . import row_codegen
from .row_codegen import _SUFFIX, RowRenderer, _math

_SEGMENT = 1 << 16  # elements per parallel segment
_BLOCK = 4096       # a segment reduces its operand block by block through a buffer this long
_INIT = {"sum": "0.0", "prod": "1.0", "max": "-np.inf", "min": "np.inf"}


def _combine(fn: str, a: str, b: str) -> str:
    if fn == "sum":
        return f"{a} += {b}"
    if fn == "prod":
        return f"{a} *= {b}"
    op = ">" if fn == "max" else "<"
    return f"{a} = {b} if ({b} {op} {a} or {b} != {b}) else {a}"


class FullRenderer(RowRenderer):
    SHIFT_MAX = "max"

    def __init__(self, spec: GroupSpec):
        super().__init__(spec)
        if any(r.red.indices for r in spec.reductions):
            raise Unsupported("unsupported indices of a reduction over every dim")
        self.totals = {}  # buffer -> (how partials combine, accumulation dtype)

    def direct(self, r: RedInfo) -> bool:
        return False  # every operand goes through a segment's block buffer

    def reduce_call(self, fn: str, r: RedInfo, buf: str, direct: bool) -> str:
        self.totals[buf] = (fn, r.acc)
        return f"T{buf}"

    def per_element_result(self, r: RedInfo) -> List[str]:
        q = self.red_index[r.node]
        self.names[r.node.outputs[0]] = f"e{q}"
        x = f"({self.operand_acc(r)} - m{q})"
        e = _math("exp", r.acc, x)
        expr = (f"{x} - l{q}" if r.red.kind != "aten::softmax" else
                f"{e} * z{q}" if r.last_dim else f"{e} / s{q}")
        return [f"e{q} = {self.convert(f'({expr})', r.acc, r.out_dtype)}"
                if r.out_dtype != r.acc else f"e{q} = {expr}"]

    def views(self, lo: str, hi: str) -> List[str]:
        return [f"w{i} = f{i}[{lo}:{hi}]" for i, c in enumerate(self.plan.inputs) if c == "full"]

    def emit_pass(self, p: int, loop_wanted, stores, sums=None) -> List[str]:
        # ``sums`` is always empty here: reduce_call makes no tl_rsum calls; sums accumulate
        # in the block loop below
        body = self.element_lines(loop_wanted, p)
        rng = "prange" if self.parallel else "range"
        head, seg, pre, blk, tail, fin = [], [], [], [], [], []
        for buf, src, r in stores:
            fn, acc = self.totals[buf]
            pt = "np.float64" if fn == "sum" else f"np.{acc}"
            head.append(f"P{buf} = np.empty(nseg, {pt})")
            seg.append(f"t{buf} = {pt}({_INIT[fn]})")
            if fn == "sum":  # summed in the loop (tl_radd: vector partial sums), no buffer
                pre.append(f"a{buf} = np.{acc}(0.0)")
                body.append(f"a{buf} = tl_radd_{_SUFFIX[acc]}(a{buf}, np.{acc}({src(r)}))")
                blk.append(_combine(fn, f"t{buf}", f"a{buf}"))
            else:
                seg.append(f"{buf} = np.empty({_BLOCK}, np.{acc})")
                body.append(f"{buf}[j] = {src(r)}")
                blk.append(_combine(fn, f"t{buf}", f"tl_r{fn}_{_SUFFIX[acc]}({buf}, 0, m)"))
            tail.append(f"P{buf}[s] = t{buf}")
            fin += [f"T{buf} = {pt}({_INIT[fn]})", "for s in range(nseg):",
                    "    " + _combine(fn, f"T{buf}", f"P{buf}[s]")]
            if fn == "sum":
                fin.append(f"T{buf} = np.{acc}(T{buf})")
        loop = (["tl_wide_vectors()", f"lo = s * {_SEGMENT}", f"hi = min(N, lo + {_SEGMENT})"]
                + seg + [f"for c in range(lo, hi, {_BLOCK}):", f"    m = min({_BLOCK}, hi - c)"]
                + ["    " + v for v in self.views("c", "c + m")] + ["    " + a for a in pre]
                + ["    for j in range(m):"] + ["        " + b for b in body]
                + ["    " + b for b in blk] + tail)
        return head + [f"for s in {rng}(nseg):"] + ["    " + s for s in loop] + fin

    def row_body(self) -> List[str]:
        spec, plan = self.spec, self.plan
        lines = self.row_lines(0)
        for p in range(1, plan.passes + 1):
            lines += self.pass_lines(p) + self.row_lines(p)
        elem = [(t, v) for t, (v, lv) in enumerate(zip(self.outputs, plan.out_levels)) if lv == 2]
        if elem:
            body = self.element_lines([v for _, v in elem], plan.passes + 1)
            body += [f"p{t}[j] = {self.store(self.names[v], spec.values[v].dtype)}"
                     for t, v in elem]
            loop = (["tl_wide_vectors()", f"lo = s * {_SEGMENT}", f"hi = min(N, lo + {_SEGMENT})"]
                    + self.views("lo", "hi") + [f"p{t} = o{t}[lo:hi]" for t, _ in elem]
                    + ["for j in range(hi - lo):"] + ["    " + b for b in body])
            rng = "prange" if self.parallel else "range"
            lines += [f"for s in {rng}(nseg):"] + ["    " + s for s in loop]
        lines += [f"o{t}[0] = {self.store(self.names[v], spec.values[v].dtype)}"
                  for t, (v, lv) in enumerate(zip(self.outputs, plan.out_levels)) if lv == 1]
        return lines

    def kernel_lines(self) -> List[str]:
        plan = self.plan
        full = [i for i, c in enumerate(plan.inputs) if c == "full"]
        if not full:
            raise Unsupported("unsupported reduction group: no input of the reduced shape")
        body = self.row_body()
        head = [f"N = in{full[0]}.size", f"nseg = max(1, (N + {_SEGMENT - 1}) // {_SEGMENT})",
                "r = 0"]
        head += [f"f{i} = in{i}.reshape(in{i}.size)" for i in full]
        head += [f"o{t} = out{t}.reshape(out{t}.size)" for t in range(len(self.outputs))]
        return head + body


def render(spec: GroupSpec, key_hash: str, header: str) -> KernelSource:
    """The kernel module's source for a reduction over every dim (module docstring)."""
    return row_codegen.render(spec, key_hash, header, FullRenderer)
