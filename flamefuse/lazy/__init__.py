"""flamefuse.lazy: a drop-in for a subset of NumPy that fuses array code at run time.

``import flamefuse.lazy as np`` and write NumPy code. Operations are
*recorded*, not executed, until a sync point: converting to NumPy
(``np.asarray``/``numpy()``/``__array__``), ``float``/``int``/``bool``,
``print``/``repr``, ``.item()``/``.tolist()``, an explicit :func:`flush`,
an external call, or 2000 pending operations. At a sync point the recorded
list is partitioned (Weighted Subroutine Partition, :mod:`flamefuse.runtime`)
and each block runs as one fused, parallel Numba kernel; temporaries that
die inside a block are never allocated (array contraction).

Supported (recorded and fused):

* creation: ``asarray``, ``array``, ``zeros``, ``ones``, ``empty``, ``full``,
  ``*_like``, ``arange``, ``linspace`` (computed at once; every function here has NumPy's
  signature, and a form not recorded, such as ``order="F"``, ``ndmin``, ``shape=``, ``out=``,
  one-argument ``where``, runs NumPy's own function) and
  ``random.default_rng(seed)`` generators (their results wrap NumPy's); ``mgrid[...]`` and
  ``ogrid[...]`` give NumPy's grids as lazy arrays;
* every ufunc in :data:`flamefuse.runtime.kernel.SUPPORTED` (arithmetic,
  comparisons, logic, bitwise, math) as functions, operators and in-place
  operators, with scalar and array broadcasting; ``where``, ``abs``, ``clip``;
* reductions ``sum``, ``prod``, ``min``/``amin``, ``max``/``amax``, ``mean``,
  ``any``, ``all`` over all elements or one axis (result: a lazy array);
* ``outer(u, v)``: a broadcast multiply, fused with its consumer (a rank-1
  update is one pass);
* products of same-dtype float arrays: ``A @ x`` / ``matmul`` / ``dot``
  (matrix-vector), ``x @ A`` (vector-matrix),
  with ``A`` any 2-D view (``A.T`` is read in place); ``x @ y`` of vectors is
  a recorded multiply and sum. At a flush the pending products form groups
  (a product joins the latest group unless an op recorded since writes one of
  its inputs, or it reads part of a group's result); a group where two products
  read one matrix runs as ONE fused loop-nest kernel (:mod:`flamefuse.runtime.linalg`,
  :mod:`flamefuse.loopnest`): ``q = A @ p; s = A.T @ r`` is one pass over
  ``A``; ``flamefuse.lazy.recorder.RECORDER.last_loopnest`` is the latest such
  kernel (``.explain()``); any other product is NumPy's own call (BLAS gemv,
  :mod:`flamefuse.runtime.products`); ``A @ x`` of a matrix that recorded operations are still to
  compute is instead a recorded multiply and row sum, fused with them (``A`` is never
  stored: the n-body interaction). Matrix @ matrix runs NumPy's BLAS call (no
  warning); integer or mixed-dtype matrix-vector products fall back;
* basic slicing views (ints, slices, ``...``, ``None``), ``.T``,
  ``reshape`` of contiguous arrays, in-place updates of views
  (``c[:] = w``, ``a[1:-1] += b``), ``astype``, ``copy``;
* boolean-mask selection ``x[mask]`` (mask of ``x``'s shape, n-D flattens):
  a lazy :class:`~flamefuse.lazy.selection.Selection` whose length is known
  only after it runs; ufuncs over selections by one mask, scalars and 0-d
  arrays, nested selections, ``sum prod min max mean any all`` and ``.size``
  are recorded. A stage containing a selection is clustered
  (:mod:`flamefuse.runtime.filters`, Robinson et al.'s ILP): the mask, the
  selection and the reductions over it run in one loop, and the selection is
  stored only if still referenced.

* ``stack`` of lazy arrays of one shape and dtype, one of them pending: recorded copies
  into a new array (no sync point; otherwise NumPy's ``stack``);
* ``r[mask] = scalar`` (a recorded ``where``); ``roll`` (a copy through a wrapped
  view that fuses with its consumers, rolls of rolls composed), ``diff``, ``diagonal``
  (2-D: a view), ``reshape``/``transpose``/``ravel``; reductions with NumPy's
  signatures: a tuple of axes, ``keepdims``, ``dtype`` (cast first);
* ufunc *objects* (``np.add`` is a :class:`~flamefuse.lazy.numpy_api.Ufunc`):
  calls record; ``reduce`` records a reduction (add, multiply, maximum, minimum,
  logical_or/and), ``outer`` a broadcast operation; ``accumulate``,
  ``reduceat`` and ``at`` (in place) are NumPy's.

A :class:`LazyArray` is an ndarray for everything else too: every ndarray
attribute and method it does not record is NumPy's, on the synced data, and a
result that is a view of the array stays a lazy view of it (``a.repeat``,
``a.swapaxes``, ``a.sort()`` in place, ``a.flags``, ``a.strides = ...``,
``a.shape = ...``; NumPy functions' results that are views of a lazy argument,
``np.flip(a)``, ``np.broadcast_to(a, s)``, too); ``__array__`` returns an ndarray
over the array's memory (while the caller keeps it, operations on that array run at
once); an element ``a[1, 2]`` is NumPy's scalar (a copy, after a sync); NumPy's own
ufuncs and functions called on lazy arrays dispatch here (``__array_ufunc__``,
``__array_function__``).

Where a value leaves the lazy world it is NumPy's: pickling gives NumPy's array
(``multiprocessing``, queues), ``copy.copy``/``deepcopy`` copy, ``repr`` prints
``array(...)``, read-only arrays (``setflags(write=False)``, ``broadcast_to``,
``diagonal``) raise NumPy's ``ValueError`` at a write, ``random`` functions and
generator methods (``shuffle``, ``permuted(out=)``) write into the lazy array's memory,
and a 0-d result NumPy gives as a scalar (a reduction) prints, hashes, rounds, pickles
and ``json``-encodes as that scalar (:mod:`flamefuse.lazy.interop`) and is never
updated in place. What cannot be equal (the type, the buffer protocol before Python
3.12) is listed in docs/guide.md, "What differs from NumPy".
NumPy functions run in one of three ways (:mod:`flamefuse.lazy.numpy_api`):
with no lazy argument NumPy simply runs them (``np.identity``, ``np.seterr``,
``np.meshgrid`` of NumPy arrays: ``stats()["numpy_calls"]``); where NumPy's
own implementation is the right one (``numpy_api.NATIVE``: matrix @ matrix and
``dot`` through BLAS, sort, scans, ``convolve``, ``meshgrid``, concatenation,
...) lazy arguments are synced and NumPy runs them without a warning
(``stats()["native_names"]``); anything else falls back visibly.

Dtypes (``kernel_types.KERNEL_DTYPES``; others, such as float16, longdouble, object, datetime and
strings, run in NumPy) bool, signed/unsigned integers, float32 and float64, and complex64 /
complex128 for arithmetic, sqrt/exp/log/trigonometric functions, comparisons
for equality and sum/prod/mean (``kernel_types.COMPLEX_UFUNCS``); results have
NumPy 2's dtypes (a Python scalar does not upcast: float32 * 2.0 is float32,
complex64 * 3j is complex64). Anything else (fancy indexing, complex
max/min/ordering, other functions) runs in NumPy after a
sync, with a :class:`FallbackWarning` naming the operation and pointing at the
user's line (the innermost frame outside flamefuse and NumPy); :func:`stats`
reports the count per name. Inputs below ``eager_below`` elements whose data
is already computed run in NumPy directly (recording would cost more), and an
elementwise operation or reduction run that way returns NumPy's own result
(an ``ndarray`` or NumPy scalar), so code on small arrays runs as plain NumPy.

``linalg.cholesky``, ``linalg.inv``, ``linalg.solve`` and matrix @ matrix products
of float arrays are recorded as linear-algebra calls and run as synthesized
fused kernels (:mod:`flamefuse.lazy.linalg`, :mod:`flamefuse.synth`;
``scipy.linalg``'s counterparts: :mod:`flamefuse.lazy.scipy_linalg`).

Exports beyond NumPy's names: :class:`LazyArray`; :func:`flush`;
:func:`configure` (``partitioner=`` one of ``singleton linear greedy
unintrusive optimal cpsat`` for stages without selections, default
``greedy``, or ``cluster`` to cluster every stage; ``eager_below=`` elements); :func:`stats` (a
dict: ops recorded, eager ops, flushes, blocks, kernels compiled / cache
hits, plans built / reused, loop-nest groups and the products in them, fallbacks by name, external calls, seconds);
:func:`reset_stats`; :func:`external` (wrap any function on NumPy arrays: it
syncs, passes NumPy views that share memory so in-place results are kept,
and wraps returned arrays lazily); :func:`build_native` (keep this process's kernels as
native libraries, so the next process loads them without Numba: what ``flamefuse fuse``
does after a script).

The modules, by job (each imports only modules listed before it: no cycles):

* :mod:`~flamefuse.lazy.kernel_types` -- the dtypes the kernels compile, complex operations;
  :mod:`~flamefuse.lazy.indexing` -- the view a basic index selects (pure view arithmetic);
  :mod:`~flamefuse.lazy.recorder` -- the recorded operations, flushes, statistics;
  :mod:`~flamefuse.lazy.buffer_slot` -- the buffer protocol before Python 3.12;
  :mod:`~flamefuse.lazy.hooks` -- :data:`~flamefuse.lazy.hooks.HOOKS`, the one typed table of
  the calls that run up these modules (the class's methods reach the operations, a fallback
  reaches selections, ``A @ B`` the linear-algebra calls), filled here, once;
* :mod:`~flamefuse.lazy.array` -- the :class:`LazyArray` class (attributes, sync points,
  views, operators, NumPy's protocols) and the functions that make one (``wrap``, ``adopt``,
  ``empty``) and read one (``_np_args``);
* :mod:`~flamefuse.lazy.eager` -- what NumPy runs now: small computed operands, sites that
  run as NumPy, visible fallbacks;
* :mod:`~flamefuse.lazy.elementwise` -- ufuncs, ``where``, ``clip``, copies and casts;
  :mod:`~flamefuse.lazy.reductions` -- ``sum`` ... ``mean``;
  :mod:`~flamefuse.lazy.products` -- ``@``, ``dot``, ``outer``;
* :mod:`~flamefuse.lazy.selection` (``x[mask]``), :mod:`~flamefuse.lazy.numpy_api` (ufunc objects,
  NumPy's own functions), :mod:`~flamefuse.lazy.linalg` and
  :mod:`~flamefuse.lazy.scipy_linalg` (recorded linear-algebra calls),
  :mod:`~flamefuse.lazy.rng` (random generators), :mod:`~flamefuse.lazy.interop` (``json``);
  this package's ``__init__`` is NumPy's namespace over them.
"""
from __future__ import annotations

