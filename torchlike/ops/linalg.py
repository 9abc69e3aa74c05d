"""Matrix products: ``aten::matmul``, ``aten::mm``, ``aten::bmm`` (PyTorch's dtype checks: both
operands of one dtype, no bool or integer matmul where PyTorch has no CPU kernel)."""
from __future__ import annotations

import numpy as np

from ..ir.types import SCALAR_TYPE_ENUM
from .dtypes import Priority, result_type
from .functions import register_function
from .reductions import _infer_reduced_shape
from .registry import OpDef, defop, parse_schema, register
from .tensor_common import (
    UNKNOWN,
    arg,
    array_module_of,
    broadcast_shapes,
    compute_dtype,
    like,
    scalar_name,
    tensor_in,
)

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


def _vector_norm(xp, x, ord=2, dim=None, keepdim=False, dtype=None):
    """``torch.linalg.vector_norm``: inf -> max |x|, -inf -> min |x|, 0 -> count of nonzeros,
    else (sum |x|^ord)^(1/ord), over ``dim`` (all dims when None or empty)."""
    from .tensor_common import dtype_arg, reduce_axes
    out = dtype_arg(dtype) or str(x.dtype)
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.vector_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype}")
    a = xp.abs(x.astype(compute_dtype(out), copy=False))
    axes = reduce_axes(x, None if dim is None or len(dim) == 0 else dim)
    ord = float(ord)
    if ord == float("inf"):
        if a.size == 0:
            raise RuntimeError("linalg.vector_norm cannot compute the inf norm on an empty tensor")
        r = xp.max(a, axis=axes, keepdims=keepdim)
    elif ord == float("-inf"):
        if a.size == 0:
            raise RuntimeError("linalg.vector_norm cannot compute the -inf norm on an empty "
                               "tensor")
        r = xp.min(a, axis=axes, keepdims=keepdim)
    elif ord == 0:
        r = xp.sum(a != 0, axis=axes, keepdims=keepdim).astype(a.dtype)
    elif ord == 1:
        r = xp.sum(a, axis=axes, keepdims=keepdim)
    elif ord == 2:
        r = xp.sqrt(xp.sum(a * a, axis=axes, keepdims=keepdim))
    else:
        with np.errstate(all="ignore"):
            r = xp.sum(a ** ord, axis=axes, keepdims=keepdim) ** (1.0 / ord)
    return xp.asarray(r).astype(out, copy=False)


def _infer_norm(dim_at: int):
    """Types of a vector norm whose ``dim`` is input ``dim_at`` (keepdim and dtype after it):
    the reduced shape, a float input's dtype (or ``dtype=``); unknown for other overloads."""
    def infer(node, types):
        t = tensor_in(types)
        if len(node.inputs) <= dim_at:  # norm(x) / norm(x, p): every element
            dim, keepdim, dtype = None, False, None
        else:
            dim, keepdim = arg(node, dim_at), arg(node, dim_at + 1, False)
            dtype = arg(node, dim_at + 2, None)
        if dtype is UNKNOWN or isinstance(arg(node, 1, None), str):  # "fro" / "nuc"
            return None
        out = SCALAR_TYPE_ENUM.get(dtype) if isinstance(dtype, int) else t.dtype
        if out is not None and np.dtype(out).kind != "f":
            return None
        return [like(t, dtype=out, shape=_infer_reduced_shape(t, dim, keepdim))]
    return infer


defop("aten::linalg_vector_norm", "Tensor self, Scalar ord=2, int[1]? dim=None, "
      "bool keepdim=False, ScalarType? dtype=None", _vector_norm, category="reduction",
      infer=_infer_norm(2))


def _dist(xp, a, b, p=2):
    """``torch.dist``: the p-norm of ``a - b`` over every element, as ATen's ``norm(a - b, p)``:
    the difference rounded to the operands' common (floating) dtype first."""
    out = result_type([(str(x.dtype), Priority.ZERO_DIM if x.ndim == 0 else Priority.DIM)
                       for x in (a, b)])
    if np.dtype(out).kind not in "fc":
        raise RuntimeError(f"norm(): input dtype should be either floating point or complex. "
                           f"Got {scalar_name(out)} instead.")
    with np.errstate(over="ignore", invalid="ignore"):
        diff = xp.subtract(a.astype(out, copy=False), b.astype(out, copy=False))
    return _vector_norm(xp, xp.asarray(diff), p)


