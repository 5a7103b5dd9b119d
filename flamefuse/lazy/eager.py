"""Operations NumPy runs now: small computed operands, sites that run as NumPy, fallbacks.

* :func:`_eager`: may a recorded operation on these lazy arrays run at once instead (its
  iteration space below ``RECORDER.eager_below`` elements, every input computed, the output
  not pending): the per-operation overhead of recording would exceed the work. It must
  (whatever the size) while NumPy's floating-point error state asks for more than a warning
  (:func:`fp_errors_act`: ``np.seterr(all="raise")``, ``np.errstate(divide="call")``): a fused
  kernel cannot raise ``FloatingPointError`` at the operation that overflows or divides by
  zero, NumPy's own call does. So must it while a warning filter turns a ``RuntimeWarning`` into
  an error (:func:`warnings_raise`: ``python -W error``, ``warnings.simplefilter("error")``):
  NumPy raises it at the operation's line, where the script's ``try`` is, a flush would raise
  it at the next sync point.
* :func:`as_numpy_now`: at a site that runs as NumPy (:mod:`flamefuse.runtime.adapt`)
  NumPy's own function on the operands' values, NumPy's own result.
* :func:`fallback`: anything the kernels cannot do runs in NumPy on synced arguments,
  visibly (:func:`~flamefuse.lazy.recorder.note_fallback`: a ``FallbackWarning`` at the
  user's line); ndarray results become lazy arrays, views of an argument's memory as views
  of it (:func:`~flamefuse.lazy.array.adopt`). A ufunc over a lazy selection goes to
  :mod:`flamefuse.lazy.selection` instead (through :data:`~flamefuse.lazy.hooks.HOOKS`).
* :func:`wrap_result`: a lazy array over NumPy's result.
"""
from __future__ import annotations

import warnings

import numpy as np

from flamefuse.lazy.array import LazyArray, _np_args, adopt, lazy_arrays, wrap
from flamefuse.lazy.hooks import HOOKS
from flamefuse.lazy.recorder import RECORDER, STATS, note_fallback
from flamefuse.lazy.userline import at_user


_EXTOBJ = np._core.umath._extobj_contextvar.get     # NumPy's error state (a capsule), 25 ns
_LAST_STATE: tuple = (None, False)                   # the latest capsule seen and its answer


def fp_errors_act() -> bool:
    """Does NumPy's current floating-point error state (``np.seterr``, ``np.errstate``) ask for
    anything but ``ignore`` or ``warn`` (``raise``, ``call``, ``print``, ``log``) in some
    category? Then operations run as NumPy's own calls, which raise or call at once."""
    global _LAST_STATE
    state, last = _EXTOBJ(), _LAST_STATE        # (one read: threads replace the pair whole)
    if state is last[0]:
        return last[1]
    acts = any(m not in ("ignore", "warn") for m in np.geterr().values())
    _LAST_STATE = (state, acts)
    return acts


_FILTERS: list = [None, -1, None, False]    # the filter list seen, its length, first entry, answer


def warnings_raise() -> bool:
    """Does a warning filter turn a ``RuntimeWarning`` (NumPy's ``divide by zero encountered``)
    into an error (action ``"error"`` for ``RuntimeWarning`` or a base class of it, whatever
    its message and module: a wider answer only runs more operations at once)? Remembered for
    the filter list seen (held, with its first entry, so neither can be another object with a
    reused id): ``catch_warnings`` replaces the list, ``simplefilter``/``filterwarnings`` insert
    at its front, ``append=True`` and ``resetwarnings`` change its length."""
    filters = warnings.filters
    seen = _FILTERS
    n = len(filters)
    first = filters[0] if n else None
    if filters is seen[0] and n == seen[1] and first is seen[2]:
        return seen[3]
    answer = any(f[0] == "error" and isinstance(f[2], type) and issubclass(RuntimeWarning, f[2])
                 for f in filters)
    seen[:] = [filters, n, first, answer]
    return answer


def _eager(arrays, out, size) -> bool:
    if fp_errors_act() or warnings_raise():
        return True
    return (size < RECORDER.eager_below and all(RECORDER.concrete(a._base) for a in arrays)
            and (out is None or id(out._base) not in RECORDER.touched))



def wrap_result(r) -> LazyArray:
    """A lazy array over a NumPy result ``r`` (its view derived from ``r`` only when needed)."""
    if type(r) is not np.ndarray:
        r = np.asarray(r)
    return LazyArray(None, None, r) if r.flags.c_contiguous else wrap(r)


def as_numpy_now(fn, args, kwargs=None):
    """``fn`` run by NumPy at once on the operands' values (pending work they need is flushed):
    an operation at a site that runs as NumPy (:mod:`flamefuse.runtime.adapt`); NumPy's own result."""
    return fn(*_np_args(args), **_np_args(kwargs or {}))



def numpy_error(func, *operands, fallback_error: Exception):
    """Raise the error NumPy's ``func`` raises for operands of these shapes and dtypes (a
    lazy array stands in as a zero-strided array: nothing computed, nothing synced), so the
    type and message are NumPy's; ``fallback_error`` if NumPy's call raises nothing."""
    stand_in = [np.broadcast_to(np.zeros((), x.dtype), x.shape) if type(x) is LazyArray else x
                for x in operands]
    try:
        func(*stand_in)
    except Exception as ex:         # noqa: BLE001  (NumPy's error, whatever its type)
        raise ex.with_traceback(None) from None
    raise fallback_error


def numpy_result(func, args, kwargs):
    """``func`` run by NumPy on the synced arguments. Where NumPy returns an ``out=`` argument
    itself (``np.add.reduce(x, out=o) is o``, ``np.cumsum(x, out=o)``), the lazy array given
    there (its NumPy memory was written), not a new wrapper of that memory."""
    np_kwargs = _np_args(kwargs)
    result = at_user(func, *_np_args(args), **np_kwargs)
    out = kwargs.get("out")
    if out is None:
        return result
    np_out = np_kwargs["out"]
    if type(out) is tuple:
        if type(result) is tuple:
            return tuple(o if r is n else r for r, o, n in zip(result, out, np_out)) + result[len(out):]
        return out[0] if len(out) == 1 and result is np_out[0] else result
    return out if result is np_out else result


def fallback(name, func, args, kwargs, quiet=False):
    """Run ``func`` in NumPy on synced arguments, visibly; ndarray results become lazy.
    A ufunc over a lazy selection (:mod:`flamefuse.lazy.selection`) goes there instead.
    ``quiet``: NumPy's call by design, for its exact values (a complex division:
    :func:`flamefuse.lazy.kernel_types.by_numpy_for_its_bits`), counted, without a warning."""
    if isinstance(func, np.ufunc) and not kwargs and any(type(x) is HOOKS.selection_type for x in args):
        return HOOKS.apply_ufunc(func, args)
    if quiet:
        STATS["native"] += 1
    else:
        note_fallback(name)
    result = numpy_result(func, args, kwargs)
    sources = lazy_arrays((args, kwargs))
    if isinstance(result, tuple):
        return tuple(adopt(r, sources) if isinstance(r, np.ndarray) else r for r in result)
    return adopt(result, sources) if isinstance(result, np.ndarray) else result