import builtins
import functools

import numpy as _np

from flamefuse.runtime import adapt as _adapt
from flamefuse.lazy import array as _a
from flamefuse.lazy.array import LazyArray, as_lazy, wrap
from flamefuse.lazy import eager as _eager
from flamefuse.lazy import elementwise as _elementwise
from flamefuse.lazy import reductions as _reductions
from flamefuse.lazy import products as _products
from flamefuse.lazy import numpy_api as _numpy_api
from flamefuse.lazy import selection as _select
from flamefuse.lazy.hooks import HOOKS as _HOOKS
from flamefuse.lazy import interop as _interop
from flamefuse.lazy import rng as _rng
from flamefuse.lazy.fpstate import errstate, seterr  # noqa: F401  (sync points: lazy.fpstate)
from flamefuse.lazy.recorder import FALLBACKS, RECORDER, STATS, FallbackWarning  # noqa: F401  (public)
from flamefuse.runtime import execute as _execute
from flamefuse.runtime import kernel as _kernel
from flamefuse.runtime import native as _native



def _linalg_matmul(a, b):
    """``A @ B`` of float matrices (:func:`flamefuse.lazy.linalg.matmul`), importing the
    linear-algebra front end (and :mod:`flamefuse.synth` with it) at its first use: a script
    without one does not pay for that import (start-up, docs/startup.md)."""
    return _linalg().matmul(a, b)


