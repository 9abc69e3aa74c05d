"""Render an analysed fusion group into the CUDA C source of one kernel module.

The walk over the ops is ``fuser.render.Renderer``'s, shared with the Numba renderer; small
tables give it CUDA C's spellings (tinygrad's renderers are the model): ``CTYPE`` names the C
type a value of each dtype lives in (float16/bfloat16 live in ``float32``: loaded into float,
computed in float, rounded once per op, stored back), ``STORAGE`` the element type of an array,
``literal`` spells a constant exactly (converted as ``ops/casting.py`` says), and each op's
expression is its registry entry's ``cuda`` template (``pick_template``: per-dtype overrides,
``{T}`` the compute dtype's name -- a C typedef in ``prelude.cuh``).  The skeletons are
``kernel_templates``; how arrays are indexed is ``layout.plan`` (the kernel key).  A rendered
group::

    // torchlike CUDA kernel tl_fused_0f1e2d3c4b5a6978 (generator v3); fused: aten::mul, aten::tanh
    ...prelude...
    extern "C" __global__ void __launch_bounds__(256) tl_fused_0f1e2d3c4b5a6978(
        const float32* __restrict__ in0, float32* __restrict__ out0, unsigned int n) {
      const unsigned int tl_step = (unsigned int)blockDim.x * gridDim.x;
      for (unsigned int i = (unsigned int)blockIdx.x * blockDim.x + threadIdx.x; i < n;
           i += tl_step) {
        const float32 a0 = in0[i];
        const float32 v0 = (float32)(a0 * 2.0f);
        const float32 v1 = (float32)(tl_tanh(v0));
        out0[i] = v1;
      }
    }

Parameters come in this order: the arrays read (``in<k>``, one per input or chunk of an input),
the Python scalars read (``s<i>``, as double / long long / bool), the outputs (``out<j>``),
``int* err`` when an op can divide integers by zero, then ``n`` and the strided path's sizes and
strides (``layout.Plan.index_args``).  With ``plan.table`` all of them but ``err`` are read
from one ``const long long* tl_table`` instead.
"""
from __future__ import annotations

import hashlib
import math
import os
import re
import struct
from dataclasses import dataclass
from typing import List, Optional, Tuple

import numpy as np

from ..fuser.backend import GroupSpec, KernelInfo, KernelSource, OpInfo, Unsupported, ValueKind
from ..fuser.render import Renderer, uses_err
from ..ops import casting
from . import kernel_templates as kt
from .layout import Plan, View

VERSION = 3  # 3: strided vector entries, no flag for a constant divisor
BLOCK = 256

CTYPE = {"bool": "bool_", "uint8": "uint8", "int8": "int8", "int16": "int16", "int32": "int32",
         "int64": "int64", "float16": "float32", "bfloat16": "float32", "float32": "float32",
         "float64": "float64"}
STORAGE = dict(CTYPE, float16="__half", bfloat16="__nv_bfloat16")
HALF = ("float16", "bfloat16")
_INT_MIN = {"int32": "(-2147483647 - 1)", "int64": "(-9223372036854775807LL - 1)"}

PRELUDE = ""
for _part in ("prelude.cuh", "prelude_pointwise.cuh"):  # the second: elementwise_pointwise's ops
    with open(os.path.join(os.path.dirname(__file__), _part)) as _f:
        PRELUDE += _f.read()


def _neg(text: str) -> str:
    return f"({text})" if text.startswith("-") else text


def literal(value, dtype: str) -> str:
    """``value`` converted to ``dtype`` as the interpreter converts a Python scalar
    (``ops.casting``), spelled exactly: float32 with 9 significant digits and ``f``, float64
    with 17, inf/NaN as bit patterns, integers with their type."""
    if value is None:
        return "tl_none_t()"
    if not isinstance(value, (bool, int, float, np.generic)):
        raise Unsupported(f"unsupported constant of type {type(value).__name__}")
    if dtype in HALF:  # a half value held in a float: the constant rounded to the half type
        value, dtype = casting.round_float(value, dtype), "float32"
    v = casting.cast_value(value, dtype)
    if dtype == "bool":
        return "true" if v else "false"
    if dtype == "float32":
        if not math.isfinite(v):
            bits = struct.unpack("<I", struct.pack("<f", v))[0]
            return f"__int_as_float((int)0x{bits:08x}U)"
        text = "%.9g" % v
        return _neg((text if re.search(r"[.e]", text) else text + ".0") + "f")
    if dtype == "float64":
        if not math.isfinite(v):
            bits = struct.unpack("<Q", struct.pack("<d", v))[0]
            return f"__longlong_as_double((long long)0x{bits:016x}ULL)"
        text = "%.17g" % v
        return _neg(text if re.search(r"[.e]", text) else text + ".0")
    v = int(v)
    if dtype in _INT_MIN and v == np.iinfo(dtype).min:
        return _INT_MIN[dtype]
    if dtype == "int64":
        return _neg(f"{v}LL")
    if dtype == "int32":
        return _neg(str(v))
    return f"(({dtype}){v})"


