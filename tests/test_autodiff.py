"""Autodiff (``jit.vjp``, ``jit.grad``, ``jit.vjp_graphs``): every op with a derivative rule
against ``torch.autograd`` (float64 to 1e-10, float32 within tolerances), PyTorch's conventions
at kinks, finite differences where PyTorch is absent, control flow, modules, the corpus's LSTM
cell, and the fusion of forward and backward graphs."""
from __future__ import annotations

import numpy as np
import pytest

import torchlike as tl
from tests.autodiff_check import (
    Fixed,
    U,
    _rng,
    _torch_vjp,
    check_against_torch,
    check_case,
    needs_torch,
)
from tests.autodiff_check import make as _make
from tests.corpus_utils import graph_text, input_sets
from tests.readme_blocks import run_readme_block
from torchlike import jit
from torchlike.ir import parse_graph

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # the finite-difference tests still run
    torch = F = None



def _backward_of(f):
    """PyTorch's backward of ``f`` as a function of (g, x) that autograd differentiates again."""
    return lambda g, x: torch.autograd.grad(f(x), x, g, create_graph=True)[0]


# (id, torchlike fn, torch fn (None: the same code on torch), inputs)
S = (3, 5)
UNARY = ["exp", "log", "sqrt", "rsqrt", "tanh", "sigmoid", "sin", "cos", "tan", "erf", "erfc",
         "abs", "neg", "reciprocal", "square", "expm1", "log1p", "log2", "log10", "exp2",
         "sinh", "cosh", "asin", "acos", "atan", "relu"]
DOMAIN = {"log": (0.2, 3), "sqrt": (0.2, 3), "rsqrt": (0.2, 3), "log2": (0.2, 3),
          "log10": (0.2, 3), "asin": (-0.9, 0.9), "acos": (-0.9, 0.9), "log1p": (-0.5, 3),
          "reciprocal": (0.3, 3)}


def _unary_case(n):
    return (n, lambda m, x: getattr(m, n)(x), None, [U(*DOMAIN.get(n, (-2, 2)), *S)])