def _linalg():
    """:mod:`flamefuse.lazy.linalg`, imported now if it was not (by ``import_module``: a
    ``from flamefuse.lazy import linalg`` here would ask :func:`__getattr__` first)."""
    import importlib
    return importlib.import_module("flamefuse.lazy.linalg")


# the calls that run up the modules of flamefuse.lazy (flamefuse.lazy.hooks), installed once, here
_HOOKS.install(
    select=_select.select, ufunc_call=_elementwise.ufunc_call, assign=_elementwise.assign,
    ufunc_where_into=_elementwise.ufunc_where_into, into_ndarray=_elementwise._into_ndarray,
    reduce_call=_reductions.reduce_call, mean=_reductions.mean, matmul=_products.matmul,
    fallback=_eager.fallback, numpy_call=_numpy_api.call, ufunc_type=_numpy_api.Ufunc,
    native_functions=_numpy_api.NATIVE, selection_type=_select.Selection,
    apply_ufunc=_select.apply_ufunc, select_where=_select.where, linalg_matmul=_linalg_matmul)

pi, e, inf, nan, newaxis = _np.pi, _np.e, _np.inf, _np.nan, None
_interop.install()        # json encodes lazy float64 results as it does NumPy's scalars
FUSED_FUNCTIONS = {"sum", "prod", "max", "min", "amax", "amin", "mean", "any", "all", "where",
                   "clip", "dot", "outer", "zeros_like", "ones_like", "empty_like", "full_like", "copy", "shape",
                   "ndim", "size"}
