"""Run-time structure checks of matrices that come from outside a recorded chain.

Inside a chain the structure of every value is known from the operation that
made it (a Cholesky factor is lower triangular, ``L^T L`` is symmetric). A
matrix the chain reads from elsewhere is checked, exactly and with an early
exit, in 64 x 64 tiles: ``is_lower`` (nothing above the diagonal) and
``is_symmetric`` (``A == A^T`` bit for bit); ``is_identity`` (ones on the
diagonal, zeros elsewhere: ``np.identity(n)`` / ``np.eye(n)`` as an operand
of a product) by NumPy. Only square 2-D float arrays are checked; each costs one pass
over (half) the matrix at most and a few reads for a general one. In a process that has not
imported Numba (:func:`flamefuse.synth.fill._numpy_now`) the same answers come from NumPy (the
first row first: a general matrix fails there), in blocks of 128 columns: the whole-matrix
``np.tril`` / ``np.triu`` copies they replaced took 1.8 ms for a symmetric 500 x 500 matrix where
the blocks take 0.09 ms (Numba's loop 0.08 ms).
"""
from __future__ import annotations

import numpy as np

from flamefuse.jit import later
from flamefuse.synth.fill import _numpy_now


@later(cache=True, nogil=True)
def _is_lower(a):
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    if a[i, j] != 0:
                        return False
    return True


@later(cache=True, nogil=True)
def _is_symmetric(a):
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    if a[i, j] != a[j, i]:
                        return False
    return True


def _square(a) -> bool:
    return a.ndim == 2 and a.shape[0] == a.shape[1] and a.dtype.kind == "f"


_BLOCK = 128     # columns per NumPy step of the checks below


def is_lower(a: np.ndarray) -> bool:
    if not _square(a):
        return False
    if _numpy_now():
        if a[0, 1:].any():
            return False
        n = a.shape[0]
        for jb in range(0, n, _BLOCK):       # the rows above each block of columns, then its
            je = min(jb + _BLOCK, n)         # diagonal block: early exit, no n x n temporary
            if a[:jb, jb:je].any() or np.triu(a[jb:je, jb:je], 1).any():
                return False
        return True
    return bool(_is_lower(a))


def is_symmetric(a: np.ndarray) -> bool:
    if not _square(a):
        return False
    if _numpy_now():
        if not (a[0, 1:] == a[1:, 0]).all():
            return False
        n = a.shape[0]
        for jb in range(0, n, _BLOCK):       # rows jb..je against columns jb..je left of the
            je = min(jb + _BLOCK, n)         # diagonal block, then that block's strict lower
            d = a[jb:je, jb:je]              # triangle (NaN is unequal, as in the loop)
            if not (a[jb:je, :jb] == a[:jb, jb:je].T).all() or \
                    not np.array_equal(np.tril(d, -1), np.tril(d.T, -1)):
                return False
        return True
    return bool(_is_symmetric(a))


def is_identity(a: np.ndarray) -> bool:
    """Ones on the diagonal (n reads: where a general matrix fails) and nothing else nonzero
    (NaN counts): two NumPy passes at most, no compiled function to load (markov's
    ``np.identity(n) @ P`` waited 0.2-0.5 s for Numba here, the run's only Numba use)."""
    return _square(a) and bool((a.diagonal() == 1).all()) and np.count_nonzero(a) == a.shape[0]
