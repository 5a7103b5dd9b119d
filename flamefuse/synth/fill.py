"""Triangle and copy passes, in 64 x 64 tiles (column-major friendly).

``fill_upper``: the form NumPy returns, the strict upper triangle zeroed (a
factor) or mirrored (symmetric). ``copy_lower``: a matrix's lower triangle
into a Fortran-ordered buffer (what a Cholesky reads: half the traffic of a
full transposing copy of a C-ordered input). ``copy_finite``: a copy that
reports a NaN or an infinity (``I @ B`` equals B only when B is finite).

Each is a Numba function compiled at its first call in a process that has imported Numba
already; in one that has not, the same values come from NumPy's calls (:func:`_numpy_now`; the
same bits: copies, zeros and mirrored entries), so no run imports Numba for a triangle: not a
cold one whose kernels compile in the background (``FLAMEFUSE_COMPILE=background``,
:mod:`flamefuse.runtime.compiler`), nor a warm one whose chain kernels are native libraries
(:mod:`flamefuse.synth.native_chain`), whichever compile mode it runs in.
"""
from __future__ import annotations

import functools
import sys

import numpy as np

from flamefuse.jit import later


def _numpy_now() -> bool:
    return "numba" not in sys.modules


@functools.lru_cache(maxsize=4)
def _lower_mask(n: int, m: int) -> np.ndarray:
    """Where i >= j in an n x m matrix (read only; kept for the next call of that shape)."""
    mask = np.tri(n, m, dtype=bool)
    mask.setflags(write=False)
    return mask


@functools.lru_cache(maxsize=4)
def _upper_mask(n: int, m: int) -> np.ndarray:
    mask = ~_lower_mask(n, m)
    mask.setflags(write=False)
    return mask


def fill_upper(a, mirror):
    """a[i, j] (i < j) := a[j, i] when ``mirror``, else 0."""
    if not _numpy_now():
        return _fill_upper(a, mirror)
    np.copyto(a, a.T if mirror else 0, where=_upper_mask(*a.shape))


def copy_lower(dst, src):
    """dst[i, j] := src[i, j] for i >= j (the strict upper triangle of dst is left as it is)."""
    if not _numpy_now():
        return _copy_lower(dst, src)
    np.copyto(dst, src, where=_lower_mask(*src.shape))


def copy_finite(dst, src):
    """dst := src + 0.0; False (dst undefined) when src holds a NaN or an infinity."""
    if not _numpy_now():
        return _copy_finite(dst, src)
    if not np.isfinite(src).all():
        return False
    np.add(src, 0.0, out=dst, casting="unsafe")
    return True


@later(cache=True, nogil=True)
def _fill_upper(a, mirror):
    """a[i, j] (i < j) := a[j, i] when ``mirror``, else 0, in 64 x 64 tiles (column-major friendly)."""
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    a[i, j] = a[j, i] if mirror else 0.0


@later(cache=True, nogil=True)
def _copy_lower(dst, src):
    """dst[i, j] := src[i, j] for i >= j (the strict upper triangle of dst is left as it is)."""
    n = src.shape[0]
    for jb in range(0, n, 64):
        for ib in range(jb, n, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(max(ib, j), min(ib + 64, n)):
                    dst[i, j] = src[i, j]


@later(cache=True, nogil=True)
def _copy_finite(dst, src):
    """dst := src (same shape, any layouts), tile by tile; False at the first NaN or infinity."""
    n, m = src.shape
    for jb in range(0, m, 64):
        for ib in range(0, n, 64):
            for j in range(jb, min(jb + 64, m)):
                for i in range(ib, min(ib + 64, n)):
                    x = src[i, j]
                    if x - x != 0:
                        return False
                    dst[i, j] = x + 0.0
    return True
