"""Fused groups lay their outputs out as PyTorch does, and CPU loops run in that memory order.

PyTorch gives an elementwise result its operands' layout (TensorIterator's
``reorder_dimensions``; ``fuser.output_layout`` applies the same rule through a group), so
``sin(a.T) * 2 + a.T`` is F-ordered.  For transposed, permuted 3-D, step-sliced, broadcast and
mixed inputs, each case checks: the values (against the interpreter, and bit for bit against
the same program on C-contiguous copies of the inputs, which runs the C-ordered kernel), the
result strides (against PyTorch's and the traced graph's types), that a compiled kernel ran,
and -- on the CPU -- that the generated loop nest's innermost loop is along the output's
contiguous dim and that LLVM vectorizes it.  The CUDA backend's plan and allocation are
checked through the CPU emulator.
"""
from __future__ import annotations

import re
import warnings

import numpy as np
import pytest
from differential import assert_same, backend_missing, interpret, run_emulated

import torchlike as tl
from torchlike import jit
from torchlike.fuser import config
from torchlike.fuser.backend import analyze, get_backend_impl, signature_of
from torchlike.fuser.cache import KERNELS
from torchlike.fuser.output_layout import (
    allocation,
    dense_strides,
    loop_order,
    order_of,
)
from torchlike.interpreter import Interpreter

_rng = np.random.default_rng(0)


def _x(*shape, dtype=np.float32):
    v = _rng.standard_normal(shape) * 4
    return v.astype(dtype) if dtype != np.bool_ else v > 0


def _stepped_rows(rows, cols, dtype=np.float32):
    """(rows, cols) with strides (2 * cols, 2) elements: every other column of a wider array."""
    return _x(rows, 2 * cols, dtype=dtype)[:, ::2]


def _expanded(rows, cols, dtype=np.float32):
    """(rows, cols) with strides (0, 1): one row repeated (``np.broadcast_to``, ``expand``)."""
    return np.broadcast_to(_x(1, cols, dtype=dtype), (rows, cols))


def _noncontig(lib, a, b, c):
    return a * b + lib.sin(c), lib.relu(a - c)


# name -> (program over a library -- torchlike or torch --, inputs); small sizes run serial
# kernels, the "parallel" ones (>= 2^16 elements) parallel and, for a transposed read, tiled ones
CASES = {
    "transposed": (lambda L, a: L.sin(a) * 2.0 + a, lambda: (_x(37, 13).T,)),
    "transposed_first_decides": (lambda L, a, b: a + b, lambda: (_x(9, 13).T, _x(13, 9))),
    "contiguous_first_decides": (lambda L, b, a: b * a - 1.0, lambda: (_x(13, 9), _x(9, 13).T)),
    "transposed_int32": (lambda L, a, b: a * b + a, lambda: (_x(11, 6, dtype=np.int32).T,
                                                             _x(11, 6, dtype=np.int32).T)),
    "transposed_float16": (lambda L, a, b: a * b + a, lambda: (_x(11, 6, dtype=np.float16).T,
                                                               _x(11, 6, dtype=np.float16).T)),
    "transposed_float64_bool": (lambda L, a, m: L.where(m, a, a * 2.0),
                                lambda: (_x(11, 6, dtype=np.float64).T,
                                         _x(11, 6, dtype=np.bool_).T)),
    "permuted_3d": (lambda L, p, q: p * q + 1.0,
                    lambda: (_x(5, 6, 7).transpose(1, 2, 0), _x(5, 6, 7).transpose(1, 2, 0))),
    "permuted_3d_against_c": (lambda L, p, q: L.relu(p) + q,
                              lambda: (_x(5, 6, 7).transpose(2, 0, 1), _x(7, 5, 6))),
    "stepped": (lambda L, s: L.relu(s) - 1.0, lambda: (_stepped_rows(9, 20),)),
    "stepped_transposed": (lambda L, s: s * s, lambda: (_x(40, 9)[::2].T,)),
    "expanded_abstains": (lambda L, c, a: c + a, lambda: (_expanded(13, 12), _x(12, 13).T)),
    "lower_rank_broadcast": (lambda L, a, r: a * r, lambda: (_x(12, 13).T, _x(12))),
    "noncontig_inputs": (_noncontig, lambda: (_x(5, 3).T, _stepped_rows(3, 5), _expanded(3, 5))),
    "mixed_3d": (lambda L, p, s, c: (p - s) * c,
                 lambda: (_x(4, 6, 5).transpose(2, 1, 0), _x(5, 6, 8)[:, :, ::2],
                          np.broadcast_to(_x(1, 6, 1), (5, 6, 4)))),
    "all_contiguous": (lambda L, x, y: x * y + 1.0, lambda: (_x(13, 9), _x(13, 9))),
    "tie": (lambda L, a: a + 1.0,  # overlapping (3, 5) view, strides [1, 1]: PyTorch's tie rule
            lambda: (np.lib.stride_tricks.as_strided(_x(8), (3, 5), (4, 4), writeable=False),)),
    "transposed_parallel": (lambda L, a: L.relu(a) * a, lambda: (_x(301, 257).T,)),
    "transpose_add_parallel": (lambda L, x, y: x + y, lambda: (_x(300, 257), _x(257, 300).T)),
    "noncontig_parallel": (_noncontig, lambda: (_x(290, 260).T, _stepped_rows(260, 290),
                                                _expanded(260, 290))),
}


