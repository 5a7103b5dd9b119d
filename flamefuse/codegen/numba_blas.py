"""BLAS and LAPACK from Numba's nopython code in four precisions: the routines of the kernels.

BLAS/LAPACK routines are SciPy's Cython function pointers, looked up at import
(``_FP``: per ``dtype.char`` of float32, float64, complex64, complex128, an
int64 array of addresses of the routines :mod:`flamefuse.blas_call` lists) and passed to the kernels as an argument, so that
compiled kernels can be cached (``cache=True``) although the library's address
changes from run to run.  ``_ccall`` is a Numba intrinsic that calls such an
address with pointer arguments (Fortran calling convention: every argument by
reference).  The routines take their scalar arguments through small work arrays
(``iw`` int32, ``dw`` the data's dtype, ``rw`` its real dtype, ``cw`` uint8
characters) and their matrices as addresses with leading dimensions: ``_gemm
_syrk`` (herk for complex data) ``_trxm`` (trsm or trmm) ``_trsm`` ``_lapack``
(potrf, trtri, lauum) ``_getrf _laswp _trsyl _lacpy``, and in Numba ``_lu _ul
_colperm _copy _triacc _upper_from_lower``.  A transpose is always the conjugate
transpose ``_C`` (for real data BLAS reads it as a transpose).  A kernel's
work arrays come from its caller (``_work`` of :mod:`flamefuse.blas_call`): a
kernel that calls none of the routines that allocate (``_triacc``) also compiles
into a native library (:mod:`flamefuse.synth.native_chain`).

Performance choices (measured, see docs/performance.md): ``_trsm`` inverts a
diagonal block (trtri) and applies it with trmm when the other dimension is at
least ``_INV_MIN`` times the block's (OpenBLAS trsm runs at a third to a half
of trmm's rate); ``_lu`` is blocked by ``_LU_PANEL`` columns with trsm/gemm
updates; ``_ul`` is one trmm.  Every choice depends only on the sizes, so a
kernel's result is bitwise reproducible for a given block size and BLAS thread
count.

Two homes, one text.  This is a module of its own (tested against SciPy in
tests/codegen/test_numba_blas.py; Dask's tile tasks, :mod:`flamefuse.dask.tiles`,
import it), and its statements are also copied, all but this docstring, into
every generated module (:mod:`flamefuse.codegen.prelude`), whose kernels call
them.  Hence its rules: it imports numpy, numba, scipy, the standard library and,
from flamefuse, only names that are copied along (``cached_njit``, ``_routines``); its names
start with an underscore (the private part of a generated module); and what runs
at import holds in both homes.  ``_jit`` is ``numba.njit(cache=True)`` whose
cache entries heal (:func:`flamefuse.numba_cache.cached_njit`), keyed by the
name of the module it runs in (``_import_keyed``), and ``_importable_name``
registers a generated module that a plug-in loader ran without registering, so
that however an application loads it, Numba's cache loader can import it again
on a later run (here, the module is registered: nothing to do).
"""
import gc
import sys
import zlib
from types import ModuleType

import numpy as np
from numba.core import cgutils, types
from numba.extending import get_cython_function_address, intrinsic

from flamefuse.blas_call import _PREFIX, _routines
from flamefuse.numba_cache import cached_njit

# one routine table per precision (the precision is a parameter of the target, the kernels are
# compiled once per dtype; the routines and their symbols: flamefuse.blas_call)
_FP = {char: np.array([get_cython_function_address(module, symbol) for module, symbol in _routines(char)],
                      dtype=np.int64) for char in _PREFIX}
_GEMM, _SYRK, _TRSM, _TRMM, _POTRF, _TRTRI, _LAUUM, _LACPY, _GETRF, _LASWP, _TRSYL = range(11)
# the characters BLAS takes: L U N R A, and C (the conjugate transpose; for real data the transpose)
_L, _U, _N, _C, _R, _A = 76, 85, 78, 67, 82, 65
_LU_PANEL = 16   # the unblocked panel width of _lu
_INV_MIN = 2      # trsm by inverse when the other dimension is at least this many times the triangle's


