"""The cache folder as one store: what it holds per kind, a size cap with least-recently-used
eviction, and clearing.

Every cache of flamefuse lives in one folder, :func:`flamefuse.store.cache_root` (chosen with
``platformdirs`` where it is installed), one sub-folder per kind: ``TABLE`` (:class:`Kind`,
what each holds and what makes its entries stale; ``KINDS`` their names). Entries are read and
written through :mod:`flamefuse.store`. An *entry* is
the group of files that are used and removed together: a native library with its digest
sidecar and ``.none`` marker, a generated module with Numba's index and data files of its
functions in ``__pycache__``, a plan, a script's kernel list. Its last use is the latest of
its files' access and modification times: every read through the store sets the access time
(:func:`flamefuse.store.read`; also with ``noatime``), and Linux's ``relatime`` updates it
for the files read elsewhere (Numba's) at least once a day, enough for eviction.

``usage(root) -> dict``: kind -> (files, bytes). ``prune(root, max_bytes) -> (files, bytes)``
removes the least recently used entries until the store holds at most ``max_bytes``;
``clear(root) -> (files, bytes)`` removes every entry. Neither follows links nor touches
anything outside the kind folders. ``max_bytes()`` is ``$FLAMEFUSE_CACHE_MAX`` (a size such as
``500M`` or ``2G``; ``0``: no cap), default ``DEFAULT_MAX``. ``maybe_prune(root)`` prunes at
most once per ``PRUNE_EVERY_S`` (a stamp file ``.pruned`` in the root): called by
:func:`flamefuse.store.usable_cache_dir`, so the cap holds without a command.

A file removed while another process uses it is harmless: each reader treats a missing entry
as a miss (and a loaded library stays mapped).
"""
from __future__ import annotations

import os
import stat
import time

from flamefuse import switches



class Kind:
    """A kind of entry: its folder ``name``, what it ``holds``, the flamefuse source (``sources``:
    files or sub-packages, :func:`flamefuse.identity.source_digest`) whose change makes its
    entries stale besides flamefuse's version, whether they belong to this ``machine``
    (:func:`flamefuse.identity.machine`), and the ``switch`` that turns the kind off
    (:mod:`flamefuse.switches`). A plain class with slots, not a named tuple or a dataclass:
    every ``flamefuse fuse`` process imports this module, and creating a ``typing.NamedTuple``
    costs about 0.15 ms, a dataclass the ``dataclasses`` import."""
    __slots__ = ("name", "holds", "sources", "machine", "switch")

    def __init__(self, name: str, holds: str, sources: tuple = (), machine: bool = False,
                 switch: str | None = None):
        self.name, self.holds, self.sources, self.machine, self.switch = name, holds, sources, machine, switch

    def __repr__(self) -> str:
        return f"Kind({self.name!r}, sources={self.sources!r}, machine={self.machine!r}, switch={self.switch!r})"


