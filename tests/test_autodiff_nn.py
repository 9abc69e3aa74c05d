"""Derivative rules of reductions (prod, norms, nan-reductions, var_mean / std_mean, aminmax),
normalizations (rms / group / instance / batch / native layer and batch norms) and losses and
distances, against ``torch.autograd`` (float64 to 1e-10, float32 within tolerances), PyTorch's
conventions at special points (zeros in a product, a zero norm, ties, ignore_index, zero
distances), integer targets without gradient, and the arguments PyTorch refuses to
differentiate (``UnsupportedOpError``)."""
from __future__ import annotations

import numpy as np
import pytest

import torchlike as tl
from tests.autodiff_check import U, _rng, check_against_torch, check_case, make, needs_torch
from torchlike import jit
from torchlike.errors import UnsupportedOpError
from torchlike.ir import parse_graph

try:
    import torch
except ImportError:  # every test here compares with torch
    torch = None

# the forward of nanmean (numpy's) warns on an all-NaN slice; its result is NaN, as torch's
pytestmark = [pytest.mark.filterwarnings("ignore:Mean of empty slice:RuntimeWarning"),
              pytest.mark.usefixtures("unfused")]  # the rules are under test


def Fixed(values):
    """An input spec of fixed values (zeros, ties, NaN, equal operands)."""
    return ("fixed", np.asarray(values, dtype=np.float64))


def op(m, name):
    """The op ``name`` of torchlike, or ``torch.ops.aten``'s (the same schema)."""
    return getattr(tl, name) if m is tl else getattr(torch.ops.aten, name)


def c(m, a):
    """A constant array inside the function: numpy for torchlike, a tensor for torch."""
    return a if m is tl else torch.from_numpy(np.asarray(a))


def script(text):
    """A graph-text program (for ops the tracer cannot spell: aten::norm's overloads,
    _native_batch_norm_legit_no_training)."""
    return jit.ScriptFunction(parse_graph(text))


NORM_GRAPH = """graph(%x : Tensor):
  %p : {ptype} = prim::Constant[value={p}]()
  %d : int[] = prim::Constant[value={dims}]()
  %k : bool = prim::Constant[value={keep}]()
  %y : Tensor = aten::norm(%x, %p, %d, %k)
  return (%y)"""


NORM_P_GRAPH = """graph(%x : Tensor):
  %p : int = prim::Constant[value=2]()
  %y : Tensor = aten::norm(%x, %p)
  return (%y)"""


def _norm_case(name, p, dims, keep, spec):
    ptype = "float" if isinstance(p, float) else "int"
    text = NORM_GRAPH.format(ptype=ptype, p=repr(p), dims=repr(dims), keep=int(keep))
    fn = script(text)
    return (name, lambda m, x: fn(x), lambda x: torch.norm(x, p, dims, keep), [spec])


S = (3, 5)
A = U(-2, 2, *S)
POS = U(0.5, 1.5, *S)
PROD_ZEROS = Fixed([[0.7, 0.0, 1.2, -0.9, 1.1], [1.3, 0.0, 0.0, 0.8, -1.4],
                    [0.9, -1.1, 1.2, 0.6, 1.5]])
ZERO_ROW = Fixed([[0.0] * 5, [0.5, -1.0, 2.0, 0.3, -0.2], [1.0, 1.0, -1.0, 0.0, 0.5]])
TIES = Fixed([[1.0, -2.0, 2.0, 0.5, -2.0], [0.0, 1.0, 1.0, -1.0, 0.5],
              [3.0, -3.0, 1.0, 2.0, 3.0]])
NANS = Fixed([[np.nan, 1.0, -0.5, 2.0, np.nan], [np.nan, 0.2, 0.1, -1.0, 0.4],
              [np.nan, np.nan, 1.5, 0.5, -0.5]])
CONST_ROW = Fixed([[0.5] * 5, [0.1, -1.0, 2.0, 0.3, -0.2], [1.0, 1.5, -1.0, 0.0, 0.5]])

