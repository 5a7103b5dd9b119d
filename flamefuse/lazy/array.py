"""LazyArray, a strided view of a recorder :class:`Base`, and the functions that make one and read one.

``LazyArray(base, view)`` is a strided view of a recorder :class:`Base`. Its operations are
recorded by the modules of their jobs: element-wise ufuncs, ``where``, copies and casts
(:mod:`flamefuse.lazy.elementwise`), reductions (:mod:`flamefuse.lazy.reductions`),
matrix-vector/vector-matrix/outer products (:mod:`flamefuse.lazy.products`); basic indices are
views (:mod:`flamefuse.lazy.indexing`); when every input is concrete (computed, no pending
writes) and the iteration space is below ``RECORDER.eager_below`` elements they run at once
in NumPy (the per-operation overhead of recording would exceed the work); anything else falls
back to NumPy visibly (:mod:`flamefuse.lazy.eager`). Those modules import this one; the
class's methods reach them through the one table of upward calls,
:data:`flamefuse.lazy.hooks.HOOKS`.

The eager path is kept thin, since at 10^4 elements NumPy itself takes only a
few microseconds per operation: operator methods and ufuncs compute with the
Python operator on the NumPy arrays (0-d ones as NumPy scalars: :func:`_eager_arg`) and
return NumPy's own result (an ``ndarray`` or NumPy scalar: what follows on it is plain
NumPy, and an operation that meets a lazy operand still dispatches here);
reductions of such small ``ndarray`` results are NumPy's. Small operands whose broadcast
result is not small (a column times a row: :func:`_small_result`) are recorded instead, so
that the grid, and what the script computes from it, stays lazy. Basic slicing and
assignment act on the NumPy array directly; a view stays a LazyArray (it must
see the recorded writes to its base), ``LazyArray(base, None, ndarray)``, and
an array wrapped by :func:`wrap` (``asarray``) is ``LazyArray(None, None, ndarray)``, its
:class:`Base` and :class:`View` made only when a recorded operation needs them
(``_base``, ``_view``). :func:`adopt` makes NumPy's result of a call a lazy view of an
argument's memory where it is one; :func:`_np_args` is the other way (lazy arrays as their
synced NumPy arrays).
"""
from __future__ import annotations

import operator
import sys
import weakref

import numpy as np

from flamefuse.runtime import adapt
from flamefuse.lazy import buffer_slot
from flamefuse.lazy.hooks import HOOKS
from flamefuse.lazy.indexing import _basic, _element, index_view, view_of
from flamefuse.lazy.kernel_types import KERNEL_DTYPES
from flamefuse.lazy.recorder import RECORDER, Base, _still_exported, note_fallback
from flamefuse.lazy.recorder import STATS as RECORDER_STATS
from flamefuse.lazy.userline import at_user, at_user2

_SETITEM = operator.setitem
from flamefuse.runtime.views import View, contiguous


