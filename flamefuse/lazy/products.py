"""Products: ``a @ b`` / ``matmul``, ``dot`` and ``outer``, recorded as ``product`` ops or built on others.

Matrix-vector and vector-matrix products of same-dtype float arrays are recorded
``product`` ops (``matvec``, ``vecmat``: fused by the runtime as loop nests,
:mod:`flamefuse.runtime.linalg`); vector @ vector is a recorded multiply and sum. ``A @ x``
of a matrix that recorded operations are still to compute is ``(A * x).sum(axis=1)``
(:func:`matmul`: fused with the operations that make ``A``, which is then never stored).
:func:`outer` is a recorded broadcast multiply (a rank-1 update is one pass). Small computed
operands are NumPy's own call at once (:func:`_small_product`: its BLAS dot); matrix @
matrix of float arrays is a recorded linear-algebra call (:mod:`flamefuse.lazy.linalg`),
other matrix forms NumPy's BLAS call (:mod:`flamefuse.lazy.numpy_api`), both reached through
:data:`~flamefuse.lazy.hooks.HOOKS`; anything else falls back.
"""
from __future__ import annotations

from math import prod

import numpy as np

from flamefuse.runtime import adapt
from flamefuse.lazy.array import subclass_in, _ADAPT, _LAZY, LazyArray, _eager_arg, _tally_eager, empty, wrap
from flamefuse.lazy.eager import _eager, as_numpy_now, fallback, numpy_error, wrap_result
from flamefuse.lazy.elementwise import _lazy_inputs, ufunc_call
from flamefuse.lazy.hooks import HOOKS
from flamefuse.lazy.kernel_types import KERNEL_DTYPES
from flamefuse.lazy.recorder import RECORDER
from flamefuse.lazy.recorder import STATS as RECORDER_STATS
from flamefuse.lazy.reductions import reduction
from flamefuse.lazy.userline import at_user


CACHED_MATRIX_BYTES = 1 << 21   # a matrix this small stays in cache (L2 of the machines measured)


def _now(name, x, y, shape) -> bool:
    """Does a matvec/vecmat run at once as NumPy's gemv: both operands computed, a result of
    fewer than ``eager_below`` elements and a matrix of at most ``CACHED_MATRIX_BYTES``? A
    loop nest pays only by reading a matrix that two products share once instead of twice
    (:mod:`flamefuse.runtime.products`); a matrix that fits in cache is read the second time
    from there, so recording gains nothing and the product's own flush (about 30 us of Python:
    the record, the stage split, the refs, the views) cost more than the gemv (the GP mean's
    ``Ks @ alpha``, 200 x 500: 40 against NumPy's 9 us). Larger matrices, and products of an
    operand still to be computed, are recorded."""
    if name == "outer" or prod(shape) >= RECORDER.eager_below:
        return False
    m = x if name == "matvec" else y
    return (m.size * m.itemsize <= CACHED_MATRIX_BYTES and RECORDER.concrete(x._base)
            and RECORDER.concrete(y._base))


def _product(name, x, y, shape):
    """Record (or run eagerly) a matvec/vecmat/outer product of two same-dtype float arrays."""
    if _eager([x, y], None, x.size + y.size) or _now(name, x, y, shape):
        RECORDER_STATS["eager"] += 1
        if _ADAPT.learning:
            _tally_eager(x, y)
        fn = np.outer if name == "outer" else np.matmul
        return wrap(np.asarray(at_user(fn, x.numpy(), y.numpy())))
    out = empty(shape, x.dtype)
    RECORDER.record("product", name, (out._base, out._view), [(x._base, x._view), (y._base, y._view)],
                    shape, (x.dtype.name, y.dtype.name, x.dtype.name))
    return out


def _fusable_pair(x, y) -> bool:
    return (isinstance(x, LazyArray) and isinstance(y, LazyArray) and x.dtype == y.dtype
            and x.dtype.kind == "f" and x.dtype in KERNEL_DTYPES and x.size > 0 and y.size > 0)


def _pending_rows(a: LazyArray) -> bool:
    """A matrix that recorded element-wise operations (or reductions) are still to compute (no buffer yet: a
    new result, not an update of an existing array), its rows contiguous. A matrix that a
    recorded linear-algebra call or product computes is not one: no element-wise kernel makes
    it, so its row sums would be a kernel of their own, a multiply and a sum over the whole
    matrix in place of one gemv (the Kalman update's ``K @ (z - H @ x)``, K = ``P @ H.T @
    inv(S)``: 0.27 ms against NumPy's 0.02 ms at n = 500)."""
    if a._b is None or a._b.data is not None or not (a._view.strides[-1] == 1 or a._view.shape[-1] == 1):
        return False
    base = a._b
    for op in reversed(RECORDER.ops):
        if op.out[0] is base:
            return op.kind not in ("linalg", "product")
    return False


