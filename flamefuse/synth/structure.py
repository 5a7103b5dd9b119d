"""Run-time structure checks of matrices that come from outside a recorded chain.

Inside a chain the structure of every value is known from the operation that
made it (a Cholesky factor is lower triangular, ``L^T L`` is symmetric). A
matrix the chain reads from elsewhere is checked, exactly and with an early
exit, in 64 x 64 tiles: ``is_lower`` (nothing above the diagonal) and
``is_symmetric`` (``A == A^T`` bit for bit) and ``is_identity`` (ones on the
diagonal, zeros elsewhere: ``np.identity(n)`` / ``np.eye(n)`` as an operand
of a product). Only square 2-D float arrays are checked; each costs one pass
over (half) the matrix at most and a few reads for a general one.
"""
from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True, nogil=True)
def _is_lower(a):
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    if a[i, j] != 0:
                        return False
    return True


@numba.njit(cache=True, nogil=True)
def _is_symmetric(a):
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    if a[i, j] != a[j, i]:
                        return False
    return True


@numba.njit(cache=True, nogil=True)
def _is_identity(a):
    n = a.shape[0]
    for i in range(n):                   # the diagonal first: a general matrix fails at once
        if a[i, i] != 1:
            return False
    for jb in range(0, n, 64):
        for ib in range(0, n, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, n)):
                    if i != j and a[i, j] != 0:
                        return False
    return True


def _square(a) -> bool:
    return a.ndim == 2 and a.shape[0] == a.shape[1] and a.dtype.kind == "f"


def is_lower(a: np.ndarray) -> bool:
    return _square(a) and bool(_is_lower(a))


def is_symmetric(a: np.ndarray) -> bool:
    return _square(a) and bool(_is_symmetric(a))


def is_identity(a: np.ndarray) -> bool:
    return _square(a) and bool(_is_identity(a))