class LazyArray:
    # _ro: read-only (NumPy's ``flags.writeable`` False: ``setflags(write=False)``, a view of a
    # read-only array, ``broadcast_to``, ``diagonal``); _sc: a 0-d result NumPy gives as a scalar
    # (a full reduction, an elementwise result of 0-d operands): never written in place
    # (``s += 1`` makes a new value, as for NumPy's scalar), hashable, pickled as a scalar
    # _p: the lazy array whose memory this view shows (``.base``: :func:`viewed`), else None
    __slots__ = ("_b", "_v", "_nd", "_ro", "_sc", "_p", "__weakref__")
    __array_priority__ = 100

    def __init__(self, base: Base | None, view: View | None, nd=None):
        """``base=None``: an eager result; ``nd`` (C-contiguous, its own whole buffer) is the data
        and the :class:`Base` is made only when something asks for it."""
        self._b, self._v, self._nd, self._ro, self._sc, self._p = base, view, nd, False, False, None
        if base is not None:
            base.live += 1

    def __hash__(self):
        if self._sc:
            return hash(self.numpy()[()])
        raise TypeError("unhashable type: 'numpy.ndarray'")

    def _readonly(self) -> bool:
        """NumPy's ``not flags.writeable`` (``_ro``, kept by :meth:`setflags` and :attr:`flags`)."""
        return self._ro

    def _derived(self, base, view, nd=None) -> LazyArray:
        """A view of this array (``base``, ``view``): read-only when this array is."""
        r = LazyArray(base, view, nd)
        if self._ro:
            r._ro = True
        r._p = self if self._p is None else self._p
        return r

    @property
    def base(self):
        """NumPy's ``base``: for a view (a slice, ``.T``, ``reshape``, ``ravel``, ``diagonal``, a
        NumPy function's view of it) the array that owns the memory at the root of the chain of
        views (``b = a[1:]; c = b[1:]; c.base is a``: the lazy array); None for an array that
        owns its memory; for one over a NumPy array's memory (:func:`wrap`, :func:`shared`)
        that array's own ``base`` (``asarray(m[1:]).base is m``). Kept in ``_p`` when the view
        is made (the recorder's buffer is ``_base``)."""
        return self._p

    @property
    def flags(self):
        """NumPy's flags of the synced array; setting ``writeable`` (``a.flags.writeable =
        False``, ``a.flags["W"] = False``) makes this lazy array read-only or writable."""
        return _Flags(self)

    def _writable(self, message="assignment destination is read-only") -> None:
        """NumPy's errors for a write into this array: ``ValueError`` when it is read-only,
        ``TypeError`` when NumPy has a scalar here."""
        if self._sc:
            raise TypeError(f"'{type(self.numpy()[()]).__module__}.{type(self.numpy()[()]).__name__}'"
                            " object does not support item assignment")
        if self._readonly():
            raise ValueError(message)

    def setflags(self, write=None, align=None, uic=None):
        nd = self.numpy()
        nd.setflags(write, align, uic)
        self._ro = not nd.flags.writeable

    def resize(self, *new_shape, refcheck=True):
        """NumPy's ``ndarray.resize`` in place: this array's values, in memory order, cut or
        padded with zeros to the new shape (C-ordered), with NumPy's errors. The synced memory
        is a view of the recorder's buffer, which NumPy will not resize ("it does not own its
        data"), so an array owning its memory (``base`` None) is rebound to a new NumPy array
        that ``resize`` made; a view (and a scalar) gets NumPy's own call, and its errors.
        ``refcheck``: NumPy counts references to the array object; here those to this lazy
        array (another name, a view of it: ``base``), as NumPy would."""
        if self._sc or self._p is not None:
            return self.__getattr__("resize")(*new_shape, refcheck=refcheck)
        refs = sys.getrefcount(self)        # the caller's name, its call and this frame: 3
        self._writable()
        nd = self.numpy()
        new = np.array(nd, order="K")        # memory order kept (a Fortran-ordered owner's)
        new.resize(*new_shape, refcheck=False)      # NumPy's shape errors
        if new.size != nd.size and refcheck and (refs > 3 or _exported_now(self)):
            _raise_refcheck_error()
        if self._b is not None:
            self._b.live -= 1
        self._b, self._v, self._nd = None, None, new

    # -- leaving the lazy world: pickling and copying see the computed values
    def __reduce_ex__(self, protocol):
        """Pickled as NumPy's array (or, for a scalar result, NumPy's scalar): unpickling gives a
        plain ``numpy.ndarray`` with the values computed so far (pending work is run first)."""
        nd = self.numpy()
        return (nd[()] if self._sc else nd).__reduce_ex__(protocol)

    def __reduce__(self):
        return self.__reduce_ex__(2)

    def __copy__(self):
        r = self.copy()
        r._sc = self._sc
        return r

    def __deepcopy__(self, memo):
        return self.__copy__()

    if sys.version_info >= (3, 12):
        def __buffer__(self, flags):
            """The buffer protocol (``memoryview(x)``, ``struct``, ``file.write``; before Python
            3.12 the type's slot is filled by :mod:`flamefuse.lazy.buffer_slot`)."""
            return memoryview(_exported(self, self.numpy()))

    def __round__(self, ndigits=None):
        nd = self.numpy()
        return round(nd[()] if self._sc else nd, ndigits) if ndigits is not None else \
            round(nd[()] if self._sc else nd)

    def __complex__(self):
        return complex(self.numpy())

    def __bytes__(self):
        """``bytes(x)``: NumPy's buffer's bytes (not the elements as byte values)."""
        return self.numpy().tobytes()

    def __del__(self):
        if self._b is not None:
            self._b.live -= 1

    # -- attributes
    @property
    def _base(self) -> Base:
        b = self._b
        if b is None:
            nd = self._nd
            b = self._b = Base(nd.dtype, nd.size, nd if nd.ndim == 1 else nd.reshape(-1))
            b.live += 1
            self._v = self._v or contiguous(nd.shape)
        return b

    @property
    def _view(self) -> View:
        """The strided view of the base; eager results (``view=None``) derive it from ``_nd``."""
        if self._v is None:
            base = self._base         # an eager result's base is made here, with its view
            if self._v is None:
                self._v = view_of(self._nd, base.data)
        return self._v

    shape = property(lambda self: self._view.shape if self._nd is None else self._nd.shape,
                     lambda self, value: self._set_shape(value))
    ndim = property(lambda self: len(self._view.shape) if self._nd is None else self._nd.ndim)
    size = property(lambda self: self._view.size if self._nd is None else self._nd.size)
    dtype = property(lambda self: self._base.dtype if self._nd is None else self._nd.dtype)
    itemsize = property(lambda self: self.dtype.itemsize)
    nbytes = property(lambda self: self._view.size * self._base.dtype.itemsize)
    T = property(lambda self: self.transpose())

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of unsized object")
        return self.shape[0]

    def __contains__(self, value):
        """``v in a``: NumPy's ``(a == v).any()`` (iteration would compare rows of a matrix)."""
        return value in self.numpy()

    def __iter__(self):
        if not self.shape:      # NumPy raises at iter(), not at the first next()
            if self._sc:
                return iter(self.numpy()[()])       # NumPy's scalar's error
            raise TypeError("iteration over a 0-d array")
        return (self[i] for i in range(self.shape[0]))

    # -- sync points
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array sharing this array's memory (flushes pending work)."""
        if self._b is None:
            return self._nd
        self._b.finite = None        # handed out: the caller may write it (Base.finite)
        if not RECORDER.concrete(self._base):
            if id(self._base) in RECORDER.touched:
                RECORDER.flush()
            if self._base.data is None:
                self._base.data = np.empty(self._base.size, self._base.dtype)
        if self._nd is not None:
            return self._nd
        v, flat = self._view, self._base.data
        nd = np.ndarray(v.shape, flat.dtype, buffer=flat, offset=v.offset * flat.itemsize,
                        strides=tuple(s * flat.itemsize for s in v.strides))
        if self._ro:
            nd.flags.writeable = False
        self._nd = nd
        return nd

    @property
    def __array_interface__(self):
        """NumPy's array interface of the synced memory (``PIL.Image.fromarray``, ctypes code
        read it): a pointer, kept valid by this array's buffer. NumPy asks it after a buffer
        request that failed (before ``__array__``): that request's error is raised here."""
        err = buffer_slot.failure(self)
        if err is not None:
            raise err
        return self.numpy().__array_interface__

    def __array__(self, dtype=None, copy=None):
        """NumPy's array over this array's memory, after a sync. While the caller keeps it, the
        memory is *exported*: every operation recorded on it runs at once (the array shows
        the lazy array's writes, and its own writes reach later operations, in order)."""
        err = buffer_slot.failure(self)     # NumPy's buffer request just failed: its error
        if err is not None:
            raise err
        a = self.numpy()
        if dtype is not None and dtype != a.dtype:
            return a.astype(dtype)
        if copy:
            return a.copy()
        return _exported(self, a)

    def item(self, *args):
        return self.numpy().item(*args)

    def tolist(self):
        return self.numpy().tolist()

    def __float__(self):
        return float(self.numpy())

    def __int__(self):
        return int(self.numpy())

    def __index__(self):
        return operator.index(self.numpy())

    def __bool__(self):
        return bool(self.numpy())

    def __repr__(self):
        nd = self.numpy()
        return repr(nd[()] if self._sc else nd)

    def __str__(self):
        nd = self.numpy()
        return str(nd[()] if self._sc else nd)

    def __format__(self, spec):
        return format(self.numpy() if self.ndim else self.numpy().item(), spec)

    # -- views
    def __getitem__(self, key):
        nd, b, tk = self._nd, self._b, type(key)
        if nd is not None and (tk is int or tk is slice or (tk is tuple and _basic(key))) and (
                b is None or (b.data is not None and id(b) not in RECORDER.touched)):
            # the eager fast path (computed array, ``a[i]``, ``a[i:j]``, ``m[i, :j]``): what the general
            # path below does for this key, without its calls
            r = nd[key]
            if _ADAPT.learning and b is not None and b.tally is not None:
                b.tally.eager += 1
            if type(r) is not np.ndarray:
                return r        # an element: NumPy's scalar (a copy)
            out = LazyArray(self._base if b is None else b, None, r)
            if self._ro:
                out._ro = True
            out._p = self if self._p is None else self._p
            return out
        if type(key) is LazyArray and key._sc:
            key = key.numpy()[()]       # a scalar result as an index: NumPy's scalar
        nd = _concrete_nd(self)
        if nd is not None and _basic(key):
            r = nd[key]
            if type(r) is np.ndarray:
                if _ADAPT.learning:
                    _tally_eager(self)
                out = LazyArray(self._base, None, r)
                if self._ro:
                    out._ro = True
                out._p = self if self._p is None else self._p
                return out
            if _ADAPT.learning:
                _tally_eager(self)
            return r            # an element: NumPy's scalar (a copy)
        view = index_view(self._view, key)
        if view is None:
            if isinstance(key, (LazyArray, np.ndarray)) and key.dtype == np.bool_ \
                    and key.shape == self.shape and self.ndim:
                return HOOKS.select(self, as_lazy(key))
            if _field_key(key):
                # a field (``pts["x"]``, ``pts[["x", "y"]]``): NumPy's view of the record
                # memory, written through as NumPy's is (a copy lost ``pts["x"] *= 2``)
                return adopt(self.numpy()[key], (self,))
            note_fallback("fancy indexing")
            return wrap(np.asarray(self.numpy()[_np_args(key)]).copy())
        if not view.shape and _element(key, self.ndim):
            return self.numpy()[_np_args(key)]      # NumPy's scalar, a copy (after a sync)
        nd = None
        if self._nd is not None and RECORDER.concrete(self._base):
            key = key if type(key) is tuple else (key,)
            nd = self._nd[key if Ellipsis in key else key + (Ellipsis,)]
        return self._derived(self._base, view, nd)

    def __setitem__(self, key, value):
        if self._ro or self._sc:
            self._writable()
        nd, b, tk = self._nd, self._b, type(key)
        if nd is None and b is not None and b.data is None and b.size < RECORDER.eager_below \
                and id(b) not in RECORDER.touched and (tk is int or tk is slice or (
                    tk is tuple and _basic(key))) and _eager_arg(value) is not _LAZY:
            # a small ``np.empty`` (no memory yet, nothing pending) written with a computed
            # value (``row = np.empty(m); row[0] = x``): its memory now, as the eager copy
            # below would make it (``out.numpy()``), and the fast path
            nd = self.numpy()
        if nd is not None and (tk is int or tk is slice or (tk is tuple and _basic(key))) and (
                b is None or (b.data is not None and id(b) not in RECORDER.touched)):
            # the eager fast path (computed array, ``a[i] = x``, ``a[i:j] = y``, ``m[i, j] = x``): what the
            # general path below does for this key, without its calls
            tv = type(value)
            # a small array, or a small part of a large one (``H[i, :] = row``: the write of a
            # computed value, at once as NumPy does; a recorded copy would make the whole
            # array pending, to be flushed by the next read of any part of it)
            if nd.size < RECORDER.eager_below or (tv is not LazyArray or value._nd is not None) and (
                    type(part := nd[key]) is np.ndarray and part.size < RECORDER.eager_below):
                src = value if tv is np.ndarray or tv is float or tv is int or tv is bool \
                    else _eager_arg(value)
                if src is not _LAZY:
                    RECORDER_STATS["eager"] += 1
                    if _ADAPT.learning:     # _tally_eager(self, value), inlined
                        if b is not None and b.tally is not None:
                            b.tally.eager += 1
                        if tv is LazyArray:
                            _tally_eager(value)
                    at_user(_SETITEM, nd, key, src)
                    return
            elif (tv is int or tv is float or tv is bool) and _element(key, nd.ndim):
                nd[key] = value         # one element of a computed array: written at once
                return
        if type(key) is LazyArray and key._sc:
            key = key.numpy()[()]
        nd = _concrete_nd(self)
        if nd is not None and _basic(key):
            if nd.size < RECORDER.eager_below:
                src = value if type(value) is np.ndarray else _eager_arg(value)
                if src is not _LAZY:
                    RECORDER_STATS["eager"] += 1
                    if _ADAPT.learning:
                        _tally_eager(self, value)
                    at_user(_SETITEM, nd, key, src)
                    return
            elif type(value) in (int, float, bool) and _element(key, nd.ndim):
                nd[key] = value         # one element of a computed array: written at once
                return
        view = index_view(self._view, key)
        if view is None:
            if isinstance(key, (LazyArray, np.ndarray)) and key.dtype == np.bool_ \
                    and key.shape == self.shape and self.ndim and np.ndim(value) == 0 \
                    and _operand_type(value) is not None:
                # r[mask] = v with a scalar v: the recorded where(mask, v, r), in place
                HOOKS.ufunc_where_into(self, as_lazy(key), value)
                return
            note_fallback("fancy index assignment")
            self.numpy()[_np_args(key)] = _np_args(value)
            return
        if type(value) is LazyArray and value._b is self._b and value._view == view:
            return      # ``a[k:] -= t`` ends with ``a[k:] = <that same view>``: a no-op copy
        HOOKS.assign(LazyArray(self._base, view), value)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        if axes:
            axes = _numpy_axes(self.ndim, axes)
        else:
            axes = tuple(reversed(range(self.ndim)))
        v = self._view
        return self._derived(self._base, View(v.offset, tuple(v.shape[a] for a in axes),
                                          tuple(v.strides[a] for a in axes)))

    # NumPy's keyword forms these do not record (``order="F"``, ``copy=``, ``casting=``) are
    # NumPy's methods on the synced array (a view of it stays a lazy view: ``adopt``)
    def reshape(self, *shape, order="C", copy=None):
        if order != "C" or copy is not None:
            return HOOKS.fallback("reshape (this form)", np.ndarray.reshape, (self, *shape),
                                  {"order": order, "copy": copy})
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        shape = np.empty(self.shape, dtype=np.bool_).reshape(shape).shape
        src = self if self._view.strides == contiguous(self.shape).strides else self.copy()
        v = contiguous(shape)
        return src._derived(src._base, View(src._view.offset, v.shape, v.strides))

    def ravel(self, order="C"):
        if order != "C":
            return HOOKS.fallback("ravel (this form)", np.ndarray.ravel, (self,), {"order": order})
        return self.reshape(-1)

    def flatten(self, order="C"):
        if order != "C":
            return HOOKS.fallback("flatten (this form)", np.ndarray.flatten, (self,), {"order": order})
        return self.copy().reshape(-1)

    # -- computations
    def astype(self, dtype, order="K", casting="unsafe", subok=True, copy=True):
        dtype = np.dtype(dtype)
        if casting != "unsafe" or order not in ("K", "A", "C"):
            return HOOKS.fallback("astype (this form)", np.ndarray.astype, (self, dtype),
                                  {"order": order, "casting": casting, "copy": copy})
        if dtype == self.dtype and not copy:
            return self
        if dtype not in KERNEL_DTYPES or self.dtype not in KERNEL_DTYPES:
            return HOOKS.fallback("astype", np.ndarray.astype, (self, dtype), {})
        out = empty(self.shape, dtype)
        HOOKS.assign(out, self)
        out._sc = self._sc
        return out

    def copy(self, order="C"):
        if order not in ("C", "K", "A"):
            return HOOKS.fallback("copy (this form)", np.ndarray.copy, (self,), {"order": order})
        return self.astype(self.dtype)

    def __imatmul__(self, other):
        """``a @= b``: NumPy's ``np.matmul(a, b, out=a)`` (its shape errors; overlap handled)."""
        self._writable("output array is read-only")
        HOOKS.fallback("matmul (in place)", np.matmul, (self, other), {"out": self})
        return self

    def fill(self, value):
        self._writable()
        HOOKS.assign(self, value)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if axis is None and dtype is None and out is None and not keepdims and not kwargs:
            r = _small_reduce(self, np.add, True)
            if r is not _LAZY:
                return r
        return HOOKS.reduce_call("sum", self, axis, dtype, out, keepdims, kwargs)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if axis is None and dtype is None and out is None and not keepdims and not kwargs:
            r = _small_reduce(self, np.multiply, True)
            if r is not _LAZY:
                return r
        return HOOKS.reduce_call("prod", self, axis, dtype, out, keepdims, kwargs)

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        if axis is None and out is None and not keepdims and not kwargs:
            r = _small_reduce(self, np.maximum, False)
            if r is not _LAZY:
                return r
        return HOOKS.reduce_call("max", self, axis, None, out, keepdims, kwargs)

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        if axis is None and out is None and not keepdims and not kwargs:
            r = _small_reduce(self, np.minimum, False)
            if r is not _LAZY:
                return r
        return HOOKS.reduce_call("min", self, axis, None, out, keepdims, kwargs)

    def any(self, axis=None, out=None, keepdims=False, **kwargs):
        return HOOKS.reduce_call("any", self, axis, None, out, keepdims, kwargs)

    def all(self, axis=None, out=None, keepdims=False, **kwargs):
        return HOOKS.reduce_call("all", self, axis, None, out, keepdims, kwargs)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if dtype is not None or out is not None or kwargs:
            return HOOKS.fallback("mean (this form)", np.mean, (self,),
                            dict(kwargs, axis=axis, dtype=dtype, out=out, keepdims=keepdims))
        return HOOKS.mean(self, axis, keepdims)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "__call__" and not kwargs and out is None and ufunc is np.matmul:
            return HOOKS.matmul(*inputs)
        if method == "__call__" and not kwargs:
            if out is not None:
                done = HOOKS.into_ndarray(ufunc, inputs, out[0]) if len(out) == 1 else None
                if done is not None:
                    return done
                if len(out) != 1 or not isinstance(out[0], LazyArray):
                    return HOOKS.fallback(ufunc.__name__, ufunc, inputs, dict(out=out))
                out = out[0]
            return HOOKS.ufunc_call(ufunc, inputs, out)
        lazy_uf = HOOKS.ufunc_type(ufunc)
        if out is not None:
            kwargs["out"] = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if method == "__call__":
            return lazy_uf(*inputs, **kwargs)
        return getattr(lazy_uf, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        ours = _OURS.get(func, _LAZY)
        if ours is _LAZY:
            ours = _ours(func)
        if ours is not None:
            return ours(*args, **kwargs)
        return HOOKS.numpy_call(func.__name__, func, args, kwargs)

    # -- everything else an ndarray has: NumPy's, on the synced data
    def __getattr__(self, name):
        if name.startswith("__") or not (hasattr(np.ndarray, name) or (
                self._sc and hasattr(self.dtype.type, name))):     # NumPy's scalar's: ``s.hex()``
            raise AttributeError(f"'LazyArray' object has no attribute {name!r}")
        attr = getattr(self.numpy()[()] if self._sc else self.numpy(), name)
        if not callable(attr):
            return self._own(attr)
        NATIVE = HOOKS.native_functions

        def method(*args, **kwargs):
            out = kwargs.get("out")
            args, kwargs = _np_args(args), _np_args(kwargs)
            if name in NATIVE or name in NATIVE_METHODS:
                RECORDER_STATS["native"] += 1
            else:
                note_fallback(f"ndarray.{name}")
            r = attr(*args, **kwargs)
            if out is not None and r is kwargs["out"]:
                return out          # ``x.cumsum(out=o) is o``: the lazy array given there
            return self._own(r)
        method.__name__ = name
        return method

    def _own(self, r):
        """NumPy result ``r`` as a lazy array: a view of this array's base when it is one."""
        if type(r) is not np.ndarray:
            if isinstance(r, tuple) and r and type(r[0]) is np.ndarray:
                return tuple(self._own(x) for x in r)
            return r
        return adopt(r, (self,))

    @property
    def real(self):
        return self.__getattr__("real")

    @real.setter
    def real(self, value):
        """``z.real = v`` (also the last step of ``z.real += 1``): NumPy writes the real part."""
        self.__getattr__("real")[...] = value

    @property
    def imag(self):
        return self.__getattr__("imag")

    @imag.setter
    def imag(self, value):
        if self.dtype.kind != "c":
            raise TypeError("array does not have imaginary part to set")
        self.__getattr__("imag")[...] = value

    @property
    def strides(self):
        return self.numpy().strides

    @strides.setter
    def strides(self, value):
        nd = np.lib.stride_tricks.as_strided(self.numpy(), strides=tuple(value))
        v, flat = view_of(nd, self._base.data), self._base.data
        lo = v.offset + sum(min(0, s * (n - 1)) for n, s in zip(v.shape, v.strides))
        hi = v.offset + sum(max(0, s * (n - 1)) for n, s in zip(v.shape, v.strides))
        if v.size and (lo < 0 or hi >= flat.size or any(s % flat.itemsize for s in nd.strides)):
            raise ValueError("strides is not compatible with available memory")
        self._v, self._nd = v, nd

    def _set_shape(self, value):
        nd = np.reshape(self.numpy(), value, copy=False)
        self._v, self._nd = view_of(nd, self._base.data), nd


buffer_slot.install(LazyArray, lambda x: _exported(x, x.numpy()))


class _Flags:
    """``LazyArray.flags``: NumPy's flags object; a write of ``writeable`` also sets ``_ro``."""
    __slots__ = ("_x",)

    def __init__(self, x):
        object.__setattr__(self, "_x", x)

    def __getattr__(self, name):
        if name == "owndata":
            return self._owns()
        return getattr(self._x.numpy().flags, name)

    def __getitem__(self, key):
        if key in ("OWNDATA", "O"):
            return self._owns()
        return self._x.numpy().flags[key]

    def _owns(self) -> bool:
        """NumPy's ``OWNDATA``: an array owns its memory when it is no view (``base`` None); the
        synced memory is a view of the recorder's buffer, whose own flag said False for every
        computed array (``a.copy().flags.owndata``)."""
        self._x.numpy()                 # (the array's errors, as NumPy's flags object would)
        return self._x.base is None

    # (NumPy's flags object keeps the flags it was made with: the array's are read again after
    # a write, or ``a.flags.writeable = False`` left the lazy array writable)
    def __setattr__(self, name, value):
        nd = self._x.numpy()
        setattr(nd.flags, name, value)
        self._x._ro = not nd.flags.writeable

    def __setitem__(self, key, value):
        nd = self._x.numpy()
        nd.flags[key] = value
        self._x._ro = not nd.flags.writeable

    def __eq__(self, other):
        return self._x.numpy().flags == other

    def __repr__(self):
        text = repr(self._x.numpy().flags)
        return text.replace(f"OWNDATA : {not self._owns()}", f"OWNDATA : {self._owns()}")


NATIVE_METHODS = frozenset({"tobytes", "tofile", "dump", "dumps", "view", "getfield", "setfield",
                            "itemset", "setflags", "byteswap", "nonzero", "searchsorted", "conj",
                            "conjugate", "round", "trace", "diagonal", "squeeze", "swapaxes",
                            "to_device", "__dlpack__", "put", "partition", "argpartition"})



def _binop(ufunc, reflected=False, inplace=False, op=None):
    """The operator method ``__<op>__`` for ``ufunc`` (``op``: the Python operator, used eagerly)."""
    if inplace:
        def method(self, other):
            if self._sc:        # NumPy's scalar: ``s += 1`` binds a new value
                return HOOKS.ufunc_call(ufunc, (self, other))
            if self._ro:
                self._writable("output array is read-only")
            nd, base = self._nd, self._b      # _small_concrete(self), inlined: the eager fast path
            if nd is not None and nd.size < RECORDER.eager_below and (base is None or (
                    base.data is not None and id(base) not in RECORDER.touched)) \
                    and (src := _eager_arg(other)) is not _LAZY:
                RECORDER_STATS["eager"] += 1
                if _ADAPT.learning:
                    _tally_eager(self, other)
                at_user(ufunc, nd, src, out=nd)
            else:
                HOOKS.ufunc_call(ufunc, (self, other), self)
            return self
    elif reflected:
        def method(self, other):
            a, b = _eager_arg(other), _eager_arg(self)
            if a is _LAZY or b is _LAZY or not _small_result(a, b):
                if subclass_in(other):      # ``matrix * x``: the subclass's operator (a product)
                    r = op(other, self.numpy())
                    return wrap(r) if type(r) is np.ndarray else r
                return HOOKS.ufunc_call(ufunc, (other, self))
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:
                _tally_eager(self, other)
            return at_user2(op, a, b)
    else:
        def method(self, other):
            a, base = self._nd, self._b     # _eager_arg(self), inlined: the eager fast path
            if a is None or a.size >= RECORDER.eager_below or (base is not None and (
                    base.data is None or id(base) in RECORDER.touched)):
                if _foreign(other):
                    # a string, None, another object: NumPy's operator decides (``x == "a"``
                    # is all False, np.equal raises; a class's reflected method may answer)
                    r = op(self.numpy(), other)
                    return wrap(r) if type(r) is np.ndarray else r
                return HOOKS.ufunc_call(ufunc, (self, other))
            if not a.ndim and self._sc:     # NumPy's scalar (a 0-d array stays one: its
                a = a[()]                   # ``multiply``, not ``scalar multiply``, warns)
            b = _eager_arg(other)
            if b is _LAZY or not _small_result(a, b):
                if _foreign(other):
                    r = op(self.numpy(), other)
                    return wrap(r) if type(r) is np.ndarray else r
                return HOOKS.ufunc_call(ufunc, (self, other))
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:         # _tally_eager(self, other), inlined
                if base is not None and base.tally is not None:
                    base.tally.eager += 1
                if type(other) is LazyArray:
                    _tally_eager(other)
            return at_user2(op, a, b)
    return method


def _foreign(x) -> bool:
    """An operand that is no number, array, list or tuple (a string, None, an object)?"""
    t = type(x)
    if t is LazyArray or t is float or t is int or t is bool or t is complex or t is np.ndarray:
        return False
    # an ndarray subclass too (``x * matrix``: NumPy's operator lets the subclass's answer)
    return not (t is list or t is tuple or isinstance(x, np.generic) or hasattr(x, "_reduce"))


_LAZY = object()
_ADAPT = adapt.STATE
_OURS: dict = {}        # NumPy function -> the lazy module's own one (None: NumPy's, through HOOKS)


def _ours(func):
    """The lazy module's function for NumPy's ``func`` (``np.dot(a, b)`` -> ``flamefuse.lazy.dot``)
    when it has its own, else None; remembered per function (no import and lookups per call)."""
    from flamefuse import lazy
    name = getattr(func, "__name__", None)
    ours = getattr(lazy, name, None) if name in lazy.OWN_FUNCTIONS else None
    ours = None if ours is func else ours
    try:
        _OURS[func] = ours
    except TypeError:       # (an unhashable callable: looked up each time)
        pass
    return ours


def _tally_eager(*xs) -> None:
    """While ``flamefuse fuse`` learns (:mod:`flamefuse.runtime.adapt`): an operation ran eagerly
    through this wrapper on these operands; counted for the sites that made them."""
    for x in xs:
        if type(x) is LazyArray:
            b = x._b
            if b is not None and b.tally is not None:
                b.tally.eager += 1


def _small_reduce(x: LazyArray, ufunc, complex_ok: bool):
    """``x.sum()`` (``prod``, ``max``, ``min``: ``ufunc``) of a small computed array with no
    argument: NumPy's ``ufunc.reduce`` at once, as :func:`flamefuse.lazy.reductions.reduce_call`
    runs it there, without its calls; ``_LAZY`` where that path must decide (a site that runs
    as NumPy, an empty, 0-d, large or pending array, a dtype the kernels do not take)."""
    nd, b = x._nd, x._b
    if _ADAPT.numpy_sites or nd is None or not nd.ndim or not nd.size or nd.size >= RECORDER.eager_below \
            or (b is not None and (b.data is None or id(b) in RECORDER.touched)):
        return _LAZY
    dt = nd.dtype
    if dt not in KERNEL_DTYPES or (dt.kind == "c" and not complex_ok):
        return _LAZY
    RECORDER_STATS["eager"] += 1
    if _ADAPT.learning and b is not None and b.tally is not None:
        b.tally.eager += 1
    return at_user(ufunc.reduce, nd, axis=None)


def _small_result(a, b) -> bool:
    """Whether NumPy's result of two eager operands (:func:`_eager_arg`) is below
    ``eager_below`` elements. Small operands broadcast to a large result (``i * j`` of a column
    and a row: a grid) are recorded instead: run at once, the result would be a plain
    ``ndarray``, and everything the script computes from it after would be plain NumPy,
    never recorded (a stencil over a grid its set-up made from ``arange`` vectors)."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray or a.shape == b.shape:
        return True
    limit = RECORDER.eager_below
    if a.size * b.size < limit:
        return True
    try:
        shape = np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        return True         # NumPy's own error, raised by its call
    n = 1
    for d in shape:
        n *= d
    return n < limit


def _eager_arg(x):
    """An operand for running at once: a small computed array's NumPy array (a 0-d result
    NumPy gives as a scalar as that scalar; ``np.array(2.0)`` stays a 0-d array, whose operators
    are the array's: ``np.array(1e308) * 10`` warns of ``multiply``, not ``scalar multiply``) or
    a Python scalar; ``_LAZY`` where the operation must be recorded."""
    t = type(x)
    if t is LazyArray:
        nd, b = x._nd, x._b
        if nd is None or nd.size >= RECORDER.eager_below or (b is not None and (
                b.data is None or id(b) in RECORDER.touched)):
            return _LAZY
        return nd if nd.ndim or not x._sc else nd[()]
    if t is np.ndarray:
        return x if x.size < RECORDER.eager_below else _LAZY
    return x if t is float or t is int or t is bool or isinstance(x, np.generic) else _LAZY


for _name, _uf in [("add", np.add), ("sub", np.subtract), ("mul", np.multiply),
                   ("truediv", np.true_divide), ("floordiv", np.floor_divide),
                   ("mod", np.remainder), ("pow", np.power), ("and", np.bitwise_and),
                   ("or", np.bitwise_or), ("xor", np.bitwise_xor), ("lshift", np.left_shift),
                   ("rshift", np.right_shift)]:
    _op = getattr(operator, _name if _name not in ("and", "or") else _name + "_")
    setattr(LazyArray, f"__{_name}__", _binop(_uf, op=_op))
    setattr(LazyArray, f"__r{_name}__", _binop(_uf, reflected=True, op=_op))
    setattr(LazyArray, f"__i{_name}__", _binop(_uf, inplace=True))
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(LazyArray, f"__{_name}__", _binop(_uf, op=getattr(operator, _name)))
def _operator_power(method, inplace):
    """``x ** k`` / ``x **= k`` as NumPy's operator computes it: its fast path for an exact Python
    ``int`` 2 (``np.square``: of a boolean array int8, where ``np.power`` gives int64) and, for a
    float or complex array, ``int`` -1 (``np.reciprocal``) and ``float`` 0.5 (``np.sqrt``): a float
    array's warnings name them (``overflow encountered in square``), where ``np.power(x, 2)`` and
    ``x ** 2.0``, recorded as ``ipow2``, name ``power`` as NumPy's do. Those round
    otherwise than NumPy's complex power loop (``np.power(z, 2)`` is unfused products, the square
    fma-rounded ones), so the operator's form must be the ufunc NumPy calls."""
    def pow_(self, other):
        kind = self.dtype.kind
        uf = None
        if type(other) is int and other == 2 and kind in "bfc":
            uf = np.square          # (a float's: ``x ** 2`` warns "... in square")
        elif kind in "fc" and type(other) is int and other == -1:
            uf = np.reciprocal      # (a float's: ``x ** -1`` warns "... in reciprocal")
        elif kind in "fc" and type(other) is float and other == 0.5:
            uf = np.sqrt
        if uf is None:
            return method(self, other)
        if not inplace:
            return HOOKS.ufunc_call(uf, (self,))
        HOOKS.ufunc_call(uf, (self,), self)      # (raises NumPy's casting error)
        return self
    pow_.__name__ = method.__name__
    return pow_


