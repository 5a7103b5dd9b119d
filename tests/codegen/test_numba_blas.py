"""The generated modules' BLAS/LAPACK routines, called directly, against NumPy and SciPy, in four precisions.

:mod:`flamefuse.codegen.numba_blas` is the module every generated module copies; each routine
here is called the way the kernels call it (addresses, leading dimensions, work arrays) on
blocks inside a larger Fortran-ordered matrix (leading dimension > rows), and the result is
compared with NumPy's or SciPy's. Complex transposes are conjugate transposes.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from flamefuse.codegen import numba_blas as nb

DTYPES = ["float32", "float64", "complex64", "complex128"]
CH = {"L": nb._L, "U": nb._U, "N": nb._N, "C": nb._C, "R": nb._R, "A": nb._A}


def tol(dtype) -> float:
    return 200 * np.finfo(np.dtype(dtype)).eps


def rand(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


class Block:
    """A block of ``rows`` x ``cols`` inside a taller Fortran matrix: its address and leading dimension."""

    def __init__(self, value, pad=3):
        value = np.asarray(value)
        self.big = np.zeros((value.shape[0] + pad, value.shape[1]), value.dtype, order="F")
        self.big[pad:, :] = value
        self.view = self.big[pad:, :]
        self.ptr = self.big.ctypes.data + pad * value.itemsize
        self.ld = self.big.shape[0]


def work(dtype):
    """fp, iw, dw, rw, cw as the kernels allocate them."""
    dtype = np.dtype(dtype)
    dw = np.zeros(2, dtype)
    return nb._FP[dtype.char], np.zeros(8, np.int32), dw, np.abs(dw), np.zeros(4, np.uint8)


def op(x, t):
    return x if t == "N" else x.conj().T


def close(got, want, dtype, scale=1.0):
    err = np.abs(np.asarray(got) - want).max() if np.size(want) else 0.0
    assert err <= tol(dtype) * max(1.0, scale * np.abs(want).max(initial=1.0)), err


def spd(rng, n, dtype):
    x = rand(rng, (n, n), dtype)
    return (x @ x.conj().T + n * np.eye(n)).astype(dtype)


@pytest.fixture(params=DTYPES)
def dtype(request):
    return np.dtype(request.param)


@pytest.mark.parametrize("ta,tb", [("N", "N"), ("C", "N"), ("N", "C"), ("C", "C")])
def test_gemm(dtype, ta, tb):
    rng = np.random.default_rng(1)
    m, n, k = 5, 4, 3
    a = rand(rng, (m, k) if ta == "N" else (k, m), dtype)
    b = rand(rng, (k, n) if tb == "N" else (n, k), dtype)
    c0 = rand(rng, (m, n), dtype)
    A, B, C = Block(a), Block(b), Block(c0)
    fp, iw, dw, _, cw = work(dtype)
    nb._gemm(fp, iw, dw, cw, CH[ta], CH[tb], m, n, k, -0.5, A.ptr, A.ld, B.ptr, B.ld, C.ptr, C.ld)
    close(C.view, c0 - 0.5 * op(a, ta) @ op(b, tb), dtype, 10)
    assert not C.big[:3].any()                               # nothing written outside the block


@pytest.mark.parametrize("trans", ["N", "C"])
def test_syrk_is_herk_for_complex_data(dtype, trans):
    rng = np.random.default_rng(2)
    n, k = 5, 3
    a = rand(rng, (n, k) if trans == "N" else (k, n), dtype)
    c0 = spd(rng, n, dtype)
    A, C = Block(a), Block(c0)
    fp, iw, _, rw, cw = work(dtype)
    nb._syrk(fp, iw, rw, cw, CH["L"], CH[trans], n, k, -1.0, A.ptr, A.ld, C.ptr, C.ld)
    close(np.tril(C.view), np.tril(c0 - op(a, trans) @ op(a, trans).conj().T), dtype, 10)
    assert np.array_equal(np.triu(C.view, 1), np.triu(c0, 1))   # the other triangle untouched


@pytest.mark.parametrize("side", ["L", "R"])
@pytest.mark.parametrize("uplo", ["L", "U"])
@pytest.mark.parametrize("trans", ["N", "C"])
@pytest.mark.parametrize("diag", ["N", "U"])
def test_trmm_and_both_ways_of_trsm(dtype, side, uplo, trans, diag):
    """trmm; trsm by trsm (no workspace) and by inverse (trtri + trmm: the other dimension >= 2k)."""
    rng = np.random.default_rng(3)
    k, other = 4, 9
    t = rand(rng, (k, k), dtype) + 4 * np.eye(k, dtype=dtype)
    tri = (np.tril(t) if uplo == "L" else np.triu(t))
    if diag == "U":
        tri = tri - np.diag(np.diag(tri)) + np.eye(k, dtype=dtype)
    shape = (k, other) if side == "L" else (other, k)
    b0 = rand(rng, shape, dtype)
    fp, iw, dw, _, cw = work(dtype)
    T = Block(t)
    B = Block(b0)
    nb._trxm(fp, nb._TRMM, iw, dw, cw, CH[side], CH[uplo], CH[trans], CH[diag], *shape, 2.0,
             T.ptr, T.ld, B.ptr, B.ld)
    close(B.view, 2.0 * (op(tri, trans) @ b0 if side == "L" else b0 @ op(tri, trans)), dtype, 10)
    inv = np.linalg.inv(op(tri, trans).astype(np.complex128 if dtype.kind == "c" else np.float64))
    want = 2.0 * (inv @ b0 if side == "L" else b0 @ inv)
    for ws in (np.empty(0, dtype), np.empty(k * k, dtype)):
        B = Block(b0)
        nb._trsm(fp, iw, dw, cw, ws, CH[side], CH[uplo], CH[trans], CH[diag], *shape, 2.0,
                 T.ptr, T.ld, B.ptr, B.ld)
        close(B.view, want, dtype, 10)
    assert np.array_equal(T.view, t)                          # the triangle is read, never written


def test_potrf_trtri_lauum(dtype):
    rng = np.random.default_rng(4)
    n = 6
    a = spd(rng, n, dtype)
    fp, iw, _, _, cw = work(dtype)
    A = Block(a)
    assert nb._lapack(fp, nb._POTRF, iw, cw, CH["L"], CH["N"], n, A.ptr, A.ld) == 0
    low = np.tril(A.view)
    close(low, sla.cholesky(a, lower=True), dtype, 10)
    assert nb._lapack(fp, nb._TRTRI, iw, cw, CH["L"], CH["N"], n, A.ptr, A.ld) == 0
    close(np.tril(A.view), np.linalg.inv(low), dtype, 100)
    inv = np.tril(A.view).copy()
    nb._lapack(fp, nb._LAUUM, iw, cw, CH["L"], CH["N"], n, A.ptr, A.ld)
    close(np.tril(A.view), np.tril(inv.conj().T @ inv), dtype, 100)


def test_potrf_reports_the_failing_minor(dtype):
    a = np.diag([4.0, 1.0, -1.0, 2.0]).astype(dtype)
    fp, iw, _, _, cw = work(dtype)
    A = Block(a)
    assert nb._lapack(fp, nb._POTRF, iw, cw, CH["L"], CH["N"], 4, A.ptr, A.ld) == 3


def test_getrf_and_laswp_are_lu_factor(dtype):
    rng = np.random.default_rng(5)
    n = 7
    a = rand(rng, (n, n), dtype)
    rest0 = rand(rng, (n, 2), dtype)
    fp, iw, _, _, _ = work(dtype)
    A, R = Block(a), Block(rest0)
    piv = np.zeros(n, np.int32)
    assert nb._getrf(fp, iw, n, n, A.ptr, A.ld, piv.ctypes.data) == 0
    lu, want_piv = sla.lu_factor(a)
    assert np.array_equal(piv - 1, want_piv)
    close(A.view, lu, dtype, 100)
    nb._laswp(fp, iw, 2, R.ptr, R.ld, n, piv.ctypes.data)
    rows = np.arange(n)
    for i, p in enumerate(want_piv):
        rows[[i, p]] = rows[[p, i]]
    assert np.array_equal(R.view, rest0[rows])


def test_colperm_undoes_the_row_interchanges_on_columns(dtype):
    rng = np.random.default_rng(6)
    n = 6
    a = rand(rng, (n, n), dtype)
    _, piv = sla.lu_factor(a)
    inv = np.asfortranarray(np.linalg.inv(a))
    _, low, up = sla.lu(a)                                    # a = p low up
    x = np.asfortranarray(np.linalg.inv(up) @ np.linalg.inv(low))   # inv(a) = x p^T: x's columns permuted
    nb._colperm(x, piv.astype(np.int32))
    close(x, inv, dtype, 1000)


def test_trsyl_solves_sylvester(dtype):
    rng = np.random.default_rng(7)
    m, n = 4, 3
    a = np.triu(rand(rng, (m, m), dtype)) + 3 * np.eye(m, dtype=dtype)
    b = np.triu(rand(rng, (n, n), dtype)) + 3 * np.eye(n, dtype=dtype)
    c = rand(rng, (m, n), dtype)
    fp, iw, _, rw, cw = work(dtype)
    A, B, C = Block(a), Block(b), Block(c)
    assert nb._trsyl(fp, iw, rw, cw, C.view, A.ptr, A.ld, B.ptr, B.ld, C.ptr, C.ld) == 0
    close(C.view, sla.solve_sylvester(a, b, c), dtype, 100)


@pytest.mark.parametrize("uplo", ["L", "U", "A"])
def test_lacpy(dtype, uplo):
    rng = np.random.default_rng(8)
    a = rand(rng, (4, 3), dtype)
    fp, iw, _, _, cw = work(dtype)
    A, B = Block(a), Block(np.zeros((4, 3), dtype))
    nb._lacpy(fp, iw, cw, CH[uplo], 4, 3, A.ptr, A.ld, B.ptr, B.ld)
    want = {"L": np.tril(a), "U": np.triu(a), "A": a}[uplo]
    assert np.array_equal(B.view, want)


@pytest.mark.parametrize("n", [5, 37])                       # one panel, several panels (_LU_PANEL)
def test_lu_without_pivoting(dtype, n):
    rng = np.random.default_rng(9)
    a = rand(rng, (n, n), dtype) + 2 * n * np.eye(n, dtype=dtype)
    fp, iw, dw, _, cw = work(dtype)
    A = Block(a)
    assert nb._lu(fp, iw, dw, cw, A.view, A.ptr, A.ld) == 0
    lower = np.tril(A.view, -1) + np.eye(n, dtype=dtype)
    close(lower @ np.triu(A.view), a, dtype, 10 * n)


def test_lu_reports_the_first_zero_pivot(dtype):
    a = np.array([[1.0, 2.0, 0.0], [1.0, 2.0, 1.0], [0.0, 1.0, 1.0]], dtype)
    fp, iw, dw, _, cw = work(dtype)
    A = Block(a)
    assert nb._lu(fp, iw, dw, cw, A.view, A.ptr, A.ld) == 2


def test_ul_multiplies_the_factors_back(dtype):
    rng = np.random.default_rng(10)
    n = 6
    a = rand(rng, (n, n), dtype)
    fp, iw, dw, _, cw = work(dtype)
    A = Block(a)
    nb._ul(fp, iw, dw, cw, np.empty(n * n, dtype), A.view, A.ptr, A.ld)
    close(A.view, np.triu(a) @ (np.tril(a, -1) + np.eye(n, dtype=dtype)), dtype, 10)


@pytest.mark.parametrize("tri,trans", [(0, False), (1, False), (2, True)])
def test_copy(dtype, tri, trans):
    rng = np.random.default_rng(11)
    s = rand(rng, (4, 4), dtype)
    d0 = rand(rng, (4, 4), dtype)
    d = np.asfortranarray(d0.copy())
    nb._copy(d, s, -1.0, tri, trans)
    full = -(s.conj().T if trans else s)
    keep = {0: np.zeros((4, 4), bool), 1: np.triu(np.ones((4, 4), bool), 1), 2: np.tril(np.ones((4, 4), bool), -1)}[tri]
    assert np.array_equal(d, np.where(keep, d0, full))


@pytest.mark.parametrize("left", [True, False])
@pytest.mark.parametrize("upper,unit,ta,tx", [(False, False, False, False), (True, True, True, False),
                                              (False, True, False, True)])
def test_triacc(dtype, left, upper, unit, ta, tx):
    rng = np.random.default_rng(12)
    k, other = 3, 4
    t = rand(rng, (k, k), dtype)
    tri = np.triu(t) if upper else np.tril(t)
    if unit:
        tri = tri - np.diag(np.diag(tri)) + np.eye(k, dtype=dtype)
    shape_x = (k, other) if left else (other, k)
    x = rand(rng, shape_x[::-1] if tx else shape_x, dtype)
    c0 = rand(rng, shape_x, dtype)
    c = np.asfortranarray(c0.copy())
    nb._triacc(c, 0.5, np.asfortranarray(t), upper, unit, ta, np.asfortranarray(x), tx, left)
    tt, xx = (tri.conj().T if ta else tri), (x.conj().T if tx else x)
    close(c, c0 + 0.5 * (tt @ xx if left else xx @ tt), dtype, 10)


@pytest.mark.parametrize("mirror", [True, False])
def test_upper_from_lower(dtype, mirror):
    rng = np.random.default_rng(13)
    n = 70                                                    # two 64 x 64 tiles
    a0 = rand(rng, (n, n), dtype)
    a = np.asfortranarray(a0.copy())
    nb._upper_from_lower(a, mirror)
    low = np.tril(a0)
    want = low + (np.tril(a0, -1).conj().T if mirror else 0)
    assert np.array_equal(a, want)


def test_one_routine_table_per_precision():
    """The four tables differ (s, d, c, z routines) and syrk is herk for complex data."""
    from flamefuse.blas_call import _ROUTINES       # the routine list lives beside the call (Numba-free)
    tables = {c: tuple(nb._FP[c]) for c in "fdFD"}
    assert len(set(tables.values())) == 4 and all(len(t) == len(_ROUTINES) for t in tables.values())
    from numba.extending import get_cython_function_address
    assert nb._FP["D"][nb._SYRK] == get_cython_function_address("scipy.linalg.cython_blas", "zherk")
    assert nb._FP["f"][nb._SYRK] == get_cython_function_address("scipy.linalg.cython_blas", "ssyrk")
