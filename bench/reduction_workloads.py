"""The fused-reduction workloads (``python -m bench --suite reductions``): softmax, log_softmax,
a layer norm and an RMS norm scripted from their parts and as the one op ``F.layer_norm`` /
``F.rms_norm`` print (``*_op``), logsumexp, a standardize (mean / std) and an MSE loss (a full
reduction), each over rows of 64, 1024 and 32768 float32 elements
(``<program>/r<row>``; the row count follows from the size, 2^20..2^24 in the issue's run);
and a group norm of 32 groups with its SiLU over (N, 64, 32, 32) images
(``group_norm_silu/g32``: ``nn.GroupNorm`` + ``nn.SiLU``, a diffusion U-Net's block;
``group_norm_resblock/g32``: the time embedding added before it and the residual after).

Each is written once with torchlike calls (scripted, as a PyTorch user would script it), with
its numpy, PyTorch and JAX versions beside it; the harness times them all side by side, checks
torch.compile really compiled, runs JAX in its own process and sets every time beside the copy
floor (one read of the inputs, one write of the output).  The numpy version (float32, its
pairwise sums) is both a peer and the oracle.
"""
from __future__ import annotations

from typing import Callable, List

import numpy as np

import torchlike as tl

from .workloads import Workload

ROWS = (64, 1024, 32768)
EPS_LN, EPS_RMS = 1e-5, 1e-6
GROUPS, CHANNELS, PIXELS = 32, 64, 32 * 32  # group norm: (N, 64, 32, 32), rows of 2 * 1024