LazyArray.__pow__ = _operator_power(LazyArray.__pow__, False)
LazyArray.__ipow__ = _operator_power(LazyArray.__ipow__, True)
# ``divmod(x, y)`` is NumPy's ``np.divmod`` (its warnings say "encountered in divmod", not in
# floor_divide and remainder; a subclass operand's class decides)
LazyArray.__divmod__ = lambda self, other: HOOKS.ufunc_call(np.divmod, (self, other))
LazyArray.__rdivmod__ = lambda self, other: HOOKS.ufunc_call(np.divmod, (other, self))


def _matmul(self, other):
    """``a @ b``: two small computed arrays (``L[i, :i] @ x[:i]``) by NumPy at once, as
    :func:`flamefuse.lazy.products.matmul` would run them, without its calls; else that."""
    if not _ADAPT.numpy_sites:
        x, y = _eager_arg(self), _eager_arg(other)
        if type(x) is np.ndarray and type(y) is np.ndarray:
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:
                _tally_eager(self, other)
            r = at_user(np.matmul, x, y)
            if type(r) is not np.ndarray:
                return r
            return LazyArray(None, None, r) if r.flags.c_contiguous else wrap(r)
    return HOOKS.matmul(self, other)


LazyArray.__matmul__ = _matmul
LazyArray.__rmatmul__ = lambda self, other: HOOKS.matmul(other, self)
LazyArray.__neg__ = lambda self: HOOKS.ufunc_call(np.negative, (self,))
LazyArray.__pos__ = lambda self: HOOKS.ufunc_call(np.positive, (self,))
LazyArray.__abs__ = lambda self: HOOKS.ufunc_call(np.absolute, (self,))
LazyArray.__invert__ = lambda self: HOOKS.ufunc_call(np.invert, (self,))



