"""A generated kernel compiles once per dtype, whatever the shapes of its matrices.

Numba types an array that is both C- and F-contiguous (a matrix with a dimension of 1:
1 x 1, n x 1, 1 x n) as layout C and any other Fortran-ordered matrix as F, so a kernel
given the matrices themselves compiled a second time the first time such a matrix came
(a user's cold-start cost).  The wrappers pass the kernels the matrices' transposes
(:mod:`flamefuse.codegen.numba_target`): one Numba type for both.  Here the kernels'
dispatchers count their compiled float64 signatures after calls with both kinds of
shapes, and every result is checked against NumPy.
"""
from __future__ import annotations

from pathlib import Path

import numba
import numpy as np
import pytest

from flamefuse.codegen import load_generated

ROOT = Path(__file__).resolve().parents[2]


def _float64_signatures(dispatcher) -> list:
    return [sig for sig in dispatcher.signatures if sig[0].dtype == numba.float64]


def _lower(rng, n):
    return np.asfortranarray(np.tril(rng.standard_normal((n, n)), -1) / n + np.diag(1.5 + rng.random(n)))


@pytest.mark.parametrize("variant", ["trsm_v1", "trsm_v2"])
def test_trsm_compiles_once_for_n_by_1_and_n_by_k_right_hand_sides(variant):
    module = load_generated(ROOT / "generated" / "trsm.py")
    kernel = getattr(module, "_k_" + variant)
    rng = np.random.default_rng(7)
    # (n, k): B is n x 1 (C- and F-contiguous), n x k, and 1 x 1 with a 1 x 1 L
    for n, k in ((5, 1), (5, 3), (1, 1), (6, 2), (3, 1)):
        lo, b = _lower(rng, n), np.asfortranarray(rng.standard_normal((n, k)))
        want = np.linalg.solve(lo, b)
        got = b.copy(order="F")
        assert module.VARIANTS[variant](lo, got, block_size=2) == 0
        np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)
    assert len(_float64_signatures(kernel)) == 1, [str(s) for s in kernel.signatures]


def test_trmv_compiles_once_for_a_1_by_1_matrix():
    module = load_generated(ROOT / "generated" / "trmv.py")
    kernel = module._k_trmv_v3
    rng = np.random.default_rng(8)
    for n in (1, 4, 1, 9):
        lo, x, y = _lower(rng, n), rng.standard_normal(n), rng.standard_normal(n)
        want = y + lo @ x
        assert module.trmv_v3(lo, x, y, block_size=3) == 0
        np.testing.assert_allclose(y, want, rtol=1e-12, atol=1e-12)
    assert len(_float64_signatures(kernel)) == 1, [str(s) for s in kernel.signatures]


def test_sylvester_compiles_once_for_a_column_and_a_square_right_hand_side():
    module = load_generated(ROOT / "generated" / "sylvester.py")
    name = module.DEFAULT_NAME
    kernel = getattr(module, "_k_" + name)
    rng = np.random.default_rng(9)
    for m, n in ((4, 1), (3, 3), (1, 1), (1, 4)):
        a = np.asfortranarray(np.triu(rng.standard_normal((m, m))) / m + np.diag(1.0 + rng.random(m)))
        b = np.asfortranarray(np.triu(rng.standard_normal((n, n))) / n + np.diag(1.0 + rng.random(n)))
        c = np.asfortranarray(rng.standard_normal((m, n)))
        # A X + X B = C as one linear system: (I (x) A + B^T (x) I) vec(X) = vec(C), column-major vec
        k = np.kron(np.eye(n), a) + np.kron(b.T, np.eye(m))
        want = np.linalg.solve(k, c.reshape(-1, order="F")).reshape((m, n), order="F")
        got = c.copy(order="F")
        assert module.DEFAULT(a, b, got, block_size=2) == 0
        np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
    assert len(_float64_signatures(kernel)) == 1, [str(s) for s in kernel.signatures]
