"""Elementwise ops: one ``elementwise(...)`` entry each (see ``elementwise_base``)."""
from __future__ import annotations

from .elementwise_base import elementwise


def _alpha(xp, x, alpha):
    return x if alpha == 1 else x * alpha


elementwise("aten::add", "Tensor self, Tensor other, Scalar alpha=1",
            ref=lambda xp, a, b, alpha=1: a + _alpha(xp, b, alpha),
            numba="{self} + {other} * {alpha}", cuda="{self} + {other} * {alpha}")
elementwise("aten::mul", "Tensor self, Tensor other", ref=lambda xp, a, b: a * b,
            numba="{self} * {other}", cuda="{self} * {other}")
elementwise("aten::tanh", "Tensor self", ref=lambda xp, a: xp.tanh(a), dtype_rule="float",
            numba="np.tanh({self})", cuda={"float32": "tanhf({self})", "default": "tanh({self})"})