def _importable_name(g):
    """Register this module in ``sys.modules`` under a name Numba can re-import it by.

    Numba's cache loader re-imports a cached function's module by name.  Plug-in
    loaders (``spec_from_file_location`` + ``exec_module``) run a module without
    registering it, which made every run after the first fail; so the module
    registers itself: under ``__name__`` when that is free, else under a name
    derived from its file path (stable from run to run).
    """
    name = g["__name__"]
    known = sys.modules.get(name)
    if known is not None and known.__dict__ is g:
        return name
    me = next((o for o in gc.get_referrers(g) if isinstance(o, ModuleType) and o.__dict__ is g), None)
    if me is None:          # executed into a bare dict: nothing to register
        return name
    if known is not None:   # the name belongs to another module
        path = str(g.get("__file__", name)).encode()
        name = "_flamefuse_" + name.replace(".", "_") + "_%08x" % zlib.crc32(path)
    sys.modules[name] = me
    return name


__name__ = _importable_name(globals())


def _import_keyed(fn):
    """Key Numba's disk cache by the name this module was imported under.

    The cache is keyed by file and qualname, but loading a cached function
    re-imports its module by the name it was compiled under; prefixing the
    qualname keeps ``import spd_inverse`` and ``import generated.spd_inverse``
    from reading each other's entries.
    """
    fn.__qualname__ = __name__.replace(".", "_") + "_" + fn.__qualname__
    return fn


def _jit(fn):
    """``numba.njit(cache=True)``, keyed by import name, whose cache entries heal (``cached_njit``)."""
    return cached_njit(_import_keyed(fn))


@intrinsic
def _ccall(typingctx, fptr, args):
    """Call the C function at address ``fptr`` with the tuple ``args`` of addresses."""
    count = len(args)

    def codegen(context, builder, sig, llargs):
        ir = cgutils.ir
        vp = ir.IntType(8).as_pointer()
        fn = builder.inttoptr(llargs[0], ir.FunctionType(ir.VoidType(), [vp] * count).as_pointer())
        builder.call(fn, [builder.inttoptr(builder.extract_value(llargs[1], k), vp) for k in range(count)])
        return context.get_dummy_value()

    return types.none(fptr, args), codegen


@_jit
def _addr(x):
    return np.int64(x.ctypes.data)


@_jit
def _gemm(fp, iw, dw, cw, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, pc, ldc):
    if m <= 0 or n <= 0 or k <= 0:
        return
    cw[0], cw[1] = ta, tb
    iw[0], iw[1], iw[2], iw[3], iw[4], iw[5] = m, n, k, lda, ldb, ldc
    dw[0], dw[1] = alpha, 1.0
    c, i, d = _addr(cw), _addr(iw), _addr(dw)
    _ccall(fp[_GEMM], (c, c + 1, i, i + 4, i + 8, d, pa, i + 12, pb, i + 16, d + dw.itemsize, pc, i + 20))


@_jit
def _syrk(fp, iw, rw, cw, uplo, trans, n, k, alpha, pa, lda, pc, ldc):
    """syrk (herk for complex data): alpha and beta are real, in ``rw``."""
    if n <= 0 or k <= 0:
        return
    cw[0], cw[1] = uplo, trans
    iw[0], iw[1], iw[2], iw[3] = n, k, lda, ldc
    rw[0], rw[1] = alpha, 1.0
    c, i, d = _addr(cw), _addr(iw), _addr(rw)
    _ccall(fp[_SYRK], (c, c + 1, i, i + 4, d, pa, i + 8, d + rw.itemsize, pc, i + 12))


@_jit
def _trxm(fp, which, iw, dw, cw, side, uplo, ta, diag, m, n, alpha, pa, lda, pb, ldb):
    if m <= 0 or n <= 0:
        return
    cw[0], cw[1], cw[2], cw[3] = side, uplo, ta, diag
    iw[0], iw[1], iw[2], iw[3] = m, n, lda, ldb
    dw[0] = alpha
    c, i, d = _addr(cw), _addr(iw), _addr(dw)
    _ccall(fp[which], (c, c + 1, c + 2, c + 3, i, i + 4, d, pa, i + 8, pb, i + 12))