def _flat(root: np.ndarray):
    """``root``'s memory as a flat array (a view, in memory order) when it is one contiguous
    block, C- or Fortran-ordered; else None."""
    if root.flags.c_contiguous:
        return root.reshape(-1)
    if root.flags.f_contiguous:
        return root.ravel(order="K")
    return None


def wrap(a: np.ndarray) -> LazyArray:
    """A lazy array over NumPy array ``a``, sharing its memory (a strided ``a`` as a view of the
    contiguous array it is a view of; a copy only when there is none), read-only when ``a`` is."""
    if a.flags.c_contiguous:
        r = LazyArray(None, None, a)
    else:
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        flat = _flat(root) if root.dtype == a.dtype and not any(s % a.itemsize for s in a.strides) \
            and (root is not a or root.flags.f_contiguous) else None
        if flat is not None:        # a view of its root's memory (a Fortran-ordered one too)
            r = LazyArray(Base(a.dtype, flat.size, flat), view_of(a, flat), a)
        else:
            r = LazyArray(None, None, a.copy(order="C"))
    if not a.flags.writeable:
        r._ro = True
    if r._nd is a:
        r._p = a.base           # NumPy's base of the memory it shows
    return r


_SHARED: dict = {}      # id(a NumPy array owning memory) -> weak reference to its Base (or lazy array)