EXTERNAL: list[str] = []


def flush() -> None:
    """Run every pending operation now."""
    RECORDER.flush()


def configure(partitioner: str | None = None, eager_below: int | None = None,
              fallback_warnings: bool | None = None) -> None:
    """The partitioner, the size below which computed operands run eagerly, and whether a
    fallback issues a :class:`FallbackWarning` (``flamefuse fuse`` turns that off: its script
    sees NumPy's warnings only; the summary names the fallbacks)."""
    from flamefuse.lazy import recorder
    if fallback_warnings is not None:
        recorder.WARN_FALLBACKS[0] = bool(fallback_warnings)
    if partitioner is not None:
        from flamefuse.runtime.partition import PARTITIONERS
        if partitioner not in PARTITIONERS and partitioner != "cluster":
            from flamefuse.errors import fail      # (not imported by a run without an error)
            fail(f"unknown partitioner {partitioner!r}",
                 hint="choose one of: " + ", ".join([*PARTITIONERS, "cluster"]))
        RECORDER.flush()
        RECORDER.partitioner = partitioner
    if eager_below is not None:
        RECORDER.eager_below = int(eager_below)
        from flamefuse.loops import guard           # a fixed-slice loop on arrays this large is fused
        guard.RECORDED_FROM[:] = [RECORDER.eager_below]


def stats() -> dict:
    counts = dict(STATS) | {k: v for k, v in _execute.STATS.items()}
    counts |= {f"kernels_{k}": v for k, v in _kernel.COUNTS.items()}
    counts |= {f"native_{k}": v for k, v in _native.STATS.items()}
    from flamefuse.runtime import compiler
    counts |= {f"background_{k}": v for k, v in compiler.STATS.items()}
    return counts | {"fallback_names": dict(FALLBACKS), "external_names": list(EXTERNAL),
                     "native_names": dict(_numpy_api.NATIVE_CALLS),
                     "partitioner": RECORDER.partitioner}


def build_native() -> int:
    """Build the native libraries of the kernels this process loaded through Numba
    (:mod:`flamefuse.runtime.native`; needs ``cc``); returns how many were built. A later
    process loads them in under a millisecond each and never imports Numba."""
    flush()
    return _native.build_wanted()


def reset_stats() -> None:
    for c in (STATS, FALLBACKS, _execute.STATS, _kernel.COUNTS, _native.STATS,
              _numpy_api.NATIVE_CALLS):
        c.clear()
    EXTERNAL.clear()


def external(func):
    """Wrap ``func`` (a function on NumPy arrays) as an external operation for lazy arrays."""
    @functools.wraps(func)
    def call(*args, **kwargs):
        RECORDER.flush()
        STATS["external"] += 1
        EXTERNAL.append(getattr(func, "__name__", repr(func)))
        result = func(*_a._np_args(args), **_a._np_args(kwargs))
        if isinstance(result, tuple):
            return tuple(wrap(r) if isinstance(r, _np.ndarray) else r for r in result)
        return wrap(result) if isinstance(result, _np.ndarray) else result
    return call


# -- creation. Each function has NumPy's signature: the arguments its recorded form takes go
# there, any other (order="F", ndmin, shape=, out=, like=...) runs NumPy's own function on the
# synced arguments (_numpy), as NumPy would. At a site running as NumPy
# (:mod:`flamefuse.runtime.adapt`) each is NumPy's own function: a plain ``ndarray``.
def _numpy(name, func, args, kwargs):
    return _numpy_api.call(name, func, args, kwargs)


