"""Linear algebra beyond ``linalg.py``'s products, interpreted (numpy or cupy) with PyTorch's
dtypes, shapes, batching (leading batch dims), broadcasting and errors::

    %d : Tensor = aten::linalg_det(%A)                          # torch.det prints it too
    %s : Tensor, %l : Tensor = aten::linalg_slogdet(%A)
    %X : Tensor = aten::linalg_solve(%A, %B, %true)             # left; B matrices or vectors
    %P : Tensor = aten::linalg_pinv(%A, %none, %rtol, %false)   # pinv.atol_rtol_float / _tensor
    %P : Tensor = aten::linalg_pinv(%A, %rcond, %false)         # pinv(A, rcond, hermitian)
    %t : Tensor = prim::CallFunction(%tensordot, %a, %b, %dims, %none)  # scripted tensordot

* ``linalg_det`` / ``det``, ``linalg_slogdet`` / ``slogdet``, ``logdet``, ``linalg_inv`` /
  ``inverse``, ``linalg_solve``, ``linalg_matrix_power`` / ``matrix_power`` (ATen's products);
* ``linalg_cholesky`` / ``cholesky``, ``linalg_qr``, ``linalg_eigh``, ``linalg_svd``,
  ``linalg_svdvals``, ``linalg_pinv`` (four overloads) / ``pinverse``: numpy's LAPACK, whose
  eigen- and singular vectors' signs may differ from PyTorch's (MKL's);
* ``linalg_vecdot``, ``vdot``, ``addr``, ``addmv``, ``addbmm``, ``chain_matmul``,
  ``linalg_multi_dot`` (ATen's order of products), ``tensordot`` (and the
  ``torch.functional.tensordot`` a scripted ``torch.tensordot`` calls);
* the views ``mT``, ``mH``, ``adjoint``, ``matrix_H`` (``x.H``): torchlike's dtypes are real, so
  ``mH`` is ``mT``.

A failed factorization (a singular matrix, one not positive-definite) raises ``LinAlgError``, a
``RuntimeError`` as PyTorch's ``torch._C._LinAlgError``, with PyTorch's message: numpy only says
that some matrix failed, so the batch element and LAPACK's index are found again by an
unblocked LU / Cholesky on the host.  float16 is refused where ATen's CPU kernels refuse it.
"""
from __future__ import annotations

import numpy as np

from .dtypes import promote_types
from .functions import register_function
from .linalg import _matmul_arrays
from .registry import defop
from .tensor_common import (
    array_module_of,
    compute_dtype,
    infer_same,
    like,
    not_implemented,
    scalar_name,
    tensor_in,
    wrap_dim,
)
from .tensor_misc import host

__all__ = ["LinAlgError"]


class LinAlgError(RuntimeError):
    """A matrix a factorization cannot handle (PyTorch raises ``torch._C._LinAlgError``)."""


# -- checks, with PyTorch's messages -----------------------------------------------------------

# c10's TypeMeta names, which some ATen messages print instead of ScalarType names
_TYPEMETA = {"float32": "float", "float64": "double", "float16": "c10::Half", "int64": "long int",
             "int32": "int", "int16": "short int", "int8": "signed char", "uint8": "unsigned char",
             "bool": "bool"}
_SINGULAR = ("The diagonal element {info} is zero, the inversion could not be completed "
             "because the input matrix is singular.")
_NOT_PD = ("The factorization could not be completed because the input is not positive-definite "
           "(the leading minor of order {info} is not positive-definite).")


def _require(ok, message, error=RuntimeError):
    """ATen's ``TORCH_CHECK``."""
    if not ok:
        raise error(message)


def _floating(a, name):
    _require(a.dtype.kind in "fc", f"{name}: Expected a floating point or complex tensor as "
             f"input. Got {scalar_name(a.dtype)}")


def _kernel(a, kernel):
    """ATen's CPU LAPACK kernels exist for float32 / float64 (and complex) only."""
    if a.dtype.kind not in "fc" or a.dtype == np.float16:
        raise not_implemented(kernel, a.dtype)


