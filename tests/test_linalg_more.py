"""The ops of ``ops/linalg_more.py`` against PyTorch: each eagerly over float32 / float64,
batched and empty shapes (eigen- and singular vectors by reconstruction and by their absolute
values, as signs may differ), then in functions as ``torch.jit.script`` / ``torch.jit.trace``
print them (``torch.det`` as ``aten::linalg_det``, a scripted ``torch.tensordot`` as a call of
``torch.functional.tensordot``), run interpreted, fused and fused strictly; then every error
path's type and message against torch's own (``LinAlgError`` for torch's ``_LinAlgError``), raw
and through a graph, and the inferred types.
"""
from __future__ import annotations

import numpy as np
import pytest
from graph_modes import against_torch, graph_modes, program_module
from graph_modes import check_torch as check
from graph_modes import to_torch as T

from torchlike.errors import ExecutionError
from torchlike.ir import parse_graph
from torchlike.ir.types import TensorType
from torchlike.ops import registry
from torchlike.ops.functions import lookup_function
from torchlike.ops.linalg_more import LinAlgError
from torchlike.passes import infer_types

pytestmark = [pytest.mark.filterwarnings("ignore::DeprecationWarning"),
              pytest.mark.filterwarnings("ignore::UserWarning")]
RNG = np.random.default_rng(0)
FLOATS = [np.float32, np.float64]
TOL = {np.float32: 1e-4, np.float64: 1e-10}


def randn(*shape, dtype=np.float32):
    return np.asarray(RNG.standard_normal(shape)).astype(dtype)


def well_conditioned(*shape, dtype=np.float32):
    """Random square matrices plus n * I: inverses and solves stay accurate in float32."""
    return (randn(*shape, dtype=np.float64) + shape[-1] * np.eye(shape[-1])).astype(dtype)


def spd(*shape, dtype=np.float32):
    a = randn(*shape, dtype=np.float64)
    return (a @ np.swapaxes(a, -1, -2) + shape[-1] * np.eye(shape[-1])).astype(dtype)



def impl(name):
    return registry.get(f"aten::{name}").impl


def close(got, want, dtype, tol=None):
    tol = TOL[np.dtype(dtype).type] if tol is None else tol
    check(got, want, rtol=tol, atol=tol)


SQUARE = [(3, 3), (2, 4, 4), (2, 1, 3, 3), (1, 1), (0, 0), (2, 0, 0), (0, 3, 3)]
RECT = [(3, 5), (5, 3), (2, 4, 3), (2, 1, 3, 4), (0, 3), (3, 0), (2, 0, 3)]