@_jit
def _lapack(fp, which, iw, cw, uplo, diag, n, pa, lda):
    """potrf / lauum (uplo, n, a, lda, info) or trtri (uplo, diag, n, a, lda, info); returns info."""
    if n <= 0:
        return 0
    cw[0], cw[1] = uplo, diag
    iw[0], iw[1], iw[2] = n, lda, 0
    c, i = _addr(cw), _addr(iw)
    if which == _TRTRI:
        _ccall(fp[which], (c, c + 1, i, pa, i + 4, i + 8))
    else:
        _ccall(fp[which], (c, i, pa, i + 4, i + 8))
    return iw[2]


@_jit
def _getrf(fp, iw, m, n, pa, lda, pp):
    """LU with partial pivoting of the m x n panel at pa (LAPACK getrf); its 1-based pivots
    relative to the panel go to the int32 array at pp; returns info (first zero pivot)."""
    if m <= 0 or n <= 0:
        return 0
    iw[0], iw[1], iw[2], iw[3] = m, n, lda, 0
    i = _addr(iw)
    _ccall(fp[_GETRF], (i, i + 4, pa, i + 8, pp, i + 12))
    return iw[3]


@_jit
def _trsyl(fp, iw, rw, cw, c, pa, lda, pb, ldb, pc, ldc):
    """X := the solution of A X + X B = C for the upper-triangular blocks at pa, pb and the block
    ``c`` (at pc), by LAPACK trsyl; X is rescaled where trsyl scaled it to avoid overflow.
    Returns trsyl's info (1: A and -B have close eigenvalues, perturbed values were used)."""
    m, n = c.shape
    if m <= 0 or n <= 0:
        return 0
    cw[0], cw[1] = _N, _N
    iw[0], iw[1], iw[2], iw[3], iw[4], iw[5], iw[6] = 1, m, n, lda, ldb, ldc, 0
    rw[0] = 1.0
    ch, i, r = _addr(cw), _addr(iw), _addr(rw)
    _ccall(fp[_TRSYL], (ch, ch + 1, i, i + 4, i + 8, pa, i + 12, pb, i + 16, pc, i + 20, r, i + 24))
    if rw[0] != 1.0:
        scale = rw[0]
        for j in range(n):
            for k in range(m):
                c[k, j] = c[k, j] / scale
    return iw[6]


@_jit
def _laswp(fp, iw, n, pa, lda, k, pp):
    """The row interchanges 1..k at pp (1-based, as getrf returns them) on n columns at pa."""
    if n <= 0 or k <= 0:
        return
    iw[0], iw[1], iw[2], iw[3], iw[4] = n, lda, 1, k, 1
    i = _addr(iw)
    _ccall(fp[_LASWP], (i, pa, i + 4, i + 8, i + 12, pp, i + 16))


@_jit
def _colperm(a, piv):
    """a := a P for the 0-based row interchanges piv of P A = L U (as getri ends): columns
    swapped in reverse order."""
    n = a.shape[1]
    for j in range(n - 1, -1, -1):
        jp = piv[j]
        if jp != j:
            for i in range(a.shape[0]):
                a[i, j], a[i, jp] = a[i, jp], a[i, j]


@_jit
def _lacpy(fp, iw, cw, uplo, m, n, pa, lda, pb, ldb):
    """b := a (the uplo triangle, or all of it for _A) of an m x n block."""
    cw[0] = uplo
    iw[0], iw[1], iw[2], iw[3] = m, n, lda, ldb
    c, i = _addr(cw), _addr(iw)
    _ccall(fp[_LACPY], (c, i, i + 4, pa, i + 8, pb, i + 12))


@_jit
def _trsm(fp, iw, dw, cw, ws, side, uplo, ta, diag, m, n, alpha, pa, lda, pb, ldb):
    """B := alpha op(T)^{-1} B (side L) or alpha B op(T)^{-1} (side R).

    When the other dimension is at least _INV_MIN times the triangle's order k
    and the workspace ``ws`` holds k x k, T is copied to ``ws``, inverted by
    trtri and applied by trmm: BLAS trmm runs at two to three times the rate
    of trsm, and the inversion costs k^3/3.  A singular T falls back to trsm.
    """
    if m <= 0 or n <= 0:
        return
    k, other = (m, n) if side == _L else (n, m)
    if other >= _INV_MIN * k and k * k <= ws.size:
        pw = _addr(ws)
        _lacpy(fp, iw, cw, uplo, k, k, pa, lda, pw, k)
        if _lapack(fp, _TRTRI, iw, cw, uplo, diag, k, pw, k) == 0:
            _trxm(fp, _TRMM, iw, dw, cw, side, uplo, ta, diag, m, n, alpha, pw, k, pb, ldb)
            return
    _trxm(fp, _TRSM, iw, dw, cw, side, uplo, ta, diag, m, n, alpha, pa, lda, pb, ldb)