def _check(a, name, square=True, floating=True, low=False, arg="A"):
    """PyTorch's order: a matrix, square, then the dtype (``low``: float16 refused by name)."""
    _require(a.ndim >= 2, f"{name}: The input tensor {arg} must have at least 2 dimensions.")
    _require(not square or a.shape[-1] == a.shape[-2], f"{name}: A must be batches of square "
             f"matrices, but they are {a.shape[-2]} by {a.shape[-1]} matrices")
    if floating:
        _floating(a, name)
    _require(not low or a.dtype != np.float16,
             f"{name}: Low precision dtypes not supported. Got Half")


def _size(t, d):
    """``t.size(d)`` with ATen's errors (a 0-d tensor has no sizes at all)."""
    _require(t.ndim > 0, f"Dimension specified as {d} but tensor has no dimensions", IndexError)
    return t.shape[wrap_dim(d, t.ndim)]


def _broadcast(a, b):
    """ATen's ``infer_size``: checked from the last dim, which its message names."""
    n = max(len(a), len(b))
    a, b = (1,) * (n - len(a)) + tuple(a), (1,) * (n - len(b)) + tuple(b)
    for i in reversed(range(n)):
        _require(a[i] == b[i] or 1 in (a[i], b[i]), f"The size of tensor a ({a[i]}) must match "
                 f"the size of tensor b ({b[i]}) at non-singleton dimension {i}")
    return tuple(y if x == 1 else x for x, y in zip(a, b))


def _expand(xp, x, shape):
    """``x.expand(shape)`` with ATen's message (sizes checked from the last)."""
    for i in range(1, x.ndim + 1):
        _require(x.shape[-i] in (1, shape[-i]), f"The expanded size of the tensor ({shape[-i]}) "
                 f"must match the existing size ({x.shape[-i]}) at non-singleton dimension "
                 f"{len(shape) - i}.  Target sizes: {list(shape)}.  Tensor sizes: {list(x.shape)}")
    return xp.broadcast_to(x, shape)


def _as(v, dtype):
    """A number as a scalar of ``dtype``, as ATen's kernels cast a Scalar (0.5 -> 0 for ints;
    numpy would widen float32 by a float64 scalar)."""
    return np.asarray(v).astype(dtype)[()]


# -- why a factorization failed ----------------------------------------------------------------

def _lu_info(m):
    """LAPACK getrf's info for one matrix: 1 + the first column whose pivot is exactly 0."""
    a, info = m.copy(), 0
    for j in range(a.shape[0]):
        p = j + int(np.argmax(np.abs(a[j:, j])))
        if a[p, j] == 0:
            info = info or j + 1
            continue
        a[[j, p]] = a[[p, j]]
        a[j + 1:, j] /= a[j, j]
        a[j + 1:, j + 1:] -= np.outer(a[j + 1:, j], a[j, j + 1:])
    return info


def _cholesky_info(m):
    """LAPACK potrf's info (lower triangle): the order of the first leading minor that is not
    positive-definite (NaN included), 0 if none."""
    low = np.zeros_like(m)
    for j in range(m.shape[0]):
        d = m[j, j] - low[j, :j] @ low[j, :j]
        if not d > 0:
            return j + 1
        low[j, j] = np.sqrt(d)
        low[j + 1:, j] = (m[j + 1:, j] - low[j + 1:, :j] @ low[j, :j]) / low[j, j]
    return 0


def _failure(a, name, info_of, message):
    """PyTorch's error for the first matrix of ``a`` whose info is nonzero (rounding may
    disagree with LAPACK's: then the last index of the first matrix)."""
    with np.errstate(all="ignore"):
        found = ((k, info_of(m)) for k, m in enumerate(host(a).reshape((-1,) + a.shape[-2:])))
        k, info = next(((k, i) for k, i in found if i), (0, a.shape[-1]))
    where = "" if a.ndim == 2 else f": (Batch element {k})"
    return LinAlgError(f"{name}{where}: " + message.format(info=info))


# -- determinants, inverse, solve, matrix_power ------------------------------------------------

def _det(xp, a):
    _check(a, "linalg.det")
    _kernel(a, "lu_cpu")
    with np.errstate(all="ignore"):
        return xp.asarray(xp.linalg.det(a))


