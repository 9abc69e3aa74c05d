"""Shared checks of derivative rules against ``torch.autograd`` (a plain helper module, as
``graph_modes``): ``check_against_torch(tl_fn, torch_fn, arrays)`` runs ``jit.vjp`` on the
traced torchlike function and ``torch.autograd.backward`` on the torch one with the same random
cotangents and compares outputs and every input's gradient (None where torch has none: integer
inputs); ``U(lo, hi, *shape)`` and ``make(spec, dtype, rng)`` build uniform inputs."""
from __future__ import annotations

import numpy as np

from torchlike import jit

try:
    import torch
except ImportError:  # callers skip with needs_torch
    torch = None


def _rng(seed=0):
    return np.random.default_rng(seed)


def _torch_vjp(fn, arrays, cots):
    ts = [torch.tensor(a, requires_grad=a.dtype.kind == "f") if isinstance(a, np.ndarray)
          else a for a in arrays]
    out = fn(*ts)
    outs = out if isinstance(out, tuple) else (out,)
    torch.autograd.backward([o for o in outs if o.requires_grad],
                            [torch.tensor(c) for o, c in zip(outs, cots) if o.requires_grad])
    grads = [None if not isinstance(t, torch.Tensor) or t.grad is None and not t.requires_grad
             else (t.grad.numpy() if t.grad is not None else np.zeros(t.shape))
             for t in ts]
    return [o.detach().numpy() for o in outs], grads


def check_against_torch(tl_fn, torch_fn, arrays, rtol=1e-10, atol=1e-12, seed=1):
    outs, pullback = jit.vjp(tl_fn, *arrays)
    outs_t = outs if isinstance(outs, tuple) else (outs,)
    rng = _rng(seed)
    cots = [rng.standard_normal(np.shape(o)).astype(np.asarray(o).dtype) for o in outs_t]
    grads = pullback(tuple(cots) if isinstance(outs, tuple) else cots[0])
    ref_outs, ref_grads = _torch_vjp(torch_fn, arrays, cots)
    for o, r in zip(outs_t, ref_outs):
        np.testing.assert_allclose(o, r, rtol=max(rtol, 1e-6), atol=max(atol, 1e-6))
    assert len(grads) == len(arrays)
    for i, (g, r) in enumerate(zip(grads, ref_grads)):
        if r is None:
            assert g is None, f"input {i}: expected no gradient"
            continue
        assert g.shape == r.shape and g.dtype == arrays[i].dtype, (i, g.shape, g.dtype)
        np.testing.assert_allclose(g, r, rtol=rtol, atol=atol, err_msg=f"gradient {i}")


def U(lo, hi, *shape):
    return ("u", lo, hi, shape)


def make(spec, dtype, rng):
    kind, lo, hi, shape = spec
    return rng.uniform(lo, hi, shape).astype(dtype)
