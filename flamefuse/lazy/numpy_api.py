"""NumPy's API around the fused core: ufunc objects, NumPy's own functions, calls without a warning.

Three ways a NumPy name reaches NumPy from :mod:`flamefuse.lazy` (every one
returns lazy arrays over NumPy's results, so what follows is recorded again):

* **plain calls** -- no argument is a lazy array (``np.identity(3)``,
  ``np.seterr(all="ignore")``, ``np.meshgrid(x_nd, y_nd)``): nothing to
  fuse, NumPy runs it, no warning (``stats()["numpy_calls"]``).
* **native calls** -- NumPy's implementation is the right one for the
  function (:data:`NATIVE`: sorting, scans, convolution, concatenation,
  FFTs, matrix @ matrix through BLAS, ...): lazy arguments are synced, NumPy
  runs it, no warning (``stats()["native_names"]``).
* **fallbacks** -- anything else with a lazy argument: synced, run by NumPy,
  with a :class:`~flamefuse.lazy.recorder.FallbackWarning` pointing at the
  user's line (``stats()["fallback_names"]``).

:class:`Ufunc` is the lazy module's ufunc object (``np.add``): calling it
records like the operators; ``reduce`` records a fused reduction (add,
multiply, maximum, minimum, logical_or, logical_and over one axis, a tuple of
axes or all), ``outer`` records a broadcast elementwise operation,
``accumulate``, ``reduceat`` and ``at`` are native calls (``at`` updates the
lazy array in place); its other attributes (``nin``, ``identity``,
``types``...) are NumPy's.
"""
from __future__ import annotations

import operator
import sys
from collections import Counter

import numpy as np
from numpy.lib.array_utils import normalize_axis_index

from flamefuse.lazy.array import (subclass_in, _ADAPT, _LAZY, LazyArray, _eager_arg, _np_args, _small_concrete, _tally_eager,
                                  adopt, as_lazy, empty, lazy_arrays, wrap)
from flamefuse.lazy.eager import as_numpy_now, fallback, numpy_result
from flamefuse.runtime import adapt
from flamefuse.lazy.elementwise import ufunc_call
from flamefuse.runtime.kernel import SUPPORTED
from flamefuse.lazy.products import matmul
from flamefuse.lazy.reductions import UFUNC_REDUCE, reduction
from flamefuse.lazy.recorder import RECORDER, STATS, Base, written
from flamefuse.lazy.userline import at_user, at_user1, at_user2
from flamefuse.runtime.sites import AT1 as _AT1
from flamefuse.runtime.views import rolled

NATIVE_CALLS = Counter()
# functions for which NumPy itself is the right implementation (no fusion possible or useful)
NATIVE = frozenset({
    "sort", "argsort", "lexsort", "partition", "argpartition", "searchsorted", "unique",
    "cumsum", "cumprod", "nancumsum", "nancumprod", "convolve", "correlate", "histogram",
    "histogram2d", "histogramdd", "bincount", "digitize", "interp", "concatenate", "stack",
    "vstack", "hstack", "dstack", "column_stack", "block", "split", "array_split", "hsplit",
    "vsplit", "tile", "repeat", "pad", "meshgrid", "ix_", "indices", "diag", "diagflat", "tril",
    "triu", "trace", "kron", "tensordot", "einsum", "inner", "vdot", "cross", "median",
    "percentile", "quantile", "nanmedian", "nanpercentile", "nanquantile", "argmax", "argmin",
    "nanargmax", "nanargmin", "nonzero", "argwhere", "flatnonzero", "count_nonzero", "take",
    "put", "place", "putmask", "choose", "compress", "extract", "select", "piecewise", "flip",
    "fliplr", "flipud", "rot90", "moveaxis", "swapaxes", "rollaxis", "expand_dims", "squeeze",
    "atleast_1d", "atleast_2d", "atleast_3d", "broadcast_to", "broadcast_arrays", "polyfit",
    "polyval", "trapezoid", "gradient", "ediff1d", "unwrap", "allclose", "isclose",
    "array_equal", "array_equiv", "shares_memory", "may_share_memory", "copyto", "fill_diagonal",
    "ravel_multi_index", "unravel_index", "round", "around", "nan_to_num", "real_if_close",
    "std", "var", "nanstd", "nanvar", "nansum", "nanprod", "nanmax", "nanmin", "nanmean",
    "average", "cov", "corrcoef", "ptp", "matmul", "dot", "delete", "insert", "append",
    "resize", "trim_zeros", "in1d", "isin", "intersect1d", "union1d", "setdiff1d", "setxor1d",
    "array2string", "array_repr", "array_str", "save", "savez", "savetxt", "tofile",
    "apply_along_axis", "apply_over_axes", "vectorize", "frompyfunc", "zeros", "ones",
})


