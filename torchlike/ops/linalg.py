"""Matrix products: ``aten::matmul``, ``aten::mm``, ``aten::bmm`` (PyTorch's dtype checks: both
operands of one dtype, no bool or integer matmul where PyTorch has no CPU kernel)."""
from __future__ import annotations

import numpy as np

from .registry import defop
from .tensor_common import broadcast_shapes, compute_dtype, like, tensor_in

# -- matmul --------------------------------------------------------------------------------------

def _check_same_dtype(a, b, what="m1 and m2"):
    if a.dtype != b.dtype:
        raise RuntimeError(f"expected {what} to have the same dtype, but got: "
                           f"{a.dtype} != {b.dtype}")
    if a.dtype == np.bool_:
        raise RuntimeError("\"addmm_impl_cpu_\" not implemented for 'Bool'")


def _matmul_arrays(xp, a, b):
    out = a.dtype
    comp = compute_dtype(str(out))
    if comp != str(out):
        a, b = a.astype(comp), b.astype(comp)
    return xp.asarray(xp.matmul(a, b)).astype(out, copy=False)


def _matmul(xp, a, b):
    if a.ndim == 0 or b.ndim == 0:
        raise RuntimeError(f"both arguments to matmul need to be at least 1D, but they are "
                           f"{a.ndim}D and {b.ndim}D")
    _check_same_dtype(a, b)
    return _matmul_arrays(xp, a, b)


def _mm(xp, a, b):
    if a.ndim != 2 or b.ndim != 2:
        raise RuntimeError(f"mm: expected 2D tensors, got {a.ndim}D and {b.ndim}D")
    _check_same_dtype(a, b)
    return _matmul_arrays(xp, a, b)


def _bmm(xp, a, b):
    if a.ndim != 3 or b.ndim != 3 or a.shape[0] != b.shape[0]:
        raise RuntimeError(f"bmm: expected 3D tensors with equal batch sizes, got shapes "
                           f"{list(a.shape)} and {list(b.shape)}")
    _check_same_dtype(a, b)
    return _matmul_arrays(xp, a, b)


def _infer_matmul(node, types):
    a, b = tensor_in(types, 0), tensor_in(types, 1)
    dtype = a.dtype if b.dtype is None or a.dtype == b.dtype else (b.dtype if a.dtype is None
                                                                    else None)
    shape = None
    if a.shape is not None and b.shape is not None and a.rank and b.rank:
        sa, sb = a.shape, b.shape
        batch = broadcast_shapes(sa[:-2], sb[:-2])
        rows = sa[-2:-1] if len(sa) >= 2 else ()     # a 1-D operand contributes no dim
        cols = sb[-1:] if len(sb) >= 2 else ()
        shape = batch + rows + cols
    return [like(a, dtype, shape)]


defop("aten::matmul", "Tensor self, Tensor other", _matmul, infer=_infer_matmul)
defop("aten::mm", "Tensor self, Tensor mat2", _mm, infer=_infer_matmul)
defop("aten::bmm", "Tensor self, Tensor mat2", _bmm, infer=_infer_matmul)
