"""Script lines ("sites"), and NumPy's calls and warnings made as if at them.

Under plain NumPy a ``RuntimeWarning`` (``divide by zero encountered in divide``) names the
script's line of the operation that raised it: NumPy issues it from C at the innermost Python
frame, and the ``default`` filter shows it once per module and line. flamefuse makes such calls
inside its own functions -- at once (:mod:`flamefuse.lazy.userline`), or at a flush, long after
the line that recorded the operation (:mod:`flamefuse.runtime.numpy_program`) -- so this module
places them back:

* :func:`here` -- the site of the first frame outside flamefuse and NumPy: ``(code, lasti,
  globals)`` of that frame, no frame kept (its locals would keep arrays alive). The recorder
  takes one per recorded op (:meth:`flamefuse.lazy.recorder.Recorder.record`): a frame walk and
  a tuple, about 0.1 to 0.2 us; it is no part of any plan or cache key.
* :func:`function_at` -- a one-line function whose code says it is at a site's file and line and
  whose globals are the site's module's, kept per ``(code, lasti)``: a C function it calls warns
  there, with the module's ``__warningregistry__`` and filters (``-W error`` raises there, a
  ``catch_warnings(record=True)`` list records it there).
* :func:`at_site` -- ``fn(*args)`` called through it; :func:`warn_at` -- a caught warning issued
  again at a site (at the calling script's line when the site is None).
"""
from __future__ import annotations

import os
import sys
import warnings
from types import FunctionType

import numpy as np

_INTERNAL = (os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep,
             os.path.dirname(np.__file__) + os.sep)
TEMPLATE = compile("def _at(fn, *args, **kw): return fn(*args, **kw)", "<flamefuse>",
                   "exec").co_consts[0]
TEMPLATE1 = compile("def _at(fn, a): return fn(a)", "<flamefuse>", "exec").co_consts[0]
TEMPLATE2 = compile("def _at(fn, a, b): return fn(a, b)", "<flamefuse>", "exec").co_consts[0]
AT: dict = {}          # (code, instruction) -> the function that runs a call at that line
AT1: dict = {}         # the same for calls of one argument (a scalar's ufunc: ``np.log(0.0)``)
AT2: dict = {}         # the same for calls of two arguments (an operator's)


def here(depth: int = 1):
    """The site ``(code, lasti, globals)`` of the first frame outside flamefuse and NumPy, from
    ``depth`` callers up (1: the caller of :func:`here`); None when there is none."""
    frame = sys._getframe(depth + 1)
    while frame.f_code.co_filename.startswith(_INTERNAL):
        frame = frame.f_back
        if frame is None:
            return None
    return (frame.f_code, frame.f_lasti, frame.f_globals)


def line_of(code, lasti: int) -> int:
    """The line of instruction ``lasti`` (a byte offset, as ``frame.f_lasti``) of ``code``."""
    for start, end, line in code.co_lines():
        if start <= lasti < end and line is not None:
            return line
    return code.co_firstlineno


def function_at(template, code, line: int, globals_: dict):
    """``template`` (:data:`TEMPLATE`, :data:`TEMPLATE2`) as a function at ``code``'s file and
    ``line``, with ``globals_``."""
    names = {"co_name": code.co_name}
    if sys.version_info >= (3, 11):
        names["co_qualname"] = code.co_name
    placed = template.replace(co_filename=code.co_filename, co_firstlineno=line, **names)
    return FunctionType(placed, globals_)


def at_site(site, fn, *args, **kwargs):
    """``fn(*args, **kwargs)`` run as if called at ``site`` (:func:`here`; None: plainly)."""
    if site is None:
        return fn(*args, **kwargs)
    code, lasti, globals_ = site
    at = AT.get((code, lasti))
    if at is None:      # (not kept: a flush's warnings are rare, and globals kept alive would keep
        # an exec'd namespace's arrays alive to the end of the process)
        at = function_at(TEMPLATE, code, line_of(code, lasti), globals_)
    return at(fn, *args, **kwargs)


def warn_at(site, message, category) -> None:
    """Warning ``message`` (a text or a caught warning's message) issued at ``site``; with no
    site, at the first frame outside flamefuse and NumPy (the line that made a flush run)."""
    if site is None:
        site = here(1)
        if site is None:
            warnings.warn(message, category, stacklevel=2)
            return
    at_site(site, warnings.warn, message, category)