def _creation(numpy_fn):
    """A creation function that, at a site running as NumPy (:mod:`flamefuse.runtime.adapt`),
    is ``numpy_fn`` itself: a plain ``ndarray``."""
    def deco(fn):
        @functools.wraps(fn)
        def call(*args, **kwargs):
            if _adapt.STATE.numpy_sites and not (numpy_fn is _np.asarray and args and isinstance(
                    args[0], LazyArray)) and _adapt.numpy_here():
                return _eager.as_numpy_now(numpy_fn, args, kwargs)
            return fn(*args, **kwargs)
        return call
    return deco


@_creation(_np.asarray)
def asarray(a, dtype=None, order=None, **kwargs):
    if order not in (None, "C", "K", "A") or kwargs:
        return _numpy("asarray", _np.asarray, (a,), dict(kwargs, dtype=dtype, order=order))
    if dtype is not None and not isinstance(a, (LazyArray, _np.ndarray)):
        return wrap(_np.asarray(a, dtype))     # NumPy converts the values (no float64 on the way)
    x = _a.shared(a) if type(a) is _np.ndarray else as_lazy(a)   # one base per NumPy memory
    return x if dtype is None or _np.dtype(dtype) == x.dtype else x.astype(dtype)


@_creation(_np.array)
def array(a, dtype=None, *, copy=True, order="K", ndmin=0, **kwargs):
    if order not in ("K", "C", "A") or kwargs or ndmin > _np.ndim(a):
        return _numpy("array", _np.array, (a,), dict(kwargs, dtype=dtype, copy=copy, order=order,
                                                      ndmin=ndmin))
    if copy and type(a) is _np.ndarray and a.size < RECORDER.eager_below:
        STATS["eager"] += 1
        return wrap(_np.array(a, dtype))
    if (dtype is not None or copy is False) and not isinstance(a, (LazyArray, _np.ndarray)):
        # a list, tuple or scalar: NumPy converts each value to ``dtype`` (``[2**63 + 5]`` as
        # uint64, ``[300]`` as int8 raising OverflowError), never through float64 first (and
        # ``copy=False`` raises: a list cannot be used without a copy)
        return wrap(_np.array(a, dtype, copy=copy))
    return as_lazy(a).astype(dtype or as_lazy(a).dtype) if copy else asarray(a, dtype)


@_creation(_np.empty)
def empty(shape, dtype=float, order="C", **kwargs):
    if order not in ("C", "A") or kwargs:
        return _numpy("empty", _np.empty, (shape,), dict(kwargs, dtype=dtype, order=order))
    return _a.empty(shape, dtype)


@_creation(_np.full)
def full(shape, fill_value, dtype=None, order="C", **kwargs):
    if order not in ("C", "A") or kwargs:
        return _numpy("full", _np.full, (shape, fill_value), dict(kwargs, dtype=dtype, order=order))
    return _elementwise.full(shape, fill_value, dtype)


@_creation(_np.zeros)
def zeros(shape, dtype=float, order="C", **kwargs):
    if order not in ("C", "A") or kwargs:
        return _numpy("zeros", _np.zeros, (shape,), dict(kwargs, dtype=dtype, order=order))
    return _elementwise.full(shape, 0, dtype)


@_creation(_np.ones)
def ones(shape, dtype=float, order="C", **kwargs):
    if order not in ("C", "A") or kwargs:
        return _numpy("ones", _np.ones, (shape,), dict(kwargs, dtype=dtype, order=order))
    return _elementwise.full(shape, 1, dtype)


def _like(name, np_fn, a, value, dtype, order, subok, shape, kwargs):
    """``np.<name>(a, ...)``: a new lazy array of ``a``'s shape (or ``shape``) and dtype."""
    if order not in ("K", "C", "A") or not subok or kwargs:
        extra = dict(kwargs, dtype=dtype, order=order, subok=subok, shape=shape)
        return _numpy(name, np_fn, (a,) if value is None else (a, value), extra)
    shape = _np.shape(a) if shape is None else shape
    dtype = dtype or (a.dtype if hasattr(a, "dtype") else _np.asarray(a).dtype)
    return _a.empty(shape, dtype) if value is None else _elementwise.full(shape, value, dtype)


@_creation(_np.zeros_like)
def zeros_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like("zeros_like", _np.zeros_like, a, 0, dtype, order, subok, shape, kwargs)


@_creation(_np.ones_like)
def ones_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like("ones_like", _np.ones_like, a, 1, dtype, order, subok, shape, kwargs)