CASES = [_unary_case(n) for n in UNARY]
A = U(-2, 2, *S)
CASES += [
    ("add_broadcast", lambda m, x, y: m.add(x, y, alpha=2.0), None, [A, U(-2, 2, 5)]),
    ("sub_broadcast", lambda m, x, y: x - y, None, [U(-2, 2, 3, 1), U(-2, 2, 1, 5)]),
    ("rsub_scalar", lambda m, x: 2.0 - x, None, [A]),
    ("mul_broadcast", lambda m, x, y: x * y, None, [A, U(-2, 2, 3, 1)]),
    ("div", lambda m, x, y: x / y, None, [A, U(0.5, 2, *S)]),
    ("pow_scalar", lambda m, x: m.pow(x, 3.0), None, [A]),
    ("pow_tensor", lambda m, x, y: m.pow(x, y), None, [U(0.5, 2, *S), U(-1, 2, *S)]),
    ("rpow", lambda m, x: m.pow(2.0, x), None, [A]),
    ("gelu", lambda m, x: m.gelu(x), lambda x: F.gelu(x), [U(-4, 4, *S)]),
    ("gelu_tanh", lambda m, x: m.gelu(x, approximate="tanh"),
     lambda x: F.gelu(x, approximate="tanh"), [U(-4, 4, *S)]),
    # gelu_backward's own rule (a double backward), against PyTorch's gelu_double_backward
    ("gelu_backward", lambda m, g, x: m.gelu_backward(g, x),
     lambda g, x: torch.ops.aten.gelu_backward(g, x), [A, U(-4, 4, *S)]),
    ("gelu_backward_tanh", lambda m, g, x: m.gelu_backward(g, x, approximate="tanh"),
     lambda g, x: torch.ops.aten.gelu_backward(g, x, approximate="tanh"), [A, U(-4, 4, *S)]),
    # PyTorch's other backward kernels (ops/elementwise_backward.py): their double backward
    ("sigmoid_backward", lambda m, g, y: m.sigmoid_backward(g, y),
     lambda g, y: torch.ops.aten.sigmoid_backward(g, y), [A, U(0.05, 0.95, *S)]),
    ("tanh_backward", lambda m, g, y: m.tanh_backward(g, y),
     lambda g, y: torch.ops.aten.tanh_backward(g, y), [A, U(-0.95, 0.95, *S)]),
    # (aten::silu_backward and aten::logit_backward called directly have no derivative in
    # PyTorch: its silu and logit backward nodes differentiate the formula instead)
    ("silu_backward", lambda m, g, x: m.silu_backward(g, x), _backward_of(lambda x: F.silu(x)),
     [A, U(-4, 4, *S)]),
    ("threshold_backward", lambda m, g, x: m.threshold_backward(g, x, 0.3),
     lambda g, x: torch.ops.aten.threshold_backward(g, x, 0.3), [A, A]),
    ("logit_backward", lambda m, g, x: m.logit_backward(g, x),
     _backward_of(lambda x: torch.logit(x)), [A, U(0.1, 0.9, *S)]),
    ("logit_backward_eps", lambda m, g, x: m.logit_backward(g, x, 0.2),
     _backward_of(lambda x: torch.logit(x, 0.2)), [A, U(0.05, 0.95, *S)]),
    ("native_dropout_backward", lambda m, g, mask: m.native_dropout_backward(g, mask, 2.0),
     lambda g, mask: torch.ops.aten.native_dropout_backward(g, mask, 2.0),
     [A, Fixed(np.arange(15).reshape(S) % 3 != 1)]),
    ("silu", lambda m, x: m.silu(x), lambda x: F.silu(x), [A]),
    ("mish", lambda m, x: m.mish(x), lambda x: F.mish(x), [A]),
    ("softplus_threshold", lambda m, x: m.softplus(x, 2.0, 1.0),
     lambda x: F.softplus(x, 2.0, 1.0), [U(-3, 3, 4, 25)]),
    ("elu", lambda m, x: m.elu(x, 0.7), lambda x: F.elu(x, 0.7), [A]),
    ("celu", lambda m, x: m.celu(x, 1.3), lambda x: F.celu(x, 1.3), [A]),
    ("selu", lambda m, x: m.selu(x), lambda x: F.selu(x), [A]),
    ("leaky_relu", lambda m, x: m.leaky_relu(x, 0.1), lambda x: F.leaky_relu(x, 0.1), [A]),
    ("hardtanh", lambda m, x: m.hardtanh(x, -0.5, 1.0), lambda x: F.hardtanh(x, -0.5, 1.0), [A]),
    ("relu6", lambda m, x: m.relu6(x * 4.0), lambda x: F.relu6(x * 4.0), [A]),
    ("hardswish", lambda m, x: m.hardswish(x * 3.0), lambda x: F.hardswish(x * 3.0), [A]),
    ("hardsigmoid", lambda m, x: m.hardsigmoid(x * 3.0), lambda x: F.hardsigmoid(x * 3.0), [A]),
    ("log_sigmoid", lambda m, x: m.log_sigmoid(x), lambda x: F.logsigmoid(x), [A]),
    ("threshold", lambda m, x: m.threshold(x, 0.3, -1.0), lambda x: F.threshold(x, 0.3, -1.0),
     [A]),
    ("where", lambda m, x, y: m.where(x > y, x * 2.0, y), None, [A, A]),
    ("clamp", lambda m, x: m.clamp(x, -0.5, 0.7), None, [A]),
    ("clamp_min", lambda m, x: m.clamp(x, min=-0.5), None, [A]),
    ("clamp_tensor", lambda m, x, lo, hi: m.clamp(x, lo, hi), None,
     [A, U(-1, 0, *S), U(0, 1, *S)]),
    ("maximum", lambda m, x, y: m.maximum(x, y), None, [A, U(-2, 2, 5)]),
    ("minimum", lambda m, x, y: m.minimum(x, y), None, [A, A]),
    ("lerp", lambda m, x, y, w: m.lerp(x, y, w), None, [A, A, U(0, 1, *S)]),
    ("addcmul", lambda m, x, y, z: m.addcmul(x, y, z, value=0.5), None, [A, A, A]),
    ("addcdiv", lambda m, x, y, z: m.addcdiv(x, y, z, value=0.5), None, [A, A, U(0.5, 2, *S)]),
    ("atan2", lambda m, x, y: m.atan2(x, y), None, [A, A]),
    ("hypot", lambda m, x, y: m.hypot(x, y), None, [A, A]),
    ("logaddexp", lambda m, x, y: m.logaddexp(x, y), None, [A, A]),
    ("xlogy", lambda m, x, y: m.xlogy(x, y), None, [A, U(0.5, 2, *S)]),
    ("sum_dim", lambda m, x: m.sum(x, 1), None, [A]),
    ("sum_keepdim", lambda m, x: m.sum(x, [0], keepdim=True), None, [A]),
    ("sum_all", lambda m, x: m.sum(x * x), None, [A]),
    ("mean", lambda m, x: m.mean(x, [1]), None, [A]),
    ("amax_ties", lambda m, x: m.amax(m.round(x), [1]), None, [U(-2, 2, 4, 9)]),
    ("amin", lambda m, x: m.amin(x, [0, 1]), None, [A]),
    ("max_all_ties", lambda m, x: m.max(m.clamp(x, max=1.0) * x), None, [A]),
    ("max_dim", lambda m, x: m.max(x, 1)[0] * 2.0, None, [A]),
    ("min_dim_keepdim", lambda m, x: m.min(x, 0, keepdim=True)[0], None, [A]),
    ("gather", lambda m, x: m.gather(x, 1, (m.tensor if m is torch else np.array)(
        [[0, 2, 2], [4, 1, 0], [3, 3, 3]])), None, [A]),
    ("slice", lambda m, x: x[:, 1:4] * 3.0, None, [A]),
    ("select", lambda m, x: m.select(x, 1, 2) * 3.0, None, [A]),
    ("split", lambda m, x: m.split(x, 2, 1)[0] * 2.0 + m.split(x, 2, 1)[2], None, [A]),
    ("split_with_sizes", lambda m, x: m.cat([p * float(i + 1) for i, p in enumerate(
        x.split_with_sizes([1, 3, 1], 1))], 1), None, [A]),
    ("unflatten", lambda m, x: m.unflatten(x, 1, [1, 5]) * 2.0, None, [A]),
    ("masked_fill", lambda m, x: m.masked_fill(x, x > 0.5, -1.0), None, [A]),
    ("remainder", lambda m, x, y: m.remainder(x, y), None, [A, U(0.5, 2, *S)]),
    ("fmod", lambda m, x, y: m.fmod(x, y), None, [A, U(-2, -0.5, *S)]),
    ("logit", lambda m, x: m.logit(x), None, [U(0.1, 0.9, *S)]),
    ("logit_eps", lambda m, x: m.logit(x, 0.2), None, [U(0.05, 0.95, *S)]),
    ("lgamma", lambda m, x: m.lgamma(x), None, [U(0.5, 4, *S)]),
    ("erfinv", lambda m, x: m.erfinv(x), None, [U(-0.9, 0.9, *S)]),
    ("tril", lambda m, x: m.tril(x, 1) * 2.0, None, [A]),
    ("triu", lambda m, x: m.triu(x) * 2.0, None, [A]),
    ("mse_loss", lambda m, x, y: (m if m is tl else F).mse_loss(x, y), None, [A, A]),
    ("l1_loss_sum", lambda m, x, y: m.l1_loss(x, y, 2) if m is tl else
     F.l1_loss(x, y, reduction="sum"), None, [A, A]),
    ("glu", lambda m, x: (m if m is tl else F).glu(x, 0), None, [U(-2, 2, 4, 5)]),
    ("baddbmm", lambda m, s, x, y: m.baddbmm(s, x, y, beta=0.5, alpha=2.0), None,
     [U(-1, 1, 2, 3, 4), U(-1, 1, 2, 3, 5), U(-1, 1, 2, 5, 4)]),
    ("var", lambda m, x: m.var(x, [1], correction=1, keepdim=True), None, [A]),
    ("std", lambda m, x: m.std(x, [1]), None, [A]),
    ("logsumexp", lambda m, x: m.logsumexp(x, [1]), None, [A]),
    ("softmax", lambda m, x: m.softmax(x, -1), None, [A]),
    ("log_softmax", lambda m, x: m.log_softmax(x, 0), None, [A]),
    ("matmul_2d", lambda m, x, y: m.matmul(x, y), None, [A, U(-1, 1, 5, 4)]),
    ("matmul_batched", lambda m, x, y: m.matmul(x, y), None, [U(-1, 1, 2, 3, 5), U(-1, 1, 5, 4)]),
    ("matmul_vec", lambda m, x, y: m.matmul(x, y), None, [A, U(-1, 1, 5)]),
    ("linear", lambda m, x, w, b: m.linear(x, w, b), lambda x, w, b: F.linear(x, w, b),
     [U(-1, 1, 2, 3, 5), U(-1, 1, 4, 5), U(-1, 1, 4)]),
    ("addmm", lambda m, b, x, y: m.addmm(b, x, y, beta=0.5, alpha=2.0), None,
     [U(-1, 1, 4), A, U(-1, 1, 5, 4)]),
    ("layer_norm", lambda m, x, w, b: m.layer_norm(x, [5], w, b, 1e-5),
     lambda x, w, b: F.layer_norm(x, [5], w, b, 1e-5), [U(-2, 2, 4, 5), U(0.5, 1.5, 5),
                                                         U(-1, 1, 5)]),
    ("chunk_cat", lambda m, x: m.cat([c * float(i + 1) for i, c in enumerate(m.chunk(x, 3, 1))],
                                     1), None, [U(-1, 1, 2, 7)]),
    ("chunk_unused", lambda m, x: m.chunk(x, 2, 0)[1] * 3.0, None, [U(-1, 1, 4, 3)]),
    ("stack", lambda m, x, y: m.stack([x, y * y], 1), None, [A, A]),
    ("views", lambda m, x: m.reshape(m.transpose(x, 0, 1), [15]).unsqueeze(0), None, [A]),
    ("permute", lambda m, x: m.permute(x, [2, 0, 1]) * 2.0, None, [U(-1, 1, 2, 3, 4)]),
    ("expand", lambda m, x: x.expand(3, 5) * 2.0, None, [U(-1, 1, 1, 5)]),
    ("cast", lambda m, x: (x.float() * 2.0).double() if m is torch else
     (x.astype(np.float32) * 2.0).astype(np.float64), None, [A]),
]


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_op_matches_torch_float64(case):
    rng = _rng(7)
    check_case(case, [_make(s, np.float64, rng) for s in case[3]], "float64")


