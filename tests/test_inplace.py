"""In-place ops (``ops/inplace.py``) and the pass that makes the unobservable ones functional
(``passes/remove_mutation.py``): results and mutated inputs as PyTorch gives them, PyTorch's
errors for an in-place result that would change ``self``'s shape or cannot be cast to its dtype,
and fusion of the mutations nobody can see (with the compiled kernel proven to run)."""
import numpy as np
import pytest

import torchlike as tl
from torchlike import ir, jit
from torchlike.errors import ExecutionError
from torchlike.fuser import config
from torchlike.fuser.partition import fusion_groups
from torchlike.ir.attributes import SUBGRAPH_ATTR
from torchlike.jit.script_function import ScriptFunction
from torchlike.ops import registry
from torchlike.ops.inplace import INPLACE_OF, inplace_name
from torchlike.passes import infer_types
from torchlike.passes.remove_mutation import remove_mutation


def test_every_elementwise_op_with_self_has_an_inplace_twin():
    for op in registry.elementwise_ops():
        if op.params and op.params[0].name == "self" and op.params[0].is_operand:
            twin = registry.lookup(inplace_name(op.name))
            assert twin is not None and INPLACE_OF[twin.name] == op.name
            assert not twin.pure and not twin.is_elementwise  # never removed, never fused as is
    assert inplace_name("aten::__and__") == "aten::__iand__"
    for name in ("aten::copy_", "aten::fill_", "aten::zero_", "aten::__ior__"):
        assert registry.lookup(name) is not None


def test_eager_inplace_mutates_and_returns_self():
    x = np.ones(3, np.float32)
    assert tl.add_(x, 2.0) is x and x.tolist() == [3.0, 3.0, 3.0]
    tl.mul_(x, np.float32([1.0, -1.0, 0.5]))
    tl.relu_(x)
    assert x.tolist() == [3.0, 0.0, 1.5]
    i = np.zeros(3, np.int64)
    tl.copy_(i, np.float32([1.7, -2.2, 3.9]))  # copy_ casts (truncates), as PyTorch
    assert i.tolist() == [1, -2, 3]
    tl.fill_(i, 7)
    assert i.tolist() == [7, 7, 7]
    tl.zero_(i)
    assert i.tolist() == [0, 0, 0]


@pytest.mark.parametrize("call, message", [
    (lambda: tl.add_(np.ones(3, np.int64), 1.5), "can't be cast"),
    (lambda: tl.add_(np.ones(3, np.float32), np.ones((2, 3), np.float32)), "doesn't match"),
    (lambda: tl.add_(np.ones(3, bool), np.ones(3, np.int64)), "can't be cast"),
    (lambda: tl.neg_(np.broadcast_to(np.ones(1, np.float32), (3,))), "read-only"),
])
def test_inplace_errors_as_pytorch(call, message):
    with pytest.raises(ExecutionError, match=message):
        call()


GRAPH = """
graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %z : Tensor = aten::mul(%x, %y)
  %z.1 : Tensor = aten::add_(%z, %y, %1)
  %r : Tensor = aten::relu_(%z.1)
  %s : Tensor = aten::sigmoid_(%x)
  %t : (Tensor, Tensor, Tensor) = prim::TupleConstruct(%r, %z, %s)
  return (%t)
"""


def _typed(text, *args):
    g = ir.parse_graph(text)
    infer_types(g, list(args))
    return g


def test_remove_mutation_rewrites_only_what_nobody_sees():
    x = np.ones((4, 5), np.float32)
    g = _typed(GRAPH, x, x)
    assert remove_mutation(g) == 2  # add_ and relu_ of the fresh %z; sigmoid_ of the input stays
    kinds = [n.kind for n in g.nodes]
    assert "aten::add" in kinds and "aten::relu" in kinds and "aten::sigmoid_" in kinds
    # the tuple reads z after both mutations: the relu result
    (tup,) = [n for n in g.nodes if n.kind == "prim::TupleConstruct"]
    assert tup.inputs[0] is tup.inputs[1]


def test_an_earlier_view_keeps_the_mutation():
    text = """
graph(%x : Tensor):
  %0 : int = prim::Constant[value=0]()
  %z : Tensor = aten::neg(%x)
  %v : Tensor = aten::select(%z, %0, %0)
  %z.1 : Tensor = aten::exp_(%z)
  %r : Tensor = aten::add(%v, %z.1, %0)
  return (%r)
"""
    g = _typed(text, np.ones((3, 3), np.float32))
    assert remove_mutation(g) == 0
    x = np.arange(9, dtype=np.float32).reshape(3, 3) / 9
    got = ScriptFunction(ir.parse_graph(text))(x)
    # v is a view of z's first row: it sees exp_'s write (alpha 0 drops z.1 itself)
    np.testing.assert_allclose(got, np.broadcast_to(np.exp(-x)[0], (3, 3)), rtol=1e-6)


