"""Inputs and NumPy/SciPy references for every generated module (one entry per spec).

``CASES[spec](rng, n) -> (inputs, check)``: ``inputs`` the operands in spec
order (Fortran-ordered float64 matrices, 1-D vectors); ``check(outputs)``
returns (relative error, allowed error) after the kernel ran on them.
"""
from __future__ import annotations

import numpy as np
import scipy.linalg as sla

DTYPE = np.dtype(np.float64)   # the precision the cases are built in (tests set it per dtype)


def normal(rng, shape):
    """Standard normal entries in DTYPE (complex: independent real and imaginary parts)."""
    x = rng.standard_normal(shape)
    if DTYPE.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(DTYPE)


def spd(rng, n):
    """Symmetric (Hermitian) positive definite."""
    m = normal(rng, (n, n))
    return np.asfortranarray(m @ m.conj().T / n + np.eye(n, dtype=DTYPE))


def lower(rng, n):
    """Lower triangular with a real diagonal (as LAPACK's triangular factors have)."""
    return np.asfortranarray(np.tril(normal(rng, (n, n)), -1) / n + np.diag(1.5 + rng.random(n)).astype(DTYPE))


def general(rng, n):
    """Diagonally dominant, so LU without pivoting is stable."""
    return np.asfortranarray(normal(rng, (n, n)) / n + np.diag(2.0 + rng.random(n)).astype(DTYPE))


def vec(rng, n):
    return normal(rng, n)


def rel(got, ref, cond, n):
    err = np.linalg.norm(got - ref) / max(np.linalg.norm(ref), 1e-300)
    return err, 200 * max(n, 1) * np.finfo(got.dtype).eps * cond


def _unit_lower(a):
    return np.tril(a, -1) + np.eye(a.shape[0], dtype=a.dtype)


def _case_chol(rng, n):
    a = spd(rng, n)
    ref, cond = np.linalg.cholesky(a), np.linalg.cond(a)
    return [a], lambda out: rel(np.tril(out[0]), ref, cond, n)


def _case_ltl(rng, n):
    lo = lower(rng, n)
    ref, cond = np.tril(lo.conj().T @ lo), np.linalg.cond(lo) ** 2
    return [lo], lambda out: rel(np.tril(out[0]), ref, cond, n)


def _case_trinv(rng, n):
    lo = lower(rng, n)
    ref, cond = np.linalg.inv(lo), np.linalg.cond(lo)
    return [lo], lambda out: rel(np.tril(out[0]), ref, cond, n)


def _case_trinv_unit(rng, n):
    a = general(rng, n)
    keep = np.triu(a).copy()
    ref, cond = np.linalg.inv(_unit_lower(a)), np.linalg.cond(_unit_lower(a))
    return [a], lambda out: rel(np.tril(out[0], -1) + keep, np.tril(ref, -1) + keep, cond, n)


def _case_triuinv(rng, n):
    a = general(rng, n)
    keep = np.tril(a, -1).copy()
    ref, cond = np.linalg.inv(np.triu(a)), np.linalg.cond(np.triu(a))
    return [a], lambda out: rel(np.triu(out[0]) + keep, ref + keep, cond, n)


def _case_lu(rng, n):
    a = general(rng, n)
    ref, cond = a.copy(), np.linalg.cond(a)
    return [a], lambda out: rel(_unit_lower(out[0]) @ np.triu(out[0]), ref, cond, n)


def _case_ul(rng, n):
    a = general(rng, n)
    ref = np.triu(a) @ _unit_lower(a)
    return [a], lambda out: rel(out[0], ref, np.linalg.cond(np.triu(a)) * np.linalg.cond(_unit_lower(a)), n)


def _case_trsm(rng, n):
    lo, b = lower(rng, n), np.asfortranarray(normal(rng, (n, 3)))
    ref, cond = sla.solve_triangular(lo, b, lower=True), np.linalg.cond(lo)
    return [lo, b], lambda out: rel(out[1], ref, cond, n)


def _case_trsv(rng, n):
    lo, b = lower(rng, n), vec(rng, n)
    ref, cond = sla.solve_triangular(lo, b, lower=True), np.linalg.cond(lo)
    return [lo, b], lambda out: rel(out[1], ref, cond, n)


def _case_trmv(rng, n):
    lo, x, y = lower(rng, n), vec(rng, n), vec(rng, n)
    ref = y + lo @ x
    return [lo, x, y], lambda out: rel(out[2], ref, 1 + np.linalg.norm(lo) * np.linalg.norm(x), n)


def _case_chol_trinv(rng, n):
    a = spd(rng, n)
    ref, cond = np.linalg.inv(np.linalg.cholesky(a)), np.linalg.cond(a)
    return [a], lambda out: rel(np.tril(out[0]), ref, cond, n)


def _case_chol_trsm(rng, n):
    a, b = spd(rng, n), np.asfortranarray(normal(rng, (n, 3)))
    low = np.linalg.cholesky(a)
    ref, cond = sla.solve_triangular(low, b, lower=True), np.linalg.cond(a)
    return [a, b], lambda out: max(rel(out[1], ref, cond, n), rel(np.tril(out[0]), low, cond, n))