# The cast case converts to float64 itself: it has no float32 variant (not a skip).
CASES32 = [c for c in CASES if c[0] != "cast"]


@needs_torch
@pytest.mark.parametrize("case", CASES32, ids=[c[0] for c in CASES32])
def test_op_matches_torch_float32(case):
    rng = _rng(11)
    check_case(case, [_make(s, np.float32, rng) for s in case[3]], "float32")


# -- PyTorch's conventions at kinks (values exactly on the kink) -------------------------------

KINKS = [
    ("relu_at_0", lambda m, x: m.relu(x)),
    ("abs_at_0", lambda m, x: m.abs(x)),
    ("clamp_at_bounds", lambda m, x: m.clamp(x, -1.0, 1.0)),
    ("hardtanh_at_bounds", lambda m, x: (m if m is tl else F).hardtanh(x, -1.0, 1.0)),
    ("leaky_relu_at_0", lambda m, x: (m if m is tl else F).leaky_relu(x, 0.2)),
    ("maximum_ties", lambda m, x: m.maximum(x, m.round(x))),
    ("minimum_ties", lambda m, x: m.minimum(m.round(x), x)),
    ("amax_ties", lambda m, x: m.amax(m.round(x), [0])),
    ("max_all_ties", lambda m, x: m.max(m.round(x))),
    ("max_dim_ties", lambda m, x: m.max(m.round(x), 1)[0]),
]


