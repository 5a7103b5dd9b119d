"""Reductions: ``sum``, ``prod``, ``max``, ``min``, ``any``, ``all``, ``mean``, recorded as ``reduce`` ops.

:func:`reduce_call` takes NumPy's signature (method or function; ``out``, ``initial``,
``where`` fall back); :func:`reduction` turns a tuple of axes, ``keepdims`` and ``dtype``
(cast first, as NumPy accumulates in it) into one recorded reduction per reduced axis
(:func:`_reduction`; all axes at once is one full reduction). A reduction of a small
computed array is NumPy's, at once (its scalar or ``ndarray``), and so is a reduction along
an axis of any computed array whose result is small (:func:`_computed_small_result`); a full
reduction's result
is a 0-d lazy array NumPy gives as a scalar (``_sc``). :func:`mean` is a recorded sum
divided by the count. :data:`REDUCERS` are the ufuncs whose ``reduce`` these are
(:data:`UFUNC_REDUCE`: ``np.add.reduce`` is ``sum``).
"""
from __future__ import annotations

from functools import lru_cache
from math import prod

import operator

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from flamefuse.runtime import adapt
from flamefuse.lazy.array import _ADAPT, subclass_in, LazyArray, _small_concrete, _tally_eager, as_lazy, empty, wrap
from flamefuse.lazy.eager import _eager, as_numpy_now, fallback
from flamefuse.lazy.elementwise import ufunc_call
from flamefuse.lazy.kernel_types import by_numpy_for_its_bits, fusable
from flamefuse.lazy.recorder import RECORDER
from flamefuse.lazy.recorder import STATS as RECORDER_STATS
from flamefuse.lazy.userline import at_user


REDUCERS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "any": np.logical_or, "all": np.logical_and}
UFUNC_REDUCE = {v.__name__: k for k, v in REDUCERS.items()}



def reduce_call(name, a, axis, dtype, out, keepdims, kwargs):
    """A reduction method or function with NumPy's signature (``out``, ``initial``, ``where``:
    fallback)."""
    if subclass_in(a):
        # a masked array or matrix: NumPy's function calls its own method (masked values
        # skipped), passing only the arguments given (``matrix.sum`` takes no ``keepdims``)
        extra = dict(kwargs, axis=axis, **{k: v for k, v in (("out", out), ("dtype", dtype)) if v is not None})
        if keepdims:
            extra["keepdims"] = keepdims
        return as_numpy_now(getattr(np, name), (a,), extra)
    if _ADAPT.numpy_sites and out is None and adapt.numpy_here():
        extra = dict(kwargs, axis=axis, keepdims=keepdims)
        if dtype is not None:
            extra["dtype"] = dtype
        return as_numpy_now(getattr(np, name), (a,), extra)
    if out is not None or kwargs:
        extra = dict(kwargs, axis=axis, out=out, keepdims=keepdims)
        if dtype is not None:
            extra["dtype"] = dtype
        return fallback(f"{name} (with {', '.join(sorted(k for k in kwargs) or ['out'])})",
                        getattr(np, name), (a,), extra)
    return reduction(name, a, axis, dtype, keepdims=keepdims)



@lru_cache(maxsize=256)
def _reduce_dtype(name, dtype):
    return np.dtype(REDUCERS[name].reduce(np.zeros(1, dtype)).dtype).name


def reduction(name, a, axis=None, dtype=None, keepdims=False):
    """``np.<name>(a, axis, dtype, keepdims)``: one recorded reduction per reduced axis (a tuple
    covering every axis is one full reduction); ``dtype`` casts first, as NumPy accumulates in it."""
    if keepdims or isinstance(axis, (tuple, list)) or (dtype is not None and name in ("sum", "prod")
                                                       and isinstance(a, LazyArray)):
        return _reduction_forms(name, a, axis, dtype, keepdims)
    return _reduction(name, a, axis, dtype)