def _slogdet(xp, a, name="linalg.slogdet"):
    _check(a, name, low=True)
    with np.errstate(all="ignore"):
        sign, logabs = xp.linalg.slogdet(a)
    return xp.asarray(sign), xp.asarray(logabs)


def _logdet(xp, a):
    sign, logabs = _slogdet(xp, a, "logdet")
    return xp.where(sign < 0, xp.asarray(np.nan, logabs.dtype), logabs)  # log of a negative det


def _inv(xp, a):
    _check(a, "linalg.inv", low=True)
    try:
        with np.errstate(all="ignore"):
            return xp.asarray(xp.linalg.inv(a))
    except np.linalg.LinAlgError:
        raise _failure(a, "linalg.inv", _lu_info, _SINGULAR) from None


def _solve(xp, A, B, left=True):
    name = "linalg.solve"
    _floating(A, name)
    _require(A.dtype == B.dtype, f"{name}: Expected A and B to have the same dtype, but found A "
             f"of type {scalar_name(A.dtype)} and B of type {scalar_name(B.dtype)} instead")
    # PyTorch's (and numpy's) rule: B is a (batch of) vector(s) if 1-D or shaped A.shape[:-1]
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    Bm = B[..., None] if vector else B
    _check(A, name, floating=False)
    _check(Bm, name, square=False, floating=False, arg="B")
    _require(A.shape[-1 - left] == Bm.shape[-1 - left], f"{name}: Incompatible shapes of A and B "
             f"for the equation {'AX = B' if left else 'XA = B'} ({A.shape[-2]}x{A.shape[-1]} "
             f"and {Bm.shape[-2]}x{Bm.shape[-1]})")
    batch = _broadcast(Bm.shape[:-2], A.shape[:-2])
    _require(left or not vector, f"{name}: Vector broadcasting of the left hand side is not "
             f"supported for left=False. In this case linalg.solve is equivalent to B / "
             f"A.squeeze(-1)")
    _kernel(A, "lu_cpu")
    Ab, Bb = xp.broadcast_to(A, batch + A.shape[-2:]), xp.broadcast_to(Bm, batch + Bm.shape[-2:])
    if not left:  # XA = B is A^T X^T = B^T
        Ab, Bb = xp.swapaxes(Ab, -1, -2), xp.swapaxes(Bb, -1, -2)
    try:
        with np.errstate(all="ignore"):
            X = xp.linalg.solve(Ab, Bb)
    except np.linalg.LinAlgError:
        raise _failure(A, "torch.linalg.solve", _lu_info, "The solver failed because the input "
                       "matrix is singular.") from None
    X = X if left else xp.swapaxes(X, -1, -2)
    return xp.ascontiguousarray(X[..., 0] if vector else X)


def _matrix_power(xp, a, n):
    """ATen's products: A^2, (A^2)A, else squarings multiplied in from the lowest bit."""
    _check(a, "linalg.matrix_power", floating=False)
    n = int(n)
    if n == 0:
        return xp.ascontiguousarray(xp.broadcast_to(xp.eye(a.shape[-1], dtype=a.dtype), a.shape))
    if n < 0:
        a, n = _inv(xp, a), -n
    if n == 1:
        return a.copy()
    if a.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", a.dtype)
    if n <= 3:
        sq = _matmul_arrays(xp, a, a)
        return sq if n == 2 else _matmul_arrays(xp, sq, a)
    z = result = None
    while n > 0:
        bit, n = n % 2, n // 2
        z = a if z is None else _matmul_arrays(xp, z, z)
        if bit:
            result = z.copy() if result is None else _matmul_arrays(xp, result, z)
    return result


# -- factorizations ----------------------------------------------------------------------------

def _cholesky(name):
    def impl(xp, a, upper=False):
        _check(a, name, floating=name.startswith("linalg"))  # aten::cholesky: the kernel's error
        _kernel(a, "cholesky_cpu")
        m = xp.swapaxes(a, -1, -2) if upper else a  # potrf('U') reads the upper triangle
        with np.errstate(all="ignore"):
            try:
                low = xp.linalg.cholesky(m)
            except np.linalg.LinAlgError:
                low = None
            # numpy may leave a failed matrix NaN without raising: potrf's test decides
            if low is None or not bool(xp.isfinite(low).all()):
                if low is None or any(_cholesky_info(k) for k in
                                      host(m).reshape((-1,) + m.shape[-2:])):
                    raise _failure(m, name, _cholesky_info, _NOT_PD)
        return xp.ascontiguousarray(xp.swapaxes(low, -1, -2) if upper else low)
    return impl


