"""NumPy's calls made for a script's line run *at* that line, so their warnings name it.

NumPy issues a ``RuntimeWarning`` (``divide by zero encountered in divide``) from C, at the
innermost Python frame: under plain NumPy that is the script's line. A NumPy call that
``flamefuse.lazy`` makes at once for that line (a small computed operand's operator, a
reduction, an element written, a fallback) runs inside flamefuse's own functions, so the
warning would name ``flamefuse/lazy/array.py`` instead, and -- the ``default`` filter shows a
warning once per module and line -- a second line of the script that divides by zero would
show nothing.

:func:`at_user` runs such a call through a one-line function whose code says it is at the
script's line (the file and line of the first frame outside flamefuse and NumPy) and whose
globals are that frame's module's: the warning has NumPy's text, the script's file and line,
and the script module's ``__warningregistry__`` and filters (``-W error`` raises it there, a
``catch_warnings(record=True)`` list records it there). One such function per line, kept;
0.4 to 0.6 us per call. The functions and their cache are :mod:`flamefuse.runtime.sites`,
which also runs a flush's NumPy calls at the lines that recorded them.
"""
from __future__ import annotations

import sys

from flamefuse.runtime.sites import _INTERNAL, AT as _AT, AT1 as _AT1, AT2 as _AT2, TEMPLATE as _TEMPLATE, \
    TEMPLATE1 as _TEMPLATE1, TEMPLATE2 as _TEMPLATE2, function_at


def at_user(fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run as if called at the script's line that led here."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        if frame is None:
            return fn(*args, **kwargs)
    at = _AT.get((frame.f_code, frame.f_lasti))
    if at is None:
        at = _AT[(frame.f_code, frame.f_lasti)] = _at_line(_TEMPLATE, frame)
    return at(fn, *args, **kwargs)


def at_user1(fn, a):
    """``fn(a)`` run as if called at the script's line that led here (:func:`at_user` for one
    argument: a ufunc of a scalar, ``np.log(0.0)``, about 0.3 us)."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        if frame is None:
            return fn(a)
    at = _AT1.get((frame.f_code, frame.f_lasti))
    if at is None:
        at = _AT1[(frame.f_code, frame.f_lasti)] = _at_line(_TEMPLATE1, frame)
    return at(fn, a)


def at_user2(fn, a, b):
    """``fn(a, b)`` run as if called at the script's line that led here (:func:`at_user`
    without its argument packing: the eager operators' path, about 0.4 us)."""
    frame = sys._getframe(1)
    while frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        if frame is None:
            return fn(a, b)
    at = _AT2.get((frame.f_code, frame.f_lasti))
    if at is None:
        at = _AT2[(frame.f_code, frame.f_lasti)] = _at_line(_TEMPLATE2, frame)
    return at(fn, a, b)


def _at_line(template, frame):
    return function_at(template, frame.f_code, frame.f_lineno or frame.f_code.co_firstlineno,
                       frame.f_globals)
