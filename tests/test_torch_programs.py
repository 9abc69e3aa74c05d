"""Small programs as PyTorch users write them -- attention (by hand and
scaled_dot_product_attention), an MLP, a residual block with in-place ops, layer norm, RoPE,
SwiGLU, embeddings, losses, cumsum/topk/one_hot/pad/normalize, addmm/baddbmm/einsum,
gather/index/scatter, split/unflatten/repeat --
traced and scripted by PyTorch 2.13, printed, parsed by torchlike and run (fused where
elementwise), against PyTorch's own outputs.  Needs torch (the graphs come from it); the ops'
own semantics without torch are in test_tensor_ops_extra.py."""
import warnings

import numpy as np
import pytest

from torchlike import ir
from torchlike.fuser import config
from torchlike.jit.script_function import ScriptFunction

torch = pytest.importorskip("torch")
F = torch.nn.functional


def attn(q, k, v, mask):
    s = q @ k.transpose(-2, -1) / (q.shape[-1] ** 0.5)
    s = s.masked_fill(mask == 0, float("-inf"))
    p = torch.softmax(s, dim=-1)
    return (p @ v).permute(0, 2, 1, 3).reshape(q.shape[0], q.shape[2], -1)


def mlp(x, w1, b1, w2):
    h = F.gelu(F.linear(x, w1, b1))
    h = F.dropout(h, 0.1, False)
    return h @ w2.t()


def resid(x, y):
    out = x.clone()
    out += y
    out.relu_()
    return torch.cat([out, x], dim=1).view(-1)


def norm(x, w, b):
    return F.layer_norm(x, (x.shape[-1],), w, b) * torch.sigmoid(x)


def rope(x, pos):
    freqs = 1.0 / (10000 ** (torch.arange(0, x.shape[-1], 2).float() / x.shape[-1]))
    ang = pos[:, None].float() * freqs[None, :]
    c, s = torch.cos(ang), torch.sin(ang)
    x1, x2 = x[..., ::2], x[..., 1::2]
    return torch.cat([x1 * c - x2 * s, x1 * s + x2 * c], dim=-1)


def swiglu(x, w):
    a, b = (x @ w).chunk(2, dim=-1)
    return F.silu(a) * b


def emb(ids, table, pos):
    return F.embedding(ids, table) + pos[: ids.shape[1]]


def losses(x, t):
    return F.mse_loss(x, t) + F.smooth_l1_loss(x, t) + F.l1_loss(x, t) + F.huber_loss(x, t)


def ce(logits, target):
    return F.cross_entropy(logits, target) + F.nll_loss(F.log_softmax(logits, 1), target)


def bce(p, t, z):
    return F.binary_cross_entropy(p, t) + F.binary_cross_entropy_with_logits(z, t)


def cum(x):
    return torch.cumsum(x, dim=1) + x.argmax(dim=1, keepdim=True).float()


def pad(x):
    return F.pad(x, (1, 2))


def onehot(i):
    return F.one_hot(i, 5).float() * 2


def topk(x):
    return torch.topk(x, 3, dim=-1).values


def normalize(x):
    return F.normalize(x, dim=-1)


def newzeros_triu(x):
    y = x.new_zeros(x.shape) + torch.arange(x.shape[-1], dtype=x.dtype)
    return torch.triu(x) + torch.tril(y, -1)


