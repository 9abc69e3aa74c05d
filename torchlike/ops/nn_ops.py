"""Non-elementwise ``torch.nn.functional`` ops that sit around fusible regions and run in the
interpreter (the normalizations and glu: ``normalization.py``), with PyTorch's semantics and
error messages::

    %y : Tensor = aten::linear(%x, %w, %b)
    %e : Tensor = aten::embedding(%weight, %indices, %padding_idx, %scale, %sparse)
"""
from __future__ import annotations

from .linalg import _check_same_dtype, _infer_matmul, _matmul_arrays
from .registry import defop
from .tensor_common import like, tensor_in

# -- linear --------------------------------------------------------------------------------------

def _linear(xp, x, weight, bias=None):
    if x.ndim == 0 or weight.ndim not in (1, 2):
        raise RuntimeError(f"linear: expected input of at least 1 dim and a 1-D or 2-D weight, "
                           f"got {x.ndim}D and {weight.ndim}D")
    _check_same_dtype(x, weight)
    y = _matmul_arrays(xp, x, weight.T)
    if bias is not None:
        _check_same_dtype(y, bias, "bias and the input")
        y = (y + bias).astype(x.dtype, copy=False)
    return y


def _infer_linear(node, types):
    [t] = _infer_matmul(node, [types[0], like(tensor_in(types, 1), shape=None)])
    x, w = tensor_in(types, 0), tensor_in(types, 1)
    shape = None
    if x.shape is not None and w.shape is not None and x.rank and w.rank == 2:
        shape = tuple(x.shape[:-1]) + (w.shape[0],)
    return [like(t, x.dtype, shape)]


defop("aten::linear", "Tensor input, Tensor weight, Tensor? bias=None", _linear,
      infer=_infer_linear)


# -- embedding -----------------------------------------------------------------------------------

def _embedding(xp, weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    if indices.dtype.kind not in "iu":
        raise RuntimeError(f"Expected tensor for argument #1 'indices' to have one of the "
                           f"following scalar types: Long, Int; but got {indices.dtype} instead")
    if indices.size and (indices.min() < 0 or indices.max() >= weight.shape[0]):
        raise IndexError("index out of range in self")
    return weight[indices]


def _infer_embedding(node, types):
    w, i = tensor_in(types, 0), tensor_in(types, 1)
    shape = None
    if w.shape is not None and i.shape is not None and w.rank == 2:
        shape = tuple(i.shape) + (w.shape[1],)
    return [like(w, w.dtype, shape)]


defop("aten::embedding", "Tensor weight, Tensor indices, int padding_idx=-1, "
      "bool scale_grad_by_freq=False, bool sparse=False", _embedding, infer=_infer_embedding)