def test_a_broadcasting_inplace_result_is_not_made_functional():
    text = """
graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %z : Tensor = aten::neg(%x)
  %z.1 : Tensor = aten::add_(%z, %y, %1)
  return (%z.1)
"""
    x, y = np.ones(3, np.float32), np.ones((2, 3), np.float32)
    assert remove_mutation(_typed(text, x, y)) == 0
    with pytest.raises(ExecutionError, match="doesn't match"):
        ScriptFunction(ir.parse_graph(text))(x, y)


def test_dtype_of_self_is_kept_when_made_functional():
    text = """
graph(%x : Tensor, %y : Tensor):
  %z : Tensor = aten::neg(%x)
  %z.1 : Tensor = aten::mul_(%z, %y)
  return (%z.1)
"""
    x = np.float16([1.5, -2.0, 3.25])
    y = np.float32([0.1, 0.2, 0.3])
    g = _typed(text, x, y)
    assert remove_mutation(g) == 1 and any(n.kind == "aten::type_as" for n in g.nodes)
    got = ScriptFunction(ir.parse_graph(text))(x, y)
    assert got.dtype == np.float16
    np.testing.assert_array_equal(got, (-x.astype(np.float32) * y).astype(np.float16))


def test_fused_inplace_graph_runs_one_kernel():
    x = np.random.default_rng(0).standard_normal((64, 32)).astype(np.float32)
    y = np.random.default_rng(1).standard_normal((64, 32)).astype(np.float32)
    f = ScriptFunction(ir.parse_graph(GRAPH))
    fused = f.graph_for(x, y)
    (group,) = fusion_groups(fused)
    inner = {n.kind for n in group.attrs[SUBGRAPH_ATTR].nodes}
    assert {"aten::mul", "aten::add", "aten::relu"} <= inner
    saved = config.strict()
    config.set_strict(True)
    try:
        jit.reset_stats()
        x0 = x.copy()
        r, z, s = f(x, y)
        st = jit.stats()
    finally:
        config.set_strict(saved)
    assert st["fallbacks"] == {} and st["cache_hits"] + st["cache_misses"] == 1
    want = np.maximum(x0 * y + y, 0)
    np.testing.assert_allclose(r, want, rtol=1e-6)
    np.testing.assert_array_equal(z, r)
    np.testing.assert_allclose(s, 1 / (1 + np.exp(-x0)), rtol=1e-6)
    assert s is x  # sigmoid_ of the input wrote into the caller's array, as PyTorch does


TORCH_GRAPHS = {
    "residual": """
graph(%x : Tensor, %y : Tensor):
  %1 : int = prim::Constant[value=1]()
  %h : Tensor = aten::tanh(%x)
  %h.1 : Tensor = aten::add_(%h, %y, %1)
  %h.2 : Tensor = aten::relu_(%h.1)
  %h.3 : Tensor = aten::mul_(%h.2, %x)
  return (%h.3)
""",
    "mutated input": """
graph(%x : Tensor, %y : Tensor):
  %1 : float = prim::Constant[value=0.5]()
  %x.1 : Tensor = aten::mul_(%x, %1)
  %r : Tensor = aten::add(%x.1, %y, %1)
  return (%r)
""",
    "clamp_ and copy_": """
graph(%x : Tensor, %y : Tensor):
  %lo : float = prim::Constant[value=-0.5]()
  %hi : float = prim::Constant[value=0.5]()
  %none : NoneType = prim::Constant()
  %c : Tensor = aten::clone(%x, %none)
  %c.1 : Tensor = aten::clamp_(%c, %lo, %hi)
  %false : bool = prim::Constant[value=0]()
  %y.1 : Tensor = aten::copy_(%y, %c.1, %false)
  return (%y.1)
""",
}


