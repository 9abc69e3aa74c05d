"""Every op in the registry either has a derivative rule (``OpDef.vjp``) or is listed here: as
an op whose results carry no gradient in PyTorch either (comparisons, integer and bool
results, indices, factories, Python scalars and lists, executor bookkeeping), or as a known
gap -- an op that could be differentiated but has no rule yet, which ``jit.vjp`` refuses with
an ``AutodiffError`` naming it.  A new op must take a side: this test fails until it does.
In-place twins (``aten::add_`` & co.) are made functional before differentiation and share
their op's rule."""
from __future__ import annotations

import numpy as np
import pytest

import torchlike as tl
from torchlike import jit
from torchlike.ops import registry
from torchlike.ops.inplace import INPLACE_OF

_ATEN_NO_GRAD = (
    # comparisons, logic, bits, predicates: bool or integer results
    "eq ne lt le gt ge __and__ __or__ __xor__ __invert__ __not__ __lshift__ __rshift__ "
    "bitwise_and bitwise_or bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift "
    "logical_and logical_or logical_xor logical_not isnan isinf isfinite isposinf isneginf "
    "signbit isclose isin all any gcd lcm floordiv __round_to_zero_floordiv "
    # indices and counts
    "argmax argmin argsort argwhere nonzero bucketize searchsorted count_nonzero one_hot "
    "tril_indices triu_indices "
    # factories: no tensor operand to differentiate
    "arange empty eye full ones zeros rand randn linspace logspace tensor "
    # Python scalars, lists, strings and queries
    "Bool Float Int ScalarImplicit item __contains__ __derive_index __is__ __isnot__ "
    "__range_length append clear extend insert pop _set_item len dim numel size str format warn "
    "device is_floating_point is_grad_enabled is_autocast_enabled broadcast_shapes").split()
NO_GRADIENT = {f"aten::{k}" for k in _ATEN_NO_GRAD} | {
    f"prim::{k}" for k in (
        "CallFunction DictConstruct GetAttr Guard NumToTensor Print RaiseException "
        "RequiresGradCheck TypeCheck Uninitialized device dtype is_nested layout max min profile "
        "profile_ivalue requires_grad type").split()}

KNOWN_GAPS = {
    # differentiable in PyTorch, no rule here yet
    "aten::linalg_svd": "singular vectors: PyTorch's svd_backward",
    "aten::linalg_svdvals": "through the SVD",
    "aten::linalg_qr": "PyTorch's linalg_qr_backward",
    "aten::linalg_pinv": "through the SVD",
    "aten::pinverse": "through the SVD",
    "aten::renorm": "not written yet",
    "aten::cov": "not written yet",
    "aten::corrcoef": "not written yet",
    "aten::quantile": "not written yet (the interpolated elements of the sort)",
    "aten::nanquantile": "not written yet",
    "aten::embedding_bag": "needs the forward's bag bookkeeping (offsets, max indices)",
    "aten::_native_multi_head_attention": "the fused inference kernel of nn.MultiheadAttention",
    "aten::_transformer_encoder_layer_fwd": "the fused inference kernel of an encoder layer",
    # writes that stay in place (into an input or an alias): refused
    "aten::copy_": "a write into an existing tensor",
    "aten::fill_": "a write into an existing tensor",
    "aten::zero_": "a write into an existing tensor",
    # ops only backward graphs or the fuser emit (no second derivatives)
    **{f"torchlike::{k}": "a backward-only op" for k in (
        "adaptive_avg_pool_backward", "avg_pool_backward", "conv_weight_backward",
        "grid_sampler_backward", "linalg_det_backward", "max_pool_indices",
        "upsample_backward")},
    "autodiff::append": "the engine's own loop recording",
    "prim::BroadcastingChunk": "made by the fuser, after differentiation",
}


def _without_rule():
    return {k for k, op in registry.REGISTRY.items() if op.vjp is None and k not in INPLACE_OF}


def test_every_op_has_a_rule_or_a_listed_reason():
    missing = _without_rule() - NO_GRADIENT - set(KNOWN_GAPS)
    assert not missing, f"ops with neither a derivative rule nor a listed reason: {sorted(missing)}"


def test_the_lists_name_only_ops_without_rules():
    stale = (NO_GRADIENT | set(KNOWN_GAPS)) - _without_rule()
    assert not stale, f"listed ops that have a rule now, or no entry: {sorted(stale)}"


@pytest.mark.parametrize("fn", [lambda x: tl.quantile(x, 0.5),
                                lambda x: tl.renorm(x, 2, 0, 1.0)],
                         ids=["quantile", "renorm"])
def test_a_gap_is_a_clear_error(fn):
    with pytest.raises(jit.AutodiffError, match="no derivative rule for aten::"):
        jit.vjp(fn, np.random.default_rng(0).uniform(0, 1, (3, 4)))
