"""Render a reduction group of the ``columns`` layout (``fuser.column_plan``) into ONE Numba
kernel: the transposed loop nest.  The work is cut into units of (outer index, block of ``W``
contiguous columns), run in parallel; each unit keeps its per-column values in arrays of ``W``
and sweeps the ``R`` reduced rows once per accumulation pass, its inner loop over the columns
(contiguous: LLVM vectorizes it).  ``x.sum(0)`` of ``(N, C)`` minus its mean, for one unit::

    for u in prange(nu):
        o = u // nb
        jlo = (u - o * nb) * ic
        W = min(I, jlo + ic) - jlo
        obase = o * I + jlo
        a0_1 = np.empty(W, np.float64)        # the accumulator of pass 1
        r0 = np.empty(W, np.float32)          # the reduction's result, per column
        for j in range(W):
            a0_1[j] = 0.0
        for r in range(R):                    # pass 1
            base = (o * R + r) * I + jlo
            w0 = f0[base:base + W]
            for j in range(W):
                x0 = w0[j]
                a0_1[j] += x0
        for j in range(W):
            r0[j] = np.float32(a0_1[j] / R)
        for r in range(R):                    # the epilogue
            ...
                p0[j] = x0 - r0[j]

A group whose reductions are all sums (sum, mean, 1- and 2-norms) of one pass, with no
per-element output (a bias's or a layer norm weight's gradient, ``x.sum(0)``), is split along
the rows instead: units of (chunk of rows, outer index, up to 4096 columns) stream whole rows
and write partial sums, then one unit per (outer index, column block) adds the chunks' sums in
order and finishes.  The transposed sweep would read each row in blocks of a few hundred
bytes, one page apart: at 16384 x 1024 float32 it ran at a quarter of the copy bandwidth.

Sums accumulate in float64 (a column's sum is sequential over the rows, so the wider
accumulator keeps its error at float32's rounding of the result); max/min propagate NaN as
PyTorch; softmax/logsumexp are max-shifted; var/std are two-pass.  float16 computes in float32.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Dict, List, Optional

from ..fuser.backend import GroupSpec, KernelSource, Unsupported
from ..fuser.row_reduce import NORMS, RedInfo
from . import row_codegen
from .row_codegen import EXTREMES, RowRenderer, _math

_COLUMNS_PER_UNIT = 4096  # at most this many columns share one unit's accumulators
_ROW_CHUNKS = 64          # additive groups: at most this many chunks of rows ...
_ROWS_PER_CHUNK = 32      # ... of at least this many rows each


@dataclass
class PassParts:
    """One accumulation pass of a unit: ``init`` and ``after`` run per column (``j``) before
    and after the sweep over the rows, ``body`` per (row, column); ``accumulators`` are the
    additive (float64) accumulator arrays it fills."""

    init: List[str]
    body: List[str]
    after: List[str]
    accumulators: List[str]


class ColumnRenderer(RowRenderer):
    SHIFT_MAX = "max"

    def __init__(self, spec: GroupSpec):
        super().__init__(spec)
        self.arrays: Dict[str, str] = {}   # per-column array name -> numpy dtype

    def array(self, name: str, dtype: str) -> str:
        t = self.TYPE.get(dtype, dtype)
        self.arrays[name] = "np.bool_" if t == "bool" else f"np.{t}"
        return f"{name}[j]"

    # -- per column ----------------------------------------------------------------------------
    def column_lines(self, upto: int) -> List[str]:
        """Per-column values computable after ``upto`` passes (statements at ``j``)."""
        spec, plan, lines = self.spec, self.plan, []
        for i, param in enumerate(spec.subgraph.inputs):
            cls = plan.inputs[i]
            if cls in ("perrow", "colvec") and param not in self.row_vars:
                self.row_vars.add(param)
                dt = spec.values[param].dtype
                self.names[param] = self.array(f"x{i}", dt)
                at = f"f{i}[obase + j]" if cls == "perrow" else f"f{i}[jlo + j]"
                lines.append(f"x{i}[j] = {self.load(at, dt)}")
        for node in self.nodes:
            out = node.outputs[0]
            if node in self.by_node and plan.level[out] < 2 and out not in self.row_vars \
                    and plan.avail[out] <= upto:
                k, o = self.by_node[node]
                self.names[out] = self.array(f"v{k}", spec.values[out].carrier)
                self.row_vars.add(out)
                lines.append(f"v{k}[j] = {self.result(o, self.op_expr(o))}")
        return lines

    def element_at(self, i: int) -> str:
        """A ``rowval`` input is one value per swept row ``r`` (``column_plan``)."""
        return f"f{i}[o * R + r]" if self.plan.inputs[i] == "rowval" else super().element_at(i)

    def uniform_lines(self) -> List[str]:
        lines = []
        for i, param in enumerate(self.spec.subgraph.inputs):
            if self.plan.inputs[i] == "uniform":
                self.row_vars.add(param)
                self.names[param] = f"x{i}"
                rank = len(self.spec.signature[i].shape)
                at = f"in{i}[{', '.join(['0'] * rank) if rank else '()'}]"
                lines.append(f"x{i} = {self.load(at, self.spec.values[param].dtype)}")
        return lines

    def per_element_result(self, r: RedInfo) -> List[str]:
        q = self.red_index[r.node]
        self.names[r.node.outputs[0]] = f"e{q}"
        x = f"({self.operand_acc(r)} - m{q}[j])"
        expr = (f"{_math('exp', r.acc, x)} / s{q}[j]" if r.red.kind == "aten::softmax"
                else f"{x} - l{q}[j]")
        return [f"e{q} = {self.convert(f'({expr})', r.acc, r.out_dtype)}"
                if r.out_dtype != r.acc else f"e{q} = {expr}"]

    def finish(self, r: RedInfo, value: str) -> str:
        q = self.red_index[r.node]
        out = r.node.outputs[0]
        self.names[out] = self.array(f"r{q}", r.out_dtype)
        self.row_vars.add(out)
        conv = self.convert(f"({value})", r.acc, r.out_dtype) if r.out_dtype != r.acc else value
        return f"r{q}[j] = {conv}"

    # -- one pass over the rows ----------------------------------------------------------------
    def sweep(self, body: List[str], stores: List[str] = (), rows: str = "R") -> List[str]:
        """``for r in range(R)`` (or ``range(<rows>)``): the row's views, then ``body`` at each
        column ``j``."""
        plan = self.plan
        views = [f"w{i} = f{i}[base:base + W]" for i, c in enumerate(plan.inputs) if c == "full"]
        return ([f"for r in range({rows}):", "    base = (o * R + r) * I + jlo"]
                + ["    " + s for s in views + list(stores)]
                + ["    for j in range(W):"] + ["        " + s for s in body])

    def pass_lines(self, p: int) -> List[str]:
        parts = self.pass_parts(p)
        if parts is None:
            return []
        return (["for j in range(W):"] + ["    " + s for s in parts.init]
                + self.sweep(parts.body)
                + (["for j in range(W):"] + ["    " + s for s in parts.after]
                   if parts.after else []))

    def pass_parts(self, p: int) -> Optional[PassParts]:
        spec, plan = self.spec, self.plan
        init, acc, fin, accumulators = [], [], [], []
        tasks = [(r, p - plan.avail[r.operand]) for r in spec.reductions
                 if 1 <= p - plan.avail[r.operand] <= r.red.passes]
        if not tasks:
            return None
        body = self.element_lines([r.operand for r, _ in tasks], p)  # names the operands
        for r, stage in tasks:
            q, t, kind = self.red_index[r.node], f"np.{r.acc}", r.red.kind
            a = f"a{q}_{stage}"
            x = self.operand_acc(r) if kind not in NORMS else self.norm_term(r)
            is_max = stage == 1 and kind not in ("aten::sum", "aten::mean", "aten::var",
                                                 "aten::std", "aten::prod") and not (
                kind in NORMS and r.red.ord != math.inf)
            if is_max:
                sign = "<" if kind.endswith("min") else ">"
                self.arrays[a] = t
                init.append(f"{a}[j] = {t}({'' if sign == '<' else '-'}np.inf)")
                acc += [f"c{q} = {x}", f"d{q} = {a}[j]"]
                if r.red.indices:  # the first extreme, or the first NaN, and its row
                    self.arrays[f"n{q}"] = "np.int64"
                    init.append(f"n{q}[j] = 0")
                    acc += [f"if c{q} {sign} d{q} or (c{q} != c{q} and d{q} == d{q}):",
                            f"    {a}[j] = c{q}", f"    n{q}[j] = r"]
                else:
                    acc.append(f"{a}[j] = c{q} if (c{q} {sign} d{q} or c{q} != c{q}) else d{q}")
            elif kind == "aten::prod":
                self.arrays[a] = t
                init.append(f"{a}[j] = {t}(1.0)")
                acc.append(f"{a}[j] *= {x}")
            else:
                self.arrays[a] = "np.float64"
                accumulators.append(a)
                init.append(f"{a}[j] = 0.0")
                if stage == 1:
                    term = x
                elif kind in ("aten::var", "aten::std"):
                    term = f"({x} - m{q}[j]) * ({x} - m{q}[j])"
                else:
                    term = _math("exp", r.acc, f"({x} - m{q}[j])")
                acc.append(f"{a}[j] += {term}")
            if kind in ("aten::sum", "aten::mean"):
                fin.append(self.finish(r, f"{t}({a}[j])" if kind == "aten::sum"
                                       else f"{t}({a}[j] / R)"))
            elif kind in EXTREMES and r.red.indices:
                out = r.node.outputs[-1]
                self.names[out] = f"n{q}[j]"
                self.row_vars.add(out)
                if kind in ("aten::max", "aten::min"):
                    fin.append(self.finish(r, f"{a}[j]"))
            elif kind in EXTREMES or kind == "aten::prod":
                fin.append(self.finish(r, f"{a}[j]"))
            elif kind in NORMS:
                fin.append(self.finish(r, f"np.sqrt({t}({a}[j]))" if r.red.ord == 2
                                       else f"{t}({a}[j])"))
            elif kind in ("aten::var", "aten::std"):
                self.arrays[f"m{q}"] = t
                if stage == 1:
                    fin.append(f"m{q}[j] = {t}({a}[j] / R)")
                else:
                    var = f"{t}({a}[j] / max(R - {r.red.correction!r}, 0.0))"
                    fin.append(self.finish(r, var if kind == "aten::var" else f"np.sqrt({var})"))
            elif stage == 1:  # softmax family: the max (logsumexp: an infinite one shifts by 0)
                self.arrays[f"m{q}"] = t
                fin.append(f"m{q}[j] = {a}[j] if abs({a}[j]) != np.inf else {t}(0.0)"
                           if kind == "aten::logsumexp" else f"m{q}[j] = {a}[j]")
            elif kind == "aten::logsumexp":
                fin.append(self.finish(r, f"{_math('log', r.acc, f'{t}({a}[j])')} + m{q}[j]"))
            else:
                self.arrays[f"s{q}"] = t
                fin.append(f"s{q}[j] = {t}({a}[j])")
                if kind == "aten::log_softmax":
                    self.arrays[f"l{q}"] = t
                    fin.append(f"l{q}[j] = {_math('log', r.acc, f's{q}[j]')}")
        return PassParts(init, body + acc, fin + self.column_lines(p), accumulators)

    def unit_body(self) -> List[str]:
        spec, plan = self.spec, self.plan
        lines = self.uniform_lines()
        first = self.column_lines(0)
        if first:
            lines += ["for j in range(W):"] + ["    " + s for s in first]
        for p in range(1, plan.passes + 1):
            lines += self.pass_lines(p)
        elem = [(t, v) for t, (v, lv) in enumerate(zip(self.outputs, plan.out_levels)) if lv == 2]
        if elem:
            body = self.element_lines([v for _, v in elem], plan.passes + 1)
            body += [f"p{t}[j] = {self.store(self.names[v], spec.values[v].dtype)}"
                     for t, v in elem]
            lines += self.sweep(body, [f"p{t} = o{t}[base:base + W]" for t, _ in elem])
        return lines + self.column_stores()

    def column_stores(self) -> List[str]:
        """The per-column outputs' stores (after the last pass)."""
        spec, plan = self.spec, self.plan
        per_col = [f"o{t}[obase + j] = {self.store(self.names[v], spec.values[v].dtype)}"
                   for t, (v, lv) in enumerate(zip(self.outputs, plan.out_levels)) if lv == 1]
        return ["for j in range(W):"] + ["    " + s for s in per_col] if per_col else []

    def additive(self) -> bool:
        """One pass of sums only (sum, mean, 1- and 2-norms) and no per-element output: the
        rows can be cut into chunks whose partial sums are added up afterwards."""
        plan = self.plan
        return plan.passes == 1 and 2 not in plan.out_levels and all(
            r.red.kind in ("aten::sum", "aten::mean")
            or (r.red.kind in NORMS and r.red.ord != math.inf) for r in self.spec.reductions)

    def split_lines(self) -> List[str]:
        """The additive case in two parallel loops (module docstring): units of (row chunk,
        outer index, block of whole rows' columns) write partial sums, then units of (outer
        index, column block) add them up in chunk order and finish."""
        ind = lambda lines: ["    " + s for s in lines]  # noqa: E731
        uniform = self.uniform_lines()  # first: the column values may read a 0-d input
        first = self.column_lines(0)
        setup = uniform + (["for j in range(W):"] + ind(first) if first else [])
        parts = self.pass_parts(1)
        finish = ["for j in range(W):"] + ind(parts.after) + self.column_stores()
        unit = self.unit_head("uu") + setup
        acc = parts.accumulators
        rng = "prange" if self.parallel else "range"
        head = [f"ic = min(I, {_COLUMNS_PER_UNIT})", "nb = (I + ic - 1) // ic", "nu = O * nb",
                f"nc = max(1, min({_ROW_CHUNKS}, R // {_ROWS_PER_CHUNK}))"]
        head += [f"part{k} = np.empty((nc, O * I), np.float64)" for k in range(len(acc))]
        chunk = (ind(unit) + ["    for j in range(W):"] + ind(ind(parts.init))
                 + ind(self.sweep(parts.body, rows="ck * R // nc, (ck + 1) * R // nc"))
                 + [f"    pw{k} = part{k}[ck, obase:obase + W]" for k in range(len(acc))]
                 + ["    for j in range(W):"]
                 + [f"        pw{k}[j] = {a}[j]" for k, a in enumerate(acc)])
        total = (ind(unit) + ["    for j in range(W):"] + [f"        {a}[j] = 0.0" for a in acc]
                 + ["    for ck in range(nc):"]
                 + [f"        pw{k} = part{k}[ck, obase:obase + W]" for k in range(len(acc))]
                 + ["        for j in range(W):"]
                 + [f"            {a}[j] += pw{k}[j]" for k, a in enumerate(acc)]
                 + ind(finish))
        return (head + [f"for u in {rng}(nu * nc):", "    ck = u // nu", "    uu = u - ck * nu"]
                + chunk + [f"for uu in {rng}(nu):"] + total)

    def kernel_lines(self) -> List[str]:
        plan = self.plan
        full = [i for i, c in enumerate(plan.inputs) if c == "full"]
        if not full:
            raise Unsupported("unsupported reduction group: no input of the reduced shape")
        a, b = plan.dims[0], plan.dims[-1] + 1
        size = lambda ds: " * ".join(f"in{full[0]}.shape[{d}]" for d in ds) or "1"  # noqa: E731
        head = [f"O = {size(range(a))}", f"R = {size(range(a, b))}",
                f"I = {size(range(b, len(plan.shape)))}"]
        head += [f"f{i} = in{i}.reshape(in{i}.size)" for i, c in enumerate(plan.inputs)
                 if c in ("full", "perrow", "colvec", "rowval")]
        head += [f"o{t} = out{t}.reshape(out{t}.size)" for t in range(len(self.outputs))]
        if self.additive():
            return head + self.split_lines()
        body = self.unit_body()  # before the units' arrays: it decides them
        # enough units for the threads, each a block of columns that stays in cache
        head += [f"ic = min(max(64, ((I + 7) // 8 + 15) // 16 * 16), {_COLUMNS_PER_UNIT})",
                 "nb = (I + ic - 1) // ic", "nu = O * nb"]
        rng = "prange" if self.parallel else "range"
        return head + [f"for u in {rng}(nu):"] + ["    " + s for s in self.unit_head("u") + body]

    def unit_head(self, u: str) -> List[str]:
        """The start of unit ``u`` (an index over outer index x column block): its outer index
        ``o``, columns ``[jlo, jlo + W)`` and per-column arrays (all rendered by then)."""
        return (["tl_wide_vectors()", f"o = {u} // nb", f"jlo = ({u} - o * nb) * ic",
                 "W = min(I, jlo + ic) - jlo", "obase = o * I + jlo"]
                + [f"{name} = np.empty(W, {dt})" for name, dt in self.arrays.items()])


def render(spec: GroupSpec, key_hash: str, header: str) -> KernelSource:
    """The kernel module's source for a ``columns`` reduction group (module docstring)."""
    return row_codegen.render(spec, key_hash, header, ColumnRenderer)
