"""The strided plan's vector entry (``cuda_backend.layout``, ``codegen._strided_vector_body``):
chunks of a C array (an LSTM cell's gates), rows broadcast over columns, (B, 1) and 0-d operands
read once per vector.  Each case runs through the emulator against the interpreter, with the
entry point the launcher took checked; NVRTC compiles the vector entry to 16-byte loads and
stores.  Where a size, stride or pointer does not fit, the scalar entry runs."""
import numpy as np
import pytest
from differential import (
    add_op,
    assert_same,
    const,
    emulated_backend,
    interpret,
    raise_division_error,
)
from test_cuda_codegen import make_group, needs_gxx, needs_nvcc, needs_nvrtc

from torchlike.cuda_backend import layout
from torchlike.cuda_backend.compiler import nvrtc_compile, ptxas_usage
from torchlike.fuser.backend import analyze, signature_of


def _lstm(s, p):
    i, f, g, o = (add_op(s, k, [x]) for k, x in zip(
        ("aten::sigmoid", "aten::sigmoid", "aten::tanh", "aten::sigmoid"), p[:4]))
    cy = add_op(s, "aten::add", [add_op(s, "aten::mul", [f, p[4]]),
                                 add_op(s, "aten::mul", [i, g]), const(s, 1)])
    return [cy, add_op(s, "aten::mul", [o, add_op(s, "aten::tanh", [cy])])]


def _bias(s, p):  # (x + bias) * scale - t: a row, a column and a 0-d operand
    y = add_op(s, "aten::add", [p[0], p[1], const(s, 1)])
    return [add_op(s, "aten::sub", [add_op(s, "aten::mul", [y, p[2]]), p[3], const(s, 1)])]


def _gates(rows, width, start=0, H=None, dtype=np.float32):
    rng = np.random.default_rng(width)
    g = rng.standard_normal((rows, width)).astype(dtype)
    H = H or (width - start) // 4
    return [g[:, start + k * H:start + (k + 1) * H] for k in range(4)]


def _run(sub, args):
    be = emulated_backend()
    spec = analyze(sub, signature_of(args))
    source = be.generate(spec)
    kernel = be.compile(source)
    got = kernel.bind(spec, raise_division_error)(list(args))
    return got, source, kernel.device.launches


def _case(name):
    rng = np.random.default_rng(5)
    if name == "lstm":                       # chunks at offsets k*H of rows of 4H: fits
        g = _gates(6, 32)
        return _lstm, g + [rng.standard_normal(g[0].shape).astype(np.float32)], True
    if name == "lstm-odd-h":                 # H = 7: the row length is no multiple of 4
        g = _gates(5, 28)
        return _lstm, g + [rng.standard_normal(g[0].shape).astype(np.float32)], False
    if name == "lstm-odd-stride":            # rows of 33: the row stride is no multiple
        g = _gates(5, 33, start=1, H=8)
        return _lstm, g + [rng.standard_normal(g[0].shape).astype(np.float32)], False
    if name == "lstm-misaligned":            # rows of 36 from element 1: the pointers
        g = _gates(5, 36, start=1, H=8)
        return _lstm, g + [rng.standard_normal(g[0].shape).astype(np.float32)], False
    x = rng.standard_normal((9, 24)).astype(np.float32)
    row = rng.standard_normal(24).astype(np.float32)
    col = rng.standard_normal((9, 1)).astype(np.float32)
    t = np.array(0.25, np.float32)
    if name == "broadcast":
        return _bias, [x, row, col, t], True
    if name == "broadcast-half":             # float16 meets int32 rows: 4 elements a vector
        return _bias, [x.astype(np.float16), (row * 100).astype(np.int32), col,
                       np.array(3, np.int64)], True
    if name == "broadcast-output":           # s * t + 1 has the (1,) shape: stored once
        return _scalar_outputs, [x, row[:1].copy(), row[1:2].copy()], True
    if name == "transposed":                 # a C and an F operand: one moves by 9 or 24
        return _bias, [x, np.asfortranarray(x[::-1]), col, t], None
    raise ValueError(name)


CASES = ["lstm", "lstm-odd-h", "lstm-odd-stride", "lstm-misaligned", "broadcast",
         "broadcast-half", "broadcast-output", "transposed"]


def _scalar_outputs(s, p):  # the corpus's broadcast_0d_scalar: x * s + t, s * t + 1
    return [add_op(s, "aten::add", [add_op(s, "aten::mul", [p[0], p[1]]), p[2], const(s, 1)]),
            add_op(s, "aten::add", [add_op(s, "aten::mul", [p[1], p[2]]), const(s, 1.0),
                                    const(s, 1)])]


@needs_gxx
@pytest.mark.parametrize("name", CASES)
def test_strided_vector_entry(name):
    build, args, vector = _case(name)
    sub = make_group(len(args), build)
    got, source, launches = _run(sub, args)
    assert_same(got, interpret(sub, args), name)
    assert source.info.path == "strided"
    entries = source.info.entries
    if vector is None:
        assert len(entries) == 1 and source.info.vector == 0
    else:
        assert len(entries) == 2
        assert launches == {entries[1 if vector else 0]: 1}, launches


def test_plan_classifies_views_by_inner_stride():
    _, args, _ = _case("broadcast")
    p = layout.plan(analyze(make_group(4, _bias), signature_of(args)))
    assert [(v.direct, v.inner) for v in p.reads] == [
        (True, ""), (False, "unit"), (False, "zero"), (False, "zero")]
    assert p.vector == 4 and p.vector_fits()