def shared(a: np.ndarray) -> LazyArray:
    """``flamefuse.lazy.asarray(a)`` of a NumPy array: a lazy array over ``a``'s memory whose
    :class:`Base` is the one every other such array over the same NumPy memory has (a view of
    it), so ``x = asarray(m); y = asarray(m.T); x += y`` or ``y[:] = x * 2`` of overlapping
    slices see each other as the overlapping views they are (two bases over one memory were
    independent to the recorder: ``x += y`` streamed through updated values). Memory whose
    owner is not one C-contiguous array of ``a``'s dtype is wrapped as before (:func:`wrap`)."""
    owner = a
    while isinstance(owner.base, np.ndarray):
        owner = owner.base
    if owner.dtype != a.dtype or _flat(owner) is None or any(s % a.itemsize for s in a.strides):
        return wrap(a)
    ref = _SHARED.get(id(owner))
    known = ref() if ref is not None else None
    base = known._base if type(known) is LazyArray else known
    if base is not None and base.data is not owner and base.data.base is not owner:
        base = None                         # (an id reused by another array)
    if base is None and a is owner:
        # the owner itself: a lazy array whose base is made only when needed (``c.resize``
        # of a fresh ``asarray`` still works), found here by a later view of the same memory
        r = wrap(a)
        _remember(owner, r)
        return r
    if base is None:
        flat = _flat(owner)
        base = Base(a.dtype, flat.size, flat)
        _remember(owner, base)
    r = LazyArray(base, view_of(a, base.data), a)
    if not a.flags.writeable:
        r._ro = True
    r._p = a.base
    return r


