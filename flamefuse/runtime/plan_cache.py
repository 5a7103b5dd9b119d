"""Plans kept on disk between processes: a warm run skips partitioning and code generation.

A recorded program's plan (:class:`flamefuse.runtime.execute.Plan`: its kernels'
sources and argument lists, the contracted bases, the buffers' first and last
uses) depends only on the program and the partitioner, so, like Bohrium's fuse
cache, it is kept under ``<cache>/plans/<digest>.pkl`` (the cache folder of
:mod:`flamefuse.cache`). ``load(program, partitioner)`` returns the stored record or
None; ``store(program, partitioner, record)`` writes it atomically. A record is
``(sources, steps, gone, cost, allocs, frees)``: plain values that pickle (each distinct kernel
source once, a step its source's number and arguments as tuples: ``execute._record``).

The key is the SHA-256 of the program's ``repr`` with the partitioner (:func:`text`,
also stored in the file and compared on load, so a hash collision reads nothing)
and of the source text of the modules that decide plans (``STAMP_MODULES``), so a
changed partitioner, graph rule or kernel generator never reads an old plan. An
unreadable or foreign file counts as absent (and is overwritten).
``FLAMEFUSE_PLAN_CACHE=0`` turns the disk cache off (plans stay cached in memory).
Only plans that took at least ``WORTH_S`` to build are stored (a small program is
planned faster than a file is read), which also keeps the folder small.
"""
from __future__ import annotations

import functools
import hashlib
import os
import pickle
from pathlib import Path

from flamefuse.files import digest_files, write_bytes_atomic

STAMP_MODULES = ("execute", "graph", "kernel", "partition", "program", "views", "plan_cache")
FORMAT = 2
WORTH_S = 0.005


@functools.lru_cache(maxsize=1)
def _stamp() -> bytes:
    here = Path(__file__).resolve().parent
    return f"{FORMAT}:{digest_files(here / f'{name}.py' for name in STAMP_MODULES)}".encode()


def enabled() -> bool:
    return os.environ.get("FLAMEFUSE_PLAN_CACHE", "1") != "0"


def _folder() -> Path | None:
    from flamefuse.cache import usable_cache_dir
    return usable_cache_dir("plans")


def text(program, partitioner: str) -> str:
    """The program's identity: its ``repr`` (frozen dataclasses of ints, tuples and strings:
    deterministic, and ten times faster to make than a pickle)."""
    return f"{partitioner}|{program!r}"


def key(identity: str) -> str:
    return hashlib.sha256(_stamp() + identity.encode()).hexdigest()[:32]


def load(program, partitioner: str):
    """The stored record of ``program``'s plan, or None."""
    if not enabled():
        return None
    folder = _folder()
    if folder is None:
        return None
    identity = text(program, partitioner)
    try:
        with open(folder / f"{key(identity)}.pkl", "rb") as f:
            stored, record = pickle.load(f)
    except (OSError, EOFError, pickle.UnpicklingError, ValueError, TypeError, AttributeError, ImportError):
        return None
    return record if stored == identity else None


def store(program, partitioner: str, record) -> None:
    """Write ``record`` (see the module doc) for ``program``; a failed write is ignored."""
    if not enabled():
        return
    folder = _folder()
    if folder is None:
        return
    identity = text(program, partitioner)
    data = pickle.dumps((identity, record), protocol=pickle.HIGHEST_PROTOCOL)
    try:
        write_bytes_atomic(folder / f"{key(identity)}.pkl", data)
    except OSError:
        pass