@needs_nvrtc
def test_strided_vector_entry_compiles_to_16_byte_accesses():
    build, args, _ = _case("lstm")
    sub = make_group(len(args), build)
    source = emulated_backend().generate(analyze(sub, signature_of(args)))
    ptx = nvrtc_compile(source.source, "compute_90")[0].decode()
    vec = ptx[ptx.index(f".entry {source.info.entries[1]}("):]
    assert vec.count("ld.global.nc.v4.f32") + vec.count("ld.global.v4.f32") == 5, vec[:2000]
    assert vec.count("st.global.v4.f32") == 2


@needs_nvcc
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_strided_vector_entries_use_no_local_memory(arch):
    """nvcc -Werror, ``ptxas -v``: both entries of the LSTM, broadcast and float16 kernels
    spill nothing and use no stack or local memory."""
    sources = []
    for name in ("lstm", "broadcast", "broadcast-half"):
        build, args, _ = _case(name)
        sub = make_group(len(args), build)
        sources.append(emulated_backend().generate(analyze(sub, signature_of(args))).source)
    usage = ptxas_usage("\n".join(sources), arch)
    assert len(usage) == 6, sorted(usage)
    for entry, u in usage.items():
        assert u["spill_stores"] == u["spill_loads"] == u["stack"] == u["lmem"] == 0, (entry, u)


def _random_operand(rng, shape, dtype):
    """An operand broadcastable to ``shape``: dims dropped or set to 1, a slice of a wider
    array (a chunk: an offset and a longer row), or a transpose of a C array."""
    keep = [d if rng.random() < 0.7 else 1 for d in shape]
    keep = keep[int(rng.integers(0, 2)) if len(keep) > 1 else 0:]
    kind = rng.choice(["c", "chunk", "transpose"])
    if kind == "chunk" and keep:
        pad, start = int(rng.choice([0, 1, 4, 8])), int(rng.choice([0, 1, 4]))
        wide = rng.standard_normal(keep[:-1] + [keep[-1] + pad + start]).astype(dtype)
        return wide[..., start:start + keep[-1]]
    a = rng.standard_normal(keep).astype(dtype)
    if kind == "transpose" and len(keep) > 1:
        return np.ascontiguousarray(a.swapaxes(-1, -2)).swapaxes(-1, -2)
    return a


@needs_gxx
def test_strided_vector_entry_on_random_layouts():
    """60 random groups of three operands (broadcasts, chunks at offsets of wider rows,
    transposes; float32, some float16) against the interpreter; the launcher's choice between
    the entries is whatever the layout allows, and the vector entry runs in a good share."""
    from torchlike.cuda_backend.emulate import build_many
    be, cases = emulated_backend(), _random_cases(11, 60)
    build_many([c[3] for c in cases])
    taken = {}
    for sub, args, spec, source in cases:
        kernel = be.compile(source)
        before = dict(kernel.device.launches)
        got = kernel.bind(spec, raise_division_error)(list(args))
        assert_same(got, interpret(sub, args), str([(a.shape, a.strides) for a in args]))
        (entry,) = [e for e, k in kernel.device.launches.items() if k != before.get(e, 0)]
        kind = (source.info.path, entry.endswith("_vec"))
        taken[kind] = taken.get(kind, 0) + 1
    # seed 11: 24 strided groups run the vector entry, 26 the scalar one, 10 are contiguous
    assert taken.get(("strided", True), 0) >= 15 and taken.get(("strided", False), 0) >= 15, \
        taken


def random_layouts(seed: int, n: int):
    """``n`` operand triples for ``_bias_of_three`` in random layouts (float32, float32, and
    float32 or float16)."""
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(n):
        shape = [int(rng.choice([1, 2, 3, 4, 8, 12])) for _ in range(int(rng.integers(1, 4)))]
        shape[-1] = int(rng.choice([4, 8, 12, 16, 6]))
        dtypes = [np.float32, np.float32, rng.choice([np.float32, np.float16])]
        args = [_random_operand(rng, shape, dt) for dt in dtypes]
        args[0] = np.broadcast_to(args[0], shape).copy() if rng.random() < 0.3 else args[0]
        out.append(args)
    return out


def _random_cases(seed: int, n: int):
    """(group, operands, spec, source) for ``n`` random layouts of ``_bias_of_three``."""
    be, cases = emulated_backend(), []
    for args in random_layouts(seed, n):
        sub = make_group(3, _bias_of_three)
        spec = analyze(sub, signature_of(args))
        cases.append((sub, args, spec, be.generate(spec)))
    return cases


@needs_nvrtc
def test_random_layout_kernels_compile_cleanly():
    """The same 60 kernels through NVRTC in one translation unit: no error, no warning (an
    unused index once warned when every strided view was 0-d)."""
    sources = {c[3].source for c in _random_cases(11, 60)}
    assert nvrtc_compile("\n".join(sorted(sources)))[1] == ""


def _bias_of_three(s, p):  # the last output has p1 and p2's broadcast shape, maybe smaller
    y = add_op(s, "aten::add", [p[0], p[1], const(s, 1)])
    return [add_op(s, "aten::mul", [y, p[2]]), add_op(s, "aten::sub", [p[2], y, const(s, 1)]),
            add_op(s, "aten::mul", [p[1], p[2]])]
