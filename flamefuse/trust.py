"""Which cache folders and files flamefuse may read: only the user's own, private ones.

flamefuse loads code from its cache (native libraries by ``dlopen``, generated modules by
``exec``, Numba's pickled index and data files) and reads plans and kernel lists from it, so a
file someone else could write there would run as the user. The rules (pip's
``check_path_owner`` and OpenSSH's ``StrictModes``, for files that hold code):

* a cache folder, and every folder between the cache root and it, must be a folder owned by
  the effective user and writable by nobody else (no group or other write bit);
* every folder above the cache root must be owned by the user or by root, and not writable by
  group or others unless its sticky bit is set (``/tmp``): nobody else can rename a folder in it;
* a cache file must be a regular file (not a link) owned by the user and writable by nobody
  else.

``folder_problem(path, top=None) -> str | None`` says what is wrong with the folder ``path``
(None: it may be used); ``top`` is the cache root, the folders from ``top`` to ``path`` are
held to the strict rule, those above ``top`` to the ancestor rule (``top=None``: only ``path``
itself strictly). ``open_trusted(path) -> file | None`` opens a cache file for binary reading
after checking the open descriptor (no race between check and read): None when it is missing,
unreadable or refused. ``read_trusted(path) -> bytes | None`` reads one. ``file_problem`` is
the check alone. ``refuse(path, why)`` warns once per process (``RuntimeWarning``) that a
cache location is refused and that flamefuse runs without it.

Only the standard library is used. :func:`flamefuse.numba_cache._untrusted` holds Numba's cache
files to these rules through ``folder_problem`` and ``file_problem``; every generated kernel
module, which imports nothing from flamefuse, holds a copy of both, taken from this source
(:mod:`flamefuse.codegen.embed`).
"""
from __future__ import annotations

import functools
import os
import stat
import warnings

_WARNED: list = []


def _uid() -> int:
    return os.geteuid() if hasattr(os, "geteuid") else -1


def _mode_problem(st, what: str) -> str | None:
    if _uid() >= 0 and st.st_uid != _uid():
        return f"{what} is owned by uid {st.st_uid}, not by this user (uid {_uid()})"
    if st.st_mode & 0o022:
        who = "group and others" if st.st_mode & 0o022 == 0o022 else \
            "its group" if st.st_mode & 0o020 else "others"
        return f"{what} is writable by {who} (mode {stat.S_IMODE(st.st_mode):o})"
    return None


def _ancestor_problem(st, path: str) -> str | None:
    if _uid() >= 0 and st.st_uid not in (_uid(), 0):
        return f"the folder above it, {path}, is owned by uid {st.st_uid} (not this user or root)"
    if st.st_mode & 0o022 and not st.st_mode & stat.S_ISVTX:
        return f"the folder above it, {path}, is writable by others without the sticky bit " \
               f"(mode {stat.S_IMODE(st.st_mode):o})"
    return None


def folder_problem(path, top=None) -> str | None:
    """What makes the folder ``path`` unsafe to load from (see the module doc), or None."""
    if not hasattr(os, "geteuid"):          # no POSIX owners (Windows): nothing to check
        return None
    # (os.path strings, not pathlib: a run settled as plain NumPy imports no pathlib)
    path = os.path.abspath(path)
    top = path if top is None else os.path.abspath(top)
    rel = os.path.relpath(path, top) if path == top or path.startswith(top.rstrip(os.sep) + os.sep) else None
    if rel is None:
        top, rel = path, os.curdir
    parts = [] if rel == os.curdir else rel.split(os.sep)
    strict = [top] + [os.path.join(top, *parts[:k]) for k in range(1, len(parts) + 1)]
    for folder in strict:
        try:
            st = os.stat(folder)
        except OSError as err:
            return f"{folder} cannot be examined ({err.strerror})"
        if not stat.S_ISDIR(st.st_mode):
            return f"{folder} is not a folder"
        why = _mode_problem(st, f"the folder {folder}")
        if why:
            return why
    return _ancestors(os.path.dirname(os.path.realpath(top)))


@functools.lru_cache(maxsize=64)
def _ancestors(path: str) -> str | None:
    while True:
        try:
            st = os.stat(path)
        except OSError as err:
            return f"{path} cannot be examined ({err.strerror})"
        why = _ancestor_problem(st, path)
        if why:
            return why
        above = os.path.dirname(path)
        if above == path:
            return None
        path = above


def file_problem(path) -> str | None:
    """What makes the file ``path`` unsafe to load (see the module doc), or None when it is safe
    or missing."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except OSError as err:
        return f"{path} cannot be examined ({err.strerror})"
    return _file_stat_problem(st, path)


def _file_stat_problem(st, path) -> str | None:
    if not stat.S_ISREG(st.st_mode):
        return f"{path} is not a regular file"
    if not hasattr(os, "geteuid"):
        return None
    return _mode_problem(st, f"the file {path}")


def open_trusted(path):
    """``path`` opened for binary reading when it is the user's own private regular file; None
    when it is missing or unreadable, and None with one warning (:func:`refuse`) when refused."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_CLOEXEC", 0) | \
        getattr(os, "O_NONBLOCK", 0)             # a planted FIFO must not block the open
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        return None
    except OSError:                          # a link (O_NOFOLLOW), a folder, no permission
        if os.path.islink(path):
            refuse(path, f"{path} is a symbolic link")
        return None
    try:
        why = _file_stat_problem(os.fstat(fd), path)
    except OSError:
        why = f"{path} cannot be examined"
    if why:
        os.close(fd)
        refuse(path, why)
        return None
    return os.fdopen(fd, "rb")


def read_trusted(path) -> bytes | None:
    """The bytes of a cache file that :func:`open_trusted` accepts, else None."""
    f = open_trusted(path)
    if f is None:
        return None
    try:
        with f:
            return f.read()
    except OSError:
        return None


def refuse(path, why: str) -> None:
    """Warn (once per process) that the cache location ``path`` is refused because ``why``."""
    if _WARNED:
        return
    _WARNED.append(str(path))
    warnings.warn(f"flamefuse: refusing to use the cache {path}: {why}. Someone else could put code "
                  "there that would run as you; running without that cache. Use a folder only you "
                  "can write (chmod 700, owned by you), or set FLAMEFUSE_CACHE_DIR to one.",
                  RuntimeWarning, stacklevel=3)
