"""What a scripted ``nn.MultiheadAttention`` asks before it picks its fast path, and the fast
path itself::

    %t : str = prim::type(%device)                       # x.device.type
    %g : bool = aten::is_grad_enabled()                  # False: no autograd here
    %r : bool = prim::requires_grad(%x)                  # False
    %n : bool = prim::is_nested(%x)                      # False: no nested tensors
    %a : bool = aten::is_autocast_enabled()              # False: no autocast
    %o : Tensor, %w : Tensor = aten::_native_multi_head_attention(%q, %k, %v, ...)

Its slow path (``F.multi_head_attention_forward``, in the nn function table) is made of ops
registered elsewhere.
"""
from __future__ import annotations

import math

import numpy as np

from ..ir.types import BOOL, STR
from .elementwise import _erf
from .registry import OpDef, defop, register
from .tensor_common import infer_same, like, tensor_in

F64 = np.float64


# -- for nn.MultiheadAttention's forward -----------------------------------------------------------

def _device_type(xp, device):
    """``prim::type(%device)``: ``device.type``, "cpu" or "cuda" (devices run as "cuda:0")."""
    return str(device).split(":")[0]


# the fast-path check of a scripted MultiheadAttention reads ``x.device.type``
register(OpDef("prim::type", (), _device_type, category="prim",
               infer=lambda node, types: [STR]))


def _no_grad(xp, *tensor):
    """``torch.is_grad_enabled()`` and ``x.requires_grad``: False, torchlike runs graphs
    without autograd (as under ``torch.no_grad()``)."""
    return False


register(OpDef("aten::is_grad_enabled", (), _no_grad, category="prim", foldable=False,
               infer=lambda node, types: [BOOL]))
register(OpDef("prim::requires_grad", (), _no_grad, category="prim",
               infer=lambda node, types: [BOOL]))
# ``x.is_nested``, ``torch.is_autocast_enabled()``: torchlike has neither nested tensors nor
# autocast
register(OpDef("prim::is_nested", (), _no_grad, category="prim",
               infer=lambda node, types: [BOOL]))
register(OpDef("aten::is_autocast_enabled", (), _no_grad, category="prim", foldable=False,
               infer=lambda node, types: [BOOL]))


def _native_mha(xp, query, key, value, embed_dim, num_head, qkv_weight, qkv_bias, proj_weight,
                proj_bias, mask=None, need_weights=True, average_attn_weights=True,
                mask_type=None):
    """``aten::_native_multi_head_attention``, nn.MultiheadAttention's fast path: batched
    (N, L, E) inputs, a ``mask`` of shape (L, S) (type 0), (N, S) (type 1, key padding) or
    (N, H, L, S) (type 2) whose nonzero entries are masked out (a float mask too: MHA passes
    its canonical 0 / -inf masks); weights averaged over heads unless not
    ``average_attn_weights``, None unless ``need_weights``."""
    if query.ndim != 3:
        raise RuntimeError(f"expected 3-D `query`, got {query.ndim}-D tensor")
    e, h = int(embed_dim), int(num_head)
    d = e // h
    w, b = qkv_weight.astype(F64), qkv_bias.astype(F64)

    def heads(x, i):
        y = x.astype(F64) @ w[i * e:(i + 1) * e].T + b[i * e:(i + 1) * e]
        return y.reshape(y.shape[0], y.shape[1], h, d).transpose(0, 2, 1, 3)

    q, k, v = heads(query, 0), heads(key, 1), heads(value, 2)
    scores = q @ k.transpose(0, 1, 3, 2) / math.sqrt(d)
    if mask is not None:
        m = mask[:, None, None, :] if mask_type == 1 else mask
        scores = xp.where(m != 0, -np.inf, scores)
    with np.errstate(invalid="ignore"):
        p = xp.exp(scores - xp.max(scores, axis=-1, keepdims=True))
        p = p / xp.sum(p, axis=-1, keepdims=True)
    n, length = query.shape[0], query.shape[1]
    out = (p @ v).transpose(0, 2, 1, 3).reshape(n, length, e)
    out = (out @ proj_weight.astype(F64).T + proj_bias.astype(F64)).astype(query.dtype)
    if not need_weights:
        return out, None
    return out, (xp.mean(p, axis=1) if average_attn_weights else p).astype(query.dtype)


def _infer_native_mha(node, types):
    q = tensor_in(types)
    return [like(q), like(q, shape=None)]


defop("aten::_native_multi_head_attention", "Tensor query, Tensor key, Tensor value, "
      "int embed_dim, int num_head, Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, "
      "Tensor proj_bias, Tensor? mask=None, bool need_weights=True, "
      "bool average_attn_weights=True, int? mask_type=None", _native_mha, num_outputs=2,
      python_name=None, infer=_infer_native_mha)


def _layer_norm64(xp, x, w, b, eps):
    mean = x.mean(axis=-1, keepdims=True)
    var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
    return (x - mean) / xp.sqrt(var + eps) * w.astype(F64) + b.astype(F64)


def _encoder_layer(xp, src, embed_dim, num_heads, qkv_weight, qkv_bias, proj_weight, proj_bias,
                   use_gelu, norm_first, eps, norm_weight_1, norm_bias_1, norm_weight_2,
                   norm_bias_2, ffn_weight_1, ffn_bias_1, ffn_weight_2, ffn_bias_2, mask=None,
                   mask_type=None):
    """``aten::_transformer_encoder_layer_fwd``, nn.TransformerEncoderLayer's fast path (eval
    mode, no dropout): self-attention and the feed-forward block (relu or exact gelu), each
    with its residual, the layer norms before (``norm_first``) or after them; in float64,
    rounded once."""
    x = src.astype(F64)

    def attention(y):
        y = y.astype(src.dtype) if y.dtype != src.dtype else y
        out, _ = _native_mha(xp, y, y, y, embed_dim, num_heads, qkv_weight, qkv_bias,
                             proj_weight, proj_bias, mask, False, True, mask_type)
        return out.astype(F64)

    def feed_forward(y):
        h = y @ ffn_weight_1.astype(F64).T + ffn_bias_1.astype(F64)
        if use_gelu:
            h = 0.5 * h * (1.0 + _erf(xp, h / math.sqrt(2.0)))
        else:
            h = xp.maximum(h, 0.0)
        return h @ ffn_weight_2.astype(F64).T + ffn_bias_2.astype(F64)

    def ln1(y):
        return _layer_norm64(xp, y, norm_weight_1, norm_bias_1, eps)

    def ln2(y):
        return _layer_norm64(xp, y, norm_weight_2, norm_bias_2, eps)

    if norm_first:
        x = x + attention(ln1(x))
        x = x + feed_forward(ln2(x))
    else:
        x = ln1(x + attention(x))
        x = ln2(x + feed_forward(x))
    return x.astype(src.dtype)


defop("aten::_transformer_encoder_layer_fwd", "Tensor src, int embed_dim, int num_heads, "
      "Tensor qkv_weight, Tensor qkv_bias, Tensor proj_weight, Tensor proj_bias, bool use_gelu, "
      "bool norm_first, float eps, Tensor norm_weight_1, Tensor norm_bias_1, "
      "Tensor norm_weight_2, Tensor norm_bias_2, Tensor ffn_weight_1, Tensor ffn_bias_1, "
      "Tensor ffn_weight_2, Tensor ffn_bias_2, Tensor? mask=None, int? mask_type=None",
      _encoder_layer, python_name=None, infer=infer_same)
