"""Boolean-mask selection ``x[mask]``: a lazy array whose length is known only after it runs.

``x[mask]`` with ``mask`` a boolean array of ``x``'s shape (at least 1-D;
n-D flattens in C order, like NumPy) records a ``select`` op and returns a
:class:`Selection`. Its operations are recorded too: ufuncs over selections
by the *same* mask (``x[m] * 2 + z[m]``; the mask must not be written in
between), with Python/NumPy scalars and single-element lazy arrays
(``y - y.mean()``); nested selections ``y[y > 1]``; reductions ``sum``,
``prod``, ``min``, ``max``, ``mean``, ``any``, ``all`` (0-d lazy results);
``.size`` (a 0-d lazy int64). At the flush the recorder runs the stage by
clustering (:mod:`flamefuse.runtime.filters`): the mask, the selection and
the reductions over it run in one loop, and a selection is stored only when
a Python object still refers to it.

``len()``, ``.shape``, conversion to NumPy and anything else sync: the
selection is then an ordinary 1-D lazy array over the computed data
(:meth:`Selection.as_lazy`), and further operations on it are ordinary
lazy operations. Operands the recorded forms do not cover (a selection by
another mask, an n-element array) make the selection sync first, with
NumPy's result and errors. Inputs that are computed and smaller than
``eager_below`` elements are selected eagerly in NumPy.
"""
from __future__ import annotations

import numpy as np

from flamefuse.lazy.array import LazyArray, empty, wrap
from flamefuse.lazy.eager import fp_errors_act, warnings_raise
from flamefuse.lazy.elementwise import _loop, ufunc_call
from flamefuse.lazy.kernel_types import REAL_DTYPES
from flamefuse.lazy.recorder import RECORDER, STATS, Base, note_fallback
from flamefuse.lazy.userline import at_user
from flamefuse.runtime.kernel import SUPPORTED
from flamefuse.runtime.views import View, contiguous

REDUCTIONS = ("sum", "prod", "max", "min", "any", "all", "mean", "count")
_GROUPS: dict = {}


class Group:
    """One selection domain: the mask (by base id and view) at one point of the recording."""
    __slots__ = ("mask", "flushes", "checked")

    def __init__(self, mask):
        self.mask, self.flushes, self.checked = mask, STATS["flushes"], len(RECORDER.ops)

    def valid(self) -> bool:
        """No flush since, and nothing recorded since has written the mask's base."""
        if STATS["flushes"] != self.flushes:
            return False
        ops = RECORDER.ops
        if any(id(op.out[0]) == self.mask[0] for op in ops[self.checked:]):
            return False
        self.checked = len(ops)
        return True


def _group(base, view) -> Group:
    """The current domain of selections by this mask (groups live until the next flush)."""
    if _GROUPS.get("flushes") != STATS["flushes"]:
        _GROUPS.clear()
        _GROUPS["flushes"] = STATS["flushes"]
    key = (id(base), view)
    g = _GROUPS.get(key)
    if g is None or not g.valid():
        g = _GROUPS[key] = Group(key)
    return g


def _whole(x: LazyArray) -> LazyArray:
    """``x``, or a contiguous copy when ``x`` is not its base's whole contiguous view."""
    v = x._view
    if v == contiguous(x.shape) and x._base.size == v.size:
        return x
    return x.copy()


def select(x: LazyArray, mask: LazyArray):
    """``x[mask]`` for a boolean ``mask`` of ``x``'s shape."""
    if x.dtype not in REAL_DTYPES:          # float16, object, datetime...: NumPy's selection
        note_fallback(f"boolean mask selection ({x.dtype})")
        return wrap(x.numpy()[mask.numpy()])
    if (x.size < RECORDER.eager_below and RECORDER.concrete(x._base) and RECORDER.concrete(mask._base)) \
            or fp_errors_act() or warnings_raise():
        # (an error state or a warning filter that raises: what follows runs at once too, so
        # ``1.0 / d[k]`` raises NumPy's FloatingPointError at its line; recorded, it raised none)
        STATS["eager"] += 1
        return wrap(x.numpy()[mask.numpy()])
    x, mask = _whole(x), _whole(mask)
    out = Base(x.dtype, -1)
    RECORDER.record("select", "select", (out, None), [(x._base, x._view),
                                                       (mask._base, mask._view)],
                    x.shape, (x.dtype.name, "bool", x.dtype.name))
    return Selection(out, _group(mask._base, mask._view))