def matmul(a, b):
    """``a @ b``: matrix-vector and vector-matrix products are recorded (fused by the runtime
    as loop nests), vector-vector is a recorded multiply and sum; anything else falls back.
    ``A @ x`` of a matrix still being computed (``(dx * w) @ m``, rows contiguous) is recorded
    as ``(A * x).sum(axis=1)``: the kernel that computes ``A`` sums its rows in the same pass
    (row by row, in order), and ``A`` itself is never stored when nothing else reads it."""
    if subclass_in(a, b) or (_ADAPT.numpy_sites and adapt.numpy_here()):
        return as_numpy_now(np.matmul, (a, b))      # (a matrix or masked array: NumPy's class)
    done = _small_product(np.matmul, a, b)
    if done is not _LAZY:
        return done
    a, b = _lazy_inputs((a, b))
    if _fusable_pair(a, b) and (a.ndim, b.ndim) in ((2, 1), (1, 2), (1, 1)):
        if a.shape[-1] != b.shape[0]:
            _mismatch(np.matmul, a, b)
        if a.ndim == b.ndim:
            return reduction("sum", ufunc_call(np.multiply, (a, b)))
        if a.ndim == 2 and _pending_rows(a):
            return reduction("sum", ufunc_call(np.multiply, (a, b)), axis=1)
        if a.ndim == 2:
            return _product("matvec", a, b, a.shape[:1])
        return _product("vecmat", a, b, b.shape[1:])
    if isinstance(a, LazyArray) and isinstance(b, LazyArray) and a.ndim == b.ndim == 2:
        if a.shape[1] != b.shape[0]:
            _mismatch(np.matmul, a, b)
        return HOOKS.linalg_matmul(a, b)          # float matrices: a recorded linear-algebra call
    call = HOOKS.numpy_call
    if (getattr(a, "ndim", 0) >= 2 and getattr(b, "ndim", 0) >= 2) or 0 in (getattr(a, "size", 1),
                                                                         getattr(b, "size", 1)):
        return call("matmul", np.matmul, (a, b), {})      # NumPy's BLAS call is the right one
    return fallback("matmul (this form)", np.matmul, (a, b), {})


def outer(a, b):
    """``np.outer``: a recorded broadcast multiply ``a.ravel()[:, None] * b.ravel()[None, :]``,
    which fuses with what consumes it (a rank-1 update ``A -= outer(u, v)`` is one pass over
    ``A``, the outer product never stored)."""
    a, b = _lazy_inputs((a, b))
    if isinstance(a, LazyArray) and isinstance(b, LazyArray):
        return ufunc_call(np.multiply, (a.reshape(-1)[:, None], b.reshape(-1)[None, :]))
    return fallback("outer (this form)", np.outer, (a, b), {})


def _small_product(fn, a, b):
    """``fn(a, b)`` (``np.matmul``, ``np.dot``) by NumPy at once when both operands are small,
    computed arrays (``np.dot(A[i, :j], A[j, :j])`` in a loop): NumPy's own call and result
    (its BLAS dot, not a multiply and a pairwise sum), one wrapper instead of three; else
    ``_LAZY``."""
    x, y = _eager_arg(a), _eager_arg(b)
    if type(x) is not np.ndarray or type(y) is not np.ndarray:
        return _LAZY
    RECORDER_STATS["eager"] += 1
    if _ADAPT.learning:
        _tally_eager(a, b)
    r = at_user(fn, x, y)
    return wrap_result(r) if type(r) is np.ndarray else r


def dot(a, b):
    """``np.dot``: like :func:`matmul` for 1-D and 2-D operands; other forms fall back."""
    if subclass_in(a, b):
        return as_numpy_now(np.dot, (a, b))      # (a matrix or masked array: NumPy's class)
    done = _small_product(np.dot, a, b)
    if done is not _LAZY:
        return done
    a, b = _lazy_inputs((a, b))
    if getattr(a, "ndim", 0) in (1, 2) and getattr(b, "ndim", 0) in (1, 2):
        if a.shape[-1] != b.shape[0]:
            _mismatch(np.dot, a, b)         # np.dot's message ("shapes ... not aligned")
        return matmul(a, b)
    call = HOOKS.numpy_call
    return call("dot", np.dot, (a, b), {})


def _mismatch(fn, a, b):
    """Raise NumPy's error for the product ``fn(a, b)`` of operands whose shapes do not match."""
    numpy_error(fn, a, b, fallback_error=ValueError(
        f"{fn.__name__}: mismatch in core dimension: {a.shape} @ {b.shape}"))