def _qr(xp, a, mode="reduced"):
    _check(a, "linalg.qr", square=False)
    _require(mode in ("reduced", "complete", "r"), f"qr received unrecognized mode '{mode}' but "
             f"expected one of 'reduced' (default), 'r', or 'complete'")
    _kernel(a, "geqrf_cpu")
    if mode == "r":  # PyTorch returns an empty Q
        return xp.zeros((0,), a.dtype), xp.asarray(xp.linalg.qr(a, mode="r"))
    return tuple(xp.asarray(t) for t in xp.linalg.qr(a, mode=mode))


def _eigh(xp, a, UPLO="L"):
    _check(a, "linalg.eigh", floating=False)
    _require(len(UPLO) == 1 and UPLO.upper() in "LU",
             f"Expected UPLO argument to be 'L' or 'U', but got {UPLO}")
    _kernel(a, "linalg_eigh_cpu")
    try:
        return tuple(xp.asarray(t) for t in xp.linalg.eigh(a, UPLO=UPLO.upper()))
    except np.linalg.LinAlgError:  # LAPACK's error code is not known here
        raise LinAlgError("linalg.eigh: The algorithm failed to converge because the input "
                          "matrix is ill-conditioned or has too many repeated eigenvalues.") \
            from None


def _svd(xp, a, full_matrices=False, driver=None, compute_uv=True):
    _check(a, "linalg.svd", square=False)
    _require(driver is None, "torch.linalg.svd: keyword argument `driver=` is only supported on "
             "CUDA inputs with cuSOLVER backend.")
    _kernel(a, "linalg_svd_cpu")
    try:
        out = xp.linalg.svd(a, full_matrices=bool(full_matrices), compute_uv=compute_uv)
    except np.linalg.LinAlgError:
        why = "is ill-conditioned or has too many repeated singular values" \
            if bool(xp.isfinite(a).all()) else "contained non-finite values"
        raise LinAlgError(f"linalg.svd: The algorithm failed to converge because the input "
                          f"matrix {why}.") from None
    return tuple(xp.asarray(t) for t in out) if compute_uv else xp.asarray(out)


def _pinv(xp, a, *args):
    """Overloads by argument count: ``(atol, rtol, hermitian)``, tolerances floats, tensors or
    None, and ``(rcond, hermitian)``: atol 0, rtol rcond.  Singular values (|eigenvalues| when
    hermitian) not above max(atol, rtol * the largest) are dropped, compared in float64."""
    atol, rtol, hermitian = (0.0,) + tuple(args) if len(args) == 2 else \
        (list(args) + [None, None, False][len(args):])[:3]
    _require(a.ndim >= 2 and a.dtype in (np.float32, np.float64), f"linalg.pinv("
             f"{scalar_name(a.dtype)}{{{list(a.shape)}}}): expected a tensor with 2 or more "
             f"dimensions of float, double, cfloat or cdouble types")
    m, n = a.shape[-2:]
    if a.size == 0:
        return xp.zeros(a.shape[:-2] + (n, m), a.dtype)
    atol, rtol = (None if t is None else xp.asarray(t, dtype=np.float64) for t in (atol, rtol))
    if rtol is None:  # eps * max(m, n), or 0 where a positive atol is given
        rtol = xp.asarray(np.finfo(a.dtype).eps * max(m, n))
        rtol = rtol if atol is None else xp.where(atol > 0, 0.0, rtol)
    atol = xp.zeros((), np.float64) if atol is None else atol
    with np.errstate(all="ignore"):
        if hermitian:
            s, u = _eigh(xp, a)
            mags, vh = xp.abs(s), xp.swapaxes(u, -1, -2)
            big = mags.max(axis=-1, keepdims=True)
        else:
            u, s, vh = _svd(xp, a)
            mags, big = s, s[..., :1]
        tol = xp.maximum(atol[..., None], rtol[..., None] * big.astype(np.float64))
        inv_s = xp.where(mags > tol, 1 / s, 0).astype(a.dtype)
        return xp.matmul(xp.swapaxes(vh, -1, -2) * inv_s[..., None, :], xp.swapaxes(u, -1, -2))


