"""Render a fusion group with row reductions (``fuser.row_reduce``'s ``RowPlan``) into ONE CUDA
kernel module, the GPU twin of ``cpu_backend.row_codegen``.

A row is reduced by a *team* of threads: a warp (``<name>_warp``: ``blockDim.x / 32`` rows per
block, for short rows; rows of fewer vectors than 32 take ``team_width`` lanes, several rows a
warp) or a whole block (``<name>_block``: one row per block, for long ones); teams grid-stride
over the rows.  The host (``row_launch``) picks the entry by row length, and
the ``_vec`` twin of each when every per-element array is aligned for 16-byte vectors
(``N % V == 0``).  Per row, one strided loop per accumulation pass (thread ``t`` of ``T`` takes
elements ``t, t + T, ...``: coalesced), each pass's partial results combined by
``prelude_rows.cuh``'s all-reduces (warp shuffles, then shared memory across warps), per-row
values computed by every thread, and a last loop writing the epilogue per element.
The warp's ``_vec`` entry (rows of up to ``WARP_MAX_N``) reads each per-element input's row
into registers once, before the first pass that needs it (``CACHE_BYTES`` a lane, fully
unrolled loops so the array stays in registers; the warp entries are compiled for their
128-thread blocks, which leaves ptxas room for it), and every later pass reads the registers;
a longer row forced onto a warp reads the rest from memory.
Softmax/log_softmax/logsumexp are max-subtracted (a max pass, then a sum of ``exp(x - max)``),
var/std two-pass (the mean, then squared deviations); float16 accumulates in float32 and is
rounded once, as on the CPU.  Layer norm's block entry (``gamma`` a ``rowvec``)::

    extern "C" __global__ void __launch_bounds__(512) tl_rows_..._block(
        const float32* __restrict__ in0, const float32* __restrict__ in1,
        float32* __restrict__ out0, unsigned int R, unsigned int N) {
      const unsigned int tl_t = threadIdx.x;
      const unsigned int tl_nt = blockDim.x;
      __shared__ float32 tl_sh0[1][32];
      __shared__ float32 tl_sh1[1][32];
      for (unsigned int r = blockIdx.x; r < R; r += gridDim.x) {
        const unsigned int base = r * N;
        float32 a0 = 0.0f;
        for (unsigned int j = tl_t; j < N; j += tl_nt) {       // pass 1: mean(x)
          const float32 x0 = in0[base + j];
          a0 += x0;
        }
        a0 = tl_block_allreduce<TL_SUM>(a0, tl_sh0[0]);
        const float32 r0 = (float32)(a0 / (float32)N);
        float32 a1 = 0.0f;
        for (...) { ... v0 = x0 - r0; v1 = v0 * v0; a1 += v1; }   // pass 2: mean(xc * xc)
        a1 = tl_block_allreduce<TL_SUM>(a1, tl_sh1[0]);
        const float32 r1 = (float32)(a1 / (float32)N);
        const float32 v2 = ...;                                  // per row: rsqrt(var + eps)
        for (...) { ... out0[base + j] = v5; }                   // the epilogue
      }
    }

``check`` is the backend's question (the row plan, or why there is no kernel: the executor then
splits the group); it refuses what this renderer does not know (another ``RowPlan.layout``,
reduction kinds it has no combine for, integer division).
"""
from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Callable, List, Optional, Set, Tuple

from ..fuser.backend import ArraySpec, GroupSpec, KernelInfo, KernelSource, Unsupported
from ..fuser.kernel_spec import kernel_outputs
from ..fuser.render import Renderer, uses_err
from ..fuser.row_plan import BlockIndex, block_index, plan_rows
from ..fuser.row_reduce import RedInfo
from ..ir.graph import Value
from . import kernel_templates as kt
from .codegen import CTYPE, HALF, PRELUDE, STORAGE, _Renderer, kernel_name, literal
from .layout import INT32_MAX, ITEMSIZE, MAX_PARAM_BYTES, VECTOR_BYTES
from .row_launch import WARP_BLOCK, WARP_MAX_N

