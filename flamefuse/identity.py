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
``*.py`` in it): entries made by that code carry it, so changed code never reuses them.

The cache store (:func:`flamefuse.store.stamp`) combines them into each kind's stamp;
:func:`flamefuse.codegen.tune.machine_key` names the machine of a tuned block size with
:func:`machine`.
"""
from __future__ import annotations

import functools
import os
import sys
from flamefuse.digest import sha256
from pathlib import Path

_PACKAGE = Path(__file__).resolve().parent
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
    origin = Path(spec.origin)
    version = "?"
    try:
        prefix = f"{name}-"
        for entry in _listing(str(origin.parent.parent)):
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
    h = sha256()
    for part in parts:
        path = _PACKAGE / part
        files = sorted(path.glob("*.py")) if path.is_dir() else [path]
        for file in files:
            h.update(f"{file.relative_to(_PACKAGE)}".encode() + b"\0" + file.read_bytes() + b"\0")
    return h.hexdigest()[:16]


__all__ = ["LIBRARIES", "library", "machine", "source_digest", "versions"]
