"""The user cache folder of flamefuse (never inside the repository), and modules kept in it.

``cache_dir(name) -> Path`` is ``$FLAMEFUSE_CACHE_DIR/<name>``, else
``$XDG_CACHE_HOME/flamefuse/<name>``, else ``~/.cache/flamefuse/<name>``;
created on first use (raises ``OSError`` where it cannot be).
``usable_cache_dir(name) -> Path | None`` is the same folder when it can be
created and written, else None after one ``RuntimeWarning``: flamefuse then
runs without a disk cache.
``load_module(kind, name, source) -> module`` imports generated ``source``
as module ``name``: from ``<cache>/<kind>/<name>.py`` (written when absent
or when its text differs, e.g. a truncated file), its Numba functions
healing their cache entries (:mod:`flamefuse.numba_cache`); without a usable
folder, from memory with ``cache=True`` turned off.
"""
from __future__ import annotations

import os
import sys
import tempfile
import types
import warnings
from pathlib import Path

import numba

from flamefuse.files import import_file, write_text_atomic
from flamefuse.numba_cache import heal

_WARNED: set = set()


def cache_root() -> Path:
    explicit = os.environ.get("FLAMEFUSE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flamefuse"


def cache_dir(name: str) -> Path:
    path = cache_root() / name
    path.mkdir(parents=True, exist_ok=True)
    return path


def _warn_once(key, message: str) -> None:
    if key not in _WARNED:
        _WARNED.add(key)
        warnings.warn(message, RuntimeWarning, stacklevel=3)


def usable_cache_dir(name: str) -> Path | None:
    """The cache folder ``name`` if it can be created and written; else None (warned once)."""
    try:
        path = cache_dir(name)
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe."):
            pass
        return path
    except OSError as err:
        _warn_once(("dir", name), f"flamefuse: the cache folder {cache_root() / name} cannot be used ({err}); "
                   "running without a disk cache (set FLAMEFUSE_CACHE_DIR to a writable folder)")
        return None


def _from_memory(name: str, source: str):
    """The module without a disk cache: ``cache=True`` off, registered under ``name``."""
    module = types.ModuleType(name)
    sys.modules[name] = module
    exec(compile(source.replace("cache=True", "cache=False"), f"<flamefuse {name}>", "exec"), module.__dict__)
    return module


def load_module(kind: str, name: str, source: str):
    """Import ``source`` as module ``name`` kept in the cache folder ``kind`` (see the module doc)."""
    if name in sys.modules:
        return sys.modules[name]
    folder = usable_cache_dir(kind)
    if folder is None:
        return _from_memory(name, source)
    path = folder / f"{name}.py"
    if cached_source(path) != source:
        try:
            write_text_atomic(path, source)
        except OSError as err:
            _warn_once(("write", kind), f"flamefuse: cannot write {path} ({err}); running without a disk cache")
            return _from_memory(name, source)
    module = import_file(path, name)
    for value in list(vars(module).values()):
        if isinstance(value, numba.core.dispatcher.Dispatcher):
            heal(value)
    return module


def cached_source(path: Path) -> str | None:
    """The text of a cached file, or None when it is missing or unreadable (then it is rewritten)."""
    try:
        return path.read_text()
    except (OSError, UnicodeDecodeError):
        return None