def _remember(owner: np.ndarray, obj) -> None:
    if len(_SHARED) > 256:
        for k in [k for k, r in _SHARED.items() if r() is None]:
            del _SHARED[k]
    _SHARED[id(owner)] = weakref.ref(obj)


def _exported(x: LazyArray, nd: np.ndarray) -> np.ndarray:
    """A new NumPy view of ``nd`` (``x``'s memory) for code outside flamefuse, recorded on
    ``x``'s base (``Base.exported``, weak references) so that the recorder runs operations
    on that base at once while the view lives (:meth:`Recorder.record`)."""
    v = nd.view()
    base = x._base
    refs = base.exported
    if refs is None:
        base.exported = refs = []
    refs[:] = [r for r in refs if r() is not None]
    refs.append(weakref.ref(v))
    return v


def adopt(r, sources) -> LazyArray:
    """NumPy's result ``r`` of a call on lazy arrays ``sources``, as a lazy array: a view of a
    source's base when ``r`` is a view of its memory (``np.squeeze(x)``, ``np.flip(x)``,
    ``np.broadcast_to(x, s)``, ``x.view()``: later writes to either are seen by the other, in
    order; read-only when ``r`` is), else a new one."""
    if type(r) is not np.ndarray:
        return r
    if r.size:
        at = r.__array_interface__["data"][0]
        for x in sources:
            if type(x) is not LazyArray:
                continue
            flat = x._base.data
            if flat is None:
                continue
            lo = flat.__array_interface__["data"][0]
            if not (lo <= at < lo + flat.nbytes and np.shares_memory(r, flat)):
                continue
            if r.dtype == flat.dtype and not any(s % flat.itemsize for s in r.strides):
                out = LazyArray(x._base, view_of(r, flat), r)
                out._ro = not r.flags.writeable
                out._p = x if x._p is None else x._p
                return out
            out = _alias(r, x._base)
            if out is not None:
                return out
            # bytes no lazy array can show (a string field of a record, items that do not
            # tile the memory): NumPy's own view, exported (a copy would lose the writes)
            return _exported(x, r)
    return wrap(r)


