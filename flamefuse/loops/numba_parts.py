"""The Numba side of a compiled loop: NumPy's dot and vector-matrix products, bit for bit.

Imported only where a loop is compiled (the background compiler's process, or the script's own
with ``FLAMEFUSE_COMPILE=inline``); a warm run loads the built library and never imports this.
A rendered loop (:mod:`flamefuse.loops.render`) runs in this module's namespace and calls:

* ``_dot_np(u, v, fp, s1, s2)`` -- ``np.dot(u, v)`` of two 1-D float64 arrays as NumPy 2 computes
  it (``cblas_matrixproduct`` of ``numpy/_core/src/common/cblasfuncs.c``): an operand with a
  negative stride is first copied to a contiguous buffer (``_bad_strides``; ``s1``/``s2`` are the
  caller's scratch buffers); length 0 gives ``+0.0``; length 1 gives ``u[0] * v[0]`` (the
  "scalar" case); longer ones ``0.0 + cblas_ddot(n, u, incu, v, incv)`` (``DOUBLE_dot``'s BLAS
  branch: the strides are positive then).
* ``_dot_mm(u, v, fp)`` -- ``u @ v`` (the ``matmul`` ufunc's 1-D x 1-D case, which calls
  ``DOUBLE_dot`` with the operands' own strides): length 0 gives ``+0.0``; both strides positive
  multiples of 8: ``0.0 + cblas_ddot``; else the sequential sum ``s = 0.0; s += u[i] * v[i]``.
* ``fp`` is the address of NumPy's own ``cblas_ddot`` (:func:`flamefuse.loops.blas.ddot_address`),
  passed in at every call; ``_ddot`` is the intrinsic that calls it. Lengths that differ raise
  ``ValueError`` (the caller then runs the loop as written and NumPy raises its own error).

* ``_vecmat(u, M, fp, fg, out)`` / ``_matvec(M, v, fp, fg, out)`` -- ``u @ M`` / ``M @ v`` of a
  1-D and a 2-D float64 view as NumPy 2's ``DOUBLE_matmul`` (``numpy/_core/src/umath/
  matmul.c.src``) computes them, into ``out`` (zeroed first, as NumPy's fresh output is before
  OpenBLAS scales it by 0): a zero extent, its own loop (``+0.0`` sums); one output element,
  ``DOUBLE_dot`` (``_dot_mm``); an inner extent of 1, its loop; the matrix C- or F-"blasable"
  (one stride 8, the other a multiple of 8 at least the extent it steps over: ``_blasable2d``,
  NumPy's ``is_blasable2d``) and the vector's stride a positive multiple of 8, ``cblas_dgemv``
  (``_dgemv``, at address ``fg``) with NumPy's own arguments: ``CblasTrans``, column-major with
  the leading dimension of the matrix's slow stride when the (transposed) matrix is
  C-blasable, else row-major; otherwise its loop ``o = 0; o += a * b`` in order. Returns the
  output view; extents that differ raise ``ValueError``.
* ``_overlaps(t, tb, u, ub)`` -- may the view ``t`` of argument ``tb`` share an element with the
  view ``u`` of ``ub`` (a slice statement's target and an operand)? No when one is empty, when
  their byte ranges are disjoint, or, both views of one array, when the boxes of base indices
  they span are disjoint in a dimension; else yes (the statement then goes through a
  temporary, as NumPy's does).
* ``_bits(x)`` -- a float's 64 bits, ORed into a word that is kept (``_keep``) after a slice
  statement's element loop: every element computed, and the loop may still vectorize.
* ``_div(a, b)`` -- a scalar ``a / b``, raising ``ZeroDivisionError`` when ``b`` is zero: Python
  raises it for ``float``/``int`` operands even where IEEE raises no flag (``nan / 0.0``,
  ``inf / 0.0``), and the compiled code cannot tell a Python float from ``np.float64``; the
  caller then runs the loop as written, which raises or warns as Python or NumPy does.
* ``_keep(v)`` -- an empty ``asm sideeffect`` reading ``v``: LLVM must compute ``v`` even where
  the loop never uses it again (a local overwritten before it is read, an element stored twice,
  an ``if`` whose branches are empty), so the operation's floating-point flags (overflow,
  divide, invalid) are raised as NumPy's would warn. Every value a statement computes is kept.

The operands' lengths are below 2**30 (the guard's bound on every extent), so NumPy's chunking
of longer dots (``NPY_CBLAS_CHUNK``) never applies.
"""
import numpy as np
from numba import njit
from numba.core import cgutils, types
from numba.extending import intrinsic