# a fresh kernel cache: Numba cannot show the IR of a kernel loaded from its disk cache
pytestmark = pytest.mark.usefixtures("kernel_cache")


@pytest.fixture(autouse=True)
def _strict():
    """A fallback would raise: the compiled path ran."""
    saved = config.strict()
    config.set_strict(True)
    yield
    config.set_strict(saved)


_TRACED = {}


def traced(name):
    """(traced function, inputs) of a case, traced once."""
    if name not in _TRACED:
        fn, make = CASES[name]
        xs = make()
        _TRACED[name] = (jit.trace(lambda *a: fn(tl, *a), xs), xs)
    return _TRACED[name]


def bits(a):
    """The array's bit patterns (floats compared exactly, NaN payloads and -0.0 included)."""
    return a.view(f"u{a.itemsize}") if a.dtype.kind in "fc" else a


def as_tuple(r):
    return tuple(r) if isinstance(r, (tuple, list)) else (r,)


def elem_strides(a):
    return tuple(s // a.itemsize for s in a.strides)


def graph_output_types(graph):
    out = graph.outputs
    if len(out) == 1 and out[0].node.kind == "prim::TupleConstruct":
        out = out[0].node.inputs
    return [v.type for v in out]


def torch_strides(torch, name, xs):
    fn, _ = CASES[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # read-only (expanded) inputs
        ts = [torch.from_numpy(np.asarray(x)) for x in xs]
    return [tuple(t.stride()) for t in as_tuple(fn(torch, *ts))]


def contiguous_dim(a):
    """The dim of stride 1 (the innermost of its memory order)."""
    return order_of(a.shape, elem_strides(a))[-1]


def run_compiled(f, xs):
    jit.reset_stats()
    got = as_tuple(f(*xs))
    s = jit.stats()
    assert s["cache_hits"] + s["cache_misses"] > 0 and not s["fallbacks"], s
    return got


# -- values and strides (CPU) --------------------------------------------------------------------

@pytest.mark.parametrize("name", list(CASES))
def test_values_and_layout(name, torch):
    f, xs = traced(name)
    got = run_compiled(f, xs)
    assert_same(got, as_tuple(Interpreter(f.graph).run(*xs)), name)
    # bit for bit what the kernel for C-contiguous copies computes: the loop order changes no
    # value
    same = as_tuple(f(*[np.ascontiguousarray(x) for x in xs]))  # (strict: compiled too)
    for g, c in zip(got, same, strict=True):
        np.testing.assert_array_equal(bits(g), bits(c))
    strides = [elem_strides(g) for g in got]
    assert strides == torch_strides(torch, name, xs), name
    assert strides == [t.strides for t in graph_output_types(f.graph)], name
    for g, st in zip(got, strides, strict=True):  # dense: no gaps, no overlap
        assert dense_strides(g.shape, order_of(g.shape, st)) == st
    # the outputs were allocated as the kernel was compiled for: no second specialization
    for kernel in list(KERNELS._entries.values()):
        dispatcher = getattr(kernel, "dispatcher", None)
        assert dispatcher is None or len(dispatcher.signatures) == 1, dispatcher.signatures


# -- the CPU loop nest ---------------------------------------------------------------------------

def innermost_loop_dim(source):
    """The dim of the deepest ``for iD in range`` loop of the kernel, or "flat"/"flat.T"."""
    if re.search(r"^\s+for i_? in (p?range)\(", source, re.M):
        return "flat.T" if ".T.reshape(n)" in source else "flat"
    loops = [(len(m.group(1)), int(m.group(2)))
             for m in re.finditer(r"^(\s*)for i(\d+)_? in range\(", source, re.M)]
    return max(loops)[1]


def test_reversed_views_keep_their_memory_order():
    """x[::-1] (negative strides, which PyTorch cannot express) is C-ordered in memory: the
    output is C too, and so are the loops."""
    x = _x(9, 13)[::-1]
    f = jit.trace(lambda a: a * 2.0 + 1.0, (x,))
    got = run_compiled(f, (x,))[0]
    np.testing.assert_array_equal(got, x * np.float32(2.0) + np.float32(1.0))
    assert got.flags.c_contiguous
    assert innermost_loop_dim(jit.codegen(f.graph, x)[0].source) == 1


@pytest.mark.parametrize("name", [n for n in CASES if n != "tie"])
def test_inner_loop_runs_along_the_output_contiguous_dim(name):
    f, xs = traced(name)
    (src,) = jit.codegen(f.graph, *xs)
    got = as_tuple(f(*xs))
    inner = innermost_loop_dim(src.source)
    if inner == "flat":
        assert all(g.flags.c_contiguous for g in got)
    elif inner == "flat.T":
        assert all(g.flags.f_contiguous and g.ndim >= 2 for g in got)
    else:
        assert inner == contiguous_dim(got[0]), src.source


def test_all_contiguous_keeps_the_flat_loop():
    f, xs = traced("all_contiguous")
    (src,) = jit.codegen(f.graph, *xs)
    assert "in0.reshape(n)" in src.source and ".T" not in src.source
    assert src.info.flat


def test_transposed_read_is_tiled_in_parallel_kernels():
    """x + y.T: the output is C, y.T is read across; tiles of both dims keep y's lines in
    cache."""
    f, xs = traced("transpose_add_parallel")
    (src,) = jit.codegen(f.graph, *xs)
    assert "nbq" in src.source and "for i0 in range(bq *" in src.source, src.source
    # the innermost loop runs from the tile's start, indexing with its sign bit cleared
    assert "for i1_ in range(lo, hi):" in src.source
    assert "i1 = i1_ & np.int64(0x7FFFFFFFFFFFFFFF)" in src.source


def _features():
    try:
        with open("/proc/cpuinfo") as f:
            return set(re.findall(r"\b(avx512f|avx2)\b", f.read()))
    except OSError:
        return set()


FEATURES = _features()
LANES = 16 if "avx512f" in FEATURES else 8 if "avx2" in FEATURES else 4  # float32 lanes
VECTOR_FLOAT = re.compile(r"\b(?:fmul|fadd|fsub|fdiv) (?:\w+ )*<(\d+) x float>")


def kernel_ir(name, fresh_dir):
    """The LLVM IR of the case's kernel (with a parallel kernel's outlined loop function),
    as tests/test_vectorization.py reads it; compiled in ``fresh_dir`` (Numba shows no IR of
    a kernel it loads from its disk cache)."""
    pytest.importorskip("llvmlite.binding")
    f, xs = traced(name)
    (src,) = jit.codegen(f.graph, *xs)
    before = config.cache_dir()
    config.set_cache_dir(fresh_dir)
    try:
        dispatcher = get_backend_impl("cpu").compile(src).dispatcher
    finally:
        config.set_cache_dir(before)
    ir = dispatcher.inspect_llvm(dispatcher.signatures[0])
    bodies = [b for b in ir.split("\ndefine ")[1:]
              if (src.name in b.split("\n", 1)[0] or "numba_parfor_gufunc" in b.split("\n", 1)[0])
              and "cpython" not in b.split("\n", 1)[0]]
    return "\n".join(bodies)


# A 3-d permutation reads its input with gathers; on an AVX2-only host (no avx512f) LLVM's cost
# model keeps that loop scalar: a known gap there (the other layouts vectorize at 8 lanes).
_GATHER_ON_AVX2 = pytest.mark.xfail("avx512f" not in FEATURES, strict=False,
                                    reason="AVX2-only host: LLVM keeps the gather loop scalar")


@pytest.mark.parametrize("name", ["transposed", pytest.param("permuted_3d", marks=_GATHER_ON_AVX2),
                                  "noncontig_inputs", "transposed_parallel",
                                  "transpose_add_parallel", "noncontig_parallel"])
def test_inner_loop_vectorizes(name, tmp_path):
    """float32 arithmetic at the machine's full width in the kernel (gathers for the inputs
    read across)."""
    widths = {int(w) for w in VECTOR_FLOAT.findall(kernel_ir(name, tmp_path))}
    assert widths and max(widths) >= LANES, f"{name}: vector widths {widths}"


# -- the kernel key --------------------------------------------------------------------------------

def test_kernel_key_holds_the_loop_order():
    """Two 3-D permutations are both layout "A" to the inputs' key: the loop order (and the
    outputs' layouts) must tell their kernels apart, while new sizes of one order share one."""
    f, _ = traced("permuted_3d")
    (node,) = [n for n in jit.fuse(f.graph).all_nodes() if n.kind == "prim::FusionGroup"]
    sub = node.attrs["Subgraph"]
    cpu = get_backend_impl("cpu")

    def spec(perm, shape=(5, 6, 7)):
        xs = [_x(*shape).transpose(perm) for _ in range(2)]
        return analyze(sub, signature_of(xs)), xs
    (a, xa), (b, xb), (c, _) = spec((1, 2, 0)), spec((2, 0, 1)), spec((1, 2, 0), (4, 9, 3))
    assert a.input_key() == b.input_key()
    assert loop_order(a) != loop_order(b)
    assert cpu.kernel_key(a) != cpu.kernel_key(b)
    assert cpu.kernel_key(a) == cpu.kernel_key(c)
    for xs in (xa, xb):
        got = f(*xs)
        want = Interpreter(f.graph).run(*xs)
        np.testing.assert_array_equal(got, want)
        assert innermost_loop_dim(jit.codegen(f.graph, *xs)[0].source) == contiguous_dim(got)


def test_allocation_is_dense_in_the_order():
    for shape, order in [((3, 4), (1, 0)), ((2, 1, 5), (2, 0, 1)), ((3, 1), (1, 0)),
                         ((2, 3, 4), (0, 1, 2))]:
        mem, axes = allocation(shape, order)
        a = np.empty(mem, np.float32)
        a = a if axes is None else a.transpose(axes)
        assert a.shape == shape and elem_strides(a) == dense_strides(shape, order)
        assert order_of(shape, dense_strides(shape, order)) == order or 1 in shape


# -- CUDA (its exact source, run on the CPU by the emulator) -------------------------------------

NO_GXX = backend_missing("cuda-emulated")


def test_cuda_plan_walks_the_output_order():
    """All-transposed inputs: the outputs are F-ordered and the flat index runs in memory
    order, so every view is direct (the contiguous, vectorized path)."""
    from torchlike.cuda_backend import layout
    f, xs = traced("transposed_int32")
    (node,) = [n for n in jit.fuse(f.graph).all_nodes() if n.kind == "prim::FusionGroup"]
    p = layout.plan(analyze(node.attrs["Subgraph"], signature_of(xs)))
    assert p.path == "contig" and p.live == (1, 0)
    assert [w.order for w in p.writes] == [(1, 0)]
    f, xs = traced("noncontig_inputs")
    (node,) = [n for n in jit.fuse(f.graph).all_nodes() if n.kind == "prim::FusionGroup"]
    p = layout.plan(analyze(node.attrs["Subgraph"], signature_of(xs)))
    assert p.path == "strided" and p.live == (1, 0) and all(w.direct for w in p.writes)


@pytest.mark.skipif(bool(NO_GXX), reason=str(NO_GXX))
@pytest.mark.parametrize("name", ["transposed", "transposed_first_decides", "permuted_3d",
                                  "stepped_transposed", "expanded_abstains", "noncontig_inputs",
                                  "mixed_3d", "transposed_float16", "all_contiguous"])
def test_cuda_emulated_values_and_layout(name):
    """The group's CUDA kernel, compiled and run on the CPU (g++): the interpreter's values,
    outputs strided as the traced graph's types say (PyTorch's, checked above)."""
    f, xs = traced(name)
    fused = jit.fuse(f.graph)
    (node,) = [n for n in fused.all_nodes() if n.kind == "prim::FusionGroup"]
    args = [xs[fused.inputs.index(v)] for v in node.inputs]
    got = run_emulated(node.attrs["Subgraph"], args)
    assert_same(got, interpret(node, args), name)
    assert [elem_strides(g) for g in got] == [v.type.strides for v in node.outputs]
