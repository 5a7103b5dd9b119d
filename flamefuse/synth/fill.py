"""Triangle and copy passes, in 64 x 64 tiles (column-major friendly).

``fill_upper``: the form NumPy returns, the strict upper triangle zeroed (a
factor) or mirrored (symmetric). ``copy_lower``: a matrix's lower triangle
into a Fortran-ordered buffer (what a Cholesky reads: half the traffic of a
full transposing copy of a C-ordered input). ``copy_finite``: a copy that
reports a NaN or an infinity (``I @ B`` equals B only when B is finite).
"""
from __future__ import annotations

from flamefuse.jit import later


@later(cache=True, nogil=True)
def fill_upper(a, mirror):
    """a[i, j] (i < j) := a[j, i] when ``mirror``, else 0, in 64 x 64 tiles (column-major friendly)."""
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    a[i, j] = a[j, i] if mirror else 0.0


@later(cache=True, nogil=True)
def copy_lower(dst, src):
    """dst[i, j] := src[i, j] for i >= j (the strict upper triangle of dst is left as it is)."""
    n = src.shape[0]
    for jb in range(0, n, 64):
        for ib in range(jb, n, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(max(ib, j), min(ib + 64, n)):
                    dst[i, j] = src[i, j]


@later(cache=True, nogil=True)
def copy_finite(dst, src):
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