CASES = [
    ("prod_dim", lambda m, x: m.prod(x, 1), None, [POS]),
    ("prod_keepdim_neg", lambda m, x: m.prod(x, -2, keepdim=True), None, [POS]),
    ("prod_all", lambda m, x: m.prod(x), None, [POS]),
    ("prod_zeros_dim", lambda m, x: m.prod(x, 1), None, [PROD_ZEROS]),
    ("prod_zeros_dim0", lambda m, x: m.prod(x, 0), None, [PROD_ZEROS]),
    ("prod_zeros_all", lambda m, x: m.prod(x * 2.0), None, [PROD_ZEROS]),
    ("prod_one_zero_all", lambda m, x: m.prod(x[0]), None, [PROD_ZEROS]),
    ("norm_p_only", lambda m, x: script(NORM_P_GRAPH)(x), lambda x: torch.norm(x, 2), [A]),
    ("norm_fro_dim", lambda m, x: script(NORM_GRAPH.format(ptype="str", p='"fro"', dims=[1],
                                                           keep=0))(x),
     lambda x: torch.norm(x, "fro", [1]), [A]),
    _norm_case("norm_p2_dim", 2, [1], False, A),
    _norm_case("norm_p1_keep", 1, [0], True, A),
    _norm_case("norm_p3", 3, [-1], False, A),
    _norm_case("norm_p1_5", 1.5, [1], False, A),
    _norm_case("norm_p0_5", 0.5, [1], False, A),
    _norm_case("norm_inf_ties", float("inf"), [1], False, TIES),
    _norm_case("norm_zero_row", 2, [1], False, ZERO_ROW),
    _norm_case("norm_p3_zero_row", 3, [1], True, ZERO_ROW),
    _norm_case("norm_p0_5_zeros", 0.5, [1], False, ZERO_ROW),
    ("vector_norm_all", lambda m, x: (m.linalg_vector_norm if m is tl else
                                      torch.linalg.vector_norm)(x), None, [A]),
    ("vector_norm_inf", lambda m, x: (m.linalg_vector_norm if m is tl else
                                      torch.linalg.vector_norm)(x, float("inf"), [1], True),
     None, [TIES]),
    ("vector_norm_neg_inf", lambda m, x: (m.linalg_vector_norm if m is tl else
                                          torch.linalg.vector_norm)(x, float("-inf"), [0]),
     None, [TIES]),
    ("vector_norm_p0", lambda m, x: (m.linalg_vector_norm if m is tl else
                                     torch.linalg.vector_norm)(x, 0, [1]) + x.sum(), None,
     [A]),
    ("vector_norm_zero_row", lambda m, x: (m.linalg_vector_norm if m is tl else
                                           torch.linalg.vector_norm)(x, 2, [-1]), None,
     [ZERO_ROW]),
    ("linalg_norm_default", lambda m, x: (m.linalg_norm if m is tl else torch.linalg.norm)(x),
     None, [A]),
    ("linalg_norm_vector_dim", lambda m, x: (m.linalg_norm if m is tl else torch.linalg.norm)(
        x, 3, [1]), None, [A]),
    ("linalg_norm_fro", lambda m, x: (m.linalg_norm if m is tl else torch.linalg.norm)(
        x, "fro", [1, 2]), None, [U(-2, 2, 2, 3, 4)]),
    ("linalg_norm_ord1", lambda m, x: (m.linalg_norm if m is tl else torch.linalg.norm)(
        x, 1, [-2, -1], True), None, [U(-2, 2, 2, 3, 4)]),
    ("linalg_norm_inf_ties", lambda m, x: (m.linalg_norm if m is tl else torch.linalg.norm)(
        x, float("inf"), [0, 1]), None, [TIES]),
    ("linalg_norm_ord_neg1", lambda m, x: (m.linalg_norm if m is tl else torch.linalg.norm)(
        x, -1, [0, 1]), None, [A]),
    ("matrix_norm_fro", lambda m, x: (m.linalg_matrix_norm if m is tl else
                                      torch.linalg.matrix_norm)(x), None, [U(-2, 2, 2, 3, 4)]),
    ("nansum_dim", lambda m, x: m.nansum(x, [1]), None, [NANS]),
    ("nansum_all", lambda m, x: m.nansum(x), None, [NANS]),
    ("nanmean_keepdim", lambda m, x: m.nanmean(x, [-1], keepdim=True), None, [NANS]),
    ("nanmean_all_nan_column", lambda m, x: m.nanmean(x, [0]), None, [NANS]),  # NaN, as torch
    ("var_mean", lambda m, x: m.var_mean(x, [1]), None, [A]),
    ("var_mean_biased_keep", lambda m, x: m.var_mean(x, [0], correction=0, keepdim=True), None,
     [A]),
    ("var_mean_all", lambda m, x: m.var_mean(x), None, [A]),
    ("var_mean_mean_only", lambda m, x: m.var_mean(x, [1])[1] * 2.0, None, [A]),
    ("std_mean", lambda m, x: m.std_mean(x, [-1]), None, [A]),
    ("std_mean_const_row", lambda m, x: m.std_mean(x, [1]), None, [CONST_ROW]),
    ("aminmax_dim", lambda m, x: m.aminmax(x, dim=1), None, [A]),
    ("aminmax_ties_keep", lambda m, x: m.aminmax(x, dim=0, keepdim=True), None, [TIES]),
    ("aminmax_all_ties", lambda m, x: m.aminmax(x), None, [TIES]),
]