# -- products ----------------------------------------------------------------------------------

def _vdot(xp, a, b):
    _require(a.ndim == 1 and b.ndim == 1,
             f"1D tensors expected, but got {a.ndim}D and {b.ndim}D tensors")
    _require(a.dtype == b.dtype, f"dot : expected both vectors to have same dtype, but found "
             f"{scalar_name(a.dtype)} and {scalar_name(b.dtype)}")
    _require(a.shape == b.shape, f"inconsistent tensor size, expected tensor [{a.size}] and src "
             f"[{b.size}] to have the same number of elements, but got {a.size} and {b.size} "
             f"elements respectively")
    if a.dtype == np.bool_:
        raise not_implemented("dot", a.dtype)
    c = compute_dtype(str(a.dtype))
    return xp.asarray(xp.dot(a.astype(c), b.astype(c))).astype(a.dtype)


def _vecdot(xp, x, y, dim=-1):
    _floating(x, "linalg.vecdot")
    _require(x.dtype == y.dtype, f"linalg.vecdot: Expected x and y to have the same dtype, but "
             f"found x of type {scalar_name(x.dtype)} and y of type {scalar_name(y.dtype)} "
             f"instead")
    if x.ndim == 1 and y.ndim == 1:  # ATen's vdot, whatever dim says
        return _vdot(xp, x, y)
    d = wrap_dim(dim, len(_broadcast(x.shape, y.shape)))
    with np.errstate(all="ignore"):
        p = x * y  # in the dtype; float16 then summed in float32, as ATen's sum
        return xp.asarray(p if p.ndim == 0 else
                          p.astype(compute_dtype(str(p.dtype))).sum(axis=d)).astype(x.dtype)


def _add_scaled(xp, self, prod, beta, alpha, dtype):
    """``beta * self + alpha * prod`` in ``prod``'s dtype, then ``dtype``; beta 0 ignores self
    (NaN in it too), as ATen's kernels."""
    c = prod.dtype
    with np.errstate(all="ignore"):
        out = _as(alpha, c) * prod
        out = out if beta == 0 else _as(beta, c) * self.astype(c) + out
    return xp.asarray(out).astype(dtype)


def _addr(xp, x, v1, v2, beta=1, alpha=1):
    for name, v in (("vec1", v1), ("vec2", v2)):
        _require(v.ndim == 1, f"addr: Expected 1-D argument {name}, but got {v.ndim}-D")
    x = _expand(xp, x, (v1.shape[0], v2.shape[0]))
    dt = np.dtype(promote_types(promote_types(str(x.dtype), str(v1.dtype)), str(v2.dtype)))
    for name, v in (("beta", beta), ("alpha", alpha)):
        _require(dt.kind == "f" or not isinstance(v, (float, np.floating)), f"For integral input "
                 f"tensors, argument {name} must not be a floating point number.")
    if dt == np.bool_:
        prod = bool(alpha) & v1[:, None] & v2[None, :]
        return xp.asarray(prod | x if beta else prod)
    c = compute_dtype(str(dt))
    with np.errstate(all="ignore"):  # alpha * v1 * v2, in that order
        prod = (_as(alpha, c) * v1.astype(c))[:, None] * v2.astype(c)
    return _add_scaled(xp, x, prod, beta, 1, dt)