@pytest.mark.parametrize("name", list(TORCH_GRAPHS))
def test_matches_torch_results_and_mutations(name):
    torch = pytest.importorskip("torch")
    text = TORCH_GRAPHS[name]
    rng = np.random.default_rng(3)
    x = rng.standard_normal((8, 16)).astype(np.float32)
    y = rng.standard_normal((8, 16)).astype(np.float32)
    tx, ty = torch.from_numpy(x.copy()), torch.from_numpy(y.copy())
    fn = torch._C._create_function_from_graph("f", torch._C.parse_ir(text))
    want = fn(tx, ty)
    ours = ScriptFunction(ir.parse_graph(text))
    got = ours(x, y)
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-7)
    np.testing.assert_allclose(x, tx.numpy(), rtol=1e-6, atol=1e-7)  # the inputs' mutations
    np.testing.assert_allclose(y, ty.numpy(), rtol=1e-6, atol=1e-7)


def _augmented(x, y):
    z = x * 2.0
    z += y
    x += 1.0  # writes into the caller's x, after z read it
    n = 3
    n += 1
    return z * n


@pytest.mark.parametrize("capture", ["trace", "script"])
def test_augmented_assignment_writes_in_place_and_keeps_order(capture):
    """``x += 1`` on a tensor records ``aten::add_`` (as PyTorch does) and writes into the
    caller's array; the fused group reading ``x`` stays before that write."""
    x, y = np.ones(3, np.float32), np.float32([1.0, 2.0, 3.0])
    f = jit.trace(_augmented, (x.copy(), y)) if capture == "trace" else jit.script(_augmented)
    assert "aten::add_" in str(f.graph)
    saved = config.fusion_enabled()
    config.set_fusion_enabled(True)
    try:
        xp, xt = x.copy(), x.copy()
        want = _augmented(xp, y)
        got = f(xt, y)
    finally:
        config.set_fusion_enabled(saved)
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(xt, xp)


def _accumulate(x):
    acc = tl.zeros_like(x)
    for i in range(x.shape[0]):
        acc += x * i
    return acc


def _accumulate_alias(x):
    acc = x * 1.0
    keep = acc  # the same array: it sees every += below
    for _ in range(3):
        acc += x
    return keep + acc


def test_loop_carried_accumulator_is_made_functional_and_fused():
    x = np.random.default_rng(4).standard_normal((6, 5)).astype(np.float32)
    f = jit.script(_accumulate)
    saved = config.fusion_enabled()
    config.set_fusion_enabled(True)
    try:
        fused = f.graph_for(x)
        got = f(x)
    finally:
        config.set_fusion_enabled(saved)
    text = str(fused)
    assert "aten::add_" not in text and "aten::add(%acc" in text, text
    np.testing.assert_allclose(got, _accumulate(x), rtol=1e-6)


def test_loop_carried_value_read_after_the_loop_stays_in_place():
    x = np.random.default_rng(5).standard_normal((4, 3)).astype(np.float32)
    f = jit.script(_accumulate_alias)
    saved = config.fusion_enabled()
    config.set_fusion_enabled(True)
    try:
        assert "aten::add_" in str(f.graph_for(x))
        got = f(x)
    finally:
        config.set_fusion_enabled(saved)
    np.testing.assert_allclose(got, _accumulate_alias(x), rtol=1e-6)


def _run(text, mode, *inputs):
    """``text`` parsed and run ``mode``-wise; fused, its groups' kernels must have run."""
    g = ir.parse_graph(text)
    if mode == "interpreted":
        return jit.run(g, *inputs)
    jit.reset_stats()
    out = jit.run(jit.fuse(g), *inputs)
    st = jit.stats()
    assert st["fallbacks"] == {} and st["cache_hits"] + st["cache_misses"] >= 1, st
    return out


# Printed by torch.jit.script for ``y = x.clone(); y[..., 0].neg_(); y.unbind(0)[1].mul_(3)``
# on a 1-D x: select and unbind of a 1-D tensor are 0-d views, so both writes reach ``y``.
WRITE_THROUGH_0D_VIEWS = """
graph(%x.1 : Tensor):
  %9 : NoneType = prim::Constant()
  %13 : int = prim::Constant[value=-1]()
  %12 : int = prim::Constant[value=0]()
  %1 : int = prim::Constant[value=1]()
  %3 : int = prim::Constant[value=3]()
  %y.1 : Tensor = aten::clone(%x.1, %9)
  %14 : Tensor = aten::select(%y.1, %13, %12)
  %15 : Tensor = aten::neg_(%14)
  %16 : Tensor[] = aten::unbind(%y.1, %12)
  %17 : Tensor = aten::__getitem__(%16, %1)
  %18 : Tensor = aten::mul_(%17, %3)
  %19 : Tensor = aten::mul(%y.1, %3)
  return (%19)
"""