def _case_chol_solve(rng, n):
    a, b = spd(rng, n), vec(rng, n)
    low = np.linalg.cholesky(a)
    ref, cond = sla.solve_triangular(low, b, lower=True), np.linalg.cond(a)
    return [a, b], lambda out: max(rel(out[1], ref, cond, n), rel(np.tril(out[0]), low, cond, n))


def _case_spd_inverse(rng, n):
    a = spd(rng, n)
    ref, cond = np.tril(np.linalg.inv(a)), np.linalg.cond(a)
    return [a], lambda out: rel(np.tril(out[0]), ref, cond, n)


def _case_trinv_trmv(rng, n):
    lo, r, x, y = lower(rng, n), np.zeros((n, n), DTYPE, order="F"), vec(rng, n), vec(rng, n)
    inv, cond = np.linalg.inv(lo), np.linalg.cond(lo)
    ref = y + inv @ x
    return [lo, r, x, y], lambda out: max(rel(np.tril(out[1]), inv, cond, n), rel(out[3], ref, cond, n))


def _case_trmv_trinv(rng, n):
    lo, x, y = lower(rng, n), vec(rng, n), vec(rng, n)
    inv, cond = np.linalg.inv(lo), np.linalg.cond(lo)
    ref = y + lo @ x
    return [lo, x, y], lambda out: max(rel(np.tril(out[0]), inv, cond, n), rel(out[2], ref, cond, n))


def _case_general_inverse_nopiv(rng, n):
    a = general(rng, n)
    ref, cond = np.linalg.inv(a), np.linalg.cond(a)
    return [a], lambda out: rel(out[0], ref, cond, n)


def needs_pivoting(rng, n):
    """A random normal matrix: LU without pivoting is unstable on it."""
    return np.asfortranarray(normal(rng, (n, n)))


def _rows_permuted(lu_out, a, n):
    """(error, allowed): L U is a row permutation of A (matched row by row) and |L| <= 1."""
    low, up = _unit_lower(lu_out), np.triu(lu_out)
    prod = low @ up
    dist = np.linalg.norm(prod[:, None, :] - a[None, :, :], axis=2)
    match = dist.argmin(axis=1)
    bound = np.sqrt(2) if low.dtype.kind == "c" else 1.0     # complex pivots maximise |re| + |im| (izamax)
    if len(set(match.tolist())) != n or np.abs(low).max() > bound * (1 + 10 * np.finfo(low.dtype).eps):
        return np.inf, 0.0
    return rel(prod, a[match], np.linalg.cond(a), n)


def _case_lu_piv(rng, n):
    a = needs_pivoting(rng, n)
    keep = a.copy()
    return [a], lambda out: _rows_permuted(out[0], keep, n)


def _case_general_inverse(rng, n):
    a = needs_pivoting(rng, n)
    ref, cond = np.linalg.inv(a), np.linalg.cond(a)
    return [a], lambda out: rel(out[0], ref, cond, n)


def _case_lu_solve(rng, n):
    a, b = needs_pivoting(rng, n), np.asfortranarray(normal(rng, (n, 3)))
    ref, cond = np.linalg.solve(a, b), np.linalg.cond(a)
    return [a, b], lambda out: rel(out[1], ref, cond, n)


def _case_sylvester(rng, n):
    """A X + X B = C with upper-triangular A (m x m) and B (n x n); C is m x n with m != n, so the
    two dimension classes (C's rows with A, its columns with B) have different sizes."""
    m = n + 2 if n % 2 else max(n - 1, 1)
    a = np.asfortranarray(np.triu(normal(rng, (m, m))) / m + np.diag(1.0 + rng.random(m)).astype(DTYPE))
    b = np.asfortranarray(np.triu(normal(rng, (n, n))) / n + np.diag(1.0 + rng.random(n)).astype(DTYPE))
    c = np.asfortranarray(normal(rng, (m, n)))
    ref = sla.solve_sylvester(a, b, c)
    # the operator X -> A X + X B has eigenvalues a_ii + b_jj: its norm over the smallest of them
    gap = np.abs(np.diag(a)[:, None] + np.diag(b)[None, :]).min()
    cond = (np.linalg.norm(a, 2) + np.linalg.norm(b, 2)) / gap * max(1.0, np.linalg.cond(a), np.linalg.cond(b))
    return [a, b, c], lambda out: rel(out[2], ref, cond, max(m, n))


CASES = {"cholesky": _case_chol, "ltl": _case_ltl, "trinv": _case_trinv, "trinv_unit": _case_trinv_unit,
         "triuinv": _case_triuinv, "lu_nopiv": _case_lu, "lu": _case_lu_piv, "ul": _case_ul, "trsm": _case_trsm, "trsv": _case_trsv,
         "trmv": _case_trmv, "chol_trinv": _case_chol_trinv, "chol_trsm": _case_chol_trsm,
         "chol_solve": _case_chol_solve, "spd_inverse": _case_spd_inverse, "trinv_trmv": _case_trinv_trmv,
         "trmv_trinv": _case_trmv_trinv, "general_inverse": _case_general_inverse,
         "general_inverse_nopiv": _case_general_inverse_nopiv, "lu_solve": _case_lu_solve,
         "sylvester": _case_sylvester}