def _rows_inputs(row: int, extra: int) -> Callable:
    """(n, rng) -> an (n / row, row) float32 ``x`` and ``extra`` more arrays: a second (R, row)
    one for the MSE (``extra == -1``), else row-long weights and biases."""
    def make(n, rng):
        shape = (max(1, n // row), row)
        x = rng.standard_normal(shape).astype(np.float32)
        if extra == -1:
            return x, rng.standard_normal(shape).astype(np.float32)
        return (x,) + tuple(rng.standard_normal(row).astype(np.float32) for _ in range(extra))
    return make


# -- the programs, as torchlike code (scripted by the harness) --------------------------------

def softmax(x):
    return tl.softmax(x, -1)


def log_softmax(x):
    return tl.log_softmax(x, -1)


def layer_norm(x, w, b):
    mean = x.mean(-1, keepdim=True)
    var = x.var(-1, keepdim=True, unbiased=False)
    return (x - mean) / tl.sqrt(var + 1e-5) * w + b


def rms_norm(x, w):
    return x * tl.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-6) * w


def layer_norm_op(x, w, b):
    # F.layer_norm / nn.LayerNorm: one aten::layer_norm, lowered to the parts above
    return tl.layer_norm(x, [x.shape[-1]], w, b, 1e-5)


def rms_norm_op(x, w):
    # F.rms_norm / nn.RMSNorm: one aten::rms_norm
    return tl.rms_norm(x, [x.shape[-1]], w, 1e-6)


def logsumexp(x):
    return tl.logsumexp(x, -1)


def group_norm_silu(x, w, b):
    # nn.GroupNorm(32, C) then SiLU, a diffusion U-Net's block: aten::group_norm, lowered
    return tl.silu(tl.group_norm(x, GROUPS, w, b, 1e-5))


def group_norm_resblock(x, t, w, b):
    # a diffusion U-Net's ResBlock around its second norm: the time embedding added per sample
    # and channel, GroupNorm, SiLU, the residual -- one row kernel (passes/group_rows.py)
    return tl.silu(tl.group_norm(x + t, GROUPS, w, b, 1e-5)) + x


def standardize(x):
    return (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True)


def mse(x, y):
    return ((x - y) ** 2).mean()


# -- numpy, PyTorch and JAX versions ---------------------------------------------------

def _np_softmax(xp, x):
    e = xp.exp(x - x.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def _np_logsumexp(xp, x):
    m = x.max(-1, keepdims=True)
    return (xp.log(xp.exp(x - m).sum(-1, keepdims=True)) + m)[..., 0]


def _np_layer_norm(xp, x, w, b):
    return (x - x.mean(-1, keepdims=True)) / xp.sqrt(x.var(-1, keepdims=True) + EPS_LN) * w + b


def _jnp(jax):
    return jax.numpy


def _images(n, rng):
    shape = (max(1, n // (CHANNELS * PIXELS)), CHANNELS, 32, 32)
    return (rng.standard_normal(shape).astype(np.float32),) + tuple(
        rng.standard_normal(CHANNELS).astype(np.float32) for _ in range(2))


def _images_temb(n, rng):
    x, w, b = _images(n, rng)
    return x, rng.standard_normal(x.shape[:2] + (1, 1)).astype(np.float32), w, b


def _np_group_norm_resblock(xp, x, t, w, b):
    return _np_group_norm_silu(xp, x + t, w, b) + x


def _jax_group_norm_resblock(jax, x, t, w, b):
    return _jax_group_norm_silu(jax, x + t, w, b) + x


def _np_group_norm_silu(xp, x, w, b):
    g = x.reshape(x.shape[0], GROUPS, -1)
    y = ((g - g.mean(-1, keepdims=True)) / xp.sqrt(g.var(-1, keepdims=True) + EPS_LN))
    y = y.reshape(x.shape) * w[:, None, None] + b[:, None, None]
    return y / (1 + xp.exp(-y))


def _jax_group_norm_silu(jax, x, w, b):
    g = x.reshape(x.shape[0], GROUPS, -1)
    y = (g - g.mean(-1, keepdims=True)) * jax.lax.rsqrt(g.var(-1, keepdims=True) + EPS_LN)
    return jax.nn.silu(y.reshape(x.shape) * w[:, None, None] + b[:, None, None])


PROGRAMS = {
    # name: (torchlike fn, extra inputs, numpy ref, torch fn, jax fn)
    "softmax": (softmax, 0, _np_softmax,
                lambda torch, x: torch.softmax(x, -1),
                lambda jax, x: jax.nn.softmax(x, axis=-1)),
    "log_softmax": (log_softmax, 0,
                    lambda xp, x: x - _np_logsumexp(xp, x)[..., None],
                    lambda torch, x: torch.log_softmax(x, -1),
                    lambda jax, x: jax.nn.log_softmax(x, axis=-1)),
    "layer_norm": (layer_norm, 2, _np_layer_norm,
                   lambda torch, x, w, b: (x - x.mean(-1, keepdim=True))
                   / torch.sqrt(x.var(-1, keepdim=True, unbiased=False) + EPS_LN) * w + b,
                   lambda jax, x, w, b: (x - x.mean(-1, keepdims=True))
                   / _jnp(jax).sqrt(x.var(-1, keepdims=True) + EPS_LN) * w + b),
    "rms_norm": (rms_norm, 1,
                 lambda xp, x, w: x / xp.sqrt((x * x).mean(-1, keepdims=True) + EPS_RMS) * w,
                 lambda torch, x, w: x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + EPS_RMS)
                 * w,
                 lambda jax, x, w: x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + EPS_RMS)
                 * w),
    "layer_norm_op": (layer_norm_op, 2, _np_layer_norm,
                      lambda torch, x, w, b: torch.nn.functional.layer_norm(
                          x, x.shape[-1:], w, b, EPS_LN),
                      lambda jax, x, w, b: (x - x.mean(-1, keepdims=True))
                      / _jnp(jax).sqrt(x.var(-1, keepdims=True) + EPS_LN) * w + b),
    "rms_norm_op": (rms_norm_op, 1,
                    lambda xp, x, w: x / xp.sqrt((x * x).mean(-1, keepdims=True) + EPS_RMS) * w,
                    lambda torch, x, w: torch.nn.functional.rms_norm(x, x.shape[-1:], w, EPS_RMS),
                    lambda jax, x, w: x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True)
                                                        + EPS_RMS) * w),
    "logsumexp": (logsumexp, 0, _np_logsumexp,
                  lambda torch, x: torch.logsumexp(x, -1),
                  lambda jax, x: jax.nn.logsumexp(x, axis=-1)),
    "standardize": (standardize, 0,
                    lambda xp, x: (x - x.mean(-1, keepdims=True)) / x.std(-1, keepdims=True,
                                                                          ddof=1),
                    lambda torch, x: (x - x.mean(-1, keepdim=True)) / x.std(-1, keepdim=True),
                    lambda jax, x: (x - x.mean(-1, keepdims=True))
                    / x.std(-1, keepdims=True, ddof=1)),
    "mse": (mse, -1, lambda xp, x, y: xp.asarray(((x - y) ** 2).mean()),
            lambda torch, x, y: ((x - y) ** 2).mean(),
            lambda jax, x, y: ((x - y) ** 2).mean()),
}


def reduction_workloads() -> List[Workload]:
    """One workload per program and row length, named ``<program>/r<row>``."""
    out = []
    for name, (fn, extra, ref, torch_fn, jax_fn) in PROGRAMS.items():
        for row in ROWS:
            out.append(Workload(f"{name}/r{row}", fn, _rows_inputs(row, extra), ref,
                                None, torch_fn, jax=jax_fn, tags=("reduction",)))
    out.append(Workload(f"group_norm_silu/g{GROUPS}", group_norm_silu, _images,
                        _np_group_norm_silu, None,
                        lambda torch, x, w, b: torch.nn.functional.silu(
                            torch.nn.functional.group_norm(x, GROUPS, w, b, EPS_LN)),
                        jax=_jax_group_norm_silu, tags=("reduction",)))
    out.append(Workload(f"group_norm_resblock/g{GROUPS}", group_norm_resblock, _images_temb,
                        _np_group_norm_resblock, None,
                        lambda torch, x, t, w, b: torch.nn.functional.silu(
                            torch.nn.functional.group_norm(x + t, GROUPS, w, b, EPS_LN)) + x,
                        jax=_jax_group_norm_resblock, tags=("reduction",)))
    return out
