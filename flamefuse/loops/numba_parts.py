"""The Numba side of a compiled loop: NumPy's 1-D dot products, bit for bit.

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
