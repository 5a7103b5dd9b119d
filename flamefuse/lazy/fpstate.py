"""NumPy's error state and Python's warning filters as sync points of recorded operations.

NumPy checks the floating-point flags of each call when it runs and warns, raises or ignores per
the error state of that moment (``np.errstate``, ``np.seterr``), under the warning filters of
that moment (``warnings.catch_warnings``, ``warnings.simplefilter``). A recorded operation runs
at a later flush, whose kernels report the flags (:mod:`flamefuse.runtime.fpflags`); for its
warnings to be NumPy's, it must run under the error state and the filters it was recorded under.
So a change of either runs the pending operations first:

* :class:`errstate` -- ``np.errstate`` (``flamefuse.lazy.errstate``): entering and leaving flush
  (as a context manager and as a decorator);
* :func:`seterr` -- ``np.seterr`` after a flush;
* :func:`warnings_module` -- the ``warnings`` module as a fused script sees it (only its own
  ``import warnings``: :func:`flamefuse.cli.fuse._importer`, as :mod:`flamefuse.lazy.clock` for
  ``time``): ``catch_warnings`` flushes on entry and exit, and ``simplefilter``,
  ``filterwarnings`` and ``resetwarnings`` before they change the filters, so
  ``with warnings.catch_warnings(record=True) as ws: r = 1.0 / x`` records NumPy's
  ``divide by zero encountered in divide`` in ``ws``. The list ``ws`` itself runs the pending
  operations before it is read (:class:`_WarningList`): the script may read it before the block
  ends (``r = np.log(y); print(len(ws))``), and NumPy's warning is in it, as at the call.
  Its ``warn`` and ``warn_explicit`` run the pending operations first too, so the script's own
  warning comes after NumPy's warnings of the lines before it (in a ``record=True`` list and on
  stderr), as under NumPy; ``warn``'s ``stacklevel`` still counts from the script's call.

A pending operation's errors (a deferred ``FloatingPointError``) are raised at that flush, as at
any other sync point.
"""
from __future__ import annotations

import functools
import types
import warnings as _warnings
from typing import Callable

import numpy as _np

from flamefuse.lazy.numpy_api import call
from flamefuse.lazy.recorder import RECORDER


def _flush() -> None:
    if RECORDER.ops:
        RECORDER.flush()


class errstate(_np.errstate):
    """``np.errstate`` whose entry and exit run the pending operations first."""

    def __init__(self, **kwargs):
        super().__init__(**kwargs)
        self._kwargs = kwargs

    def __enter__(self):
        _flush()
        return super().__enter__()

    def __exit__(self, *exc):
        _flush()
        return super().__exit__(*exc)

    def __call__(self, func):
        kwargs = self._kwargs

        @functools.wraps(func)
        def inner(*args, **kw):
            with errstate(**kwargs):
                return func(*args, **kw)
        return inner


def seterr(**kwargs):
    """``np.seterr`` after the pending operations ran under the old state."""
    _flush()
    return call("seterr", _np.seterr, (), kwargs)      # (a plain NumPy call, counted as one)


class _CatchWarnings(_warnings.catch_warnings):
    """``warnings.catch_warnings`` whose entry and exit run the pending operations first."""

    def __enter__(self):
        _flush()
        log = super().__enter__()
        if self._record and type(log) is list:      # (the list the warnings are appended to)
            log = _WarningList()
            self._module._showwarnmsg_impl = log.append
        return log

    def __exit__(self, *exc):
        _flush()
        return super().__exit__(*exc)


def _reading(name: str):
    method = getattr(list, name)

    def read(self, *args):
        _flush()
        return method(self, *args)
    read.__name__ = name
    return read


class _WarningList(list):
    """A ``catch_warnings(record=True)`` list whose reads run the pending operations first (their
    warnings are appended then): ``len(ws)``, ``ws[0]``, ``for m in ws``, ``ws == []``..."""
    __slots__ = ()


for _name in ("__len__", "__iter__", "__getitem__", "__contains__", "__eq__", "__ne__", "__bool__",
              "__repr__", "__str__", "__reversed__", "copy", "count", "index", "pop", "clear", "__reduce_ex__",
              "__add__", "__mul__"):
    if hasattr(list, _name):
        setattr(_WarningList, _name, _reading(_name))


def _flushing(fn: Callable) -> Callable:
    @functools.wraps(fn)
    def changed(*args, **kwargs):
        _flush()
        return fn(*args, **kwargs)
    return changed


def _warn(message, category=None, stacklevel=1, source=None, **kwargs):
    """``warnings.warn`` after the pending operations ran (their warnings first); one more
    level, so that ``stacklevel`` counts from the script's call, as ``warnings.warn``'s does."""
    _flush()
    return _warnings.warn(message, category, stacklevel + 1 if stacklevel >= 1 else stacklevel,
                          source, **kwargs)


def warnings_module() -> types.ModuleType:
    """A copy of the ``warnings`` module whose filter changes and ``catch_warnings`` run the
    pending operations first."""
    mod = types.ModuleType("warnings", _warnings.__doc__)
    mod.__dict__.update({k: v for k, v in vars(_warnings).items() if not k.startswith("__")})
    mod.catch_warnings = _CatchWarnings
    for name in ("simplefilter", "filterwarnings", "resetwarnings", "warn_explicit"):
        setattr(mod, name, _flushing(getattr(_warnings, name)))
    mod.warn = _warn
    return mod