# -- normalizations ----------------------------------------------------------------------------

X4 = U(-2, 2, 2, 4, 3, 3)
CW, CB = U(0.5, 1.5, 4), U(-1, 1, 4)
RM, RV = np.array([0.1, -0.2, 0.3, 0.0]), np.array([1.2, 0.8, 1.5, 0.6])


def _np_dtype(x):
    return x.detach().numpy().dtype if torch is not None and isinstance(x, torch.Tensor) else \
        np.dtype(x.dtype)


def _rs(m, x):
    """Fresh running statistics in x's dtype (the forward updates them in place)."""
    dt = _np_dtype(x)
    return c(m, RM.astype(dt).copy()), c(m, RV.astype(dt).copy())


CASES += [
    ("rms_norm_weight", lambda m, x, w: m.rms_norm(x, [5], w, 1e-5), None,
     [U(-2, 2, 2, 3, 5), U(0.5, 1.5, 5)]),
    ("rms_norm_no_weight_eps_none", lambda m, x: m.rms_norm(x, [3, 5]), None,
     [U(-2, 2, 2, 3, 5)]),
    ("group_norm_g2_affine", lambda m, x, w, b: m.group_norm(x, 2, w, b, 1e-5), None,
     [X4, CW, CB]),
    ("group_norm_g1", lambda m, x, w: m.group_norm(x, 1, w, None, 1e-5), None, [X4, CW]),
    ("group_norm_gc_no_affine", lambda m, x: m.group_norm(x, 4), None, [X4]),
    ("group_norm_3d_bias_only", lambda m, x: m.group_norm(  # (torch fails a bias-only grad)
        x, 2, None, c(m, np.linspace(-1, 1, 4).astype(_np_dtype(x))), 1e-3), None,
     [U(-2, 2, 3, 4, 5)]),
    ("instance_norm", lambda m, x, w, b: m.instance_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False), None, [X4, CW, CB]),
    ("instance_norm_running", lambda m, x: m.instance_norm(x, None, None, *_rs(m, x), True,
                                                           0.1, 1e-5, False), None, [X4]),
    ("instance_norm_eval", lambda m, x, w: m.instance_norm(x, w, None, *_rs(m, x), False, 0.1,
                                                           1e-5, False), None, [X4, CW]),
    ("batch_norm_eval", lambda m, x, w, b: m.batch_norm(x, w, b, *_rs(m, x), False, 0.1, 1e-5,
                                                        False), None, [X4, CW, CB]),
    ("batch_norm_eval_2d", lambda m, x: m.batch_norm(x, None, None, *_rs(m, x), False, 0.1,
                                                     1e-5, False), None, [U(-2, 2, 5, 4)]),
    ("batch_norm_train", lambda m, x, w, b: m.batch_norm(x, w, b, None, None, True, 0.1, 1e-5,
                                                         False), None, [X4, CW, CB]),
    ("batch_norm_train_running_2d", lambda m, x, w: m.batch_norm(x, w, None, *_rs(m, x), True,
                                                                 0.1, 1e-5, False), None,
     [U(-2, 2, 6, 4), CW]),
    ("native_layer_norm_all_outputs", lambda m, x, w, b: m.native_layer_norm(x, [3, 5], w, b,
                                                                             1e-5), None,
     [U(-2, 2, 2, 3, 5), U(0.5, 1.5, 3, 5), U(-1, 1, 3, 5)]),
    ("native_layer_norm_y_only", lambda m, x: m.native_layer_norm(x, [5], None, None, 1e-5)[0]
     * 2.0, None, [U(-2, 2, 4, 5)]),
    ("native_batch_norm_train", lambda m, x, w, b: m.native_batch_norm(
        x, w, b, None, None, True, 0.1, 1e-5), None, [X4, CW, CB]),
    ("native_batch_norm_eval", lambda m, x, w: m.native_batch_norm(
        x, w, None, *_rs(m, x), False, 0.1, 1e-5)[0], None, [X4, CW]),
    ("native_batch_norm_eval_all_outputs", lambda m, x, b: m.native_batch_norm(
        x, None, b, *_rs(m, x), False, 0.1, 1e-5), None, [X4, CB]),
]

