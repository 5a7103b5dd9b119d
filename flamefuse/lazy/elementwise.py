"""Element-wise operations: ufuncs, ``where``, ``clip``, copies and casts, recorded as ``ew`` ops.

:func:`ufunc_call` is every ufunc on lazy operands (operators, ``np.add(x, y)``, the
lazy module's ufunc objects): NumPy's result at once when every operand is small and
computed (:func:`_fast_eager`), a fallback for what the kernels do not compile
(:data:`flamefuse.runtime.kernel.SUPPORTED`, :mod:`flamefuse.lazy.kernel_types`), else one
recorded operation (:func:`elementwise`) with NumPy 2's dtypes (:func:`_loop`: a Python
scalar does not upcast) and broadcasting (:func:`_broadcast_view`). :func:`assign` is
``target[...] = value`` (a recorded ``copy`` with NumPy's unsafe cast), :func:`where`,
:func:`ufunc_where_into` (``r[mask] = scalar``), :func:`clip` and :func:`full` are built on
the same recorded op.

Recorded forms chosen for speed: ``x ** k`` (k = 2..5) is ``ipow<k>`` and a float
array's ``x ** p`` (p = +-0.5, +-1.5) ``hpow<p>`` (:func:`flamefuse.runtime.kernel.half_power`:
square roots, no ``pow``); a complex power is NumPy's own call (its loop's rounding), the
operator's ``z ** 2`` a recorded ``square``; ``ufunc(..., out=ndarray)`` (``vel += acc``, ``vel``
NumPy's) is recorded into the NumPy array's memory and synced at once
(:func:`_into_ndarray`), not a fallback. A NumPy operand is copied when recorded
(:func:`_lazy_inputs`): the script may write to it before the operation runs.
"""
from __future__ import annotations

from functools import lru_cache
from math import prod

import operator

import numpy as np

from flamefuse.runtime import adapt, simd
from flamefuse.lazy.array import (subclass_in, _ADAPT, _LAZY, LazyArray, _concrete_nd, as_lazy, _eager_arg, _np_args, _operand_type,
                                  _small_result, _tally_eager, empty, wrap)
from flamefuse.lazy.eager import _eager, as_numpy_now, fallback, numpy_error, wrap_result
from flamefuse.lazy.hooks import HOOKS
from flamefuse.lazy.kernel_types import KERNEL_DTYPES, _kernel_loop, by_numpy_for_its_bits, fusable
from flamefuse.lazy.recorder import RECORDER, note_fallback
from flamefuse.lazy.recorder import STATS as RECORDER_STATS
from flamefuse.lazy.userline import at_user, at_user2
from flamefuse.runtime.kernel import SUPPORTED
from flamefuse.runtime.views import View, make_view, overlap


SMALL_POWERS = (2, 3, 4, 5)
_POWERS = {k: (lambda x, k=k: np.power(x, k)) for k in SMALL_POWERS}   # eager form of ipow<k>
# ``x ** p`` of a float array for a literal p in HALF_POWERS is recorded as ``hpow<p>`` (square
# roots and divisions instead of pow: :func:`flamefuse.runtime.kernel.half_power`)
HALF_POWERS = (0.5, -0.5, 1.5, -1.5)
_HALF = {p: (lambda x, p=p: np.power(x, p)) for p in HALF_POWERS}       # eager form of hpow<p>



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



def full(shape, value, dtype=None) -> LazyArray:
    dtype = np.asarray(value).dtype if dtype is None else np.dtype(dtype)
    if dtype not in KERNEL_DTYPES:      # NumPy makes it (nothing to fuse for this dtype)
        return wrap(np.full(shape, value, dtype))
    out = empty(shape, dtype)
    assign(out, value)
    return out



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


def _other_memory(x: LazyArray, out: LazyArray) -> bool:
    """Is ``x`` another base's array over memory ``out``'s base may share? (``z.real += z.imag``:
    two bases over one complex array, :func:`flamefuse.lazy.array._alias`; NumPy arrays wrapped
    apart). NumPy reads such an operand through a copy when it overlaps the output; the per-base
    overlap test cannot see it."""
    xb, ob = x._base, out._base
    if xb is ob or xb.data is None or ob.data is None:
        return False
    # two buffers that own their memory never overlap (no NumPy call for the usual case)
    return (xb.data.base is not None or ob.data.base is not None) \
        and np.may_share_memory(xb.data, ob.data)


