"""``numpy.linalg`` for lazy arrays: calls recorded as nodes, run as synthesized fused kernels.

Under ``flamefuse fuse`` (or ``flamefuse.lazy.linalg`` directly),
``cholesky``, ``inv`` and ``solve`` of float32/float64 arrays are *recorded*
(a ``("linalg", Call, ...)`` operation of the recorder,
:class:`flamefuse.synth.calls.Call`) instead of run; so are ``a @ b`` of
two 2-D lazy float arrays of one dtype (through :func:`matmul`, which
:func:`flamefuse.lazy.array.matmul` calls) and the SciPy calls of
:mod:`flamefuse.lazy.scipy_linalg`. At the next sync point the recorded calls
of a stage run together through :func:`flamefuse.synth.run.run_group`: a
chain of them becomes one derived, fused kernel where one exists. Results
are NumPy's; ``LinAlgError`` is raised at the sync point that runs the
call, and a call that may raise made inside a ``try`` or ``with`` block of the
user's code runs at once (:mod:`flamefuse.lazy.handlers`), so the script's own
handler sees the error as it does under NumPy. Inputs that are computed and smaller than ``eager_below`` elements,
and other dtypes, run in NumPy at once. Any other ``numpy.linalg`` name is
NumPy's, run on synced arguments (:func:`flamefuse.lazy.array.fallback`).
"""
from __future__ import annotations

from math import prod

import numpy as _np

from flamefuse.lazy import array as _a
from flamefuse.lazy.array import LazyArray, as_lazy, wrap
from flamefuse.lazy.handlers import guarded
from flamefuse.lazy.recorder import RECORDER, STATS, Base
from flamefuse.runtime.views import make_view
from flamefuse.synth.calls import Call

LinAlgError = _np.linalg.LinAlgError
FLOATS = ("float32", "float64")


def _fview(shape, transposed=False):
    if len(shape) == 1:
        return make_view(0, shape, (1,))
    n, m = shape
    return make_view(0, (m, n), (n, 1)) if transposed else make_view(0, (n, m), (1, n))


def recordable(arrays) -> bool:
    """Float arrays of one dtype, 1-D or 2-D, not empty."""
    return (all(isinstance(x, LazyArray) for x in arrays) and len({x.dtype for x in arrays}) == 1
            and arrays[0].dtype.name in FLOATS and all(x.ndim in (1, 2) and x.size for x in arrays))


def _small(arrays) -> bool:
    return all(_a._concrete_nd(x) is not None for x in arrays) and \
        max(x.size for x in arrays) < RECORDER.eager_below


def record(name: str, op: str, eager, args, shape, *, lower=True, trans=0, upper=False, pivots=False,
           fallback_args=None, fallback_kwargs=None):
    """The lazy result of one call (a tuple ``(result, pivots)`` with ``pivots``); NumPy at once
    for small computed inputs, and as a visible fallback for forms that are not recorded."""
    arrays = [as_lazy(x) for x in args]
    if not recordable(arrays):
        return _a.fallback(name, eager, tuple(arrays), {})
    if _small(arrays):
        STATS["eager"] += 1
        r = eager(*[x.numpy() for x in arrays])
        return tuple(wrap(_np.asarray(x)) for x in r) if isinstance(r, tuple) else wrap(_np.asarray(r))
    dtype = arrays[0].dtype
    base = Base(dtype, prod(shape))
    view = _fview(tuple(shape), transposed=upper)
    if upper:
        view = make_view(0, tuple(shape), view.strides)
    out = LazyArray(base, view)
    extra, piv = (), None
    if pivots:
        pbase = Base(_np.dtype(_np.int32), shape[0])
        piv = LazyArray(pbase, _fview((shape[0],)))
        extra = ((pbase, piv._view),)
    call = Call(name, op, eager, lower=lower, trans=trans, upper=upper, extra=extra)
    RECORDER.record("linalg", call, (base, view), [(x._base, x._view) for x in arrays], tuple(shape), None)
    if op != "matmul" and guarded():
        STATS["linalg_guarded"] += 1
        RECORDER.flush()               # raise here, inside the user's try, as NumPy does
    if pivots:
        RECORDER.touched[id(pbase)] = pbase
        return out, piv
    return out


def _square(a, name):
    a = as_lazy(a)
    if a.ndim != 2 or a.shape[0] != a.shape[1]:
        raise LinAlgError(f"{name}: Last 2 dimensions of the array must be square")
    return a


def cholesky(a, upper=False):
    a = _square(a, "cholesky")
    return record("numpy.linalg.cholesky", "cholesky", lambda x: _np.linalg.cholesky(x, upper=upper),
                  (a,), a.shape, upper=bool(upper))


def inv(a):
    a = _square(a, "inv")
    return record("numpy.linalg.inv", "inv", _np.linalg.inv, (a,), a.shape)


def solve(a, b):
    a, b = _square(a, "solve"), as_lazy(b)
    if b.ndim not in (1, 2) or b.shape[0] != a.shape[0]:
        return _a.fallback("solve (this form)", _np.linalg.solve, (a, b), {})
    return record("numpy.linalg.solve", "solve", _np.linalg.solve, (a, b), b.shape)


def matmul(a: LazyArray, b: LazyArray):
    """``a @ b`` of two 2-D lazy arrays (called by :func:`flamefuse.lazy.array.matmul`)."""
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"matmul: mismatch in core dimension: {a.shape} @ {b.shape}")
    if a.dtype != b.dtype or not recordable([a, b]):
        return _a.NUMPY_API["call"]("matmul", _np.matmul, (a, b), {})     # NumPy's own matmul, no warning
    return record("matmul", "matmul", _np.matmul, (a, b), (a.shape[0], b.shape[1]))


_a.LINALG["matmul"] = matmul


def __getattr__(name):
    attr = getattr(_np.linalg, name)
    if callable(attr) and not isinstance(attr, type):
        def call(*args, **kwargs):
            return _a.fallback(f"linalg.{name}", attr, args, kwargs)
        call.__name__ = name
        return call
    return attr