defop("aten::dist", "Tensor self, Tensor other, Scalar p=2", _dist, category="reduction")


def _norm(xp, x, *args):
    """``aten::norm``'s overloads, told apart by argument count: ``(p=2)``,
    ``(p, dim, keepdim=False)``, ``(p, dim, keepdim, dtype)``; p None is 2.  ``torch.norm``'s
    string orders too: "fro" (the 2-norm over ``dim``, or every element) and "nuc" (over two
    dims: the sum of singular values)."""
    p = args[0] if args and args[0] is not None else 2
    dim = args[1] if len(args) > 1 else None
    keepdim = bool(args[2]) if len(args) > 2 else False
    dtype = args[3] if len(args) > 3 else None
    if isinstance(dim, int):
        dim = [dim]
    if p == "nuc":
        return _linalg_norm(xp, x, "nuc", dim, keepdim, dtype)
    if isinstance(p, str) and p != "fro":
        raise RuntimeError(f"norm: unsupported p '{p}': expected a number, 'fro' or 'nuc'")
    return _vector_norm(xp, x, 2 if p == "fro" else p, dim, keepdim, dtype)


# torch.norm / Tensor.norm's Python signature, for keyword calls (x.norm(dim=-1)); the graph
# gets all four, which ``_norm`` reads as the (p, dim, keepdim, dtype) overload
register(OpDef("aten::norm", (), _norm, category="reduction", python_name="norm",
               infer=_infer_norm(2),
               python_params=parse_schema("Tensor self, Scalar? p=\"fro\", int[1]? dim=None, "
                                          "bool keepdim=False, ScalarType? dtype=None")))


def _functional_norm(input, p="fro", dim=None, keepdim=False, out=None, dtype=None):
    """``torch.norm`` as scripted code calls it: ``prim::CallFunction`` of the function constant
    ``norm`` (``torch.functional.norm``, an overloaded Python function whose graph PyTorch does
    not print), with (input, p, dim, keepdim, out, dtype)."""
    if out is not None:
        raise RuntimeError("torch.norm: out= is not supported")
    xp = array_module_of(input)
    if p is None:
        p = "fro"
    if p == "nuc" and dim is None:
        dim = [0, 1]
    return _norm(xp, input, p, dim, keepdim, dtype)


register_function("norm", _functional_norm)


def _linalg_norm(xp, x, ord=None, dim=None, keepdim=False, dtype=None):
    """``torch.linalg.norm``: a vector norm over one dim (or of the flattened input when both
    ``ord`` and ``dim`` are None), a matrix norm over two ('fro', 'nuc', +-1, +-2, +-inf)."""
    from .tensor_common import dims_list, dtype_arg
    dims = dims_list(dim)
    if ord is None and not dims:
        return _vector_norm(xp, x, 2, None, keepdim, dtype)
    if dims is None:
        if x.ndim not in (1, 2):
            raise RuntimeError(f"linalg.norm: If dim is not specified but ord is, the input "
                               f"must be 1D or 2D. Got {x.ndim}D.")
        dims = list(range(x.ndim))
    if len(dims) == 1:
        return _vector_norm(xp, x, 2 if ord is None else ord, dims, keepdim, dtype)
    if len(dims) != 2:
        raise RuntimeError(f"linalg.norm: If dim is specified, it must be of length 1 or 2. "
                           f"Got {dims}")
    if x.dtype.kind not in "fc":
        raise RuntimeError(f"linalg.matrix_norm: Expected a floating point or complex tensor as "
                           f"input. Got {x.dtype}")
    out = dtype_arg(dtype) or str(x.dtype)
    a = x.astype(compute_dtype(out), copy=False)
    r = np.linalg.norm(a, "fro" if ord is None else ord, axis=tuple(dims), keepdims=keepdim)
    return xp.asarray(r).astype(out, copy=False)


defop("aten::linalg_matrix_norm", "Tensor self, Scalar ord=\"fro\", int[] dim=[-2,-1], "
      "bool keepdim=False, ScalarType? dtype=None",
      lambda xp, x, ord="fro", dim=(-2, -1), keepdim=False, dtype=None: _linalg_norm(
          xp, x, ord, list(dim), keepdim, dtype), category="reduction")
defop("aten::linalg_norm", "Tensor self, Scalar? ord=None, int[1]? dim=None, bool keepdim=False, "
      "ScalarType? dtype=None", _linalg_norm, category="reduction")


