"""The form NumPy returns: the strict upper triangle zeroed (a factor) or mirrored (symmetric)."""
from __future__ import annotations

import numba


@numba.njit(cache=True, nogil=True)
def fill_upper(a, mirror):
    """a[i, j] (i < j) := a[j, i] when ``mirror``, else 0, in 64 x 64 tiles (column-major friendly)."""
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    a[i, j] = a[j, i] if mirror else 0.0