_GENERATOR = ("spec", "pme", "search", "derive", "codegen", "pipeline.py", "numba_cache.py", "trust.py")
TABLE = (
    Kind("kernels", "fused run-time kernels: generated modules, Numba's files in __pycache__"),
    Kind("plans", "plans of recorded programs (plain values, no code)",
         tuple(f"runtime/{m}.py" for m in ("execute", "graph", "kernel", "code", "partition", "program",
                                           "views", "plan_cache", "filters", "filter_plain",
                                           "filter_program", "filter_kernel", "summation"))
         + ("cluster",), switch="FLAMEFUSE_PLAN_CACHE"),
    Kind("native", "native libraries of kernels, their digests and cannot-build markers", machine=True),
    Kind("scripts", "the kernels each script used last (JSON)"),
    Kind("synth", "kernel modules of fused chains, and why a chain does not fuse", _GENERATOR),
    Kind("loopnest", "loop-nest kernel modules"),
    Kind("cluster", "cluster kernel modules"),
    Kind("codegen", "tuned block sizes (JSON, per machine inside)"),
    Kind("dask", "the Dask tile routines module"),
    Kind("derive", "records of flamefuse derive (JSON)",
         _GENERATOR[:4] + ("pipeline.py", "cli/derive_record.py"), switch="FLAMEFUSE_DERIVE_CACHE"),
    Kind("jobs", "kernels a script wants compiled in the background (JSON) and the compiler's lock files"),
    Kind("adapt", "adaptive fusion's decisions per script and NumPy's measured costs (JSON)",
         ("runtime/adapt.py", "runtime/adapt_entry.py", "runtime/probe.py"), machine=True),
    Kind("loops", "each script's code with its compiled loops guarded (marshal) and its loops rendered",
         ("loops",), switch="FLAMEFUSE_LOOPS"),
)
BY_NAME = {k.name: k for k in TABLE}
KINDS = tuple(BY_NAME)
DEFAULT_MAX = 2 << 30
PRUNE_EVERY_S = 24 * 3600.0
_UNITS = {"": 1, "K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}


def parse_size(text: str) -> int:
    """``'500M'`` -> bytes (K, M, G, T are powers of 1024; an optional trailing B or iB)."""
    t = text.strip().upper().removesuffix("IB").removesuffix("B")
    unit = t[-1:] if t[-1:] in _UNITS and t[-1:] else ""
    number = t[:-1] if unit else t
    value = float(number)
    if value < 0:
        raise ValueError(f"a negative size: {text!r}")
    return int(value * _UNITS[unit])


def max_bytes() -> int:
    try:
        return parse_size(switches.text("FLAMEFUSE_CACHE_MAX"))
    except ValueError:
        return DEFAULT_MAX


def _files(folder: str):
    """(path, lstat) of every regular file under ``folder``, links not followed (paths as
    strings: every ``flamefuse fuse`` imports this module, and a run settled as plain NumPy
    imports no pathlib)."""
    for top, dirs, names in os.walk(folder, followlinks=False):
        for name in names:
            path = os.path.join(top, name)
            try:
                st = os.lstat(path)
            except OSError:
                continue
            if stat.S_ISREG(st.st_mode):
                yield path, st


def _entry(kind: str, path: str) -> tuple:
    """The entry a file belongs to: its kind and the name before its first dot."""
    name = os.path.basename(path)
    return kind, name.split(".", 1)[0] if not name.startswith(".") else name


def usage(root) -> dict:
    """kind -> (files, bytes) for every kind folder that exists."""
    out = {}
    for kind in KINDS:
        folder = os.path.join(root, kind)
        if os.path.isdir(folder) and not os.path.islink(folder):
            sizes = [st.st_size for _, st in _files(folder)]
            out[kind] = (len(sizes), sum(sizes))
    return out


def _entries(root) -> dict:
    groups: dict = {}
    for kind in KINDS:
        folder = os.path.join(root, kind)
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue
        for path, st in _files(folder):
            g = groups.setdefault(_entry(kind, path), [0.0, 0, []])
            g[0] = max(g[0], st.st_atime, st.st_mtime)
            g[1] += st.st_size
            g[2].append(path)
    return groups


def _remove(paths) -> int:
    gone = 0
    for path in paths:
        try:
            os.unlink(path)
            gone += 1
        except FileNotFoundError:
            pass
    return gone


def prune(root, limit: int) -> tuple[int, int]:
    """Remove least recently used entries until at most ``limit`` bytes remain (``limit`` 0: no
    cap); returns (files, bytes) removed."""
    groups = _entries(root)
    total = sum(g[1] for g in groups.values())
    files = freed = 0
    if not limit or total <= limit:
        return 0, 0
    for _, size, paths in sorted(groups.values(), key=lambda g: g[0]):
        if total - freed <= limit:
            break
        files += _remove(paths)
        freed += size
    return files, freed


def clear(root) -> tuple[int, int]:
    """Remove every entry of every kind; returns (files, bytes) removed."""
    files = freed = 0
    for kind in KINDS:
        folder = os.path.join(root, kind)
        if not os.path.isdir(folder) or os.path.islink(folder):
            continue
        for path, st in list(_files(folder)):
            files += _remove([path])
            freed += st.st_size
        for top, dirs, _ in os.walk(folder, topdown=False):
            for d in dirs:
                try:
                    os.rmdir(os.path.join(top, d))
                except OSError:
                    pass
    return files, freed


def _touch(file: str) -> None:
    """``pathlib.Path.touch``: the times set to now, the file made (mode 0666 less the umask)
    when it is missing."""
    try:
        os.utime(file)
    except OSError:
        os.close(os.open(file, os.O_CREAT | os.O_WRONLY, 0o666))


def maybe_prune(root) -> None:
    """Prune to :func:`max_bytes` when the last pruning is older than PRUNE_EVERY_S."""
    limit = max_bytes()
    if not limit:
        return
    stamp = os.path.join(root, ".pruned")
    try:
        if time.time() - os.stat(stamp).st_mtime < PRUNE_EVERY_S:
            return
    except FileNotFoundError:
        pass
    except OSError:
        return
    try:
        _touch(stamp)
        prune(root, limit)
    except OSError:
        pass


__all__ = ["BY_NAME", "KINDS", "Kind", "TABLE", "clear", "max_bytes", "maybe_prune", "parse_size", "prune", "usage"]