def kernel_name(key: Tuple) -> str:
    return "tl_fused_" + hashlib.sha256(repr(key).encode()).hexdigest()[:16]


class _Renderer(Renderer):
    """CUDA C's spellings on the shared walk (``fuser.render.Renderer``): typed literals,
    C casts, ``const`` declarations; half types load into float and store through the
    prelude's converters."""

    language = "cuda"
    NONE = "tl_none_t()"
    NO_ERR = "nullptr"
    TYPE = CTYPE
    CAST = {d: f"({t}){{}}" for d, t in CTYPE.items()}
    LOAD = {h: "tl_load({})" for h in HALF}
    STORE = {"float16": "tl_to_half({})", "bfloat16": "tl_to_bf16({})"}
    HALF = frozenset(HALF)

    def __init__(self, spec: GroupSpec, plan: Plan):
        super().__init__(spec)
        self.plan = plan
        self.uidx = "unsigned int" if plan.index_bits == 32 else "unsigned long long"
        self.sidx = "int" if plan.index_bits == 32 else "long long"
        self.half = bool(self.half_dtypes())

    # -- the shared walk's hooks ----------------------------------------------------------------
    def literal(self, value, dtype: str) -> str:
        return literal(value, dtype)

    def declare(self, name: str, dtype: str, value: str) -> str:
        return f"const {CTYPE[dtype]} {name} = {value};"

    def assign(self, target: str, value: str) -> str:
        return f"{target} = {value};"

    def scalar_name(self, index: int) -> str:
        return f"s{index}"

    def same_type(self, have: str, want: str) -> bool:
        return have == want if want in HALF else super().same_type(have, want)

    def convert(self, expr: str, have: Optional[str], want: str) -> str:
        """To a half type: the value rounded, held in a float (an int or a double meeting a
        float16 common dtype is rounded to it first, as PyTorch converts operands)."""
        if want in HALF:
            arg = f"(float64)({expr})" if have == "float64" else f"(float)({expr})"
            return f"tl_round_{'half' if want == 'float16' else 'bf16'}({arg})"
        return super().convert(expr, have, want)

    def attribute(self, o: OpInfo, name: str, r) -> str:
        info = self.spec.info(r)
        if info.kind == ValueKind.CONST and isinstance(info.const, str):
            raise Unsupported(f"compile failed: template of {o.op.name} renders the string "
                              f"attribute {name}")
        return super().attribute(o, name, r)

    def result(self, o: OpInfo, expr: str) -> str:
        """Half-precision results are computed in float and rounded once (prelude helpers)."""
        out = o.out_dtype
        if out in HALF:
            arg = expr if CTYPE[o.compute] == "float32" else f"(float64)({expr})"
            return f"tl_round_{'half' if out == 'float16' else 'bf16'}({arg})"
        return super().result(o, expr)

    def statements(self, element, indent: str) -> List[str]:
        """The shared body with ``element(view) -> C lvalue`` for reads and writes."""
        reads, writes = self.plan.reads, self.plan.writes
        lines = self.body(lambda k, v: element(reads[k]), lambda j, v: element(writes[j]))
        return [indent + s for s in lines]

    def pointer(self, v: View) -> str:
        return f"in{self.plan.reads.index(v)}" if v.output < 0 else f"out{v.output}"

    def flat_element(self, v: View) -> str:
        return f"{self.pointer(v)}[i]"

    def unravel(self) -> List[str]:
        """``i`` -> the live dims' indices that some strided view uses, innermost first."""
        strided = [v for v in self.plan.reads + self.plan.writes if not v.direct]
        used = {d for v in strided for d in v.live}
        live = self.plan.live
        lines = []
        for pos in range(len(live) - 1, -1, -1):
            d = live[pos]
            outer_used = any(x in used for x in live[:pos])
            if pos == 0:
                if d in used:
                    lines.append(f"const {self.uidx} i{d} = r;")
                break
            if d in used:
                lines.append(f"const {self.uidx} i{d} = r % size{d};")
            if outer_used:
                lines.append(f"r /= size{d};")
            else:
                break
        if lines:
            lines.insert(0, f"{self.uidx} r = i;" if any(s.startswith("r /=") for s in lines)
                         else f"const {self.uidx} r = i;")
        return lines

    def strided_offset(self, v: View) -> str:
        k = self.pointer(v)
        return " + ".join(f"({self.sidx})i{d} * st{k}_{d}" for d in v.live) or "0"

    def strided_element(self, v: View) -> str:
        if v.direct:
            return self.flat_element(v)
        return f"{self.pointer(v)}[{self.strided_offset(v)}]"

    # -- parameters ---------------------------------------------------------------------------
    def params(self) -> List[Tuple[str, str]]:
        """(C type, name) of every kernel argument, in launch order (before ``err``)."""
        p = self.plan
        out = [(f"const {STORAGE[v.dtype]}*", f"in{k}") for k, v in enumerate(p.reads)]
        for i in p.scalars:
            out.append(({bool: "bool_", int: "int64", float: "float64"}[self.spec.signature[i]],
                        f"s{i}"))
        out += [(f"{STORAGE[v.dtype]}*", f"out{v.output}") for v in p.writes]
        out.append((self.uidx, "n"))
        if p.path == "strided":
            out += [(self.uidx, f"size{d}") for d in p.live[1:]]
            for v in p.reads + p.writes:
                if not v.direct:
                    out += [(self.sidx, f"st{self.pointer(v)}_{d}") for d in v.live]
        return out


