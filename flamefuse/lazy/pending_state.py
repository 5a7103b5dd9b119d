"""The floating-point error state and warning filters that pending operations were recorded under.

NumPy warns (or not) per the error state (``np.seterr``) and the warning filters of the moment
an operation runs. The script's own changes of either are sync points (:mod:`flamefuse.lazy.fpstate`:
the pending operations run first), but a library the script calls changes them through the real
NumPy and ``warnings`` (``numpy.seterr(all="raise")``, ``warnings.simplefilter("error")`` in a
helper module), unseen: the pending ``1.0 / x`` then ran under the new state, its ``divide by
zero`` warning lost under ``raise`` (watched no more) or raised under ``error``, where NumPy had
only warned at its line.

:func:`now` notes the state when a batch of pending operations starts (the first op recorded
after a flush; ``np.geterr()`` and a copy of the filter list, about 1 us); :func:`same` tells,
per recorded op, whether it still holds (identity checks, about 0.1 us; the contents compared
only when an identity changed); the recorder runs the pending ops first when it does not, and
:func:`recorded_under` runs a flush under the noted state when it changed since.
"""
from __future__ import annotations

import warnings
from contextlib import contextmanager

import numpy as np

_EXTOBJ = np._core.umath._extobj_contextvar.get     # NumPy's error state (a capsule)


class State:
    """NumPy's error state and the warning filters at one moment."""
    __slots__ = ("capsule", "err", "filters", "n", "first", "saved")

    def __init__(self):
        f = warnings.filters
        self.capsule, self.err = _EXTOBJ(), np.geterr()
        self.filters, self.n, self.first, self.saved = f, len(f), f[0] if f else None, list(f)


def now() -> State:
    return State()


def same(s: State) -> bool:
    """Do NumPy's error state and the warning filters still equal ``s``'s?"""
    f = warnings.filters
    if _EXTOBJ() is s.capsule and f is s.filters and len(f) == s.n and (f[0] if f else None) is s.first:
        return True
    if np.geterr() != s.err or f != s.saved:
        return False
    s.capsule, s.filters, s.n, s.first = _EXTOBJ(), f, len(f), f[0] if f else None     # (equal)
    return True


@contextmanager
def recorded_under(s: State | None):
    """Run the body under ``s``'s error state and filters where they changed since (a library's
    ``numpy.seterr`` or ``warnings.simplefilter``); else as it is."""
    if s is None or same(s):
        yield
        return
    old = warnings.filters
    warnings.filters = list(s.saved)
    try:
        with np.errstate(**s.err):
            yield
    finally:
        warnings.filters = old