@_jit
def _copy(d, s, alpha, tri, trans):
    """d := alpha op(s); tri 1 / 2: only the lower / upper triangle (diagonal blocks)."""
    m, n = d.shape
    for j in range(n):
        for i in range(m):
            if not ((tri == 1 and i < j) or (tri == 2 and i > j)):
                d[i, j] = alpha * (np.conj(s[j, i]) if trans else s[i, j])


@_jit
def _dense_tri(t, upper, unit, trans):
    k = t.shape[0]
    out = np.zeros((k, k), t.dtype)
    for j in range(k):
        for i in range(k):
            if (i < j and upper) or (i > j and not upper) or (i == j and not unit):
                out[i, j] = t[i, j]
            elif i == j:
                out[i, j] = 1.0
    return np.ascontiguousarray(np.conj(out.T)) if trans else out


@_jit
def _triacc(c, alpha, t, upper, unit, ta, x, tx, left):
    """c += alpha op(T) op(X) (left) or alpha op(X) op(T): a triangular block times a general one."""
    tt = _dense_tri(t, upper, unit, ta)
    xx = np.ascontiguousarray(np.conj(x.T)) if tx else np.ascontiguousarray(x)
    if c.shape[0] == 0 or c.shape[1] == 0:
        return
    prod = tt @ xx if left else xx @ tt
    for j in range(c.shape[1]):
        for i in range(c.shape[0]):
            c[i, j] += alpha * prod[i, j]


@_jit
def _lu(fp, iw, dw, cw, a, pa, lda):
    """LU without pivoting in place (unit lower L, U); info = first zero pivot (1-based).

    Blocked by _LU_PANEL columns: each panel is factored unblocked, then
    A12 := L11^{-1} A12 (trsm) and A22 -= A21 A12 (gemm), so that most of the
    work runs in BLAS.
    """
    n = a.shape[0]
    for j0 in range(0, n, _LU_PANEL):
        j1 = min(j0 + _LU_PANEL, n)
        for k in range(j0, j1):
            if a[k, k] == 0.0:
                return k + 1
            for i in range(k + 1, n):
                a[i, k] /= a[k, k]
            for j in range(k + 1, j1):
                f = a[k, j]
                for i in range(k + 1, n):
                    a[i, j] -= a[i, k] * f
        w = j1 - j0
        es = a.itemsize
        _trxm(fp, _TRSM, iw, dw, cw, _L, _L, _N, _U, w, n - j1, 1.0, pa + es * (j0 + j0 * lda), lda,
              pa + es * (j0 + j1 * lda), lda)
        _gemm(fp, iw, dw, cw, _N, _N, n - j1, n - j1, w, -1.0, pa + es * (j1 + j0 * lda), lda,
              pa + es * (j0 + j1 * lda), lda, pa + es * (j1 + j1 * lda), lda)
    return 0


@_jit
def _ul(fp, iw, dw, cw, ws, a, pa, lda):
    """a := upper(a) unit_lower(a) in place: U copied to ws, a set to unit L, then trmm a := U a."""
    n = a.shape[0]
    if n == 0:
        return
    pw = _addr(ws)
    _lacpy(fp, iw, cw, _U, n, n, pa, lda, pw, n)
    for j in range(n):
        a[j, j] = 1.0
        for i in range(j):
            a[i, j] = 0.0
    _trxm(fp, _TRMM, iw, dw, cw, _L, _U, _N, _N, n, n, 1.0, pw, n, pa, lda)


@_jit
def _upper_from_lower(a, mirror):
    """The strict upper triangle := the lower one conjugate-transposed (mirror: Hermitian) or zero,
    in 64 x 64 tiles."""
    n = a.shape[0]
    for jb in range(0, n, 64):
        for ib in range(0, jb + 1, 64):
            for j in range(jb, min(jb + 64, n)):
                for i in range(ib, min(ib + 64, j)):
                    a[i, j] = np.conj(a[j, i]) if mirror else 0.0