def _int_out_of_range(inputs, loop) -> bool:
    """A Python int operand that the operation's integer dtype cannot hold (``int8_array + 300``)?
    NumPy decides at the call: ``OverflowError`` for arithmetic, the true answer for comparisons
    (``int8_array < 300``), a wrapped value in ``where``; its own call runs then (a kernel's
    scalar argument would raise ``OverflowError`` at a later flush, anywhere)."""
    for x, dt in zip(inputs, loop):
        if type(x) is int and dt[0] in "iu":
            info = _int_range(dt)
            if not info[0] <= x <= info[1]:
                return True
    return False


def _fits(value, dtype) -> None:
    """A Python int written into an integer array must fit: NumPy raises ``OverflowError``
    (``int8_array[:] = 300``); the recorded copy would wrap it."""
    if type(value) is int and dtype.kind in "iu":
        np.asarray(value, dtype)


@lru_cache(maxsize=None)
def _int_range(dt: str) -> tuple:
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


def _broadcast_error(inputs, out) -> ValueError:
    """NumPy's error for operands (and an ``out``) whose shapes do not broadcast together (a
    recorded ``x ** k``'s exponent is given back as a scalar operand: NumPy names its shape)."""
    shapes = [getattr(x, "shape", ()) for x in inputs] + ([] if out is None else [out.shape])
    text = " ".join(_shape_text(s) for s in shapes)
    return ValueError(f"operands could not be broadcast together with shapes {text} ")


def _shape_text(shape) -> str:
    """A shape as NumPy's ufunc errors print it: ``(2,3)``, ``(3,)``, ``()``."""
    return "(" + ",".join(map(str, shape)) + ("," if len(shape) == 1 else "") + ")"


def elementwise(name, inputs, out, loop, numpy_fn):
    """Record (or run eagerly) one elementwise op; ``loop`` = computation dtypes (ins..., result)."""
    arrays = [x for x in inputs if isinstance(x, LazyArray)]
    try:
        shape = _broadcast_shape(arrays)
    except ValueError:
        raise _broadcast_error(inputs + (0,) * (name[:4] in ("ipow", "hpow")), out) from None
    if out is not None and out.shape != shape:     # (checked before an eager run too: NumPy's errors)
        try:
            full = np.broadcast_shapes(out.shape, shape)
        except ValueError:
            raise _broadcast_error(inputs + (0,) * (name[:4] in ("ipow", "hpow")), out) from None
        if full != out.shape:       # (NumPy's message names the shape the output takes part in)
            raise ValueError(f"non-broadcastable output operand with shape {_shape_text(out.shape)} "
                             f"doesn't match the broadcast shape {_shape_text(full)}")
    size = prod(shape)
    if out is not None and out._readonly():
        raise ValueError("output array is read-only")
    kernel_dtypes = _kernel_loop(loop) and (out is None or out.dtype in KERNEL_DTYPES)
    if not kernel_dtypes:
        note_fallback(f"{name} ({', '.join(sorted(set(loop)))})")
    if not kernel_dtypes or _eager(arrays, out, size) or simd.numpy_faster(name, loop, size) \
            or _int_out_of_range(inputs, loop):
        RECORDER_STATS["eager"] += kernel_dtypes
        if _ADAPT.learning and kernel_dtypes:
            _tally_eager(out, *arrays)
        args = [x.numpy() if isinstance(x, LazyArray) else x for x in inputs]
        if out is not None:
            res = at_user(numpy_fn, *args)      # (at the script's line: NumPy's warnings name it,
            at_user(_SETITEM, out.numpy(), Ellipsis, res)   # a cast's too: ``invalid value ...``)
            return out
        res = at_user(numpy_fn, *args)
        return wrap(res) if type(res) is np.ndarray else res if isinstance(res, np.generic) \
            else wrap(np.asarray(res))
    if out is None:
        out = empty(shape, loop[-1])
        if not shape:
            out._sc = True      # NumPy's scalar
    elif out.shape != shape:
        shape = out.shape
    ovw = out._view
    ins = []
    for x, dt in zip(inputs, loop[:-1]):
        if isinstance(x, LazyArray):
            v = _broadcast_view(x, shape)
            if x._base is out._base and v != ovw and overlap(v, ovw):
                x = x.copy()
                v = _broadcast_view(x, shape)
            elif _other_memory(x, out):     # copied now: a recorded copy would fuse away
                x = wrap(np.array(x.numpy()))
                v = _broadcast_view(x, shape)
            ins.append((x._base, v))
        else:
            ins.append((x.item() if isinstance(x, np.generic) else x, dt))
    RECORDER.record("ew", name, (out._base, ovw), ins, shape, loop)
    return out



