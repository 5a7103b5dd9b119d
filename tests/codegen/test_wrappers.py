"""The generated modules' Python side (flamefuse.blas_call, flamefuse.codegen.wrappers), called directly.

Every generated module copies this module; its tables come in as arguments, so a made-up table
and a made-up "kernel" exercise the checks, the block sizes and the SciPy-style call here.
"""
from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg as sla

from flamefuse import blas_call as c
from flamefuse.codegen import wrappers as w

STEPS = ((100, 16, True), (1000, 64, False), (1 << 62, 128, False))


@pytest.mark.parametrize("n,nb", [(1, 16), (100, 16), (101, 64), (1000, 64), (10 ** 6, 128)])
def test_block_size_follows_the_table(n, nb):
    assert c._block_size(n, STEPS) == nb


def matrix(n=4, dtype=np.float64, order="F"):
    return np.zeros((n, n), dtype, order=order)


def test_check_returns_the_block_size():
    a, b = matrix(), matrix()
    args = ((a, "A", "matrix", "2x2"), (b, "B", "matrix", "2x2"))
    assert c._check(args, None, STEPS) == 16 and c._check(args, np.int64(3), STEPS) == 3


@pytest.mark.parametrize("make,block_size,error,words", [
    (lambda: (matrix(), matrix(dtype=np.float32)), None, TypeError, "one dtype"),
    (lambda: (matrix(dtype=np.int64), matrix(dtype=np.int64)), None, TypeError, "astype"),
    (lambda: (matrix(), matrix(order="C")), None, ValueError, "asfortranarray"),
    (lambda: (matrix(), matrix(5)), None, ValueError, "sizes must match"),
    (lambda: (lambda a: (a, a[:, :]))(matrix()), None, ValueError, "share memory"),
    (lambda: (matrix(), matrix()), True, ValueError, "block_size"),
    (lambda: (matrix(), matrix()), 0, ValueError, "block_size"),
    (lambda: (matrix(), np.zeros((4, 5), order="F")), None, ValueError, "square"),
    (lambda: (matrix(), [[0.0]]), None, TypeError, "numpy.ndarray"),
])
def test_check_says_what_to_pass(make, block_size, error, words):
    a, b = make()
    with pytest.raises(error, match=words):
        c._check(((a, "A", "matrix", "2x2"), (b, "B", "matrix", "2x2")), block_size, STEPS)


def test_pivots_are_checked_or_made():
    assert c._pivots(None, 3).shape == (3,)
    piv = np.empty(3, np.int32)
    assert c._pivots(piv, 3) is piv
    with pytest.raises(ValueError, match="int32"):
        c._pivots(np.empty(3, np.int64), 3)


@pytest.mark.parametrize("dtype,want", [(np.int16, np.float64), (np.bool_, np.float64), (np.float16, np.float32),
                                        (np.complex64, np.complex64), (np.float32, np.float32)])
def test_precision(dtype, want):
    assert w._precision(np.zeros(1, dtype), "A") == want


def test_precision_refuses_what_lapack_cannot_compute():
    with pytest.raises(TypeError, match="LAPACK precision"):
        w._precision(np.zeros(1, object), "A")


def test_prepare_uses_the_callers_memory_only_where_allowed():
    f = np.asfortranarray(np.eye(3))
    assert w._prepare(f, "A", "matrix", True, True, True, False, f.dtype)[0] is f
    assert w._prepare(f, "A", "matrix", True, False, True, False, f.dtype)[0] is not f   # not overwrite_a
    c = np.eye(3)
    got, flipped = w._prepare(c, "A", "matrix", True, True, True, True, c.dtype)
    assert flipped and np.shares_memory(got, c) and got.flags.f_contiguous
    cc = np.eye(3, dtype=np.complex128)
    assert not w._prepare(cc, "A", "matrix", True, True, True, True, cc.dtype)[1]           # complex: no flip
    with pytest.raises(ValueError, match="infs or NaNs"):
        w._prepare(np.full((2, 2), np.nan), "A", "matrix", False, False, True, False, np.dtype(np.float64))


def fake_cholesky(a, *, block_size):
    """A stand-in kernel: the lower Cholesky factor in place (upper triangle left as it was), info."""
    try:
        low = np.linalg.cholesky(a)
    except np.linalg.LinAlgError:
        return 2
    a[...] = np.where(np.tri(*a.shape, dtype=bool), low, a)
    return 0


TABLE = ((("A", "matrix", True, True),), (("A", "lower"),), False, "spd")


@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "int64"])
def test_scipy_call_any_layout_and_precision(dtype):
    rng = np.random.default_rng(0)
    x = rng.integers(-3, 4, (5, 5)) if dtype == "int64" else rng.standard_normal((5, 5))
    a = (x @ x.T + 5 * np.eye(5)).astype(dtype)
    before = a.copy()
    got = w._scipy_call("chol", TABLE, {"v1": fake_cholesky}, fake_cholesky, None, (a,), {"A": False}, True, None)
    assert np.array_equal(a, before)                              # the input is left alone
    assert got.dtype == (np.float64 if dtype == "int64" else dtype)
    assert np.allclose(got, sla.cholesky(before.astype(got.dtype), lower=True), rtol=1e-4)
    assert np.array_equal(np.triu(got, 1), np.zeros((5, 5)))       # zeros above, as SciPy returns


def test_scipy_call_failures():
    a = -np.eye(3)
    with pytest.raises(np.linalg.LinAlgError, match="leading minor of order 2 is not positive definite"):
        w._scipy_call("chol", TABLE, {}, fake_cholesky, None, (a,), {}, True, None)
    with pytest.raises(ValueError, match="unknown variant 'v9' of chol: choose one of v1"):
        w._scipy_call("chol", TABLE, {"v1": fake_cholesky}, fake_cholesky, "v9", (a,), {}, True, None)
    with pytest.warns(sla.LinAlgWarning, match="singular matrix"):
        w._failed("lu", 1, "warn")
    with pytest.raises(np.linalg.LinAlgError, match="singular matrix"):
        w._failed("inv", 1, "singular")