def lazy_in(x) -> bool:
    """Is a lazy array (or selection) anywhere in ``x`` (nested tuples, lists, dicts)?"""
    if isinstance(x, LazyArray) or hasattr(x, "_reduce"):
        return True
    if isinstance(x, (tuple, list)):
        return any(lazy_in(y) for y in x)
    if isinstance(x, dict):
        return any(lazy_in(y) for y in x.values())
    return False


def wrap_any(result, sources=()):
    """NumPy's result with ndarrays (also inside tuples and lists) as lazy arrays: views of
    the memory of lazy arrays in ``sources`` (the call's arguments) as views of them
    (:func:`flamefuse.lazy.array.adopt`)."""
    if type(result) is np.ndarray:
        return adopt(result, sources) if sources else wrap(result)
    if isinstance(result, tuple) and not hasattr(result, "_fields"):
        return tuple(wrap_any(r, sources) for r in result)
    if isinstance(result, list):
        return [wrap_any(r, sources) for r in result]
    return result


def _select_np(x):
    """A selection as its NumPy array; anything else as it is (lazy arrays are synced by
    :func:`~flamefuse.lazy.eager.numpy_result`, which returns a lazy ``out=`` itself)."""
    return x.numpy() if hasattr(x, "_reduce") and not isinstance(x, LazyArray) else x


def _np(x):
    if hasattr(x, "_reduce") and not isinstance(x, LazyArray):     # a selection
        return x.numpy()
    return _np_args(x)


def call(name: str, func, args, kwargs):
    """Run NumPy's ``func``: a plain call, a native call or a visible fallback (module doc)."""
    if not lazy_in(args) and not lazy_in(kwargs):
        STATS["numpy_calls"] += 1
        return wrap_any(func(*args, **kwargs))
    if name in NATIVE:
        STATS["native"] += 1
        NATIVE_CALLS[name] += 1
        return wrap_any(numpy_result(func, [_np(x) for x in args], {k: _select_np(v) for k, v in kwargs.items()}),
                        lazy_arrays((args, kwargs)))
    return fallback(name, func, args, kwargs)


class GridTrick:
    """``np.mgrid`` / ``np.ogrid``: NumPy's object, indexed (not called), with its results as lazy
    arrays as :func:`call` gives them. NumPy's own object returned plain ``ndarray`` grids, so
    everything the script computed from them (``y, x = np.mgrid[0:n, 0:n] / n``) was plain
    NumPy, never recorded. At a site that runs as NumPy (:mod:`flamefuse.runtime.adapt`),
    NumPy's own result."""
    __slots__ = ("_trick", "_name")

    def __init__(self, name: str, trick):
        self._trick, self._name = trick, name

    def __getitem__(self, key):
        if _ADAPT.numpy_sites and adapt.numpy_here():
            return self._trick[key]
        STATS["numpy_calls"] += 1
        return wrap_any(self._trick[key])

    def __getattr__(self, name):
        return getattr(self._trick, name)

    def __repr__(self):
        return repr(self._trick)


# operand types of a ufunc call with nothing to record: NumPy's own call at once, its result
SCALARS = frozenset({float, int, bool, complex, np.float64, np.float32, np.int64, np.int32, np.bool_,
                     np.complex128, np.uint64, np.uint8, np.int8, np.int16, np.uint16, np.uint32,
                     np.float16, np.complex64})