LEGIT = parse_graph("""graph(%x : Tensor, %w : Tensor, %b : Tensor):
  %m : Tensor = prim::Constant[value=0]()
  %v : Tensor = prim::Constant[value=1]()
  %mom : float = prim::Constant[value=0.1]()
  %eps : float = prim::Constant[value=1e-05]()
  %y : Tensor, %sm : Tensor, %si : Tensor = """
                    """aten::_native_batch_norm_legit_no_training(%x, %w, %b, %m, %v, %mom, %eps)
  return (%y, %sm, %si)""")


@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_native_batch_norm_legit_no_training(dtype):
    """Eval mode; its (empty) statistics outputs take cotangents too."""
    rng = _rng(5)
    x, w, b = (make(s, dtype, rng) for s in (X4, CW, CB))
    rm, rv = RM.astype(dtype), RV.astype(dtype)
    g = LEGIT.copy()
    for node in g.nodes:  # the running statistics: tensor constants
        if node.kind == "prim::Constant" and node.output().name in ("m", "v"):
            node.attrs["value"] = rm if node.output().name == "m" else rv

    def ref(x, w, b):
        return torch.ops.aten._native_batch_norm_legit_no_training(
            x, w, b, torch.from_numpy(rm), torch.from_numpy(rv), 0.1, 1e-5)
    tol = (1e-10, 1e-12) if dtype == np.float64 else (2e-4, 2e-5)
    check_against_torch(jit.ScriptFunction(g), ref, [x, w, b], *tol)


# -- losses ------------------------------------------------------------------------------------

T3 = np.array([0, 2, 1, 4])                      # class indices of 4 rows of 5 classes
T_IGN = np.array([0, -100, 3, -100])
T_IGN1 = np.array([1, 2, 1, 0])                  # ignore_index=1
T_ND = np.array([[[0, 2], [1, -100]], [[2, 2], [0, 1]]])
W5 = np.array([0.5, 1.0, 2.0, 0.7, 1.3])
PM1 = np.array([1.0, -1.0, -1.0, 1.0])
LOGITS = U(-2, 2, 4, 5)
PAIR = [U(-2, 2, 4, 5), U(-2, 2, 4, 5)]
PROBS = U(0.05, 0.95, 4, 5)