@needs_torch
@pytest.mark.parametrize("case", KINKS, ids=[c[0] for c in KINKS])
def test_kinks_follow_pytorch(case):
    name, fn = case
    x = np.array([[-1.0, 0.0, 1.0, 2.0], [0.0, -0.0, 1.0, -1.0], [0.5, 1.0, 1.0, 3.0]])
    check_against_torch(lambda a: fn(tl, a), lambda a: fn(torch, a), [x])


# -- finite differences (no torch needed) ------------------------------------------------------

def _finite_difference(fn, arrays, cot, eps=1e-6):
    out = []
    for i, a in enumerate(arrays):
        g = np.zeros_like(a)
        for idx in np.ndindex(a.shape):
            hi = [b.copy() for b in arrays]
            lo = [b.copy() for b in arrays]
            hi[i][idx] += eps
            lo[i][idx] -= eps
            fh, fl = np.asarray(fn(*hi)), np.asarray(fn(*lo))
            g[idx] = np.sum((fh - fl) * cot) / (2 * eps)
        out.append(g)
    return out


FD_CASES = [c for c in CASES if c[0] in ("tanh", "sigmoid", "mul_broadcast", "gelu", "gelu_tanh",
                                         "softplus_threshold", "softmax", "layer_norm",
                                         "matmul_2d", "logsumexp", "chunk_cat", "where")]


@pytest.mark.parametrize("case", FD_CASES, ids=[c[0] for c in FD_CASES])
def test_finite_differences(case):
    name, fn, _, specs = case
    rng = _rng(3)
    arrays = [_make(s, np.float64, rng) for s in specs]
    f = lambda *a: fn(tl, *a)  # noqa: E731
    out, pullback = jit.vjp(f, *arrays)
    cot = _rng(4).standard_normal(np.shape(out))
    grads = pullback(cot)
    for g, r in zip(grads, _finite_difference(f, arrays, cot)):
        np.testing.assert_allclose(g, r, rtol=1e-5, atol=1e-7)


def test_grad_argnums_and_scalar_inputs():
    def loss(x, w, s):
        return tl.sum(tl.tanh(x * w) * s)

    x, w = _rng(0).standard_normal((3, 4)), _rng(1).standard_normal(4)
    gx = jit.grad(loss)(x, w, 2.0)
    gx2, gw = jit.grad(loss, argnums=(0, 1))(x, w, 2.0)
    t = np.tanh(x * w)
    np.testing.assert_allclose(gx, 2 * (1 - t * t) * w, rtol=1e-12)
    np.testing.assert_allclose(gx2, gx, rtol=1e-12)
    np.testing.assert_allclose(gw, (2 * (1 - t * t) * x).sum(0), rtol=1e-12)
    _, pullback = jit.vjp(loss, x, w, 2.0)
    assert pullback(np.float64(1.0))[2] is None  # a Python scalar has no gradient


def test_integer_inputs_get_no_gradient():
    def f(x, n):
        return x * n.astype(np.float64) + x

    x, n = _rng(0).standard_normal((2, 3)), np.arange(6).reshape(2, 3)
    out, pullback = jit.vjp(f, x, n)
    gx, gn = pullback(np.ones((2, 3)))
    assert gn is None
    np.testing.assert_allclose(gx, n + 1.0)


def test_unused_float_input_gets_zeros():
    out, pullback = jit.vjp(lambda x, y: tl.exp(x), np.ones(3), np.ones(2))
    gx, gy = pullback(np.ones(3))
    np.testing.assert_array_equal(gy, np.zeros(2))


# -- bad input ---------------------------------------------------------------------------------

def test_grad_of_integer_output_is_an_error():
    f = lambda x: tl.sum(x > 0.0)  # noqa: E731
    with pytest.raises(jit.AutodiffError, match="integer, bool and scalar outputs"):
        jit.grad(f)(np.ones(3))


def test_grad_of_non_scalar_is_an_error():
    with pytest.raises(jit.AutodiffError, match=r"scalar output.*shape \(3,\)"):
        jit.grad(lambda x: x * 2.0)(np.ones(3))


def test_pullback_checks_cotangents():
    out, pullback = jit.vjp(lambda x: x * 2.0, np.ones(3))
    with pytest.raises(jit.AutodiffError, match="shape"):
        pullback(np.ones(4))


def test_op_without_rule_is_named():
    with pytest.raises(jit.AutodiffError, match="no derivative rule for aten::embedding_bag"):
        jit.vjp(lambda w: tl.embedding_bag(w, np.array([0, 2, 1]), np.array([0, 2]))[0],
                np.ones((3, 4)))


@needs_torch
def test_outputs_of_unknown_shape_keep_the_backward_inputs_in_order():
    """An output whose shape is known only at run time (``masked_select``) is fitted with its
    size, a saved value: the backward still takes every cotangent before the saved values."""
    x = _rng(2).uniform(0, 1, (3, 4))
    check_against_torch(lambda x: (tl.masked_select(x, x > 0.5), x * 2.0),
                        lambda x: (torch.masked_select(x, x > 0.5), x * 2.0), [x])


