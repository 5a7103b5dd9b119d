"""The fixed part of every generated module: BLAS/LAPACK calls from nopython code, checks.

BLAS/LAPACK routines are SciPy's Cython function pointers, looked up when the
generated module is imported and passed to the kernels as an int64 array
(``_FP``), so that compiled kernels can be cached (``cache=True``) although
the library's address changes from run to run.  ``_ccall`` is a Numba
intrinsic that calls such an address with pointer arguments (Fortran calling
convention: every argument by reference).
"""

PRELUDE = '''
import numba
import numpy as np
from numba.core import cgutils, types
from numba.extending import get_cython_function_address, intrinsic

BLOCK_SIZE = 64
_ROUTINES = (("scipy.linalg.cython_blas", "dgemm"), ("scipy.linalg.cython_blas", "dsyrk"),
             ("scipy.linalg.cython_blas", "dtrsm"), ("scipy.linalg.cython_blas", "dtrmm"),
             ("scipy.linalg.cython_lapack", "dpotrf"), ("scipy.linalg.cython_lapack", "dtrtri"),
             ("scipy.linalg.cython_lapack", "dlauum"))
_FP = np.array([get_cython_function_address(m, f) for m, f in _ROUTINES], dtype=np.int64)
_GEMM, _SYRK, _TRSM, _TRMM, _POTRF, _TRTRI, _LAUUM = range(7)
_L, _U, _N, _T, _R = 76, 85, 78, 84, 82          # the characters BLAS takes: L U N T R


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


@numba.njit(cache=True)
def _addr(x):
    return np.int64(x.ctypes.data)


@numba.njit(cache=True)
def _gemm(fp, iw, dw, cw, ta, tb, m, n, k, alpha, pa, lda, pb, ldb, pc, ldc):
    if m <= 0 or n <= 0 or k <= 0:
        return
    cw[0], cw[1] = ta, tb
    iw[0], iw[1], iw[2], iw[3], iw[4], iw[5] = m, n, k, lda, ldb, ldc
    dw[0], dw[1] = alpha, 1.0
    c, i, d = _addr(cw), _addr(iw), _addr(dw)
    _ccall(fp[_GEMM], (c, c + 1, i, i + 4, i + 8, d, pa, i + 12, pb, i + 16, d + 8, pc, i + 20))


@numba.njit(cache=True)
def _syrk(fp, iw, dw, cw, uplo, trans, n, k, alpha, pa, lda, pc, ldc):
    if n <= 0 or k <= 0:
        return
    cw[0], cw[1] = uplo, trans
    iw[0], iw[1], iw[2], iw[3] = n, k, lda, ldc
    dw[0], dw[1] = alpha, 1.0
    c, i, d = _addr(cw), _addr(iw), _addr(dw)
    _ccall(fp[_SYRK], (c, c + 1, i, i + 4, d, pa, i + 8, d + 8, pc, i + 12))


@numba.njit(cache=True)
def _trxm(fp, which, iw, dw, cw, side, uplo, ta, diag, m, n, alpha, pa, lda, pb, ldb):
    if m <= 0 or n <= 0:
        return
    cw[0], cw[1], cw[2], cw[3] = side, uplo, ta, diag
    iw[0], iw[1], iw[2], iw[3] = m, n, lda, ldb
    dw[0] = alpha
    c, i, d = _addr(cw), _addr(iw), _addr(dw)
    _ccall(fp[which], (c, c + 1, c + 2, c + 3, i, i + 4, d, pa, i + 8, pb, i + 12))


@numba.njit(cache=True)
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


@numba.njit(cache=True)
def _copy(d, s, alpha, tri, trans):
    """d := alpha op(s); tri 1 / 2: only the lower / upper triangle (diagonal blocks)."""
    m, n = d.shape
    for j in range(n):
        for i in range(m):
            if not ((tri == 1 and i < j) or (tri == 2 and i > j)):
                d[i, j] = alpha * (s[j, i] if trans else s[i, j])


@numba.njit(cache=True)
def _dense_tri(t, upper, unit, trans):
    k = t.shape[0]
    out = np.zeros((k, k))
    for j in range(k):
        for i in range(k):
            if (i < j and upper) or (i > j and not upper) or (i == j and not unit):
                out[i, j] = t[i, j]
            elif i == j:
                out[i, j] = 1.0
    return np.ascontiguousarray(out.T) if trans else out


@numba.njit(cache=True)
def _triacc(c, alpha, t, upper, unit, ta, x, tx, left):
    """c += alpha op(T) op(X) (left) or alpha op(X) op(T): a triangular block times a general one."""
    tt = _dense_tri(t, upper, unit, ta)
    xx = np.ascontiguousarray(x.T) if tx else np.ascontiguousarray(x)
    if c.shape[0] == 0 or c.shape[1] == 0:
        return
    prod = tt @ xx if left else xx @ tt
    for j in range(c.shape[1]):
        for i in range(c.shape[0]):
            c[i, j] += alpha * prod[i, j]


@numba.njit(cache=True)
def _lu(a):
    """Unblocked LU without pivoting in place (unit lower L, U); info = first zero pivot (1-based)."""
    n = a.shape[0]
    for k in range(n):
        if a[k, k] == 0.0:
            return k + 1
        for i in range(k + 1, n):
            a[i, k] /= a[k, k]
        for j in range(k + 1, n):
            for i in range(k + 1, n):
                a[i, j] -= a[i, k] * a[k, j]
    return 0


@numba.njit(cache=True)
def _ul(a):
    """a := upper(a) unit_lower(a) in place."""
    n = a.shape[0]
    w = a.copy()
    for j in range(n):
        for i in range(n):
            s = 0.0
            for k in range(max(i, j), n):
                s += w[i, k] * (1.0 if k == j else w[k, j])
            a[i, j] = s


def _check(args, block_size):
    """Reject what the kernels cannot take, with a message that says what to pass instead."""
    if isinstance(block_size, bool) or not isinstance(block_size, (int, np.integer)) or block_size < 1:
        raise ValueError(f"block_size must be a positive integer, got {block_size!r}")
    n = None
    for arr, name, kind, partition in args:
        if not isinstance(arr, np.ndarray):
            raise TypeError(f"{name} must be a numpy.ndarray, got {type(arr).__name__}")
        if arr.dtype != np.float64:
            raise TypeError(f"{name} must have dtype float64, got {arr.dtype}")
        if kind == "vector":
            if arr.ndim != 1 or not arr.flags.c_contiguous:
                raise ValueError(f"{name} must be a contiguous 1-D array, got shape {arr.shape}")
        else:
            if arr.ndim != 2:
                raise ValueError(f"{name} must be a 2-D array, got {arr.ndim}-D")
            if not arr.flags.f_contiguous:
                raise ValueError(f"{name} must be Fortran-ordered (column-major) and contiguous: "
                                 f"pass numpy.asfortranarray({name})")
            if partition == "2x2" and arr.shape[0] != arr.shape[1]:
                raise ValueError(f"{name} must be square, got shape {arr.shape}")
        if not arr.flags.writeable:
            raise ValueError(f"{name} must be writeable (it is updated in place)")
        size = arr.shape[1] if partition == "columns" else arr.shape[0]
        if n is None:
            n = size
        elif size != n:
            raise ValueError(f"{name} has dimension {size} where the other operands have {n}")
    for k, (x, nx, _, _) in enumerate(args):
        for y, ny, _, _ in args[k + 1:]:
            if np.shares_memory(x, y):
                raise ValueError(f"{nx} and {ny} must not share memory")
'''