def _wc(m, x, w=W5):
    return c(m, np.asarray(w, dtype=_np_dtype(x)))


def _loss_cases(red):
    return [
        (f"cross_entropy_{red}", lambda m, x: op(m, "cross_entropy_loss")(
            x, c(m, T3), None, red), None, [LOGITS]),
        (f"cross_entropy_weight_ignore_{red}", lambda m, x: op(m, "cross_entropy_loss")(
            x, c(m, T_IGN), _wc(m, x), red), None, [LOGITS]),
        (f"cross_entropy_smoothing_ignore_{red}", lambda m, x: op(m, "cross_entropy_loss")(
            x, c(m, T_IGN1), None, red, 1, 0.2), None, [LOGITS]),
        (f"cross_entropy_nd_{red}", lambda m, x: op(m, "cross_entropy_loss")(
            x, c(m, T_ND), None, red), None, [U(-2, 2, 2, 3, 2, 2)]),
        (f"cross_entropy_probs_{red}", lambda m, x, t: op(m, "cross_entropy_loss")(
            x, t, _wc(m, x), red, -100, 0.1), None, [LOGITS, U(0, 1, 4, 5)]),
        (f"nll_loss_weight_ignore_{red}", lambda m, x: op(m, "nll_loss")(
            x, c(m, T_IGN1), _wc(m, x), red, 1), None, [LOGITS]),
        (f"nll_loss_nd_{red}", lambda m, x: op(m, "nll_loss_nd")(
            x, c(m, T_ND), _wc(m, x, W5[:3]), red), None, [U(-2, 2, 2, 3, 2, 2)]),
        (f"bce_{red}", lambda m, x, t: op(m, "binary_cross_entropy")(x, t, None, red), None,
         [PROBS, U(0, 1, 4, 5)]),
        (f"bce_weight_{red}", lambda m, x, t: op(m, "binary_cross_entropy")(
            x, t, _wc(m, x), red), None, [PROBS, U(0, 1, 4, 5)]),
        (f"bce_logits_{red}", lambda m, x, t: op(m, "binary_cross_entropy_with_logits")(
            x, t, None, None, red), None, [LOGITS, U(0, 1, 4, 5)]),
        (f"bce_logits_weights_{red}", lambda m, x, t: op(m, "binary_cross_entropy_with_logits")(
            x, t, _wc(m, x), _wc(m, x, W5[::-1].copy()), red), None, [LOGITS, U(0, 1, 4, 5)]),
        (f"smooth_l1_{red}", lambda m, x, t: op(m, "smooth_l1_loss")(x, t, red, 0.5), None,
         PAIR),
        (f"huber_{red}", lambda m, x, t: op(m, "huber_loss")(x, t, red, 0.7), None, PAIR),
        (f"kl_div_{red}", lambda m, x, t: op(m, "kl_div")(x, t, red), None,
         [LOGITS, U(0.1, 1, 4, 5)]),
        (f"kl_div_log_target_{red}", lambda m, x, t: op(m, "kl_div")(
            x, t, red, log_target=True), None, PAIR),
        (f"soft_margin_{red}", lambda m, x: op(m, "soft_margin_loss")(
            x, c(m, np.sign(W5 - 1.0).astype(_np_dtype(x))), red), None, [LOGITS]),
        (f"poisson_nll_{red}", lambda m, x, t: op(m, "poisson_nll_loss")(
            x, t, True, False, 1e-8, red), None, [LOGITS, U(0, 3, 4, 5)]),
        (f"poisson_nll_full_{red}", lambda m, x, t: op(m, "poisson_nll_loss")(
            x, t, False, True, 1e-8, red), None, [U(0.2, 3, 4, 5), U(0.2, 3, 4, 5)]),
        (f"margin_ranking_{red}", lambda m, a, b, t: op(m, "margin_ranking_loss")(
            a, b, t, 0.3, red), None, [U(-1, 1, 4), U(-1, 1, 4), Fixed(PM1)]),
        (f"hinge_embedding_{red}", lambda m, x, t: op(m, "hinge_embedding_loss")(
            x, t, 1.0, red), None, [U(-2, 2, 4), Fixed(PM1)]),
        (f"cosine_embedding_{red}", lambda m, a, b: op(m, "cosine_embedding_loss")(
            a, b, c(m, PM1.astype(_np_dtype(a))), 0.1, red), None, PAIR),
        (f"triplet_{red}", lambda m, a, p, n: op(m, "triplet_margin_loss")(
            a, p, n, 1.0, 2.0, 1e-6, False, red), None, PAIR + [U(-2, 2, 4, 5)]),
        (f"multi_margin_{red}", lambda m, x: op(m, "multi_margin_loss")(
            x, c(m, T3), 1, 1.0, None, red), None, [U(-1, 1, 4, 5)]),
        (f"multi_margin_p2_weight_{red}", lambda m, x: op(m, "multi_margin_loss")(
            x, c(m, T3), 2, 0.5, _wc(m, x), red), None, [U(-1, 1, 4, 5)]),
        (f"multilabel_margin_{red}", lambda m, x: op(m, "multilabel_margin_loss")(
            x, c(m, np.array([[0, 3, -1, 1, 2], [4, -1, 0, 0, 0], [1, 2, 3, 4, 0],
                              [-1, 1, 2, 3, 4]])), red), None, [U(-1, 1, 4, 5)]),
    ]