@_creation(_np.empty_like)
def empty_like(a, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like("empty_like", _np.empty_like, a, None, dtype, order, subok, shape, kwargs)


@_creation(_np.full_like)
def full_like(a, fill_value, dtype=None, order="K", subok=True, shape=None, **kwargs):
    return _like("full_like", _np.full_like, a, fill_value, dtype, order, subok, shape, kwargs)


@_creation(_np.arange)
def arange(*args, **kwargs):
    return wrap(_np.arange(*args, **kwargs))


@_creation(_np.linspace)
def linspace(*args, **kwargs):
    r = _np.linspace(*args, **kwargs)
    return (wrap(r[0]), r[1]) if type(r) is tuple else wrap(r)     # retstep=True: (array, step)


@_creation(_np.copy)
def copy(a, order="K", **kwargs):
    if order not in ("K", "C", "A") or kwargs:
        return _numpy("copy", _np.copy, (a,), dict(kwargs, order=order))
    return as_lazy(a).copy()


def shape(a):
    return a.shape if isinstance(a, LazyArray) else _np.shape(a)


def ndim(a):
    return a.ndim if isinstance(a, LazyArray) else _np.ndim(a)


def size(a, axis=None):
    if axis is not None:
        return shape(a)[axis]
    return a.size if isinstance(a, LazyArray) else _np.size(a)


_NO = object()


def where(condition, x=_NO, y=_NO):
    if x is _NO and y is _NO:       # one argument: NumPy's nonzero
        return _numpy("nonzero", _np.where, (condition,), {})
    if x is _NO or y is _NO:
        raise ValueError("either both or neither of x and y should be given")
    return _elementwise.where(condition, x, y)


def clip(a, a_min=_NO, a_max=_NO, out=None, **kwargs):
    if out is not None or kwargs or a_min is _NO or a_max is _NO:
        extra = dict(kwargs, **({} if out is None else {"out": out}))
        args = (a,) + tuple(v for v in (a_min, a_max) if v is not _NO)
        return _numpy("clip", _np.clip, args, extra)
    return _elementwise.clip(a, a_min, a_max)


def outer(a, b, out=None):
    if out is not None:
        return _numpy("outer", _np.outer, (a, b), {"out": out})
    return _products.outer(a, b)


def dot(a, b, out=None):
    if out is not None:
        return _numpy("dot", _np.dot, (a, b), {"out": out})
    return _products.dot(a, b)


# -- reductions
def sum(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):  # noqa: A001
    return _reductions.reduce_call("sum", a, axis, dtype, out, keepdims, kwargs)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    return _reductions.reduce_call("prod", a, axis, dtype, out, keepdims, kwargs)


def max(a, axis=None, out=None, keepdims=False, **kwargs):  # noqa: A001
    return _reductions.reduce_call("max", a, axis, None, out, keepdims, kwargs)


def min(a, axis=None, out=None, keepdims=False, **kwargs):  # noqa: A001
    return _reductions.reduce_call("min", a, axis, None, out, keepdims, kwargs)


def any(a, axis=None, out=None, keepdims=False, **kwargs):  # noqa: A001
    return _reductions.reduce_call("any", a, axis, None, out, keepdims, kwargs)


def all(a, axis=None, out=None, keepdims=False, **kwargs):  # noqa: A001
    return _reductions.reduce_call("all", a, axis, None, out, keepdims, kwargs)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
    if hasattr(a, "_reduce") and not isinstance(a, LazyArray) and not keepdims:    # a selection
        return a._reduce("mean", axis)
    if dtype is not None or out is not None or kwargs:
        return _numpy_api.call("mean", _np.mean, (a,),
                               dict(kwargs, axis=axis, dtype=dtype, out=out, keepdims=keepdims))
    return _reductions.mean(a, axis, keepdims)


amax, amin = max, min


def reshape(a, shape, order="C", **kwargs):
    if order != "C" or kwargs:
        return _numpy_api.call("reshape", _np.reshape, (a, shape), dict(kwargs, order=order))
    return as_lazy(a).reshape(shape)


def transpose(a, axes=None):
    return as_lazy(a).transpose(*(() if axes is None else (axes,)))


def ravel(a, order="C"):
    return as_lazy(a).ravel() if order == "C" else _numpy_api.call("ravel", _np.ravel, (a,), {"order": order})


roll, diff, diagonal = _numpy_api.roll, _numpy_api.diff, _numpy_api.diagonal


def stack(arrays, axis=0, out=None, **kwargs):
    """``np.stack``: recorded copies into a new array when the inputs are lazy arrays of one
    shape and dtype and one of them is still pending (no sync point: the operations that make
    them keep fusing); otherwise NumPy's own ``stack`` on the synced inputs."""
    arrays = list(arrays) if isinstance(arrays, (list, tuple)) else arrays
    if out is None and not kwargs and _stackable(arrays) and -arrays[0].ndim - 1 <= axis <= arrays[0].ndim:
        first = arrays[0]
        axis %= first.ndim + 1
        result = empty(first.shape[:axis] + (len(arrays),) + first.shape[axis:], first.dtype)
        for k, x in enumerate(arrays):
            result[(slice(None),) * axis + (k,)] = x
        return result
    return _numpy_api.call("stack", _np.stack, (arrays,), dict(kwargs, axis=axis, out=out))


def _stackable(arrays) -> bool:
    return (isinstance(arrays, list) and len(arrays) > 0 and builtins.all(type(x) is LazyArray for x in arrays)
            and len({(x.shape, x.dtype) for x in arrays}) == 1
            and builtins.any(x._b is not None and not RECORDER.concrete(x._b) for x in arrays))


# -- ufuncs: objects with NumPy's methods (flamefuse.lazy.numpy_api.Ufunc)
for _name in _kernel.SUPPORTED - {"where", "copy", "mod", "divide"}:
    globals()[_name] = _numpy_api.Ufunc(getattr(_np, _name))
for _name, _value in list(vars(_np).items()):     # not dir(): getattr would import numpy's lazy
    if isinstance(_value, _np.ufunc) and _name not in globals():   # submodules (f2py, testing: 60 ms)
        globals()[_name] = _numpy_api.Ufunc(_value)
abs = absolute  # noqa: A001,F821
divide, mod = true_divide, remainder  # noqa: F821
bitwise_not = invert  # noqa: F821
# names defined here that __array_function__ dispatches to (NumPy functions called on lazy arrays)
OWN_FUNCTIONS = FUSED_FUNCTIONS | {"roll", "diff", "diagonal", "reshape", "transpose", "ravel", "stack"}
matmul = _numpy_api.Ufunc(_np.matmul)       # np.matmul is a ufunc: the object, calls as array.matmul


def _numpy_for_subclasses(name: str):
    """The lazy module's ``name``, running NumPy's own function where an argument (or an array in
    a list argument: ``np.stack([x, m])``) is an ``ndarray`` subclass: a masked array's or a
    matrix's class decides NumPy's result (``np.roll(masked)`` keeps the mask, ``np.ravel(matrix)``
    is a 1 x n matrix, ``np.zeros_like(matrix)`` a matrix)."""
    ours, theirs = globals()[name], getattr(_np, name)
    subclass_in = _a.subclass_in

    @functools.wraps(ours)
    def guarded(*args, **kwargs):
        for x in args:
            if subclass_in(x) or (type(x) in (list, tuple) and subclass_in(*x)):
                return _numpy_api.wrap_any(_eager.as_numpy_now(theirs, args, kwargs))
        if kwargs and subclass_in(*kwargs.values()):
            return _numpy_api.wrap_any(_eager.as_numpy_now(theirs, args, kwargs))
        return ours(*args, **kwargs)
    return guarded


for _name in OWN_FUNCTIONS - {"shape", "ndim", "size"}:
    globals()[_name] = _numpy_for_subclasses(_name)
random = _rng.Random()          # NumPy's random functions and generators on lazy arrays
mgrid = _numpy_api.GridTrick("mgrid", _np.mgrid)      # indexed: results as lazy arrays
ogrid = _numpy_api.GridTrick("ogrid", _np.ogrid)


def __getattr__(name):
    if name == "linalg":        # numpy.linalg: recorded calls, imported at first use (_linalg_matmul)
        return _linalg()
    attr = getattr(_np, name)
    if isinstance(attr, _np.ufunc):          # one registered after this module was imported
        return _numpy_api.Ufunc(attr)
    if callable(attr) and not isinstance(attr, type):
        def call(*args, **kwargs):
            if _adapt.STATE.numpy_sites and _adapt.numpy_here():
                return _eager.as_numpy_now(attr, args, kwargs)
            return _numpy_api.call(name, attr, args, kwargs)
        call.__name__ = name
        call.__wrapped__ = attr
        return call
    return attr