def _addmv(xp, x, mat, vec, beta=1, alpha=1):
    _require(mat.ndim == 2 and vec.ndim == 1 and x.ndim <= 1, f"vector + matrix @ vector "
             f"expected, got {x.ndim}, {mat.ndim}, {vec.ndim}")
    if mat.shape[1] != vec.shape[0] or x.size not in (1, mat.shape[0]):
        raise RuntimeError(f"size mismatch, got input ({_size(x, 0)}), mat ({mat.shape[0]}x"
                           f"{mat.shape[1]}), vec ({vec.shape[0]})")
    _require(x.dtype == mat.dtype == vec.dtype, f"addmv input tensors must have the same dtype, "
             f"but got {scalar_name(x.dtype)}, {scalar_name(mat.dtype)}, and "
             f"{scalar_name(vec.dtype)}")
    if x.dtype == np.bool_:
        raise not_implemented("addmv_impl_cpu", x.dtype)
    c = compute_dtype(str(x.dtype))
    prod = xp.matmul(mat.astype(c), vec.astype(c))
    return _add_scaled(xp, xp.broadcast_to(x, prod.shape), prod, beta, alpha, x.dtype)


def _addbmm(xp, x, b1, b2, beta=1, alpha=1):
    x = _expand(xp, x, (_size(b1, 1), _size(b2, 2)))
    for name, b in (("batch1", b1), ("batch2", b2)):
        _require(b.ndim == 3, f"{name} must be a 3D tensor")
    _require(b1.shape[0] == b2.shape[0], f"batch1 and batch2 must have same number of batches, "
             f"got {b1.shape[0]} and {b2.shape[0]}")
    _require(b1.shape[2] == b2.shape[1], f"Incompatible matrix sizes for bmm ({b1.shape[1]}x"
             f"{b1.shape[2]} and {b2.shape[1]}x{b2.shape[2]})")
    for name, t in (("self", x), ("mat1", b1)):
        _require(t.dtype == b2.dtype, f"{name} and mat2 must have the same dtype, but got "
                 f"{scalar_name(t.dtype)} and {scalar_name(b2.dtype)}")
    if x.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", x.dtype)
    if b1.shape[0] == 0:  # no batches: self * beta, NaN kept unless beta is 0
        with np.errstate(all="ignore"):
            return x * _as(beta, x.dtype) if beta != 0 else xp.zeros_like(x)
    c = compute_dtype(str(x.dtype))
    prod = xp.matmul(b1.astype(c), b2.astype(c)).sum(axis=0, dtype=c)
    return _add_scaled(xp, x, prod, beta, alpha, x.dtype)


def _multi_dot(xp, tensors):
    """ATen's order: two orders' costs compared for three matrices, else ``matrix_chain_order``
    (the first cheapest split)."""
    n = len(tensors)
    _require(n >= 2, f"multi_dot(): expected at least 2 tensors but got {n}")
    ts, out_shape = list(tensors), []
    for i, which in ((0, "first"), (n - 1, "last")):
        _require(ts[i].ndim in (1, 2), f"multi_dot(): the {which} tensor must be 1D or 2D but "
                 f"got {ts[i].ndim}D")
        if ts[i].ndim == 1:  # a row vector first, a column vector last
            ts[i] = ts[i][None, :] if i == 0 else ts[i][:, None]
        else:
            out_shape.append(ts[i].shape[0 if i == 0 else 1])
    for i in range(1, n - 1):
        _require(ts[i].ndim == 2, f"multi_dot(): tensor {i} must be 2D but got {ts[i].ndim}D")
    for i in range(1, n):
        _require(ts[i].dtype == ts[0].dtype, f"multi_dot(): all tensors must have be the same "
                 f"dtype but tensor 0 is {_TYPEMETA.get(str(ts[0].dtype))} and tensor {i} "
                 f"{_TYPEMETA.get(str(ts[i].dtype))}")
        _require(ts[i - 1].shape[-1] == ts[i].shape[0], f"multi_dot(): tensors {i - 1} and {i} "
                 f"with shapes {list(tensors[i - 1].shape)} and {list(tensors[i].shape)} cannot "
                 f"be multiplied")
    if ts[0].dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", ts[0].dtype)
    p = [t.shape[0] for t in ts] + [ts[-1].shape[1]]
    cost, split = {(i, i): 0 for i in range(n)}, {}
    for span in range(1, n):
        for i in range(n - span):
            j = i + span
            for k in range(i, j):
                q = cost[i, k] + cost[k + 1, j] + p[i] * p[k + 1] * p[j + 1]
                if (i, j) not in cost or q < cost[i, j]:
                    cost[i, j], split[i, j] = q, k
    if n == 3:
        a, b, c, d = p
        split[0, 2] = 0 if a * c * (b + d) > b * d * (a + c) else 1

    def chain(i, j):
        if i == j:
            return ts[i]
        return _matmul_arrays(xp, chain(i, split[i, j]), chain(split[i, j] + 1, j))
    return chain(0, n - 1).reshape(out_shape)


