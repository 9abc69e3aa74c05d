"""Chunk motion (``fuser/chunk_motion.py``): ``chunk`` of a value computed by elementwise ops
moves above them, so the ops and their consumers fuse into one kernel that reads chunk views of
the group inputs.  Every case runs the fused graph in strict mode (the compiled kernel ran, no
fallback) and compares it with the unfused graph in the interpreter."""
from __future__ import annotations

import numpy as np
import pytest

from torchlike import jit
from torchlike.errors import ExecutionError
from torchlike.fuser import config
from torchlike.fuser.chunk_motion import BROADCASTING_CHUNK
from torchlike.fuser.partition import fusion_groups
from torchlike.interpreter import run
from torchlike.ir import parse_graph

RNG = np.random.default_rng(7)

GATES = """
graph(%x : Tensor, %h : Tensor, %b : Tensor, %c : Tensor):
  %one : int = prim::Constant[value=1]()
  %chunks : int = prim::Constant[value=4]()
  %dim : int = prim::Constant[value={dim}]()
  %xh : Tensor = aten::add(%x, %h, %one)
  %g : Tensor = aten::add(%xh, %b, %one)
  %l : Tensor[] = aten::chunk(%g, %chunks, %dim)
  %i : Tensor, %f : Tensor, %z : Tensor, %o : Tensor = prim::ListUnpack(%l)
  %i1 : Tensor = aten::sigmoid(%i)
  %f1 : Tensor = aten::sigmoid(%f)
  %z1 : Tensor = aten::tanh(%z)
  %o1 : Tensor = aten::sigmoid(%o)
  %fc : Tensor = aten::mul(%f1, %c)
  %iz : Tensor = aten::mul(%i1, %z1)
  %c2 : Tensor = aten::add(%fc, %iz, %one)
  %t : Tensor = aten::tanh(%c2)
  %h2 : Tensor = aten::mul(%o1, %t)
  return (%h2, %c2)
"""


@pytest.fixture(autouse=True)
def _strict(tmp_path):
    saved = config.strict()
    config.set_cache_dir(tmp_path)
    config.set_strict(True)
    yield
    config.set_strict(saved)
    config.set_cache_dir(None)


def _arr(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def _check(text, *inputs, groups=1):
    g = parse_graph(text)
    fused = jit.fuse(g)
    assert len(list(fusion_groups(fused))) == groups, fused
    jit.reset_stats()
    got, want = jit.run(fused, *inputs), run(g, *inputs)
    got = got if isinstance(got, tuple) else (got,)
    want = want if isinstance(want, tuple) else (want,)
    for a, b in zip(got, want):
        assert a.shape == b.shape and a.dtype == b.dtype
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)
    s = jit.stats()
    assert s["cache_misses"] + s["cache_hits"] >= 1 and not s["fallbacks"], s
    return fused


def _chunk_node(fused):
    [group] = fusion_groups(fused)
    return [n for n in group.attrs["Subgraph"].nodes if n.kind == BROADCASTING_CHUNK]


@pytest.mark.parametrize("dim", [1, -1])
def test_lstm_gates_fuse_into_one_kernel(dim):
    """x + h + bias, then chunk(4, 1): the additions move above the chunk (the bias, of the
    row's shape, is chunked too) and the whole cell is one kernel."""
    rows, hid = 6, 5
    inputs = (_arr(rows, 4 * hid), _arr(rows, 4 * hid), _arr(4 * hid), _arr(rows, hid))
    fused = _check(GATES.replace("{dim}", str(dim)), *inputs)
    [bc] = _chunk_node(fused)  # one chunk node holding x, h and b
    assert len(bc.inputs) == 3 and len(bc.outputs) == 12
    assert not any(n.kind in ("aten::add", "aten::chunk") for n in fused.nodes)


@pytest.mark.parametrize("b_shape", [(6, 1), (1,), ()])
def test_inputs_broadcast_along_the_dim_pass_whole(b_shape):
    """A bias of size 1 along the chunk dim (or 0-d) is the same in every chunk."""
    rows, hid = 6, 5
    inputs = (_arr(rows, 4 * hid), _arr(rows, 4 * hid), _arr(*b_shape), _arr(rows, hid))
    _check(GATES.replace("{dim}", "1"), *inputs)


