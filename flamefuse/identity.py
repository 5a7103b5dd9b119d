"""Who made a cache entry: flamefuse's version, the interpreter, the libraries and the machine.

Computed here once per process, and nowhere else:

``versions() -> str``: flamefuse's version, Python's (implementation and version) and those
of NumPy, Numba and llvmlite, each read from its installed distribution's ``*.dist-info``
folder name next to the package (no import: Numba's costs 0.45 s) together with the
modification time of the package's ``__init__.py`` (a package reinstalled in place is
another one).
``machine() -> str``: this CPU's identity, readable: its model name, the architecture and a
digest of its feature flags (``/proc/cpuinfo`` where there is one, else ``platform``). Object
code compiled for this CPU, and times measured on it, belong to it.
``source_digest(parts) -> str``: a digest of flamefuse's own source files ``parts``, paths
relative to the package (``"runtime/execute.py"``) or sub-packages (``"search"``: every
``*.py`` in it), from their size and times as Python checks its bytecode (no text read):
entries made by that code carry it, so changed code never reuses them.
``source_text_digest(parts)`` digests their text (the same in every checkout).

The cache store (:func:`flamefuse.store.stamp`) combines them into each kind's stamp;
:func:`flamefuse.codegen.tune.machine_key` names the machine of a tuned block size with
:func:`machine`.
"""
from __future__ import annotations

import functools
import os
import sys
from flamefuse.digest import sha256

_PACKAGE = os.path.dirname(os.path.realpath(__file__))    # (a string: no pathlib on the plain path)
LIBRARIES = ("numpy", "numba", "llvmlite")


@functools.lru_cache(maxsize=None)
def library(name: str) -> str:
    """``<version>@<mtime of __init__.py>`` of the installed package ``name`` (``none``: absent)."""
    import importlib.util
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        spec = None
    if spec is None or not spec.origin:
        return "none"
    origin = spec.origin
    version = "?"
    try:
        prefix = f"{name}-"
        for entry in _listing(os.path.dirname(os.path.dirname(origin))):
            if entry.startswith(prefix) and entry.endswith((".dist-info", ".egg-info")):
                version = entry[len(prefix):].rsplit(".", 1)[0]
                break
        mtime = os.stat(origin).st_mtime_ns
    except OSError:
        mtime = 0
    return f"{version}@{mtime}"


@functools.lru_cache(maxsize=None)
def _listing(folder: str) -> tuple:
    """The names in ``folder``, in the system's order: listed once per process, however many of
    :data:`LIBRARIES` are installed in it (a ``site-packages`` of a few hundred names)."""
    with os.scandir(folder) as entries:         # closed: no ResourceWarning in a script's warnings
        return tuple(entry.name for entry in entries)


@functools.lru_cache(maxsize=1)
def versions() -> str:
    import flamefuse
    impl = sys.implementation
    parts = [f"flamefuse {flamefuse.__version__}",
             f"python {impl.name} {'.'.join(map(str, sys.version_info[:3]))} {getattr(impl, 'cache_tag', '')}"]
    parts += [f"{name} {library(name)}" for name in LIBRARIES]
    return "; ".join(parts)


def machine() -> str:
    """This machine, as far as compiled code and timings go (:func:`flamefuse.machine.compiled_key`)."""
    from flamefuse.machine import compiled_key
    return compiled_key()


@functools.lru_cache(maxsize=None)
def source_digest(parts: tuple) -> str:
    """A digest of the source files ``parts`` as Python validates its own bytecode: each file's
    path, size and modification time (nanoseconds), with its inode and change time (which no
    copy can set: a file replaced by another of the same size and modification time is still
    another one); none of their text is read (hashing the ``plans`` kind's 188 KB of source
    cost every fused run 1.2 ms). A changed file changes the digest; an unchanged one read
    again in another checkout or copy may give another digest (a miss, never a wrong hit)."""
    h = sha256()
    for part in parts:
        folder = os.path.join(_PACKAGE, part)
        if os.path.isdir(folder):       # (os.listdir, not pathlib's glob: no regular expression)
            files = [f"{part}/{n}" for n in sorted(os.listdir(folder)) if n.endswith(".py")]
        else:
            files = [part]
        for file in files:
            st = os.stat(os.path.join(_PACKAGE, file))
            h.update(f"{file} {st.st_size} {st.st_mtime_ns} {st.st_ino} {st.st_ctime_ns}\0".encode())
    return h.hexdigest()[:16]


@functools.lru_cache(maxsize=None)
def source_text_digest(parts: tuple) -> str:
    """A digest of the text of the source files ``parts`` (a key that must be the same in every
    checkout of the same code: the loop-nest generator's, :mod:`flamefuse.runtime.linalg`)."""
    from pathlib import Path        # (not a warm run's: the generator's key, where a kernel is made)
    h, package = sha256(), Path(_PACKAGE)
    for part in parts:
        path = package / part
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            h.update(f"{file.relative_to(package)}".encode() + b"\0" + file.read_bytes() + b"\0")
    return h.hexdigest()[:16]


__all__ = ["LIBRARIES", "library", "machine", "source_digest", "source_text_digest", "versions"]
