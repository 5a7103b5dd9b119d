"""Is the user's call inside a ``try`` (or ``with``) block? Then a recorded call that may raise
runs at once, so that its exception is raised where NumPy raises it.

A recorded ``numpy.linalg.cholesky`` raises ``LinAlgError`` at the sync point that runs
it, which is outside a script's ``try: L = np.linalg.cholesky(A) except LinAlgError:``
(a script that tests positive definiteness that way would crash). ``guarded()`` looks
at the innermost frame outside flamefuse and NumPy (the user's line,
:func:`flamefuse.lazy.recorder.user_frame`) and answers whether its
current instruction is covered by an exception handler (CPython 3.11+'s exception
table; a ``with`` block counts too, which only costs fusion). Outer frames are not
looked at (a ``try`` in a caller of the caller is not seen); before Python 3.11 the
answer is always False.
"""
from __future__ import annotations

import dis
from functools import lru_cache

from flamefuse.lazy.recorder import user_frame


@lru_cache(maxsize=1024)
def _handled_ranges(code) -> tuple:
    parse = getattr(dis, "_parse_exception_table", None)
    if parse is None:
        return ()
    return tuple((e.start, e.end) for e in parse(code))


def guarded() -> bool:
    """Is the user's current line inside a ``try`` or ``with`` block (see the module doc)?"""
    frame = user_frame()
    if frame is None:
        return False
    at = frame.f_lasti
    return any(start <= at < end for start, end in _handled_ranges(frame.f_code))