for _red in (0, 1, 2):
    CASES += _loss_cases(_red)

EQ_PAIR = [Fixed([[0.5, -1.0, 0.25], [2.0, 0.0, -0.5]]),
           Fixed([[0.5, -0.5, 0.25], [1.0, 0.0, -1.5]])]   # equal elements: zero differences
CASES += [
    ("smooth_l1_beta0_ties", lambda m, x, t: op(m, "smooth_l1_loss")(x, t, 2, 0.0), None,
     EQ_PAIR),
    ("smooth_l1_ties", lambda m, x, t: op(m, "smooth_l1_loss")(x, t, 0, 0.5), None, EQ_PAIR),
    ("huber_ties", lambda m, x, t: op(m, "huber_loss")(x, t, 0, 0.5), None, EQ_PAIR),
    ("margin_ranking_tie", lambda m, a, b, t: op(m, "margin_ranking_loss")(a, b, t, 0.0, 0),
     None, EQ_PAIR[:1] + EQ_PAIR[1:] + [Fixed([[1.0, -1.0, 1.0], [-1.0, 1.0, -1.0]])]),
    ("triplet_swap_p1", lambda m, a, p, n: op(m, "triplet_margin_loss")(
        a, p, n, 2.0, 1.0, 1e-6, True, 1), None, PAIR + [U(-2, 2, 4, 5)]),
    ("triplet_swap_tie", lambda m, a, p, n: op(m, "triplet_margin_loss")(
        a, p, n, 5.0, 2.0, 1e-6, True, 0), None,
     [Fixed([[0.0, 0.0], [1.0, 1.0]]), Fixed([[2.0, 0.0], [1.0, 3.0]]),
      Fixed([[1.0, 0.0], [1.0, 2.0]])]),
    ("multi_margin_1d", lambda m, x: op(m, "multi_margin_loss")(x, c(m, np.array([2])), 1, 1.0,
                                                                None, 0), None,
     [U(-1, 1, 5)]),
    ("cosine_similarity", lambda m, a, b: m.cosine_similarity(a, b, 1), None, PAIR),
    ("cosine_similarity_broadcast", lambda m, a, b: m.cosine_similarity(a, b, -1), None,
     [U(-2, 2, 4, 5), U(-2, 2, 1, 5)]),
    ("cosine_similarity_zero_row", lambda m, a, b: m.cosine_similarity(a, b, 1), None,
     [ZERO_ROW, A]),
    ("pairwise_distance", lambda m, a, b: m.pairwise_distance(a, b), None, PAIR),
    ("pairwise_distance_p1_keep", lambda m, a, b: m.pairwise_distance(a, b, 1.0, 1e-6, True),
     None, PAIR),
    ("pairwise_distance_inf", lambda m, a, b: m.pairwise_distance(a, b, float("inf")), None,
     PAIR),
    ("pairwise_distance_p3_bcast", lambda m, a, b: m.pairwise_distance(a, b, 3.0), None,
     [U(-2, 2, 4, 5), U(-2, 2, 5)]),
    ("dist", lambda m, a, b: m.dist(a, b), None, [U(-2, 2, 4, 5), U(-2, 2, 5)]),
    ("dist_p1", lambda m, a, b: m.dist(a, b, 1.0), None, PAIR),
    ("dist_p3", lambda m, a, b: m.dist(a, b, 3.0), None, PAIR),
    ("cdist_p2", lambda m, a, b: m.cdist(a, b), None, [U(-1, 1, 4, 3), U(-1, 1, 5, 3)]),
    ("cdist_p2_batched", lambda m, a, b: m.cdist(a, b), None,
     [U(-1, 1, 2, 4, 3), U(-1, 1, 1, 5, 3)]),
    ("cdist_p2_matmul_rows", lambda m, a, b: m.cdist(a, b), None,
     [U(-1, 1, 30, 3), U(-1, 1, 5, 3)]),
    ("cdist_p1_batched", lambda m, a, b: m.cdist(a, b, 1.0), None,
     [U(-1, 1, 2, 4, 3), U(-1, 1, 5, 3)]),
    ("cdist_inf", lambda m, a, b: m.cdist(a, b, float("inf")), None,
     [U(-1, 1, 4, 3), U(-1, 1, 5, 3)]),
    ("cdist_p0_5", lambda m, a, b: m.cdist(a, b, 0.5), None, [U(-1, 1, 4, 3), U(-1, 1, 5, 3)]),
    ("cdist_p3", lambda m, a, b: m.cdist(a, b, 3.0), None, [U(-1, 1, 4, 3), U(-1, 1, 5, 3)]),
    ("cdist_p2_zero_distance", lambda m, a, b: m.cdist(a, b), None, EQ_PAIR[:1] * 2),
    ("cdist_p1_zero_distance", lambda m, a, b: m.cdist(a, b, 1.0), None, EQ_PAIR),
    ("cdist_p0", lambda m, a, b: m.cdist(a, b, 0.0) + a.sum(), None, EQ_PAIR),
]

