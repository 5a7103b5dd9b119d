"""Numba's disk cache, made safe to rely on: a bad entry is a miss, not a crash.

Numba's cache loader raises when an index or data file is truncated or
empty (``EOFError``, ``UnpicklingError``: its open bug 10434), and
``cache=True`` raises at decoration time when no folder for the cache can
be written.  Everything flamefuse compiles goes through :func:`cached_njit`
(or :func:`heal` for a dispatcher made elsewhere):

``cached_njit(fn, **options) -> dispatcher``
    ``numba.njit(cache=True, **options)(fn)`` whose cache entries heal; when
    no cache folder can be written, ``numba.njit(**options)(fn)`` without a
    disk cache (one warning).
``heal(dispatcher) -> dispatcher``
    An entry that cannot be read is reported once (``RuntimeWarning``), the
    function's index is emptied (so the entry is discarded) and the function
    is compiled afresh; a cache that cannot be written is disabled with one
    warning.  The result is always the compiled function's.

The generated kernel modules embed these functions' source (they import
nothing from flamefuse), so this file uses only the standard library and
Numba.
"""
from __future__ import annotations

import warnings

import numba

_WARNED = set()


def _warn_once(key, message):
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def heal(dispatcher):
    """Make the dispatcher's disk cache treat an unreadable entry as a miss (see the module doc)."""
    cache = getattr(dispatcher, "_cache", None)
    if cache is None or getattr(cache, "_flamefuse_healed", False):
        return dispatcher
    load, save, name = cache.load_overload, cache.save_overload, dispatcher.py_func.__qualname__

    def load_overload(sig, target_context):
        try:
            return load(sig, target_context)
        except Exception as err:    # truncated, empty or foreign files: discard and recompile
            _warn_once(("load", cache.cache_path), f"flamefuse: discarded an unreadable Numba cache entry "
                       f"of {name} in {cache.cache_path} ({type(err).__name__}: {err}); compiling afresh")
            try:
                cache.flush()
            except OSError:
                pass
            return None

    def save_overload(sig, data):
        try:
            save(sig, data)
        except OSError as err:      # read-only or vanished folder: go on without a disk cache
            _warn_once(("save", cache.cache_path), f"flamefuse: cannot write the Numba cache in "
                       f"{cache.cache_path} ({err}); running without a disk cache")
            cache.disable()

    cache.load_overload, cache.save_overload = load_overload, save_overload
    cache._flamefuse_healed = True
    return dispatcher


def cached_njit(fn, **options):
    """``numba.njit(cache=True)`` with healing entries, or without a disk cache where none can be written."""
    try:
        return heal(numba.njit(cache=True, **options)(fn))
    except RuntimeError as err:     # "cannot cache function ...: no locator available"
        _warn_once(("locator",), f"flamefuse: no folder for Numba's cache can be written ({err}); "
                   "compiling without a disk cache")
        return numba.njit(**options)(fn)
