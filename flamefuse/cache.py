"""The user cache folder of flamefuse (never inside the repository), and modules kept in it.

``usable_cache_dir(name) -> Path | None`` is ``$FLAMEFUSE_CACHE_DIR/<name>``,
else the platform's user cache folder (``platformdirs``, where installed) ``/<name>``, else
``$XDG_CACHE_HOME/flamefuse/<name>``, else ``~/.cache/flamefuse/<name>``,
created on first use (mode 0700), when it can be created and written and only the user can
write it (:mod:`flamefuse.trust`: the folder and the folders from the cache root to it owned
by the user and writable by nobody else, the folders above not writable by others); else None
after one ``RuntimeWarning``: flamefuse then runs without a disk cache. The folder is one
store (:mod:`flamefuse.cache_store`): its size is capped (least recently used entries go),
checked at most once a day.
``load_module(kind, name, source) -> (module, cached)`` imports generated ``source``
as module ``name``: from ``<cache>/<kind>/<name>.py`` (written when absent
or when its text differs, e.g. a truncated file; executed from the text read back through
:func:`flamefuse.trust.open_trusted` and compared with ``source``, never from a ``.pyc``),
its Numba functions
healing their cache entries (:func:`flamefuse.jit.heal_module`); without a usable
folder, from memory with ``cache=True`` turned off. One thread at a time imports (a module is
registered before its code has run: a second thread asking meanwhile got it half-loaded).
``source_stamp(packages) -> str``: flamefuse's version and a digest of the
source of its sub-packages ``packages`` (``("search", "derive")``): entries made
by that code carry it, so changed code never reuses them.
"""
from __future__ import annotations

import functools
import os
import sys
import tempfile
import threading
import types
from pathlib import Path

from flamefuse import trust
from flamefuse.files import digest_files, write_text_atomic


def cache_root() -> Path:
    explicit = os.environ.get("FLAMEFUSE_CACHE_DIR")
    if explicit:
        return Path(explicit)
    try:
        import platformdirs     # the platform's user cache folder (macOS, Windows, XDG on Linux)
    except ImportError:
        return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "flamefuse"
    return Path(platformdirs.user_cache_dir("flamefuse", appauthor=False))


def source_stamp(packages) -> str:
    """flamefuse's version and a digest of the ``*.py`` files of its sub-packages ``packages``."""
    import flamefuse
    root = Path(flamefuse.__file__).resolve().parent
    return flamefuse.__version__ + digest_files(
        path for package in packages for path in sorted((root / package).glob("*.py")))[:12]


def usable_cache_dir(name: str) -> Path | None:
    """The cache folder ``name`` if it can be created and written; else None (warned once).
    Probed once per folder and process."""
    return _usable(cache_root() / name)


@functools.lru_cache(maxsize=None)
def _usable(path: Path) -> Path | None:
    root = cache_root()
    try:
        _make_private(path)
        why = trust.folder_problem(path, top=root)
        if why:
            trust.refuse(path, why)
            return None
        with tempfile.NamedTemporaryFile(dir=path, prefix=".probe."):
            pass
        _pruned(root)
        return path
    except OSError as err:
        from flamefuse.numba_cache import _warn_once
        _warn_once(("dir", str(path)), f"flamefuse: the cache folder {path} cannot be used ({err}); "
                   "running without a disk cache (set FLAMEFUSE_CACHE_DIR to a writable folder)")
        return None


@functools.lru_cache(maxsize=None)
def _pruned(root: Path) -> None:
    """The store's size cap, checked once per process (:func:`flamefuse.cache_store.maybe_prune`)."""
    from flamefuse.cache_store import maybe_prune
    maybe_prune(root)


def _make_private(path: Path) -> None:
    """Create ``path`` and any missing folder above it with mode 0700."""
    missing = []
    while not path.exists():
        missing.append(path)
        if path.parent == path:
            break
        path = path.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=0o700)
        except FileExistsError:         # made by a process starting beside this one
            pass


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
    from flamefuse.numba_cache import _warn_once     # imports Numba: the plan and native caches need none
    folder = usable_cache_dir(kind)
    if folder is None:
        return _from_memory(name, source), False
    path = folder / f"{name}.py"
    cached = cached_source(path) == source
    if not cached:
        try:
            write_text_atomic(path, source)
        except OSError as err:
            _warn_once(("write", kind), f"flamefuse: cannot write {path} ({err}); running without a disk cache")
            return _from_memory(name, source), False
    text = trust.read_trusted(path)
    if text != source.encode():         # refused (warned), or changed since it was written
        return _from_memory(name, source), False
    from flamefuse.jit import heal_module
    return heal_module(_execute(path, name, source)), cached


def _execute(path: Path, name: str, source: str):
    """``source`` (the text of ``path``) run as module ``name``, registered in ``sys.modules``
    first (Numba's disk cache finds the module again by that name and its file by the code's
    file name). Compiled from the text, so no ``__pycache__/*.pyc`` is read or written."""
    import importlib.util
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        exec(compile(source, str(path), "exec"), module.__dict__)
    except BaseException:
        del sys.modules[name]
        raise
    return module


def cached_source(path: Path) -> str | None:
    """The text of a cached file, or None when it is missing, unreadable or refused
    (:func:`flamefuse.trust.read_trusted`; then it is rewritten)."""
    data = trust.read_trusted(path)
    try:
        return None if data is None else data.decode()
    except UnicodeDecodeError:
        return None