@needs_torch
def test_var_std_unbiased_overload_and_zero_std():
    """``var(x, False)`` / ``std(x, True)`` (the ``unbiased`` overload: every dim), and a
    constant row, whose std is 0: its gradient is 0, as PyTorch's, not 0 / 0."""
    x = _rng(5).uniform(-1, 1, (3, 4))
    x[1] = 0.5
    check_against_torch(lambda x: (tl.var(x, False), tl.std(x, True)),
                        lambda x: (torch.var(x, False), torch.std(x, True)), [x])
    check_against_torch(lambda x: tl.std(x, [1], keepdim=True) * x,
                        lambda x: torch.std(x, [1], keepdim=True) * x, [x])


def test_scan_result_dtype_and_its_gradient():
    """``cumsum(i, dtype=float64)`` is float64 in the graph too, so ``x32 * it``'s gradient is
    cast back to x's float32; the integer input gets none."""
    x = _rng(3).uniform(-1, 1, (3, 4)).astype(np.float32)
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    out, pullback = jit.vjp(lambda x, i: x * tl.cumsum(i, 1, dtype=tl.float64), x, i)
    gx, gi = pullback(np.ones((3, 4)))
    assert out.dtype == np.float64 and gx.dtype == np.float32 and gi is None
    np.testing.assert_allclose(gx, np.cumsum(i, 1), rtol=0)
    graph = jit.trace(lambda i: tl.cumsum(i, 0) + tl.cumprod(i > 0, 0), [i]).graph
    assert all(str(n.output().type.dtype) == "int64" for n in graph.nodes
               if n.kind in ("aten::cumsum", "aten::cumprod"))


# -- control flow ------------------------------------------------------------------------------

def branchy(x, w, flag: bool):
    if flag:
        y = tl.tanh(x * w)
    else:
        y = tl.sigmoid(x) + w
    return tl.sum(y * x)


def looped(x, w, n: int):
    h = x
    for _ in range(n):
        h = tl.tanh(h * w + x)
    return h


@needs_torch
@pytest.mark.parametrize("flag", [True, False])
def test_branch(flag):
    f = jit.script(branchy)
    x, w = _rng(0).standard_normal((3, 4)), _rng(1).standard_normal(4)
    fwd, bwd = jit.vjp_graphs(f, x, w, flag)
    assert any(n.kind == "prim::If" for n in bwd.nodes), bwd

    def ref(x, w):
        y = torch.tanh(x * w) if flag else torch.sigmoid(x) + w
        return torch.sum(y * x)

    check_against_torch(lambda a, b: f(a, b, flag), ref, [x, w])
    out, pullback = jit.vjp(f, x, w, flag)
    gx, gw, gflag = pullback(np.float64(1.0))
    assert gflag is None
    _, (rx, rw) = _torch_vjp(ref, [x, w], [np.float64(1.0)])
    np.testing.assert_allclose(gx, rx, rtol=1e-10)
    np.testing.assert_allclose(gw, rw, rtol=1e-10)


@needs_torch
@pytest.mark.parametrize("n", [0, 1, 4])
def test_loop(n):
    f = jit.script(looped)
    x, w = _rng(0).standard_normal((3, 4)) * 0.5, _rng(1).standard_normal(4)
    fwd, bwd = jit.vjp_graphs(f, x, w, n)
    assert any(nd.kind == "prim::Loop" for nd in bwd.nodes), bwd
    out, pullback = jit.vjp(f, x, w, n)
    cot = _rng(2).standard_normal((3, 4))
    gx, gw, gn = pullback(cot)

    def ref(x, w):
        h = x
        for _ in range(n):
            h = torch.tanh(h * w + x)
        return h

    (ro,), (rx, rw) = _torch_vjp(ref, [x, w], [cot])
    np.testing.assert_allclose(out, ro, rtol=1e-12)
    np.testing.assert_allclose(gx, rx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, rw, rtol=1e-10, atol=1e-12)
    assert gn is None


def test_while_loop_finite_differences():
    @jit.script
    def f(x):
        i = 0
        while i < 3:
            x = tl.sin(x) * 1.5
            i += 1
        return x

    x = _rng(5).standard_normal(4)
    out, pullback = jit.vjp(f, x)
    cot = np.ones(4)
    (g,) = pullback(cot)
    np.testing.assert_allclose(g, _finite_difference(lambda a: f(a), [x], cot)[0], rtol=1e-6)


# -- modules -----------------------------------------------------------------------------------

