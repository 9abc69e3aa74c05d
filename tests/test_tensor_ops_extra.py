"""cumsum/cumprod, topk/sort/argsort, one_hot, pad, broadcast_tensors, norms, new_* factories,
triu/tril and the losses, eagerly: against numpy formulas (always) and PyTorch (when
installed), including their dtypes, NaN ordering, errors and reduction modes."""
import numpy as np
import pytest

import torchlike as tl
from torchlike.errors import ExecutionError

X = np.array([[3.0, np.nan, 1.0, 3.0], [-1.0, 2.0, 0.5, -7.0]], np.float32)


def test_cumsum_dtypes_and_values():
    assert tl.cumsum(np.array([True, True, False]), 0).tolist() == [1, 2, 2]
    assert tl.cumsum(np.array([1, 2, 3], np.int32), 0).dtype == np.int64
    np.testing.assert_array_equal(tl.cumprod(np.float32([[1, 2], [3, 4]]), -1),
                                  np.float32([[1, 2], [3, 12]]))


def test_topk_sort_rank_nan_first_when_largest():
    values, idx = tl.topk(X, 2)
    assert np.isnan(values[0, 0]) and values[0, 1] == 3.0 and idx.dtype == np.int64
    assert idx[0].tolist() == [1, 0]  # NaN, then the first of the tied 3.0s
    assert tl.topk(X, 1, largest=False)[0][:, 0].tolist() == [1.0, -7.0]
    s, i = tl.sort(X, 1, True)
    assert np.isnan(s[0, 0]) and s[1].tolist() == [2.0, 0.5, -1.0, -7.0]
    assert tl.argsort(X[1:], -1).tolist() == [[3, 0, 2, 1]]
    with pytest.raises(ExecutionError, match="out of range"):
        tl.topk(X, 5)


def test_one_hot():
    assert tl.one_hot(np.array([0, 2]), 3).tolist() == [[1, 0, 0], [0, 0, 1]]
    assert tl.one_hot(np.array([1, 3])).shape == (2, 4)
    for bad, msg in ((np.array([3]), "smaller"), (np.array([-1]), "non-negative"),
                     (np.array([1], np.int32), "LongTensor")):
        with pytest.raises(ExecutionError, match=msg):
            tl.one_hot(bad, 3)


def test_pad_modes_and_negative_crop():
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    assert tl.constant_pad_nd(x, [1, 0], 9.0).tolist() == [[9, 0, 1, 2], [9, 3, 4, 5]]
    assert tl.constant_pad_nd(x, [-1, 1]).tolist() == [[1, 2, 0], [4, 5, 0]]
    assert tl.pad(x, [1, 1], "reflect").tolist() == [[1, 0, 1, 2, 1], [4, 3, 4, 5, 4]]
    assert tl.pad(x[None], [0, 0, 1, 0], "replicate").tolist() == [[[0, 1, 2], [0, 1, 2],
                                                                    [3, 4, 5]]]
    with pytest.raises(ExecutionError, match="Padding size 4 is not supported for 2D input"):
        tl.pad(x, [0, 0, 1, 0], "replicate")  # PyTorch's refusal: 2 dims padded need 3-d
    assert tl.pad(x, [1, 0], "circular").tolist() == [[2, 0, 1, 2], [5, 3, 4, 5]]
    with pytest.raises(ExecutionError, match="divisible by 2"):
        tl.pad(x, [1])


def test_broadcast_tensors_norms_factories_triangles():
    a, b = tl.broadcast_tensors([np.ones(3), np.zeros((2, 1))])
    assert a.shape == b.shape == (2, 3)
    v = np.float32([[3, -4], [0, 0]])
    assert tl.linalg_vector_norm(v).item() == 5.0
    assert tl.linalg_vector_norm(v, float("inf"), [1]).tolist() == [4.0, 0.0]
    assert tl.linalg_vector_norm(v, 0).item() == 2.0
    assert tl.norm(v, 1, [1], True).tolist() == [[7.0], [0.0]]
    i = np.ones(2, np.int16)
    assert tl.new_zeros(i, [3]).dtype == np.int16 and tl.new_full(i, [2], 5).tolist() == [5, 5]
    assert tl.triu(np.ones((3, 3)), 1).sum() == 3 and tl.tril(np.ones((2, 3))).sum() == 3


def _log_softmax(x):
    z = x - x.max(1, keepdims=True)
    return z - np.log(np.exp(z).sum(1, keepdims=True))


def test_losses_against_numpy():
    rng = np.random.default_rng(0)
    x, t = rng.standard_normal((4, 5)).astype(np.float32), rng.standard_normal((4, 5)).astype(np.float32)
    np.testing.assert_allclose(tl.mse_loss(x, t), ((x - t) ** 2).mean(), rtol=1e-6)
    np.testing.assert_allclose(tl.l1_loss(x, t, 2), np.abs(x - t).sum(), rtol=1e-6)
    assert tl.mse_loss(x, t, 0).shape == (4, 5)
    d = np.abs(x - t)
    np.testing.assert_allclose(tl.smooth_l1_loss(x, t, 1, 0.5),
                               np.where(d < 0.5, d * d, d - 0.25).mean(), rtol=1e-6)
    labels = np.array([0, 4, -100, 2])
    logp = _log_softmax(x.astype(np.float64))
    keep = labels != -100
    want = -logp[np.arange(4)[keep], labels[keep]].mean()
    np.testing.assert_allclose(tl.cross_entropy_loss(x, labels), want, rtol=1e-5)
    w = np.float32([1, 2, 3, 4, 5])
    wl = w[labels[keep]]
    want_w = -(logp[np.arange(4)[keep], labels[keep]] * wl).sum() / wl.sum()
    np.testing.assert_allclose(tl.cross_entropy_loss(x, labels, w), want_w, rtol=1e-5)
    with pytest.raises(ExecutionError, match="out of bounds"):
        tl.cross_entropy_loss(x, np.array([0, 5, 1, 1]))
    with pytest.raises(ExecutionError, match="between 0 and 1"):
        tl.binary_cross_entropy(np.float32([1.5]), np.float32([1.0]))