@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_float64(case):
    rng = _rng(7)
    check_case(case, [make(s, np.float64, rng) for s in case[3]], "float64")


@needs_torch
@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_matches_torch_float32(case):
    rng = _rng(11)
    check_case(case, [make(s, np.float32, rng) for s in case[3]], "float32")


# -- integer inputs, arguments PyTorch does not differentiate ----------------------------------

@needs_torch
@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_integer_target_gets_no_gradient(dtype):
    rng = _rng(2)
    x = rng.uniform(-2, 2, (4, 5)).astype(dtype)
    for t in (T_IGN, np.array(3)):  # rows with ignore_index; a 0-d target of a 1-d input
        xs = x if t.ndim else x[0].copy()
        check_against_torch(lambda a, tt: tl.cross_entropy_loss(a, tt, None, 1),
                            lambda a, tt: torch.ops.aten.cross_entropy_loss(a, tt, None, 1),
                            [xs, t], *((1e-10, 1e-12) if dtype == np.float64 else (2e-4, 2e-5)))


REFUSED = [
    ("nll_loss_weight", lambda x, w: tl.nll_loss(x, T3, w), [(4, 5), (5,)]),
    ("bce_logits_pos_weight", lambda x, w: tl.binary_cross_entropy_with_logits(
        x, x * 0.5, None, w), [(4, 5), (5,)]),
    ("soft_margin_target", lambda x, t: tl.soft_margin_loss(x, t), [(4, 5), (4, 5)]),
    ("batch_norm_running_mean", lambda x, rm: tl.batch_norm(x, None, None, rm, rm * 0.0 + 1.0,
                                                            False, 0.1, 1e-5, False),
     [(3, 5), (5,)]),
    ("linalg_norm_nuc", lambda x, _: tl.linalg_norm(x, "nuc") + _.sum(), [(4, 5), (2,)]),
]