def _field_key(key) -> bool:
    """Is ``key`` a field name or a list of field names (a structured array's view)?"""
    return type(key) is str or (type(key) is list and len(key) > 0 and all(type(k) is str for k in key))


def _alias(r: np.ndarray, base: Base) -> LazyArray | None:
    """A lazy array over NumPy's ``r``, which shows ``base``'s memory as another dtype or with
    strides that are not whole items of it (``z.real``, ``z.imag``, ``x.view(np.int64)``): its
    own :class:`Base` over the same bytes (never a copy: ``z.real += 1`` writes ``z``), and the
    two bases exported to each other (``Base.exported``) so that every operation on either runs
    at once, in the script's order, and each sees the other's writes. None when ``r``'s items do
    not tile ``base``'s bytes (``wrap`` copies then)."""
    flat, item = base.data, r.itemsize
    offset = r.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    if offset % item or flat.nbytes % item or any(s % item for s in r.strides):
        return None
    mem = flat.view(np.uint8).view(r.dtype)
    out = LazyArray(Base(r.dtype, mem.size, mem), view_of(r, mem), r)
    out._ro = not r.flags.writeable
    for b, keep in ((base, r), (out._b, flat)):
        b.exported = [ref for ref in (b.exported or []) if ref() is not None] + [weakref.ref(keep)]
    return out