def _chain_matmul(xp, matrices):
    for t in matrices:
        _require(t.ndim == 2, f"Tensor dimension is {t.ndim}, expected 2 instead.")
    _require(len(matrices) > 0, "chain_matmul(): Expected one or more matrices")
    return matrices[0].copy() if len(matrices) == 1 else _multi_dot(xp, matrices)


def _tensordot(xp, a, b, dims_a, dims_b):
    dims_a, dims_b = [int(d) for d in dims_a], [int(d) for d in dims_b]
    _require(len(dims_a) == len(dims_b), "both dimension lists should have same length")
    _require(a.dtype == b.dtype, "both inputs should have same dtype")
    t1, t2 = a, b
    for da, db in zip(dims_a, dims_b):
        s1, s2 = _size(a, da), _size(b, db)
        if s2 == 1:  # a size-1 dim broadcasts: the other side is summed right away
            t1 = t1.sum(axis=wrap_dim(da, a.ndim), keepdims=True, dtype=a.dtype)
        elif s1 == 1:
            t2 = t2.sum(axis=wrap_dim(db, b.ndim), keepdims=True, dtype=b.dtype)
        _require(s1 == s2 or 1 in (s1, s2), f"contracted dimensions need to match, but first has "
                 f"size {s1} in dim {da} and second has size {s2} in dim {db}")
    axes = [[wrap_dim(d, t.ndim) for d in dims] for dims, t in ((dims_a, a), (dims_b, b))]
    for ax in axes:
        for k, d in enumerate(ax):
            _require(d not in ax[:k], f"dim {d} appears multiple times in the list of dims")
    if a.dtype == np.bool_:
        raise not_implemented("addmm_impl_cpu_", a.dtype)
    c = compute_dtype(str(a.dtype))
    out = xp.tensordot(t1.astype(c), t2.astype(c), axes=tuple(axes))
    return xp.ascontiguousarray(xp.asarray(out).astype(a.dtype))


def _functional_tensordot(a, b, dims=2, out=None):
    """``torch.functional.tensordot`` (what a scripted ``torch.tensordot`` calls): ``dims`` an
    int (the last ``dims`` of a with the first of b), two lists, or a tensor of either."""
    _require(out is None, "torch.tensordot: out= is not supported by torchlike")
    from_tensor = hasattr(dims, "ndim")
    if from_tensor:  # two rows of dims, or one number (not checked against the ranks)
        dims = tuple(host(d).tolist() for d in dims) if dims.size > 1 else int(dims.reshape(()))
    if isinstance(dims, (int, np.integer)) and not isinstance(dims, bool):
        _require(dims >= 0, f"tensordot expects dims >= 0, but got dims={dims}")
        _require(dims <= min(a.ndim, b.ndim) or from_tensor, f"tensordot expects dims < ndim_a "
                 f"or ndim_b, but got dims={dims}")
        dims = (list(range(-dims, 0)), list(range(dims)))
    _require(isinstance(dims, (tuple, list)), f"tensordot expects dims to be int or "
             f"tuple[list[int], list[int]] or list[list[int]] containing two lists, but got "
             f"dims={dims}")
    return _tensordot(array_module_of(a), a, b, dims[0], dims[1])


# -- transposes --------------------------------------------------------------------------------

def _last_two(what):
    """``mT`` & co.: the last two dims swapped, a view (a 0-d tensor as it is, deprecated)."""
    def impl(xp, x):
        if what == "H":
            hint = " For batches of matrices, consider using tensor.mH" if x.ndim > 2 else ""
            _require(x.ndim in (0, 2), f"tensor.H is only supported on matrices (2-D tensors). "
                     f"Got {x.ndim}-D tensor.{hint}")
        _require(x.ndim != 1, f"tensor.{what} is only supported on matrices or batches of "
                 f"matrices. Got 1-D tensor.")
        return x[...] if x.ndim == 0 else xp.swapaxes(x, -1, -2)
    return impl