def _axes(axis, ndim: int, ufunc_reduce: bool = False) -> tuple:
    """The reduced axes, non-negative, with NumPy's checks: an axis out of range is its
    AxisError (never wrapped around), a float axis its TypeError, a repeated one its ValueError.
    ``ufunc_reduce``: NumPy's ``ufunc.reduce`` (``sum``, ``max``...) also takes a single axis 0
    or -1 of a 0-d array (reducing nothing)."""
    if axis is None:
        return tuple(range(ndim))
    if ufunc_reduce and ndim == 0 and not isinstance(axis, (tuple, list)) and operator.index(axis) in (0, -1):
        return ()
    axes = tuple(normalize_axis_index(operator.index(x), ndim)
                 for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
    return axes


def _reduction_forms(name, a, axis, dtype, keepdims):
    a = as_lazy(a)
    nd = a.ndim
    axes = _axes(axis, nd, ufunc_reduce=True)
    if dtype is not None:
        dtype = np.dtype(dtype)
        a = a.astype(dtype) if dtype != a.dtype else a
    if set(axes) == set(range(nd)):
        r = _reduction(name, a, None, None)
    else:
        r = a
        for ax in sorted(axes, reverse=True):
            r = _reduction(name, r, ax, None)
    if dtype is not None and np.dtype(getattr(r, "dtype", dtype)) != dtype:
        r = r.astype(dtype)
    if keepdims:
        shape = tuple(1 if d in axes else n for d, n in enumerate(a.shape))
        r = r.reshape(shape) if isinstance(r, (LazyArray, np.ndarray)) else np.reshape(r, shape)
    return r


def _reduction(name, a, axis=None, dtype=None):
    if type(a) is np.ndarray and a.size < RECORDER.eager_below:     # a small eager result
        RECORDER_STATS["eager"] += 1
        fn = getattr(np, name)
        return at_user(fn, a, axis=axis) if dtype is None else at_user(fn, a, axis=axis, dtype=dtype)
    if not isinstance(a, LazyArray) and hasattr(a, "_reduce"):
        return a._reduce(name, axis, dtype)
    if type(a) is LazyArray and dtype is None and (axis is None or (
            a.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1))):
        nd = _small_concrete(a)     # (a 0-d one too: NumPy's scalar, not a lazy 0-d array)
        if nd is not None and nd.size and fusable(nd.dtype, name):
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:
                _tally_eager(a)
            return at_user(REDUCERS[name].reduce, nd, axis=None)         # NumPy's scalar
    a = as_lazy(a)
    if a.ndim == 0 and isinstance(axis, (int, np.integer)) and axis in (0, -1):
        axis = None         # NumPy's ufunc.reduce takes axis 0 (or -1) of a 0-d array
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if (axis is not None and not isinstance(axis, (int, np.integer))) or a.size == 0 \
            or not fusable(a.dtype, name) or dtype is not None:
        fn = getattr(np, name)
        return fallback(f"{name} (this form)", fn, (a,), {"axis": axis, "dtype": dtype}
                        if name in ("sum", "prod") else {"axis": axis},
                        quiet=by_numpy_for_its_bits(a.dtype, name))
    if axis is not None:
        axis = int(axis)
        if not -a.ndim <= axis < a.ndim:
            raise np.exceptions.AxisError(axis, a.ndim)
        axis %= a.ndim
    if a.ndim <= 1:
        axis = None
    rdt = _reduce_dtype(name, a.dtype)
    if a.ndim == 0:
        out = a.astype(rdt)
        out._sc = True
        return out
    out_shape = () if axis is None else a.shape[:axis] + a.shape[axis + 1:]
    if _eager([a], None, a.size) or _computed_small_result(a, out_shape):
        RECORDER_STATS["eager"] += 1
        if _ADAPT.learning:
            _tally_eager(a)
        r = REDUCERS[name].reduce(a.numpy(), axis=axis)
        return r if isinstance(r, np.generic) else wrap(np.asarray(r))
    out = empty(out_shape, rdt)
    out._sc = not out_shape         # NumPy's scalar
    RECORDER.record("reduce", name, (out._base, out._view), [(a._base, a._view)], a.shape,
                    (a.dtype.name, rdt), axis)
    return out


def _computed_small_result(a: LazyArray, out_shape: tuple) -> bool:
    """A reduction along an axis of a computed array (nothing pending writes it) whose result has
    fewer than ``eager_below`` elements: NumPy's reduction at once. There is no producer to fuse
    it with, its consumers read a small array (which runs in NumPy at once), and a generated
    kernel took 1.5-5x NumPy's time for it (a 1000 x 500 matrix, one thread: ``X.sum(axis=0)``
    240-315 against 59 us, along the rows 147 against 88 us; whitening's ``X - X.mean(axis=0)``
    0.79 against 0.25 ms)."""
    if not out_shape:
        return False
    n = 1
    for d in out_shape:
        n *= d
    return n < RECORDER.eager_below and RECORDER.concrete(a._base)


def mean(a, axis=None, keepdims=False):
    if not isinstance(a, LazyArray) and hasattr(a, "_reduce"):
        return a._reduce("mean", axis)
    if subclass_in(a):          # (a masked array's mean skips masked values)
        return as_numpy_now(np.mean, (a,), dict(axis=axis, **({"keepdims": True} if keepdims else {})))
    a = as_lazy(a)
    axes = _axes(axis, a.ndim)
    count = prod(a.shape[x] for x in axes)     # (np.prod of a list: 4 us)
    if count == 0:      # NumPy's NaNs and its warnings ("Mean of empty slice", its divide's)
        return as_numpy_now(np.mean, (a,), {"axis": axis, "keepdims": keepdims})
    if by_numpy_for_its_bits(a.dtype, "mean"):     # a complex mean: NumPy's sum and division
        return fallback("mean", np.mean, (a,), {"axis": axis, "keepdims": keepdims}, quiet=True)
    # NumPy's mean of integers and booleans adds in float64 (no wrap-around, uint64 included)
    total = reduction("sum", a, axis, dtype=np.float64 if a.dtype.kind in "biu" else None,
                      keepdims=keepdims)
    return ufunc_call(np.true_divide, (total, count))

