"""Benchmark workloads: each is a program written once with ``torchlike`` calls (traced or
scripted by torchlike, and run eagerly by numpy through the same calls), plus peer versions
where a peer can express it (numexpr strings, PyTorch).

A workload's ``make_inputs(n, rng)`` returns float32 arrays of about ``n`` elements each.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Callable, Dict, Optional

import numpy as np

import torchlike as tl


@dataclass
class Workload:
    name: str
    fn: Callable                       # torchlike program (numpy arrays in, arrays out)
    make_inputs: Callable              # (n, rng) -> tuple of arrays
    numpy: Callable                    # hand-written numpy eager version
    numexpr: Optional[Dict[str, str]] = None   # output name -> numexpr expression
    torch: Optional[Callable] = None   # (torch module, *tensors) -> outputs
    corpus: Optional[str] = None       # corpus case whose scripted graph is the same program
    tags: tuple = field(default_factory=tuple)


def _square(n):
    side = max(1, int(math.isqrt(n)))
    return side, max(1, n // side)


def _one(n, rng):
    return (rng.standard_normal(_square(n)).astype(np.float32),)


def gelu_tanh(x):
    return 0.5 * x * (1.0 + tl.tanh(0.7978845608028654 * (x + 0.044715 * tl.pow(x, 3))))


def silu_swish(x):
    return x * tl.sigmoid(x), x * tl.sigmoid(1.702 * x)


def softplus_threshold(x):
    bx = x * 2.0
    return tl.where(bx > 5.0, x, tl.log1p(tl.exp(bx)) / 2.0)


def lstm_cell_pointwise(gates, c):
    i, f, g, o = tl.chunk(gates, 4, 1)
    i = tl.sigmoid(i)
    f = tl.sigmoid(f)
    g = tl.tanh(g)
    o = tl.sigmoid(o)
    c_new = f * c + i * g
    h_new = o * tl.tanh(c_new)
    return h_new, c_new


def _lstm_inputs(n, rng):
    rows, hidden = _square(n)
    return (rng.standard_normal((rows, 4 * hidden)).astype(np.float32),
            rng.standard_normal((rows, hidden)).astype(np.float32))


_UNARY_20 = ["sin", "cos", "exp", "log1p", "sqrt", "rsqrt", "reciprocal", "neg", "abs", "tanh",
             "sigmoid", "erf", "expm1", "atan", "relu", "erfc", "log", "neg", "exp", "frac"]


def unary_chain_20(x):
    x = tl.sin(x)
    x = tl.cos(x)
    x = tl.exp(x)
    x = tl.log1p(x)
    x = tl.sqrt(x)
    x = tl.rsqrt(x)
    x = tl.reciprocal(x)
    x = tl.neg(x)
    x = tl.abs(x)
    x = tl.tanh(x)
    x = tl.sigmoid(x)
    x = tl.erf(x)
    x = tl.expm1(x)
    x = tl.atan(x)
    x = tl.relu(x)
    x = tl.erfc(x)
    x = tl.log(x)
    x = tl.neg(x)
    x = tl.exp(x)
    x = tl.frac(x)
    return x


def _np_sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def _np_lstm(gates, c):
    i, f, g, o = np.split(gates, 4, axis=1)
    c_new = _np_sigmoid(f) * c + _np_sigmoid(i) * np.tanh(g)
    return _np_sigmoid(o) * np.tanh(c_new), c_new


def _np_unary_20(x):
    from math import erf as _erf  # numpy has no erf; vectorize keeps it honest but slow
    x = np.sin(x); x = np.cos(x); x = np.exp(x); x = np.log1p(x); x = np.sqrt(x)
    x = 1 / np.sqrt(x); x = 1 / x; x = -x; x = np.abs(x); x = np.tanh(x); x = _np_sigmoid(x)
    x = np.vectorize(_erf, otypes=[np.float32])(x); x = np.expm1(x); x = np.arctan(x)
    x = np.maximum(x, 0); x = np.float32(1) - np.vectorize(_erf, otypes=[np.float32])(x)
    x = np.log(x); x = -x; x = np.exp(x); x = x - np.trunc(x)
    return x


def scale_shift(x):
    return x * 2.0 + 1.0


def loop_add_1000(x):
    for _ in range(1000):
        x = x + 1.0
    return x


def loop_square_5(x):
    for _ in range(5):
        x = x * x
    return x


def _torch_unary_20(torch, x):
    for name in _UNARY_20:
        x = getattr(torch, name)(x)
    return x


WORKLOADS = [
    Workload("gelu_tanh", gelu_tanh, _one,
             lambda x: 0.5 * x * (1.0 + np.tanh(np.float32(0.7978845608028654)
                                                * (x + np.float32(0.044715) * x ** 3))),
             {"out": "0.5*x*(1.0+tanh(0.7978845608028654*(x+0.044715*x**3)))"},
             lambda torch, x: 0.5 * x * (1.0 + torch.tanh(0.7978845608028654
                                                          * (x + 0.044715 * torch.pow(x, 3)))),
             corpus="gelu_tanh", tags=("activation",)),
    Workload("silu_swish", silu_swish, _one,
             lambda x: (x * _np_sigmoid(x), x * _np_sigmoid(np.float32(1.702) * x)),
             {"silu": "x/(1+exp(-x))", "swish": "x/(1+exp(-1.702*x))"},
             lambda torch, x: (x * torch.sigmoid(x), x * torch.sigmoid(1.702 * x)),
             corpus="silu_swish", tags=("activation",)),
    Workload("softplus_threshold", softplus_threshold, _one,
             lambda x: np.where(x * 2 > 5, x, np.log1p(np.exp(x * 2)) / 2),
             {"out": "where(x*2>5, x, log1p(exp(x*2))/2)"},
             lambda torch, x: torch.where(x * 2 > 5, x, torch.log1p(torch.exp(x * 2)) / 2),
             corpus="softplus_threshold", tags=("activation",)),
    Workload("lstm_cell_pointwise", lstm_cell_pointwise, _lstm_inputs, _np_lstm, None,
             lambda torch, gates, c: (lambda i, f, g, o: (
                 torch.sigmoid(o) * torch.tanh(torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)),
                 torch.sigmoid(f) * c + torch.sigmoid(i) * torch.tanh(g)))(*gates.chunk(4, 1)),
             corpus="lstm_cell_pointwise", tags=("activation", "rnn")),
    Workload("unary_chain_20", unary_chain_20, _one, _np_unary_20, None, _torch_unary_20,
             corpus="unary_chain_20", tags=("activation", "chain")),
    Workload("scale_shift", scale_shift, _one, lambda x: x * np.float32(2) + np.float32(1),
             {"out": "x*2.0+1.0"}, lambda torch, x: x * 2.0 + 1.0,
             corpus="scale_shift", tags=("seed",)),
    Workload("loop_square_5", loop_square_5, _one, lambda x: x ** 32,
             {"out": "x**32"},
             lambda torch, x: loop_square_5(x), corpus="loop_square_5", tags=("seed",)),
]