@needs_torch
def test_script_module_parameter_gradients():
    class Net(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.linear = tl.nn.Linear(5, 3)

        def forward(self, x):
            return tl.tanh(self.linear(x))

    net = Net()
    x = _rng(0).standard_normal((4, 5)).astype(np.float32)
    for m in (jit.script(net), jit.trace(net, (x,))):
        out, pullback = jit.vjp(m, x)
        cot = _rng(1).standard_normal(out.shape).astype(np.float32)
        gx, params = pullback(cot)
        assert set(params) == {"linear.weight", "linear.bias"}
        W = torch.tensor(net.linear.weight, requires_grad=True)
        b = torch.tensor(net.linear.bias, requires_grad=True)
        xt = torch.tensor(x, requires_grad=True)
        torch.tanh(F.linear(xt, W, b)).backward(torch.tensor(cot))
        np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(params["linear.weight"], W.grad.numpy(), rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(params["linear.bias"], b.grad.numpy(), rtol=1e-5, atol=1e-6)


# -- the corpus's LSTM cell; fusion of both graphs ---------------------------------------------

def _lstm_reference(x, h, c, Wi, Wh, b):
    gates = x @ Wi + h @ Wh + b
    i, f, g, o = gates.chunk(4, 1)
    c2 = torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)
    return torch.sigmoid(o) * torch.tanh(c2), c2


@needs_torch
@pytest.mark.parametrize("which", ["scripted", "traced"])
def test_corpus_lstm_cell(which):
    fn = jit.ScriptFunction(parse_graph(graph_text("lstm_cell", which)))
    _, args, _ = next(input_sets("lstm_cell"))
    arrays = [np.asarray(a, np.float64) for a in args]
    check_against_torch(fn, _lstm_reference, arrays)
    arrays32 = [np.asarray(a, np.float32) for a in args]
    check_against_torch(fn, _lstm_reference, arrays32, rtol=1e-4, atol=1e-5)


def _groups(graph):
    return [n for n in graph.all_nodes() if n.kind == "prim::FusionGroup"]


def _pointwise_groups(graph):
    """Groups doing more than reductions."""
    from torchlike.ops import registry
    return [g for g in _groups(graph) if any(
        (op := registry.lookup(n.kind)) is not None and op.is_elementwise
        for n in g.attrs["Subgraph"].nodes)]


def _loose_elementwise(graph):
    from torchlike.ops import registry
    return [n.kind for n in graph.nodes if n.kind != "prim::FusionGroup"
            and (op := registry.lookup(n.kind)) is not None and op.is_elementwise]


def test_lstm_cell_forward_and_backward_are_one_kernel_each():
    fn = jit.ScriptFunction(parse_graph(graph_text("lstm_cell", "scripted")))
    _, args, _ = next(input_sets("lstm_cell"))
    from torchlike.autodiff import compile_vjp
    c = compile_vjp(fn, *args)
    fwd_args = list(args)
    res = c.forward(*fwd_args)
    outs, saved = res[:2], res[2:]
    fwd_fused = c.forward.graph_for(*fwd_args)
    bwd_fused = c.backward.graph_for(*[np.ones_like(o) for o in outs], *saved)
    print(fwd_fused)
    print(bwd_fused)
    assert len(_groups(fwd_fused)) == 1 and not _loose_elementwise(fwd_fused)
    # the backward's pointwise work is one kernel; the bias gradient (a column sum of the
    # concatenated gate cotangents) may be a reduction group of its own
    assert len(_pointwise_groups(bwd_fused)) == 1 and not _loose_elementwise(bwd_fused)
    # saved: the two matmul results and the inputs the pointwise part reads; no gate is saved
    saved_kinds = {v.node.kind if v.node is not None else "input" for v in
                   c.forward.graph.outputs[2:]}
    assert saved_kinds <= {"aten::matmul", "input"}, saved_kinds


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_forward_and_backward_are_one_kernel_each(approximate):
    from torchlike.autodiff import compile_vjp
    x = _rng(0).standard_normal((64, 33)).astype(np.float32)
    c = compile_vjp(lambda a: tl.gelu(a, approximate=approximate), x)
    out, *saved = c.forward(x)
    assert len(saved) == 1 and saved[0] is x or np.array_equal(saved[0], x)  # only x is saved
    fwd = c.forward.graph_for(x)
    bwd = c.backward.graph_for(np.ones_like(out), *saved)
    print(bwd)
    assert len(_groups(fwd)) == 1 and not _loose_elementwise(fwd)
    assert len(_groups(bwd)) == 1 and not _loose_elementwise(bwd)
    # the backward is PyTorch's gelu_backward op (one exp in the float32 kernel), fused
    assert "aten::gelu_backward" in str(bwd)
    try:
        g = c.backward(np.ones_like(out), *saved)
    finally:
        jit.set_strict(False)
    assert g.shape == x.shape


def test_tuple_outputs_with_a_bool_output():
    def f(x, y):
        return x * y, x > y, tl.exp(y)

    x, y = _rng(0).standard_normal(4), _rng(1).standard_normal(4)
    (p, mask, e), pullback = jit.vjp(f, x, y)
    assert mask.dtype == np.bool_
    gx, gy = pullback((np.ones(4), None, 2.0 * np.ones(4)))
    np.testing.assert_allclose(gx, y)
    np.testing.assert_allclose(gy, x + 2.0 * np.exp(y))


# (special_div_log_sqrt and where_compare differentiate too, but their inputs sit on poles and
# outside log's domain, where finite differences mean nothing)
CORPUS_CASES = ["softplus_threshold", "gelu_tanh",
                "layernorm_manual", "mycell", "script_if_else_chains", "loop_square_5",
                "multi_output_shared", "broadcast_outer", "promote_int32_float32"]


@pytest.mark.parametrize("case", CORPUS_CASES)
def test_corpus_graphs_against_finite_differences(case):
    """PyTorch-printed graphs (some leave out trailing default arguments) differentiate."""
    from tests.corpus_utils import graph_files
    for which in graph_files(case)[:2]:
        fn = jit.ScriptFunction(parse_graph(graph_text(case, which)))
        _, args, _ = next(input_sets(case))
        args = [np.asarray(a, np.float64) if isinstance(a, np.ndarray) and a.dtype.kind == "f"
                else a for a in args]
        out, pullback = jit.vjp(fn, *args)
        outs = out if isinstance(out, tuple) else (out,)
        cots = [_rng(9).standard_normal(np.shape(o)) for o in outs]
        grads = pullback(tuple(cots) if isinstance(out, tuple) else cots[0])
        for i, (a, g) in enumerate(zip(args, grads)):
            if not (isinstance(a, np.ndarray) and a.dtype.kind == "f"):
                assert g is None
                continue

            def f_i(v, i=i, fn=fn, args=args, cots=cots):
                res = fn(*[v if j == i else b for j, b in enumerate(args)])
                res = res if isinstance(res, tuple) else (res,)
                return sum(np.sum(np.asarray(r) * c) for r, c in zip(res, cots))

            ref = _finite_difference(lambda v: f_i(v), [a], np.float64(1.0))[0]
            np.testing.assert_allclose(g, ref, rtol=1e-5, atol=1e-6, err_msg=f"{which} {i}")


@pytest.mark.parametrize("program", ["softmax", "log_softmax", "layer_norm"])
def test_row_reduction_backward_groups(program):
    """The backward's row sums (softmax's sum(g * y), layer norm's recomputed mean and the two
    means of its input cotangent) join the elementwise work around them in one group; the
    weight's and bias's column sums (over dim 0) are a group of their own."""
    from torchlike.autodiff import compile_vjp
    rng = _rng(0)
    x = rng.standard_normal((16, 64)).astype(np.float32)
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    f = {"softmax": lambda x, w, b: tl.softmax(x, -1) * w,
         "log_softmax": lambda x, w, b: tl.log_softmax(x, -1) + b,
         "layer_norm": lambda x, w, b: tl.layer_norm(x, [64], w, b, 1e-5)}[program]
    c = compile_vjp(f, x, w, b)
    out, *saved = c.forward(x, w, b)
    bwd = c.backward.graph_for(np.ones_like(out), *saved)
    reducing = [g for g in _groups(bwd)
                if any(n.kind in ("aten::sum", "aten::mean") for n in g.attrs["Subgraph"].nodes)]
    # the rows' group, and the columns' where w or b has one: the columns' group recomputes
    # the normalized x from x and the per-row statistics (fuser/recompute.py) instead of
    # reading it from the rows' group, so no full-size value passes between the two
    assert 1 <= len(reducing) <= 2, bwd
    assert not _loose_elementwise(bwd), bwd
    full = [v for g in _groups(bwd) for v in g.outputs if v.type.shape == x.shape]
    assert [v.name for v in full] == [o.name for o in bwd.outputs if o.type.shape == x.shape], bwd
    jit.reset_stats()
    grads = c.backward(np.ones_like(out), *saved)
    assert jit.stats()["groups_split"] == 0, jit.stats()
    want = jit.run(c.backward.graph, np.ones_like(out), *saved)  # interpreted, unfused
    for g, ref in zip(grads, want, strict=True):
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4)