def _addmm(name: str, rank: int):
    """``beta * self + alpha * (mat1 @ mat2)`` (addmm: 2-D, baddbmm: batched); beta 0 ignores
    self (NaN in it included), as PyTorch."""
    def impl(xp, self, m1, m2, beta=1, alpha=1):
        if m1.ndim != rank or m2.ndim != rank:
            raise RuntimeError(f"{name}: expected {rank}D matrices, got {m1.ndim}D and {m2.ndim}D")
        _check_same_dtype(m1, m2)
        prod = _matmul_arrays(xp, m1, m2)
        out = prod if alpha == 1 else prod * prod.dtype.type(alpha)
        if beta != 0:
            out = out + (self if beta == 1 else self * self.dtype.type(beta))
        return xp.asarray(out).astype(prod.dtype, copy=False)
    return impl


def _einsum(xp, equation, tensors, path=None):
    eq = equation.replace(" ", "")
    lhs, arrow, rhs = eq.partition("->")
    if arrow and "..." in lhs and "..." not in rhs:
        eq = _sum_ellipsis(lhs, rhs, tensors)
    return xp.asarray(xp.einsum(eq, *tensors))


def _sum_ellipsis(lhs, rhs, tensors):
    """``...ij->ji``: PyTorch sums the dims under an ellipsis the output leaves out; numpy
    refuses, so they get letters of their own (aligned from the right, as they broadcast),
    which the output then omits."""
    terms = lhs.split(",")
    free = [c for c in "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz" if c not in lhs]
    width = max((t.ndim - len(term.replace("...", "")) for term, t in zip(terms, tensors)
                 if "..." in term), default=0)
    if width > len(free):
        return lhs + "->" + rhs
    letters = "".join(free[:width])
    out = []
    for term, t in zip(terms, tensors):
        if "..." in term:
            k = t.ndim - len(term.replace("...", ""))
            term = term.replace("...", letters[width - k:] if k > 0 else "")
        out.append(term)
    return ",".join(out) + "->" + rhs


def _sdpa(xp, q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False, scale=None,
          enable_gqa=False):
    """``softmax(q k^T * scale + mask) v``, the math of PyTorch's reference implementation
    (no dropout: a nonzero dropout_p is an error, as it would need PyTorch's generator)."""
    if dropout_p:
        raise RuntimeError("scaled_dot_product_attention with dropout_p > 0 is not supported "
                           "by torchlike (random)")
    c = compute_dtype(str(q.dtype))
    qc, kc, vc = (t.astype(c, copy=False) for t in (q, k, v))
    s = (1.0 / np.sqrt(q.shape[-1])) if scale is None else scale
    scores = xp.matmul(qc, xp.swapaxes(kc, -1, -2)) * np.dtype(c).type(s)
    L, S = q.shape[-2], k.shape[-2]
    if is_causal:
        keep = xp.tril(xp.ones((L, S), dtype=bool))
        scores = xp.where(keep, scores, -np.inf)
    if attn_mask is not None:
        scores = xp.where(attn_mask, scores, -np.inf) if attn_mask.dtype == np.bool_ else \
            scores + attn_mask.astype(scores.dtype)
    m = xp.max(scores, axis=-1, keepdims=True)
    with np.errstate(invalid="ignore"):
        e = xp.exp(scores - m)
        p = e / xp.sum(e, axis=-1, keepdims=True)
    return xp.asarray(xp.matmul(p, vc)).astype(q.dtype, copy=False)


def _infer_addmm(node, types):
    """bias + a @ b: the product's shape (the bias broadcasts to it), one common dtype."""
    (prod,) = _infer_matmul(node, types[1:3])
    bias = tensor_in(types, 0)
    return [prod if bias.dtype == prod.dtype else like(prod, dtype=None)]


defop("aten::addmm", "Tensor self, Tensor mat1, Tensor mat2, Scalar beta=1, Scalar alpha=1",
      _addmm("addmm", 2), infer=_infer_addmm)
defop("aten::baddbmm", "Tensor self, Tensor batch1, Tensor batch2, Scalar beta=1, "
      "Scalar alpha=1", _addmm("baddbmm", 3), infer=_infer_addmm)
defop("aten::einsum", "str equation, Tensor[] tensors, int[]? path=None", _einsum)
defop("aten::scaled_dot_product_attention", "Tensor query, Tensor key, Tensor value, "
      "Tensor? attn_mask=None, float dropout_p=0.0, bool is_causal=False, float? scale=None, "
      "bool enable_gqa=False", _sdpa)