VERSION = 4  # 2: rows kept in registers; 3: as many as the row needs; 4: sub-warp teams
MAX_THREADS = 512  # __launch_bounds__: the most threads row_launch gives a block
CACHE_BYTES = 128  # a warp lane's registers for cached rows: 32 of them
KINDS = ("aten::sum", "aten::mean", "aten::amax", "aten::amin", "aten::max", "aten::min",
         "aten::softmax", "aten::log_softmax", "aten::var", "aten::std", "aten::logsumexp")
CLASSES = ("full", "rowvec", "perrow", "uniform", "scalar", "block")
SCALAR_C = {bool: "bool_", int: "int64", float: "float64"}

with open(os.path.join(os.path.dirname(__file__), "prelude_rows.cuh")) as _f:
    PRELUDE_ROWS = _f.read()


def check(spec: GroupSpec) -> Optional[str]:
    """None (and ``spec.rows`` set) when this renderer has a kernel for the group, else why."""
    for r in spec.reductions:
        if r.red.kind not in KINDS:
            return f"unsupported reduction {r.red.kind} in a CUDA row kernel"
        if r.acc not in ("float32", "float64"):
            return f"unsupported accumulation dtype {r.acc} in a CUDA row kernel"
        if getattr(r.red, "indices", False):  # max.dim/min.dim with the indices used
            return f"unsupported indices output of {r.red.kind} in a CUDA row kernel"
    try:
        plan = plan_rows(spec)
    except Unsupported as e:
        return e.reason
    layout = getattr(plan, "layout", "trailing")  # a RowPlan of other layouts: not rendered here
    if layout not in (None, "trailing", "rows"):
        return f"unsupported row plan layout {layout!r} in a CUDA row kernel"
    if any(c not in CLASSES for c in plan.inputs) or any(lv not in (1, 2)
                                                         for lv in plan.out_levels):
        return "unsupported row plan input class or output level in a CUDA row kernel"
    for s in spec.signature:
        if not isinstance(s, ArraySpec) and s not in SCALAR_C:
            return f"unsupported input of type {s.__name__} in a CUDA row kernel"
    spec.rows = plan
    return None


def index_bits(spec: GroupSpec) -> int:
    return 64 if spec.rows.n_rows * spec.rows.row_size > INT32_MAX else 32