@needs_torch
def test_grad_of_a_script_module_loss():
    net = tl.nn.Linear(4, 2)
    x = _rng(0).standard_normal((3, 4)).astype(np.float64)
    net.weight = net.weight.astype(np.float64)
    net.bias = net.bias.astype(np.float64)

    class Loss(tl.nn.Module):
        def __init__(self):
            super().__init__()
            self.inner = net

        def forward(self, x):
            return tl.sum(tl.tanh(self.inner(x)) ** 2.0)

    gx, params = jit.grad(jit.script(Loss()))(x)
    W = torch.tensor(net.weight, requires_grad=True)
    b = torch.tensor(net.bias, requires_grad=True)
    xt = torch.tensor(x, requires_grad=True)
    torch.sum(torch.tanh(F.linear(xt, W, b)) ** 2.0).backward()
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(params["inner.weight"], W.grad.numpy(), rtol=1e-10)
    np.testing.assert_allclose(params["inner.bias"], b.grad.numpy(), rtol=1e-10)


def test_script_functions_compile_once_per_signature():
    from torchlike.autodiff import api
    f = jit.script(looped)
    x, w = _rng(0).standard_normal((3, 4)) * 0.5, _rng(1).standard_normal(4)
    jit.vjp(f, x, w, 2)
    first = dict(api._COMPILED[f])
    _, pullback = jit.vjp(f, x * 2.0, w, 3)   # new values, same signature: no recompile
    assert dict(api._COMPILED[f]) == first
    gx, gw, _ = pullback(np.ones((3, 4)))
    h, hs = x * 2.0, []
    for _ in range(3):  # the reference, by hand: h <- tanh(h * w + x0)
        hs.append(h)
        h = np.tanh(h * w + x * 2.0)
    gh, rx, rw = np.ones((3, 4)), np.zeros((3, 4)), np.zeros(4)
    for h_prev in reversed(hs):
        t = np.tanh(h_prev * w + x * 2.0)
        d = gh * (1 - t * t)
        rx += d
        rw += (d * h_prev).sum(0)
        gh = d * w
    np.testing.assert_allclose(gx, rx + gh, rtol=1e-12)
    np.testing.assert_allclose(gw, rw, rtol=1e-12)
    jit.vjp(f, x.astype(np.float32), w.astype(np.float32), 3)  # a new signature compiles
    assert len(api._COMPILED[f]) == len(first) + 1


