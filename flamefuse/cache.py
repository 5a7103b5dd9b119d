"""Generated modules kept in the cache store, imported from there.

``load_module(kind, name, source) -> (module, cached)`` imports generated ``source`` as module
``name``: from the store entry ``<cache>/<kind>/<name>.py`` (:mod:`flamefuse.store`: written,
with the store's header line, a Python comment, when absent, stale or different, e.g. a
truncated file; executed from the text read back through the trust checks and compared with
``source``, never from a ``.pyc``), its Numba functions healing their cache entries
(:func:`flamefuse.jit.heal_module`); without a usable folder, from memory with ``cache=True``
turned off. One thread at a time imports (a module is registered before its code has run: a
second thread asking meanwhile got it half-loaded). ``cached_source(kind, name)`` is the
source a module entry holds (None: none, or stale).

``cache_root`` and ``usable_cache_dir`` are :mod:`flamefuse.store`'s, named here too.
"""
from __future__ import annotations

import functools
import sys
import threading
import types
from pathlib import Path

from flamefuse import store
from flamefuse.store import _usable, cache_root, usable_cache_dir  # noqa: F401 -- named here too


def _from_memory(name: str, source: str):
    """The module without a disk cache: ``cache=True`` off, registered under ``name``."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source.replace("cache=True", "cache=False"), f"<flamefuse {name}>", "exec"), module.__dict__)
    return module


_IMPORTING = threading.RLock()


def _one_at_a_time(fn):
    @functools.wraps(fn)
    def call(*args, **kwargs):
        with _IMPORTING:
            return fn(*args, **kwargs)
    return call


@_one_at_a_time
def load_module(kind: str, name: str, source: str):
    """``(module, cached)``: ``source`` imported as module ``name``, kept in the cache folder
    ``kind`` (see the module doc); ``cached`` when the folder already held that source."""
    if name in sys.modules:
        return sys.modules[name], True
    path = store.path(kind, name, ".py")
    if path is None:
        return _from_memory(name, source), False
    cached = cached_source(kind, name) == source
    if not cached and (store.put(kind, name, source, ".py") is None
                       or cached_source(kind, name) != source):     # refused (warned), or changed
        return _from_memory(name, source), False
    from flamefuse.jit import heal_module
    return heal_module(_execute(path, name, store.header(kind, name).decode() + source)), cached


def _execute(path: Path, name: str, text: str):
    """``text`` (the whole text of ``path``: the store's header line, then the source) run as
    module ``name``, registered in ``sys.modules`` first (Numba's disk cache finds the module
    again by that name and its file by the code's file name). Compiled from the text, so no
    ``__pycache__/*.pyc`` is read or written; its line numbers are the file's."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(compile(text, str(path), "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def cached_source(kind: str, name: str, ext: str = ".py") -> str | None:
    """The text of the module entry ``name`` of ``kind``, or None when it is missing, stale,
    unreadable or refused (then it is rewritten)."""
    data = store.get(kind, name, ext)
    try:
        return None if data is None else data.decode()
    except UnicodeDecodeError:
        return None