def _operand(x, group):
    """(recorded operand, dtype for type resolution) or None when not recordable."""
    if type(x) is Selection:
        if x.done() or x._group is not group:
            return None
        return (x._base, None), x.dtype
    if isinstance(x, np.ndarray) and x.size == 1 and x.ndim <= 1:
        x = wrap(x)
    if isinstance(x, LazyArray):
        if x.size != 1 or x.ndim > 1 or x.dtype not in REAL_DTYPES:
            return None
        return (x._base, View(x._view.offset, (), ())), x.dtype
    if isinstance(x, (bool, np.bool_)):
        return (bool(x), None), np.dtype(bool)
    if type(x) in (int, float):
        return (x, None), type(x)
    if isinstance(x, np.generic) and x.dtype in REAL_DTYPES:
        return (x.item(), None), x.dtype
    return None


def _synced(x):
    if type(x) is Selection:
        return x.as_lazy()
    return x


def apply_ufunc(ufunc, inputs):
    """A ufunc with at least one :class:`Selection` operand: recorded, or after a sync."""
    sels = [x for x in inputs if type(x) is Selection]
    group = sels[0]._group
    ops = None
    if ufunc.__name__ in SUPPORTED and ufunc.nout == 1 and group.valid():
        ops = [_operand(x, group) for x in inputs]
    if ops is None or any(o is None for o in ops):
        return ufunc_call(ufunc, tuple(_synced(x) for x in inputs))
    loop = _loop(ufunc, tuple(t for _, t in ops))
    if any(np.dtype(d) not in REAL_DTYPES for d in loop):
        return at_user(ufunc, *[x.numpy() if type(x) is Selection else x for x in inputs])
    ins = [(r[0], r[1]) if isinstance(r[0], Base) else (r[0], dt)
           for (r, _), dt in zip(ops, loop[:-1])]
    out = Base(np.dtype(loop[-1]), -1)
    RECORDER.record("sew", ufunc.__name__, (out, None), ins, None, loop)
    return Selection(out, group)


def where(cond, x, y):
    """``where`` with a :class:`Selection` operand: recorded when the operands fit, else
    after a sync (a non-boolean condition is compared with 0 first, as NumPy does)."""
    group = next(v for v in (cond, x, y) if type(v) is Selection)._group
    if type(cond) is Selection and cond.dtype != np.bool_:
        cond = apply_ufunc(np.not_equal, (cond, 0))
    ops = [_operand(v, group) for v in (cond, x, y)] if group.valid() else [None]
    if None in ops or ops[0][1] != np.bool_:
        from flamefuse.lazy.elementwise import where as lazy_where
        return lazy_where(*(_synced(v) for v in (cond, x, y)))
    rt = np.result_type(*(t if isinstance(t, np.dtype) else r[0]
                          for r, t in ops[1:])).name
    if np.dtype(rt) not in REAL_DTYPES:
        return np.where(*(_synced(v) for v in (cond, x, y)))
    loop = ("bool", rt, rt, rt)
    ins = [(r[0], r[1]) if isinstance(r[0], Base) else (r[0], dt)
           for (r, _), dt in zip(ops, loop[:-1])]
    out = Base(np.dtype(rt), -1)
    RECORDER.record("sew", "where", (out, None), ins, None, loop)
    return Selection(out, group)


def _reduce_dtype(name: str, dtype) -> str:
    if name == "count":
        return "int64"
    return getattr(np, name)(np.ones(1, dtype)).dtype.name


