"""Numba's disk cache, made safe to rely on: a bad entry is a miss, not a crash.

Numba's cache loader raises when an index or data file is truncated or
empty (``EOFError``, ``UnpicklingError``: its open bug 10434), and
``cache=True`` raises at decoration time when no folder for the cache can
be written.  Everything flamefuse compiles goes through :func:`cached_njit`
(or :func:`heal` for a dispatcher made elsewhere), called by :mod:`flamefuse.jit`, the one way
into Numba, and by the generated block-algorithm modules, which embed this file's functions:

``cached_njit(fn, **options) -> dispatcher``
    ``numba.njit(cache=True, **options)(fn)`` whose cache entries heal; when
    no cache folder can be written, ``numba.njit(**options)(fn)`` without a
    disk cache (one warning).
``heal(dispatcher) -> dispatcher``
    An entry that cannot be read is reported once (``RuntimeWarning``), the
    function's index is emptied (so the entry is discarded) and the function
    is compiled afresh; a cache that cannot be written is disabled with one
    warning.  The result is always the compiled function's.  Before Numba
    reads (unpickles) anything, its cache folder and the function's index and
    data files there must be the user's own and private
    (owned by the user, writable by nobody else: the rule of
    :mod:`flamefuse.trust`, which also covers ``NUMBA_CACHE_DIR``): else the
    function's disk cache is disabled with one warning and it is compiled.

The generated kernel modules, which import nothing from flamefuse, hold a copy
of these functions and of the checks of :mod:`flamefuse.trust` they call, taken
from the source (:mod:`flamefuse.codegen.embed`): so this file imports only the
standard library, Numba and, from flamefuse, names of top-level definitions.
"""
from __future__ import annotations

import os
import warnings

import numba

from flamefuse.trust import file_problem, folder_problem

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
            why = _untrusted(cache)
        except OSError:
            why = None          # vanished: Numba's own load finds nothing
        if why:
            _warn_once(("untrusted",), f"flamefuse: refusing Numba's cache in {cache.cache_path}: {why}. "
                       "Someone else could put code there that would run as you; compiling without it. "
                       "Use a folder only you can write (chmod 700, owned by you).")
            cache.disable()
            return None
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

    files = getattr(cache, "_cache_file", None)
    if hasattr(files, "_load_data") and hasattr(files, "_data_path"):
        load_data = files._load_data

        def checked_load_data(data_name):    # a data file is unpickled: checked first
            why = _untrusted(cache, files._data_path(data_name))
            if why:
                _warn_once(("untrusted",), f"flamefuse: refusing Numba's cache in {cache.cache_path}: "
                           f"{why}. Someone else could put code there that would run as you; compiling "
                           "without it. Use a folder only you can write (chmod 700, owned by you).")
                raise PermissionError(why)  # Numba's loader treats an OSError as a miss
            return load_data(data_name)
        files._load_data = checked_load_data
    cache.load_overload, cache.save_overload = load_overload, save_overload
    cache._flamefuse_healed = True
    return dispatcher


def _untrusted(cache, path=None):
    """What makes ``cache``'s folder (or a folder above it) or its function's index file, or the
    file ``path`` when given, unsafe to load from by the rules of :mod:`flamefuse.trust`, or None."""
    if path is None:
        folder = cache.cache_path
        if not os.path.isdir(folder):
            return None
        why = folder_problem(folder)
        if why:
            return why
        path = getattr(getattr(cache, "_cache_file", None), "_index_path", None)
        if path is None:
            return None
    return file_problem(path)


def cached_njit(fn, **options):
    """``numba.njit(cache=True)`` with healing entries, or without a disk cache where none can be written."""
    try:
        return heal(numba.njit(cache=True, **options)(fn))
    except RuntimeError as err:     # "cannot cache function ...: no locator available"
        _warn_once(("locator",), f"flamefuse: no folder for Numba's cache can be written ({err}); "
                   "compiling without a disk cache")
        return numba.njit(**options)(fn)