def test_decomposed_layer_norm_backward_is_one_row_kernel():
    """The corpus's scripted layer norm (mean, var, rsqrt, scale, shift): the cotangents of the
    two kept-dim means are row sums, and the broadcast back is left to the kernel, so the
    input's gradient is one row group; the column sums of the gamma and beta gradients are
    one kernel of their own (one group of both layouts would split, its reductions
    interpreted), recomputing x - mean and rsqrt(var + eps) rather than reading them from the
    row group, and nothing splits at run time."""
    from torchlike.autodiff import compile_vjp
    fn = jit.ScriptFunction(parse_graph(graph_text("layernorm_manual", "scripted")))
    rng = _rng(0)
    x = rng.standard_normal((32, 64)).astype(np.float32)
    w, b = rng.standard_normal(64).astype(np.float32), rng.standard_normal(64).astype(np.float32)
    c = compile_vjp(fn, x, w, b)
    out, *saved = c.forward(x, w, b)
    bwd = c.backward.graph_for(np.ones_like(out), *saved)
    assert len(_groups(bwd)) == 2 and not _loose_elementwise(bwd), bwd
    rows, columns = _groups(bwd)
    assert len(rows.outputs) == 1 and len(columns.outputs) == 2, bwd  # dx; dgamma and dbeta
    assert [n.kind for n in bwd.nodes if n.kind not in ("prim::Constant",
                                                         "prim::FusionGroup")] == [], bwd
    jit.reset_stats()
    grads = c.backward(np.ones_like(out), *saved)
    assert jit.stats()["groups_split"] == 0 and jit.stats()["fallbacks"] == {}, jit.stats()
    want = jit.run(c.backward.graph, np.ones_like(out), *saved)  # interpreted, unfused
    for g, ref in zip(grads, want, strict=True):
        np.testing.assert_allclose(g, ref, rtol=1e-4, atol=1e-4)


@needs_torch
def test_sequential_module_parameter_gradients():
    from torchlike import nn
    m = nn.Sequential(nn.Linear(8, 16), nn.GELU(), nn.LayerNorm(16), nn.Linear(16, 4))
    x = _rng(0).standard_normal((5, 8))
    for p in m.parameters():  # float64 parameters: compare to 1e-10
        p[...] = _rng(1).standard_normal(p.shape) * 0.5
    for name, p in list(m.named_parameters()):
        mod, attr = m, name.split(".")
        for a in attr[:-1]:
            mod = getattr(mod, a)
        setattr(mod, attr[-1], p.astype(np.float64))
    out, pullback = jit.vjp(jit.script(m), x)
    cot = _rng(2).standard_normal(out.shape)
    gx, params = pullback(cot)
    ref = torch.nn.Sequential(torch.nn.Linear(8, 16), torch.nn.GELU(), torch.nn.LayerNorm(16),
                              torch.nn.Linear(16, 4)).double()
    ref.load_state_dict({k: torch.tensor(v) for k, v in m.named_parameters()})
    xt = torch.tensor(x, requires_grad=True)
    ref(xt).backward(torch.tensor(cot))
    np.testing.assert_allclose(gx, xt.grad.numpy(), rtol=1e-9, atol=1e-12)
    for k, p in ref.named_parameters():
        np.testing.assert_allclose(params[k], p.grad.numpy(), rtol=1e-9, atol=1e-12, err_msg=k)


def nested(x, w, n: int, flag: bool):
    y = x
    if flag:
        for _ in range(n):
            y = tl.sin(y * w) + x
    for i in range(n):
        for _ in range(2):
            y = tl.tanh(y + w * float(i))
    return y


@needs_torch
@pytest.mark.parametrize("flag", [True, False])
def test_loops_in_branches_and_loops(flag):
    f = jit.script(nested)
    x, w = _rng(0).standard_normal((3, 4)) * 0.5, _rng(1).standard_normal(4)

    def ref(x, w):
        y = x
        if flag:
            for _ in range(3):
                y = torch.sin(y * w) + x
        for i in range(3):
            for _ in range(2):
                y = torch.tanh(y + w * float(i))
        return y

    fwd, bwd = jit.vjp_graphs(f, x, w, 3, flag)  # n and flag are inputs: nothing folds
    kinds = [n.kind for n in bwd.all_nodes()]
    assert kinds.count("prim::If") == 1 and kinds.count("prim::Loop") >= 3, bwd
    out, pullback = jit.vjp(f, x, w, 3, flag)
    cot = _rng(2).standard_normal((3, 4))
    gx, gw, gn, gflag = pullback(cot)
    (ro,), (rx, rw) = _torch_vjp(ref, [x, w], [cot])
    np.testing.assert_allclose(out, ro, rtol=1e-12)
    np.testing.assert_allclose(gx, rx, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(gw, rw, rtol=1e-10, atol=1e-12)


def test_readme_derivatives_example_runs_as_written(tmp_path):
    """README's "Derivatives" block, run as pasted in a fresh process."""
    out = run_readme_block("Derivatives", tmp_path,
                           "\nassert gw.shape == (4,) and gx.shape == (3, 4)\n")
    assert "aten::sum" in out
