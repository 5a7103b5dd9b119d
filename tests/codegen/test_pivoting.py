"""LU with partial pivoting: the fused general inverse, lu and lu_solve against LAPACK/NumPy.

Every variant of each pivoted module runs on matrices that need pivoting:
random normal ones, permutations, matrices that swap at every step, singular
and near-singular ones, and Wilkinson's growth-factor matrix.
"""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
import scipy.linalg as sla
import scipy.linalg.lapack as lapack

from flamefuse.codegen import load_generated

ROOT = Path(__file__).resolve().parents[2]
INV = load_generated(ROOT / "generated" / "general_inverse.py")
LU = load_generated(ROOT / "generated" / "lu.py")
SOLVE = load_generated(ROOT / "generated" / "lu_solve.py")
NB = (None, 1, 3, 16, 64)


def backward_error(x, a):
    n = a.shape[0]
    return np.linalg.norm(x @ a - np.eye(n)) / (np.linalg.norm(a) * np.linalg.norm(x) * n)


def fused_inverse(a, nb=None, variant=None):
    x = np.asfortranarray(a.copy())
    info = (INV.VARIANTS[variant] if variant else INV.DEFAULT)(x, block_size=nb)
    return x, info


@pytest.mark.parametrize("n", [1, 2, 10, 64, 100, 257, 500, 1000])
def test_backward_error_within_10x_of_numpy(n):
    a = np.random.default_rng(n).standard_normal((n, n))
    ref = backward_error(np.linalg.inv(a), a)
    for nb in NB:
        x, info = fused_inverse(a, nb)
        assert info == 0
        assert backward_error(x, a) <= 10 * max(ref, np.finfo(float).eps / n), (nb, backward_error(x, a), ref)


@pytest.mark.parametrize("n", [1, 2, 3, 8, 33, 70])
def test_permutation_matrices_invert_exactly(n):
    rng = np.random.default_rng(n)
    for _ in range(5):
        p = np.eye(n)[rng.permutation(n)]
        for nb in NB:
            x, info = fused_inverse(p, nb)
            assert info == 0 and np.array_equal(x, p.T), nb
    x, info = fused_inverse(np.array([[0.0, 1.0], [1.0, 0.0]]))
    assert info == 0 and np.array_equal(x, [[0.0, 1.0], [1.0, 0.0]])


def swap_every_step(n, rng):
    """A diagonally dominant matrix with its rows shifted cyclically by one: at step k the pivot
    is in the last row, so every step but the last swaps."""
    return np.roll(rng.standard_normal((n, n)) + 4 * n * np.eye(n), -1, axis=0)


@pytest.mark.parametrize("n", [4, 31, 130])
def test_a_swap_at_every_step(n):
    a = swap_every_step(n, np.random.default_rng(n))
    piv = sla.lu_factor(a)[1]
    assert np.all(piv[:-1] != np.arange(n - 1)), piv
    ref = np.linalg.inv(a)
    for nb in NB:
        x, info = fused_inverse(a, nb)
        assert info == 0 and np.allclose(x, ref, rtol=1e-12, atol=1e-14), nb


@pytest.mark.parametrize("n,zero", [(1, 0), (6, 0), (6, 3), (40, 39), (100, 17)])
def test_singular_gives_getrf_info(n, zero):
    a = np.random.default_rng(n).standard_normal((n, n))
    a[:, zero] = 0.0                                  # U[zero, zero] is exactly zero
    want = lapack.dgetrf(a.copy())[2]
    assert want == zero + 1
    for name in INV.VARIANTS:
        for nb in NB:
            assert fused_inverse(a, nb, name)[1] == want, (name, nb)
    lu_ref, piv_ref, _ = lapack.dgetrf(a.copy())
    for fn in LU.VARIANTS.values():                   # the factorization completes, like getrf
        f, piv = np.asfortranarray(a.copy()), np.empty(n, np.int32)
        assert fn(f, piv=piv, block_size=4) == want
        assert np.array_equal(piv, piv_ref) and np.allclose(f, lu_ref, atol=1e-12)


def test_near_singular_matches_numpy_backward_error():
    rng = np.random.default_rng(7)
    u, _ = np.linalg.qr(rng.standard_normal((200, 200)))
    v, _ = np.linalg.qr(rng.standard_normal((200, 200)))
    a = u @ np.diag(np.logspace(0, -14, 200)) @ v.T
    ref = backward_error(np.linalg.inv(a), a)
    for nb in NB:
        x, info = fused_inverse(a, nb)
        assert info == 0 and backward_error(x, a) <= 10 * ref, nb


def growth_matrix(n):
    """1 on the diagonal, -1 below it, 1 in the last column: growth factor 2^(n-1)."""
    a = np.tril(-np.ones((n, n)), -1) + np.eye(n)
    a[:, -1] = 1.0
    return a


@pytest.mark.parametrize("n", [5, 40, 60])
def test_growth_factor_matrix_like_lapack(n):
    a = growth_matrix(n)
    lu_ref, piv_ref, info = lapack.dgetrf(a.copy())
    assert info == 0 and lu_ref[-1, -1] == 2.0 ** (n - 1)
    for fn in LU.VARIANTS.values():
        f, piv = np.asfortranarray(a.copy()), np.empty(n, np.int32)
        assert fn(f, piv=piv, block_size=7) == 0
        assert np.array_equal(piv, piv_ref) and np.array_equal(f, lu_ref)
    x_ref = lapack.dgetri(lu_ref, piv_ref)[0]
    for nb in NB:
        x, info = fused_inverse(a, nb)
        assert info == 0
        assert np.linalg.norm(x - x_ref) <= 1e-12 * np.linalg.norm(x_ref) * n, nb


@pytest.mark.parametrize("n", [1, 9, 64, 150])
def test_lu_pivots_and_factors_equal_scipy(n):
    a = np.random.default_rng(n).standard_normal((n, n))
    lu_ref, piv_ref = sla.lu_factor(a)
    for fn in LU.VARIANTS.values():
        for nb in NB:
            f, piv = np.asfortranarray(a.copy()), np.empty(n, np.int32)
            assert fn(f, piv=piv, block_size=nb) == 0
            assert np.array_equal(piv, piv_ref), nb
            assert np.allclose(f, lu_ref, rtol=1e-10, atol=1e-12), nb


@pytest.mark.parametrize("n,k", [(1, 1), (10, 3), (100, 7), (300, 1)])
def test_lu_solve_equals_scipy(n, k):
    rng = np.random.default_rng(n + k)
    a, b = rng.standard_normal((n, n)), rng.standard_normal((n, k))
    ref = sla.lu_solve(sla.lu_factor(a), b)
    cond = np.linalg.cond(a)
    for fn in SOLVE.VARIANTS.values():
        for nb in NB:
            f, x = np.asfortranarray(a.copy()), np.asfortranarray(b.copy())
            assert fn(f, x, block_size=nb) == 0
            assert np.linalg.norm(x - ref) <= 1e3 * n * np.finfo(float).eps * cond * np.linalg.norm(ref), nb


def test_pivot_vector_is_checked():
    a = np.asfortranarray(np.eye(4))
    for bad in (np.empty(3, np.int32), np.empty(4, np.int64), [0, 1, 2, 3]):
        with pytest.raises(ValueError, match="piv"):
            LU.DEFAULT(a, piv=bad)


def test_variants_that_cannot_pivot_say_why():
    assert set(LU.NOT_DERIVED) == {"lu_v1", "lu_v2"}
    assert all("partial pivoting" in why for why in LU.NOT_DERIVED.values())