def sdpa(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def addmm(x, w, b):
    return torch.addmm(b, x, w, beta=0.5) + torch.baddbmm(
        b.expand(2, 4, 6), x.expand(2, 4, 5), w.expand(2, 5, 6), alpha=2.0).sum(0)


def gather_index(x, i):
    return x[i] + x.gather(1, i[:, None].expand(-1, 3)).sum() + x.index_select(0, i)


def split_unflatten(x):
    a, b = x.split([2, 3], dim=1)
    return torch.cat([b, a], 1).flatten().unflatten(0, (5, 4)).repeat(1, 2)


def einsum_std(a, b):
    s, m = torch.std_mean(a, dim=1)
    return torch.einsum("ij,jk->ik", (a - m[:, None]) / s[:, None], b)


def einsum_ellipsis(a, b):
    # dims under an ellipsis the output leaves out are summed (numpy refuses this spelling)
    return torch.einsum("...ij->ji", a) + torch.einsum("...i, ...i -> i", a, b).sum()


def scatter(x, i):
    return torch.zeros(4, 3).scatter_add(0, i, x) + torch.zeros(4, 3).scatter(0, i, x)


def _g(seed):
    return torch.Generator().manual_seed(seed)


def _randn(*shape, seed=0):
    return torch.randn(*shape, generator=_g(seed))


CASES = {
    "attn": (attn, lambda: [_randn(2, 4, 8, 16), _randn(2, 4, 8, 16, seed=1),
                            _randn(2, 4, 8, 16, seed=2), torch.tril(torch.ones(8, 8))]),
    "mlp": (mlp, lambda: [_randn(4, 16), _randn(32, 16, seed=1), _randn(32, seed=2),
                          _randn(8, 32, seed=3)]),
    "resid": (resid, lambda: [_randn(4, 8), _randn(4, 8, seed=1)]),
    "norm": (norm, lambda: [_randn(4, 16), _randn(16, seed=1), _randn(16, seed=2)]),
    "rope": (rope, lambda: [_randn(10, 16), torch.arange(10)]),
    "swiglu": (swiglu, lambda: [_randn(4, 8), _randn(8, 16, seed=1)]),
    "emb": (emb, lambda: [torch.randint(0, 10, (2, 5), generator=_g(0)), _randn(10, 8),
                          _randn(16, 8, seed=1)]),
    "losses": (losses, lambda: [_randn(4, 5), _randn(4, 5, seed=1) * 2]),
    "ce": (ce, lambda: [_randn(4, 5), torch.randint(0, 5, (4,), generator=_g(1))]),
    "bce": (bce, lambda: [torch.rand(6, generator=_g(0)), torch.rand(6, generator=_g(1)),
                          _randn(6, seed=2)]),
    "cum": (cum, lambda: [_randn(3, 6)]),
    "pad": (pad, lambda: [_randn(3, 4)]),
    "onehot": (onehot, lambda: [torch.randint(0, 5, (6,), generator=_g(0))]),
    "topk": (topk, lambda: [_randn(3, 7)]),
    "normalize": (normalize, lambda: [_randn(3, 7)]),
    "newzeros_triu": (newzeros_triu, lambda: [_randn(5, 6)]),
    "sdpa": (sdpa, lambda: [_randn(2, 3, 5, 8), _randn(2, 3, 5, 8, seed=1),
                            _randn(2, 3, 5, 8, seed=2)]),
    "addmm": (addmm, lambda: [_randn(4, 5), _randn(5, 6, seed=1), _randn(6, seed=2)]),
    "gather_index": (gather_index, lambda: [_randn(4, 3), torch.tensor([0, 2, 1, 1])]),
    "split_unflatten": (split_unflatten, lambda: [_randn(4, 5)]),
    "einsum_std": (einsum_std, lambda: [_randn(3, 6), _randn(6, 2, seed=1)]),
    "einsum_ellipsis": (einsum_ellipsis, lambda: [_randn(2, 3, 4), _randn(3, 4, seed=1)]),
    "scatter": (scatter, lambda: [_randn(2, 3), torch.tensor([[0, 1, 2], [3, 0, 1]])]),
}


@pytest.mark.parametrize("capture", ["trace", "script"])
@pytest.mark.parametrize("name", list(CASES))
def test_program_matches_pytorch(name, capture):
    fn, make = CASES[name]
    args = make()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            captured = torch.jit.trace(fn, args) if capture == "trace" else torch.jit.script(fn)
        except Exception as e:  # noqa: BLE001 - PyTorch itself cannot script every program
            pytest.skip(f"PyTorch cannot {capture} {name}: {type(e).__name__}")
    want = fn(*[a.clone() for a in args])
    ours = ScriptFunction(ir.parse_graph(str(captured.graph)))
    saved = config.fusion_enabled()
    config.set_fusion_enabled(True)
    try:
        got = ours(*[a.numpy().copy() for a in args])
    finally:
        config.set_fusion_enabled(saved)
    np.testing.assert_allclose(np.asarray(got), want.numpy(), rtol=2e-5, atol=2e-6)