class Selection:
    """A lazy 1-D selection ``x[mask]`` (see the module docstring)."""
    __slots__ = ("_base", "_group", "__weakref__")
    __array_priority__ = 200
    __hash__ = None
    ndim = 1

    def __init__(self, base: Base, group: Group):
        self._base, self._group = base, group
        base.live += 1

    def __del__(self):
        self._base.live -= 1

    dtype = property(lambda self: self._base.dtype)
    itemsize = property(lambda self: self._base.dtype.itemsize)

    def done(self) -> bool:
        """Has the selection been computed (its length is known)?"""
        return self._base.data is not None

    def as_lazy(self) -> LazyArray:
        """The computed selection as an ordinary 1-D lazy array (syncs if needed)."""
        if not self.done():
            RECORDER.flush()
        return LazyArray(self._base, contiguous((self._base.size,)))

    def numpy(self) -> np.ndarray:
        return self.as_lazy().numpy()

    def __array__(self, dtype=None, copy=None):
        return self.as_lazy().__array__(dtype, copy)

    def __reduce_ex__(self, protocol):
        """Pickled as NumPy's array of the selected values (as :class:`LazyArray`)."""
        return self.as_lazy().__reduce_ex__(protocol)

    def __copy__(self):
        return self.as_lazy().copy()

    def __deepcopy__(self, memo):
        return self.as_lazy().copy()

    def __bytes__(self):
        return self.numpy().tobytes()

    @property
    def size(self):
        return self._base.size if self.done() else self._reduce("count")

    @property
    def shape(self):
        return (len(self),)

    def __len__(self):
        return int(self.as_lazy().shape[0])

    def __iter__(self):
        return iter(self.as_lazy())

    def __repr__(self):
        return repr(self.as_lazy())

    def __str__(self):
        return str(self.as_lazy())

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.as_lazy(), name)

    def __getitem__(self, key):
        if type(key) is Selection and key.dtype == np.bool_ and key._group is self._group \
                and not self.done() and not key.done() and self._group.valid():
            out = Base(self.dtype, -1)
            RECORDER.record("select", "select", (out, None),
                            [(self._base, None), (key._base, None)], None,
                            (self.dtype.name, "bool", self.dtype.name))
            return Selection(out, _group(key._base, None))
        return self.as_lazy()[_synced(key)]

    def __setitem__(self, key, value):
        self.as_lazy()[_synced(key)] = _synced(value)

    def _reduce(self, name, axis=None, dtype=None):
        if self.done() or dtype is not None or axis not in (None, 0, -1, (0,), (-1,)) \
                or self.dtype not in REAL_DTYPES or not self._group.valid():
            lazy = self.as_lazy()
            return (lazy.size if name == "count" else
                    getattr(lazy, name)(axis=axis, **({"dtype": dtype} if dtype else {})))
        out = empty((), _reduce_dtype(name, self.dtype))
        out._sc = True          # NumPy's scalar
        RECORDER.record("sreduce", name, (out._base, out._view), [(self._base, None)], None,
                        (self.dtype.name, out.dtype.name))
        return out

    def sum(self, axis=None, dtype=None):
        return self._reduce("sum", axis, dtype)

    def prod(self, axis=None, dtype=None):
        return self._reduce("prod", axis, dtype)

    def max(self, axis=None):
        return self._reduce("max", axis)

    def min(self, axis=None):
        return self._reduce("min", axis)

    def mean(self, axis=None):
        return self._reduce("mean", axis)

    def any(self, axis=None):
        return self._reduce("any", axis)

    def all(self, axis=None):
        return self._reduce("all", axis)

    def astype(self, dtype, copy=True):
        dtype = np.dtype(dtype)
        if self.done() or dtype not in REAL_DTYPES or not self._group.valid():
            return self.as_lazy().astype(dtype)
        out = Base(dtype, -1)
        src = self.dtype.name
        RECORDER.record("sew", "copy", (out, None), [(self._base, None)], None, (src, src))
        return Selection(out, self._group)

    def copy(self):
        return self.astype(self.dtype)

    def __float__(self):
        return float(self.as_lazy())

    def __int__(self):
        return int(self.as_lazy())

    def __bool__(self):
        return bool(self.as_lazy())

    def __index__(self):
        return self.as_lazy().__index__()


def _binop(ufunc, reflected=False, inplace=False):
    if inplace:
        def method(self, other):
            lazy = self.as_lazy()
            getattr(lazy, f"__i{_OPS[ufunc]}__")(_synced(other))
            return self
    elif reflected:
        def method(self, other):
            return apply_ufunc(ufunc, (other, self))
    else:
        def method(self, other):
            return apply_ufunc(ufunc, (self, other))
    return method


_OPS = {np.add: "add", np.subtract: "sub", np.multiply: "mul", np.true_divide: "truediv",
        np.floor_divide: "floordiv", np.remainder: "mod", np.power: "pow",
        np.bitwise_and: "and", np.bitwise_or: "or", np.bitwise_xor: "xor",
        np.left_shift: "lshift", np.right_shift: "rshift"}
for _uf, _name in _OPS.items():
    setattr(Selection, f"__{_name}__", _binop(_uf))
    setattr(Selection, f"__r{_name}__", _binop(_uf, reflected=True))
    setattr(Selection, f"__i{_name}__", _binop(_uf, inplace=True))
for _name, _uf in [("lt", np.less), ("le", np.less_equal), ("gt", np.greater),
                   ("ge", np.greater_equal), ("eq", np.equal), ("ne", np.not_equal)]:
    setattr(Selection, f"__{_name}__", _binop(_uf))
Selection.__neg__ = lambda self: apply_ufunc(np.negative, (self,))
Selection.__pos__ = lambda self: apply_ufunc(np.positive, (self,))
Selection.__abs__ = lambda self: apply_ufunc(np.absolute, (self,))
Selection.__invert__ = lambda self: apply_ufunc(np.invert, (self,))