@intrinsic
def _ddot(typingctx, fp, n, x, incx, y, incy):
    """``cblas_ddot(n, x, incx, y, incy)`` (64-bit integers) at address ``fp``; ``x``, ``y`` addresses."""
    def codegen(context, builder, sig, args):
        ir = cgutils.ir
        i64, dbl = ir.IntType(64), ir.DoubleType()
        dp = dbl.as_pointer()
        fnty = ir.FunctionType(dbl, [i64, dp, i64, dp, i64])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        return builder.call(fn, [args[1], builder.inttoptr(args[2], dp), args[3],
                                 builder.inttoptr(args[4], dp), args[5]])
    return types.float64(types.int64, types.int64, types.int64, types.int64, types.int64, types.int64), codegen


@intrinsic
def _keep(typingctx, v):
    """Nothing, but ``v`` must be computed (see the module doc)."""
    def codegen(context, builder, sig, args):
        ir = cgutils.ir
        i64 = ir.IntType(64)
        x = args[0]
        if isinstance(x.type, ir.DoubleType):
            x = builder.bitcast(x, i64)
        elif x.type.width < 64:
            x = builder.zext(x, i64)
        builder.asm(ir.FunctionType(ir.VoidType(), [i64]), "", "r", [x], True)
        return context.get_dummy_value()
    if not isinstance(v, (types.Float, types.Integer, types.Boolean)):
        return None
    return types.none(v), codegen


@njit(error_model="numpy")
def _div(a, b):
    if b == 0:
        raise ZeroDivisionError("division by zero")
    return a / b


