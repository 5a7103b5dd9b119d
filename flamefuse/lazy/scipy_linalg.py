"""``scipy.linalg`` for lazy arrays (what ``flamefuse fuse`` gives a script that imports it).

``cholesky``, ``cho_factor``, ``cho_solve``, ``solve_triangular``,
``lu_factor``, ``lu_solve`` and ``inv`` of 2-D float32/float64 arrays are
recorded like :mod:`flamefuse.lazy.linalg`'s calls, and run where SciPy
raises or warns (:func:`flamefuse.lazy.linalg.when`; an input that is not
finite runs SciPy's own call at once, so ``check_finite`` behaves as
SciPy's). A call with ``overwrite_a=True`` / ``overwrite_b=True`` whose input SciPy
could overwrite (an array of a LAPACK dtype: float32, float64, complex64, complex128) runs
SciPy's own function at once on the array's memory, with the flag (:func:`_overwrites`), so
the input ends as SciPy leaves it (the factors in a Fortran-ordered ``a``, the solution in
``b``). Other options (``unit_diagonal``, complex ``trans='C'``, ...) and
every other ``scipy.linalg`` name (``solve``, ``eigh``, ``qr``, ``lu``, ...)
run SciPy's own function on synced arguments, without a warning
(:func:`flamefuse.lazy.linalg.own`). ``cho_factor`` returns ``(c, lower)``
with ``a``'s entries in the triangle not holding the factor, as SciPy's
(:func:`_keep_other_triangle`).
"""
from __future__ import annotations

import functools

import numpy as _np
import scipy.linalg as _sl

from flamefuse.lazy.array import LazyArray, as_lazy
from flamefuse.lazy.linalg import LinAlgError, _square, own, record, stacked, when  # noqa: F401

_TRANS = {0: 0, "N": 0, 1: 1, "T": 1}
_LAPACK = "fdFD"


def _overwrites(*flagged) -> bool:
    """Does a call whose ``(flag, input)`` pairs are ``flagged`` ask to overwrite an input that
    SciPy could overwrite: an array (lazy or NumPy's; a list is copied) of LAPACK's dtype? SciPy
    overwrites it when it is also Fortran-contiguous and writeable (a vector is), which only its
    own call decides exactly: such a call runs SciPy's own function (:func:`own`) on the
    array's memory -- computed first, after the pending operations that read it."""
    return any(flag and isinstance(x, (LazyArray, _np.ndarray)) and x.dtype.char in _LAPACK
               for flag, x in flagged)


def cholesky(a, lower=False, overwrite_a=False, check_finite=True):
    if _overwrites((overwrite_a, a)):
        return own("scipy.linalg.cholesky", _sl.cholesky, (a,),
                   dict(lower=lower, overwrite_a=True, check_finite=check_finite))
    if stacked(a):
        return own("scipy.linalg.cholesky", _sl.cholesky, (a,), dict(lower=lower, check_finite=check_finite))
    a = _square(a, "cholesky", _sl.cholesky)
    return record("scipy.linalg.cholesky", "cholesky",
                  lambda x: _sl.cholesky(x, lower=lower, check_finite=check_finite), (a,), a.shape,
                  upper=not lower, check_finite=check_finite)


def cho_factor(a, lower=False, overwrite_a=False, check_finite=True):
    if _overwrites((overwrite_a, a)):
        return own("scipy.linalg.cho_factor", _sl.cho_factor, (a,),
                   dict(lower=lower, overwrite_a=True, check_finite=check_finite))
    if stacked(a):
        return own("scipy.linalg.cho_factor", _sl.cho_factor, (a,), dict(lower=lower, check_finite=check_finite))
    a = _square(a, "cho_factor", _sl.cho_factor)
    c = record("scipy.linalg.cho_factor", "cholesky",
               lambda x: _sl.cho_factor(x, lower=lower, check_finite=check_finite)[0], (a,), a.shape,
               upper=not lower, check_finite=check_finite)
    _keep_other_triangle(c, a, bool(lower), check_finite)
    return c, bool(lower)


@functools.lru_cache(maxsize=16)
def _strict_lower(n: int) -> _np.ndarray:
    mask = _np.tri(n, k=-1, dtype=bool)
    mask.setflags(write=False)
    return mask


def _keep_other_triangle(c, a, lower: bool, checked: bool) -> None:
    """SciPy's ``cho_factor`` leaves ``a``'s entries in the triangle of ``c`` the factor does not
    use (LAPACK's potrf on a copy of ``a``, without cleaning); the recorded Cholesky leaves
    zeros there (NumPy's form). The factor is computed at the call (:func:`when`: a Cholesky
    runs at once), so ``a``'s other triangle is copied into ``c``'s memory here. ``c`` stays
    known finite (``Base.finite``) when ``check_finite`` checked ``a``."""
    if c._b is None or c._b.data is None or a.size == 0:
        return                              # the eager path: SciPy's own c
    from flamefuse.lazy.linalg import _values
    src = _values(a)
    if src is None:
        return
    finite = c._b.finite
    dst = c.numpy()
    mask = _strict_lower(a.shape[0])
    _np.copyto(dst, src, where=mask.T if lower else mask)
    if checked and finite is not None:
        c._b.finite = finite


def _misfit(a, b) -> bool:
    """Not a square matrix ``a`` and a right-hand side ``b`` (a vector or matrix) with as many
    rows: the library's own call, which raises its error (a recorded solve read past ``b``)."""
    a = as_lazy(a)
    return a.ndim != 2 or a.shape[0] != a.shape[1] or b.ndim not in (1, 2) or b.shape[0] != a.shape[0]