# -- determinants, inverse, solve, matrix_power --------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_det_slogdet_inv_against_torch(torch, dtype):
    L = torch.linalg
    for shape in SQUARE:
        a = well_conditioned(*shape, dtype=dtype)
        if a.size:
            a[..., 0, :] *= -1  # some negative determinants
        A = T(torch, a)
        for name in ("linalg_det", "det"):
            close(impl(name)(np, a), L.det(A), dtype)
        for name in ("linalg_slogdet", "slogdet"):
            close(impl(name)(np, a), L.slogdet(A), dtype)
        close(impl("logdet")(np, a), torch.logdet(A), dtype)  # NaN for a negative det
        for name in ("linalg_inv", "inverse"):
            close(impl(name)(np, a), L.inv(A), dtype)
    z = np.zeros((2, 3, 3), dtype)  # singular: det 0, slogdet (0, -inf), logdet -inf
    for name, fn in (("linalg_det", L.det), ("linalg_slogdet", L.slogdet),
                     ("logdet", torch.logdet)):
        close(impl(name)(np, z), fn(T(torch, z)), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_solve_against_torch(torch, dtype):
    """B a matrix, a vector, a batch of vectors shaped A.shape[:-1], broadcast batches."""
    for a_shape, b_shape in (((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3)),
                             ((2, 3, 3), (3,)), ((2, 3, 3), (3, 4)), ((3, 3), (5, 3, 2)),
                             ((4, 1, 3, 3), (2, 3, 1)), ((3, 3), (3, 3)), ((0, 2, 2), (2,)),
                             ((3, 3), (3, 0))):
        a, b = well_conditioned(*a_shape, dtype=dtype), randn(*b_shape, dtype=dtype)
        close(impl("linalg_solve")(np, a, b), torch.linalg.solve(T(torch, a), T(torch, b)),
              dtype)
        if len(b_shape) > 1 and b_shape != a_shape[:-1]:  # XA = B
            bt = np.swapaxes(b, -1, -2).copy()
            close(impl("linalg_solve")(np, a, bt, False),
                  torch.linalg.solve(T(torch, a), T(torch, bt), left=False), dtype)


@pytest.mark.parametrize("dtype", FLOATS + [np.int64, np.int32, np.float16, np.bool_])
def test_matrix_power_against_torch(torch, dtype):
    """ATen's order of products (integers exactly, wrapping as ATen's), negative powers through
    the inverse (floating dtypes only)."""
    for shape in ((3, 3), (2, 4, 4), (0, 2, 2), (1, 1)):
        a = well_conditioned(*shape).astype(dtype) if dtype != np.bool_ else \
            randn(*shape) > 0
        for n in (0, 1, 2, 3, 4, 5, 11, -1, -2, -5):
            if (n < 0 and np.dtype(dtype).kind not in "f") or dtype == np.bool_ and n > 1 or \
                    (dtype == np.float16 and not 0 <= n <= 5):  # float16: no overflow
                continue
            want = torch.linalg.matrix_power(T(torch, a), n)
            got = impl("linalg_matrix_power")(np, a, n)
            tol = {np.float16: 2e-2, np.float32: 1e-4}.get(dtype, 1e-10)
            check(got, want, rtol=tol, atol=tol * np.abs(want.double().numpy()).max(initial=1))
            check(impl("matrix_power")(np, a, n), want, rtol=tol,
                  atol=tol * np.abs(want.double().numpy()).max(initial=1))


# -- factorizations ------------------------------------------------------------------------------

@pytest.mark.parametrize("dtype", FLOATS)
def test_cholesky_against_torch(torch, dtype):
    for shape in SQUARE:
        a = spd(*shape, dtype=dtype)
        if a.size:  # only one triangle is read: a different matrix for upper
            a[..., 0, -1] += 0.5
        A = T(torch, a)
        for upper in (False, True):
            close(impl("linalg_cholesky")(np, a, upper), torch.linalg.cholesky(A, upper=upper),
                  dtype)
            close(impl("cholesky")(np, a, upper), torch.cholesky(A, upper), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_qr_against_torch(torch, dtype):
    """Householder QR has one sign convention: Q and R compare directly."""
    for shape in RECT + [(4, 4)]:
        a = randn(*shape, dtype=dtype)
        for mode in ("reduced", "complete", "r"):
            close(impl("linalg_qr")(np, a, mode), torch.linalg.qr(T(torch, a), mode=mode), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_eigh_against_torch(torch, dtype):
    """Eigenvalues as torch's; eigenvectors up to sign: orthonormal, reconstructing the
    triangle that UPLO reads."""
    for shape in SQUARE:
        a = randn(*shape, dtype=dtype)
        for uplo in ("L", "U", "l"):
            w, v = impl("linalg_eigh")(np, a, uplo)
            W, V = torch.linalg.eigh(T(torch, a), UPLO=uplo)
            close(w, W, dtype)
            assert v.dtype == dtype and v.shape == tuple(V.shape)
            tri = np.tril(a) if uplo != "U" else np.triu(a)
            sym = tri + np.swapaxes(tri, -1, -2) - tri * np.eye(shape[-1], dtype=dtype)
            close(v @ (w[..., None] * np.swapaxes(v, -1, -2)), sym, dtype)
            close(np.swapaxes(v, -1, -2) @ v, np.broadcast_to(np.eye(shape[-1], dtype=dtype),
                                                              v.shape), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_svd_svdvals_against_torch(torch, dtype):
    for shape in RECT + [(3, 3)]:
        a = randn(*shape, dtype=dtype)
        A = T(torch, a)
        for full in (False, True):
            u, s, vh = impl("linalg_svd")(np, a, full, None)
            U, S, VH = torch.linalg.svd(A, full_matrices=full)
            close(s, S, dtype)
            assert (u.shape, vh.shape) == (tuple(U.shape), tuple(VH.shape))
            assert u.dtype == vh.dtype == dtype
            k = s.shape[-1]
            close((u[..., :k] * s[..., None, :]) @ vh[..., :k, :], a, dtype)
            close(np.abs(u[..., :k]), U[..., :k].abs(), dtype,
                  1e-3 if dtype == np.float32 else 1e-8)
        close(impl("linalg_svdvals")(np, a, None), torch.linalg.svdvals(A), dtype)


@pytest.mark.parametrize("dtype", FLOATS)
def test_pinv_overloads_against_torch(torch, dtype):
    """(atol, rtol, hermitian) as floats, tensors or None; (rcond, hermitian); pinverse."""
    P = torch.linalg.pinv
    for shape in RECT + [(2, 4, 4)]:
        a = randn(*shape, dtype=dtype)
        A = T(torch, a)
        close(impl("linalg_pinv")(np, a, None, None, False), P(A), dtype)
        close(impl("pinverse")(np, a, 1e-15), torch.pinverse(A), dtype)
        if a.size:  # rank deficient: the tolerances given decide (the default one: noise)
            a[..., -1] = a[..., 0]
            A = T(torch, a)
        close(impl("linalg_pinv")(np, a, 0.5, False), P(A, 0.5), dtype)
        close(impl("linalg_pinv")(np, a, None, 0.3, False), P(A, rtol=0.3), dtype)
        close(impl("linalg_pinv")(np, a, 0.8, None, False), P(A, atol=0.8), dtype)
        close(impl("linalg_pinv")(np, a, 0.8, 0.01, False), P(A, atol=0.8, rtol=0.01), dtype)
        close(impl("pinverse")(np, a, 0.4), torch.pinverse(A, 0.4), dtype)
    h = randn(2, 4, 4, dtype=dtype)
    h = h + np.swapaxes(h, -1, -2)
    h[0, 3], h[0, :, 3] = 0, 0
    H = T(torch, h)
    close(impl("linalg_pinv")(np, h, None, None, True), P(H, hermitian=True), dtype)
    tol = np.array([0.1, 2.5])  # per matrix of the batch
    close(impl("linalg_pinv")(np, h, tol, None, False), P(H, atol=T(torch, tol)), dtype)
    close(impl("linalg_pinv")(np, h, None, tol, True), P(H, rtol=T(torch, tol), hermitian=True),
          dtype)
    close(impl("linalg_pinv")(np, h, tol, False), P(H, T(torch, tol)), dtype)


# -- products ------------------------------------------------------------------------------------

PRODUCT_DTYPES = FLOATS + [np.int64, np.int32, np.float16]


def _tol(dtype):
    return {np.float16: 1e-2, np.float32: 1e-4}.get(dtype, 1e-10)


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_vecdot_vdot_against_torch(torch, dtype):
    tol = _tol(dtype)
    for s1, s2, dim in (((4,), (4,), 0), ((3, 4), (3, 4), -1), ((3, 4), (3, 4), 0),
                        ((2, 1, 4), (3, 4), -1), ((), (), -1), ((0, 3), (0, 3), 1)):
        x, y = (randn(*s1) * 3).astype(dtype), (randn(*s2) * 3).astype(dtype)
        X, Y = T(torch, x), T(torch, y)
        if np.dtype(dtype).kind == "f":
            check(impl("linalg_vecdot")(np, x, y, dim), torch.linalg.vecdot(X, Y, dim=dim),
                  rtol=tol, atol=tol)
        if len(s1) == 1:
            check(impl("vdot")(np, x, y), torch.vdot(X, Y), rtol=tol, atol=tol)


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES + [np.bool_])
def test_addr_addmv_addbmm_against_torch(torch, dtype):
    """beta * self + alpha * product; beta 0 ignores self (NaN included); self broadcasts."""
    kind = np.dtype(dtype).kind
    tol = _tol(dtype)

    def r(*shape):
        return (randn(*shape) * 3).astype(dtype)
    scalars = [(1, 1), (0, 2), (2, 0), (3, -1)] + ([(0.5, 1.5), (0, 0.25)] if kind == "f" else [])
    for beta, alpha in scalars:
        for self_shape in ((3, 4), (4,), (1, 4), ()):
            s = r(*self_shape)
            if kind == "f" and beta == 0:
                s = np.full(self_shape, np.nan, dtype)
            v1, v2 = r(3), r(4)
            check(impl("addr")(np, s, v1, v2, beta, alpha),
                  torch.addr(T(torch, s), T(torch, v1), T(torch, v2), beta=beta, alpha=alpha),
                  rtol=tol, atol=tol * 10)
        if dtype == np.bool_:
            continue
        for self_shape in ((3,), (1,), ()):
            s, m, v = r(*self_shape), r(3, 4), r(4)
            check(impl("addmv")(np, s, m, v, beta, alpha),
                  torch.addmv(T(torch, s), T(torch, m), T(torch, v), beta=beta, alpha=alpha),
                  rtol=tol, atol=tol * 30)
        for self_shape, n in (((3, 5), 2), ((5,), 3), ((3, 5), 0)):
            s, b1, b2 = r(*self_shape), r(n, 3, 4), r(n, 4, 5)
            check(impl("addbmm")(np, s, b1, b2, beta, alpha),
                  torch.addbmm(T(torch, s), T(torch, b1), T(torch, b2), beta=beta, alpha=alpha),
                  rtol=tol, atol=tol * 30)
    if kind in "iu":  # ATen truncates a float beta / alpha for addmv, addbmm
        s, m, v = r(3), r(3, 4), r(4)
        check(impl("addmv")(np, s, m, v, 0.5, 2.7),
              torch.addmv(T(torch, s), T(torch, m), T(torch, v), beta=0.5, alpha=2.7))


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_chain_matmul_multi_dot_against_torch(torch, dtype):
    """ATen's multiplication order (integers wrap identically in any order, floats round
    alike): 2 to 6 matrices, a vector first and / or last."""
    tol = _tol(dtype)
    ms = [(randn(*s) * 2).astype(dtype) for s in ((2, 7), (7, 3), (3, 9), (9, 1), (1, 5), (5, 4))]
    for k in range(1, 7):
        Ms = T(torch, ms[:k])
        check(impl("chain_matmul")(np, ms[:k]), torch.chain_matmul(*Ms), rtol=tol, atol=tol * 10)
        if k > 1:
            check(impl("linalg_multi_dot")(np, ms[:k]), torch.linalg.multi_dot(Ms), rtol=tol,
                  atol=tol * 10)
            for first, last in ((True, False), (False, True), (True, True)):
                ts = [m[0] if first and i == 0 else m[:, 0] if last and i == k - 1 else m
                      for i, m in enumerate(ms[:k])]
                check(impl("linalg_multi_dot")(np, ts), torch.linalg.multi_dot(T(torch, ts)),
                      rtol=tol, atol=tol * 10)


@pytest.mark.parametrize("dtype", PRODUCT_DTYPES)
def test_tensordot_against_torch(torch, dtype):
    tol = _tol(dtype)
    a, b = (randn(2, 4, 4) * 2).astype(dtype), (randn(4, 4, 2) * 2).astype(dtype)
    A, B = T(torch, a), T(torch, b)
    for da, db in (([1, 2], [0, 1]), ([2, 1], [1, 0]), ([], []), ([-1], [1]), ([0], [2])):
        check(impl("tensordot")(np, a, b, da, db), torch.tensordot(A, B, dims=(da, db)),
              rtol=tol, atol=tol * 10)
    one = (randn(1, 4) * 2).astype(dtype)  # a size-1 contracted dim broadcasts
    check(impl("tensordot")(np, one, b[:, 0], [0], [1]),
          torch.tensordot(T(torch, one), B[:, 0], dims=([0], [1])), rtol=tol, atol=tol * 10)
    fn = lookup_function("tensordot")  # torch.functional.tensordot, as scripted graphs call it
    for dims in (0, 1, 2, ([1, 2], [0, 1]), [[2], [1]], np.array([[1], [0]]), np.array(2)):
        check(fn(a, b, dims, None), torch.tensordot(A, B, dims=T(torch, dims)), rtol=tol,
              atol=tol * 10)


def test_transposes_against_torch(torch):
    for shape in ((3, 4), (2, 3, 4), (0, 2), ()):
        x = randn(*shape)
        X = T(torch, x)
        for name, want in (("mT", X.mT), ("mH", X.mH), ("adjoint", X.adjoint())):
            got = impl(name)(np, x)
            check(got, want)
            assert got.size == 0 or np.shares_memory(got, x)  # a view, as PyTorch's
        if len(shape) in (0, 2):
            check(impl("matrix_H")(np, x), X.H)


# -- in functions, as PyTorch prints them ---------------------------------------------------------

SOURCE = '''
import torch


def dets(a):
    s, logabs = torch.linalg.slogdet(a)
    s2, logabs2 = torch.slogdet(a)
    return torch.linalg.det(a), torch.det(a), s, logabs, s2, logabs2, torch.logdet(a), \\
        torch.linalg.inv(a), torch.inverse(a), torch.linalg.matrix_power(a, 5), \\
        a.matrix_power(-2), torch.matrix_power(a, 0)


def solves(a, b, v):
    return torch.linalg.solve(a, b), torch.linalg.solve(a, v), \\
        torch.linalg.solve(a, b.mT, left=False), torch.linalg.solve(a[0], v[0])


def factorizations(s, r):
    q, rr = torch.linalg.qr(r)
    q2, r2 = torch.linalg.qr(r, mode="complete")
    w, v = torch.linalg.eigh(s, UPLO="U")
    u, sv, vh = torch.linalg.svd(r, full_matrices=False)
    return torch.linalg.cholesky(s), torch.linalg.cholesky(s, upper=True), \\
        torch.cholesky(s, True), q, rr, q2, r2, torch.linalg.qr(r, mode="r")[1], w, \\
        v @ torch.diag_embed(w) @ v.mT, v.abs(), sv, (u * sv.unsqueeze(-2)) @ vh, \\
        torch.linalg.svdvals(r), u.abs(), vh.abs()


def pinvs(r, s, t):
    return torch.linalg.pinv(r), torch.linalg.pinv(r, rtol=0.3), \\
        torch.linalg.pinv(s, hermitian=True), torch.linalg.pinv(r, atol=0.5, rtol=0.1), \\
        torch.linalg.pinv(r, 0.2), torch.pinverse(r), torch.linalg.pinv(s, atol=t), \\
        torch.linalg.pinv(s, t), torch.linalg.pinv(s, rtol=t, hermitian=True)


def products(x, y, m, b1, b2, c, t):
    return torch.linalg.vecdot(x, y), torch.linalg.vecdot(x, y, dim=0), \\
        torch.vdot(x[0], y[0]), torch.addr(m, x[:, 0], y[0], beta=0.5, alpha=2.0), \\
        torch.addmv(x[:, 0], m, y[0], beta=2, alpha=3), torch.addbmm(c, b1, b2), \\
        torch.chain_matmul(m, m.mT, m), torch.linalg.multi_dot([x[0], m.mT, m, y[0]]), \\
        torch.tensordot(t, b1, dims=1), torch.tensordot(t, b2, dims=([0, 1], [1, 2])), \\
        m.mT, m.mH, m.adjoint(), m.H
'''


def test_in_functions_against_torch(torch, tmp_path):
    """Scripted and traced (``torch.det`` prints ``aten::linalg_det``, a scripted
    ``torch.tensordot`` calls ``tensordot``), run interpreted, fused and strict."""
    mod = program_module(tmp_path, "linalg_more_programs", SOURCE)
    for dtype in FLOATS:
        a = T(torch, well_conditioned(2, 3, 3, dtype=dtype))
        against_torch(torch, mod.dets, (a,))
        against_torch(torch, mod.solves, (a, T(torch, randn(2, 3, 2, dtype=dtype)),
                                          T(torch, randn(2, 3, dtype=dtype))))
    s, r = T(torch, spd(2, 4, 4, dtype=np.float64)), T(torch, randn(2, 5, 3, dtype=np.float64))
    against_torch(torch, mod.factorizations, (s, r))
    against_torch(torch, mod.pinvs, (r, s, torch.tensor([0.1, 3.0], dtype=torch.float64)))
    x, y, m = (T(torch, randn(*shape)) for shape in ((3, 4), (3, 4), (3, 4)))
    b1, b2, c, t = (T(torch, randn(*shape)) for shape in ((2, 3, 4), (2, 4, 5), (3, 5), (4, 5, 2)))
    against_torch(torch, mod.products, (x, y, m, b1, b2, c, t))
    scripted = str(torch.jit.script(mod.products).graph)
    traced = str(torch.jit.trace(mod.products, (x, y, m, b1, b2, c, t)).graph)
    assert "prim::CallFunction" in scripted and "aten::tensordot" in traced
    assert "aten::matrix_H" in scripted and "aten::linalg_det" in str(torch.jit.trace(
        mod.dets, (a,)).graph)


# -- errors ----------------------------------------------------------------------------------------

SING = np.array([[1.0, 2, 3], [2, 4, 6], [1, 0, 1]], np.float32)  # LU's third pivot is 0
NOT_PD = np.stack([np.eye(3, dtype=np.float32), -np.eye(3, dtype=np.float32)])
I3 = np.eye(3, dtype=np.float32)
INTS = np.arange(9).reshape(3, 3)
RECT34 = np.ones((3, 4), np.float32)
V3 = np.ones(3, np.float32)


def _errors(torch):
    """(op, args, the same call in torch) for each error path."""
    L, F64 = torch.linalg, np.float64

    def solve(a, b, left):
        return L.solve(a, b, left=left)

    def vecdot(x, y, dim):
        return L.vecdot(x, y, dim=dim)

    def scaled(fn):
        return lambda s, a, b, beta, alpha: fn(s, a, b, beta=beta, alpha=alpha)
    addr, addmv, addbmm = scaled(torch.addr), scaled(torch.addmv), scaled(torch.addbmm)
    half, b3 = I3.astype(np.float16), np.ones((2, 3, 4), np.float32)
    return [
        ("linalg_det", (INTS,), L.det), ("linalg_det", (half,), L.det),
        ("linalg_det", (RECT34,), L.det), ("linalg_det", (V3,), L.det),
        ("det", (INTS > 0,), torch.det), ("linalg_slogdet", (half,), L.slogdet),
        ("linalg_slogdet", (INTS,), L.slogdet), ("logdet", (RECT34,), torch.logdet),
        ("logdet", (half,), torch.logdet), ("linalg_inv", (SING,), L.inv),
        ("linalg_inv", (np.zeros((3, 3), np.float32),), L.inv),
        ("linalg_inv", (np.stack([I3, SING]),), L.inv),
        ("linalg_inv", (SING[None],), L.inv), ("inverse", (SING[:2, :2] * 0,), torch.inverse),
        ("linalg_inv", (INTS,), L.inv), ("linalg_inv", (half,), L.inv),
        ("linalg_inv", (V3,), L.inv), ("linalg_inv", (RECT34,), L.inv),
        ("linalg_solve", (SING, V3, True), solve),
        ("linalg_solve", (np.stack([I3, SING]), V3, True), solve),
        ("linalg_solve", (INTS, INTS, True), solve),
        ("linalg_solve", (I3, V3.astype(F64), True), solve),
        ("linalg_solve", (I3, np.ones(4, np.float32), True), solve),
        ("linalg_solve", (I3, np.ones((4, 2), np.float32), True), solve),
        ("linalg_solve", (np.stack([I3, I3]), np.ones((4, 3, 1), np.float32), True), solve),
        ("linalg_solve", (I3, np.float32(1), True), solve),
        ("linalg_solve", (V3, V3, True), solve), ("linalg_solve", (RECT34, V3, True), solve),
        ("linalg_solve", (half, half, True), solve),
        ("linalg_solve", (I3, V3, False), solve),
        ("linalg_solve", (I3, np.ones((2, 4), np.float32), False), solve),
        ("linalg_cholesky", (NOT_PD[1], False), lambda a, u: L.cholesky(a, upper=u)),
        ("linalg_cholesky", (NOT_PD, True), lambda a, u: L.cholesky(a, upper=u)),
        ("linalg_cholesky", (np.diag(np.float32([1, 1, np.nan])), False),
         lambda a, u: L.cholesky(a, upper=u)),
        ("linalg_cholesky", (INTS, False), lambda a, u: L.cholesky(a, upper=u)),
        ("linalg_cholesky", (half, False), lambda a, u: L.cholesky(a, upper=u)),
        ("linalg_cholesky", (RECT34, False), lambda a, u: L.cholesky(a, upper=u)),
        ("cholesky", (NOT_PD[1], False), torch.cholesky),
        ("cholesky", (INTS, False), torch.cholesky), ("cholesky", (V3, False), torch.cholesky),
        ("linalg_qr", (INTS, "reduced"), L.qr), ("linalg_qr", (half, "reduced"), L.qr),
        ("linalg_qr", (RECT34, "full"), L.qr), ("linalg_qr", (half, "full"), L.qr),
        ("linalg_qr", (V3, "r"), L.qr),
        ("linalg_eigh", (INTS, "L"), L.eigh), ("linalg_eigh", (half, "L"), L.eigh),
        ("linalg_eigh", (RECT34, "L"), L.eigh), ("linalg_eigh", (I3, "X"), L.eigh),
        ("linalg_eigh", (I3, "LU"), L.eigh),
        ("linalg_svd", (INTS, True, None), lambda a, f, d: L.svd(a, f, driver=d)),
        ("linalg_svd", (half, True, None), lambda a, f, d: L.svd(a, f, driver=d)),
        ("linalg_svd", (V3, True, None), lambda a, f, d: L.svd(a, f, driver=d)),
        ("linalg_svd", (RECT34, True, "gesvd"), lambda a, f, d: L.svd(a, f, driver=d)),
        ("linalg_svd", (np.full((3, 3), np.nan, np.float32), True, None),
         lambda a, f, d: L.svd(a, f, driver=d)),
        ("linalg_svdvals", (INTS, None), lambda a, d: L.svdvals(a, driver=d)),
        ("linalg_svdvals", (half, None), lambda a, d: L.svdvals(a, driver=d)),
        ("linalg_pinv", (INTS, None, None, False), lambda a, *_: L.pinv(a)),
        ("linalg_pinv", (half, None, None, False), lambda a, *_: L.pinv(a)),
        ("linalg_pinv", (V3, 0.1, False), lambda a, *_: L.pinv(a, 0.1)),
        ("linalg_pinv", (np.float32(1), None, None, False), lambda a, *_: L.pinv(a)),
        ("pinverse", (INTS, 1e-15), torch.pinverse),
        ("linalg_matrix_power", (RECT34, 2), L.matrix_power),
        ("linalg_matrix_power", (V3, 2), L.matrix_power),
        ("linalg_matrix_power", (INTS, -1), L.matrix_power),
        ("linalg_matrix_power", (half, -1), L.matrix_power),
        ("linalg_matrix_power", (SING, -2), L.matrix_power),
        ("matrix_power", (INTS > 0, 2), torch.matrix_power),
        ("linalg_vecdot", (V3, np.ones(4, np.float32), -1), vecdot),
        ("linalg_vecdot", (RECT34, np.ones((3, 5), np.float32), -1), vecdot),
        ("linalg_vecdot", (V3, V3.astype(F64), -1), vecdot),
        ("linalg_vecdot", (INTS, INTS, -1), vecdot),
        ("linalg_vecdot", (RECT34, RECT34, 2), vecdot),
        ("vdot", (RECT34, RECT34), torch.vdot), ("vdot", (V3, np.ones(4, np.float32)), torch.vdot),
        ("vdot", (V3, V3.astype(F64)), torch.vdot), ("vdot", (V3 > 0, V3 > 0), torch.vdot),
        ("vdot", (np.float32(1), np.float32(1)), torch.vdot),
        ("addr", (RECT34, RECT34, np.ones(4, np.float32), 1, 1), addr),
        ("addr", (RECT34, np.ones(2, np.float32), np.ones(4, np.float32), 1, 1), addr),
        ("addr", (INTS[:, :1], np.arange(3), np.arange(4), 0.5, 1), addr),
        ("addr", (INTS > 0, V3 > 0, V3 > 0, 1, 1.5), addr),
        ("addmv", (V3, RECT34, V3, 1, 1), addmv),
        ("addmv", (np.ones(2, np.float32), RECT34, np.ones(4, np.float32), 1, 1), addmv),
        ("addmv", (V3, V3, V3, 1, 1), addmv),
        ("addmv", (RECT34, RECT34, np.ones(4, np.float32), 1, 1), addmv),
        ("addmv", (V3.astype(F64), RECT34, np.ones(4, np.float32), 1, 1), addmv),
        ("addmv", (V3 > 0, RECT34 > 0, np.ones(4) > 0, 1, 1), addmv),
        ("addbmm", (RECT34, RECT34, RECT34, 1, 1), addbmm),
        ("addbmm", (np.ones((3, 5), np.float32), b3, np.ones((2, 3, 5), np.float32), 1, 1),
         addbmm),
        ("addbmm", (np.ones((3, 5), np.float32), b3, np.ones((3, 4, 5), np.float32), 1, 1),
         addbmm),
        ("addbmm", (np.ones((2, 5), np.float32), b3, np.ones((2, 4, 5), np.float32), 1, 1),
         addbmm),
        ("addbmm", (np.ones((3, 5), np.float32), b3, np.ones((2, 4, 5), F64), 1, 1),
         addbmm),
        ("addbmm", (np.ones((3, 5), np.float32), b3.astype(F64), np.ones((2, 4, 5), np.float32),
                    1, 1), addbmm),
        ("addbmm", (np.ones((3, 5)) > 0, b3 > 0, np.ones((2, 4, 5)) > 0, 1, 1), addbmm),
        ("addbmm", (np.ones((3, 5), np.float32), b3[None], np.ones((2, 4, 5), np.float32),
                    1, 1), addbmm),
        ("chain_matmul", ([V3],), lambda ms: torch.chain_matmul(*ms)),
        ("chain_matmul", ([],), lambda ms: torch.chain_matmul(*ms)),
        ("chain_matmul", ([RECT34, RECT34],), lambda ms: torch.chain_matmul(*ms)),
        ("chain_matmul", ([RECT34, b3],), lambda ms: torch.chain_matmul(*ms)),
        ("linalg_multi_dot", ([RECT34],), L.multi_dot),
        ("linalg_multi_dot", ([RECT34, RECT34],), L.multi_dot),
        ("linalg_multi_dot", ([b3, RECT34],), L.multi_dot),
        ("linalg_multi_dot", ([RECT34, b3],), L.multi_dot),
        ("linalg_multi_dot", ([RECT34, np.ones(4, np.float32), V3],), L.multi_dot),
        ("linalg_multi_dot", ([RECT34, RECT34.T.astype(F64)],), L.multi_dot),
        ("linalg_multi_dot", ([INTS, RECT34],), L.multi_dot),
        ("linalg_multi_dot", ([INTS > 0, INTS > 0],), L.multi_dot),
        ("tensordot", (RECT34, RECT34, [0, 1], [1]), torch.ops.aten.tensordot),
        ("tensordot", (RECT34, RECT34.astype(F64), [0], [0]), torch.ops.aten.tensordot),
        ("tensordot", (RECT34, RECT34, [0], [1]), torch.ops.aten.tensordot),
        ("tensordot", (RECT34, RECT34, [0, 0], [0, 0]), torch.ops.aten.tensordot),
        ("tensordot", (RECT34, RECT34, [2], [0]), torch.ops.aten.tensordot),
        ("tensordot", (RECT34 > 0, RECT34 > 0, [0], [0]), torch.ops.aten.tensordot),
        ("mT", (V3,), lambda x: x.mT), ("mH", (V3,), lambda x: x.mH),
        ("adjoint", (V3,), lambda x: x.adjoint()), ("matrix_H", (V3,), lambda x: x.H),
        ("matrix_H", (b3,), lambda x: x.H),
    ]


def _raised(fn, *args):
    try:
        fn(*args)
    except Exception as e:  # noqa: BLE001 - the point is which
        return e
    raise AssertionError("no error raised")


def test_errors_as_torch(torch):
    """Each error's type (``LinAlgError`` where torch raises its ``_LinAlgError``) and message
    are torch's."""
    for name, args, tfn in _errors(torch):
        want, got = _raised(tfn, *T(torch, args)), _raised(impl(name), np, *args)
        assert str(got) == str(want), (name, str(got), str(want))
        linalg = isinstance(want, torch._C._LinAlgError)
        assert isinstance(got, LinAlgError) == linalg, (name, type(got), type(want))
        for kind in (IndexError, NotImplementedError, RuntimeError):
            if isinstance(want, kind):
                assert isinstance(got, kind), (name, type(got), type(want))
                break


def test_tensordot_function_errors_as_torch(torch):
    fn = lookup_function("tensordot")
    for dims in (-1, 3, 1.5, np.array(-1)):
        want = _raised(torch.tensordot, T(torch, RECT34), T(torch, RECT34), T(torch, dims))
        got = _raised(fn, RECT34, RECT34, dims, None)
        assert str(got) == str(want) and type(got) is type(want), (dims, got, want)


def test_linalg_errors_without_torch():
    """The messages PyTorch gives (checked against it above), through a graph too."""
    with pytest.raises(LinAlgError, match=r"linalg.inv: \(Batch element 1\): The diagonal "
                       "element 3 is zero, the inversion could not be completed because the input "
                       "matrix is singular."):
        impl("linalg_inv")(np, np.stack([I3, SING]))
    assert issubclass(LinAlgError, RuntimeError)
    g = """graph(%a : Tensor):
  %f : bool = prim::Constant[value=1]()
  %l : Tensor = aten::linalg_cholesky(%a, %f)
  return (%l)
"""
    for _mode, run in graph_modes(g):
        with pytest.raises(ExecutionError, match=r"linalg.cholesky: \(Batch element 1\): The "
                           r"factorization could not be completed because the input is not "
                           r"positive-definite \(the leading minor of order 1 is not "
                           r"positive-definite\)."):
            run(NOT_PD)
        with pytest.raises(ExecutionError, match=r"\"cholesky_cpu\" not implemented for 'Half'"):
            run(I3.astype(np.float16))


# -- registry entries and inferred types -----------------------------------------------------------

SHAPES = """graph(%a : Tensor, %r : Tensor, %v : Tensor):
  %2 : int = prim::Constant[value=2]()
  %f : bool = prim::Constant[value=0]()
  %none : NoneType = prim::Constant()
  %d : Tensor = aten::linalg_det(%a)
  %s : Tensor, %l : Tensor = aten::linalg_slogdet(%a)
  %i : Tensor = aten::linalg_inv(%a)
  %p : Tensor = aten::linalg_matrix_power(%a, %2)
  %c : Tensor = aten::linalg_cholesky(%a, %f)
  %t : Tensor = aten::mT(%r)
  %h : Tensor = aten::matrix_H(%r)
  %pi : Tensor = aten::linalg_pinv(%r, %none, %none, %f)
  %vd : Tensor = aten::vdot(%v, %v)
  %x : Tensor = aten::linalg_solve(%a, %a, %f)
  return (%d, %s, %l, %i, %p, %c, %t, %h, %pi, %vd, %x)
"""


def test_inferred_types():
    g = infer_types(parse_graph(SHAPES), [TensorType("float64", (2, 3, 3)),
                                          TensorType("float32", (4, 5)),
                                          TensorType("float32", (5,))])
    got = [(o.type.dtype, o.type.shape) for o in g.outputs]
    assert got == [("float64", (2,)), ("float64", (2,)), ("float64", (2,)),
                   ("float64", (2, 3, 3)), ("float64", (2, 3, 3)), ("float64", (2, 3, 3)),
                   ("float32", (5, 4)), ("float32", (5, 4)), ("float32", (5, 4)),
                   ("float32", ()), ("float64", None)]
    a = spd(2, 3, 3, dtype=np.float64)
    r, v = randn(4, 5), randn(5)
    for mode, run in graph_modes(SHAPES):
        outs = run(a, r, v)
        for o, (dtype, shape) in zip(outs, got):
            assert str(o.dtype) == dtype and (shape is None or o.shape == shape), mode


def test_registry_entries():
    for name, outputs in (("linalg_slogdet", 2), ("slogdet", 2), ("linalg_qr", 2),
                          ("linalg_eigh", 2), ("linalg_svd", 3), ("linalg_det", 1),
                          ("tensordot", 1), ("mT", 1)):
        op = registry.get(f"aten::{name}")
        assert op.num_outputs == outputs and not op.is_elementwise, name
    assert callable(lookup_function("tensordot"))