@njit(error_model="numpy", boundscheck=True)
def _blas_operand(u, scratch):
    """``u``'s address and increment for ``cblas_ddot``: its own when its stride is a positive
    multiple of 8, else those of its copy in the contiguous ``scratch`` (NumPy's
    ``_bad_strides`` copy)."""
    su = u.strides[0]
    if su < 0 or su % 8 != 0:
        for m in range(u.shape[0]):
            scratch[m] = u[m]
        return scratch.ctypes.data, np.int64(1)
    return u.ctypes.data, np.int64(su // 8)


@njit(error_model="numpy", boundscheck=True)
def _dot_np(u, v, fp, s1, s2):
    n = u.shape[0]
    if v.shape[0] != n:
        raise ValueError("shapes not aligned")
    if n == 0:
        return 0.0
    if n == 1:
        return u[0] * v[0]
    pu, iu = _blas_operand(u, s1)
    pv, iv = _blas_operand(v, s2)
    if fp == 0:
        raise ValueError("no BLAS")
    s = 0.0
    s += _ddot(np.int64(fp), np.int64(n), np.int64(pu), iu, np.int64(pv), iv)
    return s


@njit(error_model="numpy", boundscheck=True)
def _dot_mm(u, v, fp):
    n = u.shape[0]
    if v.shape[0] != n:
        raise ValueError("shapes not aligned")
    s = 0.0
    if n == 0:
        return s
    su = u.strides[0]
    sv = v.strides[0]
    if su > 0 and su % 8 == 0 and sv > 0 and sv % 8 == 0:
        if fp == 0:
            raise ValueError("no BLAS")
        s += _ddot(np.int64(fp), np.int64(n), np.int64(u.ctypes.data), np.int64(su // 8),
                   np.int64(v.ctypes.data), np.int64(sv // 8))
        return s
    for m in range(n):
        s += u[m] * v[m]
    return s


@intrinsic
def _dgemv(typingctx, fg, order, m, n, a, lda, x, incx, y, incy):
    """``cblas_dgemv(order, CblasTrans, m, n, 1.0, a, lda, x, incx, 0.0, y, incy)`` (64-bit
    integers, the enums C ints) at address ``fg``; ``a``, ``x``, ``y`` addresses."""
    def codegen(context, builder, sig, args):
        ir = cgutils.ir
        i32, i64, dbl = ir.IntType(32), ir.IntType(64), ir.DoubleType()
        dp = dbl.as_pointer()
        fnty = ir.FunctionType(ir.VoidType(), [i32, i32, i64, i64, dbl, dp, i64, dp, i64, dbl, dp, i64])
        fn = builder.inttoptr(args[0], fnty.as_pointer())
        builder.call(fn, [builder.trunc(args[1], i32), ir.Constant(i32, 112), args[2], args[3],
                          ir.Constant(dbl, 1.0), builder.inttoptr(args[4], dp), args[5],
                          builder.inttoptr(args[6], dp), args[7], ir.Constant(dbl, 0.0),
                          builder.inttoptr(args[8], dp), args[9]])
        return context.get_dummy_value()
    return types.none(*([types.int64] * 10)), codegen


@intrinsic
def _bits(typingctx, v):
    """The 64 bits of the float ``v`` (to OR into a kept value: see ``_keep``)."""
    def codegen(context, builder, sig, args):
        return builder.bitcast(args[0], cgutils.ir.IntType(64))
    if not isinstance(v, types.Float) or v.bitwidth != 64:
        return None
    return types.int64(v), codegen


@njit(error_model="numpy", boundscheck=True)
def _blasable2d(s1, s2, d1, d2):
    """NumPy's ``is_blasable2d`` (matmul.c.src): byte strides ``s1`` (slow) and ``s2`` (fast)."""
    if s2 != 8:
        return False
    return s1 % 8 == 0 and s1 // 8 >= d2 if s1 >= 0 else False


@njit(error_model="numpy", boundscheck=True)
def _vecmat(u, a, fp, fg, out):
    """``u @ a`` (1-D @ 2-D) into ``out[:a.shape[1]]`` (zeroed first), NumPy's ``DOUBLE_matmul``
    choices: a zero extent, the loop; one output (``dp == 1``) ``DOUBLE_dot`` (``_dot_mm``); one
    inner (``dn == 1``) the loop; ``a`` C- or F-blasable and ``u``'s stride a positive multiple
    of 8, ``cblas_dgemv`` (``DOUBLE_gemv``: column-major when ``a``'s rows are contiguous and its
    column stride is at least its rows, else row-major); else the loop ``o[p] = 0; o[p] +=
    u[n] * a[n, p]``. Returns the output view."""
    dn, dp = a.shape
    if u.shape[0] != dn:
        raise ValueError("matmul: mismatch in its core dimension")
    o = out[:dp]
    for p in range(dp):
        o[p] = 0.0
    if dn == 0 or dp == 0:
        return o
    s2n, s2p = a.strides
    su = u.strides[0]
    if dp == 1:
        o[0] = _dot_mm(u, a[:, 0], fp)
        return o
    blas = (dn != 1 and (_blasable2d(s2n, s2p, dn, dp) or _blasable2d(s2p, s2n, dp, dn))
            and _blasable2d(su, 8, dn, 1))
    if blas:
        if fg == 0:
            raise ValueError("no BLAS")
        if _blasable2d(s2p, s2n, dp, dn):
            order, lda = 102, s2p // 8
        else:
            order, lda = 101, s2n // 8
        _dgemv(np.int64(fg), np.int64(order), np.int64(dn), np.int64(dp), np.int64(a.ctypes.data),
               np.int64(lda), np.int64(u.ctypes.data), np.int64(su // 8), np.int64(o.ctypes.data), np.int64(1))
        return o
    for p in range(dp):
        s = 0.0
        for n in range(dn):
            s += u[n] * a[n, p]
        o[p] = s
    return o


@njit(error_model="numpy", boundscheck=True)
def _matvec(a, v, fp, fg, out):
    """``a @ v`` (2-D @ 1-D) into ``out[:a.shape[0]]``: NumPy's choices are ``_vecmat``'s with the
    operands' roles exchanged (``DOUBLE_gemv(a, ...)``: column-major when ``a`` is C-blasable),
    which is ``_vecmat(v, a.T)`` call for call (the same ``cblas_dgemv`` order, sizes and leading
    dimension, the same ``DOUBLE_dot`` for one output row, the same loop order otherwise, its
    products commuted: the same bits)."""
    return _vecmat(v, a.T, fp, fg, out)


@njit(error_model="numpy", boundscheck=True)
def _ends(v):
    """The byte addresses of ``v``'s first and last elements and the lowest and highest
    addresses of its elements (``v`` not empty; steps of either sign)."""
    first = v.ctypes.data
    last, lo, hi = first, first, first
    for d in range(v.ndim):
        step = (v.shape[d] - 1) * v.strides[d]
        last += step
        if step < 0:
            lo += step
        else:
            hi += step
    return first, last, lo, hi


@njit(error_model="numpy", boundscheck=True)
def _overlaps(t, tb, u, ub):
    """May the view ``t`` of the array ``tb`` share an element with the view ``u`` of ``ub``?
    False when either is empty, when their byte ranges are disjoint, or, for views of one
    C-contiguous array (the same address and shape), when the boxes of base indices they span
    are disjoint in some dimension (each dimension of a basic-slice view runs along one base
    dimension, monotonically, so its first and last elements bound the box). Else True."""
    if t.size == 0 or u.size == 0:
        return False
    tf, tl, tlo, thi = _ends(t)
    uf, ul, ulo, uhi = _ends(u)
    if thi + 7 < ulo or uhi + 7 < tlo:
        return False
    if tb.ndim != ub.ndim or tb.ctypes.data != ub.ctypes.data:
        return True
    for d in range(tb.ndim):
        if tb.shape[d] != ub.shape[d]:
            return True
    ot = np.int64((tf - tb.ctypes.data) // 8)
    olt = np.int64((tl - tb.ctypes.data) // 8)
    ou = np.int64((uf - ub.ctypes.data) // 8)
    olu = np.int64((ul - ub.ctypes.data) // 8)
    for d in range(tb.ndim - 1, -1, -1):
        n = tb.shape[d]
        a0, a1 = ot % n, olt % n
        b0, b1 = ou % n, olu % n
        ot, olt, ou, olu = ot // n, olt // n, ou // n, olu // n
        if max(a0, a1) < min(b0, b1) or max(b0, b1) < min(a0, a1):
            return False
    return True