def test_chunk_along_dim_0_with_a_lower_rank_operand():
    """dim 0 of the broadcast rank 2: a rank-1 bias has no such dim and passes whole."""
    text = GATES.replace("{dim}", "0")
    hid = 5
    inputs = (_arr(8, hid), _arr(8, hid), _arr(hid), _arr(2, hid))
    _check(text, *inputs)


def test_producer_with_another_use_stays():
    """``%g`` is also returned: computing it per chunk would not give the whole value, so the
    chunk stays where it is and the producers form their own group."""
    text = GATES.replace("{dim}", "1").replace("return (%h2, %c2)", "return (%h2, %c2, %g)")
    inputs = (_arr(6, 20), _arr(6, 20), _arr(20), _arr(6, 5))
    g = parse_graph(text)
    fused = jit.fuse(g)
    assert not any(n.kind == BROADCASTING_CHUNK for grp in fusion_groups(fused)
                   for n in grp.attrs["Subgraph"].nodes)
    got, want = jit.run(fused, *inputs), run(g, *inputs)
    for a, b in zip(got, want):
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


SHARED = """
graph(%wx : Tensor, %uz : Tensor, %a : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %chunks : int = prim::Constant[value=4]()
  %awx : Tensor = aten::mul(%a, %wx)
  %m : Tensor = aten::mul(%awx, %uz)
  %bwx : Tensor = aten::mul(%b, %wx)
  %uu : Tensor = aten::mul(%uz, %uz)
  %s : Tensor = aten::add(%m, %bwx, %one)
  %g : Tensor = aten::add(%s, %uu, %one)
  %l : Tensor[] = aten::chunk(%g, %chunks, %one)
  %i : Tensor, %f : Tensor, %z : Tensor, %o : Tensor = prim::ListUnpack(%l)
  %i1 : Tensor = aten::sigmoid(%i)
  %o1 : Tensor = aten::tanh(%o)
  %r : Tensor = aten::mul(%i1, %f)
  %q : Tensor = aten::add(%z, %o1, %one)
  return (%r, %q)
"""


def test_a_value_read_by_several_producers_is_chunked_once():
    """The MI-LSTM's gates, ``a * wx * uz + b * wx + uz * uz``: wx and uz feed several
    producers (uz twice into one).  Each is chunked once, so the kernel has one argument, one
    load, per chunk of each input: a second copy would read the same memory twice."""
    inputs = (_arr(6, 20), _arr(6, 20), _arr(20), _arr(6, 1))
    fused = _check(SHARED, *inputs)
    [bc] = _chunk_node(fused)
    assert sorted(v.name for v in bc.inputs) == ["a", "b", "uz", "wx"], bc
    assert len(bc.outputs) == 16 and all(o.uses for o in bc.outputs)


UNEVEN = """
graph(%x : Tensor, %b : Tensor):
  %one : int = prim::Constant[value=1]()
  %chunks : int = prim::Constant[value=4]()
  %g : Tensor = aten::mul(%x, %b)
  %l : Tensor[] = aten::chunk(%g, %chunks, %one)
  %i : Tensor, %f : Tensor, %z : Tensor, %o : Tensor = prim::ListUnpack(%l)
  %i1 : Tensor = aten::sigmoid(%i)
  %o1 : Tensor = aten::tanh(%o)
  return (%i1, %f, %z, %o1)
"""


def test_uneven_chunks_give_the_interpreters_answer():
    """A dim of 22 does not split into 4 equal pieces (6, 6, 6, 4): the kernels only read even
    chunks, so the group falls back to the interpreter, with PyTorch's piece sizes."""
    config.set_strict(False)
    inputs = (_arr(3, 22), _arr(22))
    g = parse_graph(UNEVEN)
    got, want = jit.run(jit.fuse(g), *inputs), run(g, *inputs)
    assert [a.shape for a in want] == [(3, 6), (3, 6), (3, 6), (3, 4)]
    for a, b in zip(got, want):
        assert a.shape == b.shape
        np.testing.assert_allclose(a, b, rtol=2e-6, atol=1e-6)