@dataclass(frozen=True)
class CudaKernelInfo(KernelInfo):
    """What the launchers (``launch.bind``) and compilers need: the entry points (the scalar
    kernel, then ``<name>_vec`` when there is a vector path), the parameters as (C type, name)
    in launch order (before ``err``), and the plan the code was generated for (``plan_key``,
    with its ``path``, ``vector`` width, ``index_bits``, whether arguments travel in a
    ``table``, and the ``max_param_bytes`` it was planned under)."""

    entries: Tuple[str, ...] = ()
    params: Tuple[Tuple[str, str], ...] = ()
    vector: int = 0
    table: bool = False
    index_bits: int = 32
    path: str = "contig"
    plan_key: Tuple = ()
    max_param_bytes: Optional[int] = None


def render(spec: GroupSpec, plan: Plan, key: Tuple) -> KernelSource:
    """The kernel module for ``spec`` (see the module docstring)."""
    r = _Renderer(spec, plan)
    name = kernel_name(key)
    if plan.path == "contig":
        scalar_body = r.statements(r.flat_element, "    ")
    else:
        scalar_body = ["    " + s for s in r.unravel()] + r.statements(r.strided_element, "    ")
    plan.uses_err = uses_err(scalar_body)
    params = r.params()
    if plan.table:
        decls = [(t, n) for t, n in params]
        unpack = []
        for k, (t, n) in enumerate(decls):
            if t.endswith("*"):
                value = f"({t})(unsigned long long)tl_table[{k}]"
                t = t + " __restrict__"
            elif t == "float64":
                value = f"__longlong_as_double(tl_table[{k}])"
            elif t == "bool_":
                value = f"tl_table[{k}] != 0"
            else:
                value = f"({t})tl_table[{k}]"
            unpack.append(f"  {t} const {n} = {value};")
        sig = ["const long long* __restrict__ tl_table"]
        unpack_text = "\n".join(unpack) + "\n"
    else:
        sig = [f"{t} __restrict__ {n}" if t.endswith("*") else f"{t} {n}" for t, n in params]
        unpack_text = ""
    if plan.uses_err:
        sig.append("int* __restrict__ err")
    sig_text = ",\n    ".join(sig)

    def entry(entry_name: str, body: str) -> str:
        return kt.ENTRY.format(block=BLOCK, name=entry_name, params=sig_text, unpack=unpack_text,
                               body=body)
    entries = [entry(name, kt.GRID_STRIDE.format(uidx=r.uidx, start="",
                                                 body="\n".join(scalar_body) + "\n"))]
    if plan.path == "contig" and plan.vector and spec.iter_shape:  # 0-d: one element
        entries.append(entry(name + "_vec", _vector_body(r, plan, scalar_body)))
    elif plan.path == "strided" and plan.vector:
        entries.append(entry(name + "_vec", _strided_vector_body(r, plan)))
    defines = "#define TL_NEEDS_HALF 1\n" if r.half else ""
    ops = ", ".join(o.op.name for o in spec.ops) or "(copy)"
    source = kt.MODULE.format(name=name, version=VERSION, ops=ops, defines=defines,
                              prelude=PRELUDE, entries="\n".join(entries))
    info = CudaKernelInfo(uses_err=plan.uses_err,
                          entries=(name,) + ((name + "_vec",) if len(entries) > 1 else ()),
                          params=tuple(params), vector=plan.vector, table=plan.table,
                          index_bits=plan.index_bits, path=plan.path, plan_key=plan.key(),
                          max_param_bytes=plan.max_param_bytes)
    return KernelSource(name, source, key, info)


