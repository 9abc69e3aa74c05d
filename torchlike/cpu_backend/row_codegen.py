"""Render a fusion group with row reductions (``fuser.row_reduce``) into ONE Numba kernel.

The rows run in parallel (a ``prange`` over chunks of rows, each chunk with its own row
buffers); inside a row, one loop per accumulation pass and one epilogue loop, each a plain
elementwise loop that LLVM vectorizes.  Layer norm from mean/sub/mul/mean/rsqrt::

    for c in prange(nch):                      # chunks of rc rows
        b1_1 = np.empty(N, np.float32)         # the second mean's operand, per element
        for r in range(c * rc, min(R, c * rc + rc)):
            base = r * N
            w0 = f0[base:base + N]             # the row of x (views: loops index from 0)
            p0 = o0[base:base + N]
            r0 = np.float32(tl_rsum_f32(f0, base, N) / np.float32(N))   # pass 1: mean(x)
            for j in range(N):                                            # pass 2
                x0 = w0[j]
                v0 = x0 - r0
                v1 = v0 * v0
                b1_1[j] = v1
            r1 = np.float32(tl_rsum_f32(b1_1, 0, N) / np.float32(N))    # mean(xc * xc)
            v2 = np.float32((r1 + np.float32(1e-05)))                    # per row
            v3 = np.float32((np.float32(1) / np.sqrt(v2)))
            for j in range(N):                                            # epilogue
                x0 = w0[j]
                x1 = f1[j]                     # gamma: one value per column
                v0 = x0 - r0
                ...
                p0[j] = v6

A reduction's operand is stored in a row buffer (in the dtype it accumulates in) and reduced by
``row_math``'s vectorized helpers, or reduced straight from the input when it is one; later
loops read a buffered value back instead of computing it again (softmax's ``exp(x - max)``).
Softmax and log_softmax are max-subtracted (a max pass, then a sum-of-exp pass); float16
accumulates and computes in float32 and is rounded once, as PyTorch does.  An input broadcast
within the row (``block``: a group norm's per-channel weight) is expanded into a row buffer
``w<i>`` when its row changes, and read like a full input.

A group whose outputs are all per row (logsumexp, norms, a loss per row) finishes its rows in
lockstep: the chunk's rows first run their passes and keep what the finishing arithmetic reads
(``t_b0_2``, ``m0``, ...) in small per-chunk arrays, then one loop over the chunk's rows does
that arithmetic -- ``log(sum) + max`` -- vectorized across rows.  Row by row it is a chain of
dependent scalar operations per row (rows of 64: 1.39 against 0.94 ns per element for
logsumexp, one thread).  Groups writing whole rows keep the row-by-row form: rereading the
chunk for the epilogue costs more than the chain saves once rows are long (rows of 1024).
"""
from __future__ import annotations

import math
import re
from typing import Dict, List, Optional, Set

from ..fuser.backend import GroupSpec, KernelSource, Unsupported, ValueKind
from ..fuser.row_plan import BlockIndex, block_index
from ..fuser.row_reduce import NORMS, RedInfo
from ..ir.graph import Value
from ..ops import elementwise_base as ew
from ..ops import registry
from . import codegen
from .codegen import F16_HELPERS, KERNEL_DECORATOR, NumbaKernelInfo, _Renderer, arg_types, carrier
from .row_math import SUM_BLOCK

_SUFFIX = {"float32": "f32", "float64": "f64"}
EXTREMES = ("aten::amax", "aten::amin", "aten::max", "aten::min", "aten::argmax", "aten::argmin")
_ROWS_PER_CHUNK_ELEMENTS = 16384  # a parallel chunk holds at least this many elements


_DIRECT_CALL = re.compile(r"tl_r\w+_(f32|f64)\(f\d+, base, N\)")
# what a statement of the row body reads of the row's data (its loops are indented)
_ROW_DATA = re.compile(r"\b(?:w\d+|f\d+|in\d+|b\d+_\d+|p\d+|base)\b")
_ASSIGNED = re.compile(r"^(\w+) (?:=|\+=) ")
_WORK = re.compile(r"\btl_|\bnp\.sqrt|\bmath\.|/")


