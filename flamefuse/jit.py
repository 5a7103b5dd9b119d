"""Numba functions compiled (or loaded from Numba's cache) at their first call, so importing the
module that defines them does not import Numba (about 0.2 s, and 0.3 s more to set its target
up): ``@later(cache=True, nogil=True)`` is ``@numba.njit(cache=True, nogil=True)`` deferred, its
disk cache checked and healed by :func:`flamefuse.numba_cache.cached_njit`."""
from __future__ import annotations

import functools


def later(**options):
    def wrap(fn):
        compiled = []

        @functools.wraps(fn)
        def call(*args):
            if not compiled:
                if options.get("cache"):
                    from flamefuse.numba_cache import cached_njit
                    rest = {k: v for k, v in options.items() if k != "cache"}
                    compiled.append(cached_njit(fn, **rest))
                else:
                    import numba
                    compiled.append(numba.njit(**options)(fn))
            return compiled[0](*args)
        return call
    return wrap