# -- type rules and registration ---------------------------------------------------------------

def _infer_batch(node, types):
    """det & co.: one number per matrix, in the input's dtype."""
    t = tensor_in(types)
    shape = t.shape[:-2] if t.shape is not None and len(t.shape) >= 2 else None
    return [like(t, shape=shape)] * (2 if node.kind.endswith("slogdet") else 1)


def _infer_swapped(node, types):
    t = tensor_in(types)
    if t.shape is None or len(t.shape) < 2:
        return [like(t)]
    return [like(t, shape=t.shape[:-2] + (t.shape[-1], t.shape[-2]))]


_infer_dtype = lambda node, types: [like(tensor_in(types), shape=None)]


_ADD = "Scalar beta=1, Scalar alpha=1"
for _name, _schema, _impl, _infer, _n in (
        ("linalg_det", "Tensor A", _det, _infer_batch, 1),
        ("det", "Tensor self", _det, _infer_batch, 1),
        ("linalg_slogdet", "Tensor A", _slogdet, _infer_batch, 2),
        ("slogdet", "Tensor self", _slogdet, _infer_batch, 2),
        ("logdet", "Tensor self", _logdet, _infer_batch, 1),
        ("linalg_inv", "Tensor A", _inv, infer_same, 1),
        ("inverse", "Tensor self", _inv, infer_same, 1),
        ("linalg_solve", "Tensor A, Tensor B, bool left=True", _solve, _infer_dtype, 1),
        ("linalg_matrix_power", "Tensor self, int n", _matrix_power, infer_same, 1),
        ("matrix_power", "Tensor self, int n", _matrix_power, infer_same, 1),
        ("linalg_cholesky", "Tensor self, bool upper=False", _cholesky("linalg.cholesky"),
         infer_same, 1),
        ("cholesky", "Tensor self, bool upper=False", _cholesky("cholesky"), infer_same, 1),
        ("linalg_qr", "Tensor A, str mode=\"reduced\"", _qr, None, 2),
        ("linalg_eigh", "Tensor self, str UPLO=\"L\"", _eigh, None, 2),
        ("linalg_svd", "Tensor A, bool full_matrices=True, str? driver=None", _svd, None, 3),
        ("linalg_svdvals", "Tensor A, str? driver=None",
         lambda xp, a, driver=None: _svd(xp, a, driver=driver, compute_uv=False), _infer_dtype, 1),
        ("linalg_pinv", "Tensor self, float? atol=None, float? rtol=None, bool hermitian=False",
         _pinv, _infer_swapped, 1),
        ("pinverse", "Tensor self, float rcond=1e-15",
         lambda xp, a, rcond=1e-15: _pinv(xp, a, rcond, False), _infer_swapped, 1),
        ("linalg_vecdot", "Tensor x, Tensor y, int dim=-1", _vecdot, _infer_dtype, 1),
        ("vdot", "Tensor self, Tensor other", _vdot,
         lambda node, types: [like(tensor_in(types), shape=())], 1),
        ("addr", f"Tensor self, Tensor vec1, Tensor vec2, {_ADD}", _addr, None, 1),
        ("addmv", f"Tensor self, Tensor mat, Tensor vec, {_ADD}", _addmv, _infer_dtype, 1),
        ("addbmm", f"Tensor self, Tensor batch1, Tensor batch2, {_ADD}", _addbmm, _infer_dtype,
         1),
        ("chain_matmul", "Tensor[] matrices", _chain_matmul, None, 1),
        ("linalg_multi_dot", "Tensor[] tensors", _multi_dot, None, 1),
        ("tensordot", "Tensor self, Tensor other, int[] dims_self, int[] dims_other", _tensordot,
         _infer_dtype, 1)):
    defop(f"aten::{_name}", _schema, _impl, infer=_infer, num_outputs=_n)
register_function("tensordot", _functional_tensordot)
for _name, _what in (("mT", "mT"), ("mH", "mH"), ("adjoint", "adjoint()"), ("matrix_H", "H")):
    defop(f"aten::{_name}", "Tensor self", _last_two(_what), category="shape",
          infer=_infer_swapped)
