"""Tile tasks run: the generated modules' Numba routines on one tile and its inputs.

``routines()`` is :mod:`flamefuse.codegen.numba_blas`, the module whose source
every generated module copies (BLAS/LAPACK through SciPy's Cython function
pointers, ``_gemm _syrk _trsm _trxm _lapack _lu _ul _triacc _copy``), imported
on the first task (Numba ``cache=True``: compiled once per machine), so a
worker process on any machine with flamefuse installed runs the same routines.
``run_task(steps, row0, dtype, target, *inputs) -> tile`` is the
function of every tile task: a Fortran-ordered copy ``W`` of ``target`` (the
inputs are never written, as Dask requires), each step (an IR ``Stmt`` on
whole tiles, see :mod:`flamefuse.dask.plan`) applied in order, ``W``
returned.  A factorization that fails raises ``numpy.linalg.LinAlgError``
naming the global row (``row0`` is the tile's first row).  One BLAS thread
per call where the process has not set its own (a worker's threads are its
parallelism).
"""
from __future__ import annotations

import numpy as np

from flamefuse.blas_call import _SET_THREADS


def routines():
    """:mod:`flamefuse.codegen.numba_blas` (imported here, not at the top: building a graph needs
    no Numba)."""
    from flamefuse.codegen import numba_blas
    return numba_blas


def _ch(m, c: str) -> int:
    """The BLAS character: a transpose is the conjugate transpose (``C``), as in the kernels."""
    return {"L": m._L, "U": m._U, "N": m._N, "T": m._C, "R": m._R}[c]


def _tile(x, dtype):
    a = np.asarray(x)
    if a.ndim == 1:
        a = a.reshape(a.shape[0], 1)
    return np.asfortranarray(a, dtype=dtype)


def _apply(m, st, w, ins, fp, iw, dw, rw, cw) -> int:
    op = st.op
    rows, cols = w.shape
    lw = max(1, rows)
    pw = w.ctypes.data
    if rows == 0 or cols == 0:
        return 0
    if op in ("potrf", "trtri", "lauum"):
        which = {"potrf": m._POTRF, "trtri": m._TRTRI, "lauum": m._LAUUM}[op]
        return int(m._lapack(fp, which, iw, cw, _ch(m, st.uplo), _ch(m, st.diag), rows, pw, lw))
    if op == "lu":
        return int(m._lu(fp, iw, dw, cw, w, pw, lw))
    if op == "ul":
        m._ul(fp, iw, dw, cw, np.empty(rows * rows, w.dtype), w, pw, lw)
        return 0
    a = ins[int(st.a.operand)]
    pa, la = a.ctypes.data, max(1, a.shape[0])
    if op == "gemm":
        b = ins[int(st.b.operand)]
        k = a.shape[1] if st.trans == "N" else a.shape[0]
        m._gemm(fp, iw, dw, cw, _ch(m, st.trans), _ch(m, st.trans_b), rows, cols, k, float(st.alpha),
                pa, la, b.ctypes.data, max(1, b.shape[0]), pw, lw)
    elif op == "syrk":
        k = a.shape[1] if st.trans == "N" else a.shape[0]
        m._syrk(fp, iw, rw, cw, _ch(m, st.uplo), _ch(m, st.trans), rows, k, float(st.alpha), pa, la, pw, lw)
    elif op in ("trsm", "trmm"):
        m._trxm(fp, m._TRSM if op == "trsm" else m._TRMM, iw, dw, cw, _ch(m, st.side), _ch(m, st.uplo),
                _ch(m, st.trans), _ch(m, st.diag), rows, cols, float(st.alpha), pa, la, pw, lw)
    elif op == "triacc":
        b = ins[int(st.b.operand)]
        m._triacc(w, float(st.alpha), a, st.uplo == "U", st.diag == "U", st.trans == "T", b, st.trans_b == "T",
                  st.side == "L")
    elif op == "copy":
        m._copy(w, a, float(st.alpha), {"G": 0, "L": 1, "U": 2}[st.uplo], st.trans == "T")
    else:
        raise ValueError(f"no tile routine for {op}")
    return 0


def run_task(steps, row0, dtype, target, *inputs):
    """The task function: a new version of ``target`` (see the module doc)."""
    m = routines()
    dtype = np.dtype(dtype)
    vector = np.ndim(target) == 1
    w = np.array(_tile(target, dtype), dtype=dtype, order="F", copy=True)
    ins = [_tile(x, dtype) for x in inputs]
    fp = m._FP[dtype.char]
    iw, dw, cw = np.zeros(8, np.int32), np.zeros(2, dtype), np.zeros(4, np.uint8)
    rw = np.abs(dw)
    threads = _SET_THREADS(1) if _SET_THREADS is not None else 0
    try:
        for st in steps:
            info = _apply(m, st, w, ins, fp, iw, dw, rw, cw)
            if info > 0:
                raise np.linalg.LinAlgError(_failure(st, row0 + info))
    finally:
        if threads > 0:
            _SET_THREADS(threads)
    return w.reshape(w.shape[0]) if vector else w


def _failure(st, row: int) -> str:
    if st.op == "potrf":
        return f"{st.text}: the leading minor of order {row} is not positive definite"
    return f"{st.text}: singular matrix (zero pivot or diagonal element at row {row})"


def lower_form(x):
    """A diagonal tile with zeros above its diagonal (a lower factor)."""
    return np.tril(x)


def symmetric_form(x):
    """A diagonal tile whose strict upper triangle mirrors the lower one (conjugated: Hermitian)."""
    low = np.tril(x, -1)
    return low + np.conj(low.T) + np.diag(np.diagonal(x)).astype(x.dtype)


def upper_form(x):
    return np.triu(x)


def mirror(x):
    """The upper tile (c, r) of a symmetric matrix from its stored lower tile (r, c)."""
    return np.asfortranarray(np.conj(np.asarray(x).T))


def zeros(shape, dtype):
    """The zero upper tile of a lower factor."""
    return np.zeros(shape, dtype, order="F")


def same(x):
    return x