class Ufunc:
    """The lazy module's ufunc object for NumPy ufunc ``ufunc`` (see the module doc)."""
    __slots__ = ("_uf", "_fast", "__name__", "__qualname__")

    def __init__(self, ufunc):
        self._uf = ufunc
        self.__name__ = self.__qualname__ = ufunc.__name__
        # a one-input ufunc :func:`ufunc_call` may run eagerly (``np.sqrt(a)``): the fast path
        self._fast = ufunc.nin == 1 and ufunc.__name__ in SUPPORTED

    def __repr__(self):
        return f"<lazy ufunc '{self.__name__}'>"

    def __getattr__(self, name):
        return getattr(self._uf, name)

    def __call__(self, *args, out=None, **kwargs):
        if out is None and not kwargs:
            n = len(args)
            if n == 1:
                t = type(args[0])
                if t in SCALARS:        # ``np.tanh(a[i, i])``: NumPy's call, at the script's line
                    f = sys._getframe(1)
                    at = _AT1.get((f.f_code, f.f_lasti))     # (at_user1's, inlined: a hot loop's call)
                    return at_user1(self._uf, args[0]) if at is None else at(self._uf, args[0])
                if t is LazyArray and self._fast and not _ADAPT.numpy_sites:
                    # ``np.sqrt(a)`` of a small computed array: what ufunc_call's eager path does,
                    # without its calls (``_fast_eager``)
                    a = _eager_arg(args[0])
                    if a is not _LAZY:
                        STATS["eager"] += 1
                        if _ADAPT.learning:
                            _tally_eager(args[0])
                        return at_user(self._uf, a)
            elif n == 2 and type(args[0]) in SCALARS and type(args[1]) in SCALARS:
                return at_user2(self._uf, args[0], args[1])     # ``np.hypot(3.0, 4.0)``
        nin = self._uf.nin
        if len(args) > nin:                 # outputs given by position: np.multiply(x, 2, x)
            if out is not None:
                raise TypeError("cannot specify 'out' as both a positional and keyword argument")
            args, out = args[:nin], (args[nin:] if len(args) > nin + 1 else args[nin])
        if out is None and not kwargs and all(type(x) in SCALARS for x in args):
            return at_user(self._uf, *args)     # scalars only (three inputs): NumPy's call
        if isinstance(out, tuple):
            out = out[0] if len(out) == 1 else out
        if kwargs or (out is not None and not isinstance(out, LazyArray)):
            extra = dict(kwargs, **({} if out is None else {"out": out}))
            return fallback(f"{self.__name__} (with {', '.join(sorted(extra))})", self._uf,
                               args, extra)
        if self._uf is np.matmul and out is None:
            return matmul(*args)
        return ufunc_call(self._uf, args, out)

    def reduce(self, array, axis=0, dtype=None, out=None, keepdims=False, **kwargs):
        name = UFUNC_REDUCE.get(self.__name__)
        if subclass_in(array):      # a masked array or matrix: NumPy's method keeps its class
            extra = dict(kwargs, axis=axis, dtype=dtype, keepdims=keepdims, **({} if out is None else {"out": out}))
            return wrap_any(as_numpy_now(self._uf.reduce, (array,), extra))
        if name is not None and out is None and not kwargs:
            return reduction(name, array, axis, dtype, keepdims=keepdims)
        extra = dict(kwargs, axis=axis, dtype=dtype, keepdims=keepdims)
        if out is not None:
            extra["out"] = out
        return call(f"{self.__name__}.reduce", self._uf.reduce, (array,), extra)

    def outer(self, a, b, **kwargs):
        if kwargs or subclass_in(a, b):     # (a masked array: NumPy's method keeps its mask)
            return call(f"{self.__name__}.outer", self._uf.outer, (a, b), kwargs)
        a, b = as_lazy(a), as_lazy(b)
        return self(a[(Ellipsis,) + (None,) * b.ndim], b)

    def accumulate(self, *args, **kwargs):
        return _native(f"{self.__name__}.accumulate", self._uf.accumulate, args, kwargs)

    def reduceat(self, *args, **kwargs):
        return _native(f"{self.__name__}.reduceat", self._uf.reduceat, args, kwargs)

    def at(self, a, indices, b=None):
        """In place on ``a`` (a lazy array's NumPy memory, after a sync)."""
        target = a.numpy() if isinstance(a, LazyArray) else a
        args = (target, _np(indices)) + (() if b is None else (_np(b),))
        STATS["native"] += 1
        NATIVE_CALLS[f"{self.__name__}.at"] += 1
        self._uf.at(*args)


def _native(name, func, args, kwargs):
    STATS["native"] += 1
    NATIVE_CALLS[name] += 1
    return wrap_any(numpy_result(func, [_np(x) for x in args], {k: _select_np(v) for k, v in kwargs.items()}),
                    lazy_arrays((args, kwargs)))


# -- functions recorded as views or elementwise operations -------------------------------------