def _shared_calls(after: List[str], p: int, dtypes: Dict[str, str]) -> List[str]:
    """``after`` with each row reduction of an input that two reductions of pass ``p`` make
    (layer norm's mean and var's own mean: both ``tl_rsum_f32(f0, base, N)``) computed once;
    the new variables' dtypes go into ``dtypes``."""
    calls = [m.group(0) for m in _DIRECT_CALL.finditer("\n".join(after))]
    shared = [c for c in dict.fromkeys(calls) if calls.count(c) > 1]
    for k, c in enumerate(shared):
        dtypes[f"d{p}_{k}"] = "float32" if "_f32(" in c else "float64"
    head = [f"d{p}_{k} = {c}" for k, c in enumerate(shared)]
    for k, c in enumerate(shared):
        after = [a.replace(c, f"d{p}_{k}") for a in after]
    return head + after


def _math(name: str, dtype: str, x: str) -> str:
    """The registry's Numba spelling of ``aten::<name>`` computing in ``dtype``."""
    text = ew.pick_template(registry.lookup(f"aten::{name}").templates["numba"], dtype, {})
    return text.replace("{self}", x)


class RowRenderer(_Renderer):
    # The softmax family's max only shifts exp: a NaN in the row makes the sum of exp NaN
    # whatever the max is, so the row max need not look for NaN (tl_rshift: half the work of
    # tl_rmax, whose NaN check is the row's min).  The layouts whose partials are combined
    # (columns, every dim) keep tl_rmax.
    SHIFT_MAX = "shift"

    def __init__(self, spec: GroupSpec):
        super().__init__(spec)
        self.flat = False
        self.plan = spec.rows
        self.by_node = {o.node: (i, o) for i, o in enumerate(spec.ops)}
        self.red_index = {r.node: q for q, r in enumerate(spec.reductions)}
        self.buffers: Dict[str, str] = {}       # buffer name -> dtype
        self.loop_sums: Dict[str, str] = {}     # buffer summed in the loop filling it -> f32/f64
        self.buffered: Dict[Value, str] = {}    # value -> buffer holding it per element
        self.row_vars: Set[Value] = set()       # per-row values computed so far
        self.nodes = [n for n in spec.subgraph.nodes if n.kind != "prim::Constant"]
        self.shared_dtypes: Dict[str, str] = {}  # d<p>_<k> (_shared_calls) -> its dtype

    # -- names ---------------------------------------------------------------------------------
    def acc_t(self, r: RedInfo) -> str:
        return f"np.{r.acc}"

    def operand_acc(self, r: RedInfo) -> str:
        """The reduction's operand (a per-element variable) in its accumulation dtype."""
        return self.cast(self.names[r.operand], self.spec.values[r.operand].carrier, r.acc)

    # -- per element ---------------------------------------------------------------------------
    def element_at(self, i: int) -> str:
        """Where input ``i`` is read for the element at ``j`` of the row."""
        return f"w{i}[j]" if self.plan.inputs[i] in ("full", "block") else f"f{i}[j]"

    def element_lines(self, wanted: List[Value], loop_pass: int) -> List[str]:
        """Statements computing the per-element ``wanted`` values at ``j`` (inputs loaded,
        producers computed; values buffered by an earlier pass read back)."""
        spec, plan = self.spec, self.plan
        need: Set[Value] = set()
        stack = list(wanted)
        while stack:
            v = stack.pop()
            if v in need or plan.level.get(v, 0) != 2:
                continue
            need.add(v)
            if v in self.buffered or v.node is None or v.node.kind == "prim::Constant":
                continue
            stack.extend(v.node.inputs)
        lines = []
        for i, param in enumerate(spec.subgraph.inputs):
            if param in need:
                self.names[param] = f"x{i}"
                if param in self.buffered:
                    lines.append(f"x{i} = {self.buffered[param]}[j]")
                    continue
                lines.append(f"x{i} = {self.load(self.element_at(i), spec.values[param].dtype)}")
        for node in self.nodes:
            out = node.outputs[0]
            if out not in need:
                continue
            if out in self.buffered:
                lines.append(f"{self.names[out]} = {self.buffered[out]}[j]")
            elif node in self.by_node:
                k, o = self.by_node[node]
                self.names[out] = f"v{k}"
                lines.append(f"v{k} = {self.result(o, self.op_expr(o))}")
            else:  # softmax / log_softmax: only ever read from ``epilogue_value``
                r = self.spec.reductions[self.red_index[node]]
                lines += self.per_element_result(r)
        return lines

    def per_element_result(self, r: RedInfo) -> List[str]:
        q = self.red_index[r.node]
        out = r.node.outputs[0]
        self.names[out] = f"e{q}"
        if r.red.kind == "aten::softmax":  # PyTorch's CPU kernels: see RedInfo.last_dim
            expr = f"b{q}_2[j] * z{q}" if r.last_dim else f"b{q}_2[j] / s{q}"
        else:  # log_softmax: x - max - log(sum)
            expr = f"({self.operand_acc(r)} - m{q}) - l{q}"
        return [f"e{q} = {self.convert(f'({expr})', r.acc, r.out_dtype)}"
                if r.out_dtype != r.acc else f"e{q} = {expr}"]

    # -- per row -------------------------------------------------------------------------------
    def row_lines(self, upto: int) -> List[str]:
        """Per-row values (and their scalar arithmetic) computable after ``upto`` passes."""
        lines = []
        for i, param in enumerate(self.spec.subgraph.inputs):
            if self.plan.inputs[i] == "perrow" and param not in self.row_vars:
                self.row_vars.add(param)
                self.names[param] = f"x{i}"
                lines.append(f"x{i} = {self.load(f'f{i}[r]', self.spec.values[param].dtype)}")
            elif self.plan.inputs[i] == "uniform" and param not in self.row_vars:
                self.row_vars.add(param)
                self.names[param] = f"x{i}"
                rank = len(self.spec.signature[i].shape)
                at = f"in{i}[{', '.join(['0'] * rank) if rank else '()'}]"
                lines.append(f"x{i} = {self.load(at, self.spec.values[param].dtype)}")
        for node in self.nodes:
            out = node.outputs[0]
            if node in self.by_node and self.plan.level[out] < 2 and out not in self.row_vars \
                    and self.plan.avail[out] <= upto:
                k, o = self.by_node[node]
                self.names[out] = f"v{k}"
                self.row_vars.add(out)
                lines.append(f"v{k} = {self.result(o, self.op_expr(o))}")
        return lines

    def reduce_call(self, fn: str, r: RedInfo, buf: str, direct: bool) -> str:
        if direct:
            i = self.spec.values[self.passed_on(r.operand)].input
            return f"tl_r{fn}_{_SUFFIX[r.acc]}(f{i}, base, N)"
        if fn == "sum":  # summed by the loop that fills the buffer (emit_pass): its total
            self.loop_sums[buf] = _SUFFIX[r.acc]
            return f"np.float32(t_{buf})" if r.acc == "float32" else f"t_{buf}"
        return f"tl_r{fn}_{_SUFFIX[r.acc]}({buf}, 0, N)"

    def passed_on(self, v: Value) -> Value:
        """The value ``v`` is a copy of: through ops whose Numba template is their first
        operand unchanged (a lowered layer norm's ``torchlike::norm_input``, which only checks),
        else ``v`` itself."""
        while v.node in self.by_node:
            o = self.by_node[v.node][1]
            src = v.node.inputs[0]
            if o.op.templates.get("numba") != "{self}" or src not in self.spec.values \
                    or self.spec.values[src].dtype != self.spec.values[v].dtype:
                break
            v = src
        return v

    def direct(self, r: RedInfo) -> bool:
        """The operand is an input read whole (or passed on unchanged: ``passed_on``), already
        of the accumulation dtype: reduced by ``row_math`` straight from the input, and two
        such reductions of one pass share the call (a lowered layer norm's two means)."""
        info = self.spec.values[self.passed_on(r.operand)]
        return (r.red.kind not in NORMS and info.kind == ValueKind.ARRAY and self.plan.inputs[info.input] == "full"
                and info.dtype == r.acc)

    def pass_lines(self, p: int) -> List[str]:
        """Accumulation pass ``p`` (1-based) over the row, and what it finalizes."""
        planned = self.plan_pass(p)
        if planned is None:
            return []
        loop_wanted, stores, after = planned
        sums = {buf: self.loop_sums[buf] for buf, _, _ in stores if buf in self.loop_sums}
        return self.emit_pass(p, loop_wanted, stores, sums) + after

    def plan_pass(self, p: int):
        """``(operands the loop computes, (buffer, its value, reduction) stores, statements
        after the loop)`` of pass ``p``, or None when no reduction accumulates in it."""
        spec, plan = self.spec, self.plan
        tasks = []  # (reduction, its stage)
        for r in spec.reductions:
            stage = p - plan.avail[r.operand]
            if 1 <= stage <= r.red.passes:
                tasks.append((r, stage))
        if not tasks:
            return None
        loop_wanted, stores, after = [], [], []
        for r, stage in tasks:
            q = self.red_index[r.node]
            t = self.acc_t(r)
            kind = r.red.kind
            buf = f"b{q}_{stage}"
            if stage == 1 and self.direct(r):
                src, direct = None, True
            else:
                direct = False
                loop_wanted.append(r.operand)
                self.buffers[buf] = r.acc
                if stage == 1:
                    src = self.operand_acc if kind not in NORMS else self.norm_term
                elif kind in ("aten::var", "aten::std"):  # squared deviation from the mean
                    src = (lambda r=r, q=q: f"({self.operand_acc(r)} - m{q}) * "
                                            f"({self.operand_acc(r)} - m{q})")
                else:  # exp(x - max)
                    src = (lambda r=r, q=q: _math("exp", r.acc, f"({self.operand_acc(r)} - m{q})"))
                stores.append((buf, src, r))
            if kind in ("aten::sum", "aten::mean"):
                total = self.reduce_call("sum", r, buf, direct)
                value = total if kind == "aten::sum" else f"{t}({total} / {t}(N))"
                after.append(self.finish(r, value))
            elif kind in EXTREMES and r.red.indices:  # the value, then its first index
                after.append(f"g{q} = {self.reduce_call(kind[-3:], r, buf, direct)}")
                i = self.spec.values[self.passed_on(r.operand)].input
                where = f"f{i}, base" if direct else f"{buf}, 0"
                after.append(self.finish_index(r, f"tl_rfind({where}, N, g{q})"))
                if kind in ("aten::max", "aten::min"):
                    after.append(self.finish(r, f"g{q}"))
            elif kind in EXTREMES:
                after.append(self.finish(r, self.reduce_call(kind[-3:], r, buf, direct)))
            elif kind == "aten::prod":
                after.append(self.finish(r, self.reduce_call("prod", r, buf, direct)))
            elif kind in NORMS:  # of |x| (order 1, inf) or x * x (order 2)
                fn = "max" if r.red.ord == math.inf else "sum"
                total = self.reduce_call(fn, r, buf, direct)
                after.append(self.finish(r, f"np.sqrt({total})" if r.red.ord == 2 else total))
            elif kind in ("aten::var", "aten::std"):
                if stage == 1:  # the mean
                    after.append(f"m{q} = {t}({self.reduce_call('sum', r, buf, direct)} / {t}(N))")
                else:  # PyTorch: sum of squares / max(N - correction, 0)
                    c = r.red.correction
                    var = f"{t}({self.reduce_call('sum', r, buf, direct)} / {t}(max(N - {c!r}, 0.0)))"
                    after.append(self.finish(r, var if kind == "aten::var" else f"np.sqrt({var})"))
            elif stage == 1:  # softmax family: the row max
                if kind == "aten::logsumexp":  # an infinite max shifts by 0, as in PyTorch
                    after.append(f"g{q} = {self.reduce_call(self.SHIFT_MAX, r, buf, direct)}")
                    after.append(f"m{q} = g{q} if abs(g{q}) != np.inf else {t}(0.0)")
                else:
                    after.append(f"m{q} = {self.reduce_call(self.SHIFT_MAX, r, buf, direct)}")
            elif kind == "aten::logsumexp":
                total = self.reduce_call("sum", r, buf, direct)
                after.append(self.finish(r, f"{_math('log', r.acc, total)} + m{q}"))
            else:
                after.append(f"s{q} = {self.reduce_call('sum', r, buf, direct)}")
                if kind == "aten::log_softmax":
                    after.append(f"l{q} = {_math('log', r.acc, f's{q}')}")
                elif r.last_dim:  # softmax: one division per row, a multiply per element
                    after.append(f"z{q} = {t}(1.0) / s{q}")
        return loop_wanted, stores, _shared_calls(after, p, self.shared_dtypes)

    def emit_pass(self, p: int, loop_wanted, stores, sums=None) -> List[str]:
        """The loop over the row storing each reduction's operand into its buffer; a buffer in
        ``sums`` (buffer -> "f32"/"f64") is also summed into ``t_<buffer>`` by the loop."""
        if not stores:
            return []
        sums = sums or {}
        body = self.element_lines(loop_wanted, p)
        for buf, src, r in stores:
            if buf in sums:  # the value, its store (dropped by row_body if nothing reads it)
                body += [f"y_{buf} = {src(r)}", f"{buf}[j] = y_{buf}",
                         f"k_{buf} = tl_radd_{sums[buf]}(k_{buf}, np.{r.acc}(y_{buf}))"]
            else:
                body.append(f"{buf}[j] = {src(r)}")
        for buf, src, r in stores:
            # later loops read the operand back (its variable has the buffer's type:
            # float16 lives in float32) -- softmax's exp(x - max) is read by ``e<q>``
            if src == self.operand_acc and r.operand not in self.buffered \
                    and self.TYPE[self.spec.values[r.operand].carrier] == r.acc:
                self.buffered[r.operand] = buf
        if not sums:
            return ["for j in range(N):"] + ["    " + s for s in body]
        # Summed as tl_rsum sums (partial sums by tl_radd within blocks of SUM_BLOCK, a float64
        # total): one pass over the row less.  The loops from a block offset index with
        # ``j & _NONNEG`` (codegen._offset_loop: then they vectorize).
        lines = [f"t_{buf} = 0.0" for buf in sums]
        lines += [f"for lo in range(0, N, {SUM_BLOCK}):", f"    hi = min(N, lo + {SUM_BLOCK})"]
        lines += [f"    k_{buf} = {'np.float32(0.0)' if sfx == 'f32' else '0.0'}"
                  for buf, sfx in sums.items()]
        lines += ["    " + h for h in codegen._offset_loop("j")]
        lines += ["        " + s for s in body]
        return lines + [f"    t_{buf} += k_{buf}" for buf in sums]

    def finish_index(self, r: RedInfo, value: str) -> str:
        """The indices output of ``max``/``min`` (or ``argmax``/``argmin``'s only one)."""
        q = self.red_index[r.node]
        out = r.node.outputs[-1]
        self.names[out] = self.index_name(q)
        self.row_vars.add(out)
        return f"i{q} = {value}"

    def index_name(self, q: int) -> str:
        return f"i{q}"

    def norm_term(self, r: RedInfo) -> str:
        """What a norm reduces: ``|x|`` (order 1 and inf) or ``x * x`` (order 2)."""
        x = self.operand_acc(r)
        return f"({x} * {x})" if r.red.ord == 2 else f"abs({x})"

    def finish(self, r: RedInfo, value: str) -> str:
        """A per-row reduction result ``r<q>``, converted to its output dtype."""
        q = self.red_index[r.node]
        out = r.node.outputs[0]
        self.names[out] = f"r{q}"
        self.row_vars.add(out)
        conv = self.convert(f"({value})", r.acc, r.out_dtype) if r.out_dtype != r.acc else value
        return f"r{q} = {conv}"

    def row_body(self) -> List[str]:
        spec, plan = self.spec, self.plan
        lines = self.row_lines(0)
        for p in range(1, plan.passes + 1):
            lines += self.pass_lines(p)
            lines += self.row_lines(p)
        elem_outs = [v for v, lv in zip(self.outputs, plan.out_levels) if lv == 2]
        if elem_outs:
            body = self.element_lines(elem_outs, plan.passes + 1)
            for j, v in enumerate(self.outputs):
                if plan.out_levels[j] == 2:
                    body.append(f"p{j}[j] = "
                                f"{self.store(self.names[v], spec.values[v].dtype)}")
            lines += ["for j in range(N):"] + ["    " + s for s in body]
        for j, v in enumerate(self.outputs):
            if plan.out_levels[j] == 1:
                lines.append(f"o{j}[r] = {self.store(self.names[v], spec.values[v].dtype)}")
        return self.unread_dropped(lines)

    def unread_dropped(self, lines: List[str]) -> List[str]:
        """``lines`` without the stores into a buffer summed in its filling loop that nothing
        reads back (logsumexp's and log_softmax's exp(x - max), var's squared deviations): the
        value is only summed, and the buffer is not allocated."""
        for buf in self.loop_sums:
            store = f"{buf}[j] = y_{buf}"
            used = re.compile(rf"\b{buf}\b")
            if not any(used.search(line) for line in lines if line.strip() != store):
                lines = [line for line in lines if line.strip() != store]
                del self.buffers[buf]
        return lines

    # -- the kernel ----------------------------------------------------------------------------
    def size_of(self, d: int) -> str:
        """Dim ``d`` of the reduced shape, read from an argument that has it."""
        spec, plan = self.spec, self.plan
        n = len(plan.shape)
        if plan.shape[d] == 1:
            return "1"
        for i, cls in enumerate(plan.inputs):
            if cls in ("full", "rowvec", "perrow"):
                s = spec.signature[i].shape
                j = d - (n - len(s))
                if j >= 0 and s[j] == plan.shape[d]:
                    return f"in{i}.shape[{j}]"
        for j, v in enumerate(self.outputs):
            s = spec.values[v].shape
            if plan.out_levels[j] == 2 or (d < n - plan.k and s):
                return f"out{j}.shape[{d}]"
        raise Unsupported("unsupported reduction group: no argument gives the row size")

    def kernel_lines(self) -> List[str]:
        plan = self.plan
        n, k = len(plan.shape), plan.k
        rows = [self.size_of(d) for d in range(n - k)]
        row = [self.size_of(d) for d in range(n - k, n)]
        body = self.row_body()  # first: it decides the buffers
        head = [f"R = {' * '.join(rows) or '1'}", f"N = {' * '.join(row) or '1'}"]
        for i, cls in enumerate(plan.inputs):
            if cls in ("full", "rowvec", "perrow", "block"):
                head.append(f"f{i} = in{i}.reshape(in{i}.size)")
        for j in range(len(self.outputs)):
            head.append(f"o{j} = out{j}.reshape(out{j}.size)")
        head += [f"rc = max(1, {_ROWS_PER_CHUNK_ELEMENTS} // max(N, 1))",
                 "nch = (R + rc - 1) // rc"]
        rng = "prange" if self.parallel else "range"
        chunk = ["tl_wide_vectors()"]
        chunk += [f"{b} = np.empty(N, np.{dt})" for b, dt in self.buffers.items()]
        chunk += ["for r in range(c * rc, min(R, c * rc + rc)):"]
        # each row's slices: loops index them from 0 (no negative-index checks, they vectorize)
        views = [f"w{i} = f{i}[base:base + N]" for i, cls in enumerate(plan.inputs)
                 if cls == "full"]
        views += [f"p{j} = o{j}[base:base + N]" for j, lv in enumerate(plan.out_levels) if lv == 2]
        blocks = [i for i, cls in enumerate(plan.inputs) if cls == "block"]
        if blocks:
            head += [f"S{d} = {size}" for d, size in enumerate(rows + row)]
            chunk[1:1] = self.block_buffers(blocks)
        split = None if blocks or any(lv == 2 for lv in plan.out_levels) else self.tail(body)
        rows_loop = None if split is None else self.lockstep(body[:split], body[split:], views)
        if rows_loop is None:
            chunk += ["    base = r * N"] + ["    " + s for s in self.block_rows(blocks) + views + body]
        else:
            chunk[-1:] = rows_loop
        return head + [f"for c in {rng}(nch):"] + ["    " + s for s in chunk]

    # -- rows in lockstep (see the module docstring) --------------------------------------------
    @staticmethod
    def tail(body: List[str]):
        """Where the row body's finishing arithmetic starts: after its last statement that
        reads row data or loops; None when that arithmetic is only copies (nothing to gain)."""
        last = max((k for k, line in enumerate(body)
                    if line.startswith((" ", "for ")) or _ROW_DATA.search(line)), default=-1)
        rest = body[last + 1:]
        return last + 1 if any(_WORK.search(line) for line in rest) else None

    def lockstep(self, first: List[str], rest: List[str], views: List[str]):
        """The chunk's rows: ``first`` (the passes) row by row, keeping the variables ``rest``
        reads in per-chunk arrays ``s_<name>`` of their own dtype, then ``rest`` for every row
        of the chunk in one loop, which LLVM vectorizes across rows.  None (row by row, then)
        if a variable's dtype is not known."""
        assigned = list(dict.fromkeys(m.group(1) for m in map(_ASSIGNED.match, first) if m))
        kept = [v for v in assigned if any(re.search(rf"\b{v}\b", line) for line in rest)]
        dtypes = [self.row_dtype(v) for v in kept]
        if None in dtypes:
            return None
        lines = ["ra = c * rc", "rb = min(R, ra + rc)"]
        lines += [f"s_{v} = np.empty(rb - ra, np.{'bool_' if dt == 'bool' else dt})"
                  for v, dt in zip(kept, dtypes, strict=True)]
        lines += ["for r in range(ra, rb):", "    base = r * N"]
        lines += ["    " + s for s in views + first + [f"s_{v}[r - ra] = {v}" for v in kept]]
        lines += ["for r in range(ra, rb):"]
        return lines + ["    " + s for s in [f"{v} = s_{v}[r - ra]" for v in kept] + rest]

    def row_dtype(self, name: str) -> Optional[str]:
        """The dtype of a per-row variable of the row body (by how the renderer names them),
        None for a name it does not give."""
        if name.startswith("t_"):  # a loop's float64 total
            return "float64"
        if name in self.shared_dtypes:
            return self.shared_dtypes[name]
        if not re.fullmatch(r"[xvrigmsl]\d+", name):
            return None
        kind, q = name[0], int(name[1:])
        if kind == "x":
            return carrier(self.spec.values[self.spec.subgraph.inputs[q]].dtype)
        if kind == "v":
            return carrier(self.spec.ops[q].out_dtype)
        r = self.spec.reductions[q]
        if kind == "i":
            return "int64"
        if kind == "r" and r.out_dtype != r.acc:
            return carrier(r.out_dtype)
        return r.acc  # r, and the shift / sum / log-sum g, m, s, l

    def block_buffers(self, blocks: List[int]) -> List[str]:
        """Per chunk: the row buffer each ``block`` input is expanded into (``ob<i>``: the offset
        of the input's row it holds, none yet)."""
        lines = []
        for i in blocks:
            if self.block_index(i).inner:
                dt = self.spec.signature[i].dtype  # float16 travels as its bits
                lines.append(f"w{i} = np.empty(N, np.{'uint16' if dt == 'float16' else dt})")
            lines.append(f"ob{i} = -1")
        return lines

    def block_index(self, i: int) -> BlockIndex:
        return block_index(self.spec.signature[i].shape, self.plan.shape, self.plan.k)

    def block_rows(self, blocks: List[int]) -> List[str]:
        """Per row: each ``block`` input's row ``w<i>`` -- a view where the input has the whole
        row (broadcast over some rows only), else the row buffer, refilled when the row of the
        input differs from the last one's (a group norm's weight: once per group)."""
        lines = []
        for i in blocks:
            b = self.block_index(i)
            lines.append(f"oc{i} = {b.row_offset()}")
            if not b.inner:
                lines.append(f"w{i} = f{i}[oc{i}:oc{i} + N]")
                continue
            inner = b.product(b.inner)
            lines += [f"if oc{i} != ob{i}:",
                      f"    ob{i} = oc{i}",
                      f"    for jo in range({b.product(b.outer)}):",
                      f"        t{i} = f{i}[oc{i} + jo]",
                      f"        for ji in range({inner}):",
                      f"            w{i}[jo * ({inner}) + ji] = t{i}"]
        return lines


