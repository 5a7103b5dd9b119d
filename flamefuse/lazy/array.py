"""LazyArray and the operations that record (or, for small concrete inputs, run) array code.

``LazyArray(base, view)`` is a strided view of a recorder :class:`Base`.
Elementwise ufuncs, ``where``, copies/casts, reductions and
matrix-vector/vector-matrix/outer products (:func:`matmul`, :func:`outer`,
:func:`dot`) are recorded;
when every input is concrete (computed, no pending writes) and the iteration
space is below ``RECORDER.eager_below`` elements they run at once in NumPy
(the per-operation overhead of recording would exceed the work). Anything
else falls back to NumPy visibly (:func:`note_fallback`).

The eager path is kept thin, since at 10^4 elements NumPy itself takes only a
few microseconds per operation: operator methods and ufuncs compute with the
Python operator on the NumPy arrays (0-d ones as NumPy scalars) and return
NumPy's own result (an ``ndarray`` or NumPy scalar: what follows on it is plain
NumPy, and an operation that meets a lazy operand still dispatches here);
reductions of such small ``ndarray`` results are NumPy's. Basic slicing and
assignment act on the NumPy array directly; a view stays a LazyArray (it must
see the recorded writes to its base), ``LazyArray(base, None, ndarray)``, and
an array wrapped by :func:`asarray` is ``LazyArray(None, None, ndarray)``, its
:class:`Base` and :class:`View` made only when a recorded operation needs them
(``_base``, ``_view``).

Recorded forms chosen for speed: ``x ** k`` (k = 2..5) is ``ipow<k>`` and a float
array's ``x ** p`` (p = +-0.5, +-1.5) ``hpow<p>`` (:func:`flamefuse.runtime.kernel.half_power`:
square roots, no ``pow``); ``A @ x`` of a matrix that recorded operations are still to
compute is ``(A * x).sum(axis=1)`` (:func:`matmul`: fused with the operations that make
``A``, which is then never stored); ``ufunc(..., out=ndarray)`` (``vel += acc``, ``vel``
NumPy's) is recorded into the NumPy array's memory and synced at once
(:func:`_into_ndarray`), not a fallback.
"""
from __future__ import annotations

import operator
import sys
import weakref
from functools import lru_cache
from math import prod

import numpy as np

from flamefuse.runtime import adapt, simd
from flamefuse.lazy import buffer_slot
from flamefuse.lazy.recorder import RECORDER, Base, note_fallback
from flamefuse.lazy.recorder import STATS as RECORDER_STATS
from flamefuse.runtime.kernel import SUPPORTED
from flamefuse.runtime.views import View, contiguous, make_view, overlap

KINDS = "biuf"
# complex arrays fuse through the operations Numba compiles for complex operands (NumPy's meaning)
COMPLEX_UFUNCS = frozenset({"add", "subtract", "multiply", "true_divide", "divide", "negative", "positive",
                            "square", "equal", "not_equal", "sqrt", "exp", "log", "log10", "sin", "cos",
                            "tan", "sinh", "cosh", "tanh", "isnan", "isinf", "isfinite", "copy", "power"})
COMPLEX_REDUCTIONS = frozenset({"sum", "prod", "mean"})
_COMPLEX_FUSED = COMPLEX_UFUNCS | COMPLEX_REDUCTIONS


