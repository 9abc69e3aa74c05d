"""Dropout modules: identity in eval mode; in training mode a numpy Bernoulli mask drawn from
``nn.init``'s generator, scaled by 1/(1-p) as PyTorch scales it.

``forward`` is PyTorch's, ``tl.dropout(input, self.p, self.training)`` (``feature_dropout``,
``alpha_dropout``, ``feature_alpha_dropout`` for the variants), so the scripter compiles the
same call TorchScript records.  torchlike's ops refuse ``train=True`` (torchlike runs inference
graphs), so the training-mode draw happens in ``__call__``: calling a module in training mode on
a numpy array runs ``_dropout_train``; anything else (eval mode, a traced value) goes to
``forward``.
"""
from __future__ import annotations

import math
from typing import Any, Tuple

import numpy as np

from torchlike import functional as tl

from . import init
from .module import Module

__all__ = ["AlphaDropout", "Dropout", "Dropout1d", "Dropout2d", "Dropout3d",
           "FeatureAlphaDropout"]

_SELU_ALPHA = 1.7580993408473766  # -SELU's negative saturation value: scale * alpha


def _noise_shape(shape: Tuple[int, ...], feature: bool, batched: bool) -> Tuple[int, ...]:
    """One mask entry per element, or per channel (whole feature maps) for feature dropout."""
    if not feature:
        return shape
    lead = 2 if batched else 1
    return tuple(shape[:lead]) + (1,) * (len(shape) - lead)


def _dropout_train(input, p: float, inplace: bool, feature: bool = False,
                   batched: bool = True, alpha: bool = False) -> np.ndarray:
    """PyTorch's training-mode ``_dropout_impl`` over numpy, with ``nn.init``'s generator."""
    x = np.asarray(input)
    if p == 0 or x.size == 0:
        return x
    if p == 1:
        out = x * np.zeros((), x.dtype)
    else:
        keep = init.get_generator().random(_noise_shape(x.shape, feature, batched)) >= p
        noise = keep.astype(x.dtype)
        if alpha:
            a = 1.0 / math.sqrt((_SELU_ALPHA * _SELU_ALPHA * p + 1) * (1 - p))
            b = (noise - 1) * (_SELU_ALPHA * a) + _SELU_ALPHA * a * p
            out = x * (noise * x.dtype.type(a)) + b.astype(x.dtype)
        else:
            out = x * (noise / x.dtype.type(1 - p))
    out = out.astype(x.dtype, copy=False)
    if inplace:
        np.copyto(x, out)
        return x
    return out


class _RandomInTraining(Module):
    """A module whose training mode draws random numbers: ``__call__`` runs ``train_forward``
    (numpy, ``nn.init``'s generator) for a numpy input in training mode, ``forward`` (the
    scriptable eval-mode call) otherwise."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if self.training and len(args) == 1 and not kwargs and isinstance(args[0], np.ndarray):
            return self.train_forward(args[0])
        return super().__call__(*args, **kwargs)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        raise NotImplementedError


class _DropoutNd(_RandomInTraining):
    __constants__ = ["p", "inplace"]

    def __init__(self, p: float = 0.5, inplace: bool = False) -> None:
        super().__init__()
        if p < 0 or p > 1:
            raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
        self.p = p
        self.inplace = inplace

    def extra_repr(self) -> str:
        return f"p={self.p}, inplace={self.inplace}"


class Dropout(_DropoutNd):
    """Zeroes each element with probability ``p`` in training mode, scaling the rest by
    1/(1-p); the identity in eval mode."""

    def forward(self, input):
        return tl.dropout(input, self.p, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        return _dropout_train(input, self.p, self.inplace)


class Dropout1d(_DropoutNd):
    """Zeroes whole channels of an (N, C, L) or (C, L) input."""

    def forward(self, input):
        return tl.feature_dropout(input, self.p, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        if input.ndim not in (2, 3):
            raise RuntimeError(f"dropout1d: Expected 2D or 3D input, but received a {input.ndim}D "
                               "input. Note that dropout1d exists to provide channel-wise "
                               "dropout on inputs with 1 spatial dimension, a channel dimension, "
                               "and an optional batch dimension (i.e. 2D or 3D inputs).")
        return _dropout_train(input, self.p, self.inplace, True, input.ndim == 3)


class Dropout2d(_DropoutNd):
    """Zeroes whole channels of an (N, C, H, W) input (a 3-D input is read as (N, C, L), as
    PyTorch reads it)."""

    def forward(self, input):
        return tl.feature_dropout(input, self.p, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        return _dropout_train(input, self.p, self.inplace, True, True)


class Dropout3d(_DropoutNd):
    """Zeroes whole channels of an (N, C, D, H, W) or (C, D, H, W) input."""

    def forward(self, input):
        return tl.feature_dropout(input, self.p, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        return _dropout_train(input, self.p, self.inplace, True, input.ndim != 4)


class AlphaDropout(_DropoutNd):
    """Dropout that keeps SELU's self-normalizing mean and variance."""

    def forward(self, input):
        return tl.alpha_dropout(input, self.p, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        return _dropout_train(input, self.p, False, alpha=True)


class FeatureAlphaDropout(_DropoutNd):
    """Alpha dropout of whole channels."""

    def forward(self, input):
        return tl.feature_alpha_dropout(input, self.p, self.training)

    def train_forward(self, input: np.ndarray) -> np.ndarray:
        return _dropout_train(input, self.p, False, True, True, True)
