"""Shared checks of derivative rules against ``torch.autograd`` (a plain helper module, as
``graph_modes``): ``check_against_torch(tl_fn, torch_fn, arrays)`` runs ``jit.vjp`` on the
traced torchlike function and ``torch.autograd.backward`` on the torch one with the same random
cotangents and compares outputs and every input's gradient (None where torch has none: integer
inputs); ``U(lo, hi, *shape)``, ``Fixed(values)`` and ``make(spec, dtype, rng)`` build inputs;
``check_case(case, arrays, dtype)`` runs one row of a test module's table of cases
(``(id, torchlike fn of (module, *arrays), torch fn or None: the same code on torch, specs)``);
``torch_graph_text`` is the graph PyTorch prints for a function it scripts or traces."""
from __future__ import annotations

import warnings

import numpy as np
import pytest

import torchlike as tl
from torchlike import jit

try:
    import torch
except ImportError:  # callers skip with needs_torch
    torch = None

needs_torch = pytest.mark.skipif(torch is None, reason="needs torch (the oracle)")
TOLERANCES = {"float64": dict(rtol=1e-10, atol=1e-12), "float32": dict(rtol=2e-4, atol=2e-5)}


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


def Fixed(values):
    """An input spec of fixed values (zeros, ties, NaN, equal operands, integer indices)."""
    return ("fixed", np.asarray(values))


def make(spec, dtype, rng):
    """A ``U`` spec drawn from ``rng``, or fixed values (a ``Fixed`` spec or an array): floats
    cast to ``dtype``, integers kept."""
    if isinstance(spec, np.ndarray) or spec[0] == "fixed":
        a = spec if isinstance(spec, np.ndarray) else spec[1]
        return a.astype(dtype) if a.dtype.kind == "f" else a.copy()
    kind, lo, hi, shape = spec
    return rng.uniform(lo, hi, shape).astype(dtype)


def torch_of(case):
    """A case's torch function: its own, or its torchlike code run on torch."""
    fn, tfn = case[1], (case[2] if len(case) == 4 else None)
    return tfn if tfn is not None else (lambda *a: fn(torch, *a))


def check_case(case, arrays, dtype):
    """One case of a table against torch.autograd, at ``TOLERANCES[dtype]``."""
    check_against_torch(lambda *a: case[1](tl, *a), torch_of(case), arrays, **TOLERANCES[dtype])


def torch_graph_text(fn, arrays, capture):
    """The graph PyTorch prints for ``fn`` scripted or traced (on ``arrays``)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        t = torch.jit.script(fn) if capture == "script" else \
            torch.jit.trace(fn, tuple(torch.from_numpy(a) for a in arrays))
    return str(t.graph)