def _vec_type(v: View, V: int) -> str:
    return f"tl_vec<{STORAGE[v.dtype]}, {V}>"


def _vector_body(r: _Renderer, plan: Plan, scalar_body: List[str]) -> str:
    V = plan.vector
    vec_type = lambda v: _vec_type(v, V)
    loads = [f"    const {vec_type(v)} L{k} = reinterpret_cast<const {vec_type(v)}*>(in{k})[j];"
             for k, v in enumerate(plan.reads)]
    loads += [f"    {vec_type(v)} R{v.output};" for v in plan.writes]
    stores = [f"    reinterpret_cast<{vec_type(v)}*>(out{v.output})[j] = R{v.output};"
              for v in plan.writes]

    def element(v: View) -> str:
        return f"L{plan.reads.index(v)}.v[u]" if v.output < 0 else f"R{v.output}.v[u]"
    body = r.statements(element, "      ")
    main = kt.VECTOR.format(uidx=r.uidx, vec=V, loads="\n".join(loads) + "\n" if loads else "",
                            body="\n".join(body) + "\n",
                            stores="\n".join(stores) + "\n" if stores else "")
    tail = kt.GRID_STRIDE.format(uidx=r.uidx, start=kt.TAIL_START.format(vec=V),
                                 body="\n".join(scalar_body) + "\n")
    return main + tail.replace(f"  const {r.uidx} tl_step = ({r.uidx})blockDim.x * gridDim.x;\n",
                               "", 1)


def _strided_vector_body(r: _Renderer, plan: Plan) -> str:
    """The strided plan's vector entry: ``V`` consecutive ``i`` share their outer indices
    (the launcher runs it only when ``plan.vector_fits()``, so no tail): one unravel per
    vector; dense views by ``j``, unit views by one aligned vector access at the first
    element's offset, views that do not move along the inner dim by one scalar load (an
    output of a broadcast shape: one store of the first lane's value, the same for all)."""
    V = plan.vector
    vec_type = lambda v: _vec_type(v, V)
    unravel = ["    " + s for s in r.unravel()]  # none when every strided view is 0-d
    head = ([f"    const {r.uidx} i = j * {V};"] if unravel else []) + unravel
    loads, stores = [], []
    for k, v in enumerate(plan.reads):
        if v.direct:
            loads.append(f"    const {vec_type(v)} L{k} = "
                         f"reinterpret_cast<const {vec_type(v)}*>(in{k})[j];")
        elif v.inner == "unit":
            loads.append(f"    const {vec_type(v)} L{k} = *reinterpret_cast<const "
                         f"{vec_type(v)}*>(in{k} + ({r.strided_offset(v)}));")
        else:
            loads.append(f"    const {STORAGE[v.dtype]} L{k} = {r.strided_element(v)};")
    for v in plan.writes:
        loads.append(f"    {vec_type(v)} R{v.output};")
        if v.inner == "zero":  # the same element for the whole vector (a broadcast shape)
            stores.append(f"    {r.strided_element(v)} = R{v.output}.v[0];")
            continue
        target = f"reinterpret_cast<{vec_type(v)}*>(out{v.output})[j]" if v.direct else \
            f"*reinterpret_cast<{vec_type(v)}*>(out{v.output} + ({r.strided_offset(v)}))"
        stores.append(f"    {target} = R{v.output};")

    def element(v: View) -> str:
        if v.output >= 0:
            return f"R{v.output}.v[u]"
        k = plan.reads.index(v)
        return f"L{k}" if v.inner == "zero" else f"L{k}.v[u]"
    body = r.statements(element, "      ")
    return kt.VECTOR.format(uidx=r.uidx, vec=V, loads="\n".join(head + loads) + "\n",
                            body="\n".join(body) + "\n",
                            stores="\n".join(stores) + "\n" if stores else "")