def render(spec: GroupSpec, key_hash: str, header: str, renderer=None) -> KernelSource:
    """The kernel module's source for a group with row reductions (see the module docstring);
    ``renderer``: the renderer class (``column_codegen``'s for the columns layout)."""
    r = (renderer or RowRenderer)(spec)
    loop = r.kernel_lines()
    loop = [f"{name} = {expr}" for expr, name in r.consts.items()] + loop
    if codegen.uses_err(loop):
        raise Unsupported("unsupported integer division in a reduction group")
    params = [f"in{i}" for i in range(len(spec.signature))]
    params += [f"out{j}" for j in range(len(r.outputs))]
    name = codegen.kernel_name(key_hash)
    ops = ", ".join(n.kind.split("::")[-1] for n in r.nodes)
    lines = [header,
             f"# fused row reduction: {ops}",
             "import math",
             "import numba",
             "import numpy as np",
             "from numba import prange",
             "from torchlike.cpu_backend.scalar_math import *  # noqa: F401,F403 (tl_* helpers)",
             "from torchlike.cpu_backend.row_math import *  # noqa: F401,F403 (row reductions)",
             ""]
    if r.uses_f16:
        lines.append(F16_HELPERS)
    lines += ["",
              "@" + KERNEL_DECORATOR.format(", parallel=True" if r.parallel else ""),
              f"def {name}({', '.join(params)}):"]
    lines += ["    " + s for s in loop]
    source = "\n".join(lines) + "\n"
    info = NumbaKernelInfo(uses_err=False, hash=key_hash,
                           outputs=tuple(spec.values[v].dtype for v in r.outputs), flat=False,
                           parallel=r.parallel, arg_types=arg_types(spec, r.outputs))
    return KernelSource(name, source, (), info)