@pytest.mark.parametrize("case", REFUSED, ids=[c[0] for c in REFUSED])
def test_unsupported_derivatives_raise(case):
    name, fn, shapes = case
    arrays = [_rng(3).uniform(0.5, 1.5, s) for s in shapes]
    with pytest.raises(UnsupportedOpError, match="no derivative for aten::"):
        jit.vjp(fn, *arrays)


def test_weight_without_gradient_is_fine():
    """A class weight that is a primal but not differentiated (``grad``'s argnums) is no
    error: only weights that carry a gradient are refused."""
    x = _rng(4).uniform(-2, 2, (4, 5))
    gx = jit.grad(lambda a, w: tl.nll_loss(a, T3, w), argnums=0)(x, W5)
    expected = np.zeros_like(x)
    expected[np.arange(4), T3] = -W5[T3] / W5[T3].sum()
    np.testing.assert_allclose(gx, expected, rtol=1e-12)


# -- what jit.vjp differentiates: the norms themselves, and their lowered parts ------------------

def test_norms_are_differentiated_before_lowering():
    x = _rng(0).uniform(-2, 2, (2, 4, 3))
    fwd, bwd = jit.vjp_graphs(lambda a: tl.instance_norm(tl.group_norm(a, 2), None, None, None,
                                                         None, True, 0.1, 1e-5, False), x)
    kinds = {n.kind for n in fwd.nodes}
    assert {"aten::group_norm", "aten::instance_norm"} <= kinds, fwd
    assert not any(k.startswith("torchlike::") for k in kinds)


@needs_torch
def test_lowered_norms_differentiate():
    """A graph already lowered by passes/decompose_norms (group norm with its affine
    parameters and a producer moved across its rows view, rms norm, eval batch norm:
    torchlike::group_norm_rows, group_norm_param, group_rows_of, batch_norm_affine) differentiates
    to the same gradients."""
    from torchlike.autodiff.api import prepare
    from torchlike.ir.types import type_of_python_value
    from torchlike.passes import infer_types
    from torchlike.passes.decompose_norms import decompose_norms

    rng = _rng(6)
    x, w, b = (make(s, np.float64, rng) for s in (X4, CW, CB))
    r5, t = rng.uniform(0.5, 1.5, 3), rng.uniform(-1, 1, (2, 4, 1, 1))

    def f(m, x, w, b, r, t):
        y = m.group_norm(x * 2.0 + t, 2, w, b, 1e-5)
        y = m.batch_norm(y, w, b, c(m, RM), c(m, RV), False, 0.1, 1e-5, False)
        return m.rms_norm(y, [3], r, None) if m is tl else torch.rms_norm(y, [3], r)

    g = prepare(lambda *a: f(tl, *a), [x, w, b, r5, t])[0]
    assert decompose_norms(g) == 3
    kinds = {n.kind for n in g.nodes}
    assert {"torchlike::group_norm_rows", "torchlike::group_norm_param",
            "torchlike::group_rows_of", "torchlike::batch_norm_affine"} <= kinds, g
    infer_types(g, [type_of_python_value(a) for a in (x, w, b, r5, t)])  # the parts' shapes
    check_against_torch(jit.ScriptFunction(g), lambda *a: f(torch, *a), [x, w, b, r5, t])