def test_losses_match_pytorch():
    torch = pytest.importorskip("torch")
    F = torch.nn.functional
    rng = np.random.default_rng(1)
    x = rng.standard_normal((6, 4)).astype(np.float32)
    labels = np.array([0, 3, -100, 2, 1, 1])
    probs = np.exp(_log_softmax(rng.standard_normal((6, 4)))).astype(np.float32)
    tx, tlab, tp = torch.from_numpy(x), torch.from_numpy(labels), torch.from_numpy(probs)
    for red, code in (("none", 0), ("mean", 1), ("sum", 2)):
        np.testing.assert_allclose(tl.cross_entropy_loss(x, labels, None, code, -100, 0.1),
                                   F.cross_entropy(tx, tlab, reduction=red, label_smoothing=0.1),
                                   rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(tl.cross_entropy_loss(x, probs, None, code),
                                   F.cross_entropy(tx, tp, reduction=red), rtol=1e-5, atol=1e-6)
        p = torch.sigmoid(tx)
        np.testing.assert_allclose(tl.binary_cross_entropy(p.numpy(), probs, None, code),
                                   F.binary_cross_entropy(p, tp, reduction=red), rtol=1e-5,
                                   atol=1e-6)
        np.testing.assert_allclose(
            tl.binary_cross_entropy_with_logits(x, probs, None, np.float32([1, 2, 3, 4]), code),
            F.binary_cross_entropy_with_logits(tx, tp, reduction=red,
                                               pos_weight=torch.tensor([1., 2., 3., 4.])),
            rtol=1e-5, atol=1e-6)
    t = torch.tensor(X)
    np.testing.assert_array_equal(tl.topk(X, 2)[0], torch.topk(t, 2).values.numpy())


def test_arange_eager_forms():
    assert tl.arange(5).tolist() == [0, 1, 2, 3, 4] and tl.arange(5).dtype == np.int64
    assert tl.arange(1, 7, 2).tolist() == [1, 3, 5]
    assert tl.arange(3, dtype=np.float32).dtype == np.float32
    assert tl.arange(0.0, 1.0, 0.25).tolist() == [0.0, 0.25, 0.5, 0.75]


def test_indexing_ops_against_numpy():
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    i = np.array([2, 0, 2])
    np.testing.assert_array_equal(tl.index(x, [None, np.array([1, 3])]), x[:, [1, 3]])
    np.testing.assert_array_equal(tl.index(x, [x[:, 0] > 3]), x[x[:, 0] > 3])
    np.testing.assert_array_equal(tl.index_select(x, 0, i), x[i])
    np.testing.assert_array_equal(tl.gather(x, 1, np.array([[3], [0], [1]])), [[3], [4], [9]])
    with pytest.raises(ExecutionError, match="out of bounds"):
        tl.gather(x, 1, np.array([[4]]))
    with pytest.raises(ExecutionError, match="long, int, byte or bool"):
        tl.index_select(x, 0, np.float32([0]))
    added = tl.scatter_add(np.zeros(3, np.float32), 0, np.array([0, 0, 2]), np.float32([1, 2, 3]))
    assert added.tolist() == [3.0, 0.0, 3.0]  # duplicates accumulate
    a, b = tl.split_with_sizes(x, [1, 3], 1)
    assert a.shape == (3, 1) and b.shape == (3, 3)
    with pytest.raises(ExecutionError, match="sum exactly"):
        tl.split_with_sizes(x, [1, 2], 1)
    assert tl.unflatten(x, 1, [2, -1]).shape == (3, 2, 2)
    assert tl.repeat(np.ones(2), [3, 2]).shape == (3, 4)


def test_sdpa_causal_matches_the_formula():
    rng = np.random.default_rng(2)
    q, k, v = (rng.standard_normal((2, 4, 8)).astype(np.float32) for _ in range(3))
    s = q @ k.transpose(0, 2, 1) / np.sqrt(8)
    s = np.where(np.tril(np.ones((4, 4), bool)), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    want = (p / p.sum(-1, keepdims=True)) @ v
    np.testing.assert_allclose(tl.scaled_dot_product_attention(q, k, v, None, 0.0, True), want,
                               rtol=1e-5, atol=1e-6)
    with pytest.raises(ExecutionError, match="dropout_p"):
        tl.scaled_dot_product_attention(q, k, v, None, 0.1)


def test_gather_reads_the_index_extent_and_refuses_negative_indices():
    """PyTorch's gather (answers and messages printed by torch 2.13): the index may be shorter
    than the input in the other dims; a negative index is out of bounds."""
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    np.testing.assert_array_equal(tl.gather(x, 1, np.array([[0, 1, 3], [2, 0, 1]])),
                                  [[0, 1, 3], [6, 4, 5]])
    with pytest.raises(ExecutionError, match="index -1 is out of bounds for dimension 1"):
        tl.gather(x, 1, np.array([[0, -1]]))
    with pytest.raises(ExecutionError, match="Size does not match at dimension 0"):
        tl.gather(x, 1, np.zeros((4, 1), np.int64))
