"""Matrix-vector, vector-matrix and outer products on numbered bases, and which of their groups
need a loop nest at all.

A :class:`Product` is one recorded product: ``name`` is ``"matvec"`` (``out[i] = sum_j A[i, j]
x[j]``, ins ``(A, x)``), ``"vecmat"`` (``out[j] = sum_i x[i] A[i, j]``, ins ``(x, A)``) or
``"outer"`` (``out[i, j] = u[i] v[j]``, ins ``(u, v)``); ``out`` is a fresh contiguous base.

A loop nest (:mod:`flamefuse.runtime.linalg`) pays off only when two products of a group read
the same matrix (``q = A @ p; s = A.T @ r``: one pass over ``A`` instead of two). Otherwise each
product is NumPy's own call (:func:`run_blas`): a product reads its matrix once either way, and
BLAS's gemv does that pass faster than a generated loop nest (markov's ``p @ P``, n = 2000:
0.4 ms against 1.1 ms) and gives exactly NumPy's result. This module imports no loop nests (nor
OR-Tools, which they load), so a program with only such products never pays for them.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from flamefuse.runtime.numpy_program import ndview
from flamefuse.runtime.program import Ref
from flamefuse.runtime.sites import at_site, here


@dataclass(frozen=True, slots=True)
class Product:
    name: str
    out: Ref
    ins: tuple[Ref, Ref]
    dtype: str


_MATRIX = {"matvec": 0, "vecmat": 1}     # which input is the matrix


LOOPNEST_MAX = 8     # products in one loop nest at most: a larger group (a correlation matrix
# filled column by column: 239 products of one matrix) would be one huge generated function that
# Numba's type inference cannot compile (RecursionError) and that takes minutes at best


def shares_a_matrix(products) -> bool:
    """Do two products of the group read (any view of) the same matrix base, in a group small
    enough for one loop nest (``LOOPNEST_MAX``)? (Whether they then fuse into one pass, as
    ``q = A @ x; s = A.T @ q`` does row by row, is the loop nest's own analysis.)"""
    if len(products) > LOOPNEST_MAX:
        return False
    seen = set()
    for p in products:
        k = _MATRIX.get(p.name)
        if k is not None:
            if p.ins[k].base in seen:
                return True
            seen.add(p.ins[k].base)
    return False


def run_blas(products, buffers: list, recorded=None, mark=None) -> None:
    """Each product in order, NumPy's call (gemv, or the outer multiply) on strided views of the
    flat ``buffers``, written into its output's buffer (which a later product may read). Each
    call is made at the script's line of its recorded op (``recorded``, in order: its ``site``,
    :mod:`flamefuse.runtime.sites`; else the line that made the flush run), so NumPy's warning
    (``overflow encountered in matmul``) names it; ``mark(k)`` is called before product ``k``."""
    for k, p in enumerate(products):
        x, y = (ndview(buffers[r.base], r) for r in p.ins)
        out = ndview(buffers[p.out.base], p.out)
        site = getattr(recorded[k], "site", None) if recorded is not None else None
        if mark is not None:
            mark(k)
        at_site(site or here(), np.multiply.outer if p.name == "outer" else np.matmul, x, y, out=out)