def roll(a, shift, axis=None):
    """``np.roll``: one recorded copy that reads ``a`` through a wrapped view (no sync).

    The copy is an ordinary elementwise op, so it fuses with its consumers and its result,
    a dead temporary, is contracted: ``np.roll(a, 1, 0) + np.roll(a, -1, 0)`` is one pass
    over ``a`` with wrapped subscripts. A roll of a pending roll's result reads the first
    roll's source with both wraps (:func:`_roll_source`), and the inner copy, unobserved,
    is dropped at the flush. Small computed arrays roll at once in NumPy."""
    a = as_lazy(a)
    if axis is None:
        return roll(a.reshape(-1), shift, 0).reshape(a.shape)
    if isinstance(axis, (tuple, list)) or isinstance(shift, (tuple, list)):
        axes = tuple(axis) if isinstance(axis, (tuple, list)) else (axis,) * len(shift)
        shifts = tuple(shift) if isinstance(shift, (tuple, list)) else (shift,) * len(axes)
        if len(axes) != len(shifts):
            raise ValueError("'shift' and 'axis' should be scalars or 1D sequences")
        for s, ax in zip(shifts, axes):
            a = roll(a, s, ax)
        return a
    axis = normalize_axis_index(int(axis), a.ndim)
    nd = _small_concrete(a)
    if nd is not None:
        STATS["eager"] += 1
        return wrap(np.roll(nd, shift, axis))
    if a.size == 0:
        return a.copy()
    base, view = _roll_source(a)
    out = empty(a.shape, a.dtype)
    dt = a.dtype.name
    RECORDER.record("ew", "copy", (out._base, out._view), [(base, rolled(view, axis, int(shift)))],
                    a.shape, (dt, dt))
    return out


ROLL_LOOKBACK = 64      # recorded ops searched for the roll that made a rolled array


def _roll_source(a: LazyArray) -> tuple:
    """``(base, view)`` whose values ``a`` shows: ``a``'s own, or, when ``a`` is the whole
    result of a pending copy (a roll, or a copy without a cast: its fresh base last written
    by that copy) whose source no op recorded since writes, that copy's source view."""
    b, v = a._base, a._view
    if b.data is not None or id(b) not in RECORDER.touched:
        return b, v
    ops = RECORDER.ops
    for k in range(len(ops) - 1, max(-1, len(ops) - 1 - ROLL_LOOKBACK), -1):
        op = ops[k]
        if op.out[0] is not b:
            continue
        src = op.ins[0] if op.kind == "ew" and op.name == "copy" and len(op.ins) == 1 else None
        if (src is None or op.out[1] != v or not isinstance(src[0], Base) or src[0].dtype != b.dtype
                or any(src[0] in written(op) for op in ops[k + 1:])):
            return b, v
        return src
    return b, v


def diff(a, n=1, axis=-1, **kwargs):
    """``np.diff``: recorded subtractions of shifted views (``prepend``/``append``: native)."""
    a = as_lazy(a)
    if kwargs or a.ndim == 0 or n < 0 or a.dtype == np.bool_:
        return call("diff", np.diff, (a,), dict(kwargs, n=n, axis=axis))
    axis = normalize_axis_index(operator.index(axis), a.ndim)      # NumPy's AxisError
    for _ in range(n):
        before = (slice(None),) * axis
        a = a[before + (slice(1, None),)] - a[before + (slice(None, -1),)]
    return a


def diagonal(a, offset=0, axis1=0, axis2=1):
    """``np.diagonal`` of a 2-D lazy array: a view (others: native)."""
    a = as_lazy(a)
    if a.ndim != 2 or (axis1, axis2) not in ((0, 1), (-2, -1), (0, -1), (-2, 1)):
        return call("diagonal", np.diagonal, (a,), dict(offset=offset, axis1=axis1, axis2=axis2))
    v = a._view
    (n, m), (s0, s1) = v.shape, v.strides
    start = v.offset + (offset * s1 if offset >= 0 else -offset * s0)
    length = max(0, min(n, m - offset) if offset >= 0 else min(n + offset, m))
    from flamefuse.runtime.views import make_view
    out = LazyArray(a._base, make_view(start, (length,), (s0 + s1,)))
    out._ro = True          # NumPy's diagonal is a read-only view
    out._p = a if a._p is None else a._p
    return out