def _numpy_axes(ndim: int, axes) -> tuple:
    """``axes`` of a transpose as NumPy checks them (its errors: a repeated axis, the wrong
    count, an axis out of range), non-negative; NumPy's transpose of a one-element array of
    ``ndim`` dimensions decides."""
    try:
        ok = len(axes) == ndim and sorted(operator.index(a) % ndim for a in axes) == list(range(ndim)) \
            and all(-ndim <= operator.index(a) < ndim for a in axes)
    except (TypeError, ZeroDivisionError):
        ok = False
    if not ok:
        np.empty((1,) * ndim).transpose(axes)       # raises NumPy's error
    return tuple(operator.index(a) % ndim for a in axes)


def _shape(shape) -> tuple:
    """A new array's shape as NumPy reads it (its error for a negative or non-integer size)."""
    dims = (shape,) if type(shape) is int else tuple(shape) if type(shape) in (tuple, list) else None
    if dims is None or not all(type(d) is int and d >= 0 for d in dims):
        return np.empty(shape, np.uint8).shape       # NumPy's check (and its error)
    return dims


def empty(shape, dtype=float) -> LazyArray:
    shape = _shape(shape)
    dtype = np.dtype(dtype)
    view = contiguous(shape)
    return LazyArray(Base(dtype, view.size), view)



def as_lazy(x) -> LazyArray:
    return x if isinstance(x, LazyArray) else wrap(np.asarray(x))



def _concrete_nd(x: LazyArray):
    """``x``'s NumPy array if it is computed and has no pending writes; else None."""
    nd, b = x._nd, x._b
    if nd is None or (b is not None and (b.data is None or id(b) in RECORDER.touched)):
        return None
    return nd


def _small_concrete(x: LazyArray):
    """``x``'s NumPy array if it is computed, not pending and below ``eager_below``; else None."""
    nd = _concrete_nd(x)
    return nd if nd is not None and nd.size < RECORDER.eager_below else None



def subclass_in(*xs) -> bool:
    """Is an argument an ``ndarray`` subclass (``np.ma.MaskedArray``, ``np.matrix``, a
    ``memmap``)? Its class decides the result's type and values (a mask: ``np.sum(masked)``
    skips masked values; ``matrix * x`` is a product), so NumPy's own call must run."""
    for x in xs:
        t = type(x)
        if t is not np.ndarray and t is not LazyArray and isinstance(x, np.ndarray):
            return True
    return False


def _np_args(x):
    """``x`` for NumPy's own code: lazy arrays (also in tuples, lists, dicts) as their synced
    NumPy arrays, a 0-d result NumPy gives as a scalar as that scalar."""
    if isinstance(x, LazyArray):
        return x.numpy()[()] if x._sc else x.numpy()
    if isinstance(x, (tuple, list)):
        return type(x)(_np_args(y) for y in x)
    if isinstance(x, dict):
        return {k: _np_args(v) for k, v in x.items()}
    return x



def _operand_type(x):
    if isinstance(x, LazyArray):
        return x.dtype
    if isinstance(x, (bool, np.bool_)):
        return np.dtype(bool)
    if type(x) in (int, float, complex):
        return type(x)
    if isinstance(x, np.generic):
        return x.dtype
    return None



def lazy_arrays(x, found=None) -> list:
    """The lazy arrays in ``x`` (nested tuples, lists, dict values)."""
    found = [] if found is None else found
    if type(x) is LazyArray:
        found.append(x)
    elif isinstance(x, (tuple, list)):
        for y in x:
            lazy_arrays(y, found)
    elif isinstance(x, dict):
        for y in x.values():
            lazy_arrays(y, found)
    return found



def _raise_refcheck_error():
    """NumPy's own error for ``resize`` of an array referenced elsewhere (its text varies)."""
    x = np.empty(1)
    y = x  # noqa: F841  (the reference NumPy's check counts)
    x.resize(2)


def _exported_now(x: LazyArray) -> bool:
    """Does a NumPy view of ``x``'s memory handed out (``np.asarray(x)``) still live?"""
    b = x._b
    return b is not None and b.exported is not None and _still_exported(b)