def _fast_eager(ufunc, inputs):
    """NumPy's result at once when every input is small, computed and unaliased; else None."""
    if len(inputs) == 2:        # (the usual case, without a list: ``s * a`` of a NumPy scalar s)
        x, y = inputs
        a = _eager_arg(x)
        if a is _LAZY:
            return None
        b = _eager_arg(y)
        if b is _LAZY or not _small_result(a, b):
            return None
        RECORDER_STATS["eager"] += 1
        if _ADAPT.learning:
            _tally_eager(x, y)
        # ``x ** 2`` as NumPy's operator does it (its fast square), not the general np.power
        return at_user2(_OPPOW if ufunc is _POWER else ufunc, a, b)
    args = []
    for x in inputs:
        a = _eager_arg(x)
        if a is _LAZY:
            return None
        args.append(a)
    if len(args) > 1 and not _small_results(args):
        return None
    RECORDER_STATS["eager"] += 1
    if _ADAPT.learning:
        _tally_eager(*inputs)
    return at_user(_OPPOW, *args) if ufunc is _POWER else at_user(ufunc, *args)


_POWER = np.power
_OPPOW = operator.pow
_SETITEM = operator.setitem



def _small_results(args) -> bool:
    """:func:`_small_result` for any number of eager operands."""
    nds = [a for a in args if type(a) is np.ndarray]
    if len(nds) < 2 or all(a.shape == nds[0].shape for a in nds):
        return True
    try:
        return prod(np.broadcast_shapes(*(a.shape for a in nds))) < RECORDER.eager_below
    except ValueError:
        return True         # NumPy's own error, raised by its call


def ufunc_call(ufunc, inputs, out=None):
    if out is None and _ADAPT.numpy_sites and adapt.numpy_here():
        return as_numpy_now(ufunc, inputs)
    if out is None and ufunc.__name__ in SUPPORTED:
        done = _fast_eager(ufunc, inputs)
        if done is not None:
            return done
    name = ufunc.__name__
    if subclass_in(*inputs):
        # ``x + masked``, ``np.sqrt(masked)``: NumPy's call, whose result keeps the subclass
        # (copied into a lazy array, a ``np.ma.MaskedArray`` lost its mask)
        return fallback(name, ufunc, inputs, {} if out is None else {"out": out})
    inputs = _lazy_inputs(inputs)
    types = tuple(_operand_type(x) for x in inputs)
    if (name not in SUPPORTED or ufunc.nout != 1 or any(t is None for t in types)
            or any(isinstance(t, np.dtype) and not fusable(t, name) for t in types)):
        return fallback(name, ufunc, inputs, {} if out is None else {"out": out},
                        quiet=any(isinstance(t, np.dtype) and by_numpy_for_its_bits(t, name) for t in types))
    loop = _loop(ufunc, types)
    if name == "power" and _negative_integer_power(inputs, loop):
        return fallback(name, ufunc, inputs, {} if out is None else {"out": out})
    if out is not None:
        out._writable("output array is read-only")
        if _int_out_of_range(inputs, loop):     # ``b += 2**63``: NumPy's OverflowError (or value)
            return fallback(name, ufunc, inputs, {"out": out})
        if not np.can_cast(loop[-1], out.dtype, "same_kind"):      # (the ufunc itself: its message)
            raise np._core._exceptions._UFuncOutputCastingError(
                ufunc, "same_kind", np.dtype(loop[-1]), out.dtype, 0)
    if name == "power" and type(inputs[1]) in (int, float) and inputs[1] in SMALL_POWERS \
            and isinstance(inputs[0], LazyArray):
        k = int(inputs[1])
        name, inputs, loop = f"ipow{k}", inputs[:1], (loop[0], loop[-1])
        ufunc = _POWERS[k]
    elif name == "power" and _half_power(inputs, loop):
        p = float(inputs[1])
        name, inputs, loop, ufunc = f"hpow{p}", inputs[:1], (loop[0], loop[-1]), _HALF[p]
    return elementwise(name, inputs, out, loop, ufunc)


def _negative_integer_power(inputs, loop) -> bool:
    """May ``power`` in integers meet a negative exponent? NumPy raises ``ValueError`` ("Integers
    to negative integer powers are not allowed") at the call; a kernel's integer power would
    return a wrong number instead. True for a negative scalar exponent and for an exponent
    array that is still pending or holds a negative value (NumPy's call then runs: it raises,
    or computes); a computed exponent array with no negative value (``2 ** np.arange(n)``) and
    any non-negative scalar are recorded."""
    if np.dtype(loop[-1]).kind not in "iu" or np.dtype(loop[1]).kind != "i":
        return False
    e = inputs[1]
    if isinstance(e, LazyArray):
        nd = _concrete_nd(e)
        return nd is None or bool((nd < 0).any())
    return isinstance(e, (int, np.integer)) and e < 0