def test_too_few_pieces_raise_as_unpacking_would():
    """chunk(4) of a size-2 dim gives 2 pieces; unpacking 4 fails, fused or not."""
    text = GATES.replace("{dim}", "1")
    inputs = (_arr(3, 2), _arr(3, 2), _arr(2), _arr(3, 1))
    config.set_strict(False)
    with pytest.raises(ExecutionError, match="2 values for 4 outputs"):
        run(parse_graph(text), *inputs)
    with pytest.raises(ExecutionError, match="gives 2 pieces, not the 4 unpacked"):
        jit.run(jit.fuse(parse_graph(text)), *inputs)


def test_int_and_mixed_dtypes_keep_promotion():
    """int32 gates + a float bias: the per-chunk adds promote exactly as the whole add."""
    text = GATES.replace("{dim}", "1")
    inputs = (RNG.integers(-3, 3, (6, 20)).astype(np.int32),
              RNG.integers(-3, 3, (6, 20)).astype(np.int32), _arr(20), _arr(6, 5))
    _check(text, *inputs)


# A write into the producer's operand between the producer and the chunk: recomputed per
# chunk at the chunk's place, the producer would read the written values (structural fuzz).
WRITE_BETWEEN = """
graph(%x : Float(2, 3, 8, strides=[24, 8, 1], requires_grad=0, device=cpu)):
  %one : int = prim::Constant[value=1]()
  %two : int = prim::Constant[value=2]()
  %m1 : int = prim::Constant[value=-1]()
  %m2 : int = prim::Constant[value=-2]()
  %v1 : Float(2, 3, 8, strides=[24, 8, 1], requires_grad=0, device=cpu) = aten::add(%x, %one, %one)
  %w : Float(2, 3, 8, strides=[24, 8, 1], requires_grad=0, device=cpu) = aten::clamp_(%x, %m2, %two)
  %l : Tensor[] = aten::chunk(%v1, %two, %m1)
  %a : Float(2, 3, 4, strides=[24, 8, 1], requires_grad=0, device=cpu), %b : Float(2, 3, 4, strides=[24, 8, 1], requires_grad=0, device=cpu) = prim::ListUnpack(%l)
  return (%b)
"""


def test_no_motion_across_a_write_into_the_producers_operand():
    x = _arr(2, 3, 8) * 4
    fused = jit.fuse(parse_graph(WRITE_BETWEEN))
    got = jit.run(fused, x.copy())
    np.testing.assert_array_equal(got, (x + 1)[..., 4:])


# Traced ``v1 = x * 4; v1.chunk(2, -1)[0], v1 * 1.5 - 0.25``: v1 has two readers, so the chunk
# stays; recomputing v1 in the chunk's group would make the chunk's input a computed value,
# which no kernel can read as a view (strict mode raised).
SHARED_CHUNKED = """
graph(%x : Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu)):
  %four : float = prim::Constant[value=4.]()
  %two : int = prim::Constant[value=2]()
  %m1 : int = prim::Constant[value=-1]()
  %one : int = prim::Constant[value=1]()
  %a : float = prim::Constant[value=1.5]()
  %q : float = prim::Constant[value=0.25]()
  %v1 : Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu) = aten::mul(%x, %four)
  %l : Tensor[] = aten::chunk(%v1, %two, %m1)
  %c0 : Float(4, 3, strides=[6, 1], requires_grad=0, device=cpu), %c1 : Float(4, 3, strides=[6, 1], requires_grad=0, device=cpu) = prim::ListUnpack(%l)
  %s : Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu) = aten::mul(%v1, %a)
  %t : Float(4, 6, strides=[6, 1], requires_grad=0, device=cpu) = aten::sub(%s, %q, %one)
  %e : Float(4, 3, strides=[6, 1], requires_grad=0, device=cpu) = aten::exp(%c0)
  return (%t, %e)
"""


def test_a_chunked_value_with_other_readers_is_not_recomputed_under_the_chunk():
    _check(SHARED_CHUNKED, _arr(4, 6), groups=2)