def cho_solve(c_and_lower, b, overwrite_b=False, check_finite=True):
    c, lower = c_and_lower
    if _overwrites((overwrite_b, b)):
        return own("scipy.linalg.cho_solve", _sl.cho_solve, ((c, lower), b),
                   dict(overwrite_b=True, check_finite=check_finite))
    b = as_lazy(b)
    if stacked(c) or _misfit(c, b):
        return own("scipy.linalg.cho_solve", _sl.cho_solve, ((c, lower), b), dict(check_finite=check_finite))
    return record("scipy.linalg.cho_solve", "cho_solve",
                  lambda x, y: _sl.cho_solve((x, lower), y, check_finite=check_finite), (c, b), b.shape,
                  lower=bool(lower), check_finite=check_finite)


def solve_triangular(a, b, trans=0, lower=False, unit_diagonal=False, overwrite_b=False,
                     check_finite=True):
    if _overwrites((overwrite_b, b)):
        return own("scipy.linalg.solve_triangular", _sl.solve_triangular, (a, b),
                   dict(trans=trans, lower=lower, unit_diagonal=unit_diagonal, overwrite_b=True,
                        check_finite=check_finite))
    b = as_lazy(b)

    def eager(x, y):
        return _sl.solve_triangular(x, y, trans=trans, lower=lower, unit_diagonal=unit_diagonal,
                                    check_finite=check_finite)
    if unit_diagonal or trans not in _TRANS or stacked(a) or _misfit(a, b):
        return own("scipy.linalg.solve_triangular", eager, (a, b))
    return record("scipy.linalg.solve_triangular", "solve_triangular", eager, (a, b), b.shape,
                  lower=bool(lower), trans=_TRANS[trans], check_finite=check_finite)


def lu_factor(a, overwrite_a=False, check_finite=True):
    if _overwrites((overwrite_a, a)):
        return own("scipy.linalg.lu_factor", _sl.lu_factor, (a,),
                   dict(overwrite_a=True, check_finite=check_finite))
    if stacked(a) or as_lazy(a).shape[0] != as_lazy(a).shape[1]:     # SciPy factors M x N too
        return own("scipy.linalg.lu_factor", _sl.lu_factor, (a,), dict(check_finite=check_finite))
    a = as_lazy(a)
    return record("scipy.linalg.lu_factor", "lu_factor",
                  lambda x: _sl.lu_factor(x, check_finite=check_finite), (a,), a.shape, pivots=True,
                  check_finite=check_finite)


def lu_solve(lu_and_piv, b, trans=0, overwrite_b=False, check_finite=True):
    lu, piv = lu_and_piv
    if _overwrites((overwrite_b, b)):
        return own("scipy.linalg.lu_solve", _sl.lu_solve, ((lu, piv), b),
                   dict(trans=trans, overwrite_b=True, check_finite=check_finite))
    b, piv = as_lazy(b), as_lazy(piv)

    def eager(x, p, y):
        return _sl.lu_solve((x, p), y, trans=trans, check_finite=check_finite)
    lazy_lu, lazy_b = as_lazy(lu), b
    if trans not in _TRANS or piv.dtype.kind != "i" or _misfit(lazy_lu, b) or piv.ndim != 1 \
            or not (lazy_lu.dtype == lazy_b.dtype and lazy_lu.dtype.name in ("float32", "float64")) \
            or not (b.size and lazy_lu.size):
        return own("scipy.linalg.lu_solve", eager, (lu, piv, b))
    return _record_lu_solve(eager, lazy_lu, piv, lazy_b, _TRANS[trans], check_finite)


def _record_lu_solve(eager, lu, piv, b, trans, check_finite):
    from flamefuse.lazy.linalg import _small
    from flamefuse.lazy.recorder import RECORDER, STATS, Base
    from flamefuse.lazy.array import LazyArray, wrap
    from flamefuse.lazy.linalg import _fview
    from flamefuse.synth.calls import Call
    from math import prod
    if _small([lu, piv, b]):
        STATS["eager"] += 1
        return wrap(_np.asarray(eager(lu.numpy(), piv.numpy(), b.numpy())))
    from flamefuse.lazy.linalg import small_result
    where = small_result(when("lu_solve", [lu, piv, b], check_finite=check_finite), b.shape)
    if where == "own":
        return own("scipy.linalg.lu_solve", eager, (lu, piv, b))
    base = Base(b.dtype, prod(b.shape))
    view = _fview(b.shape)
    out = LazyArray(base, view)
    call = Call("scipy.linalg.lu_solve", "lu_solve", eager, trans=trans)
    RECORDER.record("linalg", call, (base, view), [(x._base, x._view) for x in (lu, piv, b)], b.shape, None)
    if where == "now":
        RECORDER.flush()
    return out


def inv(a, overwrite_a=False, check_finite=True):
    if _overwrites((overwrite_a, a)):
        return own("scipy.linalg.inv", _sl.inv, (a,), dict(overwrite_a=True, check_finite=check_finite))
    if stacked(a):
        return own("scipy.linalg.inv", _sl.inv, (a,), dict(check_finite=check_finite))
    a = _square(a, "inv", _sl.inv)
    return record("scipy.linalg.inv", "inv", lambda x: _sl.inv(x, check_finite=check_finite), (a,), a.shape,
                  check_finite=check_finite)


def __getattr__(name):
    attr = getattr(_sl, name)
    if callable(attr) and not isinstance(attr, type):
        def call(*args, **kwargs):
            return own(f"scipy.linalg.{name}", attr, args, kwargs)
        call.__name__ = name
        return call
    return attr