def _half_power(inputs, loop) -> bool:
    """``x ** p``, ``p`` a Python float in HALF_POWERS, computed in float32 or float64."""
    return (type(inputs[1]) is float and inputs[1] in HALF_POWERS and isinstance(inputs[0], LazyArray)
            and loop[0] == loop[-1] and loop[-1] in ("float32", "float64"))


def assign(target: LazyArray, value):
    """``target[...] = value`` (NumPy's unsafe casting, broadcasting ``value``)."""
    if target.dtype not in KERNEL_DTYPES:
        # a structured, string, object or datetime target: NumPy's own write (a record's tuple,
        # ``v[1] = (7, (8.0, 9.0))``, is no array of one dtype to copy from)
        note_fallback(f"assignment ({target.dtype})")
        target.numpy()[...] = _np_args(value)
        return
    _fits(value, target.dtype)
    value = _lazy_inputs((value,))[0]
    t = _operand_type(value)
    if t is None:
        value = np.asarray(value)
        t = value.dtype
    src = np.dtype(t if isinstance(t, np.dtype) else np.asarray(value).dtype).name
    if isinstance(value, LazyArray) and _broadcasts_to(value.shape, target.shape) is False:
        raise ValueError(f"could not broadcast input array from shape {value.shape} "
                         f"into shape {target.shape}")
    elementwise("copy", (value,), target, (src, src), lambda v: v)


def _broadcasts_to(shape, target) -> bool:
    try:
        return np.broadcast_shapes(shape, target) == target
    except ValueError:
        return False


def where(cond, x, y):
    c, a, b = _eager_arg(cond), _eager_arg(x), _eager_arg(y)
    if c is not _LAZY and a is not _LAZY and b is not _LAZY and (
            type(c) is np.ndarray or type(a) is np.ndarray or type(b) is np.ndarray) \
            and _small_results((c, a, b)):
        RECORDER_STATS["eager"] += 1            # small computed operands: NumPy's where at once
        if _ADAPT.learning:
            _tally_eager(cond, x, y)
        return wrap_result(at_user(np.where, c, a, b))
    if any(hasattr(v, "_reduce") and not isinstance(v, LazyArray) for v in (cond, x, y)):
        return HOOKS.select_where(cond, x, y)
    cond, x, y = _lazy_inputs((cond, x, y))
    if _operand_type(x) is None or _operand_type(y) is None:
        # a string, ``None`` or another object: NumPy's where (a string would be read as a
        # dtype's name by result_type, ``None`` as NaN by the kernel)
        return fallback("where", np.where, (cond, x, y), {})
    if not isinstance(cond, LazyArray) or cond.dtype != np.bool_:
        cond = ufunc_call(np.not_equal, (cond, 0))
    tx, ty = (v.dtype if isinstance(v, LazyArray) else v for v in (x, y))
    rt = np.result_type(tx, ty).name
    return elementwise("where", (cond, x, y), None, ("bool", rt, rt, rt), np.where)


def ufunc_where_into(target: LazyArray, mask: LazyArray, value) -> None:
    """``target[mask] = value`` for a scalar ``value``: ``target = where(mask, value, target)``."""
    if isinstance(value, LazyArray):
        value = value.numpy()[()]
    _fits(value, target.dtype)
    dt = target.dtype.name
    elementwise("where", (mask, value.item() if isinstance(value, np.generic) else value, target),
                target, ("bool", dt, dt, dt), np.where)


def clip(a, a_min, a_max):
    dtype = getattr(a, "dtype", None)
    if dtype is not None and dtype.kind in "iu" and any(
            type(v) is int and not _int_range(dtype.name)[0] <= v <= _int_range(dtype.name)[1]
            for v in (a_min, a_max)):
        # a Python int bound the integer dtype cannot hold: NumPy's clip decides (it clips to
        # the dtype's range, or raises OverflowError); np.maximum would raise for any
        return fallback("clip", np.clip, (a, a_min, a_max), {})
    shapes = [np.shape(v) for v in (a, a_min, a_max) if v is not None]
    try:
        np.broadcast_shapes(*shapes)
    except ValueError as ex:            # NumPy's message names all three operands
        numpy_error(np.clip, *(as_lazy(v) if isinstance(v, (list, tuple)) else v for v in (a, a_min, a_max)),
                    fallback_error=ex)
    # the bound first: np.maximum/np.minimum give their second operand on a tie, and NumPy's
    # clip keeps ``a`` there (``np.clip(-0.0, 0.0, 1.0)`` is -0.0)
    out = ufunc_call(np.maximum, (a_min, a)) if a_min is not None else a
    return ufunc_call(np.minimum, (a_max, out)) if a_max is not None else out