@pytest.mark.parametrize("mode", ["interpreted", "fused"])
def test_inplace_through_a_0d_view_writes_the_base(mode):
    x = np.array([1.0, 2.0, 4.0], np.float32)
    got = _run(WRITE_THROUGH_0D_VIEWS, mode, x)
    np.testing.assert_array_equal(got, [-3.0, 18.0, 12.0])  # PyTorch's
    np.testing.assert_array_equal(x, [1.0, 2.0, 4.0])  # the clone's, not the input's


# Printed by torch.jit.trace for ``v = x.unbind(1)[0]; v / v.shape[0]`` over x of shape
# (1, 1, 2): the one-element list unpacks to one output, the tensor itself.
UNPACK_ONE = """
graph(%x : Double(1, 1, 2, strides=[2, 2, 1], requires_grad=0, device=cpu)):
  %5 : int = prim::Constant[value=1]()
  %6 : Tensor[] = aten::unbind(%x, %5)
  %v : Double(1, 2, strides=[2, 1], requires_grad=0, device=cpu) = prim::ListUnpack(%6)
  %14 : int = prim::Constant[value=0]()
  %15 : int = aten::size(%v, %14)
  %16 : Long(device=cpu) = prim::NumToTensor(%15)
  %20 : Double(1, 2, strides=[2, 1], requires_grad=0, device=cpu) = aten::div(%v, %16)
  return (%20)
"""


@pytest.mark.parametrize("mode", ["interpreted", "fused"])
def test_list_unpack_of_one_element_is_the_element(mode):
    got = _run(UNPACK_ONE, mode, np.array([[[1.5, -2.0]]]))
    np.testing.assert_array_equal(got, [[1.5, -2.0]])
    two = ir.parse_graph(UNPACK_ONE.replace("(1, 1, 2,", "(1, 2, 2,"))
    with pytest.raises(ExecutionError, match="2 values for 1 output"):
        jit.run(two, np.ones((1, 2, 2)))


# Printed by torch.jit.trace for ``y = x.float(); x.add_(1); return x + 1`` with a float32 x:
# ``aten::to`` of the same dtype returns x itself, so add_ writes into the caller's x.  Fused
# as a copy, the write went into the copy and the caller's x was left unchanged.
TO_SAME_DTYPE_THEN_WRITE = """
graph(%x1.1 : Float(3, strides=[1], requires_grad=0, device=cpu)):
  %5 : int = prim::Constant[value=6]()
  %6 : bool = prim::Constant[value=0]()
  %8 : NoneType = prim::Constant()
  %x1.3 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::to(%x1.1, %5, %6, %6, %8)
  %11 : Long(requires_grad=0, device=cpu) = prim::Constant[value={1}]()
  %12 : int = prim::Constant[value=1]()
  %x1 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::add_(%x1.3, %11, %12)
  %16 : Float(3, strides=[1], requires_grad=0, device=cpu) = aten::add(%x1, %11, %12)
  return (%16)
"""


@pytest.mark.parametrize("mode", ["interpreted", "fused"])
def test_a_write_through_to_of_the_same_dtype_reaches_the_input(mode):
    x = np.array([1.0, 2.0, 4.0], np.float32)
    got = _run(TO_SAME_DTYPE_THEN_WRITE, mode, x)
    np.testing.assert_array_equal(got, [3.0, 4.0, 6.0])
    np.testing.assert_array_equal(x, [2.0, 3.0, 5.0])  # PyTorch writes into the input


def test_to_and_type_as_of_the_same_dtype_return_the_input_itself():
    """PyTorch returns ``self`` from ``x.to(x.dtype)`` and ``x.type_as(y)`` of one dtype, so
    a later in-place write through the result reaches ``x``; float16 included (it computes in
    float32, which made a copy), and ``copy=True`` copies."""
    to, type_as = registry.get("aten::to"), registry.get("aten::type_as")
    for dt in (np.float16, np.float32, np.int64, np.bool_):
        x = np.ones(3, dt)
        code = {np.float16: 5, np.float32: 6, np.int64: 4, np.bool_: 11}[dt]
        assert to.impl(np, x, code, False, False, None) is x
        assert type_as.impl(np, x, np.zeros(2, dt)) is x
        assert to.impl(np, x, code, False, True, None) is not x
        assert to.impl(np, x, 7, False, False, None).dtype == np.float64