# the dtypes the generated kernels compile (Numba's): float16, longdouble, complex256, object,
# datetime, strings... run as NumPy (:func:`fallback`)
KERNEL_DTYPES = frozenset(np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float32", "float64", "complex64", "complex128"))
REAL_DTYPES = frozenset(d for d in KERNEL_DTYPES if d.kind in KINDS)
_KERNEL_NAMES = frozenset(d.name for d in KERNEL_DTYPES)


def fusable(dtype: np.dtype, name: str) -> bool:
    """A dtype the generated kernels take for this operation (complex: COMPLEX_UFUNCS / _REDUCTIONS)."""
    return dtype in KERNEL_DTYPES and (dtype.kind != "c" or name in _COMPLEX_FUSED)
SMALL_POWERS = (2, 3, 4, 5)
_POWERS = {k: (lambda x, k=k: np.power(x, k)) for k in SMALL_POWERS}   # eager form of ipow<k>
# ``x ** p`` of a float array for a literal p in HALF_POWERS is recorded as ``hpow<p>`` (square
# roots and divisions instead of pow: :func:`flamefuse.runtime.kernel.half_power`)
HALF_POWERS = (0.5, -0.5, 1.5, -1.5)
_HALF = {p: (lambda x, p=p: np.power(x, p)) for p in HALF_POWERS}       # eager form of hpow<p>
REDUCERS = {"sum": np.add, "prod": np.multiply, "max": np.maximum, "min": np.minimum,
            "any": np.logical_or, "all": np.logical_and}
UFUNC_REDUCE = {v.__name__: k for k, v in REDUCERS.items()}

# Boolean-mask selections (x[mask]) live in flamefuse.lazy.select, which imports this module and
# registers its entry points here when the package is imported: "select", "where", "apply_ufunc"
# and the "type" of a selection.
SELECTION: dict = {}
# NumPy's own functions and the ufunc objects live in flamefuse.lazy.numpy_api, which registers
# "call", "Ufunc" and "NATIVE" here when the package is imported (as select does above).
NUMPY_API: dict = {}
# flamefuse.lazy.linalg registers "matmul" here: matrix @ matrix recorded as a linear-algebra call
LINALG: dict = {}


class LazyArray:
    # _ro: read-only (NumPy's ``flags.writeable`` False: ``setflags(write=False)``, a view of a
    # read-only array, ``broadcast_to``, ``diagonal``); _sc: a 0-d result NumPy gives as a scalar
    # (a full reduction, an elementwise result of 0-d operands): never written in place
    # (``s += 1`` makes a new value, as for NumPy's scalar), hashable, pickled as a scalar
    __slots__ = ("_b", "_v", "_nd", "_ro", "_sc", "__weakref__")
    __array_priority__ = 100

    def __init__(self, base: Base | None, view: View | None, nd=None):
        """``base=None``: an eager result; ``nd`` (C-contiguous, its own whole buffer) is the data
        and the :class:`Base` is made only when something asks for it."""
        self._b, self._v, self._nd, self._ro, self._sc = base, view, nd, False, False
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
        return r

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

    def __iter__(self):
        for i in range(len(self)):
            yield self[i]

    # -- sync points
    def numpy(self) -> np.ndarray:
        """The values as a NumPy array sharing this array's memory (flushes pending work)."""
        if self._b is None:
            return self._nd
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

    def __array__(self, dtype=None, copy=None):
        """NumPy's array over this array's memory, after a sync. While the caller keeps it, the
        memory is *exported*: every operation recorded on it runs at once (the array shows
        the lazy array's writes, and its own writes reach later operations, in order)."""
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
                return out
            if _ADAPT.learning:
                _tally_eager(self)
            return r            # an element: NumPy's scalar (a copy)
        view = index_view(self._view, key)
        if view is None:
            if isinstance(key, (LazyArray, np.ndarray)) and key.dtype == np.bool_ \
                    and key.shape == self.shape and self.ndim:
                return SELECTION["select"](self, as_lazy(key))
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
                    nd[key] = src
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
                ufunc_where_into(self, as_lazy(key), value)
                return
            note_fallback("fancy index assignment")
            self.numpy()[_np_args(key)] = _np_args(value)
            return
        if type(value) is LazyArray and value._b is self._b and value._view == view:
            return      # ``a[k:] -= t`` ends with ``a[k:] = <that same view>``: a no-op copy
        assign(LazyArray(self._base, view), value)

    def transpose(self, *axes):
        axes = axes[0] if len(axes) == 1 and isinstance(axes[0], (tuple, list)) else axes
        axes = axes or tuple(reversed(range(self.ndim)))
        v = self._view
        return self._derived(self._base, View(v.offset, tuple(v.shape[a] for a in axes),
                                          tuple(v.strides[a] for a in axes)))

    def reshape(self, *shape):
        shape = shape[0] if len(shape) == 1 and isinstance(shape[0], (tuple, list)) else shape
        shape = np.empty(self.shape, dtype=np.bool_).reshape(shape).shape
        src = self if self._view.strides == contiguous(self.shape).strides else self.copy()
        v = contiguous(shape)
        return src._derived(src._base, View(src._view.offset, v.shape, v.strides))

    def ravel(self):
        return self.reshape(-1)

    def flatten(self):
        return self.copy().reshape(-1)

    # -- computations
    def astype(self, dtype, copy=True):
        dtype = np.dtype(dtype)
        if dtype == self.dtype and not copy:
            return self
        if dtype not in KERNEL_DTYPES or self.dtype not in KERNEL_DTYPES:
            return fallback("astype", np.ndarray.astype, (self, dtype), {})
        out = empty(self.shape, dtype)
        assign(out, self)
        out._sc = self._sc
        return out

    def copy(self):
        return self.astype(self.dtype)

    def fill(self, value):
        self._writable()
        assign(self, value)

    def sum(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return reduce_call("sum", self, axis, dtype, out, keepdims, kwargs)

    def prod(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        return reduce_call("prod", self, axis, dtype, out, keepdims, kwargs)

    def max(self, axis=None, out=None, keepdims=False, **kwargs):
        return reduce_call("max", self, axis, None, out, keepdims, kwargs)

    def min(self, axis=None, out=None, keepdims=False, **kwargs):
        return reduce_call("min", self, axis, None, out, keepdims, kwargs)

    def any(self, axis=None, out=None, keepdims=False, **kwargs):
        return reduce_call("any", self, axis, None, out, keepdims, kwargs)

    def all(self, axis=None, out=None, keepdims=False, **kwargs):
        return reduce_call("all", self, axis, None, out, keepdims, kwargs)

    def mean(self, axis=None, dtype=None, out=None, keepdims=False, **kwargs):
        if dtype is not None or out is not None or kwargs:
            return fallback("mean (this form)", np.mean, (self,),
                            dict(kwargs, axis=axis, dtype=dtype, out=out, keepdims=keepdims))
        return mean(self, axis, keepdims)

    def __array_ufunc__(self, ufunc, method, *inputs, out=None, **kwargs):
        if method == "__call__" and not kwargs and out is None and ufunc is np.matmul:
            return matmul(*inputs)
        if method == "__call__" and not kwargs:
            if out is not None:
                done = _into_ndarray(ufunc, inputs, out[0]) if len(out) == 1 else None
                if done is not None:
                    return done
                if len(out) != 1 or not isinstance(out[0], LazyArray):
                    return fallback(ufunc.__name__, ufunc, inputs, dict(out=out))
                out = out[0]
            return ufunc_call(ufunc, inputs, out)
        lazy_uf = NUMPY_API["Ufunc"](ufunc)
        if out is not None:
            kwargs["out"] = out[0] if isinstance(out, tuple) and len(out) == 1 else out
        if method == "__call__":
            return lazy_uf(*inputs, **kwargs)
        return getattr(lazy_uf, method)(*inputs, **kwargs)

    def __array_function__(self, func, types, args, kwargs):
        from flamefuse import lazy
        call = NUMPY_API["call"]
        ours = getattr(lazy, func.__name__, None) if func.__name__ in lazy.OWN_FUNCTIONS else None
        if ours is not None and ours is not func:
            return ours(*args, **kwargs)
        return call(func.__name__, func, args, kwargs)

    # -- everything else an ndarray has: NumPy's, on the synced data
    def __getattr__(self, name):
        if name.startswith("__") or not hasattr(np.ndarray, name):
            raise AttributeError(f"'LazyArray' object has no attribute {name!r}")
        attr = getattr(self.numpy()[()] if self._sc else self.numpy(), name)
        if not callable(attr):
            return self._own(attr)
        NATIVE = NUMPY_API["NATIVE"]

        def method(*args, **kwargs):
            args, kwargs = _np_args(args), _np_args(kwargs)
            if name in NATIVE or name in NATIVE_METHODS:
                RECORDER_STATS["native"] += 1
            else:
                note_fallback(f"ndarray.{name}")
            return self._own(attr(*args, **kwargs))
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
        return getattr(self._x.numpy().flags, name)

    def __getitem__(self, key):
        return self._x.numpy().flags[key]

    def __setattr__(self, name, value):
        flags = self._x.numpy().flags
        setattr(flags, name, value)
        self._x._ro = not flags.writeable

    def __setitem__(self, key, value):
        flags = self._x.numpy().flags
        flags[key] = value
        self._x._ro = not flags.writeable

    def __eq__(self, other):
        return self._x.numpy().flags == other

    def __repr__(self):
        return repr(self._x.numpy().flags)


NATIVE_METHODS = frozenset({"tobytes", "tofile", "dump", "dumps", "view", "getfield", "setfield",
                            "itemset", "setflags", "byteswap", "nonzero", "searchsorted", "conj",
                            "conjugate", "round", "trace", "diagonal", "squeeze", "swapaxes",
                            "to_device", "__dlpack__", "put", "partition", "argpartition"})


def reduce_call(name, a, axis, dtype, out, keepdims, kwargs):
    """A reduction method or function with NumPy's signature (``out``, ``initial``, ``where``:
    fallback)."""
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


def _binop(ufunc, reflected=False, inplace=False, op=None):
    """The operator method ``__<op>__`` for ``ufunc`` (``op``: the Python operator, used eagerly)."""
    if inplace:
        def method(self, other):
            if self._sc:        # NumPy's scalar: ``s += 1`` binds a new value
                return ufunc_call(ufunc, (self, other))
            self._writable("output array is read-only")
            nd, src = _small_concrete(self), _eager_arg(other)
            if nd is not None and src is not _LAZY:
                RECORDER_STATS["eager"] += 1
                if _ADAPT.learning:
                    _tally_eager(self, other)
                ufunc(nd, src, out=nd)
            else:
                ufunc_call(ufunc, (self, other), self)
            return self
    elif reflected:
        def method(self, other):
            a, b = _eager_arg(other), _eager_arg(self)
            if a is _LAZY or b is _LAZY:
                return ufunc_call(ufunc, (other, self))
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:
                _tally_eager(self, other)
            return op(a, b)
    else:
        def method(self, other):
            a, b = _eager_arg(self), _eager_arg(other)
            if a is _LAZY or b is _LAZY:
                return ufunc_call(ufunc, (self, other))
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:
                _tally_eager(self, other)
            return op(a, b)
    return method


_LAZY = object()
_ADAPT = adapt.STATE


def _tally_eager(*xs) -> None:
    """While ``flamefuse fuse`` learns (:mod:`flamefuse.runtime.adapt`): an operation ran eagerly
    through this wrapper on these operands; counted for the sites that made them."""
    for x in xs:
        if type(x) is LazyArray:
            b = x._b
            if b is not None and b.tally is not None:
                b.tally.eager += 1


def _eager_arg(x):
    """An operand for running at once: a small computed array's NumPy array (a 0-d one as
    a NumPy scalar) or a Python scalar; ``_LAZY`` where the operation must be recorded."""
    t = type(x)
    if t is LazyArray:
        nd, b = x._nd, x._b
        if nd is None or nd.size >= RECORDER.eager_below or (b is not None and (
                b.data is None or id(b) in RECORDER.touched)):
            return _LAZY
        return nd if nd.ndim else nd[()]
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
LazyArray.__divmod__ = lambda self, other: (self // other, self % other)      # np.divmod's values
LazyArray.__rdivmod__ = lambda self, other: (other // self, other % self)
LazyArray.__matmul__ = lambda self, other: matmul(self, other)
LazyArray.__rmatmul__ = lambda self, other: matmul(other, self)
LazyArray.__neg__ = lambda self: ufunc_call(np.negative, (self,))
LazyArray.__pos__ = lambda self: ufunc_call(np.positive, (self,))
LazyArray.__abs__ = lambda self: ufunc_call(np.absolute, (self,))
LazyArray.__invert__ = lambda self: ufunc_call(np.invert, (self,))


# -- construction -----------------------------------------------------------

def _memory(x):
    """The NumPy memory behind an operand (an ndarray, a lazy array's buffer), or None."""
    if type(x) is np.ndarray:
        return x
    if type(x) is LazyArray:
        return x._nd if x._b is None else x._b.data
    return None


def _into_ndarray(ufunc, inputs, target):
    """``ufunc(..., out=target)`` into a C-contiguous NumPy array (``vel += acc``, ``vel``
    NumPy's, ``acc`` lazy): recorded into a lazy array over ``target``'s memory (so it fuses
    with the pending work that makes ``acc``) and synced at once, as NumPy updates ``target``;
    returns ``target``. None (the caller falls back) when another operand or pending work
    may touch that memory."""
    if type(target) is not np.ndarray or not target.flags.c_contiguous or ufunc.nout != 1:
        return None
    mems = [_memory(x) for x in inputs if x is not target]
    mems += [b.data for b in list(RECORDER.touched.values())]     # (a copy: threads record)
    if any(m is not None and np.may_share_memory(m, target) for m in mems):
        return None
    lazy_out = wrap(target)
    ufunc_call(ufunc, tuple(lazy_out if x is target else x for x in inputs), lazy_out)
    lazy_out.numpy()
    return target


def wrap(a: np.ndarray) -> LazyArray:
    """A lazy array over NumPy array ``a``, sharing its memory (a strided ``a`` as a view of the
    contiguous array it is a view of; a copy only when there is none), read-only when ``a`` is."""
    if a.flags.c_contiguous:
        r = LazyArray(None, None, a)
    else:
        root = a
        while isinstance(root.base, np.ndarray):
            root = root.base
        if root is not a and root.flags.c_contiguous and root.dtype == a.dtype \
                and not any(s % a.itemsize for s in a.strides):
            flat = root.reshape(-1)
            r = LazyArray(Base(a.dtype, flat.size, flat), view_of(a, flat), a)
        else:
            r = LazyArray(None, None, a.copy(order="C"))
    if not a.flags.writeable:
        r._ro = True
    return r


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
            if flat is None or r.dtype != flat.dtype:
                continue
            lo = flat.__array_interface__["data"][0]
            if lo <= at < lo + flat.nbytes and np.shares_memory(r, flat) \
                    and not any(s % flat.itemsize for s in r.strides):
                out = LazyArray(x._base, view_of(r, flat), r)
                out._ro = not r.flags.writeable
                return out
    return wrap(r)


def empty(shape, dtype=float) -> LazyArray:
    shape = (shape,) if np.isscalar(shape) else tuple(shape)
    dtype = np.dtype(dtype)
    view = contiguous(shape)
    return LazyArray(Base(dtype, view.size), view)


def full(shape, value, dtype=None) -> LazyArray:
    dtype = np.asarray(value).dtype if dtype is None else np.dtype(dtype)
    if dtype not in KERNEL_DTYPES:      # NumPy makes it (nothing to fuse for this dtype)
        return wrap(np.full(shape, value, dtype))
    out = empty(shape, dtype)
    assign(out, value)
    return out


def as_lazy(x) -> LazyArray:
    return x if isinstance(x, LazyArray) else wrap(np.asarray(x))


def view_of(nd: np.ndarray, flat: np.ndarray) -> View:
    """The :class:`View` of ``flat`` that NumPy array ``nd`` (sharing its memory) shows."""
    item = flat.itemsize
    offset = nd.__array_interface__["data"][0] - flat.__array_interface__["data"][0]
    return make_view(offset // item, nd.shape, tuple(s // item for s in nd.strides))


def _basic(key) -> bool:
    """Only ints and slices: NumPy returns a view, the one :func:`index_view` computes."""
    if type(key) is tuple:
        for k in key:
            if type(k) is not slice and type(k) is not int:
                return False
        return True
    return type(key) is slice or type(key) is int


def _element(key, ndim: int) -> bool:
    """An index of one integer per dimension (NumPy reads a scalar, a copy, there)."""
    if type(key) is not tuple:
        key = (key,)
    if len(key) != ndim:
        return False
    for k in key:
        if not isinstance(k, (int, np.integer)) or isinstance(k, (bool, np.bool_)):
            return False
    return True


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


# -- indexing ---------------------------------------------------------------

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


def index_view(view: View, key) -> View | None:
    """The view selected by a basic index (ints, slices, Ellipsis, None); None if not basic."""
    key = key if isinstance(key, tuple) else (key,)
    if len(key) == len(view.shape) and all(type(k) is int or type(k) is slice for k in key):
        return _plain_index(view, key)
    if any(not (isinstance(k, (int, np.integer, slice)) or k is None or k is Ellipsis)
           or isinstance(k, (bool, np.bool_)) for k in key):
        return None
    real = sum(1 for k in key if k is not None and k is not Ellipsis)
    if real > len(view.shape):
        raise IndexError("too many indices for array")
    fill = (slice(None),) * (len(view.shape) - real)
    at = next((k for k, x in enumerate(key) if x is Ellipsis), len(key))
    key = key[:at] + fill + key[at + 1:]
    offset, shape, strides, dim = view.offset, [], [], 0
    for k in key:
        if k is None:
            shape.append(1)
            strides.append(0)
            continue
        n, s = view.shape[dim], view.strides[dim]
        dim += 1
        if isinstance(k, slice):
            start, stop, step = k.indices(n)
            shape.append(len(range(start, stop, step)))
            strides.append(s * step)
            offset += start * s
        else:
            k = int(k)
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {dim - 1} with size {n}")
            offset += (k % n) * s
    return make_view(offset, shape, strides)


def _plain_index(view: View, key: tuple) -> View:
    """:func:`index_view` of one Python int or slice per dimension (``a[k + 1:, k]``, the common
    case in a loop body), its View made directly (strides of extent-1 dimensions 0, as
    :func:`make_view` would)."""
    offset, shape, strides = view.offset, [], []
    for d, k in enumerate(key):
        n, s = view.shape[d], view.strides[d]
        if type(k) is slice:
            start, stop, step = k.indices(n)
            m = len(range(start, stop, step))
            shape.append(m)
            strides.append(0 if m == 1 else s * step)
            offset += start * s
        else:
            if not -n <= k < n:
                raise IndexError(f"index {k} is out of bounds for axis {d} with size {n}")
            offset += (k % n) * s
    return View(offset, tuple(shape), tuple(strides))


# -- elementwise ------------------------------------------------------------

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


@lru_cache(maxsize=4096)
def _loop(ufunc, types):
    return tuple(np.dtype(d).name for d in ufunc.resolve_dtypes(types + (None,)))


def _broadcast_view(x: LazyArray, shape) -> View:
    v = x._view
    if v.shape == shape:        # already normalised (make_view): no broadcast to apply
        return v
    pad = len(shape) - len(v.shape)
    return make_view(v.offset, shape, (0,) * pad + tuple(
        0 if n == 1 and m != 1 else s for n, m, s in zip(v.shape, shape[pad:], v.strides)))


def _eager(arrays, out, size) -> bool:
    return (size < RECORDER.eager_below and all(RECORDER.concrete(a._base) for a in arrays)
            and (out is None or id(out._base) not in RECORDER.touched))


def _lazy_inputs(inputs):
    """Operands as lazy arrays. A NumPy array is copied: the operation may run later, and the
    script may write to its array in between (NumPy would have read it now)."""
    return tuple(wrap(np.array(x)) if isinstance(x, (np.ndarray, list, tuple)) else x
                 for x in inputs)


def _broadcast_shape(arrays) -> tuple:
    """The arrays' broadcast shape (NumPy's function, some microseconds, only when they differ)."""
    if not arrays:
        return ()
    shape = arrays[0].shape
    for a in arrays[1:]:
        if a.shape != shape:
            return np.broadcast_shapes(*[a.shape for a in arrays])
    return shape


def elementwise(name, inputs, out, loop, numpy_fn):
    """Record (or run eagerly) one elementwise op; ``loop`` = computation dtypes (ins..., result)."""
    arrays = [x for x in inputs if isinstance(x, LazyArray)]
    shape = _broadcast_shape(arrays)
    size = prod(shape)
    if out is not None and out._readonly():
        raise ValueError("output array is read-only")
    kernel_dtypes = _kernel_loop(loop) and (out is None or out.dtype in KERNEL_DTYPES)
    if not kernel_dtypes:
        note_fallback(f"{name} ({', '.join(sorted(set(loop)))})")
    if not kernel_dtypes or _eager(arrays, out, size) or simd.numpy_faster(name, loop, size):
        RECORDER_STATS["eager"] += kernel_dtypes
        if _ADAPT.learning and kernel_dtypes:
            _tally_eager(out, *arrays)
        args = [x.numpy() if isinstance(x, LazyArray) else x for x in inputs]
        if out is not None:
            res = numpy_fn(*args)
            out.numpy()[...] = res
            return out
        res = numpy_fn(*args)
        return wrap(res) if type(res) is np.ndarray else res if isinstance(res, np.generic) \
            else wrap(np.asarray(res))
    if out is None:
        out = empty(shape, loop[-1])
        if not shape:
            out._sc = True      # NumPy's scalar
    elif out.shape != shape:
        if np.broadcast_shapes(out.shape, shape) != out.shape:
            raise ValueError(f"non-broadcastable output operand with shape {out.shape} "
                             f"doesn't match the broadcast shape {shape}")
        shape = out.shape
    ovw = out._view
    ins = []
    for x, dt in zip(inputs, loop[:-1]):
        if isinstance(x, LazyArray):
            v = _broadcast_view(x, shape)
            if x._base is out._base and v != ovw and overlap(v, ovw):
                x = x.copy()
                v = _broadcast_view(x, shape)
            ins.append((x._base, v))
        else:
            ins.append((x.item() if isinstance(x, np.generic) else x, dt))
    RECORDER.record("ew", name, (out._base, ovw), ins, shape, loop)
    return out


@lru_cache(maxsize=1024)
def _kernel_loop(loop: tuple) -> bool:
    """Do the kernels compile every dtype of ``loop`` (names; ``str96`` is no dtype name)?"""
    return all(d in _KERNEL_NAMES for d in loop)


def _fast_eager(ufunc, inputs):
    """NumPy's result at once when every input is small, computed and unaliased; else None."""
    args = []
    for x in inputs:
        a = _eager_arg(x)
        if a is _LAZY:
            return None
        args.append(a)
    RECORDER_STATS["eager"] += 1
    if _ADAPT.learning:
        _tally_eager(*inputs)
    # ``x ** 2`` as NumPy's operator does it (its fast square), not the general np.power
    return args[0] ** args[1] if ufunc is np.power else ufunc(*args)


def wrap_result(r) -> LazyArray:
    """A lazy array over a NumPy result ``r`` (its view derived from ``r`` only when needed)."""
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    return LazyArray(None, None, r) if r.flags.c_contiguous else wrap(r)


def as_numpy_now(fn, args, kwargs=None):
    """``fn`` run by NumPy at once on the operands' values (pending work they need is flushed):
    an operation at a site that runs as NumPy (:mod:`flamefuse.runtime.adapt`); NumPy's own result."""
    return fn(*_np_args(args), **_np_args(kwargs or {}))


def ufunc_call(ufunc, inputs, out=None):
    if out is None and _ADAPT.numpy_sites and adapt.numpy_here():
        return as_numpy_now(ufunc, inputs)
    if out is None and ufunc.__name__ in SUPPORTED:
        done = _fast_eager(ufunc, inputs)
        if done is not None:
            return done
    name = ufunc.__name__
    inputs = _lazy_inputs(inputs)
    types = tuple(_operand_type(x) for x in inputs)
    if (name not in SUPPORTED or ufunc.nout != 1 or any(t is None for t in types)
            or any(isinstance(t, np.dtype) and not fusable(t, name) for t in types)):
        return fallback(name, ufunc, inputs, {} if out is None else {"out": out})
    loop = _loop(ufunc, types)
    if name == "power" and type(inputs[1]) in (int, float) and inputs[1] in SMALL_POWERS \
            and isinstance(inputs[0], LazyArray):
        k = int(inputs[1])
        name, inputs, loop = f"ipow{k}", inputs[:1], (loop[0], loop[-1])
        ufunc = _POWERS[k]
    elif name == "power" and _half_power(inputs, loop):
        p = float(inputs[1])
        name, inputs, loop, ufunc = f"hpow{p}", inputs[:1], (loop[0], loop[-1]), _HALF[p]
    if out is not None:
        out._writable("output array is read-only")
    if out is not None and not np.can_cast(loop[-1], out.dtype, "same_kind"):
        raise np._core._exceptions._UFuncOutputCastingError(
            ufunc, "same_kind", np.dtype(loop[-1]), out.dtype, 0)
    return elementwise(name, inputs, out, loop, ufunc)


def _half_power(inputs, loop) -> bool:
    """``x ** p``, ``p`` a Python float in HALF_POWERS, computed in float32 or float64."""
    return (type(inputs[1]) is float and inputs[1] in HALF_POWERS and isinstance(inputs[0], LazyArray)
            and loop[0] == loop[-1] and loop[-1] in ("float32", "float64"))


def assign(target: LazyArray, value):
    """``target[...] = value`` (NumPy's unsafe casting, broadcasting ``value``)."""
    value = _lazy_inputs((value,))[0]
    t = _operand_type(value)
    if t is None:
        value = np.asarray(value)
        t = value.dtype
    src = np.dtype(t if isinstance(t, np.dtype) else np.asarray(value).dtype).name
    if isinstance(value, LazyArray) and np.broadcast_shapes(value.shape, target.shape) != target.shape:
        raise ValueError(f"could not broadcast input array from shape {value.shape} "
                         f"into shape {target.shape}")
    elementwise("copy", (value,), target, (src, src), lambda v: v)


def where(cond, x, y):
    c, a, b = _eager_arg(cond), _eager_arg(x), _eager_arg(y)
    if c is not _LAZY and a is not _LAZY and b is not _LAZY and (
            type(c) is np.ndarray or type(a) is np.ndarray or type(b) is np.ndarray):
        RECORDER_STATS["eager"] += 1            # small computed operands: NumPy's where at once
        if _ADAPT.learning:
            _tally_eager(cond, x, y)
        return wrap_result(np.where(c, a, b))
    if any(hasattr(v, "_reduce") and not isinstance(v, LazyArray) for v in (cond, x, y)):
        return SELECTION["where"](cond, x, y)
    cond, x, y = _lazy_inputs((cond, x, y))
    if not isinstance(cond, LazyArray) or cond.dtype != np.bool_:
        cond = ufunc_call(np.not_equal, (cond, 0))
    tx, ty = (v.dtype if isinstance(v, LazyArray) else v for v in (x, y))
    rt = np.result_type(tx, ty).name
    return elementwise("where", (cond, x, y), None, ("bool", rt, rt, rt), np.where)


def ufunc_where_into(target: LazyArray, mask: LazyArray, value) -> None:
    """``target[mask] = value`` for a scalar ``value``: ``target = where(mask, value, target)``."""
    if isinstance(value, LazyArray):
        value = value.numpy()[()]
    dt = target.dtype.name
    elementwise("where", (mask, value.item() if isinstance(value, np.generic) else value, target),
                target, ("bool", dt, dt, dt), np.where)


def clip(a, a_min, a_max):
    out = ufunc_call(np.maximum, (a, a_min)) if a_min is not None else a
    return ufunc_call(np.minimum, (out, a_max)) if a_max is not None else out


# -- reductions -------------------------------------------------------------

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


def _reduction_forms(name, a, axis, dtype, keepdims):
    a = as_lazy(a)
    nd = a.ndim
    axes = tuple(range(nd)) if axis is None else tuple(
        int(x) % max(nd, 1) for x in (axis if isinstance(axis, (tuple, list)) else (axis,)))
    if len(set(axes)) != len(axes):
        raise ValueError("duplicate value in 'axis'")
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
        return fn(a, axis=axis) if dtype is None else fn(a, axis=axis, dtype=dtype)
    if not isinstance(a, LazyArray) and hasattr(a, "_reduce"):
        return a._reduce(name, axis, dtype)
    if type(a) is LazyArray and axis is None and dtype is None:
        nd = _small_concrete(a)
        if nd is not None and nd.size and nd.ndim and fusable(nd.dtype, name):
            RECORDER_STATS["eager"] += 1
            if _ADAPT.learning:
                _tally_eager(a)
            return REDUCERS[name].reduce(nd, axis=None)         # NumPy's scalar
    a = as_lazy(a)
    if isinstance(axis, tuple) and len(axis) == 1:
        axis = axis[0]
    if (axis is not None and not isinstance(axis, (int, np.integer))) or a.size == 0 \
            or not fusable(a.dtype, name) or dtype is not None:
        fn = getattr(np, name)
        return fallback(f"{name} (this form)", fn, (a,), {"axis": axis, "dtype": dtype}
                        if name in ("sum", "prod") else {"axis": axis})
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
    if _eager([a], None, a.size):
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


def mean(a, axis=None, keepdims=False):
    if not isinstance(a, LazyArray) and hasattr(a, "_reduce"):
        return a._reduce("mean", axis)
    a = as_lazy(a)
    total = reduction("sum", a, axis, keepdims=keepdims)
    axes = range(a.ndim) if axis is None else (axis if isinstance(axis, (tuple, list)) else (axis,))
    count = int(np.prod([a.shape[x] for x in axes])) if a.ndim else 1
    return ufunc_call(np.true_divide, (total, count))


# -- products ---------------------------------------------------------------

def _product(name, x, y, shape):
    """Record (or run eagerly) a matvec/vecmat/outer product of two same-dtype float arrays."""
    if _eager([x, y], None, x.size + y.size):
        RECORDER_STATS["eager"] += 1
        if _ADAPT.learning:
            _tally_eager(x, y)
        fn = np.outer if name == "outer" else np.matmul
        return wrap(np.asarray(fn(x.numpy(), y.numpy())))
    out = empty(shape, x.dtype)
    RECORDER.record("product", name, (out._base, out._view), [(x._base, x._view), (y._base, y._view)],
                    shape, (x.dtype.name, y.dtype.name, x.dtype.name))
    return out


def _fusable_pair(x, y) -> bool:
    return (isinstance(x, LazyArray) and isinstance(y, LazyArray) and x.dtype == y.dtype
            and x.dtype.kind == "f" and x.dtype in KERNEL_DTYPES and x.size > 0 and y.size > 0)


def _pending_rows(a: LazyArray) -> bool:
    """A matrix that recorded operations are still to compute (no buffer yet: a new result,
    not an update of an existing array), its rows contiguous."""
    return (a._b is not None and a._b.data is None
            and (a._view.strides[-1] == 1 or a._view.shape[-1] == 1))


def matmul(a, b):
    """``a @ b``: matrix-vector and vector-matrix products are recorded (fused by the runtime
    as loop nests), vector-vector is a recorded multiply and sum; anything else falls back.
    ``A @ x`` of a matrix still being computed (``(dx * w) @ m``, rows contiguous) is recorded
    as ``(A * x).sum(axis=1)``: the kernel that computes ``A`` sums its rows in the same pass
    (row by row, in order), and ``A`` itself is never stored when nothing else reads it."""
    if _ADAPT.numpy_sites and adapt.numpy_here():
        return as_numpy_now(np.matmul, (a, b))
    done = _small_product(np.matmul, a, b)
    if done is not _LAZY:
        return done
    a, b = _lazy_inputs((a, b))
    if _fusable_pair(a, b) and (a.ndim, b.ndim) in ((2, 1), (1, 2), (1, 1)):
        if a.shape[-1] != b.shape[0]:
            raise ValueError(f"matmul: mismatch in core dimension: {a.shape} @ {b.shape}")
        if a.ndim == b.ndim:
            return reduction("sum", ufunc_call(np.multiply, (a, b)))
        if a.ndim == 2 and _pending_rows(a):
            return reduction("sum", ufunc_call(np.multiply, (a, b)), axis=1)
        if a.ndim == 2:
            return _product("matvec", a, b, a.shape[:1])
        return _product("vecmat", a, b, b.shape[1:])
    if "matmul" in LINALG and isinstance(a, LazyArray) and isinstance(b, LazyArray) and a.ndim == b.ndim == 2:
        return LINALG["matmul"](a, b)          # float matrices: a recorded linear-algebra call
    call = NUMPY_API["call"]
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
    r = fn(x, y)
    return wrap_result(r) if type(r) is np.ndarray else r


def dot(a, b):
    """``np.dot``: like :func:`matmul` for 1-D and 2-D operands; other forms fall back."""
    done = _small_product(np.dot, a, b)
    if done is not _LAZY:
        return done
    a, b = _lazy_inputs((a, b))
    if getattr(a, "ndim", 0) in (1, 2) and getattr(b, "ndim", 0) in (1, 2):
        return matmul(a, b)
    call = NUMPY_API["call"]
    return call("dot", np.dot, (a, b), {})


def fallback(name, func, args, kwargs):
    """Run ``func`` in NumPy on synced arguments, visibly; ndarray results become lazy.
    A ufunc over a lazy selection (:mod:`flamefuse.lazy.select`) goes there instead."""
    if isinstance(func, np.ufunc) and not kwargs and any(type(x) is SELECTION["type"] for x in args):
        return SELECTION["apply_ufunc"](func, args)
    note_fallback(name)
    result = func(*_np_args(args), **_np_args(kwargs))
    sources = lazy_arrays((args, kwargs))
    if isinstance(result, tuple):
        return tuple(adopt(r, sources) if isinstance(r, np.ndarray) else r for r in result)
    return adopt(result, sources) if isinstance(result, np.ndarray) else result


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