def vector_width(spec: GroupSpec) -> int:
    """Elements per 16-byte vector of the narrowest-vector array read or written per element;
    0 (scalar entries only) with a ``block`` input, whose per-element index divides: in the
    unrolled vector loop nvcc kept the vectors in local memory."""
    plan = spec.rows
    if "block" in plan.inputs:
        return 0
    sizes = [ITEMSIZE[s.dtype] for s, c in zip(spec.signature, plan.inputs, strict=False)
             if c in ("full", "rowvec")]
    sizes += [ITEMSIZE[spec.values[v].dtype] for v, lv in
              zip(kernel_outputs(spec), plan.out_levels, strict=True) if lv == 2]
    return min(VECTOR_BYTES // s for s in sizes) if sizes else 0


def _pow2_at_least(n: int) -> int:
    return 1 << max(0, n - 1).bit_length()


def team_width(spec: GroupSpec) -> int:
    """Lanes per row in the warp entries: one vector (one element without vectors) of the row
    a lane, rounded up to a power of two, at most 32; a warp takes ``32 / width`` rows at once.
    On an H200 rows of 64 float32 (16 vectors) on whole warps ran at 2.3x the copy floor, half
    of every warp idle."""
    n = spec.rows.row_size
    return 32 if n > WARP_MAX_N else min(32, _pow2_at_least(-(-n // max(1, vector_width(spec)))))


def cache_vectors(spec: GroupSpec) -> int:
    """Vectors a lane of the warp's ``_vec`` entry keeps in registers per cached input: enough
    for the row, rounded up to a power of two (rows of similar length share a kernel), at most
    ``WARP_MAX_N / (32 V)``.  Sized to the row because registers a short row leaves unused
    still cost occupancy: with the full array, rows of 64 ran at half the speed on an H200."""
    V = vector_width(spec)
    if V <= 1:
        return 0
    return _pow2_at_least(-(-min(spec.rows.row_size, WARP_MAX_N) // (team_width(spec) * V)))


def kernel_key(name: str, spec: GroupSpec) -> Tuple:
    return (name, "rows", VERSION, spec.structure, spec.input_key(), spec.rows.key(),
            index_bits(spec), vector_width(spec), cache_vectors(spec), team_width(spec))


class RowRenderer(_Renderer):
    """One entry's body: ``team`` is ``"warp"`` or ``"block"``, ``vec`` the vector width (0:
    scalar loops).  The walk follows ``cpu_backend.row_codegen`` (levels, passes, avail)."""

    def __init__(self, spec: GroupSpec, team: str, vec: int):
        Renderer.__init__(self, spec)
        self.plan = spec.rows
        self.team, self.vec = team, vec
        bits = index_bits(spec)
        self.uidx = "unsigned int" if bits == 32 else "unsigned long long"
        self.sidx = "int" if bits == 32 else "long long"
        self.half = bool(self.half_dtypes()) or any(r.out_dtype in HALF for r in spec.reductions)
        self.by_node = {o.node: (i, o) for i, o in enumerate(spec.ops)}
        self.red_index = {r.node: q for q, r in enumerate(spec.reductions)}
        self.nodes = [n for n in spec.subgraph.nodes if n.kind != "prim::Constant"]
        self.row_vars: Set[Value] = set()
        self.shared: List[str] = []  # acc dtype of each block all-reduce, in order
        self.blocks = [i for i, c in enumerate(self.plan.inputs) if c == "block"]
        # lanes per row: a warp entry's rows may take part of a warp (``team_width``); lanes
        # past the last row recompute the warp's first row with their stores off (``tl_live``),
        # so every lane reaches every shuffle
        self.width = team_width(spec) if team == "warp" else 0
        # the warp's vector entry keeps each per-element input's row in registers (up to
        # CACHE_BYTES a thread): read from memory once, not once per pass
        self.cache_k = cache_vectors(spec) if team == "warp" and vec > 1 else 0
        self.cached: List[int] = []
        budget = CACHE_BYTES if self.cache_k else 0
        for i in (i for i, c in enumerate(self.plan.inputs) if c == "full"):
            # the budget as if the row were WARP_MAX_N long: which inputs are cached does not
            # depend on the row length (CACHE_BYTES = WARP_MAX_N / 32 float32 a lane)
            size = 32 * ITEMSIZE[spec.signature[i].dtype]
            if size <= budget:
                self.cached.append(i)
                budget -= size
        self.filled: Set[int] = set()

    # -- spellings -------------------------------------------------------------------------------
    def finish_value(self, r: RedInfo, expr: str) -> str:
        """``expr`` (of the accumulation dtype) as the reduction's out dtype, rounded once."""
        if r.out_dtype in HALF:
            return f"tl_round_{'half' if r.out_dtype == 'float16' else 'bf16'}({expr})"
        return expr if r.out_dtype == r.acc else f"({CTYPE[r.out_dtype]})({expr})"

    def operand_acc(self, r: RedInfo) -> str:
        return self.cast(self.names[r.operand], self.spec.values[r.operand].carrier, r.acc)

    def lit(self, value, dtype: str) -> str:
        return literal(value, dtype)

    def allreduce(self, op: str, var: str, acc: str) -> str:
        if self.team == "warp":
            w = "" if self.width == 32 else f", {self.width}"
            return f"{var} = tl_warp_allreduce<{op}{w}>({var});"
        k = len(self.shared)
        self.shared.append(acc)
        return f"{var} = tl_block_allreduce<{op}>({var}, tl_sh{k}[tl_par]);"

    def live(self, store: str) -> str:
        """``store`` in a lane whose row is real (sub-warp teams: see ``width``)."""
        return store if self.width in (0, 32) else f"if (tl_live) {store}"

    # -- per element -----------------------------------------------------------------------------
    def element_lines(self, wanted: List[Value], at: Callable[[int, str], str],
                      loaded: List[int]) -> List[str]:
        """Statements computing the per-element ``wanted`` at the loop's element: ``at(i,
        cls)`` is input ``i``'s element; ``loaded`` gets the per-element inputs read."""
        spec, plan = self.spec, self.plan
        need: Set[Value] = set()
        stack = list(wanted)
        while stack:
            v = stack.pop()
            if v in need or plan.level.get(v, 0) != 2:
                continue
            need.add(v)
            if v.node is not None and v.node.kind != "prim::Constant":
                stack.extend(v.node.inputs)
        lines = []
        for i, param in enumerate(spec.subgraph.inputs):
            if param in need:
                self.names[param] = f"x{i}"
                dtype = spec.values[param].dtype
                loaded.append(i)
                lines.append(self.declare(f"x{i}", dtype, self.load(at(i, plan.inputs[i]), dtype)))
        for node in self.nodes:
            out = node.outputs[0]
            if out not in need:
                continue
            if node in self.by_node:
                k, o = self.by_node[node]
                self.names[out] = f"v{k}"
                lines.append(self.declare(f"v{k}", o.out_dtype, self.result(o, self.op_expr(o))))
            else:  # softmax / log_softmax, per element
                r = spec.reductions[self.red_index[node]]
                q = self.red_index[node]
                self.names[out] = f"e{q}"
                x = self.operand_acc(r)
                expr = (f"{self.math('exp', r.acc, f'{x} - m{q}')} / s{q}"
                        if r.red.kind == "aten::softmax" else f"({x} - m{q}) - l{q}")
                lines.append(self.declare(f"e{q}", r.out_dtype, self.finish_value(r, expr)))
        return lines

    @staticmethod
    def math(name: str, dtype: str, x: str) -> str:
        return f"tl_{name}(({CTYPE[dtype]})({x}))"

    def loop(self, wanted: List[Value], extra: Callable[[], List[str]],
             stores: List[Tuple[int, Value]]) -> List[str]:
        """A strided loop over the row's elements: ``wanted`` computed, ``extra()`` (the
        accumulations) and ``stores`` (output ``j`` gets value ``v``) per element."""
        u = self.uidx
        loaded: List[int] = []
        if not self.vec:
            def at(i, cls):
                return f"in{i}[base + j]" if cls == "full" else \
                    f"in{i}[oc{i} + j / bi{i}]" if cls == "block" else f"in{i}[j]"
            body = self.element_lines(wanted, at, loaded) + extra()
            body += [self.live(f"out{j}[base + j] = "
                               f"{self.store(self.names[v], self.spec.values[v].dtype)};")
                     for j, v in stores]
            return [f"for ({u} j = tl_t; j < N; j += tl_nt) {{"] + ["  " + s for s in body] + ["}"]
        V = self.vec
        body = self.element_lines(wanted, lambda i, cls: f"L{i}.v[u]", loaded) + extra()
        body += [f"P{j}.v[u] = {self.store(self.names[v], self.spec.values[v].dtype)};"
                 for j, v in stores]

        def vt(dtype):
            return f"tl_vec<{STORAGE[dtype]}, {V}>"
        head = []
        for i in loaded:
            t = vt(self.spec.signature[i].dtype)
            ptr = f"in{i} + base" if self.plan.inputs[i] == "full" else f"in{i}"
            head.append(f"  const {t} L{i} = reinterpret_cast<const {t}*>({ptr})[jv];")
        head += [f"  {vt(self.spec.values[v].dtype)} P{j};" for j, v in stores]
        tail = ["  " + self.live(f"reinterpret_cast<{vt(self.spec.values[v].dtype)}*>"
                                 f"(out{j} + base)[jv] = P{j};") for j, v in stores]
        inner = ["#pragma unroll", f"  for (int u = 0; u < {V}; ++u) {{"] + \
            ["    " + s for s in body] + ["  }"] + tail
        cached = [i for i in loaded if i in self.cached]
        if not cached:
            return [f"for ({u} jv = tl_t; jv < N / {V}u; jv += tl_nt) {{"] + head + inner + ["}"]
        # the first K vectors of each lane from registers (filled before the first loop that
        # reads them, fully unrolled so they stay registers), any further ones (a row longer
        # than WARP_MAX_N) from memory.  Zero-initialised: the lanes past the row's end fill
        # nothing, and with an uninitialised array ptxas (sm_90) spilled 8 bytes around the
        # division's slow-path call in an RMS norm of rows of 64
        K, fill = self.cache_k, []
        for i in cached:
            if i not in self.filled:
                self.filled.add(i)
                t = vt(self.spec.signature[i].dtype)
                fill += [f"{t} C{i}[{K}] = {{}};", "#pragma unroll",
                         f"for (int k = 0; k < {K}; ++k) {{",
                         f"  const {u} jv = tl_t + tl_nt * k;",
                         f"  if (jv < N / {V}u) C{i}[k] = "
                         f"reinterpret_cast<const {t}*>(in{i} + base)[jv];", "}"]
        head_c = [f"  const {vt(self.spec.signature[i].dtype)} L{i} = C{i}[k];"
                  if i in cached else h for i, h in zip(loaded, head, strict=False)]
        head_c += head[len(loaded):]
        return (fill + ["#pragma unroll", f"for (int k = 0; k < {K}; ++k) {{",
                        f"  const {u} jv = tl_t + tl_nt * k;", f"  if (jv < N / {V}u) {{"] +
                ["  " + s for s in head_c + inner] + ["  }", "}",
                f"for ({u} jv = tl_t + {self.width * K}u; jv < N / {V}u; jv += tl_nt) {{"] +
                head + inner + ["}"])

    # -- per row ---------------------------------------------------------------------------------
    def row_lines(self, upto: int) -> List[str]:
        """Per-row values (inputs read once per row, scalar arithmetic) computable after
        ``upto`` passes."""
        spec, plan, lines = self.spec, self.plan, []
        for i, param in enumerate(spec.subgraph.inputs):
            cls = plan.inputs[i]
            if cls in ("perrow", "uniform") and param not in self.row_vars:
                self.row_vars.add(param)
                self.names[param] = f"x{i}"
                dtype = spec.values[param].dtype
                at = f"in{i}[r]" if cls == "perrow" else f"in{i}[0]"
                lines.append(self.declare(f"x{i}", dtype, self.load(at, dtype)))
        for node in self.nodes:
            out = node.outputs[0]
            if node in self.by_node and plan.level[out] < 2 and out not in self.row_vars \
                    and plan.avail[out] <= upto:
                k, o = self.by_node[node]
                self.names[out] = f"v{k}"
                self.row_vars.add(out)
                lines.append(self.declare(f"v{k}", o.out_dtype, self.result(o, self.op_expr(o))))
        return lines

    def finish(self, r: RedInfo, value: str) -> str:
        q = self.red_index[r.node]
        self.names[r.node.outputs[0]] = f"r{q}"
        self.row_vars.add(r.node.outputs[0])
        return self.declare(f"r{q}", r.out_dtype, self.finish_value(r, value))

    def pass_lines(self, p: int) -> List[str]:
        """Accumulation pass ``p`` (1-based) over the row, its all-reduces and what they give."""
        spec, plan = self.spec, self.plan
        tasks = [(r, p - plan.avail[r.operand]) for r in spec.reductions
                 if 1 <= p - plan.avail[r.operand] <= r.red.passes]
        if not tasks:
            return []
        init, accum, after = [], [], []
        for r, stage in tasks:
            q, t, kind = self.red_index[r.node], CTYPE[r.acc], r.red.kind
            a = f"a{q}_{stage}"
            maxlike = kind in ("aten::amax", "aten::max", "aten::softmax", "aten::log_softmax",
                               "aten::logsumexp") and stage == 1
            minlike = kind in ("aten::amin", "aten::min")
            op = "TL_MAX" if maxlike else "TL_MIN" if minlike else "TL_SUM"
            start = float("-inf") if maxlike else float("inf") if minlike else 0.0
            init.append(f"{t} {a} = {self.lit(start, r.acc)};")
            if op != "TL_SUM":
                accum.append(lambda a=a, r=r, op=op: f"{a} = tl_combine<{op}>({a}, "
                                                     f"{self.operand_acc(r)});")
            elif stage == 1:
                accum.append(lambda a=a, r=r: f"{a} += {self.operand_acc(r)};")
            elif kind in ("aten::var", "aten::std"):  # squared deviation from the mean
                accum.append(lambda a=a, r=r, q=q, t=t: f"{{ const {t} d = {self.operand_acc(r)}"
                                                        f" - m{q}; {a} += d * d; }}")
            else:  # exp(x - max)
                accum.append(lambda a=a, r=r, q=q:
                             f"{a} += {self.math('exp', r.acc, f'{self.operand_acc(r)} - m{q}')};")
            after.append(self.allreduce(op, a, r.acc))
            n = f"({t})N"
            if kind in ("aten::sum", "aten::mean"):
                after.append(self.finish(r, a if kind == "aten::sum" else f"{a} / {n}"))
            elif op != "TL_SUM" and kind not in ("aten::softmax", "aten::log_softmax",
                                                  "aten::logsumexp"):
                after.append(self.finish(r, a))
            elif kind in ("aten::var", "aten::std"):
                if stage == 1:
                    after.append(f"const {t} m{q} = {a} / {n};")
                else:  # PyTorch: sum of squares / max(N - correction, 0)
                    var = f"{a} / ({t})fmax((double)N - {r.red.correction!r}, 0.0)"
                    after.append(self.finish(r, var if kind == "aten::var"
                                             else f"tl_sqrt(({t})({var}))"))
            elif stage == 1:  # softmax family: the row max
                if kind == "aten::logsumexp":  # an infinite max shifts by 0, as PyTorch
                    after.append(f"const {t} m{q} = isinf({a}) ? ({t})0 : {a};")
                else:
                    after.append(f"const {t} m{q} = {a};")
            elif kind == "aten::logsumexp":
                after.append(self.finish(r, f"{self.math('log', r.acc, a)} + m{q}"))
            else:
                after.append(f"const {t} s{q} = {a};")
                if kind == "aten::log_softmax":
                    after.append(f"const {t} l{q} = {self.math('log', r.acc, f's{q}')};")
        wanted = [r.operand for r, _ in tasks]
        return init + self.loop(wanted, lambda: [f() for f in accum], []) + after

    def row_body(self) -> List[str]:
        plan, outs = self.plan, self.outputs
        lines = self.row_lines(0)
        for p in range(1, plan.passes + 1):
            lines += self.pass_lines(p)
            lines += self.row_lines(p)
        stores = [(j, v) for j, v in enumerate(outs) if plan.out_levels[j] == 2]
        if stores:
            lines += self.loop([v for _, v in stores], list, stores)
        for j, v in enumerate(outs):
            if plan.out_levels[j] == 1:
                live = "" if self.width in (0, 32) else " && tl_live"
                lines.append(f"if (tl_t == 0{live}) out{j}[r] = "
                             f"{self.store(self.names[v], self.spec.values[v].dtype)};")
        return lines

    def entry_body(self) -> str:
        u = self.uidx
        rows = self.row_body()  # first: it decides the shared arrays
        if self.team == "warp" and self.width == 32:
            head = ["const unsigned int tl_t = threadIdx.x & 31u;",
                    "const unsigned int tl_nt = 32u;",
                    f"const {u} tl_teams = blockDim.x >> 5;",
                    f"for ({u} r = ({u})blockIdx.x * tl_teams + (threadIdx.x >> 5); r < R; "
                    f"r += ({u})gridDim.x * tl_teams) {{"]
            flip = []
        elif self.team == "warp":  # P = 32 / W rows a warp, from rb (the same in every lane)
            W, P = self.width, 32 // self.width
            head = [f"const unsigned int tl_t = threadIdx.x & {W - 1}u;",
                    f"const unsigned int tl_nt = {W}u;",
                    f"const {u} tl_teams = (blockDim.x >> 5) * {P}u;",
                    f"for ({u} rb = ({u})blockIdx.x * tl_teams + (threadIdx.x >> 5) * {P}u; "
                    f"rb < R; rb += ({u})gridDim.x * tl_teams) {{",
                    f"  {u} r = rb + (threadIdx.x & 31u) / {W}u;",
                    "  const bool tl_live = r < R;",
                    "  if (!tl_live) r = rb;"]
            flip = []
        else:
            # one all-reduce per row: its shared array is reused after a single barrier, so
            # rows alternate between two copies (any other barrier of the row separates them)
            copies = 2 if len(self.shared) == 1 else 1
            head = ["const unsigned int tl_t = threadIdx.x;",
                    "const unsigned int tl_nt = blockDim.x;"]
            head += [f"__shared__ {CTYPE[t]} tl_sh{k}[{copies}][32];"
                     for k, t in enumerate(self.shared)]
            head += ["unsigned int tl_par = 0;" if copies == 2 else
                     "const unsigned int tl_par = 0;"] if self.shared else []
            head += [f"for ({u} r = blockIdx.x; r < R; r += gridDim.x) {{"]
            flip = ["tl_par ^= 1u;"] if self.shared and len(self.shared) == 1 else []
        body = [f"const {u} base = r * N;"] + self.block_offsets() + rows + flip
        text = self.block_inner() + head + ["  " + s for s in body] + ["}"]
        return "".join("  " + s + "\n" for s in text)

    def _block_index(self, i: int) -> BlockIndex:
        return block_index(self.spec.signature[i].shape, self.plan.shape, self.plan.k)

    def block_inner(self) -> List[str]:
        """Per ``block`` input: how many consecutive elements of a row share one of its
        values (the product of the row's dims it is constant over; ``S<d>``: the sizes)."""
        return [f"const {self.uidx} bi{i} = {BlockIndex.product(self._block_index(i).inner, '1u')};"
                for i in self.blocks]

    def block_offsets(self) -> List[str]:
        """Per ``block`` input: where row ``r``'s part of it starts (``BlockIndex.row_offset``,
        as ``cpu_backend.row_codegen``)."""
        return [f"const {self.uidx} oc{i} = {self._block_index(i).row_offset('/', '1u')};"
                for i in self.blocks]

    def params(self) -> List[Tuple[str, str]]:
        spec, out = self.spec, []
        for i, s in enumerate(spec.signature):
            if isinstance(s, ArraySpec):
                out.append((f"const {STORAGE[s.dtype]}*", f"in{i}"))
            else:
                out.append((SCALAR_C[s], f"s{i}"))
        out += [(f"{STORAGE[spec.values[v].dtype]}*", f"out{j}")
                for j, v in enumerate(self.outputs)]
        sizes = [(self.uidx, f"S{d}") for d in range(len(self.plan.shape))] if self.blocks \
            else []  # the reduced shape, for the block inputs' offsets
        return out + [(self.uidx, "R"), (self.uidx, "N")] + sizes


@dataclass(frozen=True)
class CudaRowKernelInfo(KernelInfo):
    """What ``row_launch.bind`` and the emulator need: the entry points (``<name>_warp``,
    ``<name>_block``, then their ``_vec`` twins when ``vector``), the parameters in launch
    order, the row plan's key, and ``barriers``: the threads of a block cooperate (the emulator
    runs them as fibers)."""

    entries: Tuple[str, ...] = ()
    params: Tuple[Tuple[str, str], ...] = ()
    vector: int = 0
    table: bool = False
    index_bits: int = 32
    plan_key: Tuple = ()
    team_width: int = 32  # lanes per row in the warp entries (32 / width rows a warp)
    barriers: bool = True


def render(spec: GroupSpec, key: Tuple) -> KernelSource:
    """The kernel module of ``spec`` (``check`` must have set ``spec.rows``)."""
    name = kernel_name(key).replace("tl_fused_", "tl_rows_")
    V = vector_width(spec)
    variants = [("warp", 0), ("block", 0)] + ([("warp", V), ("block", V)] if V > 1 else [])
    entries, texts, half, params = [], [], False, []
    for team, vec in variants:
        r = RowRenderer(spec, team, vec)
        body = r.entry_body()
        if uses_err(body.splitlines()):
            raise Unsupported("unsupported integer division in a CUDA row kernel")
        params, half = r.params(), half or r.half
        entry = f"{name}_{team}" + ("_vec" if vec else "")
        sig = ",\n    ".join(f"{t} __restrict__ {n}" if t.endswith("*") else f"{t} {n}"
                             for t, n in params)
        texts.append(kt.ENTRY.format(block=WARP_BLOCK if team == "warp" else MAX_THREADS,
                                     name=entry, params=sig, unpack="", body=body))
        entries.append(entry)
    if 8 * len(params) > MAX_PARAM_BYTES:
        raise Unsupported("unsupported reduction group with more kernel arguments than fit")
    defines = "#define TL_NEEDS_HALF 1\n" if half else ""
    ops = ", ".join(n.kind for n in spec.subgraph.nodes if n.kind != "prim::Constant")
    source = kt.MODULE.format(name=name, version=f"{VERSION} rows", ops=ops, defines=defines,
                              prelude=PRELUDE + PRELUDE_ROWS, entries="\n".join(texts))
    info = CudaRowKernelInfo(uses_err=False, entries=tuple(entries), params=tuple(params),
                             vector=V if V > 1 else 0, index_bits=index_bits(spec),
                             plan_key=spec.rows.key(), team_width=team_width(spec))
    return KernelSource(name, source, key, info)


__all__ = ["check", "render", "kernel_key", "CudaRowKernelInfo", "RowRenderer"]
