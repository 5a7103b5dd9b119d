"""Triangle and copy passes, in 64 x 64 tiles (column-major friendly).

``fill_upper``: the form NumPy returns, the strict upper triangle zeroed (a
factor) or mirrored (symmetric). ``copy_lower``: a matrix's lower triangle
into a Fortran-ordered buffer (what a Cholesky reads). ``copy_finite``: a copy that
reports a NaN or an infinity (``I @ B`` equals B only when B is finite).

Each is a Numba function compiled at its first call in a process that has imported Numba
already; in one that has not, the same values come from NumPy's calls (:func:`_numpy_now`; the
same bits: copies, zeros and mirrored entries), so no run imports Numba for a triangle: not a
cold one whose kernels compile in the background (``FLAMEFUSE_COMPILE=background``,
:mod:`flamefuse.runtime.compiler`), nor a warm one whose chain kernels are native libraries
(:mod:`flamefuse.synth.native_chain`), whichever compile mode it runs in. Those NumPy calls work
in 64-column blocks (the rectangle above, or below, each diagonal block as one slice assignment,
the diagonal block through a small mask): a masked ``copyto`` over the whole matrix reads an
n x n mask and took 2-2.5x as long (n = 500, one thread: zeroing 103 against 40 us, mirroring
174 against 67 us, the Numba loops' times).
"""
from __future__ import annotations

import functools
import sys

import numpy as np

from flamefuse.jit import later


def _numpy_now() -> bool:
    return "numba" not in sys.modules


@functools.lru_cache(maxsize=16)
def _lower_mask(n: int, m: int) -> np.ndarray:
    """Where i >= j in an n x m matrix (read only; kept for the next call of that shape)."""
    mask = np.tri(n, m, dtype=bool)
    mask.setflags(write=False)
    return mask


@functools.lru_cache(maxsize=16)
def _upper_mask(n: int, m: int) -> np.ndarray:
    mask = ~_lower_mask(n, m)
    mask.setflags(write=False)
    return mask


_BLOCK = 64


def fill_upper(a, mirror):
    """a[i, j] (i < j) := a[j, i] when ``mirror``, else 0."""
    if not _numpy_now():
        return _fill_upper(a, mirror)
    n = a.shape[0]
    if a.shape[1] != n:
        np.copyto(a, a.T if mirror else 0, where=_upper_mask(*a.shape))
        return
    for jb in range(0, n, _BLOCK):
        je = min(jb + _BLOCK, n)
        if jb:
            a[:jb, jb:je] = a[jb:je, :jb].T if mirror else 0
        d = a[jb:je, jb:je]
        np.copyto(d, d.T if mirror else 0, where=_upper_mask(je - jb, je - jb))


def copy_lower(dst, src):
    """dst[i, j] := src[i, j] for i >= j (the strict upper triangle of dst is left as it is)."""
    if not _numpy_now():
        return _copy_lower(dst, src)
    n, m = src.shape
    if n != m:
        np.copyto(dst, src, where=_lower_mask(n, m))
        return
    for jb in range(0, n, _BLOCK):       # each block of columns: its diagonal block through a
        je = min(jb + _BLOCK, n)         # small mask, then the rows below it as one slice
        np.copyto(dst[jb:je, jb:je], src[jb:je, jb:je], where=_lower_mask(je - jb, je - jb))
        if je < n:
            dst[je:, jb:je] = src[je:, jb:je]


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
