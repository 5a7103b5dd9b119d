"""Differential: random sizes, matrices and programs against NumPy/SciPy (hypothesis).

The programs reuse a few chain structures, so after the first examples every kernel comes
from the cache (keyed by structure, not n)."""
import numpy
import scipy.linalg
from hypothesis import given, settings
from hypothesis import strategies as st

import flamefuse.lazy as np
import flamefuse.lazy.scipy_linalg as sl


def spd_inverse(np, sl, a, b):
    L = np.linalg.cholesky(a)
    Li = np.linalg.inv(L)
    return Li.T @ Li


def chol_solve(np, sl, a, b):
    L = sl.cholesky(a, lower=True)
    return sl.solve_triangular(L.T, sl.solve_triangular(L, b, lower=True), lower=False)


def upper_factor(np, sl, a, b):
    U = sl.cholesky(a)
    return sl.solve_triangular(U, b, trans="T") + U @ b


def solve_inv(np, sl, a, b):
    return np.linalg.solve(a, b) + np.linalg.inv(a) @ b


PROGRAMS = [spd_inverse, chol_solve, upper_factor, solve_inv]


@settings(max_examples=30, deadline=None)
@given(n=st.integers(11, 40), k=st.integers(1, 5), seed=st.integers(0, 2 ** 16),
       which=st.integers(0, len(PROGRAMS) - 1), vector=st.booleans())
def test_programs_match_numpy_and_scipy(n, k, seed, which, vector):
    rng = numpy.random.default_rng(seed)
    x = rng.standard_normal((n, n))
    a = x @ x.T + n * numpy.eye(n)
    b = rng.standard_normal(n) if vector else rng.standard_normal((n, k))
    prog = PROGRAMS[which]
    want = prog(numpy, scipy.linalg, a, b)
    got = numpy.asarray(prog(np, sl, np.asarray(a), np.asarray(b)))
    tol = 100 * n * numpy.finfo(float).eps * numpy.linalg.cond(a) * max(1.0, numpy.abs(want).max())
    assert got.shape == want.shape
    assert numpy.abs(got - want).max() <= tol
